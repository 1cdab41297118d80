"""Two participants' LLM replies stream at the same time (wall time about one reply, not two), and a page request
made meanwhile is not delayed."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import requests
import websockets

from backend.core.llm.fake_server import Reply
from harness.dond_live_client import advance_all, play_all
from harness.servers import create_session, run_async

pytestmark = pytest.mark.slow


REPLY_S = 1.5  # 0.3 s to the first token, then 12 pieces 0.1 s apart (plus the first call's client start-up)


def test_two_llm_replies_stream_concurrently_and_pages_stay_fast(otree_server, llm_server):
    llm_server.responder = lambda request: Reply(
        text="Fine, I would like the other items please, thank you very much.", delay_s=0.3, chunk_delay_s=0.1
    )
    session = create_session(otree_server.url, "dond_llm", 2, llm_model="test-model", first_mover="human")
    participants = advance_all(otree_server.url, session["code"])

    async def scenario():
        game = asyncio.create_task(play_all(participants, 1))
        await asyncio.sleep(0.5 + REPLY_S / 2)  # both streams are running now
        began = time.monotonic()
        response = await asyncio.to_thread(requests.get, participants[0].page_url, timeout=30)
        page_seconds = time.monotonic() - began
        return await game, page_seconds, response

    wall, page_seconds, response = run_async(scenario())
    single = max(max(p.reply_times) for p in participants)
    assert response.status_code == 200 and "dond-chat" in response.text
    assert llm_server.max_in_flight == 2  # both model calls were open at the same moment
    # It streamed: the first piece arrived long before the whole reply (pieces come 0.1 s apart for 1.1 s).
    assert all(p.first_delta_times and p.first_delta_times[0] < p.reply_times[0] - 0.8 for p in participants)
    assert wall < 1.5 * single and wall < 2 * REPLY_S  # about one reply, not two in a row
    assert page_seconds < 0.5


def test_the_same_load_through_a_blocking_call_is_serialised(otree_server, llm_server):
    """Control: the benchmark's blocking variant must show what the async live method avoids."""
    llm_server.responder = lambda request: Reply(text="Fine, thank you.", delay_s=REPLY_S)
    session = create_session(
        otree_server.url, "dond_llm", 2, llm_model="test-model", first_mover="human", llm_blocking=True
    )
    participants = advance_all(otree_server.url, session["code"])

    async def scenario():
        game = asyncio.create_task(play_all(participants, 1))
        await asyncio.sleep(0.5 + REPLY_S / 2)
        began = time.monotonic()
        await asyncio.to_thread(requests.get, participants[0].page_url, timeout=30)
        return await game, time.monotonic() - began

    wall, page_seconds = run_async(scenario())
    assert llm_server.max_in_flight == 1
    assert wall > 1.8 * REPLY_S and page_seconds > REPLY_S / 4


def test_the_echo_of_a_message_shows_the_llm_typing_and_the_reply_replaces_it(otree_server, llm_server):
    """Three sends per exchange: the person's stored message with the LLM typing, the streamed pieces, the state
    with the stored reply (no separate typing message, no piece sent right before the state that holds it)."""
    llm_server.responder = lambda request: Reply(text="Happy to talk about the split.", delay_s=0.3)
    session = create_session(otree_server.url, "dond_llm", 1, llm_model="test-model", first_mover="human")
    [participant] = advance_all(otree_server.url, session["code"])

    async def exchange():
        async with websockets.connect(participant.live_url, open_timeout=60) as socket:
            await socket.send(json.dumps({"type": "message", "text": "What do you need most?"}))
            received = []
            while not received or received[-1].get("type") != "state" or received[-1]["typing"]:
                data = json.loads(await asyncio.wait_for(socket.recv(), timeout=30))
                received.append(data["live_method_payload"])
            return received

    received = run_async(exchange())
    echo, *pieces, final = received
    assert echo["type"] == "state" and echo["typing"] and not echo["can_message"]
    assert echo["chat"][-1] == {"who": "me", "text": "What do you need most?"}
    # Six pieces arrive at once: the first is sent, the rest are held back and then covered by the state.
    assert pieces and all(piece["type"] == "delta" for piece in pieces) and len(pieces) < 6
    assert "Happy to talk about the split.".startswith("".join(piece["text"] for piece in pieces))
    assert final["chat"][-1] == {"who": "other", "text": "Happy to talk about the split."}
    assert not final["typing"] and final["can_message"]
