"""The wide export's trimming (lab_server/outputs.unplayed_rounds_dropped) treats a round whose cells all equal the
fields' ``initial`` values as unplayed and leaves it out. That loses nothing only while no field a person fills in
has an ``initial``: a person who typed 0 into a field with ``initial=0`` in a round where that is all they entered
would be dropped as "unplayed". This pins the fields that have an initial to the app-set ones of today, so adding an
``initial`` to a person's field fails here first (then the trimming must learn which rounds were played)."""

from __future__ import annotations

import pytest

from lab_server.outputs import field_initials, unplayed_rounds_dropped

# Fields with an initial value, all set by the app or by oTree, never typed by a person.
APP_SET_INITIALS = {
    "dond": {
        "player.payoff",
        "player.role",
        "player.game_id",
        "player.game_role",
        "player.is_unpaired",
        "player.pairing_started_at",
        "player.last_seen",
        "player.live_since",
        "player.outcome",
        "player.points",
        "player.bonus_points",
    },
    "social_eval": {
        "player.payoff",
        "player.role",
        "player.episode_id",
        "player.is_gold",
        "player.comprehension_attempts",
    },
    "payoff_reasoning_eval": {"player.payoff", "player.role"},
    "bias_tests": {"player.payoff", "player.role"},
}


@pytest.mark.parametrize("app", sorted(APP_SET_INITIALS))
def test_only_app_set_fields_have_an_initial(app):
    assert set(field_initials(app)) <= APP_SET_INITIALS[app]


def test_a_round_with_one_value_other_than_the_initial_is_kept_whole():
    header = ["participant.code", "a.1.player.id_in_group", "a.1.player.points", "a.1.player.note"]
    rows = [header, ["p1", 1, 0, ""], ["p2", 1, 0, "0"]]  # p2 typed "0" into a field without an initial
    kept = unplayed_rounds_dropped(rows, initials=lambda app: {"player.points": 0})
    assert kept[0] == header and kept[2] == ["p2", 1, 0, "0"]
