"""A partner who leaves a person-vs-person game (backend/dond/partner.py): the games row's pay rule, bonus, takeover
columns and model condition, and the session keys' checks."""

from __future__ import annotations

import pytest

from backend.dond import export as dond_export
from backend.dond import settings
from backend.dond.game import GameConfig
from backend.dond.instances import Instance
from backend.dond.partner import TAKEOVER_COLUMNS, takeover_event
from tests.support.dond_events import message, proposal

TABLE = Instance(("egg", "knife", "pen"), (1, 1, 1), (7, 3, 0), (1, 3, 6))  # A's total 10, B's total 10


def row_of(events, *, focal_role="A", opponent="human", pay="half_total"):
    config = GameConfig(mode="semi", language="en", opener="A", max_messages=2)
    return dond_export.game_row(
        events,
        TABLE,
        config,
        session_code="s",
        game_id="s-1",
        opponent=opponent,
        model="human",
        cell=1,
        focal_role=focal_role,
        partner_left_pay=pay,
    )


def left(role="B", reason="partner_left"):
    return {"kind": "abort", "role": role, "actor": "system", "text": reason}


@pytest.mark.parametrize(
    ("focal_role", "pay", "rule", "bonus"),
    [
        ("A", "half_total", "partner_left_half_total", 5),  # A stayed: ceil(10 / 2)
        ("A", "zero", "partner_left_zero", 0),
        ("B", "half_total", "left_game", 0),  # B left
    ],
)
def test_a_game_that_ended_because_a_partner_left_pays_the_one_left_behind_by_partner_left_pay(
    focal_role, pay, rule, bonus
):
    row = row_of([message("A", "hi"), left()], focal_role=focal_role, pay=pay)
    assert (row["outcome"], row["pay_rule"], row["bonus_points"]) == ("aborted", rule, bonus)
    assert (row["taken_over_by_model"], row["takeover_role"]) == (0, "")


def test_a_partner_left_abort_in_a_model_game_pays_by_the_model_rules_only():
    row = row_of([message("A", "hi"), left()], opponent="llm")
    assert (row["pay_rule"], row["bonus_points"]) == ("mode_goal", 0)


def test_a_taken_over_game_is_its_own_condition_scored_as_usual_for_the_one_left_behind():
    switch = takeover_event(role="B", reason="partner_timeout", model="gpt-x", at=5.0)
    deal = [message("A", "hi"), switch, message("B", "hello"), proposal("A", (1, 0, 0)), proposal("B", (0, 1, 1))]
    for event in deal[2:]:
        event["actor"] = "human" if event["role"] == "A" else "llm"
    stayer, leaver = row_of(deal), row_of(deal, focal_role="B")
    assert stayer["model"] == "takeover:gpt-x" and stayer["model_b"] == "gpt-x" and stayer["opponent"] == "human"
    assert (stayer["taken_over_by_model"], stayer["takeover_role"], stayer["takeover_reason"]) == (
        1,
        "B",
        "partner_timeout",
    )
    assert stayer["takeover_at"] == "1970-01-01T00:00:05.000Z"
    assert (stayer["outcome"], stayer["pay_rule"], stayer["bonus_points"]) == ("success", "mode_goal", 7)
    assert (leaver["pay_rule"], leaver["bonus_points"]) == ("left_game", 0)


def test_a_model_that_took_over_and_broke_the_game_pays_the_one_left_behind_by_partner_left_pay():
    switch = takeover_event(role="B", reason="partner_left", model="gpt-x", at=5.0)
    broken = {"kind": "abort", "role": "B", "actor": "system", "text": "llm_invalid: format"}
    row = row_of([message("A", "hi"), switch, broken], pay="half_total")
    assert (row["outcome"], row["pay_rule"], row["bonus_points"]) == ("aborted", "partner_left_half_total", 5)


def test_the_takeover_columns_follow_how_the_game_ended():
    columns = dond_export.DOND_GAMES_COLUMNS
    assert columns[columns.index("aborted_by") + 1 :][:4] == list(TAKEOVER_COLUMNS)


def test_partner_leaves_is_a_person_vs_person_key():
    with pytest.raises(ValueError, match="'partner_leaves' applies only when opponent is human"):
        settings.dond_settings({"partner_leaves": "model", "llm_model": "gpt-x"})
    with pytest.raises(ValueError, match="must be one of end, model"):
        settings.dond_settings({"opponent": "human", "partner_leaves": "bot"})
    assert "partner_leaves" in settings.form_defaults(opponent="human")
    assert "partner_leaves" not in settings.form_defaults(opponent="llm")


def test_the_report_keeps_taken_over_games_apart_from_person_vs_person_games():
    import pandas as pd

    from backend.dond import report

    deal = [message("A", "hi"), message("B", "ok"), proposal("A", (1, 0, 0)), proposal("B", (0, 1, 1))]
    switch = takeover_event(role="B", reason="partner_left", model="gpt-x", at=5.0)
    taken = [deal[0], switch, *deal[1:]]
    frame = pd.DataFrame([row_of(deal), row_of(taken)]).astype(str)
    rows = report.summarise(frame, n_boot=10)
    assert sorted((row["model"], row["games"]) for row in rows) == [("human", 1), ("takeover:gpt-x", 1)]
