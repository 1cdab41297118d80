"""Debiased aggregation of a per-player metric (LAMEN §2.6, Davidson et al., ICLR 2024).

Rows are one player's view of one game; a row's *cell* is (side = which value function, A or B) × (whether this
player opened). ``debiased_mean = (1/C) Σ_c mean_c`` over the C non-empty cells, so a side or opening advantage
cancels out. Its standard error is the stratified one, ``SE = sqrt(Σ_c s_c² / n_c) / C`` (s_c: sample std, ddof 1);
the 95 % interval is a percentile bootstrap that resamples within each cell, or whole clusters (e.g. instances) when
given. The cell means and the bootstrap are the project's one estimator (``backend.core.stats``); this module names
the cells and reports the summary.

Worked example: an LLM playing B, three games as second mover with internal faithfulness 1, 1 and 0.4, one game as
first mover with 0: plain mean 2.4 / 4 = 0.6, debiased mean (0.8 + 0) / 2 = 0.4.

>>> round(debiased_mean([1, 1, 0.4, 0], side=["B"] * 4, first_mover=[False, False, False, True]), 10)
0.4
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from backend.core import stats
from backend.core.csvio import truthy_cell


def _aggregation_inputs(values, side, first_mover, cluster=None):
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {x.shape}.")
    sides = np.asarray(side, dtype=object)
    firsts = np.asarray(first_mover, dtype=object)
    if sides.shape != x.shape or firsts.shape != x.shape:
        raise ValueError("side and first_mover must have one entry per value.")
    clusters = None
    if cluster is not None:
        clusters = np.asarray(cluster, dtype=object)
        if clusters.shape != x.shape:
            raise ValueError("cluster must have one entry per value.")
    keep = ~np.isnan(x)
    cells = np.array([f"{s}|{bool(f)}" for s, f in zip(sides[keep], firsts[keep], strict=True)], dtype=object)
    return x[keep], cells, (clusters[keep] if clusters is not None else None)


def cell_means(values: Any, *, side: Sequence[Any], first_mover: Sequence[Any]) -> dict[tuple[str, bool], float]:
    """Mean of the values within each cell (side, first mover); NaN values are left out.

    >>> cell_means([1, 0, 1, 1], side=["A", "A", "B", "B"], first_mover=[True, True, False, True])
    {('A', True): 0.5, ('B', False): 1.0, ('B', True): 1.0}
    """
    x, cells, _ = _aggregation_inputs(values, side, first_mover)
    return {_cell_key(label): mean for label, (mean, _) in stats.cell_means(x, cells=cells).items()}


def _cell_key(label: str) -> tuple[str, bool]:
    side, first = label.rsplit("|", 1)
    return side, first == "True"


def debiased_mean(values: Any, *, side: Sequence[Any], first_mover: Sequence[Any]) -> float:
    """Mean over cells of the cell means: ``(1/C) Σ_c mean_c`` (NaN values left out; NaN when nothing is left).

    Each cell weighs the same however many games it holds, so a side or opening advantage cancels out.

    >>> debiased_mean([1, 0, 1, 1], side=["A", "A", "B", "B"], first_mover=[True, True, False, True])
    0.8333333333333334
    """
    x, cells, _ = _aggregation_inputs(values, side, first_mover)
    return stats.debiased_mean(x, cells=cells)


def _stratified_se(x: np.ndarray, cells: np.ndarray) -> float:
    """sqrt(Σ_c s_c² / n_c) / C, NaN when a cell has fewer than 2 values."""
    _, inverse = np.unique(cells.astype(str), return_inverse=True)
    n_cells = int(inverse.max()) + 1
    sizes = np.bincount(inverse, minlength=n_cells)
    if (sizes < 2).any():
        return math.nan
    means = np.bincount(inverse, weights=x, minlength=n_cells) / sizes
    squares = np.bincount(inverse, weights=(x - means[inverse]) ** 2, minlength=n_cells)
    variances = squares / (sizes - 1)
    return float(math.sqrt(np.sum(variances / sizes)) / n_cells)


def debiased_summary(
    values: Any,
    *,
    side: Sequence[Any],
    first_mover: Sequence[Any],
    cluster: Sequence[Any] | None = None,
    n_boot: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """Plain and debiased mean of a per-player metric, with standard error and a bootstrap interval.

    Returns ``n`` (non-NaN values), ``n_cells``, ``cells`` (``"A|first"``-style label → mean and n), ``mean``
    (plain), ``debiased_mean`` = (1/C) Σ_c mean_c, ``se`` = sqrt(Σ_c s_c²/n_c)/C (NaN when a cell has < 2 values),
    ``boot_se`` (std of the bootstrap replicates), ``ci_low``/``ci_high`` (percentile interval at ``confidence``;
    NaN with fewer than 2 values). The bootstrap resamples within each cell (stratified), or whole clusters when
    ``cluster`` is given (e.g. the instance: the same instance is played in every cell, so its games are not
    independent). Seeded, so reports are reproducible.

    >>> s = debiased_summary([1, 0, 1, 1, 0, 1], side=["A", "A", "B", "B", "A", "B"],
    ...                      first_mover=[True, True, False, False, True, False], n_boot=200)
    >>> round(s["debiased_mean"], 4), round(s["se"], 4), s["n_cells"]
    (0.6667, 0.1667, 2)
    >>> 0 <= s["ci_low"] <= s["debiased_mean"] <= s["ci_high"] <= 1
    True
    """
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}.")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}.")
    x, cells, clusters = _aggregation_inputs(values, side, first_mover, cluster)
    summary: dict[str, Any] = {"n": int(x.size), "n_cells": 0, "cells": {}, "mean": math.nan}
    summary.update(debiased_mean=math.nan, se=math.nan, boot_se=math.nan, ci_low=math.nan, ci_high=math.nan)
    if x.size == 0:
        return summary
    means = stats.cell_means(x, cells=cells)
    summary.update(
        n_cells=len(means),
        cells={
            f"{s}|{'first' if f else 'second'}": {"n": n, "mean": m}
            for (s, f), (m, n) in zip(map(_cell_key, means), means.values(), strict=True)
        },
        mean=float(x.mean()),
        debiased_mean=stats.debiased_mean(x, cells=cells),
        se=_stratified_se(x, cells),
    )
    if x.size >= 2:
        replicates = stats.bootstrap_replicates(x, cells=cells, clusters=clusters, n_boot=n_boot, seed=seed)
        low, high = stats.percentile_interval(replicates, confidence=confidence)
        summary.update(boot_se=float(np.std(replicates, ddof=1)) if n_boot > 1 else math.nan)
        summary.update(ci_low=low, ci_high=high)
    return summary


def summarise(
    frame: pd.DataFrame,
    metrics: Sequence[str],
    *,
    by: Sequence[str] = (),
    side: str = "side",
    first_mover: str = "is_first_mover",
    cluster: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """``debiased_summary`` of each metric column per group of ``by``: one row per group × metric.

    Columns: the ``by`` columns, ``metric``, ``n``, ``n_cells``, ``mean``, ``debiased_mean``, ``se``, ``ci_low``,
    ``ci_high``.

    >>> rows = pd.DataFrame({"model": ["m"] * 4, "side": ["A", "B", "A", "B"],
    ...                      "is_first_mover": [True, False, False, True], "u": [0.6, 0.4, 0.5, 0.3]})
    >>> summarise(rows, ["u"], by=["model"], n_boot=50)[["model", "metric", "n", "debiased_mean"]]
      model metric  n  debiased_mean
    0     m      u  4            0.45
    """
    missing = [c for c in [*metrics, *by, side, first_mover, *([cluster] if cluster else [])] if c not in frame]
    if missing:
        raise ValueError(f"frame lacks the column(s) {missing}.")
    groups = frame.groupby(list(by), sort=True, dropna=False) if by else [((), frame)]
    rows = []
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        for metric in metrics:
            stats = debiased_summary(
                pd.to_numeric(group[metric], errors="coerce").to_numpy(dtype=float),
                side=group[side].astype(str).to_numpy(),
                first_mover=group[first_mover].map(truthy_cell).to_numpy(),
                cluster=group[cluster].astype(str).to_numpy() if cluster else None,
                n_boot=n_boot,
                seed=seed,
            )
            stats.pop("cells")
            stats.pop("boot_se")
            rows.append({**dict(zip(by, key, strict=True)), "metric": metric, **stats})
    columns = [*by, "metric", "n", "n_cells", "mean", "debiased_mean", "se", "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=columns)
