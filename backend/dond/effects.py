"""Treatment effects in DoND: per-condition figures and each condition minus the default, paired.

A *condition* is a game's treatment (``backend.dond.treatments``: ``value_visibility``, ``agent_description``,
``disclose_description``, ``opponent_intro``; columns of ``dond_games``, absent in older exports and then read as the
defaults). Rows are finished games seen from the focal player (the person; model A in self-play), grouped by
mode × language × model (the *stratum*).

- ``condition_summaries``: per stratum × condition × metric, with the debiasing over side × first mover
  (``backend.dond.debiasing``): ``n``, ``n_cells``, ``mean``, ``debiased_mean`` = (1/C) Σ_c mean_c and a 95% bootstrap
  interval that resamples instances. Metrics (``METRICS``): ``utility`` = focal points / 10 (0 without a deal,
  aborted games included), ``opponent_utility`` the same for the other player, ``agreement_rate`` = share of games
  with a deal, ``main_score`` over non-aborted games.
- ``treatment_effects``: for each factor (``FACTORS``: ``value_visibility`` → "visibility gain",
  ``agent_description`` → "description effect", ``disclose_description`` → "disclosure effect", ``opponent_intro``
  → "introduction effect"), each level other than the default minus the default, the other factors held fixed.
  Only instances both conditions played (with a value of the metric in both) are compared; ``dropped`` counts the
  others (``paired_difference``). The interval is a paired, clustered percentile bootstrap: one draw of instances
  (with replacement) per replicate, both conditions' debiased means computed on that same draw, their difference.

Worked example (hand-computed in ``tests/backend/dond/test_effects.py``): instances 1 and 2, each played in cells
(A, first) and (A, second); utility under ``own`` 0.5, 0.3 (instance 1) and 0.6, 0.2 (instance 2), under ``both``
0.7, 0.5 and 0.6, 0.4. Debiased means: own (0.55 + 0.25) / 2 = 0.4, both (0.65 + 0.45) / 2 = 0.55; gain 0.15.

>>> paired_difference([0.7, 0.5, 0.6, 0.4], ["A|1", "A|0"] * 2, ["i1", "i1", "i2", "i2"],
...                   [0.5, 0.3, 0.6, 0.2], ["A|1", "A|0"] * 2, ["i1", "i1", "i2", "i2"], n_boot=50)["difference"]
0.15
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from backend.core import stats
from backend.dond.treatments import DEFAULT

STRATUM = ("mode", "language", "model")
FACTORS = {
    "value_visibility": ("visibility gain", DEFAULT.value_visibility),
    "agent_description": ("description effect", DEFAULT.agent_description),
    "disclose_description": ("disclosure effect", "0"),
    "opponent_intro": ("introduction effect", DEFAULT.opponent_intro),
}
CONDITION = tuple(FACTORS)
METRICS = ("utility", "opponent_utility", "agreement_rate", "main_score")
FINISHED = ("success", "lose", "aborted")
INSTANCE_COLUMNS = ("instance_seed", "item_types", "counts", "values_a", "values_b")
N_BOOT = 2000


def _text(frame: pd.DataFrame, name: str, default: str = "") -> pd.Series:
    if name not in frame:
        return pd.Series(default, index=frame.index, dtype=object)
    text = frame[name].fillna("").astype(str).str.strip()
    return text.where((text != "") & (text.str.lower() != "nan"), default)


def _number(frame: pd.DataFrame, name: str) -> np.ndarray:
    if name not in frame:
        return np.full(len(frame), math.nan)
    return pd.to_numeric(frame[name].replace("", math.nan), errors="coerce").to_numpy(dtype=float)


def condition_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per finished game: stratum, condition, ``cell`` (focal side | opened), ``instance``, ``METRICS``."""
    if "outcome" not in frame:
        raise ValueError("The frame is not a dond_games export: it has no outcome column.")
    frame = frame[frame["outcome"].astype(str).isin(FINISHED)]
    out = pd.DataFrame(index=frame.index)
    for name in STRATUM:
        out[name] = _text(frame, name)
    for name, (_, default) in FACTORS.items():
        out[name] = _text(frame, name, default)
    out["disclose_description"] = out["disclose_description"].map(
        lambda v: "1" if v.lower() in ("1", "true", "yes") else "0"
    )
    focal = _text(frame, "focal_role", "A")
    out["cell"] = focal + "|" + (_text(frame, "opener") == focal).map({True: "first", False: "second"})
    parts = [_text(frame, name) for name in INSTANCE_COLUMNS]
    out["instance"] = parts[0].str.cat(parts[1:], sep="|")
    outcome = frame["outcome"].astype(str).to_numpy()
    deal = outcome == "success"
    out["utility"] = np.where(deal, _number(frame, "points_focal") / 10, 0.0)
    out["opponent_utility"] = np.where(deal, _number(frame, "points_opponent") / 10, 0.0)
    out["agreement_rate"] = deal.astype(float)
    out["main_score"] = np.where(outcome == "aborted", math.nan, _number(frame, "main_score"))
    return out


def _debiased(values: np.ndarray, cells: np.ndarray) -> float:
    return stats.debiased_mean(values, cells=cells) if (~np.isnan(values)).any() else math.nan


def _interval(replicates: np.ndarray) -> tuple[float, float]:
    if replicates.size < 2 or np.isnan(replicates).all():
        return math.nan, math.nan
    low, high = stats.percentile_interval(replicates[~np.isnan(replicates)], confidence=0.95)
    return float(low), float(high)


def condition_summaries(frame: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0) -> list[dict[str, Any]]:
    """Per stratum × condition × metric: ``games``, ``n`` (games with a value), ``n_cells``, ``mean``,
    ``debiased_mean``, ``ci_low``/``ci_high`` (95%, instances resampled); see the module doc."""
    rows = []
    games = condition_frame(frame)
    for key, group in games.groupby([*STRATUM, *CONDITION], sort=True):
        cells, clusters = group["cell"].to_numpy(), group["instance"].to_numpy()
        for metric in METRICS:
            x = group[metric].to_numpy(dtype=float)
            present = ~np.isnan(x)
            replicates = (
                stats.bootstrap_replicates(x, cells=cells, clusters=clusters, n_boot=n_boot, seed=seed)
                if present.sum() >= 2
                else np.empty(0)
            )
            low, high = _interval(replicates)
            rows.append(
                {
                    **dict(zip((*STRATUM, *CONDITION), key, strict=True)),
                    "metric": metric,
                    "games": len(group),
                    "n": int(present.sum()),
                    "n_cells": len(set(cells[present])),
                    "mean": float(x[present].mean()) if present.any() else math.nan,
                    "debiased_mean": _debiased(x, cells),
                    "ci_low": low,
                    "ci_high": high,
                }
            )
    return rows


def paired_difference(
    values: Sequence[float],
    cells: Sequence[Any],
    clusters: Sequence[Any],
    baseline_values: Sequence[float],
    baseline_cells: Sequence[Any],
    baseline_clusters: Sequence[Any],
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> dict[str, Any]:
    """Debiased mean of a condition minus that of the baseline, on the instances (``clusters``) both have a value
    for, with a 95% paired bootstrap interval clustered by instance.

    Both conditions are resampled by ``backend.core.stats.bootstrap_replicates`` with the same seed over the same
    sorted instance labels, so each replicate draws the same instances for both (the draw depends only on the
    labels, ``n_boot`` and the seed); the replicate's difference is taken draw by draw. Returns ``difference``,
    ``ci_low``, ``ci_high``, ``instances`` (compared), ``dropped`` (instances of either side left out) and
    ``replicates``.
    """
    x, c, g = (np.asarray(a, dtype=object) for a in (values, cells, clusters))
    y, d, h = (np.asarray(a, dtype=object) for a in (baseline_values, baseline_cells, baseline_clusters))
    x, y = x.astype(float), y.astype(float)
    g, h = g.astype(str), h.astype(str)
    if not (x.shape == c.shape == g.shape and y.shape == d.shape == h.shape):
        raise ValueError("values, cells and clusters must have one entry per game, for each condition.")
    mine, theirs = set(g[~np.isnan(x)]), set(h[~np.isnan(y)])
    common = mine & theirs
    keep_x, keep_y = np.isin(g, list(common)) & ~np.isnan(x), np.isin(h, list(common)) & ~np.isnan(y)
    result: dict[str, Any] = {
        "difference": math.nan,
        "ci_low": math.nan,
        "ci_high": math.nan,
        "instances": len(common),
        "dropped": len((set(g) | set(h)) - common),
        "replicates": np.empty(0),
    }
    if not common:
        return result
    result["difference"] = round(_debiased(x[keep_x], c[keep_x]) - _debiased(y[keep_y], d[keep_y]), 12)
    if len(common) < 2:
        return result
    draws = [
        stats.bootstrap_replicates(v[k], cells=cc[k], clusters=gg[k], n_boot=n_boot, seed=seed)
        for v, cc, gg, k in ((x, c, g, keep_x), (y, d, h, keep_y))
    ]
    replicates = draws[0] - draws[1]
    result["replicates"] = replicates
    result["ci_low"], result["ci_high"] = _interval(replicates)
    return result


def treatment_effects(frame: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0) -> list[dict[str, Any]]:
    """Each condition minus the default of one factor, the other factors fixed: per stratum × factor × level ×
    metric, ``effect`` (the factor's name, e.g. "visibility gain"), ``condition`` (level), ``baseline`` (default),
    ``held`` (the other factors' levels other than their defaults), ``difference``, ``ci_low``/``ci_high``, ``instances``, ``dropped``."""
    games = condition_frame(frame)
    rows = []
    for stratum, group in games.groupby(list(STRATUM), sort=True):
        for factor, (effect, default) in FACTORS.items():
            held_names = [name for name in CONDITION if name != factor]
            for held, block in group.groupby(held_names, sort=True):
                held = held if isinstance(held, tuple) else (held,)
                base = block[block[factor] == default]
                levels = sorted(set(block[factor]) - {default})
                if base.empty or not levels:
                    continue
                for level in levels:
                    other = block[block[factor] == level]
                    for metric in METRICS:
                        paired = paired_difference(
                            other[metric].to_numpy(dtype=float),
                            other["cell"].to_numpy(),
                            other["instance"].to_numpy(),
                            base[metric].to_numpy(dtype=float),
                            base["cell"].to_numpy(),
                            base["instance"].to_numpy(),
                            n_boot=n_boot,
                            seed=seed,
                        )
                        paired.pop("replicates")
                        rows.append(
                            {
                                **dict(zip(STRATUM, stratum, strict=True)),
                                "effect": effect,
                                "factor": factor,
                                "condition": level,
                                "baseline": default,
                                "held": _held(held_names, held),
                                "metric": metric,
                                **paired,
                            }
                        )
    return rows


def _held(names: Sequence[str], values: Sequence[str]) -> str:
    """The other factors' levels of a comparison, the defaults left out ("" when all are defaults).

    >>> _held(["agent_description", "opponent_intro"], ["expert", "auto"])
    'agent_description=expert'
    """
    return ", ".join(f"{n}={v}" for n, v in zip(names, values, strict=True) if v != FACTORS[n][1])


def has_conditions(frame: pd.DataFrame) -> bool:
    """Whether any finished game of the frame was played under a condition other than the default (exports before
    the treatment columns, and studies that never set them, report as before)."""
    if not any(name in frame for name in CONDITION):
        return False
    games = condition_frame(frame)
    return any((games[name] != default).any() for name, (_, default) in FACTORS.items())


def _fmt(value: float, digits: int = 3) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _aligned(lines: list[list[str]]) -> list[str]:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    text = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)) for line in lines]
    text.insert(1, "  ".join("-" * width for width in widths))
    return text


def text_report(summaries: list[dict[str, Any]], effects: list[dict[str, Any]]) -> str:
    """The two tables of the printed report: figures per condition, then the effects."""
    header = ["mode", "lang", "model", "visibility", "description", "disclosed", "intro", "metric", "games", "n"]
    lines = [header + ["cells", "mean", "debiased", "95% CI"]]
    for r in summaries:
        lines.append(
            [str(r[name]) for name in (*STRATUM, *CONDITION, "metric", "games", "n", "n_cells")]
            + [_fmt(r["mean"]), _fmt(r["debiased_mean"]), f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]"]
        )
    text = "Treatments: figures per condition (focal player: the person; model A in self-play)\n\n"
    text += "\n".join(_aligned(lines))
    text += (
        "\n\nutility = own points / 10 (0 without a deal); agreement_rate = share of games with a deal; main score "
        "over non-aborted games. Debiased = mean of the cell means, cells = focal side x whether it opened; the 95% "
        "CI resamples instances."
    )
    if not effects:
        return text + "\n\nNo treatment effects: every game of a stratum was played under one condition."
    lines = [["mode", "lang", "model", "effect", "condition", "vs", "held", "metric", "difference", "95% CI"]]
    lines[0] += ["instances", "dropped"]
    for r in effects:
        lines.append(
            [str(r[name]) or "–" for name in (*STRATUM, "effect", "condition", "baseline", "held", "metric")]
            + [_fmt(r["difference"]), f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]"]
            + [str(r["instances"]), str(r["dropped"])]
        )
    dropped = sum(r["dropped"] for r in effects)
    text += "\n\nTreatment effects: condition minus the default, paired on instances\n\n" + "\n".join(_aligned(lines))
    text += (
        "\n\nDifference of the debiased means on the instances both conditions played; the 95% CI is a paired "
        "bootstrap that resamples instances (the same draw for both conditions)."
    )
    if dropped:
        text += (
            " The conditions did not play the same instances everywhere: 'dropped' counts the instances left out "
            "of a comparison (played, or with a value, under only one of its two conditions)."
        )
    return text
