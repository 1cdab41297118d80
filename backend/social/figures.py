"""social_eval figures from the report's data (``python -m backend report --json`` of ratings): people against
models per dimension (item means, with Pearson's r per dimension), the agreement among people per dimension
(Krippendorff's interval alpha and pairwise exact / within-1 agreement) and, from an app export, the quality per
annotator (time, gold episodes, distance from the others). Alpha, the correlations, the difference and the error
carry their 95 % percentile-bootstrap intervals over episodes (``backend.core.unit_bootstrap``): error bars in the
figures, ``value [low, high]`` in the tables, the method in each table's note. Drawing: ``backend.core.figures``.

The figures use the rows of scope ``both`` (both agents' items) of every group.

>>> report_figures({"summary": []})
[]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from backend.core.figures import PALETTE, FigureSpec, grouped_bars, number, panel_axes, style
from backend.core.paper_tables import Table, fmt, with_interval
from backend.core.unit_bootstrap import METHOD

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
            "alpha_low": [row.get("alpha_low") for row in rows],
            "alpha_high": [row.get("alpha_high") for row in rows],
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
                "pearson_low": [row.get("pearson_low") for row in modelled],
                "pearson_high": [row.get("pearson_high") for row in modelled],
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
    if data.get("quality"):
        specs.append(quality_figure(data["quality"], floor_s=data.get("quality_floor_s")))
    return specs


def _draw_agreement(figure, data):
    series = [{"label": label, "values": data[key]} for key, label in AGREEMENT]
    if "alpha_low" in data:  # alpha's 95% bootstrap interval over episodes
        series[0].update(lows=data["alpha_low"], highs=data["alpha_high"])
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
        bounds = [
            data.get("pearson_low", [None] * (index + 1))[index],
            data.get("pearson_high", [None] * (index + 1))[index],
        ]
        r_text = "–" if math.isnan(r) else with_interval(r, *bounds) if bounds[0] is not None else f"{r:.2f}"
        ax.scatter(
            [number(data["people"][index])],
            [number(data["models"][index])],
            color=look["color"],
            marker=look["marker"],
            edgecolor="black",
            s=50,
            label=f"{dimension} (r = {r_text}, n = {data['n_model'][index]})",
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
                _ci(row, "alpha"),
                fmt(row["within_1"]),
                fmt(row["model_mean"]),
                _ci(row, "pearson"),
                str(row.get("n_model") or 0),
            ]
            for row in rows
        ]
        columns = ["dimension", "items", "people mean (SD)", "alpha", "within 1", "model mean", "r", "model items"]
        caption = (
            f"Per-dimension means ({group}, both agents): people's mean over items of the annotators' mean (SD "
            "over items), Krippendorff's interval alpha, share of annotator pairs within 1 point, models' mean and "
            f"Pearson's r between people's and models' item means. Intervals: {METHOD}."
        )
        suffix = "" if index == 0 else f"_{index + 1}"
        tables.append(Table(f"social_dimensions{suffix}", caption, columns, body))
        modelled = [row for row in rows if (row.get("n_model") or 0) > 0]
        if modelled:
            admitted = {item["dimension"]: item["text"] for item in data.get("admission", []) if item["group"] == group}
            body = [
                [
                    str(row["dimension"]),
                    str(row["n_model"]),
                    *[_ci(row, key) for key in ("pearson", "spearman", "diff", "mae")],
                    fmt(row.get("spread_rho")),
                    admitted.get(row["dimension"], ""),
                ]
                for row in modelled
            ]
            columns = ["dimension", "items", "r", "rho", "people − model", "MAE", "spread–error rho", "admission"]
            caption = (
                f"Model ratings against people's item means ({group}, both agents): Pearson's r, Spearman's rho, "
                "mean difference and mean absolute error (rating points); Spearman's rho of the model's spread over "
                "its k samples against its absolute error; admitted where the lower bound of rho clears "
                f"{fmt(data.get('admit_at'))}. Intervals: {METHOD}."
            )
            tables.append(Table(f"social_models{suffix}", caption, columns, body))
    return tables


def _ci(row: Mapping[str, Any], key: str) -> str:
    """A figure of a summary row with its interval (``<key>_low``, ``<key>_high``), or alone without one.

    >>> _ci({"alpha": 0.5, "alpha_low": 0.25, "alpha_high": 0.75}, "alpha"), _ci({"alpha": 0.5}, "alpha")
    ('0.50 [0.25, 0.75]', '0.50')
    """
    return with_interval(row.get(key), row.get(f"{key}_low"), row.get(f"{key}_high"))


QUALITY_PANELS = (
    ("median_seconds", "median time per episode\n(seconds)"),
    ("gold_accuracy", "gold episodes passed\n(share, 0–1)"),
    ("mean_abs_diff", "mean |own − others' mean|\n(rating points)"),
)
QUALITY_LOOKS = ((False, "not flagged", 1, ""), (True, "flagged: fast episodes or a failed gold episode", 4, "xx"))


def quality_figure(records: Sequence[Mapping[str, Any]], *, floor_s: float | None = None) -> FigureSpec:
    """The per-annotator quality view of the report's ``quality`` records (``backend.social.quality.quality_records``):
    three panels of horizontal bars, one bar per annotator, sharing the rows: median seconds per episode (a dashed
    line at the floor ``floor_s``), the share of gold episodes passed, and the mean absolute difference from the
    others' mean rating. Flagged annotators' bars are vermillion and cross-hatched, the others sky blue and plain;
    every bar is labelled with its value (gold: "passed of rated"), and a missing figure (no gold episode, no unit
    shared with another annotator) is written "none" instead of a bar. No
    names or codes are drawn: annotators are numbered in the records' order (the report's table order).

    >>> spec = quality_figure([{"median_seconds": 40.0, "fast_items": 0, "gold_rated": 0, "gold_passed": 0,
    ...                         "gold_accuracy": None, "shared_units": 0, "mean_abs_diff": None, "flagged": False}])
    >>> spec.name, spec.data["annotator"], spec.data["gold_accuracy"], spec.data["floor_s"]
    ('annotator_quality', ['#1'], [None], None)
    """
    data = {
        "annotator": [f"#{index + 1}" for index in range(len(records))],
        **{key: [record[key] for record in records] for key, _ in QUALITY_PANELS},
        **{key: [record[key] for record in records] for key in ("gold_passed", "gold_rated", "shared_units")},
        "flagged": [bool(record["flagged"]) for record in records],
        "floor_s": floor_s,
    }
    return FigureSpec(
        "annotator_quality",
        "Annotators: time per episode, gold episodes passed, distance from the others",
        data,
        _draw_quality,
        size=(7.5, max(2.4, 1.4 + 0.28 * len(records))),
    )


def _draw_quality(figure, data):
    axes = panel_axes(figure, len(QUALITY_PANELS), per_row=len(QUALITY_PANELS), sharey=True)
    ys = list(range(len(data["annotator"])))[::-1]
    texts = {
        "median_seconds": [f"{number(v):.1f}" for v in data["median_seconds"]],
        "gold_accuracy": [
            f"{passed} of {rated}" for passed, rated in zip(data["gold_passed"], data["gold_rated"], strict=True)
        ],
        "mean_abs_diff": [f"{number(v):.2f}" for v in data["mean_abs_diff"]],
    }
    for ax, (key, label) in zip(axes, QUALITY_PANELS, strict=True):
        _quality_bars(ax, ys, [number(value) for value in data[key]], data["flagged"], texts=texts[key])
        ax.set_xlabel(label)
        ax.margins(x=0.18)
    axes[0].set_yticks(ys, data["annotator"])
    axes[0].set_ylabel("annotator")
    axes[1].set_xlim(0, 1.25)
    axes[1].set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    if data["floor_s"] is not None:
        axes[0].axvline(data["floor_s"], color="black", linestyle="--", linewidth=0.8)
        axes[0].annotate(
            f"floor {data['floor_s']:g} s",
            (data["floor_s"], 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(2, -8),
            textcoords="offset points",
            fontsize=7,
        )
    from matplotlib.patches import Patch  # matplotlib loads when a figure is drawn

    handles = [
        Patch(facecolor=PALETTE[color], hatch=hatch, edgecolor="black", linewidth=0.6, label=label)
        for _, label, color, hatch in QUALITY_LOOKS
    ]
    figure.legend(handles=handles, loc="outside lower center", ncols=2, frameon=False, fontsize=7)


def _quality_bars(
    ax, ys: Sequence[float], values: Sequence[float], flagged: Sequence[bool], *, texts: Sequence[str]
) -> None:
    """One horizontal bar per annotator, looked as ``QUALITY_LOOKS`` and labelled with its text at its end; "none"
    where the value is missing."""
    for flag, _, color, hatch in QUALITY_LOOKS:
        chosen = [i for i, f in enumerate(flagged) if f == flag and not math.isnan(values[i])]
        ax.barh(
            [ys[i] for i in chosen],
            [values[i] for i in chosen],
            0.7,
            color=PALETTE[color],
            hatch=hatch,
            edgecolor="black",
            linewidth=0.6,
        )
    for y, value, text in zip(ys, values, texts, strict=True):
        shown = "none" if math.isnan(value) else text
        at = 0.0 if math.isnan(value) else value
        ax.annotate(shown, (at, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
