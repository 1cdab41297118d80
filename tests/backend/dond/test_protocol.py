"""The notes protocol and the external-belief probe of an LLM player (backend/dond/protocol.py, dond_play)."""

from __future__ import annotations

import time

import pytest

from backend.core.llm import LLMSettings
from backend.core.llm.fake_server import Reply
from backend.dond import export as dond_export
from backend.dond.game import GameConfig, participant_view, replay
from backend.dond.protocol import Protocol, player_metrics, turn_analysis
from tests.support.dond_events import INSTANCE
from tests.support.dond_turns import run_turns

NOTES = Protocol("notes", word_limit=20, probe_external=False)
NOTES_AND_PROBE = Protocol("notes", word_limit=20, probe_external=True)


def kind_of_request(request) -> str:
    """Which call of the protocol a request to the test server is, from its last user message."""
    last = [m["content"] for m in request["messages"] if m["role"] == "user"][-1]
    if "Put yourself in the other player's position" in last:
        return "probe"
    if "write a private note for yourself" in last:
        return "note"
    return "reply"


@pytest.fixture
def server_settings(llm_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return LLMSettings(model="test-model", base_url=llm_server.base_url, max_retries=0, timeout_s=5)


def test_note_comes_first_is_stored_with_its_turn_and_is_put_into_the_reply_prompt(llm_server, server_settings):
    llm_server.script(
        'Knives and the egg matter to me. {"knife": 2, "egg": 1}',
        "Could I have the knives? (I take: 2 knives, 1 egg)",
    )
    config = GameConfig(mode="semi", language="en", opener="A")
    events = [{"kind": "message", "role": "A", "text": "Hello, what do you need?"}]
    run_turns(events, "B", config, server_settings, NOTES)

    kinds = [(e["kind"], e.get("purpose")) for e in events[1:]]
    assert kinds == [("llm_call", "note"), ("note", None), ("llm_call", "message"), ("message", None)]
    note = events[2]
    assert note["turn"] == 0 and note["text"].endswith('{"knife": 2, "egg": 1}')
    note_prompt = llm_server.requests[0]["messages"][-1]["content"]
    assert "under 20 words" in note_prompt and '"knife": <number>' in note_prompt
    reply_prompt = llm_server.requests[1]["messages"][-1]["content"]
    assert note["text"] in reply_prompt and "(I take: <number> <item>" in reply_prompt
    # The other player never sees the note.
    view = participant_view(events, "A", config, counts=INSTANCE.counts)
    assert [item.get("text") for item in view["chat"]] == [
        "Hello, what do you need?",
        "Could I have the knives? (I take: 2 knives, 1 egg)",
    ]


def test_a_reprompt_in_the_same_turn_keeps_the_note(llm_server, server_settings):
    llm_server.script('I want eggs. {"egg": 1}', "[Offer: 1 egg]", "[Proposal: 1 egg]")
    config = GameConfig(mode="semi", language="en", max_messages=1)
    events = [{"kind": "message", "role": "A", "text": "Hi"}, {"kind": "message", "role": "B", "text": "Hi"}]
    events.append({"kind": "proposal", "role": "A", "proposal": [3, 0, 0]})
    run_turns(events, "B", config, server_settings, NOTES)
    notes = [e for e in events if e["kind"] == "note"]
    assert len(notes) == 1 and notes[0]["turn"] == 1
    assert [kind_of_request(r) for r in llm_server.requests] == ["note", "reply", "reply"]
    assert "[Offer: 1 egg]" in str(llm_server.requests[2]["messages"])  # the re-prompt follows the bad reply
    assert notes[0]["text"] in llm_server.requests[2]["messages"][-1]["content"]  # ... and the note is still there
    assert replay(events, config, counts=INSTANCE.counts).outcome == "success"


def test_probe_runs_beside_the_turn_and_never_delays_the_reply(llm_server, server_settings):
    probe_delay = 3.0  # well above a reply on a busy machine (1.3-1.9 s at a load of 9 on 2 cores)

    def respond(request):
        kind = kind_of_request(request)
        if kind == "probe":
            return Reply(text='{"knife": 1, "egg": 1}', delay_s=probe_delay)
        if kind == "note":
            return Reply(text='Aim high. {"knife": 2, "egg": 1}', delay_s=0.1)
        return Reply(text="I would like it all. (I take: 2 knives, 1 egg)", delay_s=0.1)

    llm_server.responder = respond
    config = GameConfig(mode="semi", language="en")
    events = [{"kind": "message", "role": "A", "text": "Hello"}]
    item_times = []
    # The client's first import and set-up (seconds on a busy machine) are not the turn's: paid here, before the clock.
    from openai import AsyncOpenAI

    AsyncOpenAI(api_key="no-key", base_url=server_settings.base_url)
    started = time.monotonic()
    run_turns(events, "B", config, server_settings, NOTES_AND_PROBE, item_times=item_times)
    finished = time.monotonic()

    message_at = next(t for t, item in item_times if item["type"] == "event" and item["event"]["kind"] == "message")
    assert message_at - started < probe_delay  # the reply was shown before the probe answered
    assert finished - started >= probe_delay  # ... and the probe was awaited before the turn ended
    probe = next(e for e in events if e["kind"] == "probe")
    assert probe["turn"] == 0 and probe["text"] == '{"knife": 1, "egg": 1}'
    assert sorted(e["purpose"] for e in events if e["kind"] == "llm_call") == ["message", "note", "probe"]
    assert llm_server.max_in_flight == 2  # the probe and the note were open at the same time

    # B's values: knife 3, egg 4. Offer 2 knives + 1 egg = 10; note 10; belief 1 knife + 1 egg = 7.
    (record,) = turn_analysis(events, INSTANCE, config)
    assert (record["offer_points"], record["note_points"], record["belief_points"]) == (10.0, 10.0, 7.0)
    assert record["internal_verdict"] == "faithful" and record["external_verdict"] == "faithful"


def test_a_failed_note_call_is_stored_and_the_turn_goes_on(llm_server, server_settings):
    llm_server.script(Reply(status=500), "Fine, let us talk.")
    config = GameConfig(mode="semi", language="en")
    events = [{"kind": "message", "role": "A", "text": "Hello"}]
    run_turns(events, "B", config, server_settings, NOTES)
    note = next(e for e in events if e["kind"] == "note")
    assert note["text"] == "" and note["error_kind"] == "llm_error" and "server_error" in note["error"]
    assert events[-1]["kind"] == "message"
    (record,) = turn_analysis(events, INSTANCE, config)
    assert record["internal_verdict"] == "no_reference"  # no split in the note: excluded, not guessed


def test_scripted_notes_game_gives_metrics_and_export_columns():
    config = GameConfig(mode="coop", language="de", opener="A")
    settings = LLMSettings(model="scripted")
    events = []
    for _ in range(30):
        state = replay(events, config, counts=INSTANCE.counts)
        if state.finished:
            break
        run_turns(events, state.to_act[0], config, settings, NOTES_AND_PROBE)
    assert replay(events, config, counts=INSTANCE.counts).outcome in ("success", "lose")
    assert {e["kind"] for e in events} >= {"note", "probe", "message", "proposal"}

    metrics = player_metrics(events, INSTANCE, config, "A", word_limit=20)
    assert metrics["note_json"] == 1.0 and metrics["note_under_limit"] == 1.0
    assert metrics["internal_faithfulness"] == 1.0  # the scripted agent proposes exactly its note's split
    rows = dond_export.event_rows(events, INSTANCE, config, session_code="s", game_id="s-1")
    assert [list(row) for row in rows[:1]] == [dond_export.DOND_EVENTS_COLUMNS]
    verdicts = {(row["kind"], row["internal_verdict"]) for row in rows if row["kind"] in ("message", "proposal")}
    assert verdicts == {("message", "no_offer"), ("proposal", "faithful")}  # its chat names no split
    assert all(row["note_split"] for row in rows if row["kind"] == "note")
    game = dond_export.game_row(
        events,
        INSTANCE,
        config,
        session_code="s",
        game_id="s-1",
        opponent="self",
        model="scripted",
        cell=1,
        focal_role="A",
        llm_models={"A": "scripted", "B": "scripted"},
        protocol=NOTES_AND_PROBE,
    )
    assert game["llm_protocol"] == "notes" and game["note_json_a"] == 1.0 and game["note_json_b"] == 1.0
    assert game["internal_faithfulness_a"] == 1.0
    assert 0 <= game["utility_a"] <= 1


def test_protocol_settings_are_validated():
    with pytest.raises(ValueError, match="llm_protocol"):
        Protocol.from_config({"llm_protocol": "thoughts"})
    with pytest.raises(ValueError, match="llm_word_limit"):
        Protocol("notes", word_limit=1)
