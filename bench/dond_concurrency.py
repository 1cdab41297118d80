"""N simulated dond participants play against an LLM at once, over oTree's real websocket; prints wall times.

Each participant sends ``--exchanges`` messages (default 5) and waits for the LLM's reply each time; the local
OpenAI-compatible test server answers every call after ``--latency`` seconds (default 1). Ideal wall time =
exchanges × latency (every participant's calls overlap perfectly). The same load is then run with the model call
made synchronously (session key ``llm_blocking=True``, what a synchronous live method would do) for
``--sync-participants`` participants (default 5), and extrapolated to N. Target: async within 1.3× of ideal.

It also measures oTree's own floor for this load: a throwaway project whose only app has an async live method that
stores nothing and calls no model. Per message it starts a timer of ``--latency`` seconds and sends what a streamed
exchange must at least send: the echo of the message, one piece and the reply (``3 sends``); then the same with the
reply only (``1 send``). dond cannot be faster than the first.

Run: ``python bench/dond_concurrency.py [--participants 100] [--exchanges 5] [--latency 1.0] [--no-floor]
[--baseline REV]`` (``--baseline``: the async load also on the project as it was at git REV, for before/after in one
run; the server's CPU time per exchange is printed for both)
(``--server prodserver`` to measure oTree's production server; the default is the devserver the tests use).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import signal
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.core.llm.fake_server import FakeOpenAIServer  # noqa: E402
from bench.annotation_load import checkout, server_cpu_seconds, start_profiler  # noqa: E402
from harness.dond_live_client import advance_all, on_bargain, play_all  # noqa: E402
from harness.servers import (  # noqa: E402
    app_source,
    base_env,
    create_session,
    project_with_app,
    running_server,
    session_start_links,
)

FLOOR_APP = app_source(
    "live_floor",
    doc="Benchmark floor: an async live method that stores nothing and calls no model.",
    preamble="import asyncio\n",
    body="""\
REPLIES = {}  # replies so far per participant, in memory


def state(replies, *, typing=False):
    return {"type": "state", "typing": typing, "chat": [{"who": "other", "text": "Fine."}] * replies}


async def live_floor(player, data):
    config = player.session.config
    key, replies = player.id_in_group, REPLIES.get(player.participant_id, 0)
    model = asyncio.ensure_future(asyncio.sleep(config["floor_latency_s"]))  # under way before the echo
    if config["floor_sends"] >= 3:
        yield {key: state(replies, typing=True)}
    await model
    if config["floor_sends"] >= 2:
        yield {key: {"type": "delta", "text": "Fine."}}
    REPLIES[player.participant_id] = replies + 1
    yield {key: state(replies + 1)}


class Bargain(Page):
    live_method = live_floor


page_sequence = [Bargain]
""",
)

FLOOR_PAGE = """\
{% extends "global/Page.html" %}
{% block content %}<p>Benchmark floor.</p>{% endblock %}
"""


def measure(server_url, participants, exchanges, *, pid=None, cpu=None, profile="", **config):
    """Wall time of the exchanges and each reply's time; with ``pid``, the server's CPU seconds during the exchanges
    are appended to ``cpu`` (session creation and the pages before the chat are left out); ``profile``: a file for
    py-spy's raw stacks of the server during the exchanges."""
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
    profiler = start_profiler(pid, Path(profile)) if profile and pid else None
    before = server_cpu_seconds(pid) if pid else 0.0
    wall = asyncio.run(play_all(players, exchanges))
    if pid:
        cpu.append(server_cpu_seconds(pid) - before)
    if profiler:
        profiler.send_signal(signal.SIGINT)
        profiler.wait(timeout=60)
    replies = [seconds for player in players for seconds in player.reply_times]
    return wall, replies


def floor_project() -> Path:
    """A scratch copy of the project with the floor app added (its settings add the ``live_floor`` config)."""
    return project_with_app("live_floor", {"__init__.py": FLOOR_APP, "Bargain.html": FLOOR_PAGE}, prefix="otree-floor-")


def measure_floor(server_url, participants, exchanges, latency, sends):
    session = create_session(server_url, "live_floor", participants, floor_latency_s=latency, floor_sends=sends)

    def arrive(link):  # the floor app's only page is called Bargain, so dond's client finds its live URL
        page = requests.get(link, timeout=60)
        return on_bargain(page.url, page.text)

    with ThreadPoolExecutor(16) as pool:
        players = list(pool.map(arrive, session_start_links(server_url, session["code"])))
    return asyncio.run(play_all(players, exchanges))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=100)
    parser.add_argument("--exchanges", type=int, default=5)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds before each model reply")
    parser.add_argument("--sync-participants", type=int, default=5)
    parser.add_argument("--server", choices=["devserver", "prodserver"], default="devserver")
    parser.add_argument("--baseline", default="", help="git revision: also run the async load on dond as it was there")
    parser.add_argument("--no-floor", action="store_true", help="skip the measurement of oTree's own floor")
    parser.add_argument("--profile", default="", help="a file: py-spy's raw stacks of the server during the exchanges")
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
            cpu = []
            wall, replies = measure(
                server.url, args.participants, args.exchanges, pid=server.process.pid, cpu=cpu, profile=args.profile
            )
            in_flight = llm.max_in_flight
            sync_wall, sync_replies = measure(server.url, args.sync_participants, args.exchanges, llm_blocking=True)
        if args.baseline:
            project = checkout(args.baseline)
            with running_server(kind=args.server, env=env, folder=project) as server:
                measure(server.url, 1, 1)
                base_wall, _ = measure(server.url, args.participants, args.exchanges, pid=server.process.pid, cpu=cpu)
            shutil.rmtree(project, ignore_errors=True)
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
    exchanges = args.participants * args.exchanges
    print(f"    server CPU during the exchanges: {1000 * cpu[0] / exchanges:.1f} ms per exchange")
    if args.baseline:
        print(
            f"  the same on {args.baseline}: {base_wall:8.2f} s   = {base_wall / ideal:.2f} x ideal; server CPU "
            f"{1000 * cpu[1] / exchanges:.1f} ms per exchange (now {cpu[0] / cpu[1]:.2f}x of it)"
        )
    print(
        f"  blocking call, {args.sync_participants} participants       {sync_wall:8.2f} s   "
        f"(median reply {statistics.median(sync_replies):.2f} s)"
    )
    print(
        f"  blocking call, extrapolated to {args.participants:<4d}  {extrapolated:8.2f} s   "
        f"= {extrapolated / ideal:.1f} x ideal, {extrapolated / wall:.0f} x the async wall time"
    )
    if not args.no_floor:
        floors = {}
        with running_server(kind=args.server, env=base_env(), folder=floor_project()) as server:
            measure_floor(server.url, 1, 1, args.latency, 3)  # warm-up
            for sends in (3, 1):
                floors[sends] = measure_floor(server.url, args.participants, args.exchanges, args.latency, sends)
        print("  oTree's floor: a live method that stores nothing and calls no model, same load")
        for sends, floor_wall in floors.items():
            label = "3 sends (echo, piece, reply)" if sends == 3 else "1 send (reply only)"
            print(f"    {label:34s} {floor_wall:8.2f} s   = {floor_wall / ideal:.2f} x ideal")
    return 0 if wall <= 1.3 * ideal else 1


if __name__ == "__main__":
    started = time.monotonic()
    code = main()
    print(f"  (benchmark ran {time.monotonic() - started:.0f} s)")
    sys.exit(code)
