"""Pareto metrics: agreement with the brute-force oracles, bounds, worked examples and per-game metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.dond import instances, rules, scoring
from tests.backend.dond import oracles
from tests.support import examples
from tests.support.dond_events import INSTANCE

# clembench semi_en game 0: 3 crayons, 1 chalk, 2 bolts.
COUNTS, VALUES_A, VALUES_B = (3, 1, 2), (0, 0, 5), (1, 3, 2)


@st.composite
def games(draw):
    """A generated instance and two proposals, each within the counts (complementary or not)."""
    instance = instances.generate_instance(draw(st.integers(0, 100_000)))
    proposal_a = tuple(draw(st.integers(0, c)) for c in instance.counts)
    if draw(st.booleans()):  # half the time a complementary proposal for B
        proposal_b = tuple(draw(st.integers(0, c - a)) for c, a in zip(instance.counts, proposal_a, strict=True))
    else:
        proposal_b = tuple(draw(st.integers(0, c)) for c in instance.counts)
    return instance, proposal_a, proposal_b


@st.composite
def arbitrary_values(draw):
    """Counts and values beyond DoND's constraints (any totals, zeros allowed), to test the algorithm itself."""
    n = draw(st.integers(1, 4))
    counts = tuple(draw(st.integers(0, 4)) for _ in range(n))
    values_a = tuple(draw(st.integers(0, 9)) for _ in range(n))
    values_b = tuple(draw(st.integers(0, 9)) for _ in range(n))
    return counts, values_a, values_b


@settings(max_examples=examples(400), deadline=None)
@given(game=games())
def test_max_pareto_improvement_agrees_with_the_oracle_on_instances(game):
    instance, proposal_a, proposal_b = game
    points_a = scoring.points(proposal_a, instance.values_a)
    points_b = scoring.points(proposal_b, instance.values_b)
    args = (instance.counts, instance.values_a, instance.values_b, points_a, points_b)
    assert scoring.max_pareto_improvement(*args) == oracles.max_pareto_improvement_naive(*args)


@settings(max_examples=examples(300), deadline=None)
@given(setup=arbitrary_values(), points_a=st.integers(-2, 40), points_b=st.integers(-2, 40))
def test_max_pareto_improvement_agrees_with_the_oracle_on_arbitrary_points(setup, points_a, points_b):
    counts, values_a, values_b = setup
    assert scoring.max_pareto_improvement(counts, values_a, values_b, points_a, points_b) == (
        oracles.max_pareto_improvement_naive(counts, values_a, values_b, points_a, points_b)
    )


@settings(max_examples=examples(300), deadline=None)
@given(setup=arbitrary_values())
def test_frontier_agrees_with_the_oracle(setup):
    counts, values_a, values_b = setup
    ours = [tuple(pair) for pair in scoring.pareto_frontier(counts, values_a, values_b).tolist()]
    assert ours == oracles.pareto_frontier_naive(counts, values_a, values_b)


@settings(max_examples=examples(300), deadline=None)
@given(game=games())
def test_main_score_is_within_0_and_100(game):
    instance, proposal_a, proposal_b = game
    score = scoring.main_score(instance.counts, instance.values_a, instance.values_b, proposal_a, proposal_b)
    assert 0.0 <= score <= 100.0
    if not scoring.is_complementary(proposal_a, proposal_b, instance.counts):
        assert score == 0.0


@settings(max_examples=examples(200), deadline=None)
@given(game=games())
def test_frontier_points_have_no_improvement_and_full_splits_are_at_most_on_it(game):
    instance, _, _ = game
    args = (instance.counts, instance.values_a, instance.values_b)
    for points_a, points_b in scoring.pareto_frontier(*args).tolist():
        assert scoring.max_pareto_improvement(*args, points_a, points_b) == 0
        assert scoring.main_score(*args, *_split_for(instance, points_a, points_b)) == 100.0


def _split_for(instance, points_a, points_b):
    shares = scoring.all_splits(instance.counts)
    pa, pb = scoring.split_points(instance.counts, instance.values_a, instance.values_b)
    index = int(np.flatnonzero((pa == points_a) & (pb == points_b))[0])
    share = shares[index]
    return tuple(share.tolist()), tuple((np.array(instance.counts) - share).tolist())


def test_improvement_is_the_largest_single_gain_not_the_sum():
    # A takes nothing, B takes nothing: A could get 10 alone or B could get 10 alone; gains are not added.
    assert scoring.max_pareto_improvement(COUNTS, VALUES_A, VALUES_B, 0, 0) == 10
    # Both are already on the frontier.
    assert scoring.max_pareto_improvement(COUNTS, VALUES_A, VALUES_B, 10, 6) == 0
    # Unreachable points: no split qualifies.
    assert scoring.max_pareto_improvement(COUNTS, VALUES_A, VALUES_B, 10, 10) == 0


@pytest.mark.parametrize(
    ("proposal_a", "proposal_b", "main", "sum_share"),
    [
        ((0, 0, 2), (3, 1, 0), 100.0, 1.0),  # worked examples of the reference notes
        ((0, 0, 2), (3, 0, 0), 70.0, 13 / 16),
        ((0, 0, 1), (3, 1, 1), 100.0, 13 / 16),  # Pareto optimal but not sum-maximal
        ((0, 0, 2), (3, 1, 1), 0.0, 0.0),  # conflict on the bolts: lose
    ],
)
def test_worked_examples(proposal_a, proposal_b, main, sum_share):
    semi = scoring.game_metrics(COUNTS, VALUES_A, VALUES_B, proposal_a, proposal_b, mode="semi")
    coop = scoring.game_metrics(COUNTS, VALUES_A, VALUES_B, proposal_a, proposal_b, mode="coop")
    assert semi["main_score"] == pytest.approx(main) and semi["mode_score"] == pytest.approx(main)
    assert coop["main_score"] == pytest.approx(main)
    assert coop["mode_score"] == pytest.approx(100 * sum_share)
    assert coop["sum_share"] == pytest.approx(sum_share)
    assert coop["mode_pareto_optimal"] == (sum_share == 1.0)


def test_metrics_of_lost_aborted_and_competitive_games():
    lose = scoring.game_metrics(COUNTS, VALUES_A, VALUES_B, (0, 0, 2), (0, 0, 1), mode="semi")
    assert (lose["success"], lose["lose"], lose["aborted"]) == (False, True, False)
    assert lose["points_a"] == lose["points_b"] == 0 and lose["pareto_improvement"] == 10
    assert lose["main_score"] == 0.0 and lose["pareto_optimal"] is False

    aborted = scoring.game_metrics(COUNTS, VALUES_A, VALUES_B, (0, 0, 2), None, mode="coop", aborted=True)
    assert (aborted["success"], aborted["lose"], aborted["aborted"]) == (False, False, True)
    assert math.isnan(aborted["main_score"]) and math.isnan(aborted["mode_score"])
    assert aborted["points_a"] is None and aborted["pareto_optimal"] is None
    assert math.isnan(scoring.main_score(COUNTS, VALUES_A, VALUES_B, None, None, aborted=True))

    comp_lose = scoring.game_metrics(COUNTS, VALUES_A, VALUES_B, (0, 0, 2), (0, 0, 1), mode="comp")
    assert comp_lose["mode_score"] == 100.0 and comp_lose["mode_pareto_optimal"] is True
    assert comp_lose["main_score"] == 0.0  # our main score is the same in every mode


def test_split_enumeration_is_complete():
    shares = scoring.all_splits((2, 0, 3))
    assert shares.shape == (3 * 1 * 4, 3)
    assert len({tuple(row) for row in shares.tolist()}) == 12
    assert shares.min() == 0 and (shares <= np.array([2, 0, 3])).all()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: scoring.all_splits([]), "counts"),
        (lambda: scoring.split_points((1, 2), (1,), (1, 2)), "same length"),
        (lambda: scoring.split_points((1, -2), (1, 1), (1, 2)), "counts"),
        (lambda: scoring.split_points((1, 2), (1.5, 1), (1, 2)), "values_a"),
        (lambda: scoring.max_pareto_improvement(COUNTS, VALUES_A, VALUES_B, math.nan, 0), "points_a"),
        (lambda: scoring.main_score(COUNTS, VALUES_A, VALUES_B, (0, 0, 2), None), "proposal"),
        (lambda: scoring.main_score(COUNTS, VALUES_A, VALUES_B, (0, 0, 3), (0, 0, 0)), "proposal"),
        (lambda: scoring.game_metrics(COUNTS, VALUES_A, VALUES_B, (0, 0, 1), (1, 0, 0), mode="x"), "mode"),
    ],
)
def test_invalid_arguments_raise_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------------------------------------------------------
# Complementarity, points, goal and bonus


def test_complementary_proposals_allow_leftovers_but_not_overlap():
    counts = (3, 2, 1)
    assert scoring.is_complementary((1, 0, 0), (1, 2, 1), counts)  # one apple left over
    assert scoring.is_complementary((3, 2, 1), (0, 0, 0), counts)
    assert not scoring.is_complementary((2, 0, 0), (2, 0, 0), counts)
    with pytest.raises(ValueError):
        scoring.is_complementary((1, 0), (1, 0, 0), counts)


def test_points_and_goal_per_mode():
    assert scoring.points((3, 0, 1), INSTANCE.values_a) == 6
    assert scoring.points((0, 2, 1), INSTANCE.values_b) == 10
    assert [scoring.goal_score(mode, 6, 10) for mode in rules.MODES] == [6, 16, -4]
    assert [scoring.bonus(mode, 6, 10, outcome="success") for mode in rules.MODES] == [6, 16, 0]
    unpaid = [scoring.bonus(mode, 6, 10, outcome=outcome) for mode in rules.MODES for outcome in ("lose", "aborted")]
    assert unpaid == [0] * 6
    with pytest.raises(ValueError, match="mode"):
        scoring.goal_score("chaos", 1, 1)
