"""Simulated dond participants over oTree's real websocket (for the concurrency test and bench/dond_concurrency.py).

Each participant is advanced to the Bargain page with plain HTTP requests, then talks to the page's live method
through ``/live`` exactly as the browser's ``liveSend`` does.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import requests
import websockets

from harness.servers import session_start_links


@dataclass
class Participant:
    page_url: str
    live_url: str
    reply_times: list[float] = field(default_factory=list)  # seconds from sending a message to the LLM's reply
    first_delta_times: list[float] = field(default_factory=list)


def advance_to_bargain(link: str) -> Participant:
    """Consent and instructions by HTTP; returns the participant on the Bargain page with its live URL."""
    session = requests.Session()
    page = session.get(link, timeout=60)
    page = session.post(page.url, data={"consent_given": "True"}, timeout=60)
    page = session.post(page.url, data={}, timeout=60)
    return on_bargain(page.url, page.text)


def on_bargain(page_url: str, html: str) -> Participant:
    """The participant whose browser shows the Bargain page ``html`` at ``page_url``, with its live URL."""
    if "/Bargain/" not in page_url:
        raise RuntimeError(f"expected the Bargain page, got {page_url}")
    live_path = next(url for url in re.findall(r'data-socket-url="([^"]+)"', html) if url.startswith("/live"))
    return Participant(page_url=page_url, live_url=page_url.split("/p/")[0].replace("http", "ws", 1) + live_path)


def advance_all(server_url: str, session_code: str, *, threads: int = 16) -> list[Participant]:
    links = session_start_links(server_url, session_code)
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(advance_to_bargain, links))


def _other_messages(payload: dict) -> int:
    return sum(1 for item in payload.get("chat", []) if item.get("who") == "other")


async def play(
    participant: Participant,
    exchanges: int,
    *,
    start: asyncio.Event | None = None,
    pause: Callable[[], Awaitable[None]] | None = None,
) -> Participant:
    """Send ``exchanges`` messages, each time waiting until the LLM's reply is stored and shown.

    ``pause`` (optional) is awaited between a reply and the next message: the person reading and typing.
    """
    async with websockets.connect(participant.live_url, max_size=None, open_timeout=60) as socket:
        if start is not None:
            await start.wait()
        for number in range(exchanges):
            if pause is not None and number:
                await pause()
            sent = time.monotonic()
            first_delta = None
            await socket.send(json.dumps({"type": "message", "text": f"Message {number + 1}: what do you need?"}))
            while True:
                data = json.loads(await asyncio.wait_for(socket.recv(), timeout=120))
                payload = data.get("live_method_payload") or {}
                if payload.get("type") == "delta" and first_delta is None:
                    first_delta = time.monotonic() - sent
                if payload.get("type") == "rejected":
                    raise RuntimeError(f"message rejected: {payload}")
                if payload.get("type") == "state" and _other_messages(payload) >= number + 1:
                    break
            participant.reply_times.append(time.monotonic() - sent)
            if first_delta is not None:
                participant.first_delta_times.append(first_delta)
    return participant


async def play_all(participants: list[Participant], exchanges: int) -> float:
    """All participants at once; returns the wall time in seconds."""
    start = asyncio.Event()
    tasks = [asyncio.create_task(play(p, exchanges, start=start)) for p in participants]
    await asyncio.sleep(0.5)  # let every socket connect before the clock starts
    began = time.monotonic()
    start.set()
    await asyncio.gather(*tasks)
    return time.monotonic() - began
