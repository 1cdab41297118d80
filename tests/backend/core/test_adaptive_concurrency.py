"""Runners back off when the endpoint's latency grows: a server that answers one request at a time (as
llama-cpp-python's does) is soon asked with fewer calls in flight, and a server that keeps up is asked at full width."""

from __future__ import annotations

import threading
import time

from backend.core.llm import LLMSettings, complete
from backend.core.runs import AdaptiveLimit, run_each
from harness.servers import run_async

UNITS = 32
SERVICE_S = 0.15  # one call's time at the server; the rule's slack (0.5 s) is above any scheduling jitter


def ask_all(server, *, concurrency: int) -> tuple[AdaptiveLimit, list[int]]:
    """Ask ``UNITS`` calls through ``run_each``; return its limit and the number in flight when each call started."""
    settings = LLMSettings(model="m", base_url=server.base_url, max_retries=0, timeout_s=30)
    limit, in_flight, seen = AdaptiveLimit(concurrency), [0], []

    async def work(unit: int):
        in_flight[0] += 1
        seen.append(in_flight[0])
        try:
            return await complete([{"role": "user", "content": f"unit {unit}"}], settings, max_tokens=8)
        finally:
            in_flight[0] -= 1

    run_async(
        run_each(
            range(UNITS), work, concurrency=concurrency, progress=None, on_done=lambda u, r: "answered", limit=limit
        )
    )
    return limit, seen


def test_a_server_answering_one_call_at_a_time_is_asked_with_fewer_calls_in_flight(llm_server):
    one_at_a_time = threading.Lock()

    def serial(request):
        with one_at_a_time:  # each call waits for those ahead of it: latency grows with the calls in flight
            time.sleep(SERVICE_S)
        return "ok"

    llm_server.responder = serial
    limit, seen = ask_all(llm_server, concurrency=8)
    assert max(seen) >= 4  # it widens while calls come back fast
    later = seen[UNITS // 2 :]
    assert limit.lowest <= 4 and sum(later) / len(later) < 6  # and backs off once calls queue (8 without the rule)


def test_a_server_that_keeps_up_is_asked_at_full_width(llm_server):
    llm_server.default_delay_s = SERVICE_S  # every call takes as long, however many are in flight
    limit, seen = ask_all(llm_server, concurrency=8)
    assert limit.lowest == 8 and max(seen) == 8
