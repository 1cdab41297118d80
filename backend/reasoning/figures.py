"""payoff_reasoning_eval figures from the report's data (``python -m backend report --json`` of protocol forms):
the confusion matrix of the automated check against people (per model and game, with the people's Fleiss' kappa)
and against each model judge (with that judge's kappa against people), and each model judge's reliability diagram
against people (confidence from its k samples per log against its agreement with people's verdict). Every kappa, ECE
and Brier score carries its 95 % percentile-bootstrap interval over logs (``backend.core.unit_bootstrap``).
Drawing: ``backend.core.figures``.

Cells: TP = check passed and judged correct, FP = passed but judged wrong, FN = failed but judged correct,
TN = failed and judged wrong (positive = reasoning correct).

>>> report_figures({"groups": []})
[]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from backend.core.figures import PALETTE, FigureSpec, number, panel_axes, panel_grid
from backend.core.paper_tables import Table, fmt, with_interval
from backend.core.unit_bootstrap import METHOD

CELLS = (("TP", "FN"), ("FP", "TN"))  # rows: judged correct / wrong; columns: check passed / failed


def _kappa(value: Any, bounds: Any = None) -> str:
    """A kappa as a panel's title shows it, with its interval when there is one.

    >>> _kappa(0.5, [0.25, 0.75]), _kappa(None)
    ('0.50 [0.25, 0.75]', '–')
    """
    kappa = number(value)
    if math.isnan(kappa):
        return "–"
    return with_interval(kappa, *bounds) if bounds else f"{kappa:.2f}"


def _bounds(row: Mapping[str, Any], key: str) -> list:
    return list(row.get(f"{key}_interval") or [None, None])


def report_figures(data: Mapping[str, Any]) -> list[FigureSpec]:
    """The confusion-matrix figure; ``data`` is the parsed ``--json`` output."""
    panels = [
        {
            "label": f"people: {row['model']} / {row['game']}",
            "kappa": row["kappa_orig"],
            "kappa_interval": _bounds(row, "kappa_orig"),
            **{cell: row[cell] for pair in CELLS for cell in pair},
        }
        for row in data.get("groups", [])
    ]
    panels += [
        {
            "label": f"judge {row['judge']} / {row['game']}",
            "kappa": row["kappa_people"],
            "kappa_interval": _bounds(row, "kappa_people"),
            **{cell: row[cell] for pair in CELLS for cell in pair},
        }
        for row in data.get("model_judges", [])
    ]
    if not panels:
        return []
    rows, columns = panel_grid(len(panels))
    specs = [
        FigureSpec(
            "payoff_confusion",
            "Automated check against the judges' verdicts",
            {"panels": panels},
            _draw_confusion,
            size=(3.2 * columns, 2.9 * rows),
        )
    ]
    judges = [row for row in data.get("model_judges", []) if row["game"] == "all" and row.get("reliability")]
    if judges:
        specs.append(reliability_figure(judges))
    return specs


def reliability_figure(judges: list[Mapping[str, Any]]) -> FigureSpec:
    """One reliability diagram per model judge (its ``all`` row): per confidence bin, the share of logs on which
    the judge's verdict equals people's against the bin's mean confidence, each point's area by its logs; the
    diagonal is perfect calibration. The panel's title gives ECE and Brier score with their intervals.

    >>> spec = reliability_figure([{"judge": "model:m", "samples": 3, "with_people": 2, "ece": 0.1,
    ...     "ece_interval": [0.0, 0.3], "brier": 0.2, "brier_interval": [0.1, 0.4],
    ...     "reliability": [{"low": 0.9, "high": 1.0, "n": 2, "confidence": 1.0, "accuracy": 0.5}]}])
    >>> spec.name, spec.data["panels"][0]["accuracy"]
    ('judge_reliability', [0.5])
    """
    panels = [
        {
            "label": f"{row['judge']} (k = {row.get('samples', 1)}, {row.get('with_people', 0)} logs)",
            "confidence": [point["confidence"] for point in row["reliability"]],
            "accuracy": [point["accuracy"] for point in row["reliability"]],
            "n": [point["n"] for point in row["reliability"]],
            "ece": row.get("ece"),
            "ece_interval": _bounds(row, "ece"),
            "brier": row.get("brier"),
            "brier_interval": _bounds(row, "brier"),
        }
        for row in judges
    ]
    rows, columns = panel_grid(len(panels))
    return FigureSpec(
        "judge_reliability",
        "Model judges against people: confidence and agreement",
        {"panels": panels},
        _draw_reliability,
        size=(3.4 * columns, 3.3 * rows),
    )


def _draw_reliability(figure, data):
    panels = data["panels"]
    for ax, panel in zip(panel_axes(figure, len(panels)), panels, strict=True):
        ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=0.8)
        sizes = [30 + 20 * number(n) for n in panel["n"]]
        ax.scatter(panel["confidence"], panel["accuracy"], s=sizes, color=PALETTE[1], edgecolor="black", zorder=3)
        for x, y, n in zip(panel["confidence"], panel["accuracy"], panel["n"], strict=True):
            ax.annotate(f"n = {n}", (x, y), xytext=(4, -10), textcoords="offset points", fontsize=7)
        ax.set_xlim(0, 1.05)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("judge's confidence (share of samples)")
        ax.set_ylabel("share agreeing with people")
        ece = with_interval(panel["ece"], *panel["ece_interval"])
        brier = with_interval(panel["brier"], *panel["brier_interval"])
        ax.set_title(f"{panel['label']}\nECE {ece}; Brier {brier}", fontsize=8)


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
        kappa = _kappa(panel["kappa"], panel.get("kappa_interval"))
        ax.set_title(f"{panel['label']}\nκ = {kappa} (logs)", fontsize=8)


def report_tables(data: Mapping[str, Any]) -> list[Table]:
    """The automated check against people per model and game: counts, accuracy, precision, recall, kappa."""
    body = [
        [
            str(row["model"]),
            str(row["game"]),
            str(row["logs"]),
            *[str(row[cell]) for cell in ("TP", "FP", "FN", "TN")],
            *[fmt(row[key]) for key in ("accuracy", "precision", "recall")],
            with_interval(row["kappa_orig"], *_bounds(row, "kappa_orig")),
        ]
        for row in data.get("groups", [])
    ]
    if not body:
        return []
    columns = ["model", "game", "logs", "TP", "FP", "FN", "TN", "accuracy", "precision", "recall", "kappa [95% CI]"]
    caption = (
        f"Automated check against the judges' combined verdict ({data.get('rule', '')}); positive = reasoning "
        f"correct; kappa = Fleiss' kappa among the judges on the first answer. Intervals: {METHOD}."
    )
    tables = [Table("payoff_check", caption, columns, body)]
    judges = data.get("model_judges", [])
    if judges:
        body = [
            [
                str(row["judge"]),
                str(row["game"]),
                str(row["with_people"]),
                str(row.get("samples", 1)),
                *[with_interval(row.get(key), *_bounds(row, key)) for key in ("agree_orig", "kappa_people")],
                *[with_interval(row.get(key), *_bounds(row, key)) for key in ("brier", "ece")],
                (row.get("admission") or {}).get("text", "") if row["game"] == "all" else "",
            ]
            for row in judges
        ]
        columns = ["judge", "game", "logs with people", "samples", "agreement", "kappa", "Brier", "ECE", "admission"]
        caption = (
            "Model judges against people's combined verdict on the same logs: share of equal verdicts, Fleiss' kappa "
            "of judge and people, Brier score of the judge's share of samples saying correct, expected calibration "
            "error of its confidence (10 bins); admitted when the lower bound of kappa clears "
            f"{fmt(data.get('admit_at'))}. Intervals: {METHOD}."
        )
        tables.append(Table("payoff_judges", caption, columns, body))
    return tables
