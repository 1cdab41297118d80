"""Grace beyond capacity: a launch faster than the server can take, through the admission gate (lab_server/admission.py).

Starts ``otree prodserver`` (its own SQLite file, or ``--database-url``), creates a social_eval session for every
arrival and lets them come as Prolific sends them: each arrival opens the session-wide link with a fresh Prolific ID
at ``--rate`` arrivals per second for ``--over`` seconds, and then walks the study at human pace as
``bench/annotation_load.py`` does (consent, instructions, every rating page; ``--pace-scale`` shortens every pause
for a quick run). An arrival shown the waiting page does what the page does: it waits the ``Refresh`` delay and
reloads the URL it names, until it is let in.

Prints, for the participants let in: p50/p95/p99/max of their page steps (the waiting pages are not page steps), the
arrivals let in eventually out of all, how long they waited (p50/p95/max), waiting pages served, and failed requests
(an HTTP error, a reset connection, a page out of place). Target (issue 29): at twice the sustainable arrival rate,
p95 < 300 ms for those let in, every arrival let in, zero failed requests. ``--max-in-flight`` and ``--target-ms``
set the gate's thresholds (``LAB_ADMIT_MAX_IN_FLIGHT``, ``LAB_ADMIT_TARGET_MS``); ``--no-gate`` sets them beyond
reach, for the same run without the gate.

Run: ``python bench/admission.py [--rate 20] [--over 300] [--pace-scale 1] [--max-in-flight 8] [--no-gate]``
(the default is twice the issue's launch, 3,000 arrivals in five minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.social.rubrics import load_rubric  # noqa: E402
from bench.annotation_load import HUMAN_PAGE_SECONDS, form_values, write_episodes  # noqa: E402
from tests.support.harness import base_env, create_session, deployment_mode, rest_headers, start_server  # noqa: E402
from tests.support.participants import Annotator  # noqa: E402


class Arrival(Annotator):
    """An annotator who opens the session-wide link with a Prolific ID and waits on the waiting page if shown it."""

    def __init__(self, link: str, pid: str, *, out: dict) -> None:
        self.waited_s, self.waiting_pages = 0.0, 0
        ids = {"pid": pid, "study_id": "S1", "session_id": "-S1"}
        self.http = requests.Session()
        self.http.cookies.set("study_ids", urllib.parse.quote(json.dumps(ids)))
        self.seen, self.session_code = [], ""
        began = time.perf_counter()
        response = self.http.get(link, params={"participant_label": pid}, timeout=120)
        while "refresh" in response.headers:  # the waiting page: wait as it says, then reload its URL
            response.raise_for_status()
            self.waiting_pages += 1
            out["waiting_pages"].append(1)
            delay, _, url = response.headers["refresh"].partition("; url=")
            time.sleep(float(delay))
            response = self.http.get(urllib.parse.urljoin(response.url, url), timeout=120)
        self.waited_s = time.perf_counter() - began
        self.keep(response)
        if "/p/" not in self.url:
            raise RuntimeError(f"let in, but not on a study page: {self.url}")


def arrive(link: str, *, seed: int, delay: float, pace_scale: float, start: threading.Barrier, out: dict) -> None:
    rng, rubric = random.Random(seed), load_rubric()
    start.wait()
    time.sleep(delay)

    def pause(page: str) -> None:
        time.sleep(pace_scale * rng.uniform(0.5, 1.5) * HUMAN_PAGE_SECONDS.get(page, 0.0))

    try:
        began = time.perf_counter()
        arrival = Arrival(link, secrets.token_hex(12), out=out)
        if not arrival.waiting_pages:  # let in at once: the entry itself was a page step
            out["latencies"].append(time.perf_counter() - began)
        out["waits"].append(arrival.waited_s)
        pause(arrival.page)
        while arrival.page in ("Consent", "Instructions", "Rate"):
            data = dict(consent_given="True") if arrival.page == "Consent" else {}
            data = form_values(rng, rubric) if arrival.page == "Rate" else data
            began = time.perf_counter()
            try:
                arrival.submit(data)
            finally:
                out["latencies"].append(time.perf_counter() - began)
            pause(arrival.page)
        if arrival.page != "Completion":
            out["errors"].append(f"ended on {arrival.page} instead of Completion")
    except Exception as error:  # a failed request is counted, and this arrival stops
        out["errors"].append(f"{type(error).__name__}: {error}"[:200])


def quantiles(values: list[float]) -> tuple[float, float, float, float]:
    ordered = sorted(values)
    if not ordered:
        return (0.0, 0.0, 0.0, 0.0)
    found = statistics.quantiles(ordered, n=100, method="inclusive") if len(ordered) > 1 else ordered * 99
    return found[49], found[94], found[98], ordered[-1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=20.0, help="arrivals per second (default: twice 3,000 in 5 min)")
    parser.add_argument("--over", type=float, default=300.0, help="seconds during which people arrive")
    parser.add_argument(
        "--pace-scale", type=float, default=1.0, help="scales every human pause (0.1: ten times quicker)"
    )
    parser.add_argument("--max-in-flight", type=int, default=8, help="LAB_ADMIT_MAX_IN_FLIGHT")
    parser.add_argument("--target-ms", type=int, default=150, help="LAB_ADMIT_TARGET_MS")
    parser.add_argument("--waiters-per-s", type=float, default=5.0, help="LAB_ADMIT_WAITERS_PER_S")
    parser.add_argument("--no-gate", action="store_true", help="the threshold beyond reach: the run without the gate")
    parser.add_argument("--database-url", default="", help="default: a fresh SQLite file")
    args = parser.parse_args(argv)

    arrivals = max(1, round(args.rate * args.over))
    folder = Path(tempfile.mkdtemp(prefix="admission-bench-"))
    write_episodes(folder, regular=arrivals)  # two episodes per arrival, two annotators per episode
    threshold = 10**9 if args.no_gate else args.max_in_flight
    env = deployment_mode(
        base_env(
            LAB_ADMIT_MAX_IN_FLIGHT=str(threshold),
            LAB_ADMIT_TARGET_MS=str(10**9 if args.no_gate else args.target_ms),
            LAB_ADMIT_WAITERS_PER_S=str(10**9 if args.no_gate else args.waiters_per_s),
            LAB_NEW_PARTICIPANTS_PER_ADDRESS=str(10 * arrivals),
        )
    )
    env["DATABASE_URL"] = args.database_url or f"sqlite:///{folder}/load.sqlite3"
    server = start_server(kind="prodserver", env=env)
    out = dict(latencies=[], errors=[], waits=[], waiting_pages=[])
    try:
        session = create_session(
            server.url,
            "social_eval",
            arrivals,
            episodes=str(folder / "episodes.json"),
            annotators_per_episode=2,
            episodes_per_annotator=2,
            attention_checks=1,
        )
        info = requests.post(
            f"{server.url}/api/get_session/{session['code']}", json={}, headers=rest_headers(), timeout=60
        )
        link = urllib.parse.urljoin(server.url, info.json()["session_wide_url"])
        barrier = threading.Barrier(arrivals)
        threads = [
            threading.Thread(
                target=arrive,
                args=(link,),
                kwargs=dict(seed=i, delay=i / args.rate, pace_scale=args.pace_scale, start=barrier, out=out),
            )
            for i in range(arrivals)
        ]
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - began
        log = server.log_path.read_text(encoding="utf-8", errors="replace")
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)

    p50, p95, p99, top = (1000 * value for value in quantiles(out["latencies"]))
    w50, w95, _, wmax = quantiles(out["waits"])
    gate = (
        "off (--no-gate)"
        if args.no_gate
        else f"LAB_ADMIT_MAX_IN_FLIGHT={args.max_in_flight}, LAB_ADMIT_TARGET_MS={args.target_ms}, "
        f"LAB_ADMIT_WAITERS_PER_S={args.waiters_per_s:g}"
    )
    print(
        f"admission: {arrivals} arrivals at {args.rate:g}/s over {args.over:g} s by the session-wide link, human pace "
        f"x{args.pace_scale:g}; gate {gate}"
    )
    print(f"machine: {os.cpu_count()} cores; database: {'SQLite' if not args.database_url else 'DATABASE_URL'}")
    print(f"wall time {wall:.1f} s; page steps of those let in: {len(out['latencies'])}")
    print(f"page step ms (let in): p50 {p50:.0f}  p95 {p95:.0f}  p99 {p99:.0f}  max {top:.0f}")
    print(
        f"let in eventually: {len(out['waits'])} of {arrivals}; waited s: p50 {w50:.1f}  p95 {w95:.1f}  max "
        f"{wmax:.1f}; waiting pages served: {len(out['waiting_pages'])}"
    )
    print(f"failed requests: {len(out['errors'])}" + (f" (first: {out['errors'][0]})" if out["errors"] else ""))
    print("server log:", *[line for line in log.splitlines() if "waiting" in line or "busy" in line][-3:], sep="\n  ")
    met = p95 < 300 and len(out["waits"]) == arrivals and not out["errors"]
    print(f"target p95 < 300 ms, every arrival let in, zero failed requests: {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
