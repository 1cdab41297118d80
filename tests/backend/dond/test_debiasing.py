"""Debiased aggregation (backend/dond/debiasing.py): cell means, stratified SE, bootstrap vs the loop oracles."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.dond import debiasing
from tests.backend.dond import oracles
from tests.support import examples

# ---------------------------------------------------------------------------------------------------------------
# Debiased aggregation


SIDES = ["A", "A", "A", "A", "B", "B", "B", "B", "B"]
FIRSTS = [True, True, False, False, True, True, True, False, False]
UTILITY = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0]


def test_cell_means_and_debiased_mean_by_hand():
    # A|first [1, 0] → .5; A|second [1, 1] → 1; B|first [0, 0, 1] → 1/3; B|second [1, 0] → .5.
    assert debiasing.cell_means(UTILITY, side=SIDES, first_mover=FIRSTS) == {
        ("A", False): 1.0,
        ("A", True): 0.5,
        ("B", False): 0.5,
        ("B", True): pytest.approx(1 / 3),
    }
    # (0.5 + 1 + 1/3 + 0.5) / 4 = 7/12, while the plain mean is 5/9.
    assert debiasing.debiased_mean(UTILITY, side=SIDES, first_mover=FIRSTS) == pytest.approx(7 / 12)
    summary = debiasing.debiased_summary(UTILITY, side=SIDES, first_mover=FIRSTS, n_boot=100)
    assert summary["mean"] == pytest.approx(5 / 9)
    assert summary["n"] == 9 and summary["n_cells"] == 4
    assert summary["cells"]["B|first"] == {"n": 3, "mean": pytest.approx(1 / 3)}


def test_stratified_standard_error_by_hand():
    # s² per cell: A|first .5 (n 2), A|second 0 (n 2), B|first 1/3 (n 3), B|second .5 (n 2).
    # SE = sqrt(.5/2 + 0/2 + (1/3)/3 + .5/2) / 4 = sqrt(11/18) / 4 ≈ 0.19543.
    summary = debiasing.debiased_summary(UTILITY, side=SIDES, first_mover=FIRSTS, n_boot=100)
    assert summary["se"] == pytest.approx(math.sqrt(11 / 18) / 4)


def test_standard_error_needs_two_values_per_cell():
    summary = debiasing.debiased_summary([1.0, 0.0, 1.0], side=["A", "A", "B"], first_mover=[True, True, False])
    assert math.isnan(summary["se"])
    assert summary["debiased_mean"] == 0.75  # (0.5 + 1) / 2


def test_nan_values_are_left_out():
    summary = debiasing.debiased_summary([1.0, np.nan, 0.0, 0.0], side=["A", "A", "B", "B"], first_mover=[1, 1, 0, 0])
    assert summary["n"] == 3
    assert summary["debiased_mean"] == 0.5  # A|first [1] → 1, B|second [0, 0] → 0
    assert debiasing.debiased_summary([np.nan], side=["A"], first_mover=[True])["n_cells"] == 0


def test_balanced_cells_give_the_plain_mean():
    rng = np.random.default_rng(1)
    values = rng.random(40)
    sides, firsts = np.repeat(["A", "B"], 20), np.tile(np.repeat([True, False], 10), 2)
    assert debiasing.debiased_mean(values, side=sides, first_mover=firsts) == pytest.approx(values.mean())


def test_debiasing_removes_an_opening_advantage_that_the_plain_mean_keeps():
    # Openers score 0.8, responders 0.4, but three times as many games have the model opening.
    firsts = [True] * 6 + [False] * 2
    values = [0.8] * 6 + [0.4] * 2
    sides = ["A", "B"] * 4
    summary = debiasing.debiased_summary(values, side=sides, first_mover=firsts, n_boot=50)
    assert summary["mean"] == pytest.approx(0.7)
    assert summary["debiased_mean"] == pytest.approx(0.6)


def test_bootstrap_matches_the_loop_oracle_within_cells():
    rng = np.random.default_rng(3)
    values = rng.random(14)
    sides, firsts = ["A", "B"] * 7, [True] * 8 + [False] * 6
    summary = debiasing.debiased_summary(values, side=sides, first_mover=firsts, n_boot=300, seed=11)
    oracle = oracles.bootstrap_replicates_naive(values, side=sides, first_mover=firsts, n_boot=300, seed=11)
    low, high = np.quantile(oracle, [0.025, 0.975])
    assert summary["ci_low"] == pytest.approx(low) and summary["ci_high"] == pytest.approx(high)
    assert summary["boot_se"] == pytest.approx(np.std(oracle, ddof=1))


def test_bootstrap_matches_the_loop_oracle_by_cluster():
    rng = np.random.default_rng(4)
    values = rng.random(16)
    sides, firsts, clusters = ["A", "B"] * 8, [True, False, False, True] * 4, np.repeat(list("abcd"), 4)
    summary = debiasing.debiased_summary(values, side=sides, first_mover=firsts, cluster=clusters, n_boot=200, seed=5)
    oracle = oracles.bootstrap_replicates_naive(
        values, side=sides, first_mover=firsts, cluster=clusters, n_boot=200, seed=5
    )
    low, high = np.quantile(oracle, [0.025, 0.975])
    assert summary["ci_low"] == pytest.approx(low) and summary["ci_high"] == pytest.approx(high)


def test_bootstrap_interval_contains_the_estimate_and_is_reproducible():
    a = debiasing.debiased_summary(UTILITY, side=SIDES, first_mover=FIRSTS, n_boot=500, seed=2)
    b = debiasing.debiased_summary(UTILITY, side=SIDES, first_mover=FIRSTS, n_boot=500, seed=2)
    assert a == b
    assert 0.0 <= a["ci_low"] <= a["debiased_mean"] <= a["ci_high"] <= 1.0
    constant = debiasing.debiased_summary([0.3] * 6, side=["A", "B"] * 3, first_mover=[True] * 6, n_boot=50)
    assert constant["ci_low"] == constant["ci_high"] == pytest.approx(0.3)


def test_bootstrap_interval_width_matches_the_standard_error_on_large_samples():
    rng = np.random.default_rng(8)
    values = rng.normal(0.5, 0.1, 800)
    sides, firsts = np.tile(["A", "B"], 400), np.repeat([True, False], 400)
    summary = debiasing.debiased_summary(values, side=sides, first_mover=firsts, n_boot=2000, seed=1)
    width = summary["ci_high"] - summary["ci_low"]
    assert width / (2 * 1.96 * summary["se"]) == pytest.approx(1.0, abs=0.1)


def test_cluster_bootstrap_is_wider_when_games_of_one_instance_move_together():
    # Each instance's four games share its difficulty: resampling instances must show that extra spread.
    rng = np.random.default_rng(6)
    difficulty = rng.random(30)
    values = np.repeat(difficulty, 4) + rng.normal(0, 0.01, 120)
    sides, firsts = np.tile(["A", "A", "B", "B"], 30), np.tile([True, False], 60)
    instances = np.repeat(np.arange(30), 4)
    plain = debiasing.debiased_summary(values, side=sides, first_mover=firsts, n_boot=500)
    clustered = debiasing.debiased_summary(values, side=sides, first_mover=firsts, cluster=instances, n_boot=500)
    assert (clustered["ci_high"] - clustered["ci_low"]) > 1.5 * (plain["ci_high"] - plain["ci_low"])


def test_too_few_values_have_no_interval():
    summary = debiasing.debiased_summary([0.4], side=["A"], first_mover=[True])
    assert summary["debiased_mean"] == 0.4 and math.isnan(summary["ci_low"]) and math.isnan(summary["ci_high"])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"side": ["A"]}, "side and first_mover"),
        ({"n_boot": 0}, "n_boot"),
        ({"confidence": 1.0}, "confidence"),
        ({"cluster": [1]}, "cluster"),
    ],
)
def test_debiased_summary_validates(kwargs, message):
    arguments = {"side": ["A", "B"], "first_mover": [True, False], **kwargs}
    with pytest.raises(ValueError, match=message):
        debiasing.debiased_summary([0.1, 0.2], **arguments)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.floats(0, 1), st.just(math.nan)),
            st.sampled_from(["A", "B"]),
            st.booleans(),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_debiased_mean_agrees_with_the_oracle(rows):
    values, sides, firsts = zip(*rows, strict=True)
    fast = debiasing.debiased_mean(list(values), side=sides, first_mover=firsts)
    slow = oracles.debiased_mean_naive(list(values), side=sides, first_mover=firsts)
    assert (math.isnan(fast) and math.isnan(slow)) or fast == pytest.approx(slow)


def test_summarise_groups_and_reads_exported_booleans():
    frame = pd.DataFrame(
        {
            "model": ["m1"] * 4 + ["m2"] * 2,
            "side": ["A", "B", "A", "B", "A", "B"],
            "is_first_mover": ["True", "False", "False", "True", "1", "0"],
            "utility": [0.6, 0.4, 0.5, 0.3, 1.0, 0.0],
            "faithful": [1, 1, 0, np.nan, 1, 1],
        }
    )
    table = debiasing.summarise(frame, ["utility", "faithful"], by=["model"], n_boot=50)
    rows = {(r.model, r.metric): r for r in table.itertuples()}
    assert rows[("m1", "utility")].debiased_mean == pytest.approx(0.45)  # four cells of one game each
    # m1 faithful: A|first 1, B|second 1, A|second 0 (the NaN row dropped) → 2/3.
    assert rows[("m1", "faithful")].debiased_mean == pytest.approx(2 / 3)
    assert rows[("m1", "faithful")].n == 3
    assert rows[("m2", "utility")].n_cells == 2 and rows[("m2", "utility")].debiased_mean == 0.5
    with pytest.raises(ValueError, match="lacks"):
        debiasing.summarise(frame, ["nope"])
