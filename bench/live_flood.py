"""Live-socket flood (issue 23, finding 3): does a neighbour's page stay fast while others flood their sockets?

One ``otree prodserver`` (production mode, as a lab deploys it) on SQLite (or TEST_DATABASE_URL), the offline
``scripted`` model. A neighbour (a dond_llm participant on the Bargain page) reloads its page every 50 ms, timed by
the client, through three phases: quiet (``--quiet`` s), flood (``--flood`` s), after (3 s). Two floods:

* ``ping``: four dond_human participants on the Pairing page (whose live method is synchronous, so oTree runs it
  under its global page lock), six sockets each, send ``{"type": "ping"}`` as fast as the server takes them, and
  reopen every socket the server closes (as an attacker would);
* ``big``: one dond_llm participant on Bargain sends 500 KB frames as fast as the server takes them, likewise.

Printed per flood: the neighbour's p50/p95/max in each phase, the frames the flooders got sent, the server's peak
memory (VmRSS of its process tree). Target: flood p95 within 2x quiet p95. ``--no-budget`` sets the live budgets of
``lab_server/budgets.py`` out of reach (what the server did before them). Exit 0 when every flood meets the target.

Run: ``python bench/live_flood.py [--quiet 8] [--flood 15] [--no-budget] [--only ping|big]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import re
import statistics
import sys
import threading
import time
from pathlib import Path

import requests
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.probes import ServerProbe  # noqa: E402
from harness.dond_live_client import advance_to_bargain  # noqa: E402
from harness.servers import (  # noqa: E402
    base_env,
    create_session,
    deployment_mode,
    own_database,
    running_server,
    session_start_links,
)

SOCKETS_EACH = 6
FLOODERS = 4
BIG_FRAME = json.dumps({"type": "ping", "pad": "x" * 500_000})


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def on_pairing(link: str) -> str:
    """Consent by HTTP; the live socket URL of the participant's Pairing page."""
    http = requests.Session()
    page = http.get(link, timeout=60)
    page = http.post(page.url, data={"consent_given": "True"}, timeout=60)
    if "/Pairing/" not in page.url:
        raise RuntimeError(f"expected the Pairing page, got {page.url}")
    live_path = next(url for url in re.findall(r'data-socket-url="([^"]+)"', page.text) if url.startswith("/live"))
    return page.url.split("/p/")[0].replace("http", "ws", 1) + live_path


class Neighbour(threading.Thread):
    """Reloads one page every 50 ms and records (phase, seconds) for each request."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url, self.phase, self.times = url, "quiet", []
        self.stopped = threading.Event()

    def run(self) -> None:
        http = requests.Session()
        while not self.stopped.is_set():
            start = time.monotonic()
            try:
                http.get(self.url, timeout=60).raise_for_status()
            except requests.RequestException:
                self.times.append((self.phase, 60.0))
            else:
                self.times.append((self.phase, time.monotonic() - start))
            time.sleep(0.05)


async def flood_socket(url: str, frame: str, until: float, counts: dict) -> None:
    """Send ``frame`` on a socket to ``url`` as fast as the server takes it; reopen it whenever it is closed."""
    while time.monotonic() < until:
        try:
            async with websockets.connect(url, open_timeout=10, max_size=None) as socket:
                counts["opened"] += 1
                while time.monotonic() < until:
                    await socket.send(frame)
                    counts["sent"] += 1
                    await asyncio.sleep(0)  # let the client read what the server says (a close, above all)
        except (TimeoutError, OSError, websockets.exceptions.WebSocketException):
            counts["closed or refused"] += 1
            await asyncio.sleep(0.01)


def flood(urls: list[str], frame: str, seconds: float, out) -> None:
    """The flooders, in a process of their own (so they do not slow the neighbour's timing thread)."""
    counts = {"opened": 0, "sent": 0, "closed or refused": 0}

    async def all_sockets():
        until = time.monotonic() + seconds
        await asyncio.gather(*(flood_socket(url, frame, until, counts) for url in urls))

    asyncio.run(all_sockets())
    out.put(counts)


def run_flood(server, name: str, args) -> bool:
    neighbour_session = create_session(server.url, "dond_llm", 1)
    neighbour_page = advance_to_bargain(session_start_links(server.url, neighbour_session["code"])[0]).page_url
    if name == "ping":
        session = create_session(server.url, "dond_human", FLOODERS)
        urls = [on_pairing(link) for link in session_start_links(server.url, session["code"])]
        urls, frame = [url for url in urls for _ in range(SOCKETS_EACH)], json.dumps({"type": "ping"})
    else:
        session = create_session(server.url, "dond_llm", 1)
        urls = [advance_to_bargain(session_start_links(server.url, session["code"])[0]).live_url]
        frame = BIG_FRAME
    memory = ServerProbe(server.process.pid)
    memory.start()
    neighbour = Neighbour(neighbour_page)
    neighbour.start()
    time.sleep(args.quiet)
    neighbour.phase = "flood"
    results = multiprocessing.Queue()
    flooders = multiprocessing.Process(target=flood, args=(urls, frame, args.flood, results))
    flooders.start()
    counts = results.get()
    flooders.join()
    neighbour.phase = "after"
    time.sleep(3)
    neighbour.stopped.set()
    neighbour.join()
    memory.stop()
    figures = {}
    for phase in ("quiet", "flood", "after"):
        times = [seconds * 1000 for which, seconds in neighbour.times if which == phase]
        figures[phase] = (statistics.median(times), percentile(times, 0.95), max(times), len(times))
    print(
        f"\n{name} flood ({len(urls)} sockets, {args.flood:.0f} s): {counts}; server peak {memory.peak_kb // 1024} MB"
    )
    for phase, (p50, p95, peak, n) in figures.items():
        print(f"  neighbour {phase:5}: p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  max {peak:7.1f} ms  ({n} requests)")
    held = figures["flood"][1] <= 2 * figures["quiet"][1]
    print(
        f"  flood p95 / quiet p95 = {figures['flood'][1] / figures['quiet'][1]:.2f} ({'held' if held else 'NOT held'})"
    )
    return held


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", type=float, default=8.0)
    parser.add_argument("--flood", type=float, default=15.0)
    parser.add_argument("--no-budget", action="store_true")
    parser.add_argument("--only", choices=("ping", "big"))
    args = parser.parse_args()
    extra = {}
    if args.no_budget:
        extra = dict(
            LAB_LIVE_MESSAGES_PER_MINUTE="1e12",
            LAB_LIVE_MESSAGES_PER_ADDRESS_PER_MINUTE="1e12",
            LAB_LIVE_BYTES_PER_MINUTE="1e15",
        )
    # The neighbour reloads every 50 ms to measure its page times: more than a participant's page budget allows.
    extra["LAB_PAGE_REQUESTS_PER_MINUTE"] = "1e9"
    env = deployment_mode(base_env(LAB_SOCKETS_PER_PARTICIPANT=str(SOCKETS_EACH), **extra))
    held = True
    with own_database(env) as env, running_server(kind="prodserver", env=env) as server:
        for name in ("ping", "big"):
            if args.only in (None, name):
                held = run_flood(server, name, args) and held
    return 0 if held else 1


if __name__ == "__main__":
    raise SystemExit(main())
