"""The model endpoint's API key never leaves the server: not in pages, exports, admin pages, error pages or the log.

A game runs through every way an LLM call can go wrong (429 with Retry-After, 500, garbage, a dropped stream,
then a good reply); then every page, export and error page is fetched and searched for the key, and so is the
server's whole log. The local OpenAI-compatible server is the only place that may see it, in the request header.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json

import requests
import websockets

from backend.core.llm.fake_server import Reply
from harness.dond_live_client import advance_all
from harness.servers import base_env, create_session, own_database, run_async, running_server

API_KEY = "sk-live-SECRET-7f3a9c1e5b"  # what must never appear outside the request to the endpoint


async def exchange(live_url: str, texts: list[str]) -> list[str]:
    """Send each text and wait until the model has answered (or the game ended); return the raw socket frames."""
    frames = []
    async with websockets.connect(live_url, open_timeout=60) as socket:
        for number, text in enumerate(texts, start=1):
            await socket.send(json.dumps({"type": "message", "text": text}))
            while True:
                frame = await asyncio.wait_for(socket.recv(), timeout=120)
                frames.append(frame)
                payload = json.loads(frame).get("live_method_payload") or {}
                others = [item for item in payload.get("chat", []) if item.get("who") == "other"]
                if payload.get("type") == "rejected" or (payload.get("type") == "state" and len(others) >= number):
                    break
                if payload.get("type") == "state" and not payload.get("can_message", True):
                    break
    return frames


def test_the_api_key_appears_in_no_page_export_error_or_log_line(llm_server):
    env = base_env(OPENAI_BASE_URL=llm_server.base_url, OPENAI_API_KEY=API_KEY)
    with own_database(env) as env, running_server(env=env) as server:
        session = create_session(
            server.url, "dond_llm", 1, llm_model="test-model", first_mover="human", llm_max_retries=1, llm_timeout_s=5
        )
        [player] = advance_all(server.url, session["code"])
        llm_server.script(
            Reply(status=429, retry_after=0.1),
            Reply(status=500),  # the call fails after its one retry: a stored violation, the model acts again
            Reply(garbage="{this is not json"),
            Reply(text="A long answer that breaks off here", drop_after_chunks=2),  # shown, then cut: not retried
            "Fine: books for you, the rest for me.",
        )
        seen = run_async(exchange(player.live_url, ["Books for me?", "And now?", "Deal?"]))

        urls = [
            player.page_url,
            f"{server.url}/SessionMonitor/{session['code']}",
            f"{server.url}/SessionData/{session['code']}",
            f"{server.url}/AdminReport/{session['code']}",
            f"{server.url}/SessionStartLinks/{session['code']}",
            f"{server.url}/api/export_wide?session_code={session['code']}",
            f"{server.url}/api/export_app_custom?app=dond&function_name=custom_export_dond_games",
            f"{server.url}/api/export_app_custom?app=dond&function_name=custom_export_dond_events",
            f"{server.url}/p/NOSUCHCODE/dond/Bargain/3",  # error pages
            f"{server.url}/SessionMonitor/nosuchsession",
            f"{server.url}/demo",
        ]
        for url in urls:
            response = requests.get(url, timeout=60)
            assert response.ok == ("nosuch" not in url.lower()), (url, response.status_code)
            assert API_KEY not in response.text, url
            seen.append(response.text)
        events = list(csv.DictReader(io.StringIO(requests.get(urls[7], timeout=60).content.decode("utf-8-sig"))))
        failures = {row["llm_error_kind"] for row in events if row["kind"] == "llm_call"} - {""}
        assert failures == {"server_error", "interrupted"}  # what the player's turns ran into, stored, key-free
        log = server.log()
    assert log.count("chat/completions") >= 5  # the server logged every call to the endpoint
    assert API_KEY not in log
    assert all(API_KEY not in text for text in seen)
