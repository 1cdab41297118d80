"""Judges' confidence and calibration (backend.core.calibration) and the unit bootstrap (backend.core.unit_bootstrap)
against naive oracles: each weighted resample must equal the figure of the resample written out with its duplicates,
computed by the reference implementations (krippendorff, scipy, loops from the definitions)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from backend.core import agreement, calibration, unit_bootstrap
from tests.backend.core.oracles import interval_alpha_reference
from tests.support import examples


# --- naive oracles, straight from the definitions --------------------------------------------------------------------
def naive_ece(confidence, correct, bins):
    """Guo et al.: bins ((b-1)/B, b/B], 0 in the first; Σ n_b/N |acc_b - conf_b|, one unit at a time."""
    members: dict[int, list[int]] = {}
    for i, c in enumerate(confidence):
        b = 0
        while b < bins - 1 and c > (b + 1) / bins + 1e-12:
            b += 1
        members.setdefault(b, []).append(i)
    total = 0.0
    for chosen in members.values():
        acc = sum(correct[i] for i in chosen) / len(chosen)
        conf = sum(confidence[i] for i in chosen) / len(chosen)
        total += len(chosen) / len(confidence) * abs(acc - conf)
    return total


def naive_brier(p, y):
    return sum((a - b) ** 2 for a, b in zip(p, y, strict=True)) / len(p)


def naive_fleiss(counts):
    n = sum(counts[0])
    items = len(counts)
    p_bar = sum((sum(c * c for c in row) - n) / (n * (n - 1)) for row in counts) / items
    shares = [sum(row[j] for row in counts) / (items * n) for j in range(len(counts[0]))]
    chance = sum(s * s for s in shares)
    return math.nan if chance >= 1 - 1e-12 else (p_bar - chance) / (1 - chance)


def duplicated(items, counts):
    """The resample written out: each item as often as it was drawn."""
    return [item for item, count in zip(items, counts, strict=True) for _ in range(int(count))]


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-9)


# --- confidence from k samples ----------------------------------------------------------------------------------------
def test_votes_give_the_majority_verdict_the_share_saying_correct_and_the_share_agreeing():
    assert calibration.vote_summary([1, 1, 1, 0, 0]) == dict(
        samples=5, votes_correct=3, verdict=1, p_correct=0.6, confidence=0.6
    )
    assert calibration.vote_summary([0, 0, 0, 1]) == dict(
        samples=4, votes_correct=1, verdict=0, p_correct=0.25, confidence=0.75
    )
    with pytest.raises(ValueError):
        calibration.vote_summary([])
    with pytest.raises(ValueError):
        calibration.vote_summary([2])


@given(st.lists(st.integers(1, 10), min_size=1, max_size=9))
@settings(max_examples=examples(200))
def test_rating_summary_is_the_median_and_the_sample_sd(ratings):
    summary = calibration.rating_summary(ratings)
    ordered = sorted(ratings)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    assert summary["rating"] == math.floor(median + 0.5)
    mean = sum(ratings) / len(ratings)
    sd = math.sqrt(sum((r - mean) ** 2 for r in ratings) / (len(ratings) - 1)) if len(ratings) > 1 else 0.0
    assert summary["spread"] == pytest.approx(sd)


# --- ECE and Brier -----------------------------------------------------------------------------------------------------
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.2, 0.25, 0.5, 0.6, 2 / 3, 0.75, 0.8, 1.0]), st.integers(0, 1)),
        min_size=1,
        max_size=40,
    ),
    st.integers(1, 12),
)
@settings(max_examples=examples(300))
def test_ece_and_brier_equal_the_naive_definitions(pairs, bins):
    confidence, correct = [c for c, _ in pairs], [y for _, y in pairs]
    assert calibration.expected_calibration_error(confidence, correct, bins=bins) == pytest.approx(
        naive_ece(confidence, correct, bins), abs=1e-12
    )
    assert calibration.brier_score(confidence, correct) == pytest.approx(naive_brier(confidence, correct))
    points = calibration.reliability_bins(confidence, correct, bins=bins)
    assert sum(point["n"] for point in points) == len(pairs)
    assert sum(point["n"] / len(pairs) * abs(point["accuracy"] - point["confidence"]) for point in points) == (
        pytest.approx(naive_ece(confidence, correct, bins), abs=1e-12)
    )


def test_a_perfectly_calibrated_judge_scores_zero_and_a_sure_wrong_one_scores_one():
    assert calibration.expected_calibration_error([1.0, 1.0, 0.5, 0.5], [1, 1, 1, 0]) == 0.0
    assert calibration.expected_calibration_error([1.0, 1.0], [0, 0]) == 1.0
    assert calibration.brier_score([1.0, 0.0], [0, 1]) == 1.0


def test_the_admission_line_compares_the_lower_bound_with_the_threshold():
    assert calibration.admission(0.61, 0.6)["admitted"] is True
    assert calibration.admission(0.59, 0.6)["admitted"] is False
    assert calibration.admission(math.nan, 0.6)["admitted"] is None
    with pytest.raises(ValueError):
        calibration.admission(0.5, 1.5)


# --- the unit bootstrap: each weighted resample equals the duplicated data's figure ----------------------------------
def test_unit_draws_reproduce_under_their_seed_and_differ_under_another():
    first = unit_bootstrap.unit_draws(7, n_boot=50, seed=3)
    assert (first == unit_bootstrap.unit_draws(7, n_boot=50, seed=3)).all()
    assert not (first == unit_bootstrap.unit_draws(7, n_boot=50, seed=4)).all()
    assert (first.sum(axis=1) == 7).all()
    # The draws are numpy's integers(0, n, (n_boot, n)) counted per unit.
    picks = np.random.default_rng(3).integers(0, 7, size=(50, 7))
    assert first.tolist() == [np.bincount(row, minlength=7).tolist() for row in picks]


unit_values = st.lists(st.lists(st.integers(1, 5), min_size=1, max_size=4), min_size=2, max_size=8)


@given(unit_values, st.integers(0, 2**16))
@settings(max_examples=examples(150), deadline=None)
def test_alpha_of_each_resample_equals_alpha_of_the_duplicated_units(units, seed):
    draws = unit_bootstrap.unit_draws(len(units), n_boot=5, seed=seed)
    replicates = unit_bootstrap.alpha_replicates(units, draws)
    for counts, replicate in zip(draws, replicates, strict=True):
        resample = duplicated(units, counts)
        assert same(replicate, interval_alpha_reference(resample))
        assert same(replicate, agreement.krippendorff_alpha(resample))


@given(
    st.lists(st.integers(0, 3), min_size=2, max_size=10).flatmap(lambda ones: st.just([[3 - k, k] for k in ones])),
    st.integers(0, 2**16),
)
@settings(max_examples=examples(150), deadline=None)
def test_fleiss_kappa_of_each_resample_equals_the_naive_kappa_of_the_duplicated_items(counts, seed):
    draws = unit_bootstrap.unit_draws(len(counts), n_boot=5, seed=seed)
    for weights, replicate in zip(draws, unit_bootstrap.fleiss_replicates(counts, draws), strict=True):
        resample = duplicated(counts, weights)
        assert same(replicate, naive_fleiss(resample))


pairs = st.lists(st.tuples(st.integers(1, 6), st.integers(1, 6)), min_size=3, max_size=12)


@given(pairs, st.integers(0, 2**16))
@settings(max_examples=examples(150), deadline=None)
def test_correlations_and_differences_of_each_resample_equal_scipy_on_the_duplicated_pairs(data, seed):
    x, y = [a for a, _ in data], [b for _, b in data]
    draws = unit_bootstrap.unit_draws(len(data), n_boot=5, seed=seed)
    pearson = unit_bootstrap.pearson_replicates(x, y, draws)
    spearman = unit_bootstrap.spearman_replicates(x, y, draws)
    difference = unit_bootstrap.mean_replicates(np.subtract(x, y), draws)
    for b, counts in enumerate(draws):
        rx, ry = duplicated(x, counts), duplicated(y, counts)
        constant = len(set(rx)) < 2 or len(set(ry)) < 2
        expected_r = math.nan if constant else scipy_stats.pearsonr(rx, ry).statistic
        expected_rho = math.nan if constant else scipy_stats.spearmanr(rx, ry).statistic
        assert same(pearson[b], expected_r)
        assert same(spearman[b], expected_rho)
        assert difference[b] == pytest.approx(sum(a - c for a, c in zip(rx, ry, strict=True)) / len(rx))


@given(
    st.lists(st.tuples(st.sampled_from([0.5, 2 / 3, 0.75, 1.0]), st.integers(0, 1)), min_size=1, max_size=20),
    st.integers(0, 2**16),
)
@settings(max_examples=examples(150), deadline=None)
def test_ece_of_each_resample_equals_the_naive_ece_of_the_duplicated_units(data, seed):
    confidence, correct = [c for c, _ in data], [y for _, y in data]
    draws = unit_bootstrap.unit_draws(len(data), n_boot=5, seed=seed)
    for counts, replicate in zip(draws, calibration.ece_replicates(confidence, correct, draws), strict=True):
        assert replicate == pytest.approx(
            naive_ece(duplicated(confidence, counts), duplicated(correct, counts), calibration.DEFAULT_BINS)
        )


def test_an_interval_reproduces_under_its_seed_and_covers_the_estimate():
    rng = np.random.default_rng(11)
    x = rng.normal(size=60)
    y = x + rng.normal(scale=0.8, size=60)
    intervals = [
        unit_bootstrap.interval(unit_bootstrap.spearman_replicates(x, y, unit_bootstrap.unit_draws(60, seed=5)))
        for _ in range(2)
    ]
    assert intervals[0] == intervals[1]
    low, high = intervals[0]
    assert low < scipy_stats.spearmanr(x, y).statistic < high
    other = unit_bootstrap.interval(unit_bootstrap.spearman_replicates(x, y, unit_bootstrap.unit_draws(60, seed=6)))
    assert other != intervals[0]


def test_cluster_weights_resample_whole_episodes():
    draws = np.array([[2.0, 0.0, 1.0]])
    assert unit_bootstrap.cluster_weights(draws, [0, 0, 1, 2]).tolist() == [[2.0, 2.0, 0.0, 1.0]]
