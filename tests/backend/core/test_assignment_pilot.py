"""Pilot mode (session key ``pilot_overlap``): every annotator gets the same items, so agreement can be computed."""

from __future__ import annotations

import random

import pytest

from backend.core.assignment import choose_item, pilot_items
from backend.reasoning.task import next_log, task_settings
from backend.social.settings import check_material, social_settings
from tests.support.social import RUBRIC, SAMPLES

ITEMS = ["e1", "e2", "e3", "e4", "e5"]


def run_pilot(people: int, per_annotator: int, *, seed: int) -> list[dict]:
    """People arrive in a random interleaving and finish the pilot's items one at a time."""
    rng, rows, now = random.Random(seed), [], 0.0
    shared = pilot_items(ITEMS, per_annotator)
    todo = {f"p{n}": per_annotator for n in range(people)}
    while todo:
        person = rng.choice(sorted(todo))
        now += 1
        item = choose_item(shared, rows, participant=person, per_item=None, now=now, timeout_s=60)
        assert item is not None, "a pilot never runs out of items before a person rated them all"
        rows.append(dict(item_id=item, participant=person, status="done", reserved_at=now))
        todo[person] -= 1
        if not todo[person]:
            del todo[person]
    return rows


@pytest.mark.parametrize("seed", range(10))
def test_two_annotators_rate_the_same_items(seed):
    rows = run_pilot(2, 3, seed=seed)
    done = {person: {row["item_id"] for row in rows if row["participant"] == person} for person in ("p0", "p1")}
    assert done["p0"] == done["p1"] == {"e1", "e2", "e3"}
    assert choose_item(["e1", "e2", "e3"], rows, participant="p0", per_item=None, now=99, timeout_s=60) is None


def test_without_the_pilot_two_annotators_get_different_items():
    rows = [dict(item_id="e1", participant="p0", status="done", reserved_at=0.0)]
    assert choose_item(ITEMS, rows, participant="p1", per_item=1, now=1, timeout_s=60) == "e2"


def test_many_annotators_each_rate_every_pilot_item_once():
    rows = run_pilot(7, 4, seed=3)
    for person in {row["participant"] for row in rows}:
        assert sorted(row["item_id"] for row in rows if row["participant"] == person) == ["e1", "e2", "e3", "e4"]


def test_social_settings_hand_out_the_shared_episodes_and_refuse_pilot_with_qualification():
    settings = social_settings({"pilot_overlap": "true", "episodes_per_annotator": 2}, max_tasks=15)
    assert settings.handed_out(ITEMS) == ["e1", "e2"] and settings.per_episode is None
    plain = social_settings({}, max_tasks=15)
    assert plain.handed_out(ITEMS) == ITEMS and plain.per_episode == 2
    both = social_settings({"pilot_overlap": True, "qualification_mode": True}, max_tasks=15)
    with pytest.raises(ValueError, match="'pilot_overlap' and 'qualification_mode' exclude each other"):
        check_material(both, RUBRIC, list(SAMPLES.values()), max_tasks=15, max_questions=6)
    with pytest.raises(ValueError, match="pilot_overlap"):
        social_settings({"pilot_overlap": "sometimes"}, max_tasks=15)


def test_payoff_pilot_gives_every_judge_the_first_logs():
    settings = task_settings({"pilot_overlap": True, "logs_per_judge": 2}, max_logs_per_judge=30)
    rows = []
    for judge in ("j1", "j2", "j3"):
        for now in (1.0, 2.0, 3.0):
            log, reserve = next_log(["a", "b", "c"], rows, participant=judge, settings=settings, now=now)
            if log is None:
                break
            assert reserve
            rows.append(dict(item_id=log, participant=judge, status="done", reserved_at=now))
    for judge in ("j1", "j2", "j3"):
        assert sorted(row["item_id"] for row in rows if row["participant"] == judge) == ["a", "b"]
