"""Load test of the social_eval app: simulated annotators against ``otree prodserver``, timed by the client AND the server.

Starts ``otree prodserver`` on a free loopback port (its own SQLite file in a scratch folder), creates a session
with enough synthetic episodes for everyone (copies of the sample set with new ids), and lets simulated annotators
each walk a Prolific-style path: start link, consent, instructions, then every rating page (28 fields each). Every
page step is one form POST plus the redirected GET of the next page, timed from the client. Prints p50/p95/p99/max
latency, errors (HTTP failures or unexpected pages), throughput, and the server's own CPU time per page step (user +
system time of the prodserver's process tree from /proc, read before and after the measured window, divided by the
page steps in it), so a busy client or machine does not hide what the server spends. Target: p95 < 300 ms and zero
errors on 2 cores.

Pace: by default annotators arrive over ``--ramp`` seconds (60) and stay on each page as long as the fastest
plausible person would (``HUMAN_PAGE_SECONDS``, drawn from 0.5-1.5 x the mean): a rating page asks for 14 written
reasons of at least 20 characters and 14 ratings, at least 280 typed characters, which alone is about 1.5 minutes
at composing speed. ``--think S`` replaces that with a random 0..2S seconds on every page; ``--think 0`` is the
stress case, every annotator clicking on without a pause (it measures the server's throughput, not people).

Flat out: ``--clients C --duration S`` lets C clients walk the session's annotators one after another without a
pause for S seconds (the session still has ``--annotators`` participants: this measures the cost of a page step in a
session of that size). ``--sizes 150,1000`` runs several session sizes in one run (a fresh server each) and prints
them side by side; ``--floor`` runs the same flow against a floor app with the same pages and no logic
(``bench/floor_app``, added to a scratch copy of the project only) and prints the ratio. ``--profile DIR`` records
the server with py-spy (raw collapsed stacks, one file per run).

Run: ``python bench/annotation_load.py [--annotators 200] [--ramp 60] [--think S] [--database-url URL]
[--clients C --duration S] [--sizes N,N] [--floor] [--profile DIR]`` (``--debug-mode``: oTree's debug mode,
OTREE_PRODUCTION=0, with its debug tables on every page). The figures and how they were taken: docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.social import forms as social_forms  # noqa: E402
from backend.social.episodes import load_episodes  # noqa: E402
from backend.social.rubrics import load_rubric  # noqa: E402
from bench.pace import HUMAN_PAGE_SECONDS, stay_seconds  # noqa: E402
from bench.probes import ServerProbe  # noqa: E402
from harness.participants import Annotator  # noqa: E402
from harness.servers import (  # noqa: E402
    base_env,
    create_session,
    deployment_mode,
    project_with_app,
    session_start_links,
    start_server,
)

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
        return stay_seconds(rng.uniform, page)
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
            shown = annotator.url
            step(lambda: annotator.submit(form_values(rng, rubric)))
            if annotator.url == shown:  # the form came back with errors: stop, or this loop would never end
                errors.append(f"rating form refused on {shown}")
                return
            out["forms"].append(1)
        if annotator.page != "Completion":
            errors.append(f"ended on {annotator.page} instead of Completion")
    except Exception:
        return


FLOOR_APP = Path(__file__).resolve().parent / "floor_app"


def floor_project(root: Path | None = None) -> Path:
    """A scratch copy of the project (or of ``root``, an earlier revision) whose settings add the floor app as
    session config ``annotation_floor``."""
    files = {entry.name: entry.read_text(encoding="utf-8") for entry in FLOOR_APP.iterdir() if entry.is_file()}
    return project_with_app(
        "annotation_floor", files, prefix="otree-annotation-floor-", **({"root": root} if root else {})
    )


def server_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its descendants so far (``bench.probes``)."""
    return ServerProbe(pid).cpu_seconds()


def start_profiler(pid: int, path: Path) -> subprocess.Popen:
    """``py-spy record`` of the server into ``path`` (raw collapsed stacks; SIGINT makes it write the file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    py_spy = str(Path(sys.executable).with_name("py-spy"))
    command = [py_spy, "record", "--nonblocking", "--format", "raw", "--rate", "50", "--pid", str(pid)]
    return subprocess.Popen([*command, "--output", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def walk_flat_out(links: list[str], *, clients: int, duration: float, out: dict) -> None:
    """``clients`` threads take the next annotator's link and walk it without pauses until ``duration`` is over."""
    pending = iter(enumerate(links))
    lock, deadline = threading.Lock(), time.perf_counter() + duration

    def client() -> None:
        while time.perf_counter() < deadline:
            with lock:
                seed, link = next(pending, (None, None))
            if link is None:
                return
            annotate(link, seed=seed, think=0, start=threading.Barrier(1), out=out)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def walk_paced(links: list[str], *, think: float | None, ramp: float, out: dict) -> None:
    """One thread per annotator, arrivals spread evenly over ``ramp`` seconds, pauses as ``think`` says."""
    barrier = threading.Barrier(len(links))
    threads = [
        threading.Thread(
            target=annotate,
            args=(link,),
            kwargs=dict(seed=i, think=think, delay=i * ramp / len(links), start=barrier, out=out),
        )
        for i, link in enumerate(links)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def checkout(revision: str) -> Path:
    """The project as it was at git ``revision``, in a scratch folder (``--baseline``: before and after in one run)."""
    folder = Path(tempfile.mkdtemp(prefix="annotation-load-baseline-"))
    root = Path(__file__).resolve().parent.parent
    archive = subprocess.run(["git", "-C", str(root), "archive", revision], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def run(args, *, annotators: int, floor: bool, baseline: Path | None = None) -> dict:
    """One server, one session of ``annotators``, one measured window; the figures as a dict. ``baseline``: the
    server runs the project found there (an earlier revision) instead of this one."""
    folder = Path(tempfile.mkdtemp(prefix="annotation-load-"))
    k = 2
    env = deployment_mode(base_env(), debug=args.debug_mode)
    env["DATABASE_URL"] = args.database_url or f"sqlite:///{folder}/load.sqlite3"
    project = floor_project(baseline) if floor else baseline
    server = start_server(kind="prodserver", env=env, folder=project)
    profiler = None
    try:
        began = time.perf_counter()
        if floor:
            session = create_session(server.url, "annotation_floor", annotators, timeout=600)
        else:
            write_episodes(folder, regular=annotators * args.per_annotator // k)
            session = create_session(
                server.url,
                "social_eval",
                annotators,
                timeout=600,
                episodes=str(folder / "episodes.json"),
                annotators_per_episode=k,
                episodes_per_annotator=args.per_annotator,
                attention_checks=1,
            )
        created = time.perf_counter() - began
        links = session_start_links(server.url, session["code"])
        warm = dict(latencies=[], errors=[], forms=[])
        annotate(links.pop(), seed=-1, think=0, start=threading.Barrier(1), out=warm)  # templates, caches, imports
        out = dict(latencies=[], errors=warm["errors"], forms=[])
        if args.profile:
            name = f"annotation-load-{'floor' if floor else 'social_eval'}-{annotators}-{time.strftime('%H%M%S')}.txt"
            profiler = start_profiler(server.process.pid, Path(args.profile) / name)
        cpu_before, client_before = server_cpu_seconds(server.process.pid), time.process_time()
        began = time.perf_counter()
        if args.clients:
            walk_flat_out(links, clients=args.clients, duration=args.duration, out=out)
        else:
            walk_paced(links, think=args.think, ramp=args.ramp, out=out)
        wall = time.perf_counter() - began
        cpu = server_cpu_seconds(server.process.pid) - cpu_before
        client_cpu = time.process_time() - client_before
    finally:
        if profiler:
            profiler.send_signal(signal.SIGINT)
            profiler.wait(timeout=60)
        server.stop()
        if (
            baseline is not None and project is baseline
        ):  # the earlier revision's own folder, kept for the next size: only its database goes
            for name in ("db.sqlite3", "db.sqlite3-wal", "db.sqlite3-shm"):  # a write-ahead log with it
                (baseline / name).unlink(missing_ok=True)
        else:
            shutil.rmtree(server.folder, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)
    steps = len(out["latencies"])
    ms = sorted(1000 * value for value in out["latencies"]) or [0.0]
    quantile = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else ms * 99
    return dict(
        app=("floor" if floor else "social_eval") + (" before" if baseline else ""),
        annotators=annotators,
        created=created,
        steps=steps,
        forms=len(out["forms"]),
        wall=wall,
        rate=steps / wall,
        server_ms=1000 * cpu / max(steps, 1),
        server_share=cpu / wall,
        client_share=client_cpu / wall,
        p50=quantile[49],
        p95=quantile[94],
        p99=quantile[98],
        max=ms[-1],
        errors=out["errors"],
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=200)
    parser.add_argument(
        "--sizes", default="", help="comma-separated session sizes, one run each (overrides --annotators)"
    )
    parser.add_argument("--per-annotator", type=int, default=2, help="regular episodes per annotator")
    parser.add_argument("--think", type=float, default=None, help="mean pause on every page, s (default: human pace)")
    parser.add_argument("--ramp", type=float, default=60.0, help="arrivals spread evenly over this many seconds")
    parser.add_argument("--clients", type=int, default=0, help="flat out: this many clients, no pauses, no ramp")
    parser.add_argument("--duration", type=float, default=40.0, help="flat out: seconds of measurement")
    parser.add_argument("--floor", action="store_true", help="also run the floor app (same pages, no logic)")
    parser.add_argument("--baseline", default="", help="git revision: also run social_eval as it was there")
    parser.add_argument("--profile", default="", help="folder: record the server with py-spy (raw stacks)")
    parser.add_argument("--debug-mode", action="store_true", help="OTREE_PRODUCTION=0 (debug tables on every page)")
    parser.add_argument("--database-url", default="", help="default: a fresh SQLite file")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")] if args.sizes else [args.annotators]

    if args.clients:
        pace = f"flat out: {args.clients} clients without pauses for {args.duration:g} s"
    elif args.think is None:
        pace = "human (" + ", ".join(f"{p} ~{s:g} s" for p, s in HUMAN_PAGE_SECONDS.items() if s) + ")"
        pace += f", arrivals over {args.ramp:g} s"
    else:
        pace = f"0..{2 * args.think:g} s on every page, arrivals over {args.ramp:g} s"
    print(f"social_eval load: {args.per_annotator} + 1 episodes per annotator; pace: {pace}")
    print(
        f"machine: {os.cpu_count()} cores, load average {Path('/proc/loadavg').read_text().split()[0]}; "
        f"database: {'SQLite' if not args.database_url else 'DATABASE_URL'}"
    )
    baseline = checkout(args.baseline) if args.baseline else None
    variants = [dict(floor=False)] + ([dict(floor=False, baseline=baseline)] if baseline else [])
    variants += [dict(floor=True)] + ([dict(floor=True, baseline=baseline)] if baseline else []) if args.floor else []
    results = []
    for size in sizes:
        for variant in variants:
            results.append(run(args, annotators=size, **variant))
            r = results[-1]
            print(
                f"  {r['app']:11s} {r['annotators']:5d} in session (created in {r['created']:.1f} s): "
                f"{r['steps']} page steps in {r['wall']:.1f} s = {r['rate']:.1f}/s; "
                f"server CPU {r['server_ms']:.1f} ms/step ({100 * r['server_share']:.0f}% of a core, client "
                f"{100 * r['client_share']:.0f}%); latency ms p50 {r['p50']:.0f} p95 {r['p95']:.0f} "
                f"p99 {r['p99']:.0f} max {r['max']:.0f}; errors {len(r['errors'])}"
                + (f" (first: {r['errors'][0]})" if r["errors"] else ""),
                flush=True,
            )
    app = [r for r in results if r["app"] == "social_eval"]
    if len(app) > 1:
        print(
            f"server time per step, {app[-1]['annotators']} vs {app[0]['annotators']} in the session: "
            f"{app[-1]['server_ms'] / app[0]['server_ms']:.2f}x (goal: at most 1.2x)"
        )
    for r in app:
        floor = next((f for f in results if f["app"] == "floor" and f["annotators"] == r["annotators"]), None)
        if floor:
            print(
                f"against the floor app at {r['annotators']}: {r['rate'] / floor['rate']:.2f}x its page steps/s, "
                f"{r['server_ms'] / floor['server_ms']:.2f}x its server time per step (goal: at least 0.8x its rate)"
            )
    for r in results:
        before = next(
            (b for b in results if b["app"] == r["app"] + " before" and b["annotators"] == r["annotators"]), None
        )
        if before:
            print(
                f"{r['app']} against {args.baseline} at {r['annotators']}: server time per step {r['server_ms']:.1f} "
                f"ms vs {before['server_ms']:.1f} ms ({r['server_ms'] / before['server_ms']:.2f}x), page steps/s "
                f"{r['rate'] / before['rate']:.2f}x"
            )
    if baseline:
        shutil.rmtree(baseline, ignore_errors=True)
    met = all(r["p95"] < 300 and not r["errors"] for r in app)
    print(f"target p95 < 300 ms and zero errors: {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
