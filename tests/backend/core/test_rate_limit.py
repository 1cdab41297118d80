"""Per-participant limits through the live dond page: a flood of live messages is refused by the server's one
budget in the participant's language (lab_server/budgets.py; more in tests/system/test_live_budgets.py); a game
that reaches its request budget makes no further model call and aborts with a stored reason (the request budget of
``llm_turns`` itself is tested in test_dond_play)."""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets

from backend.core.llm.fake_server import Reply
from backend.core.rate_limit import requests_used
from harness.dond_live_client import advance_all
from harness.servers import create_session, export_rows, run_async


def test_requests_used_counts_every_attempt_of_the_role():
    events = [
        {"kind": "llm_call", "role": "B", "attempts": 3},
        {"kind": "llm_call", "role": "B", "attempts": "1"},
        {"kind": "llm_call", "role": "A", "attempts": 2},
        {"kind": "message", "role": "B"},
    ]
    assert requests_used(events, "B") == 4 and requests_used(events, "A") == 2


async def flood(live_url: str, count: int) -> list[dict]:
    """Send ``count`` heartbeats at once; return one answer per heartbeat (state or refusal)."""
    answers = []
    async with websockets.connect(live_url, open_timeout=60) as socket:
        for _ in range(count):
            await socket.send(json.dumps({"type": "ping"}))
        while len(answers) < count:
            payload = json.loads(await asyncio.wait_for(socket.recv(), timeout=60)).get("live_method_payload") or {}
            if payload.get("type") in ("state", "rejected"):
                answers.append(payload)
    return answers


@pytest.mark.slow
def test_a_flood_of_live_messages_is_refused_in_the_participants_language(otree_server, llm_server):
    session = create_session(
        otree_server.url,
        "dond_llm",
        2,
        llm_model="test-model",
        language="de",
        first_mover="human",  # a heartbeat then answers with exactly one state: no model turn is due
        live_messages_per_minute=1,  # bursts of 5 (the least): the socket's opening and four messages
    )
    flooder, neighbour = advance_all(otree_server.url, session["code"])
    answers = run_async(flood(flooder.live_url, 10))
    refused = [a for a in answers if a["type"] == "rejected"]
    assert len(answers) - len(refused) == 4 and len(refused) == 6  # a burst's worth, the rest refused
    assert all(a["kind"] == "rate_limited" and "Sie senden zu schnell" in a["message"] for a in refused)
    # Another participant is not affected by this participant's flood.
    [answer] = run_async(flood(neighbour.live_url, 1))
    assert answer["type"] == "state"


@pytest.mark.slow
def test_the_request_budget_aborts_a_live_game_with_a_stored_reason(otree_server, llm_server):
    llm_server.responder = lambda request: Reply(text="Tell me more about what you need.")
    session = create_session(
        otree_server.url, "dond_llm", 1, llm_model="test-model", first_mover="human", llm_requests_per_game=2
    )
    [player] = advance_all(otree_server.url, session["code"])

    async def chat():
        async with websockets.connect(player.live_url, open_timeout=60) as socket:
            for number in range(3):
                await socket.send(json.dumps({"type": "message", "text": f"Offer {number}?"}))
                while True:
                    payload = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))["live_method_payload"]
                    if payload.get("type") == "state" and not payload.get("waiting_for_other"):
                        break
                if payload["finished"]:
                    return payload

    final = run_async(chat())
    assert final["finished"] and final["outcome"] == "aborted"
    assert "used up the allowed number of answers" in final["chat"][-1]["text"]  # the participant is told why
    assert len(llm_server.requests) == 2  # the third message got no model call
    [game] = export_rows(otree_server.url, "dond", "custom_export_dond_games", session_code=session["code"])
    assert game["abort_reason"].startswith("llm_budget: 2 model requests used")
