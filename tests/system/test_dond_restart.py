"""A DoND game survives the server process being killed (SIGKILL) while the LLM's reply is streaming.

The person's message is stored before the model is called, the model's reply only once it is complete, so after a
restart on the same database the game state (replayed from the stored events) says the LLM is still to act: the
page's next live message retries the turn. Nothing is lost, nothing is stored twice.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal

import pytest
import requests
import websockets

from backend.core.llm.fake_server import Reply
from harness.dond_live_client import advance_to_bargain
from harness.servers import (
    base_env,
    create_session,
    export_rows,
    own_database,
    run_async,
    scratch_project,
    session_start_links,
    start_server,
)

LONG_REPLY = " ".join(f"word{i}" for i in range(40)) + " Shall we split the books?"


async def send_and_collect(live_url: str, message: dict, *, until, timeout_s: float = 60) -> list[dict]:
    """Send one live message and collect the payloads until ``until(payload)`` is true."""
    received = []
    async with websockets.connect(live_url, max_size=None, open_timeout=30) as socket:
        await socket.send(json.dumps(message))
        while True:
            data = json.loads(await asyncio.wait_for(socket.recv(), timeout=timeout_s))
            payload = data.get("live_method_payload") or {}
            received.append(payload)
            if until(payload):
                return received


def other_messages(payload: dict) -> list[str]:
    return [item.get("text", "") for item in payload.get("chat", []) if item.get("who") == "other"]


@pytest.mark.slow
def test_a_game_killed_mid_reply_resumes_and_the_turn_is_retried_once(llm_server):
    folder = scratch_project("otree-dond-restart-")
    env = base_env(OPENAI_BASE_URL=llm_server.base_url, OPENAI_API_KEY="sk-test-not-a-real-key")
    if not env.get("DATABASE_URL"):
        env["DATABASE_URL"] = f"sqlite:///{folder}/restart.sqlite3"  # a file: the data must outlive the process
    with own_database(env) as env:
        server = start_server(kind="prodserver", env=env, folder=folder)
        port = int(server.url.rsplit(":", 1)[1])
        try:
            session = create_session(server.url, "dond_llm", 1, llm_model="test-model", first_mover="human")
            participant = advance_to_bargain(session_start_links(server.url, session["code"])[0])
            llm_server.script(Reply(text=LONG_REPLY, delay_s=0.2, chunk_delay_s=0.2))  # ~9 s of streaming

            def first_piece(payload):  # the model's reply has started to stream: kill the server now
                if payload.get("type") == "delta":
                    server.stop(signal.SIGKILL)
                    return True
                return False

            run_async(
                send_and_collect(
                    participant.live_url, {"type": "message", "text": "Hi, books for me?"}, until=first_piece
                )
            )
            assert server.process.poll() is not None  # really gone, mid-reply
            assert len(llm_server.requests) == 1

            server = start_server(kind="prodserver", env=env, folder=folder, port=port)
            llm_server.script("Fine, take the books. I keep the rest.")
            page = requests.get(participant.page_url, timeout=30)  # the person reloads: same page, same chat
            assert page.status_code == 200 and "/Bargain/" in page.url

            payloads = run_async(
                send_and_collect(participant.live_url, {"type": "load"}, until=lambda p: bool(other_messages(p)))
            )
            assert other_messages(payloads[-1]) == ["Fine, take the books. I keep the rest."]
            assert len(llm_server.requests) == 2  # the interrupted call, then one retry

            events = export_rows(server.url, "dond", "custom_export_dond_events", session_code=session["code"])
            messages = [(e["actor"], e["text"]) for e in events if e["kind"] == "message"]
            assert messages == [("human", "Hi, books for me?"), ("llm", "Fine, take the books. I keep the rest.")]
            calls = [e for e in events if e["kind"] == "llm_call"]
            assert len(calls) == 1 and "Fine, take the books" in calls[0]["llm_reply"]  # the killed call left no row
        finally:
            server.stop()
    shutil.rmtree(folder, ignore_errors=True)
