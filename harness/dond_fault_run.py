"""Many DoND games at once against a model endpoint that fails in every way (test_dond_faults, bench/dond_faults.py).

``FaultyModel`` is a responder for the local OpenAI-compatible server: each call fails with probability
``fault_rate``, the kind drawn evenly from ``FAULT_KINDS`` (seeded), else it answers like a cooperative player: a
chat message on its first turn, an empty proposal (it takes nothing) afterwards. ``play_to_end`` is a person who
sends two messages and then proposes to take nothing, through oTree's real websocket, until the game is over.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import websockets

from backend.core.llm.fake_server import Reply

FAULT_KINDS = ("timeout", "rate_limit", "server_error", "dropped_stream", "garbage")
# What the client stores for a call whose every attempt met the fault (a dropped stream is never retried: its first
# words were shown).
STORED_KIND = {
    "timeout": "timeout",
    "rate_limit": "rate_limit",
    "server_error": "server_error",
    "dropped_stream": "interrupted",
    "garbage": "bad_response",
}


class FaultyModel:
    def __init__(self, *, fault_rate: float, seed: int, timeout_s: float, latency_s: float = 0.2):
        if not 0 <= fault_rate <= 1:
            raise ValueError(f"fault_rate must be between 0 and 1, got {fault_rate}.")
        self.fault_rate = fault_rate
        self.timeout_s = timeout_s
        self.latency_s = latency_s
        self.random = random.Random(seed)
        self.injected: Counter = Counter()
        self.answered = 0
        self._lock = threading.Lock()

    def __call__(self, request: dict) -> Reply:
        with self._lock:
            fault = self.random.choice(FAULT_KINDS) if self.random.random() < self.fault_rate else None
            self.injected[fault or "none"] += 1
        if fault == "timeout":
            return Reply(text="Too late.", delay_s=self.timeout_s + 1.0)
        if fault == "rate_limit":
            return Reply(status=429, retry_after=0.2)
        if fault == "server_error":
            return Reply(status=500)
        if fault == "garbage":
            return Reply(garbage='{"choices": [{"delta": ')
        turns_taken = sum(1 for message in request.get("messages", []) if message.get("role") == "assistant")
        text = "Let us share fairly, I am listening." if turns_taken == 0 else "Agreed. [Proposal: ]"
        if fault == "dropped_stream":
            return Reply(text="Let me think about this offer for a moment", drop_after_chunks=3)
        return Reply(text=text, delay_s=self.latency_s, chunk_delay_s=0.01)


@dataclass
class Outcome:
    finished: bool = False
    seconds: float = 0.0
    rejected: list = field(default_factory=list)
    error: str = ""


def _my_moves(state: dict) -> int:
    return sum(1 for item in state.get("chat", []) if item.get("who") == "me" or item.get("notice") == "you_proposed")


async def play_to_end(live_url: str, *, deadline_s: float) -> Outcome:
    """Two messages, then a proposal to take nothing; each move only when it is the person's turn. Never reloads or
    resends: a participant who would have to is counted as stuck (``finished`` stays False)."""
    outcome, began, sent = Outcome(), time.monotonic(), 0
    try:
        async with websockets.connect(live_url, max_size=None, open_timeout=60) as socket:
            await socket.send(json.dumps({"type": "load"}))
            while time.monotonic() - began < deadline_s:
                remaining = deadline_s - (time.monotonic() - began)
                frame = json.loads(await asyncio.wait_for(socket.recv(), timeout=remaining))
                payload = frame.get("live_method_payload") or {}
                if payload.get("type") == "rejected":
                    outcome.rejected.append(payload.get("message"))
                    break
                if payload.get("type") != "state":
                    continue
                if payload.get("finished"):
                    outcome.finished = True
                    break
                if payload.get("waiting_for_other") or _my_moves(payload) != sent:
                    continue
                if payload.get("can_message") and not payload.get("must_propose") and sent < 2:
                    move = {"type": "message", "text": f"Message {sent + 1}: what matters to you?"}
                else:
                    move = {"type": "proposal", "counts": {}}
                await socket.send(json.dumps(move))
                sent += 1
    except TimeoutError:
        outcome.error = "no answer before the deadline"
    except websockets.WebSocketException as error:
        outcome.error = f"websocket: {error!r}"
    outcome.seconds = time.monotonic() - began
    return outcome


async def play_all_to_end(live_urls: list[str], *, deadline_s: float) -> list[Outcome]:
    return list(await asyncio.gather(*(play_to_end(url, deadline_s=deadline_s) for url in live_urls)))


def summarise(games: list[dict], events: list[dict]) -> dict:
    """Counts the report prints: games by end state, abort reasons, failed calls by kind, attempts made."""
    calls = [row for row in events if row["kind"] == "llm_call"]
    return {
        "games": len(games),
        "finished": sum(row["outcome"] != "" for row in games),
        "aborted": sum(row["aborted"] in ("1", "True") for row in games),
        "abort_reasons": Counter(row["abort_reason"].split(":")[0] for row in games if row["abort_reason"]),
        "calls": len(calls),
        "attempts": sum(int(float(row["attempts"] or 0)) for row in calls),
        "failed_calls": Counter(row["llm_error_kind"] for row in calls if row["llm_error_kind"]),
    }
