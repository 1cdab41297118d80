"""Per-participant limits: the sliding window (against its naive oracle), request counting, and both limits through
the live dond page (the request budget of ``llm_turns`` itself is tested in test_dond_play) (a flood of live messages is refused in the participant's language; a game that
reaches its request budget makes no further model call and aborts with a stored reason)."""

from __future__ import annotations

import asyncio
import json
import random

import pytest
import websockets

from backend.core.llm.fake_server import Reply
from backend.core.rate_limit import prune, requests_used, wait_seconds
from tests.backend.core.oracles import naive_wait_seconds
from tests.support.dond_live_client import advance_all
from tests.support.harness import create_session, export_rows, run_async


def test_wait_seconds_matches_the_naive_oracle_on_random_histories():
    generator = random.Random(3)
    for _ in range(2000):
        window = generator.choice([1.0, 10.0, 60.0])
        times = [round(generator.uniform(0, 120), 1) for _ in range(generator.randint(0, 30))]
        now = round(generator.uniform(0, 130), 1)
        limit = generator.randint(1, 12)
        expected = naive_wait_seconds(times, now, limit=limit, window_s=window)
        assert wait_seconds(times, now, limit=limit, window_s=window) == pytest.approx(expected), (times, now, limit)


def test_a_full_window_waits_until_its_oldest_counted_action_leaves():
    times = [10.0, 20.0, 30.0, 40.0]
    assert wait_seconds(times, 45.0, limit=3, window_s=60) == pytest.approx(20.0 + 60 - 45)
    assert wait_seconds(times, 45.0, limit=5, window_s=60) == 0.0
    assert wait_seconds(times, 80.5, limit=3, window_s=60) == 0.0  # 10 and 20 have left the window
    assert prune(times, 80.5, window_s=60) == [30.0, 40.0]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"limit": 0, "window_s": 60}, "limit must be a whole number"),
        ({"limit": True, "window_s": 60}, "limit must be a whole number"),
        ({"limit": 3, "window_s": 0}, "window must be a positive number"),
    ],
)
def test_bad_limits_are_refused_with_a_sentence(options, message):
    with pytest.raises(ValueError, match=message):
        wait_seconds([1.0], 2.0, **options)


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
        live_messages_per_minute=4,
    )
    flooder, neighbour = advance_all(otree_server.url, session["code"])
    answers = run_async(flood(flooder.live_url, 10))
    refused = [a for a in answers if a["type"] == "rejected"]
    assert len(answers) - len(refused) == 4 and len(refused) == 6  # four per minute, the rest refused
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
