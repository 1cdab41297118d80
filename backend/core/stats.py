"""The one cell-mean estimator and the one bootstrap of every report (DoND, agency metrics, bias tests).

- ``cell_means`` / ``debiased_mean``: the mean over cells of the cell means, ``(1/C) Σ_c mean_c``. With cells =
  side × first mover (DoND) each cell weighs the same however many games it holds, so a side or opening advantage
  cancels out.
- ``bootstrap_replicates``: the debiased mean of ``n_boot`` resamples, drawn within each cell (stratified) or as whole
  clusters (e.g. the instance, played in every cell); vectorised and chunked, so 2000 replicates of 10⁵ rows stay small
  in memory.
- ``bootstrap_statistic``: any statistic of resampled rows (for metrics that are not means, e.g. the bias metrics).
- ``percentile_interval``: the percentile interval of replicates.

Every draw comes from ``numpy.random.default_rng(seed)``, so a report is reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

CHUNK_ELEMENTS = 2_000_000  # largest random-index block drawn at once (16 MB of int64)


def _checked(values: Any, cells: Any, clusters: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    x = np.asarray(values, dtype=float).ravel()
    labels = np.asarray(cells, dtype=object).ravel() if cells is not None else np.zeros(x.size, dtype=object)
    if labels.size != x.size:
        raise ValueError(f"values and cells must have the same length, got {x.size} and {labels.size}.")
    groups = None
    if clusters is not None:
        groups = np.asarray(clusters, dtype=object).ravel()
        if groups.size != x.size:
            raise ValueError(f"values and clusters must have the same length, got {x.size} and {groups.size}.")
    keep = ~np.isnan(x)
    return x[keep], labels[keep].astype(str), (groups[keep].astype(str) if groups is not None else None)


def cell_means(values: Any, *, cells: Sequence[Any]) -> dict[str, tuple[float, int]]:
    """Each cell's mean and size, NaN values left out (a cell with no value left is absent), keyed by ``str(cell)``.

    >>> cell_means([1, 0, 1, float("nan")], cells=["A|first", "A|first", "B|second", "B|second"])
    {'A|first': (0.5, 2), 'B|second': (1.0, 1)}
    """
    x, labels, _ = _checked(values, cells)
    names, inverse = np.unique(labels, return_inverse=True)
    sums = np.bincount(inverse, weights=x, minlength=names.size)
    sizes = np.bincount(inverse, minlength=names.size)
    return {str(name): (float(s / n), int(n)) for name, s, n in zip(names, sums, sizes, strict=True)}


def debiased_mean(values: Any, *, cells: Sequence[Any]) -> float:
    """``(1/C) Σ_c mean_c`` over the C cells that hold a value (NaN values left out; NaN when nothing is left).

    >>> debiased_mean([100.0, 80.0, 40.0], cells=[1, 1, 2])
    65.0
    >>> debiased_mean([float("nan")], cells=[1])
    nan
    """
    means = [mean for mean, _ in cell_means(values, cells=cells).values()]
    return float(np.mean(means)) if means else math.nan


def bootstrap_replicates(
    values: Any,
    *,
    cells: Sequence[Any] | None = None,
    clusters: Sequence[Any] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> np.ndarray:
    """The debiased mean (plain mean without ``cells``) of ``n_boot`` bootstrap resamples; NaN values left out first.

    Without ``clusters`` each cell is resampled on its own: per cell, in sorted order of ``str(cell)``, ``n_boot`` ×
    n_c row indices are drawn. With ``clusters`` whole clusters are drawn (``n_boot`` × n_clusters indices, sorted
    labels): a cluster drawn k times weighs its rows k times, and a cell no drawn cluster reaches is left out of that
    replicate's mean. Empty input gives an empty array.

    >>> r = bootstrap_replicates([0.0, 1.0] * 10, n_boot=500, seed=1)
    >>> r.shape, bool(0.3 < r.mean() < 0.7)
    ((500,), True)
    >>> bootstrap_replicates([5.0, 5.0, 7.0], cells=["a", "a", "b"], n_boot=3).tolist()
    [6.0, 6.0, 6.0]
    """
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}.")
    x, labels, groups = _checked(values, cells, clusters)
    if x.size == 0:
        return np.empty(0)
    names, inverse = np.unique(labels, return_inverse=True)
    rng = np.random.default_rng(seed)
    if groups is None:
        per_cell = np.empty((n_boot, names.size))
        for c in range(names.size):
            members = x[inverse == c]
            rows_per_chunk = max(1, CHUNK_ELEMENTS // members.size)
            for start in range(0, n_boot, rows_per_chunk):
                stop = min(n_boot, start + rows_per_chunk)
                picks = rng.integers(0, members.size, size=(stop - start, members.size))
                per_cell[start:stop, c] = members[picks].mean(axis=1)
        return per_cell.mean(axis=1)
    cluster_names, cluster_index = np.unique(groups, return_inverse=True)
    one_hot = np.zeros((x.size, names.size))
    one_hot[np.arange(x.size), inverse] = 1.0
    replicates = np.empty(n_boot)
    rows_per_chunk = max(1, CHUNK_ELEMENTS // max(x.size, cluster_names.size))
    for start in range(0, n_boot, rows_per_chunk):
        stop = min(n_boot, start + rows_per_chunk)
        picks = rng.integers(0, cluster_names.size, size=(stop - start, cluster_names.size))
        draws = np.zeros((stop - start, cluster_names.size))
        np.add.at(draws, (np.arange(stop - start)[:, None], picks), 1.0)
        weights = draws[:, cluster_index]  # (chunk, rows): how often each row was drawn
        totals = weights @ one_hot
        with np.errstate(invalid="ignore", divide="ignore"):
            means = ((weights * x) @ one_hot) / totals
        replicates[start:stop] = np.nanmean(np.where(totals > 0, means, np.nan), axis=1)
    return replicates


def bootstrap_statistic(
    statistic: Callable[[np.ndarray], float], n_rows: int, *, n_boot: int = 2000, seed: int = 0
) -> np.ndarray:
    """``statistic(index)`` of ``n_boot`` resamples of row indices (``n_rows`` drawn with replacement each).

    For statistics that are not cell means (the bias metrics): the caller indexes all its arrays with ``index``. A
    resample the statistic cannot score (it raises ``ValueError``) counts as NaN.

    >>> data = np.array([1.0, 2.0, 3.0, 4.0])
    >>> r = bootstrap_statistic(lambda index: float(np.median(data[index])), 4, n_boot=200, seed=3)
    >>> r.shape, bool(1.0 <= r.min() <= r.max() <= 4.0)
    ((200,), True)
    """
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}.")
    if n_rows < 1:
        raise ValueError(f"A bootstrap needs at least one row, got {n_rows}.")
    rng = np.random.default_rng(seed)
    replicates = np.empty(n_boot)
    for b in range(n_boot):
        try:
            replicates[b] = statistic(rng.integers(0, n_rows, size=n_rows))
        except ValueError:
            replicates[b] = math.nan
    return replicates


def percentile_interval(replicates: Any, *, confidence: float = 0.95) -> tuple[float, float]:
    """The ``(1-confidence)/2`` and ``(1+confidence)/2`` quantiles (linear interpolation) of the non-NaN replicates;
    NaN, NaN when none is left.

    >>> percentile_interval(np.arange(101.0), confidence=0.5)
    (25.0, 75.0)
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}.")
    r = np.asarray(replicates, dtype=float)
    r = r[~np.isnan(r)]
    if r.size == 0:
        return math.nan, math.nan
    alpha = (1 - confidence) / 2
    low, high = np.quantile(r, [alpha, 1 - alpha])
    return float(low), float(high)
