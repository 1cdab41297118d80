"""The tolerant reading of a stored DoND history and the writer's judgement of late events (backend/dond/integrity.py),
with hand-made histories that should not exist: a late reply after the abort, an unknown kind, broken rows."""

from __future__ import annotations

import pytest

from backend.dond import export, integrity
from backend.dond.game import GameConfig, GameOverError, replay
from tests.support.dond_events import INSTANCE, message, proposal, violation

CONFIG = GameConfig(mode="semi", language="en", opener="A", max_messages=2)


def abort(reason="time_limit", role=""):
    return {"kind": "abort", "role": role, "text": reason}


def llm_call(role="B", purpose="message"):
    return {"kind": "llm_call", "role": role, "purpose": purpose, "latency_s": 8.0, "llm_reply": "late"}


def test_a_late_reply_after_the_abort_is_left_out_and_named_by_its_position():
    history = [message("A"), abort("llm_time_limit"), llm_call(), message("B", "I answer late")]
    with pytest.raises(GameOverError):  # what broke every export: the strict replay refuses this history
        replay(history, CONFIG, counts=INSTANCE.counts)
    state, problems = integrity.replay_checked(history, CONFIG, counts=INSTANCE.counts)
    assert state.abort_reason == "llm_time_limit" and state.messages_sent == {"A": 1, "B": 0}
    assert problems == ["event_after_end:message@3"]  # the llm_call is a log entry: kept, harmless


def test_every_kind_of_broken_row_is_named_and_the_rest_is_read():
    history = [
        message("A"),  # 0
        {"kind": "shout", "role": "B"},  # 1 unknown kind
        {"kind": '=HYPERLINK("x")'},  # 2 unknown kind, its odd characters not repeated
        {"kind": None},  # 3 no kind
        {"role": "B", "text": "no kind at all"},  # 4
        {"kind": "message", "role": None, "text": "who?"},  # 5 missing role
        {"kind": "proposal", "role": "B", "proposal": "[1, 0"},  # 6 invalid JSON
        {"kind": "proposal", "role": "B", "proposal": None},  # 7 missing counts
        message("A", "out of turn"),  # 8 a move the rules refuse
        message("B", ""),  # 9 empty
        message("B"),  # 10 fine
        proposal("A", (3, 0, 0)),  # 11
        proposal("B", (0, 2, 1)),  # 12 the end: both proposed
        violation("B"),  # 13 after the end
        abort(),  # 14 a second end
        {"kind": "input_rejected", "role": "A"},  # 15 a log entry after the end: legitimate
    ]
    kept, problems = integrity.checked_events(history, CONFIG, counts=INSTANCE.counts)
    assert problems == [
        "unknown_kind:shout@1",
        "unknown_kind:?HYPERLINK??x??@2",
        "broken_row:None@3",
        "broken_row:None@4",
        "broken_row:message@5",
        "broken_row:proposal@6",
        "broken_row:proposal@7",
        "invalid_move:message@8",
        "invalid_move:message@9",
        "event_after_end:violation@13",
        "event_after_end:abort@14",
    ]
    assert kept == [history[i] for i in (0, 10, 11, 12, 15)]
    assert replay(kept, CONFIG, counts=INSTANCE.counts).outcome == "success"


def test_a_sound_history_has_no_problems_and_the_same_state_as_the_strict_replay():
    history = [message("A"), violation("B"), message("B"), proposal("A", (3, 0, 0)), proposal("B", (0, 2, 1))]
    state, problems = integrity.replay_checked(history, CONFIG, counts=INSTANCE.counts)
    assert problems == [] and state == replay(history, CONFIG, counts=INSTANCE.counts)


def test_the_games_export_flags_the_game_and_counts_only_what_replays():
    history = [message("A"), abort("llm_time_limit"), llm_call(), message("B", "late"), {"kind": "x"}]
    row = export.game_row(
        history, INSTANCE, CONFIG, session_code="s", game_id="s-1", opponent="llm", model="m", cell=1, focal_role="A"
    )
    assert row["integrity"] == "event_after_end:message@3; unknown_kind:x@4"
    assert row["outcome"] == "aborted" and row["abort_reason"] == "llm_time_limit" and row["messages_b"] == 0
    sound = export.game_row(
        history[:3],
        INSTANCE,
        CONFIG,
        session_code="s",
        game_id="s-1",
        opponent="llm",
        model="m",
        cell=1,
        focal_role="A",
    )
    assert sound["integrity"] == ""


def test_the_events_export_keeps_every_row_and_flags_those_left_out():
    history = [message("A"), abort(), message("B", "late"), {"kind": "proposal", "role": "B", "proposal": "[1,"}, None]
    rows = export.event_rows(history, INSTANCE, CONFIG, session_code="s", game_id="s-1")
    assert [row["seq"] for row in rows] == [0, 1, 2, 3, 4]
    assert [row["integrity"] for row in rows] == [
        "",
        "",
        "event_after_end:message",
        "event_after_end:proposal",
        "broken_row:None",
    ]
    assert rows[3]["proposal"] == "[1,"  # unreadable JSON as stored, never an exception


@pytest.mark.parametrize(
    ("history", "event", "reason"),
    [
        ([abort("llm_time_limit")], message("B"), "after_abort:llm_time_limit"),
        ([abort("advanced_by_admin")], llm_call(), "after_abort:other"),
        ([abort("time_limit")], {"kind": "llm_error", "role": "B"}, "after_abort:time_limit"),
        ([abort("time_limit")], {"kind": "probe", "role": "B", "turn": 0}, "after_abort:time_limit"),
        ([proposal("A", (3, 0, 0)), proposal("B", (0, 2, 1))], message("B"), "after_end"),
        ([proposal("A", (3, 0, 0)), proposal("B", (0, 2, 1))], llm_call(purpose="message"), "after_end"),
        ([proposal("A", (3, 0, 0)), proposal("B", (0, 2, 1))], llm_call(purpose="probe"), None),  # the last probe
        ([proposal("A", (3, 0, 0)), proposal("B", (0, 2, 1))], {"kind": "probe", "role": "B"}, None),
        ([], message("B"), "refused:out_of_turn"),
        ([message("A")], message("B"), None),
        ([message("A")], llm_call(), None),
    ],
)
def test_a_writer_refuses_what_the_stored_game_no_longer_admits(history, event, reason):
    state = replay(history, CONFIG, counts=INSTANCE.counts)
    assert integrity.late_reason(state, event) == reason
