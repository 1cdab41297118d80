"""payoff_reasoning_eval figures from the report's data (``python -m backend report --json`` of protocol forms):
the confusion matrix of the automated check against people (per model and game, with the people's Fleiss' kappa)
and against each model judge (with that judge's kappa against people). Drawing: ``backend.core.figures``.

Cells: TP = check passed and judged correct, FP = passed but judged wrong, FN = failed but judged correct,
TN = failed and judged wrong (positive = reasoning correct).

>>> report_figures({"groups": []})
[]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from backend.core.figures import FigureSpec, number, panel_axes, panel_grid
from backend.core.paper_tables import Table, fmt

CELLS = (("TP", "FN"), ("FP", "TN"))  # rows: judged correct / wrong; columns: check passed / failed


def _kappa(value: Any) -> str:
    kappa = number(value)
    return "–" if math.isnan(kappa) else f"{kappa:.2f}"


def report_figures(data: Mapping[str, Any]) -> list[FigureSpec]:
    """The confusion-matrix figure; ``data`` is the parsed ``--json`` output."""
    panels = [
        {
            "label": f"people: {row['model']} / {row['game']}",
            "kappa": row["kappa_orig"],
            **{cell: row[cell] for pair in CELLS for cell in pair},
        }
        for row in data.get("groups", [])
    ]
    panels += [
        {
            "label": f"judge {row['judge']} / {row['game']}",
            "kappa": row["kappa_people"],
            **{cell: row[cell] for pair in CELLS for cell in pair},
        }
        for row in data.get("model_judges", [])
    ]
    if not panels:
        return []
    rows, columns = panel_grid(len(panels))
    return [
        FigureSpec(
            "payoff_confusion",
            "Automated check against the judges' verdicts",
            {"panels": panels},
            _draw_confusion,
            size=(3.2 * columns, 2.9 * rows),
        )
    ]


def _draw_confusion(figure, data):
    panels = data["panels"]
    for ax, panel in zip(panel_axes(figure, len(panels)), panels, strict=True):
        counts = [[number(panel[cell]) for cell in pair] for pair in CELLS]
        top = max(max(row) for row in counts) or 1.0
        ax.imshow(counts, cmap="Greys", vmin=0, vmax=top * 1.6)
        for i, pair in enumerate(CELLS):
            for j, cell in enumerate(pair):
                ax.text(j, i, f"{cell}\n{int(counts[i][j])}", ha="center", va="center", fontsize=9)
        ax.set_xticks([0, 1], ["check passed", "check failed"])
        ax.set_yticks([0, 1], ["judged correct", "judged wrong"])
        ax.set_title(f"{panel['label']}\nκ = {_kappa(panel['kappa'])} (logs)", fontsize=8)


def report_tables(data: Mapping[str, Any]) -> list[Table]:
    """The automated check against people per model and game: counts, accuracy, precision, recall, kappa."""
    body = [
        [
            str(row["model"]),
            str(row["game"]),
            str(row["logs"]),
            *[str(row[cell]) for cell in ("TP", "FP", "FN", "TN")],
            *[fmt(row[key]) for key in ("accuracy", "precision", "recall", "kappa_orig")],
        ]
        for row in data.get("groups", [])
    ]
    if not body:
        return []
    columns = ["model", "game", "logs", "TP", "FP", "FN", "TN", "accuracy", "precision", "recall", "kappa"]
    caption = (
        f"Automated check against the judges' combined verdict ({data.get('rule', '')}); positive = reasoning "
        "correct; kappa = Fleiss' kappa among the judges on the first answer."
    )
    return [Table("payoff_check", caption, columns, body)]
