"""A DoND game whose messages run out asks the opener first (clembench's flow), over the real live
socket of a real oTree server, with the model served by the fake endpoint.

- The person opens: after the model's last message the model is NOT asked again; the person is told the messages
  are used up and proposes first; only then is the model asked, told that a proposal was made (never the time-up).
- The model opens: the person's last message reaches the model with the time-up text and the model proposes first;
  meanwhile the person is told the other proposes first and cannot propose; then the person is told of the
  proposal and proposes.
- Two people: the one who sent the last message waits for the opener's proposal; a proposal sent earlier is refused.
"""

from __future__ import annotations

import asyncio
import json

import websockets

from backend.core.llm.fake_server import Reply
from harness.dond_live_client import advance_to_bargain
from harness.participants import people
from harness.servers import create_session, run_async, session_start_links
from tests.support.live import next_state, pair_and_start, payload_of, receive

TIME_UP = "All messages have been used."  # the model's time-up notice (backend/dond/data/dond_prompts/en)
OTHER_PROPOSED = "The other player has made a secret proposal."


def model_that_never_proposes_first(request) -> Reply:
    """Chat until the prompt asks for a proposal (the notices end with the bracket format), then take nothing."""
    asked = request["messages"][-1]["content"].rstrip().endswith("]")
    return Reply(text="[Proposal: ]" if asked else "What matters most to you?")


async def states_until(socket, done) -> list[dict]:
    """State payloads received until ``done(state)``."""
    states = []
    while True:
        payload = payload_of(await receive(socket, timeout_s=60))
        if payload.get("type") == "rejected":
            raise AssertionError(f"refused: {payload}")
        if payload.get("type") == "state":
            states.append(payload)
            if done(payload):
                return states


def texts_of(state) -> list[str]:
    return [item.get("text", "") for item in state["chat"]]


def model_done(state) -> bool:
    return not state["typing"]


def start(otree_server, first_mover):
    session = create_session(
        otree_server.url, "dond_llm", 1, llm_model="test-model", first_mover=first_mover, max_messages=1
    )
    return advance_to_bargain(session_start_links(otree_server.url, session["code"])[0])


def prompts(llm_server) -> list[list[dict]]:
    return [request["messages"] for request in llm_server.requests]


def test_the_person_opens_proposes_first_and_the_model_is_then_told(otree_server, llm_server):
    llm_server.responder = model_that_never_proposes_first
    person = start(otree_server, "human")

    async def play():
        async with websockets.connect(person.live_url, max_size=None, open_timeout=60) as socket:
            await socket.send(json.dumps({"type": "message", "text": "Hello, what do you need?"}))
            after_chat = (await states_until(socket, lambda s: model_done(s) and s["chat"][-1]["who"] != "me"))[-1]
            await asyncio.sleep(0.5)  # a second model call, if any, would have started by now
            calls_after_chat = len(llm_server.requests)
            await socket.send(json.dumps({"type": "proposal", "counts": {}}))
            end = (await states_until(socket, lambda s: s["finished"]))[-1]
            return after_chat, calls_after_chat, end

    after_chat, calls_after_chat, end = run_async(play())
    # The model sent the last message and is not asked to propose at once: the person, the opener, is first.
    assert calls_after_chat == 1, prompts(llm_server)
    assert after_chat["can_propose"] and after_chat["must_propose"] and not after_chat["can_message"]
    assert "All messages have been used. Please make your secret proposal now" in " ".join(texts_of(after_chat))
    # Then the model is asked, told that a proposal was made; it never sees the time-up text.
    assert len(llm_server.requests) == 2 and end["outcome"] == "success"
    assert prompts(llm_server)[1][-1]["content"].startswith(OTHER_PROPOSED)
    assert all(TIME_UP not in m["content"] for p in prompts(llm_server) for m in p)


def test_the_model_opens_gets_the_last_message_with_time_up_and_proposes_first(otree_server, llm_server):
    llm_server.responder = model_that_never_proposes_first
    person = start(otree_server, "llm")

    async def play():
        async with websockets.connect(person.live_url, max_size=None, open_timeout=60) as socket:
            await socket.send(json.dumps({"type": "load"}))
            await states_until(socket, lambda s: model_done(s) and any(i["who"] == "other" for i in s["chat"]))
            await socket.send(json.dumps({"type": "message", "text": "Hello, I need the apples."}))
            states = await states_until(socket, lambda s: model_done(s) and s["can_propose"])
            await socket.send(json.dumps({"type": "proposal", "counts": {}}))
            end = (await states_until(socket, lambda s: s["finished"]))[-1]
            return states, end

    states, end = run_async(play())
    # The person's last message reached the model with the time-up text, and the model proposed first.
    assert len(llm_server.requests) == 2
    last_prompt = prompts(llm_server)[1][-1]["content"]
    assert last_prompt.startswith("Hello, I need the apples.\n\n" + TIME_UP), last_prompt
    # While the model proposes, the person waits, told that the other proposes first.
    waiting = [s for s in states if any(i["who"] == "me" for i in s["chat"]) and not s["can_propose"]]
    assert waiting and waiting[0]["must_propose"], states
    assert any("makes a secret proposal first" in t for t in texts_of(waiting[0])), texts_of(waiting[0])
    # Then the person is told a proposal was made, and proposes.
    assert "has made a secret proposal. Please make yours now." in " ".join(texts_of(states[-1]))
    assert end["outcome"] == "success"


def test_two_people_when_the_messages_run_out_the_opener_proposes_first_and_the_other_is_held_back(otree_server):
    """Person vs person: the one who sent the last message is told the opener proposes first, and a proposal sent
    before that (a forged request: the page shows no form) is refused with the reason in the person's language."""
    players = people(otree_server.url, "dond_human", 2, max_messages=1, language="de")
    pair_and_start(players)
    opener = players[0] if players[0].js_vars()["view"]["can_message"] else players[1]
    other = players[1] if opener is players[0] else players[0]

    async def play():
        async with (
            websockets.connect(opener.live_url(), max_size=None) as first,
            websockets.connect(other.live_url(), max_size=None) as second,
        ):
            log: list = []
            await first.send(json.dumps({"type": "message", "text": "Hallo."}))
            await next_state(first, log), await next_state(second, log)
            await second.send(json.dumps({"type": "message", "text": "Guten Tag."}))
            opener_view, other_view = await next_state(first, log), await next_state(second, log)
            await second.send(json.dumps({"type": "proposal", "counts": {}}))  # too early: the opener is first
            refusal = payload_of(await receive(second))
            await first.send(json.dumps({"type": "proposal", "counts": {}}))
            await next_state(first, log)
            told = await next_state(second, log)
            await second.send(json.dumps({"type": "proposal", "counts": {}}))
            end = await next_state(second, log)
            return opener_view, other_view, refusal, told, end

    opener_view, other_view, refusal, told, end = run_async(play())
    assert opener_view["can_propose"] and not other_view["can_propose"] and other_view["must_propose"]
    assert "Bitte machen Sie jetzt Ihren geheimen Vorschlag" in opener_view["chat"][-1]["text"]
    assert "macht zuerst einen geheimen Vorschlag" in other_view["chat"][-1]["text"]
    assert refusal["type"] == "rejected" and refusal["message"].startswith("Bitte warten Sie"), refusal
    assert told["can_propose"] and "hat einen geheimen Vorschlag gemacht" in told["chat"][-1]["text"]
    assert end["finished"] and end["outcome"] == "success"
