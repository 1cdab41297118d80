"""The scripted agent playing whole games, and the export rows (backend/dond/export.py) of finished, aborted and
unfinished games."""

from __future__ import annotations

import json

import pytest

from backend.core import csvio
from backend.core.csvio import iso_utc
from backend.dond import export as dond_export
from backend.dond import game, instances, prompts, proposals, rules, scoring
from backend.dond.game import GameConfig, replay
from tests.support.dond_events import INSTANCE, message, proposal, violation

# ---------------------------------------------------------------------------------------------------------------
# Scripted agent and export rows


def play_scripted(instance, config):
    """Both players scripted: the events of a whole game."""
    events = []
    state = replay(events, config, counts=instance.counts)
    while not state.finished:
        role = state.to_act[0]
        reply = prompts.scripted_policy(instance, role, state)(prompts.llm_messages(events, role, instance, config))
        move = proposals.parse_reply(reply, instance, config.language, must_propose=state.must_propose(role))
        if move.kind == "proposal":
            events.append(proposal(role, proposals.proposal_vector(move.proposal, instance), reply))
        else:
            events.append(message(role, reply))
        events[-1]["created_at"] = 1000.0 + len(events)
        state = replay(events, config, counts=instance.counts)
    return events, state


@pytest.mark.parametrize("language", rules.LANGUAGES)
@pytest.mark.parametrize("mode", rules.MODES)
def test_scripted_agents_finish_every_mode_and_language(language, mode):
    for seed in range(5):
        instance = instances.generate_instance(seed)
        config = GameConfig(mode=mode, language=language, opener="AB"[seed % 2])
        events, state = play_scripted(instance, config)
        assert state.outcome in ("success", "lose")
        assert state.messages_sent == {"A": 2, "B": 2} or state.phase == "finished"
        row = dond_export.game_row(
            events,
            instance,
            config,
            session_code="s",
            game_id=f"g{seed}",
            opponent="self",
            model="scripted",
            cell=1,
            focal_role="A",
        )
        assert list(row) == dond_export.DOND_GAMES_COLUMNS
        assert row["outcome"] == state.outcome and row["ended_at"] == iso_utc(max(e["created_at"] for e in events))
        assert json.loads(row["proposal_a"]) == list(state.proposals["A"])
        assert 0 <= row["main_score"] <= 100


def test_game_row_of_an_aborted_and_an_unfinished_game():
    config = GameConfig(mode="semi", language="en")
    events = [
        message("A"),
        violation("B"),
        {"kind": "reprompt", "role": "B", "text": "again"},
        {"kind": "llm_call", "role": "B", "prompt_tokens": 10, "completion_tokens": 5},
        {"kind": "abort", "role": "B", "text": "too many\ninvalid replies"},
    ]
    row = dond_export.game_row(
        events, INSTANCE, config, session_code="s", game_id="g", opponent="llm", model="m", cell=3, focal_role="B"
    )
    assert (row["outcome"], row["aborted"], row["success"], row["main_score"]) == ("aborted", 1, 0, "")
    assert row["abort_reason"] == "too many\\ninvalid replies" and row["aborted_by"] == "B"
    assert (row["violations_b"], row["reprompts"], row["llm_calls"], row["llm_tokens"]) == (1, 1, 1, 15)
    assert row["bonus_points"] == 0 and row["points_focal"] == ""
    unfinished = dond_export.game_row(
        events[:1], INSTANCE, config, session_code="s", game_id="g", opponent="llm", model="m", cell=3, focal_role="B"
    )
    assert unfinished["outcome"] == "unfinished" and unfinished["main_score"] == "" and unfinished["ended_at"] == ""


def test_a_game_row_names_the_pages_language_and_the_models_apart():
    """A session in a language a lab added by catalogues (xx) plays its game in English words: the row's language is
    what the people read (the admin report and the Results page group by it), prompt_language the game's."""
    config = GameConfig(mode="semi", language="en")
    meta = dict(session_code="s", game_id="g", opponent="human", model="human", cell=1, focal_role="A")
    row = dond_export.game_row([message("A")], INSTANCE, config, **meta, page_language="xx")
    assert (row["language"], row["prompt_language"]) == ("xx", "en")
    same = dond_export.game_row([message("A")], INSTANCE, GameConfig(mode="semi", language="de"), **meta)
    assert (same["language"], same["prompt_language"]) == ("de", "de")  # self-play and older games: one language


@pytest.mark.parametrize(("mode", "bonus"), [("semi", 10), ("coop", 14), ("comp", 6)])
def test_bonus_follows_the_mode_objective_of_the_focal_player(mode, bonus):
    config = GameConfig(mode=mode, language="en")
    events = [proposal("A", (2, 0, 0)), proposal("B", (0, 2, 1))]  # A: 4 points, B: 10 points
    row = dond_export.game_row(
        events, INSTANCE, config, session_code="s", game_id="g", opponent="llm", model="m", cell=3, focal_role="B"
    )
    assert (row["points_focal"], row["points_opponent"], row["bonus_points"]) == (10, 4, bonus)
    flipped = dond_export.game_row(
        events, INSTANCE, config, session_code="s", game_id="g", opponent="llm", model="m", cell=1, focal_role="A"
    )
    assert flipped["bonus_points"] == max(0, scoring.goal_score(mode, 4, 10))


def test_event_rows_escape_multiline_text_and_round_trip():
    text = 'Line 1\nLine 2 with "quotes", commas and a backslash \\n'
    row = dond_export.event_row(
        {"kind": "message", "role": "A", "text": text, "created_at": 1.5}, session_code="s", game_id="g", seq=3
    )
    assert "\n" not in row["text"] and csvio.unescape_text(row["text"]) == text
    assert list(row) == dond_export.DOND_EVENTS_COLUMNS and row["seq"] == 3
    assert row["created_at"] == "1970-01-01T00:00:01.500Z"


def test_failed_calls_show_the_person_the_model_was_unreachable_never_a_broken_rule():
    config = GameConfig(mode="semi", language="en", opener="A", llm_reprompts=2)
    failed = {"kind": "llm_error", "role": "B", "error_kind": "timeout"}
    events = [message("A"), failed, failed]
    view = game.participant_view(events, "A", config, counts=INSTANCE.counts)
    assert [item.get("notice") for item in view["chat"]] == [None, "unreachable", "unreachable"]
    assert view["waiting_for_other"] and not view["finished"]  # the model is asked again
    # The third failure ends the game: its abort says why, with no "asked again" just before.
    events += [failed, {"kind": "abort", "role": "B", "text": "llm_error: timeout"}]
    view = game.participant_view(events, "A", config, counts=INSTANCE.counts)
    assert [item.get("notice") for item in view["chat"]][1:] == ["unreachable", "unreachable", "aborted"]
    assert view["chat"][-1]["reason"] == "llm_error" and view["finished"]
    state = replay(events, config, counts=INSTANCE.counts)
    assert state.violations == {"A": 0, "B": 0} and state.llm_errors == {"A": 0, "B": 3}


def test_every_language_tells_an_unreachable_model_apart_from_a_broken_rule():
    from dond.texts import TEXTS

    for language, text in TEXTS.items():
        for key in ("notice_unreachable", "reason_llm_error"):
            assert text[key] and text[key] != TEXTS["en"][key] or language == "en", (language, key)
        assert text["notice_unreachable"] != text["notice_retry"]
        assert text["reason_llm_error"] != text["reason_llm_invalid"]
