"""The LLM's turns (backend/dond/play.py) against the scripted agent and the local OpenAI-compatible server."""

from __future__ import annotations

import pytest

from backend.core.llm import LLMSettings
from backend.core.llm.fake_server import Reply
from backend.core.rate_limit import requests_used
from backend.dond import rules as dond
from backend.dond.game import GameConfig, replay
from backend.dond.play import llm_turns
from harness.servers import run_async
from tests.support.dond_turns import INSTANCE, run_turns


def test_scripted_players_complete_a_game_in_every_language():
    for language in dond.LANGUAGES:
        config = GameConfig(mode="coop", language=language, opener="B")
        events = []
        settings = LLMSettings(model="scripted")
        for _ in range(20):
            state = replay(events, config, counts=INSTANCE.counts)
            if state.finished:
                break
            run_turns(events, state.to_act[0], config, settings)
        state = replay(events, config, counts=INSTANCE.counts)
        assert state.outcome in ("success", "lose")
        calls = [e for e in events if e["kind"] == "llm_call"]
        assert calls and all(c["model"] == "scripted" and c["llm_reply"] for c in calls)


def test_malformed_proposal_is_stored_reprompted_and_then_accepted(llm_server, monkeypatch):
    llm_server.script("[Offer: 1 egg]", "[Proposal: 2 eggs]", "Sure. [Proposal: 1 egg]")
    config = GameConfig(mode="semi", language="en", llm_reprompts=2)
    events = [{"kind": "message", "role": "A", "text": "Hi"}]
    settings = LLMSettings(model="test-model", base_url=llm_server.base_url, max_retries=0, timeout_s=5)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    items = run_turns(events, "B", config, settings)
    kinds = [e["kind"] for e in events[1:]]
    assert kinds == ["llm_call", "violation", "reprompt", "llm_call", "violation", "reprompt", "llm_call", "proposal"]
    assert [e["error_kind"] for e in events if e["kind"] == "violation"] == ["format", "over_ask"]
    assert events[-1]["proposal"] == [0, 0, 1]
    # The model saw what was wrong: its invalid reply, then the re-prompt, in its next request.
    second = llm_server.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "[Offer: 1 egg]"}
    assert "Proposal:" in second[-1]["content"] and second[-1]["role"] == "user"
    previews = "".join(item["text"] for item in items if item["type"] == "delta")
    assert "[" not in previews and "Sure." in previews  # the secret proposal never streams to the person


def test_too_many_violations_abort_the_game(llm_server, monkeypatch):
    llm_server.script("[Proposal: 1 pear]", "[Proposal: 1 pear]")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = GameConfig(mode="semi", language="de", llm_reprompts=1)
    events = []
    settings = LLMSettings(model="test-model", base_url=llm_server.base_url, max_retries=0, timeout_s=5)
    run_turns(events, "A", config, settings)
    state = replay(events, config, counts=INSTANCE.counts)
    assert state.outcome == "aborted" and state.aborted_by == "A"
    assert state.abort_reason == "llm_invalid: format"  # a German game, English words: wrong prefix
    assert len(llm_server.requests) == 2


def test_reference_rules_abort_on_the_first_violation(llm_server, monkeypatch):
    llm_server.script("Let's see. [I take the eggs]")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = GameConfig(mode="semi", language="en", llm_reprompts=0)
    events = []
    settings = LLMSettings(model="test-model", base_url=llm_server.base_url, max_retries=0, timeout_s=5)
    run_turns(events, "A", config, settings)
    assert replay(events, config).outcome == "aborted" and len(llm_server.requests) == 1


def test_failed_calls_are_llm_errors_never_violations_and_abort_as_llm_error(llm_server, monkeypatch):
    llm_server.script(Reply(status=500), Reply(status=500), Reply(status=500))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = GameConfig(mode="coop", language="it", llm_reprompts=2)
    events = []
    settings = LLMSettings(model="test-model", base_url=llm_server.base_url, max_retries=0, timeout_s=5)
    run_turns(events, "A", config, settings)
    state = replay(events, config)
    assert state.outcome == "aborted" and state.abort_reason == "llm_error: server_error"
    assert [e["kind"] for e in events] == ["llm_call", "llm_error"] * 3 + ["abort"]  # no violation, no re-prompt
    assert state.violations == {"A": 0, "B": 0} and state.llm_errors == {"A": 3, "B": 0}
    assert all(e["llm_error_kind"] == "server_error" for e in events if e["kind"] == "llm_call")


def test_an_answer_between_failed_calls_starts_their_count_again(llm_server, monkeypatch):
    # fail, answer (a violation), fail, fail: never more than 2 failures in a row, so no llm_error abort.
    llm_server.script(Reply(status=500), "[Proposal: 1 pear]", Reply(status=500), Reply(status=500), "Hello.")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = GameConfig(mode="semi", language="en", llm_reprompts=2)
    events = []
    settings = LLMSettings(model="test-model", base_url=llm_server.base_url, max_retries=0, timeout_s=5)
    run_turns(events, "A", config, settings)
    state = replay(events, config)
    assert not state.aborted and events[-1]["kind"] == "message"
    assert state.violations["A"] == 1 and state.llm_errors["A"] == 3


def test_an_overlong_chat_is_a_violation(llm_server, monkeypatch):
    llm_server.script("x" * 2000, "Fine, thanks.")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = GameConfig(mode="semi", language="en", max_message_chars=1000)
    events = []
    settings = LLMSettings(model="test-model", base_url=llm_server.base_url, max_retries=0, timeout_s=5)
    run_turns(events, "A", config, settings)
    violations = [e for e in events if e["kind"] == "violation"]
    assert len(violations) == 1 and events[-1]["kind"] == "message" and events[-1]["text"] == "Fine, thanks."


def test_an_empty_reply_is_a_failed_call_tried_again_without_a_reprompt(llm_server, monkeypatch):
    # The client counts a blank reply as a failed call (after its own retries): an llm_error, then the turn again.
    llm_server.script(" ", "Fine, thanks.")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = GameConfig(mode="semi", language="en")
    events = []
    settings = LLMSettings(model="test-model", base_url=llm_server.base_url, max_retries=0, timeout_s=5)
    run_turns(events, "A", config, settings)
    assert [e["kind"] for e in events] == ["llm_call", "llm_error", "llm_call", "message"]
    assert events[-1]["text"] == "Fine, thanks." and replay(events, config).violations == {"A": 0, "B": 0}


def test_a_game_at_its_request_budget_makes_no_further_call(llm_server, monkeypatch):
    # Every reply breaks the rules, so only the budget (2 requests, below the 3 violations allowed) can stop it.
    llm_server.script("[Proposal: 1 pear]", "[Proposal: 1 pear]", "[Proposal: 1 pear]", "[Proposal: 1 pear]")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = GameConfig(mode="semi", language="en", llm_reprompts=3)
    settings = LLMSettings(model="test-model", base_url=llm_server.base_url, max_retries=0, timeout_s=5)
    events = []
    run_turns(events, "A", config, settings, max_requests=2)
    state = replay(events, config, counts=INSTANCE.counts)
    assert len(llm_server.requests) == 2 and requests_used(events, "A") == 2
    assert state.outcome == "aborted" and state.abort_reason.startswith("llm_budget: 2 model requests")
    with pytest.raises(ValueError, match="max_requests must be a whole number"):
        run_async(
            llm_turns(
                load_events=list,
                store_event=print,
                instance=INSTANCE,
                config=config,
                role="A",
                settings=settings,
                max_requests=0,
            ).__anext__()
        )
