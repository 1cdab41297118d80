"""N simulated dond participants play against an LLM at once, over oTree's real websocket; prints wall times.

Each participant sends ``--exchanges`` messages (default 5) and waits for the LLM's reply each time; the local
OpenAI-compatible test server answers every call after ``--latency`` seconds (default 1). Ideal wall time =
exchanges × latency (every participant's calls overlap perfectly). The same load is then run with the model call
made synchronously (session key ``llm_blocking=True``, what a synchronous live method would do) for
``--sync-participants`` participants (default 5), and extrapolated to N. Target: async within 1.3× of ideal.

Run: ``python bench/dond_concurrency.py [--participants 100] [--exchanges 5] [--latency 1.0]``
(``--server prodserver`` to measure oTree's production server; the default is the devserver the tests use).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.llm.fake_server import FakeOpenAIServer  # noqa: E402
from tests.dond_live_client import advance_all, play_all  # noqa: E402
from tests.harness import base_env, create_session, running_server  # noqa: E402


def measure(server_url, participants, exchanges, **config):
    session = create_session(
        server_url,
        "dond_llm",
        participants,
        llm_model="test-model",
        first_mover="human",
        max_messages=max(exchanges, 5),
        **config,
    )
    players = advance_all(server_url, session["code"])
    wall = asyncio.run(play_all(players, exchanges))
    replies = [seconds for player in players for seconds in player.reply_times]
    return wall, replies


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=100)
    parser.add_argument("--exchanges", type=int, default=5)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds before each model reply")
    parser.add_argument("--sync-participants", type=int, default=5)
    parser.add_argument("--server", choices=["devserver", "prodserver"], default="devserver")
    args = parser.parse_args(argv)

    llm = FakeOpenAIServer()
    llm.default_delay_s = args.latency
    llm.start()
    env = base_env(
        OPENAI_BASE_URL=llm.base_url,
        OPENAI_API_KEY="sk-bench-not-a-key",
        LLM_MAX_CONCURRENCY=str(max(args.participants, 32)),
    )
    ideal = args.exchanges * args.latency
    try:
        with running_server(kind=args.server, env=env) as server:
            measure(server.url, 1, 1)  # warm-up: first client, first connections
            llm.max_in_flight = 0
            wall, replies = measure(server.url, args.participants, args.exchanges)
            in_flight = llm.max_in_flight
            sync_wall, sync_replies = measure(server.url, args.sync_participants, args.exchanges, llm_blocking=True)
    finally:
        llm.stop()

    extrapolated = sync_wall * args.participants / args.sync_participants
    print(
        f"dond concurrency: {args.participants} participants x {args.exchanges} exchanges, "
        f"model latency {args.latency:.2f} s, oTree {args.server}"
    )
    print(f"  ideal wall time                      {ideal:8.2f} s")
    print(
        f"  async live method (streaming)        {wall:8.2f} s   = {wall / ideal:.2f} x ideal "
        f"(target <= 1.30); model calls in flight at once: {in_flight}"
    )
    print(f"    per reply: median {statistics.median(replies):.2f} s, max {max(replies):.2f} s")
    print(
        f"  blocking call, {args.sync_participants} participants       {sync_wall:8.2f} s   "
        f"(median reply {statistics.median(sync_replies):.2f} s)"
    )
    print(
        f"  blocking call, extrapolated to {args.participants:<4d}  {extrapolated:8.2f} s   "
        f"= {extrapolated / ideal:.1f} x ideal, {extrapolated / wall:.0f} x the async wall time"
    )
    return 0 if wall <= 1.3 * ideal else 1


if __name__ == "__main__":
    started = time.monotonic()
    code = main()
    print(f"  (benchmark ran {time.monotonic() - started:.0f} s)")
    sys.exit(code)
