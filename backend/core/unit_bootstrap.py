"""Seeded bootstrap intervals for agreement figures, resampling the rated units (episodes, logs).

Every agreement figure of the reports (Krippendorff's alpha, Fleiss' kappa, Pearson's and Spearman's correlation,
the mean difference, the share of equal verdicts, ECE and Brier score) gets a 95 % percentile interval from the
same bootstrap: ``n_boot`` resamples of the rated *units* drawn with replacement (a social_eval episode with all
its ratings, a payoff-reasoning log with all its verdicts), never of single ratings, because the ratings of one unit
are not independent.

**Weights instead of copies.** A resample is a row of ``unit_draws``: how often each unit was drawn. Each figure is
computed from per-unit sufficient statistics weighted by those counts, for all resamples at once (numpy, no Python
loop over resamples). With whole-number weights this is exactly the figure of the resample written out with its
duplicates (the tests check it against the naive computation on the duplicated data), so:

- alpha (interval): per unit the count m, sum and sum of squares of its ratings give D_o and D_e;
- Fleiss' kappa: per unit P_i and its category counts;
- Pearson: weighted means, variances, covariance; Spearman: Pearson of the average ranks a duplicated sample would
  get (a value present w times takes the mean of w consecutive ranks);
- mean difference and shares: weighted means.

Draws come from ``numpy.random.default_rng(seed)``: the same seed gives the same interval (the reports use
``DEFAULT_SEED`` and ``DEFAULT_RESAMPLES``, recorded in every manifest, ``backend.core.publish.SEEDS``). A resample
on which a figure is undefined (constant ratings, fewer than 3 pairs) is left out of its interval.

>>> low, high = interval(pearson_replicates([1, 2, 3, 4, 5, 6], [1, 3, 2, 5, 4, 6], unit_draws(6, n_boot=200)))
>>> bool(-1 <= low < high <= 1)
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from backend.core.stats import percentile_interval

DEFAULT_SEED = 0
DEFAULT_RESAMPLES = 1000
CONFIDENCE = 0.95
METHOD = (
    f"95% percentile bootstrap over the rated units ({DEFAULT_RESAMPLES} resamples, seed {DEFAULT_SEED}; "
    "episodes for social_eval, logs for payoff_reasoning_eval)"
)


def unit_draws(n_units: int, *, n_boot: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``n_boot`` x ``n_units`` counts: how often each unit is drawn in each resample (``n_units`` draws with
    replacement per resample, from ``numpy.random.default_rng(seed).integers``).

    >>> draws = unit_draws(4, n_boot=3, seed=1)
    >>> draws.shape, draws.sum(axis=1).tolist()
    ((3, 4), [4.0, 4.0, 4.0])
    >>> bool((unit_draws(4, n_boot=3, seed=1) == draws).all())
    True
    """
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}.")
    if n_units < 1:
        raise ValueError(f"A bootstrap needs at least one unit, got {n_units}.")
    picks = np.random.default_rng(seed).integers(0, n_units, size=(n_boot, n_units))
    offsets = (np.arange(n_boot) * n_units)[:, None]
    return np.bincount((picks + offsets).ravel(), minlength=n_boot * n_units).reshape(n_boot, n_units).astype(float)


def cluster_weights(draws: np.ndarray, cluster_of: Sequence[Any]) -> np.ndarray:
    """Per-row weights from per-cluster draws: row i weighs what its cluster (``cluster_of[i]``, an index into the
    draws' columns) was drawn.

    >>> cluster_weights(np.array([[2.0, 0.0]]), [0, 0, 1]).tolist()
    [[2.0, 2.0, 0.0]]
    """
    return np.asarray(draws, dtype=float)[:, np.asarray(cluster_of, dtype=int)]


def interval(replicates: Any, *, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The percentile interval of the defined (non-NaN) replicates (``backend.core.stats.percentile_interval``).

    >>> interval([0.0, 1.0, float("nan"), 2.0], confidence=0.5)
    (0.5, 1.5)
    """
    return percentile_interval(replicates, confidence=confidence)


def _weights(weights: Any, n: int) -> np.ndarray:
    w = weights if isinstance(weights, np.ndarray) and weights.dtype == float else np.asarray(weights, dtype=float)
    w = w[None, :] if w.ndim == 1 else w
    if w.ndim != 2 or w.shape[1] != n:
        raise ValueError(f"weights must have one column per unit ({n}), got shape {w.shape}.")
    return w


def _kept(w: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The weights of the kept units (no copy when every unit is kept: the weights of 1000 resamples are large)."""
    return w if keep.all() else w[:, keep]


def _divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)


def alpha_replicates(values_per_unit: Sequence[Sequence[float]], weights: Any) -> np.ndarray:
    """Krippendorff's interval alpha of each weighted resample (``weights``: resamples x units, or one row).

    Per unit u with m_u >= 2 ratings: d_u = 2 (m_u Σv² - (Σv)²) / (m_u - 1) (its pairs' squared differences);
    n = Σ w_u m_u, D_o = Σ w_u d_u / n; pooled T1 = Σ w_u Σv, T2 = Σ w_u Σv², D_e = 2 (n T2 - T1²) / (n (n - 1));
    alpha = 1 - D_o / D_e (NaN when D_e = 0 or n < 2). Units with fewer than two ratings carry no weight.

    >>> alpha_replicates([[1, 2], [3, 3]], [1, 1]).tolist()  # as krippendorff_alpha: 8/11
    [0.7272727272727273]
    """
    units = [np.asarray(unit, dtype=float) for unit in values_per_unit]
    units = [unit[~np.isnan(unit)] for unit in units]
    w = _weights(weights, len(units))
    m = np.array([unit.size for unit in units], dtype=float)
    s1 = np.array([unit.sum() for unit in units])
    s2 = np.array([(unit**2).sum() for unit in units])
    pairable = m >= 2
    w = w * pairable
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(pairable, 2 * (m * s2 - s1**2) / np.where(pairable, m - 1, 1), 0.0)
    n = w @ m
    observed = _divide(w @ d, n)
    t1, t2 = w @ s1, w @ s2
    expected = _divide(2 * (n * t2 - t1**2), n * (n - 1))
    result = 1 - _divide(observed, expected)
    return np.where((n >= 2) & (np.abs(np.nan_to_num(expected)) > 1e-12), result, np.nan)


def fleiss_replicates(counts: Any, weights: Any) -> np.ndarray:
    """Fleiss' kappa of each weighted resample of the items (rows) of an items x categories ``counts`` table, each
    item with the same number n >= 2 of ratings (as ``backend.core.agreement.fleiss_kappa``).

    P_bar = Σ w_i P_i / Σ w_i, p_j = Σ w_i n_ij / (n Σ w_i), P_e = Σ p_j², kappa = (P_bar - P_e) / (1 - P_e); NaN
    when P_e = 1.

    >>> fleiss_replicates([[2, 0], [1, 1]], [[1, 1], [2, 0]]).tolist()  # second resample: item 1 twice, P_e = 1
    [-0.3333333333333333, nan]
    """
    table = np.asarray(counts, dtype=float)
    w = _weights(weights, table.shape[0])
    raters = table.sum(axis=1)
    if table.shape[0] and (raters[0] < 2 or not np.all(raters == raters[0])):
        raise ValueError("Every item needs the same number (>= 2) of ratings.")
    n = raters[0] if table.shape[0] else 2.0
    per_item = ((table**2).sum(axis=1) - n) / (n * (n - 1))
    total = w.sum(axis=1)
    p_bar = _divide(w @ per_item, total)
    shares = _divide(w @ table, (total * n)[:, None])
    chance = (shares**2).sum(axis=1)
    return np.where(chance < 1 - 1e-12, _divide(p_bar - chance, 1 - chance), np.nan)


def _paired(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"x and y must be paired 1-D sequences, got shapes {a.shape} and {b.shape}.")
    keep = ~(np.isnan(a) | np.isnan(b))
    return a, b, keep


def _weighted_pearson(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Row-wise weighted Pearson from weighted raw moments; ``a``, ``b`` are 1-D (shared by every resample: matrix
    products) or resamples x units (one pass each, no temporaries of that size)."""

    def moment(x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        if x.ndim == 1 and (y is None or y.ndim == 1):
            return w @ (x if y is None else x * y)
        x2 = np.broadcast_to(x, w.shape)
        return (
            np.einsum("ij,ij->i", w, x2) if y is None else np.einsum("ij,ij,ij->i", w, x2, np.broadcast_to(y, w.shape))
        )

    total = w.sum(axis=1)
    mean_a, mean_b = _divide(moment(a), total), _divide(moment(b), total)
    cov = _divide(moment(a, b), total) - mean_a * mean_b
    var_a = _divide(moment(a, a), total) - mean_a**2
    var_b = _divide(moment(b, b), total) - mean_b**2
    scale = np.maximum(np.abs(a).max(initial=1.0), np.abs(b).max(initial=1.0)) ** 2
    ok = (total >= 3) & (var_a > 1e-10 * scale) & (var_b > 1e-10 * scale)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cov / np.sqrt(var_a * var_b)
    return np.where(ok, np.clip(r, -1.0, 1.0), np.nan)


def pearson_replicates(x: Any, y: Any, weights: Any) -> np.ndarray:
    """Pearson's r of paired ``x``, ``y`` in each weighted resample of the pairs (pairs with a NaN left out); NaN
    with fewer than 3 pairs drawn or a constant side (as ``backend.core.agreement.compare_with_model``).

    >>> pearson_replicates([1, 2, 3, 4], [2, 4, 5, 9], [1, 1, 1, 1]).round(4).tolist()
    [0.9648]
    """
    a, b, keep = _paired(x, y)
    w = _kept(_weights(weights, a.size), keep)
    return _weighted_pearson(a[keep], b[keep], w)


def _ranks(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The average rank of each value in the sample written out with its duplicates (resamples x units)."""
    distinct, group = np.unique(values, return_inverse=True)
    one_hot = np.zeros((values.size, distinct.size))
    one_hot[np.arange(values.size), group] = 1.0
    per_value = w @ one_hot
    below = np.cumsum(per_value, axis=1) - per_value
    return (below + (per_value + 1) / 2)[:, group]


def spearman_replicates(x: Any, y: Any, weights: Any) -> np.ndarray:
    """Spearman's rho of paired ``x``, ``y`` in each weighted resample: Pearson's r of the average ranks (ties
    and duplicates share their mean rank, as ``scipy.stats.spearmanr``).

    >>> spearman_replicates([1, 2, 3, 4], [2, 4, 5, 9], [1, 1, 1, 1]).tolist()
    [1.0]
    """
    a, b, keep = _paired(x, y)
    a, b = a[keep], b[keep]
    w = _kept(_weights(weights, keep.size), keep)
    return _weighted_pearson(_ranks(a, w), _ranks(b, w), w)


def mean_replicates(values: Any, weights: Any) -> np.ndarray:
    """The weighted mean of ``values`` (NaN left out) in each resample: a mean difference, a share of agreements, a
    Brier score or a mean absolute error.

    >>> mean_replicates([1.0, 3.0, float("nan")], [[1, 1, 5], [0, 2, 0]]).tolist()
    [2.0, 3.0]
    """
    v = np.asarray(values, dtype=float)
    keep = ~np.isnan(v)
    w = _kept(_weights(weights, v.size), keep)
    return _divide(w @ v[keep], w.sum(axis=1))


def with_interval(value: float, replicates: Any) -> dict[str, Any]:
    """A figure with its interval, as the reports' JSON holds it: ``{"value", "low", "high"}`` (None for NaN).

    >>> with_interval(0.5, [0.25, 0.5, 0.75])["value"]
    0.5
    """
    low, high = interval(replicates)

    def clean(number: float) -> float | None:
        return None if number is None or (isinstance(number, float) and math.isnan(number)) else float(number)

    return {"value": clean(value), "low": clean(low), "high": clean(high)}
