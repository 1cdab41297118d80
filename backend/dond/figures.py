"""DoND figures from the report's data (``python -m backend report --json`` of dond_games): outcome shares and main
score per model, the figures per condition (debiased, with their 95% intervals), the treatment effects as a forest
plot, and the Pareto plot of one game from its games-export row. Drawing conventions: ``backend.core.figures``.

>>> [spec.name for spec in report_figures([])]
[]
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from backend.core.figures import FigureSpec, forest, grouped_bars, number, panel_axes, panel_grid, style
from backend.core.paper_tables import Table, fmt, with_interval
from backend.dond import scoring

OUTCOME_SHARES = (("success_rate", "deal"), ("lose_rate", "no deal"), ("aborted_rate", "aborted"))
METRIC_AXES = {
    "main_score": "main score (0–100)",
    "utility": "utility (own points / 10, 0–1)",
    "opponent_utility": "opponent utility (points / 10, 0–1)",
    "agreement_rate": "agreement rate (share of games, 0–1)",
}


def group_label(row: Mapping[str, Any]) -> str:
    """The label of one report row: model, mode and language.

    >>> group_label({"model": "m", "mode": "semi", "language": "en"})
    'm (semi, en)'
    """
    return f"{row['model']} ({row['mode']}, {row['language']})"


def condition_label(row: Mapping[str, Any]) -> str:
    """A condition as text: visibility / description / disclosed / intro.

    >>> condition_label({"value_visibility": "own", "agent_description": "expert", "disclose_description": "0",
    ...                  "opponent_intro": "auto"})
    'own / expert / 0 / auto'
    """
    keys = ("value_visibility", "agent_description", "disclose_description", "opponent_intro")
    return " / ".join(str(row[key]) for key in keys)


def _draw_outcomes(figure, data):
    ax = figure.subplots()
    bottoms = [0.0] * len(data["groups"])
    for index, (key, label) in enumerate(OUTCOME_SHARES):
        values = [number(v) for v in data[key]]
        look = style(index)
        ax.bar(
            data["groups"],
            values,
            bottom=bottoms,
            label=label,
            color=look["color"],
            hatch=look["hatch"],
            edgecolor="black",
            linewidth=0.6,
        )
        bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
    ax.set_ylabel("share of games (0–1)")
    ax.set_ylim(0, 1)
    ax.legend(frameon=False, fontsize=8, ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.15))


def _draw_scores(figure, data):
    series = [
        {"label": "plain mean", "values": data["main_score"], "lows": data["ci_low"], "highs": data["ci_high"]},
        {
            "label": "debiased (cell means)",
            "values": data["main_score_debiased"],
            "lows": data["debiased_ci_low"],
            "highs": data["debiased_ci_high"],
        },
    ]
    grouped_bars(figure.subplots(), data["groups"], series, ylabel=METRIC_AXES["main_score"])


def _forest_panels(figure, data, field: str, *, xlabel: str, reference: float | None) -> None:
    """One forest panel per metric, two per row; the metric and its unit as the panel title."""
    metrics = list(data["metrics"])
    for ax, metric in zip(panel_axes(figure, len(metrics), per_row=2, sharey=True), metrics, strict=True):
        rows = data["metrics"][metric]
        forest(ax, data["labels"], rows[field], rows["ci_low"], rows["ci_high"], xlabel=xlabel, reference=reference)
        ax.set_title(METRIC_AXES.get(metric, metric), fontsize=8)


def _draw_conditions(figure, data):
    _forest_panels(figure, data, "debiased_mean", xlabel="debiased mean", reference=None)


def _draw_effects(figure, data):
    _forest_panels(figure, data, "difference", xlabel="difference (condition − default)", reference=0.0)


def _forest_size(data) -> tuple[float, float]:
    rows, _ = panel_grid(len(data["metrics"]), per_row=2)
    return (9.0, 0.6 + rows * (1.0 + 0.3 * len(data["labels"])))


def _by_metric(rows: Sequence[Mapping[str, Any]], label, fields: Sequence[str]) -> dict[str, Any]:
    labels = list(dict.fromkeys(label(row) for row in rows))
    metrics = list(dict.fromkeys(row["metric"] for row in rows))
    table = {}
    for metric in metrics:
        found = {label(row): row for row in rows if row["metric"] == metric}
        table[metric] = {field: [found[name][field] if name in found else None for name in labels] for field in fields}
    return {"labels": labels, "metrics": table}


def report_figures(rows: Sequence[Mapping[str, Any]]) -> list[FigureSpec]:
    """The figures of a DoND report; ``rows`` is the parsed ``--json`` output (one row per mode × language × model)."""
    if not rows:
        return []
    groups = [group_label(row) for row in rows]
    outcomes = {"groups": groups, **{key: [row[key] for row in rows] for key, _ in OUTCOME_SHARES}}
    scores = {
        "groups": groups,
        "main_score": [row["main_score"] for row in rows],
        "ci_low": [row["main_score_ci"][0] for row in rows],
        "ci_high": [row["main_score_ci"][1] for row in rows],
        "main_score_debiased": [row["main_score_debiased"] for row in rows],
        "debiased_ci_low": [row["main_score_debiased_ci"][0] for row in rows],
        "debiased_ci_high": [row["main_score_debiased_ci"][1] for row in rows],
    }
    specs = [
        FigureSpec("dond_outcomes", "Outcomes per model", outcomes, _draw_outcomes),
        FigureSpec("dond_main_score", "Main score per model (95% bootstrap CI)", scores, _draw_scores),
    ]
    conditions = [
        dict(c, group=group_label(row)) for row in rows for c in row.get("treatments", {}).get("conditions", [])
    ]
    effects = [dict(e, group=group_label(row)) for row in rows for e in row.get("treatments", {}).get("effects", [])]
    if conditions:
        data = _by_metric(
            conditions, lambda c: f"{c['group']}: {condition_label(c)}", ("debiased_mean", "ci_low", "ci_high", "n")
        )
        specs.append(
            FigureSpec(
                "dond_conditions",
                "Per condition: debiased means (95% CI)",
                data,
                _draw_conditions,
                size=_forest_size(data),
            )
        )
    if effects:
        data = _by_metric(effects, effect_label, ("difference", "ci_low", "ci_high", "instances"))
        specs.append(
            FigureSpec(
                "dond_effects",
                "Treatment effects: condition − default (paired 95% CI)",
                data,
                _draw_effects,
                size=_forest_size(data),
            )
        )
    return specs


def effect_label(row: Mapping[str, Any]) -> str:
    """An effect as text.

    >>> effect_label({"group": "m", "condition": "expert", "baseline": "none", "held": ""})
    'm: expert vs none'
    """
    held = f" ({row['held']})" if row.get("held") else ""
    return f"{row['group']}: {row['condition']} vs {row['baseline']}{held}"


def _cells(row: Mapping[str, Any], key: str) -> list[int]:
    value = row[key]
    return [int(v) for v in (json.loads(value) if isinstance(value, str) else value)]


def pareto_figure(row: Mapping[str, Any]) -> FigureSpec:
    """The Pareto plot of one game from its ``dond_games`` row: every complete split's points (A, B), the frontier,
    and the points the players reached (points_a, points_b; (0, 0) without a deal)."""
    counts, values_a, values_b = _cells(row, "counts"), _cells(row, "values_a"), _cells(row, "values_b")
    points_a, points_b = scoring.split_points(counts, values_a, values_b)
    frontier = scoring.pareto_frontier(counts, values_a, values_b)
    data = {
        "game_id": str(row["game_id"]),
        "splits": sorted({(int(a), int(b)) for a, b in zip(points_a, points_b, strict=True)}),
        "frontier": [[int(a), int(b)] for a, b in frontier],
        "reached": [number(row["points_a"]), number(row["points_b"])],
        "outcome": str(row.get("outcome") or "unfinished"),
    }
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in data["game_id"])
    return FigureSpec(
        f"dond_pareto_{safe}",
        f"Game {data['game_id']}: splits and Pareto frontier",
        data,
        _draw_pareto,
        size=(4.2, 3.8),
    )


def _draw_pareto(figure, data):
    ax = figure.subplots()
    ax.scatter(*zip(*data["splits"], strict=True), s=14, color=style(1)["color"], marker="o", label="possible splits")
    ax.plot(*zip(*data["frontier"], strict=True), color="black", marker="s", markersize=4, label="Pareto frontier")
    ax.scatter(
        [data["reached"][0]],
        [data["reached"][1]],
        s=80,
        color=style(4)["color"],
        marker="*",
        edgecolor="black",
        zorder=3,
        label=f"reached ({data['outcome']})",
    )
    ax.set_xlabel("points of player A")
    ax.set_ylabel("points of player B")
    ax.legend(frameon=False, fontsize=7)


def report_tables(rows: Sequence[Mapping[str, Any]]) -> list[Table]:
    """clembench's per-model table: % played (not aborted), quality score (main score over played games) with its
    95% CI, the debiased score, % deals and % Pareto-optimal, and the number of games."""
    if not rows:
        return []
    body = [
        [
            str(row["model"]),
            f"{row['mode']}, {row['language']}",
            str(row["games"]),
            fmt(100 * (1 - row["aborted_rate"]), 1),
            with_interval(row["main_score"], *row["main_score_ci"], digits=1),
            with_interval(row["main_score_debiased"], *row["main_score_debiased_ci"], digits=1),
            fmt(100 * number(row["success_rate"]), 1),
            fmt(100 * number(row["pareto_optimal_rate"]), 1),
        ]
        for row in rows
    ]
    columns = ["model", "mode, language", "games", "% played", "quality score [95% CI]", "debiased [95% CI]"]
    caption = (
        "Deal or No Deal per model: % played = games not aborted; quality score = main score (0–100) over played "
        "games; debiased = mean of the cell means (side x opener); intervals: bootstrap over instances."
    )
    return [Table("dond_models", caption, [*columns, "% deal", "% Pareto-optimal"], body)]
