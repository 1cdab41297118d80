"""Inter-annotator agreement and human-versus-model comparison for rating data.

Data shapes used here:

* ``values_per_unit``: one sequence of ratings per rated unit (e.g. one (episode, agent, dimension)), from
  different annotators. Designs where each unit has its own annotators (unpaired double annotation, as in the
  Sotopia-π human evaluation) fit this shape; units with fewer than two ratings carry no agreement information.
* ``reliability_data``: the ``krippendorff`` package's matrix, annotators (or rating slots) x units, NaN where
  missing. Krippendorff's alpha depends only on the values within each unit, not on who gave them, so
  ``reliability_matrix`` can stack a unit's ratings into slots.
* ``counts``: items x categories, how many raters chose each category (Fleiss' and Randolph's kappa).

Undefined statistics (no unit with two ratings, no variation at all) are returned as NaN, never raised.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def reliability_matrix(values_per_unit: Sequence[Sequence[float]]) -> np.ndarray:
    """Stack each unit's ratings into a (max ratings per unit) x (units) matrix, NaN-padded.

    >>> reliability_matrix([[1, 2], [3], [4, 5, 6]])
    array([[ 1.,  3.,  4.],
           [ 2., nan,  5.],
           [nan, nan,  6.]])
    """
    if len(values_per_unit) == 0:
        raise ValueError("values_per_unit must hold at least one unit.")
    depth = max(len(values) for values in values_per_unit)
    matrix = np.full((max(depth, 1), len(values_per_unit)), np.nan)
    for column, values in enumerate(values_per_unit):
        matrix[: len(values), column] = np.asarray(values, dtype=float)
    return matrix


def _pairable(values_per_unit: Sequence[Sequence[float]]) -> list[np.ndarray]:
    units = [np.asarray(values, dtype=float) for values in values_per_unit]
    units = [unit[~np.isnan(unit)] for unit in units]
    return [unit for unit in units if unit.size >= 2]


def krippendorff_alpha(values_per_unit: Sequence[Sequence[float]], *, level: str = "interval") -> float:
    """Krippendorff's alpha of ratings grouped by unit, computed by the ``krippendorff`` package.

    alpha = 1 - D_o / D_e: observed disagreement within units over the disagreement expected from all pairable
    values pooled (for ``interval``, the distance is the squared difference). Range (-1, 1]; 1 = perfect agreement,
    0 = chance level. NaN when no unit has two ratings or every pairable rating is equal.

    >>> krippendorff_alpha([[1, 2], [3, 3]])  # hand-computed: D_o = 2/4, D_e = 22/12, alpha = 8/11
    0.7272727272727273
    >>> krippendorff_alpha([[1, 1], [4, 4], [2]])
    1.0
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}.")
    units = _pairable(values_per_unit)
    pooled = np.concatenate(units) if units else np.array([])
    if pooled.size < 2 or np.unique(pooled).size < 2:
        return math.nan
    import krippendorff  # with scipy, loaded when a figure is computed: not by every page module that imports this

    return float(krippendorff.alpha(reliability_data=reliability_matrix(units), level_of_measurement=level))


def pairwise_agreement(values_per_unit: Sequence[Sequence[float]], *, tolerance: float = 0) -> float:
    """Share of rating pairs within a unit that differ by at most ``tolerance``, averaged over units.

    For each unit with m >= 2 ratings: a_u = (number of unordered pairs with |v_i - v_j| <= tolerance) / C(m, 2);
    the result is the mean of a_u over those units (each unit weighs the same). ``tolerance=0`` is exact
    agreement, ``tolerance=1`` agreement within one scale point. Range [0, 1]; NaN without any pair.

    >>> pairwise_agreement([[1, 1], [2, 4], [5, 5, 6]])  # units: 1, 0, 1/3
    0.4444444444444444
    >>> pairwise_agreement([[1, 1], [2, 4], [5, 5, 6]], tolerance=1)  # units: 1, 0, 1
    0.6666666666666666
    """
    if tolerance < 0:
        raise ValueError(f"tolerance must be non-negative, got {tolerance}.")
    scores = []
    for unit in _pairable(values_per_unit):
        differences = np.abs(unit[:, None] - unit[None, :])[np.triu_indices(unit.size, k=1)]
        scores.append(float(np.mean(differences <= tolerance + 1e-9)))
    return float(np.mean(scores)) if scores else math.nan


def _check_counts(counts) -> np.ndarray:
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or table.shape[0] < 1 or table.shape[1] < 2:
        raise ValueError(f"counts must be an items x categories table with at least 2 categories, got {table.shape}.")
    if (table < 0).any() or not np.all(table == np.round(table)):
        raise ValueError("counts must hold non-negative whole numbers.")
    raters = table.sum(axis=1)
    if raters[0] < 2 or not np.all(raters == raters[0]):
        raise ValueError(f"Every item needs the same number (>= 2) of ratings, got row totals {sorted(set(raters))}.")
    return table


def _mean_item_agreement(table: np.ndarray) -> float:
    raters = table.sum(axis=1)[0]
    return float(np.mean(((table**2).sum(axis=1) - raters) / (raters * (raters - 1))))


def fleiss_kappa(counts) -> float:
    """Fleiss' kappa for N items, each rated by the same number n of raters into k categories.

    P_i = (sum_j n_ij^2 - n) / (n (n - 1)), P_bar = mean_i P_i, p_j = sum_i n_ij / (N n), P_e = sum_j p_j^2,
    kappa = (P_bar - P_e) / (1 - P_e). Range [-1, 1]; NaN when P_e = 1 (everyone always uses one category).

    >>> fleiss_kappa([[2, 0], [1, 1]])  # hand-computed: P_bar = 1/2, P_e = 10/16, kappa = -1/3
    -0.3333333333333333
    >>> round(fleiss_kappa([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    ...                     [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]), 3)
    0.21
    """
    table = _check_counts(counts)
    proportions = table.sum(axis=0) / table.sum()
    chance = float(np.sum(proportions**2))
    if chance >= 1:
        return math.nan
    return (_mean_item_agreement(table) - chance) / (1 - chance)


def randolph_kappa(counts) -> float:
    """Randolph's free-marginal kappa: (P_bar - 1/k) / (1 - 1/k), with P_bar as in Fleiss' kappa, k categories.

    >>> randolph_kappa([[2, 0], [1, 1]])  # P_bar = 1/2, k = 2
    0.0
    """
    table = _check_counts(counts)
    k = table.shape[1]
    return (_mean_item_agreement(table) - 1 / k) / (1 - 1 / k)


def category_counts(values_per_unit: Sequence[Sequence[float]], categories: Sequence[float]) -> np.ndarray:
    """Turn per-unit ratings into the items x categories table of ``fleiss_kappa``.

    >>> category_counts([[0, 1], [1, 1]], categories=[0, 1])
    array([[1, 1],
           [0, 2]])
    """
    index = {float(category): position for position, category in enumerate(categories)}
    table = np.zeros((len(values_per_unit), len(categories)), dtype=int)
    for row, values in enumerate(values_per_unit):
        for value in values:
            if float(value) not in index:
                raise ValueError(f"The rating {value} is not one of the categories {list(categories)}.")
            table[row, index[float(value)]] += 1
    return table


def compare_with_model(human: Sequence[float], model: Sequence[float]) -> dict[str, float]:
    """Pearson and Spearman correlation and mean difference (human - model) over paired scores.

    ``human`` is typically the mean human rating per (episode, agent), ``model`` the model's rating of the same.
    Correlations are NaN when fewer than 3 pairs or when either side is constant.

    >>> result = compare_with_model([1, 2, 3, 4], [2, 4, 5, 9])  # hand-computed: r = 11 / sqrt(5 * 26)
    >>> round(result["pearson"], 4), result["spearman"], result["mean_difference"], result["n"]
    (0.9648, 1.0, -2.5, 4)
    """
    human_values = np.asarray(human, dtype=float)
    model_values = np.asarray(model, dtype=float)
    if human_values.shape != model_values.shape or human_values.ndim != 1:
        raise ValueError(
            f"human and model must be paired 1-D sequences, got shapes {human_values.shape} and {model_values.shape}."
        )
    keep = ~(np.isnan(human_values) | np.isnan(model_values))
    human_values, model_values = human_values[keep], model_values[keep]
    n = int(human_values.size)
    result = dict(n=n, pearson=math.nan, spearman=math.nan, mean_difference=math.nan)
    if n:
        result["mean_difference"] = float(np.mean(human_values - model_values))
    if n >= 3 and np.ptp(human_values) > 0 and np.ptp(model_values) > 0:
        from scipy import stats

        result["pearson"] = float(stats.pearsonr(human_values, model_values).statistic)
        result["spearman"] = float(stats.spearmanr(human_values, model_values).statistic)
    return result
