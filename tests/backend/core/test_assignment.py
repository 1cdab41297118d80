"""k-per-item, least-covered-first assignment with expiring reservations, checked by simulation."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.core.assignment import (
    DEFAULT_TIMEOUT_S,
    choose_item,
    coverage,
    is_live_reservation,
    items_left_for,
    reservation_timeout,
)
from tests.backend.core.oracles import choose_item_reference
from tests.support import examples

ITEMS = ["e1", "e2", "e3", "e4"]


def simulate(*, people: int, per_item: int, items_each: int, abandon: set[str] = frozenset(), seed: int = 0):
    """People arrive in random interleaving; each finishes items one at a time (those in `abandon` walk away)."""
    rng = random.Random(seed)
    rows: list[dict] = []
    now = 0.0
    todo = {f"p{i}": items_each for i in range(people)}
    while todo:
        person = rng.choice(sorted(todo))
        now += 1
        item = choose_item(ITEMS, rows, participant=person, per_item=per_item, now=now, timeout_s=30)
        if item is None:
            del todo[person]
            continue
        rows.append(dict(item_id=item, participant=person, status="reserved", reserved_at=now))
        if person in abandon:
            del todo[person]
            continue
        rows[-1]["status"] = "done"
        todo[person] -= 1
        if todo[person] == 0:
            del todo[person]
    return rows, now


def test_every_item_reaches_k_without_duplicates():
    rows, _ = simulate(people=5, per_item=2, items_each=2)
    done = [(r["item_id"], r["participant"]) for r in rows if r["status"] == "done"]
    assert len(done) == len(set(done)), "a person rated the same item twice"
    per_item = {item: sum(1 for i, _ in done if i == item) for item in ITEMS}
    assert per_item == {item: 2 for item in ITEMS}


def test_least_covered_first_spreads_ratings():
    rows, _ = simulate(people=4, per_item=3, items_each=1)
    done_items = [r["item_id"] for r in rows if r["status"] == "done"]
    assert sorted(done_items) == ITEMS  # four people, four different items before any item gets a second rating


def test_live_reservation_resumes_same_item():
    rows = [dict(item_id="e3", participant="p1", status="reserved", reserved_at=100)]
    assert choose_item(ITEMS, rows, participant="p1", per_item=1, now=110, timeout_s=60) == "e3"
    assert choose_item(ITEMS, rows, participant="p2", per_item=1, now=110, timeout_s=60) == "e1"


def test_expired_reservation_returns_to_the_pool():
    rows = [dict(item_id="e1", participant="p1", status="reserved", reserved_at=0)]
    one_item = ["e1"]
    assert choose_item(one_item, rows, participant="p2", per_item=1, now=10, timeout_s=60) is None
    assert choose_item(one_item, rows, participant="p2", per_item=1, now=61, timeout_s=60) == "e1"


def test_released_reservation_does_not_count():
    rows = [dict(item_id="e1", participant="p1", status="released", reserved_at=0)]
    assert coverage(["e1"], rows, now=1, timeout_s=60) == {"e1": (0, 0)}


def test_nothing_left_when_all_covered():
    rows, _ = simulate(people=3, per_item=1, items_each=4)
    assert choose_item(ITEMS, rows, participant="late", per_item=1, now=1e6, timeout_s=30) is None
    assert items_left_for(ITEMS, rows, participant="late", per_item=1, now=1e6, timeout_s=30) == 0


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="per_item"):
        choose_item(ITEMS, [], participant="p", per_item=0, now=0, timeout_s=1)
    with pytest.raises(ValueError, match="unique"):
        choose_item(["a", "a"], [], participant="p", per_item=1, now=0, timeout_s=1)
    with pytest.raises(ValueError, match="timeout"):
        is_live_reservation({"status": "reserved", "reserved_at": 0}, now=0, timeout_s=0)
    with pytest.raises(ValueError, match="status"):
        coverage(["a"], [dict(item_id="a", participant="p", status="lost", reserved_at=0)], now=0, timeout_s=1)


@settings(max_examples=examples(60), deadline=None)
@given(
    people=st.integers(1, 8),
    per_item=st.integers(1, 3),
    items_each=st.integers(1, 4),
    seed=st.integers(0, 10_000),
    abandon=st.sets(st.sampled_from([f"p{i}" for i in range(8)]), max_size=3),
)
def test_invariants_hold_for_any_arrival_order(people, per_item, items_each, seed, abandon):
    rows, now = simulate(people=people, per_item=per_item, items_each=items_each, abandon=abandon, seed=seed)
    done = [(r["item_id"], r["participant"]) for r in rows if r["status"] == "done"]
    assert len(done) == len(set(done))
    for item in ITEMS:
        assert sum(1 for i, _ in done if i == item) <= per_item
    live = coverage(ITEMS, rows, now=now, timeout_s=30)
    assert all(d + r <= per_item for d, r in live.values())


def test_the_reservation_timeout_is_one_key_in_seconds_and_the_minutes_key_is_refused():
    assert reservation_timeout({}) == DEFAULT_TIMEOUT_S == 1800
    assert reservation_timeout({"reservation_timeout_s": "120"}) == 120.0
    with pytest.raises(ValueError, match=r"'reservation_timeout_s' must be a number from 1 to 604800, not 0"):
        reservation_timeout({"reservation_timeout_s": 0})
    for minutes, seconds in [(30, "1800"), ("2.5", "150"), ("soon", "the minutes times 60")]:
        with pytest.raises(ValueError) as refused:
            reservation_timeout({"reservation_minutes": minutes, "reservation_timeout_s": 60})
        assert "'reservation_minutes' is no longer read" in str(refused.value)
        assert f"Set 'reservation_timeout_s' = {seconds} instead." in str(refused.value)


ROW = st.fixed_dictionaries(
    dict(
        item_id=st.sampled_from(["e1", "e2", "e3", "e4", "e5", "gone"]),
        participant=st.sampled_from(["p1", "p2", "p3"]),
        status=st.sampled_from(["reserved", "done", "released"]),
        reserved_at=st.floats(0, 100),
    )
)


@settings(max_examples=examples(300), deadline=None)
@given(
    rows=st.lists(ROW, max_size=25),
    per_item=st.one_of(st.none(), st.integers(1, 3)),
    participant=st.sampled_from(["p1", "p2", "p9"]),
    now=st.floats(0, 150),
    items=st.permutations(["e1", "e2", "e3", "e4", "e5"]),
)
def test_the_vectorised_policy_chooses_what_the_definition_chooses(rows, per_item, participant, now, items):
    expected = choose_item_reference(items, rows, participant=participant, per_item=per_item, now=now, timeout_s=30)
    found = choose_item(items, rows, participant=participant, per_item=per_item, now=now, timeout_s=30)
    assert found == expected
