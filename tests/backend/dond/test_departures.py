"""The clembench-exact switch (backend/dond/departures.py): each deliberate departure from clembench applies by
default and is off in a clembench-exact game, one test per departure, each against the same scripted endpoint."""

from __future__ import annotations

import pytest

from backend.core.llm import LLMSettings
from backend.core.llm.fake_server import Reply
from backend.dond import prompts
from backend.dond.departures import DEPARTURES
from backend.dond.game import GameConfig, participant_view, replay
from backend.dond.settings import FORM_KEYS, dond_settings
from tests.support.dond_events import message
from tests.support.dond_turns import INSTANCE, run_turns


@pytest.fixture
def endpoint(llm_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return LLMSettings(model="test-model", base_url=llm_server.base_url, max_retries=0, timeout_s=5)


def exact(**options) -> GameConfig:
    return GameConfig(mode="semi", language="en", clembench_exact=True, **options)


def test_a_broken_rule_aborts_at_once_whatever_llm_reprompts_says(llm_server, endpoint):
    llm_server.script("[Offer: 1 egg]", "[Proposal: 1 egg]")
    events = []
    run_turns(events, "A", exact(llm_reprompts=2), endpoint)
    state = replay(events, exact(llm_reprompts=2), counts=INSTANCE.counts)
    assert state.outcome == "aborted" and state.aborted_by == "A" and state.abort_reason == "llm_invalid: format"
    assert len(llm_server.requests) == 1 and "reprompt" not in [e["kind"] for e in events]


def test_a_failed_call_aborts_at_once(llm_server, endpoint):
    llm_server.script(Reply(status=500), "Hello.")
    events = []
    run_turns(events, "A", exact(), endpoint)
    state = replay(events, exact())
    assert state.abort_reason == "llm_error: server_error" and len(llm_server.requests) == 1


def test_a_long_message_is_passed_on(llm_server, endpoint):
    long = "I would like to explain at length. " * 59 + "The end."  # over 2,000 characters
    llm_server.script(long)
    config = exact(max_message_chars=1000)
    events = []
    run_turns(events, "A", config, endpoint)
    assert [e["kind"] for e in events] == ["llm_call", "message"] and events[-1]["text"] == long
    assert replay(events, config).messages_sent["A"] == 1


def test_an_empty_message_is_passed_on_and_the_other_is_told(llm_server, endpoint):
    llm_server.script(" ")
    config = exact()
    events = []
    run_turns(events, "A", config, endpoint)
    assert [e["kind"] for e in events] == ["llm_call", "message"] and not events[-1]["text"].strip()
    chat = prompts.llm_messages(events, "B", INSTANCE, config)
    assert chat[-1]["content"].endswith(prompts.notice("no_reply", config))
    view = participant_view(events, "B", config, counts=INSTANCE.counts)
    assert view["chat"] == [{"who": "system", "notice": "no_reply"}] and view["can_message"]


def test_an_empty_reply_when_a_proposal_is_due_breaks_the_rule(llm_server, endpoint):
    llm_server.script(" ")
    config = exact(max_messages=1)
    events = [message("A"), message("B")]
    run_turns(events, "A", config, endpoint)
    state = replay(events, config, counts=INSTANCE.counts)
    assert state.abort_reason == "llm_invalid: proposal_required" and state.aborted_by == "A"
    assert len(llm_server.requests) == 1 and "llm_error" not in [e["kind"] for e in events]


def test_no_request_budget(llm_server, endpoint):
    llm_server.script("Hello.")
    events = []
    run_turns(events, "A", exact(), endpoint, max_requests=1)
    run_turns(events, "B", exact(), endpoint, max_requests=1)  # B's first call: under the budget either way
    llm_server.script("How are you?")
    run_turns(events, "A", exact(), endpoint, max_requests=1)  # A's second call: over a budget of 1
    assert [e["kind"] for e in events if e["kind"] != "llm_call"] == ["message", "message", "message"]


def test_by_default_every_departure_applies(llm_server, endpoint):
    llm_server.script("[Offer: 1 egg]", "x" * 2000, " ", "Hello.")
    config = GameConfig(mode="semi", language="en", llm_reprompts=3)
    events = []
    run_turns(events, "A", config, endpoint)
    kinds = [e["kind"] for e in events if e["kind"] != "llm_call"]
    assert kinds == ["violation", "reprompt", "violation", "reprompt", "llm_error", "message"]


def test_the_session_key_is_on_the_form_refused_with_notes_and_for_two_people():
    assert "clembench_exact" in FORM_KEYS and dond_settings({"clembench_exact": "true"}).clembench_exact is True
    with pytest.raises(ValueError, match="clembench-exact games use the plain protocol"):
        dond_settings({"clembench_exact": True, "llm_probe_external": True})
    with pytest.raises(ValueError, match="'clembench_exact' applies only when opponent is llm"):
        dond_settings({"clembench_exact": True, "opponent": "human"})


def test_the_table_names_what_each_departure_does_and_why():
    assert set(DEPARTURES) == {"reprompts", "call_retries", "message_chars", "empty_message", "request_budget"}
    assert all(d.ours and d.clembench and d.reason for d in DEPARTURES.values())
