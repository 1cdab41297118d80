"""social_eval figures from the report's data (``python -m backend report --json`` of ratings): people against
models per dimension (item means, with Pearson's r per dimension) and the agreement among people per dimension
(Krippendorff's interval alpha and pairwise exact / within-1 agreement). Drawing: ``backend.core.figures``.

The figures use the rows of scope ``both`` (both agents' items) of every group.

>>> report_figures({"summary": []})
[]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from backend.core.figures import FigureSpec, grouped_bars, number, style
from backend.core.paper_tables import Table, fmt

SCOPE = "both"
AGREEMENT = (("alpha", "Krippendorff's alpha (interval)"), ("exact", "exact agreement"), ("within_1", "within 1 point"))


def _rows(data: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    by_group: dict[str, list[dict[str, Any]]] = {}
    for row in data.get("summary", []):
        if row["scope"] == SCOPE:
            by_group.setdefault(str(row["group"]), []).append(row)
    return by_group


def report_figures(data: Mapping[str, Any]) -> list[FigureSpec]:
    """The figures of a social-evaluation report; ``data`` is the parsed ``--json`` output."""
    specs = []
    for index, (group, rows) in enumerate(_rows(data).items()):
        suffix = "" if index == 0 else f"_{index + 1}"
        agreement = {
            "group": group,
            "dimensions": [row["dimension"] for row in rows],
            **{key: [row[key] for row in rows] for key, _ in AGREEMENT},
            "n_items": [row["n_items"] for row in rows],
        }
        specs.append(
            FigureSpec(
                f"social_agreement{suffix}",
                f"Agreement among people per dimension ({group})",
                agreement,
                _draw_agreement,
            )
        )
        modelled = [row for row in rows if (row.get("n_model") or 0) > 0]
        if modelled:
            versus = {
                "group": group,
                "dimensions": [row["dimension"] for row in modelled],
                "people": [row["mean"] for row in modelled],
                "models": [row["model_mean"] for row in modelled],
                "pearson": [row["pearson"] for row in modelled],
                "n_model": [row["n_model"] for row in modelled],
            }
            specs.append(
                FigureSpec(
                    f"social_people_vs_models{suffix}",
                    f"People against models ({group})",
                    versus,
                    _draw_versus,
                    size=(5.0, 4.2),
                )
            )
    return specs


def _draw_agreement(figure, data):
    series = [{"label": label, "values": data[key]} for key, label in AGREEMENT]
    ax = figure.subplots()
    grouped_bars(ax, data["dimensions"], series, ylabel="agreement (alpha: −1 to 1; shares: 0–1)")
    ax.axhline(0, color="black", linewidth=0.6)


def _draw_versus(figure, data):
    ax = figure.subplots()
    values = [number(v) for v in data["people"] + data["models"]]
    finite = [v for v in values if not math.isnan(v)] or [0.0, 1.0]
    low, high = min(finite), max(finite)
    ax.plot([low, high], [low, high], color="grey", linestyle="--", linewidth=0.8, label="equal means")
    for index, dimension in enumerate(data["dimensions"]):
        look = style(index)
        r = number(data["pearson"][index])
        ax.scatter(
            [number(data["people"][index])],
            [number(data["models"][index])],
            color=look["color"],
            marker=look["marker"],
            edgecolor="black",
            s=50,
            label=f"{dimension} (r = {'–' if math.isnan(r) else f'{r:.2f}'}, n = {data['n_model'][index]})",
        )
    ax.set_xlabel("people: mean rating (rating scale points)")
    ax.set_ylabel("model: mean rating (rating scale points)")
    ax.legend(frameon=False, fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))


def report_tables(data: Mapping[str, Any]) -> list[Table]:
    """Sotopia's per-dimension table, one per group: items, people's mean (SD), agreement, and models' mean with r."""
    tables = []
    for index, (group, rows) in enumerate(_rows(data).items()):
        body = [
            [
                str(row["dimension"]),
                str(row["n_items"]),
                f"{fmt(row['mean'])} ({fmt(row['sd'])})",
                fmt(row["alpha"]),
                fmt(row["within_1"]),
                fmt(row["model_mean"]),
                fmt(row["pearson"]),
                str(row.get("n_model") or 0),
            ]
            for row in rows
        ]
        columns = ["dimension", "items", "people mean (SD)", "alpha", "within 1", "model mean", "r", "model items"]
        caption = (
            f"Per-dimension means ({group}, both agents): people's mean over items of the annotators' mean (SD "
            "over items), Krippendorff's interval alpha, share of annotator pairs within 1 point, models' mean and "
            "Pearson's r between people's and models' item means."
        )
        tables.append(Table(f"social_dimensions{'' if index == 0 else f'_{index + 1}'}", caption, columns, body))
    return tables


def quality_figure(qualities: Sequence[Any]) -> FigureSpec:
    """The per-annotator quality view (``backend.core.annotator_quality.AnnotatorQuality``): median seconds per item
    against the mean absolute difference from the others' consensus, flagged annotators (fast items or a failed gold
    item) marked apart. No names or IDs are drawn: annotators are numbered in the table's order."""
    data = {
        "annotator": [f"#{index + 1}" for index in range(len(qualities))],
        "median_seconds": [q.median_seconds for q in qualities],
        "mean_abs_diff": [q.mean_abs_diff for q in qualities],
        "gold_accuracy": [q.gold_accuracy for q in qualities],
        "flagged": [bool(q.fast_items) or (q.gold_rated > 0 and q.gold_passed < q.gold_rated) for q in qualities],
    }
    return FigureSpec(
        "annotator_quality",
        "Annotators: time per item and distance from the others",
        data,
        _draw_quality,
        size=(5.0, 3.6),
    )


def _draw_quality(figure, data):
    ax = figure.subplots()
    for index, (flag, label) in enumerate(((False, "not flagged"), (True, "flagged (fast items or failed gold)"))):
        look = style(index * 4)
        chosen = [i for i, f in enumerate(data["flagged"]) if f == flag]
        xs = [number(data["median_seconds"][i]) for i in chosen]
        ys = [number(data["mean_abs_diff"][i]) for i in chosen]
        ax.scatter(xs, ys, color=look["color"], marker=look["marker"], edgecolor="black", s=45, label=label)
        for i, x, y in zip(chosen, xs, ys, strict=True):
            ax.annotate(data["annotator"][i], (x, y), textcoords="offset points", xytext=(4, 3), fontsize=7)
    ax.set_xlabel("median time per item (seconds)")
    ax.set_ylabel("mean |own − others' mean| (rating points)")
    ax.legend(frameon=False, fontsize=7)
