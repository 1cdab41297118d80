"""A page's live socket, spoken to as the page's ``liveSend`` does: one JSON frame per message, a state payload back.

The helpers take a ``Person`` (``harness.participants``) or a socket URL.
"""

from __future__ import annotations

import asyncio
import json

import websockets

from harness.servers import run_async


def payload_of(frame: dict) -> dict:
    """What the app's live method sent in ``frame`` (oTree wraps it)."""
    return frame.get("live_method_payload") or {}


async def receive(socket, timeout_s: float = 15) -> dict:
    return json.loads(await asyncio.wait_for(socket.recv(), timeout=timeout_s))


async def send_until(url: str, message, until) -> list[dict]:
    """Send one message as ``liveSend`` does; the frames received until ``until(payload)``."""
    received = []
    async with websockets.connect(url, max_size=None, open_timeout=30) as socket:
        await socket.send(json.dumps(message))
        while True:
            received.append(await receive(socket))
            if until(payload_of(received[-1])):
                return received


async def next_state(socket, log: list) -> dict:
    """Frames until the next state payload (all of them appended to ``log``); returns that payload."""
    while True:
        frame = await receive(socket)
        log.append(frame)
        if payload_of(frame).get("type") == "state":
            return payload_of(frame)


def chat_until_the_model_replies(person, text: str) -> list[dict]:
    """Send ``text`` on the person's Bargain page and wait for the model's reply; returns the chat then shown."""

    async def talk():
        async with websockets.connect(person.live_url(), max_size=None) as socket:
            await socket.send(json.dumps({"type": "message", "text": text}))
            while True:
                chat = payload_of(await receive(socket, timeout_s=60)).get("chat", [])
                if any(item.get("who") == "other" for item in chat):
                    return chat

    return run_async(talk())


def pair_and_start(players: list) -> None:
    """Pair the players in the order given (two by two, as the Pairing page's heartbeat does), then open Bargain."""
    for player in players:
        player.advance_to("Pairing")
    for player in players:
        run_async(send_until(player.live_url(), {"type": "wait"}, until=lambda p: True))
    for player in players:
        player.advance_to("Bargain")
