"""bias_tests figures from the report's data (``python -m backend report --json`` of bias exports): each metric's
batch value for people and for every model side by side, with its 95% percentile-bootstrap interval over tests.
Drawing: ``backend.core.figures``.

>>> report_figures({"groups": [], "metrics": {}})
[]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from backend.bias.report import METRIC_TITLES
from backend.core.figures import FigureSpec, error_lengths, number, panel_axes, panel_grid, style
from backend.core.paper_tables import Table, with_interval


def report_figures(data: Mapping[str, Any]) -> list[FigureSpec]:
    """The figure of a bias report; ``data`` is the parsed ``--json`` output."""
    groups = list(data.get("groups", []))
    if not groups:
        return []
    metrics = {}
    for name, per_group in data["metrics"].items():
        cells = [per_group.get(group, {}) for group in groups]
        metrics[name] = {
            "title": METRIC_TITLES.get(name, name),
            "batch": [cell.get("batch") for cell in cells],
            "ci_low": [(cell.get("batch_ci") or [None, None])[0] for cell in cells],
            "ci_high": [(cell.get("batch_ci") or [None, None])[1] for cell in cells],
            "tests": [cell.get("tests", 0) for cell in cells],
        }
    rows, columns = panel_grid(len(metrics))
    return [
        FigureSpec(
            "bias_metrics",
            "Bias metrics: people and models (95% bootstrap CI over tests)",
            {"groups": groups, "metrics": metrics},
            _draw_metrics,
            size=(3.3 * columns, 2.8 * rows),
        )
    ]


def _draw_metrics(figure, data):
    metrics = data["metrics"]
    groups = data["groups"]
    for ax, metric in zip(panel_axes(figure, len(metrics)), metrics.values(), strict=True):
        values = [number(v) for v in metric["batch"]]
        for index, group in enumerate(groups):
            look = style(index)
            ax.bar(
                [index],
                [0.0 if math.isnan(values[index]) else values[index]],
                color=look["color"],
                hatch=look["hatch"],
                edgecolor="black",
                linewidth=0.6,
                label=group,
            )
        errors = error_lengths(values, metric["ci_low"], metric["ci_high"])
        ax.errorbar(range(len(groups)), values, yerr=errors, fmt="none", ecolor="black", capsize=3)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xticks(
            range(len(groups)), [f"{g}\n(n = {n})" for g, n in zip(groups, metric["tests"], strict=True)], fontsize=7
        )
        ax.set_title(metric["title"], fontsize=8)
        ax.set_ylabel("batch value (metric units)")


def report_tables(data: Mapping[str, Any]) -> list[Table]:
    """The bias study's table: per bias, each group's batch value with its 95% interval and the number of tests."""
    groups = list(data.get("groups", []))
    if not groups:
        return []
    body = []
    for name, per_group in data["metrics"].items():
        cells = [per_group.get(group, {}) for group in groups]
        body.append(
            [METRIC_TITLES.get(name, name)]
            + [
                f"{with_interval(c.get('batch'), *(c.get('batch_ci') or [None, None]))} (n = {c.get('tests', 0)})"
                for c in cells
            ]
        )
    counts = data.get("counts", {})
    respondents = ["respondents"] + [str(counts.get(group, {}).get("respondents", "")) for group in groups]
    caption = (
        "Bias metrics per respondent group: batch value [95% percentile-bootstrap interval over tests, 1000 "
        "resamples] (n = tests)."
    )
    return [Table("bias_metrics", caption, ["metric", *groups], [*body, respondents])]
