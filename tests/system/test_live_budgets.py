"""Live-socket budgets (lab_server/budgets.py), tried as issue 23's flood against a production-mode server.

- a participant on the Bargain page sends 60 pings at once: the socket is closed (1008) after its burst, a new socket
  of the same participant is refused at the handshake while it keeps trying, and a neighbour's page and socket work;
- a few messages (an honest page's burst) are all answered and the socket stays open;
- four participants on the Pairing page (a synchronous live method: oTree runs it under its global page lock), six
  sockets each, flood pings and read none of the replies: a neighbour's page still loads (oTree's replies to a
  closing socket, or to one whose client reads nothing, had held that lock for 10-30 s).

Speed figures: ``bench/live_flood.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

import pytest
import requests
import websockets

from bench.live_flood import on_pairing
from harness.dond_live_client import advance_to_bargain
from harness.servers import (
    create_session,
    run_async,
    session_start_links,
)

pytestmark = pytest.mark.slow

PING = json.dumps({"type": "ping"})


@pytest.fixture(scope="module")
def server(production_server):
    """The production-mode server the suite shares (tests/conftest.py): these tests use only their own sessions."""
    return production_server


def _bargainers(server, count: int):
    session = create_session(server.url, "dond_llm", count)
    return [advance_to_bargain(link) for link in session_start_links(server.url, session["code"])]


async def _close_code(socket, *, within_s: float = 60) -> int | None:
    """Read what the server sends until it closes the socket; its close code (None: still open after ``within_s``)."""
    try:
        async with asyncio.timeout(within_s):
            async for _ in socket:
                pass
    except TimeoutError:
        return None
    except websockets.exceptions.ConnectionClosed:  # closed with a code other than 1000
        pass
    return socket.close_code


def test_a_flood_of_live_messages_closes_the_socket_and_refuses_new_ones(server):
    flooder, neighbour = _bargainers(server, 2)

    async def scenario():
        socket = await websockets.connect(flooder.live_url, open_timeout=30)
        with contextlib.suppress(websockets.exceptions.ConnectionClosed):  # closed while still sending
            for _ in range(60):
                await socket.send(PING)
                await asyncio.sleep(0.01)  # lets the client read the server's close
        assert await _close_code(socket) == 1008
        # It keeps trying: refused at the handshake, before oTree runs (the budget refills by one a second, and each
        # try costs one, so nearly every try is refused).
        refusals = 0
        for _ in range(20):
            try:
                await (await websockets.connect(flooder.live_url, open_timeout=30)).close()
            except websockets.exceptions.InvalidStatusCode as refused:
                assert refused.status_code == 403
                refusals += 1
        assert refusals >= 15, f"only {refusals} of 20 handshakes were refused"
        # The neighbour is served.
        page = await asyncio.to_thread(requests.get, neighbour.page_url, timeout=30)
        assert page.status_code == 200 and "/Bargain/" in page.url
        async with websockets.connect(neighbour.live_url, open_timeout=30) as socket:
            await socket.send(json.dumps({"type": "load"}))
            assert "chat" in json.loads(await asyncio.wait_for(socket.recv(), 30))["live_method_payload"]

    run_async(scenario())


def test_an_honest_burst_is_answered_and_the_socket_stays_open(server):
    [person] = _bargainers(server, 1)

    async def scenario():
        async with websockets.connect(person.live_url, open_timeout=30) as socket:
            for _ in range(5):  # opening the page, a message, a proposal and pings: a few at once
                await socket.send(json.dumps({"type": "load"}))
                assert "chat" in json.loads(await asyncio.wait_for(socket.recv(), 30))["live_method_payload"]
            assert await _close_code(socket, within_s=2) is None

    run_async(scenario())


def test_flooders_who_read_nothing_do_not_stall_a_neighbours_page(server):
    session = create_session(server.url, "dond_human", 4)
    urls = [on_pairing(link) for link in session_start_links(server.url, session["code"])]
    [neighbour] = _bargainers(server, 1)

    async def flood(url: str, until: float) -> None:
        while time.monotonic() < until:
            try:
                async with websockets.connect(url, open_timeout=10) as socket:
                    while time.monotonic() < until:
                        await socket.send(PING)
                        await asyncio.sleep(0)
            except (TimeoutError, OSError, websockets.exceptions.WebSocketException):
                await asyncio.sleep(0.05)

    async def scenario():
        until = time.monotonic() + 20
        flooders = asyncio.gather(*(flood(url, until) for url in urls for _ in range(6)))
        await asyncio.sleep(5)
        slowest = 0.0
        for _ in range(5):
            began = time.monotonic()
            page = await asyncio.to_thread(requests.get, neighbour.page_url, timeout=60)
            slowest = max(slowest, time.monotonic() - began)
            assert page.status_code == 200 and "/Bargain/" in page.url
            await asyncio.sleep(1)
        await flooders
        # Generous: the stalls this guards against lasted 10-30 s (websockets' close timeout, a full buffer).
        assert slowest < 5, f"the neighbour's page took {slowest:.1f} s during the flood"

    run_async(scenario())


# One rule for live messages (issue 36, docs/decisions/0004-one-limit-on-live-messages.md): the session key
# live_messages_per_minute sets the server's budget for that session's participants, and a message over it is
# answered on the page (a refusal in the participant's language), not with a closed socket.


def _bargainer_of(server, **config):
    session = create_session(server.url, "dond_llm", 1, first_mover="human", **config)
    [link] = session_start_links(server.url, session["code"])
    return advance_to_bargain(link)


async def _pings(socket, count: int) -> list[dict]:
    """Send ``count`` pings at once; one answer per ping (a state, or a refusal)."""
    for _ in range(count):
        await socket.send(PING)
    answers = []
    while len(answers) < count:
        payload = json.loads(await asyncio.wait_for(socket.recv(), 30)).get("live_method_payload") or {}
        if payload.get("type") in ("state", "rejected"):
            answers.append(payload)
    return answers


def test_a_sessions_live_messages_per_minute_raises_the_servers_budget(server):
    person = _bargainer_of(server, live_messages_per_minute=600)  # bursts of 100; the server's own: 10

    async def scenario():
        async with websockets.connect(person.live_url, open_timeout=30) as socket:
            answers = await _pings(socket, 30)
            assert [answer["type"] for answer in answers] == ["state"] * 30
            assert await _close_code(socket, within_s=2) is None

    run_async(scenario())


def test_a_message_over_the_sessions_budget_is_refused_politely_in_the_participants_language(server):
    person = _bargainer_of(server, live_messages_per_minute=12, language="de")  # bursts of 5: the socket and 4

    async def scenario():
        async with websockets.connect(person.live_url, open_timeout=30) as socket:
            answers = await _pings(socket, 8)
            assert [answer["type"] for answer in answers].count("state") == 4
            refused = [answer for answer in answers if answer["type"] == "rejected"]
            assert len(refused) == 4 and all(answer["kind"] == "rate_limited" for answer in refused)
            assert all("Sie senden zu schnell. Bitte warten Sie" in answer["message"] for answer in refused)
            assert await _close_code(socket, within_s=2) is None  # an honest fast typist keeps the page's socket
            # A client that keeps sending after ten refusals in a row is closed as a flood.
            with contextlib.suppress(websockets.exceptions.ConnectionClosed):
                for _ in range(20):
                    await socket.send(PING)
                    await asyncio.sleep(0.01)
            assert await _close_code(socket) == 1008

    run_async(scenario())
