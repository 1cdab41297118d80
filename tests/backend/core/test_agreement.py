"""Agreement metrics against hand-computed values, the krippendorff package and a naive oracle."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.core.agreement import (
    category_counts,
    compare_with_model,
    fleiss_kappa,
    krippendorff_alpha,
    pairwise_agreement,
    randolph_kappa,
    reliability_matrix,
)
from tests.backend.core.oracles import interval_alpha_reference
from tests.support import examples

# Three annotators x six units on a -5..5 scale, with gaps (NaN): the krippendorff package's own layout.
FIXTURE = np.array(
    [
        [3, 1, np.nan, -2, 0, 5],
        [2, 1, 4, -3, np.nan, 5],
        [np.nan, 0, 4, -1, 1, np.nan],
    ]
)


def _units(matrix: np.ndarray) -> list[list[float]]:
    return [[v for v in column if not np.isnan(v)] for column in matrix.T]


def test_alpha_equals_the_krippendorff_package_on_a_fixture():
    expected = krippendorff.alpha(reliability_data=FIXTURE, level_of_measurement="interval")
    assert krippendorff_alpha(_units(FIXTURE)) == pytest.approx(expected, abs=1e-12)
    assert interval_alpha_reference(_units(FIXTURE)) == pytest.approx(expected, abs=1e-12)


def test_alpha_hand_computed():
    # Units {1, 2} and {3, 3}: D_o = (2 * 1) / 4, D_e = 2 * (1 + 4 + 4 + 1 + 1 + 0) / (4 * 3); alpha = 1 - 0.5 / (22/12)
    assert krippendorff_alpha([[1, 2], [3, 3]]) == pytest.approx(1 - 0.5 / (22 / 12))


def test_alpha_is_one_for_perfect_agreement_and_nan_when_undefined():
    assert krippendorff_alpha([[2, 2], [5, 5, 5], [0, 0]]) == 1.0
    assert math.isnan(krippendorff_alpha([[3, 3], [3, 3]]))  # no variation at all
    assert math.isnan(krippendorff_alpha([[1], [2], [3]]))  # no unit with two ratings


def test_alpha_ignores_single_rating_units():
    assert krippendorff_alpha([[1, 2], [3, 3], [9]]) == krippendorff_alpha([[1, 2], [3, 3]])


def test_systematic_disagreement_gives_negative_alpha():
    assert krippendorff_alpha([[0, 10], [10, 0], [0, 10]]) < 0


def test_other_levels_pass_through_to_the_package():
    expected = krippendorff.alpha(reliability_data=FIXTURE, level_of_measurement="ordinal")
    assert krippendorff_alpha(_units(FIXTURE), level="ordinal") == pytest.approx(expected)
    with pytest.raises(ValueError, match="level must be one of"):
        krippendorff_alpha(_units(FIXTURE), level="cardinal")


units_strategy = st.lists(
    st.lists(st.integers(min_value=-10, max_value=10), min_size=1, max_size=4), min_size=2, max_size=12
)


@settings(max_examples=examples(150), deadline=None)
@given(units_strategy)
def test_alpha_matches_the_naive_oracle_and_the_package(units):
    fast = krippendorff_alpha(units)
    naive = interval_alpha_reference(units)
    if math.isnan(fast):
        pooled = [v for unit in units if len(unit) >= 2 for v in unit]
        assert len(set(pooled)) < 2
        return
    assert fast == pytest.approx(naive, abs=1e-9)
    pairable = [unit for unit in units if len(unit) >= 2]
    package = krippendorff.alpha(reliability_data=reliability_matrix(pairable), level_of_measurement="interval")
    assert fast == pytest.approx(package, abs=1e-9)


@settings(max_examples=examples(50), deadline=None)
@given(units_strategy, st.randoms())
def test_alpha_and_agreement_do_not_depend_on_order(units, random):
    shuffled = [random.sample(unit, len(unit)) for unit in units]
    random.shuffle(shuffled)
    for metric in (krippendorff_alpha, pairwise_agreement):
        first, second = metric(units), metric(shuffled)
        assert (math.isnan(first) and math.isnan(second)) or first == pytest.approx(second)


def test_pairwise_agreement_hand_computed():
    units = [[3, 3], [2, 4], [5, 5, 6], [7]]
    # Unit scores exact: 1, 0, 1/3 (one of three pairs); the single rating is ignored.
    assert pairwise_agreement(units) == pytest.approx((1 + 0 + 1 / 3) / 3)
    # Within one point: 1, 0, 1.
    assert pairwise_agreement(units, tolerance=1) == pytest.approx(2 / 3)
    assert pairwise_agreement(units, tolerance=2) == 1.0
    assert math.isnan(pairwise_agreement([[1], [2]]))
    with pytest.raises(ValueError, match="tolerance must be non-negative"):
        pairwise_agreement(units, tolerance=-1)


def test_fleiss_kappa_hand_computed_and_published():
    # Two items, two raters: P_bar = (1 + 0) / 2, p = (3/4, 1/4), P_e = 10/16.
    assert fleiss_kappa([[2, 0], [1, 1]]) == pytest.approx((0.5 - 10 / 16) / (1 - 10 / 16))
    # Fleiss (1971) as reproduced on Wikipedia: 10 subjects, 14 raters, 5 categories, kappa = 0.210.
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa(table) == pytest.approx(0.210, abs=5e-4)
    assert fleiss_kappa([[3, 0], [0, 3]]) == 1.0
    assert math.isnan(fleiss_kappa([[2, 0], [2, 0]]))


def test_randolph_kappa_uses_uniform_chance():
    assert randolph_kappa([[2, 0], [1, 1]]) == pytest.approx((0.5 - 0.5) / 0.5)
    assert randolph_kappa([[2, 0, 0], [2, 0, 0]]) == 1.0


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        ([[2, 0], [1, 2]], "same number"),
        ([[1, 0], [1, 0]], "same number"),
        ([[2], [2]], "at least 2 categories"),
        ([[2, -1, 1]], "non-negative whole"),
    ],
)
def test_kappa_rejects_bad_tables(counts, message):
    with pytest.raises(ValueError, match=message):
        fleiss_kappa(counts)


def test_category_counts_feed_fleiss():
    counts = category_counts([[-1, 0], [0, 0], [1, 1]], categories=[-1, 0, 1])
    assert counts.tolist() == [[1, 1, 0], [0, 2, 0], [0, 0, 2]]
    with pytest.raises(ValueError, match="not one of the categories"):
        category_counts([[5, 0]], categories=[0, 1])


def test_compare_with_model_hand_computed():
    result = compare_with_model([1, 2, 3, 4], [2, 4, 5, 9])
    assert result["pearson"] == pytest.approx(11 / math.sqrt(5 * 26))
    assert result["spearman"] == pytest.approx(1.0)
    assert result["mean_difference"] == pytest.approx((1 + 2 + 3 + 4 - 2 - 4 - 5 - 9) / 4)
    reversed_ranks = compare_with_model([1, 2, 3], [3, 2, 1])
    assert reversed_ranks["spearman"] == pytest.approx(-1.0)


def test_compare_with_model_drops_missing_pairs_and_handles_constant_input():
    result = compare_with_model([1, 2, np.nan, 4], [1, np.nan, 3, 5])
    assert result["n"] == 2 and math.isnan(result["pearson"]) and result["mean_difference"] == pytest.approx(-0.5)
    constant = compare_with_model([1, 2, 3], [0, 0, 0])
    assert math.isnan(constant["pearson"]) and constant["mean_difference"] == pytest.approx(2.0)
    with pytest.raises(ValueError, match="paired 1-D"):
        compare_with_model([1, 2], [1])
