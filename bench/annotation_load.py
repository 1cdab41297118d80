"""Load test of the social_eval app: N simulated annotators submitting rating forms concurrently.

Starts ``otree prodserver`` on a free loopback port (its own SQLite file in a scratch folder), creates a session
with enough synthetic episodes for everyone (copies of the sample set with new ids), and lets N threads each walk
a Prolific-style path: start link, consent, instructions, then every rating page (28 fields each). Every page step
is one form POST plus the redirected GET of the next page, timed from the client. Prints p50/p95/p99/max latency,
errors (HTTP failures or unexpected pages) and throughput. Target: p95 < 300 ms and zero errors on 2 cores.

Pace: by default annotators arrive over ``--ramp`` seconds (60) and stay on each page as long as the fastest
plausible person would (``HUMAN_PAGE_SECONDS``, drawn from 0.5-1.5 x the mean): a rating page asks for 14 written
reasons of at least 20 characters and 14 ratings, at least 280 typed characters, which alone is about 1.5 minutes
at composing speed. ``--think S`` replaces that with a random 0..2S seconds on every page; ``--think 0`` is the
stress case, every annotator clicking on without a pause (it measures the server's throughput, not people).

Run: ``python bench/annotation_load.py [--annotators 200] [--ramp 60] [--think S] [--database-url URL]``
(``--debug-mode``: oTree's debug mode, OTREE_PRODUCTION=0, with its debug tables on every page).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.social import forms as social_forms  # noqa: E402
from backend.social.episodes import load_episodes  # noqa: E402
from backend.social.rubrics import load_rubric  # noqa: E402
from tests.support.harness import base_env, create_session, deployment_mode, session_start_links, start_server  # noqa: E402
from tests.support.participants import Annotator  # noqa: E402

# Mean seconds the fastest plausible annotator spends on a page before submitting it (see the module docstring).
HUMAN_PAGE_SECONDS = {"Consent": 10.0, "Instructions": 30.0, "Rate": 90.0, "Completion": 0.0}

SAMPLES = Path(__file__).resolve().parent.parent / "backend" / "social" / "data" / "episodes"


def write_episodes(folder: Path, *, regular: int) -> None:
    """``regular`` copies of the sample conversations with fresh ids, plus the gold episodes."""
    episodes = load_episodes(SAMPLES)
    plain = [e for e in episodes if not e.is_gold]
    items = [dict(plain[i % len(plain)].as_dict(), id=f"load-{i:04d}") for i in range(regular)]
    items += [e.as_dict() for e in episodes if e.is_gold]
    (folder / "episodes.json").write_text(json.dumps(items), encoding="utf-8")


def form_values(rng: random.Random, rubric) -> dict:
    values = {}
    for agent in social_forms.AGENTS:
        for slot, dimension in enumerate(rubric.dimensions, start=1):
            values[social_forms.rating_field(agent, slot)] = rng.randint(dimension.min, dimension.max)
            values[social_forms.reason_field(agent, slot)] = f"Simulated reason {rng.random():.6f},\nsecond line."
    return values


def pause_seconds(rng: random.Random, page: str, think: float | None) -> float:
    """How long the annotator stays on ``page``: human pace when ``think`` is None, else uniform 0..2 x think."""
    if think is None:
        return rng.uniform(0.5, 1.5) * HUMAN_PAGE_SECONDS.get(page, 0.0)
    return rng.uniform(0, 2 * think)


def annotate(
    link: str, *, seed: int, think: float | None, start: threading.Barrier, out: dict, delay: float = 0.0
) -> None:
    """One annotator's whole path; ``delay``: seconds after ``start`` before arriving (bench/mixed_load.py has its own
    gates and leaves it 0)."""
    rng, rubric = random.Random(seed), load_rubric()
    latencies, errors = out["latencies"], out["errors"]
    holder = {}

    def step(action):
        began = time.perf_counter()
        try:
            action()
        except Exception as error:  # a failed request is counted, and this annotator stops
            errors.append(f"{type(error).__name__}: {error}"[:200])
            raise
        finally:
            latencies.append(time.perf_counter() - began)
        time.sleep(pause_seconds(rng, holder["annotator"].page, think))

    start.wait()
    time.sleep(delay)  # arrivals spread over --ramp seconds, as people follow a study link over time
    try:
        step(lambda: holder.setdefault("annotator", Annotator(link)))
        annotator = holder["annotator"]
        step(lambda: annotator.submit(dict(consent_given="True")))
        step(lambda: annotator.submit())
        while annotator.page == "Rate":
            step(lambda: annotator.submit(form_values(rng, rubric)))
            out["forms"].append(1)
        if annotator.page != "Completion":
            errors.append(f"ended on {annotator.page} instead of Completion")
    except Exception:
        return


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=200)
    parser.add_argument("--per-annotator", type=int, default=2, help="regular episodes per annotator")
    parser.add_argument("--think", type=float, default=None, help="mean pause on every page, s (default: human pace)")
    parser.add_argument("--ramp", type=float, default=60.0, help="arrivals spread evenly over this many seconds")
    parser.add_argument("--debug-mode", action="store_true", help="OTREE_PRODUCTION=0 (debug tables on every page)")
    parser.add_argument("--database-url", default="", help="default: a fresh SQLite file")
    args = parser.parse_args(argv)

    folder = Path(tempfile.mkdtemp(prefix="annotation-load-"))
    k = 2
    write_episodes(folder, regular=args.annotators * args.per_annotator // k)
    env = deployment_mode(base_env(), debug=args.debug_mode)
    env["DATABASE_URL"] = args.database_url or f"sqlite:///{folder}/load.sqlite3"
    server = start_server(kind="prodserver", env=env)
    try:
        began = time.perf_counter()
        session = create_session(
            server.url,
            "social_eval",
            args.annotators,
            episodes=str(folder / "episodes.json"),
            annotators_per_episode=k,
            episodes_per_annotator=args.per_annotator,
            attention_checks=1,
        )
        created = time.perf_counter() - began
        links = session_start_links(server.url, session["code"])
        out = dict(latencies=[], errors=[], forms=[])
        barrier = threading.Barrier(len(links))
        threads = [
            threading.Thread(
                target=annotate,
                args=(link,),
                kwargs=dict(seed=i, think=args.think, delay=i * args.ramp / len(links), start=barrier, out=out),
            )
            for i, link in enumerate(links)
        ]
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - began
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)

    pace = (
        "human (" + ", ".join(f"{page} ~{seconds:g} s" for page, seconds in HUMAN_PAGE_SECONDS.items() if seconds) + ")"
        if args.think is None
        else f"0..{2 * args.think:g} s on every page"
    )
    ms = sorted(1000 * value for value in out["latencies"])
    quantile = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else ms * 99
    print(
        f"social_eval load: {args.annotators} annotators arriving over {args.ramp:g} s, {args.per_annotator} + 1 "
        f"episodes each, pace: {pace}"
    )
    print(f"machine: {os.cpu_count()} cores; database: {'SQLite' if not args.database_url else 'DATABASE_URL'}")
    print(f"session creation ({args.annotators} participants): {created:.2f} s")
    print(f"page steps: {len(ms)}, rating forms submitted: {len(out['forms'])}, wall time {wall:.1f} s")
    print(f"latency ms: p50 {quantile[49]:.0f}  p95 {quantile[94]:.0f}  p99 {quantile[98]:.0f}  max {ms[-1]:.0f}")
    print(f"throughput: {len(ms) / wall:.1f} page steps/s")
    print(f"errors: {len(out['errors'])}" + (f" (first: {out['errors'][0]})" if out["errors"] else ""))
    met = quantile[94] < 300 and not out["errors"]
    print(f"target p95 < 300 ms and zero errors: {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
