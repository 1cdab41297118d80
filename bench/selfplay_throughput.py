"""Model-vs-model throughput: DoND games per minute at several concurrencies against the local test server.

Every model call is answered by the local OpenAI-compatible server (``backend/core/llm/fake_server.py``) after
``--latency`` seconds (default 0.5). The scripted replies give every game the same length: each player sends
``--messages`` chat messages (default 2), then both propose (6 calls per game). Each concurrency c plays
``max(2c, --min-games)`` games (one model: 2 games per instance) through ``backend.dond.selfplay.run_selfplay`` and
prints games per minute and the speed-up over concurrency 1. Target: near-linear, at least 20x at 32.

Run: ``python bench/selfplay_throughput.py [--latency 0.5] [--concurrency 1 8 32]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.core.llm.fake_server import FakeOpenAIServer, Reply  # noqa: E402
from backend.dond.selfplay import run_selfplay  # noqa: E402


def responder(messages: int, latency: float):
    def respond(request):
        spoken = sum(1 for message in request["messages"] if message["role"] == "assistant")
        text = "Which items matter most to you?" if spoken < messages else "[Proposal: ]"
        return Reply(text=text, delay_s=latency)

    return respond


def measure(server: FakeOpenAIServer, concurrency: int, games: int, messages: int) -> tuple[float, int, int]:
    server.clear()
    server.max_in_flight = 0
    with tempfile.TemporaryDirectory(prefix="selfplay-bench-") as out:
        started = time.monotonic()
        summary = asyncio.run(
            run_selfplay(
                model_a="bench-model",
                model_b="bench-model",
                instances=max(games // 2, 1),
                mode="semi",
                language="en",
                out_dir=out,
                concurrency=concurrency,
                max_messages=messages,
                settings_options=dict(base_url=server.base_url, max_retries=0, timeout_s=30),
            )
        )
        seconds = time.monotonic() - started
    return seconds, summary.played, len(server.requests)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.5, help="seconds before each model reply")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--messages", type=int, default=2, help="chat messages per player before proposing")
    parser.add_argument("--min-games", type=int, default=8)
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-key")
    os.environ.setdefault("LLM_MAX_CONCURRENCY", str(max(args.concurrency) * 2))
    server = FakeOpenAIServer(responder=responder(args.messages, args.latency))
    server.start()
    calls_per_game = 2 * args.messages + 2
    print(
        f"selfplay throughput: model latency {args.latency:.2f} s, {calls_per_game} calls per game "
        f"(ideal {60 / (calls_per_game * args.latency):.1f} games/min per concurrent game), {os.cpu_count()} cores"
    )
    base = None
    try:
        for concurrency in args.concurrency:
            games = max(2 * concurrency, args.min_games)
            seconds, played, calls = measure(server, concurrency, games, args.messages)
            per_minute = 60 * played / seconds
            base = base or per_minute
            print(
                f"  concurrency {concurrency:>3}: {played:>4} games, {calls:>5} calls in {seconds:6.1f} s = "
                f"{per_minute:7.1f} games/min, speed-up {per_minute / base:5.1f}x, "
                f"calls in flight at most {server.max_in_flight}"
            )
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
