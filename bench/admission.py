"""A Prolific launch from outside: thousands of people arriving within minutes, driven by Locust beside the server.

Starts ``otree prodserver`` (its own SQLite file, or ``--database-url``), creates a social_eval session in the room
``social_eval_study`` with a place and two episodes for every arrival, and runs ``bench/locustfile.py`` in Locust's
own environment (``backend/core/tool_envs.py``, made on first use): ``--rate`` people a second open the study's
Prolific URL for ``--over`` seconds, each walks the study once at human pace (``bench/pace.py``; ``--pace-scale``
shortens every stay for a quick run) and waits on the waiting page of a busy server (``lab_server/admission.py``)
when shown it. The run ends when everyone has finished.

Prints, for the people let in: p50/p95/p99/max of their page steps (a form submitted and the next page loaded; the
waiting pages are not page steps), how many were let in out of all, how long they waited (p50/p95/max), waiting
pages served, failed requests (an HTTP error, a reset connection, a form refused, a walk that did not end on the
completion page); and the server's own CPU time per page step (``/proc``, the prodserver's process tree) beside the
load generator's share of a core, so a busy machine does not hide what the server spends.

Targets (issue 29): the launch itself (3,000 in five minutes, ``--rate 10 --over 300``): p95 < 300 ms and zero
failed requests; twice that rate (``--rate 20``): every arrival let in, zero failed requests, p95 < 300 ms for those
inside. ``--max-in-flight``, ``--target-ms`` and ``--arrivals-per-s`` set the gate's thresholds
(``LAB_ADMIT_MAX_IN_FLIGHT``, ``LAB_ADMIT_TARGET_MS``, ``LAB_ADMIT_ARRIVALS_PER_S``); ``--max-busy-percent`` sets
``LAB_ADMIT_MAX_BUSY_PERCENT``; ``--no-gate`` sets them beyond reach, for the same run without the gate. A table
per minute of the run shows how many came in, the page steps of those inside and the server's share of a core.

Run: ``python bench/admission.py [--rate 10] [--over 300] [--pace-scale 1] [--no-gate] [--database-url URL]``.
The figures and how they were taken: docs/running/busy-launch.md.
"""

from __future__ import annotations

import argparse
import json
import os
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

from backend.core import tool_envs  # noqa: E402
from backend.core.environment import VARIABLES  # noqa: E402
from bench.annotation_load import server_cpu_seconds, start_profiler, write_episodes  # noqa: E402
from tests.support.harness import base_env, create_session, deployment_mode, own_database, start_server  # noqa: E402

LOCUST = "locust==2.47.0"
LOCUSTFILE = Path(__file__).resolve().parent / "locustfile.py"
ROOM = "social_eval_study"
STUDY_ID = "launch-bench"


def locust_command() -> list[str]:
    """Locust's command in its own environment (made on first use, about a minute)."""
    folder = tool_envs.environment(
        "locust-" + LOCUST.split("==")[1],
        [LOCUST],
        check="import locust",
        announce="Installing Locust into {folder}...",
    )
    return [str(folder / "bin" / "locust")]


def quantiles(values: list[float]) -> tuple[float, float, float, float]:
    """p50, p95, p99 and the maximum (0s when empty).

    >>> quantiles([0.1] * 98 + [0.5, 1.0])
    (0.1, 0.1, 0.505, 1.0)
    """
    ordered = sorted(values)
    if not ordered:
        return (0.0, 0.0, 0.0, 0.0)
    found = statistics.quantiles(ordered, n=100, method="inclusive") if len(ordered) > 1 else ordered * 99
    return round(found[49], 6), round(found[94], 6), round(found[98], 6), ordered[-1]


def by_minute(
    steps_at: list[float],
    latencies: list[float],
    admitted_at: list[float],
    cpu: list[tuple[float, float]],
    *,
    start: float,
) -> list[tuple[int, int, int, float, float, float, int]]:
    """Per minute of the run: (minute, people let in, page steps, p50 and p95 of those steps in ms, the largest in ms,
    the server's share of a core in percent) from the steps' start times, the admission times and ``cpu``, samples
    of (Unix time, the server's CPU seconds so far).

    >>> by_minute([5.0, 6.0, 70.0], [0.1, 0.3, 0.2], [1.0, 65.0], [(0.0, 0.0), (60.0, 30.0), (120.0, 36.0)], start=0)
    [(0, 1, 2, 200.0, 290.0, 300.0, 50), (1, 1, 1, 200.0, 200.0, 200.0, 10)]
    """
    minutes = int(max([*steps_at, *admitted_at, start]) - start) // 60 + 1
    rows = []
    for minute in range(minutes):
        low, high = start + 60 * minute, start + 60 * (minute + 1)
        took = [latency for at, latency in zip(steps_at, latencies, strict=True) if low <= at < high]
        let_in = sum(1 for at in admitted_at if low <= at < high)
        inside = [(at, seconds) for at, seconds in cpu if low <= at <= high]
        share = (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0]) if len(inside) > 1 else 0.0
        p50, p95, _, top = quantiles(took)
        rows.append((minute, let_in, len(took), 1000 * p50, 1000 * p95, 1000 * top, round(100 * share)))
    return rows


def sample_cpu(pid: int, samples: list, stop: threading.Event, *, every_s: float = 5.0) -> None:
    """Append (Unix time, the server's CPU seconds so far) to ``samples`` every ``every_s`` until ``stop``."""
    while not stop.is_set():
        samples.append((time.time(), server_cpu_seconds(pid)))
        stop.wait(every_s)


def default(name: str) -> float:
    """A gate setting's default, from the environment reference (``backend/core/environment.py``).

    >>> default("LAB_ADMIT_MAX_WAIT_S")
    300.0
    """
    return float(VARIABLES[name].default)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=10.0, help="arrivals per second (default: 3,000 in 5 min)")
    parser.add_argument("--over", type=float, default=300.0, help="seconds during which people arrive")
    parser.add_argument("--pace-scale", type=float, default=1.0, help="scales every stay on a page (0.2: 5x quicker)")
    parser.add_argument(
        "--max-in-flight", type=int, default=int(default("LAB_ADMIT_MAX_IN_FLIGHT")), help="LAB_ADMIT_MAX_IN_FLIGHT"
    )
    parser.add_argument(
        "--target-ms", type=int, default=int(default("LAB_ADMIT_TARGET_MS")), help="LAB_ADMIT_TARGET_MS"
    )
    parser.add_argument(
        "--max-busy-percent",
        type=float,
        default=default("LAB_ADMIT_MAX_BUSY_PERCENT"),
        help="LAB_ADMIT_MAX_BUSY_PERCENT",
    )
    parser.add_argument(
        "--arrivals-per-s", type=float, default=default("LAB_ADMIT_ARRIVALS_PER_S"), help="LAB_ADMIT_ARRIVALS_PER_S"
    )
    parser.add_argument(
        "--max-wait-s", type=float, default=default("LAB_ADMIT_MAX_WAIT_S"), help="LAB_ADMIT_MAX_WAIT_S"
    )
    parser.add_argument("--no-gate", action="store_true", help="the thresholds beyond reach: the run without the gate")
    parser.add_argument("--database-url", default="", help="default: a fresh SQLite file")
    parser.add_argument("--profile", default="", help="a file: py-spy's raw stacks of the server during the launch")
    args = parser.parse_args(argv)

    arrivals = max(1, round(args.rate * args.over))
    locust = locust_command()
    folder = Path(tempfile.mkdtemp(prefix="admission-bench-"))
    write_episodes(folder, regular=arrivals)  # two episodes per arrival, two annotators per episode
    unreachable = str(10**9)
    env = deployment_mode(
        base_env(
            LAB_ADMIT_MAX_IN_FLIGHT=unreachable if args.no_gate else str(args.max_in_flight),
            LAB_ADMIT_TARGET_MS=unreachable if args.no_gate else str(args.target_ms),
            LAB_ADMIT_MAX_BUSY_PERCENT="100" if args.no_gate else f"{args.max_busy_percent:g}",
            LAB_ADMIT_ARRIVALS_PER_S=unreachable if args.no_gate else str(args.arrivals_per_s),
            LAB_ADMIT_MAX_WAIT_S=f"{args.max_wait_s:g}",
            LAB_NEW_PARTICIPANTS_PER_ADDRESS=str(10 * arrivals),  # every arrival comes from this machine's address
            LAB_NO_TLS="1",  # plain HTTP on loopback: a Secure cookie (the admission's) would never come back
        )
    )
    if args.database_url:
        env["DATABASE_URL"] = args.database_url
    else:
        env.pop("DATABASE_URL", None)
    results_path = folder / "locust-results.json"
    with own_database(env) as env:
        server = start_server(kind="prodserver", env=env)
        try:
            began = time.perf_counter()
            create_session(
                server.url,
                "social_eval",
                arrivals,
                room=ROOM,
                timeout=1800,
                episodes=str(folder / "episodes.json"),
                annotators_per_episode=2,
                episodes_per_annotator=2,
                attention_checks=1,
                prolific_study_id=STUDY_ID,
            )
            created = time.perf_counter() - began
            command = [
                *locust,
                *("-f", str(LOCUSTFILE), "--headless", "--only-summary", "--host", server.url),
                *("--users", str(arrivals), "--spawn-rate", f"{args.rate:g}"),
                # ends when everyone has finished (LAB_LAUNCH_ARRIVALS); the run time is only a bound: a line of
                # thousands at twice the rate took over 25 minutes to empty, and a shorter bound cut walks short
                *("--run-time", f"{int(args.over + 900 * args.pace_scale + 7200)}s", "--stop-timeout", "5"),
                *("--loglevel", "WARNING"),
            ]
            locust_env = dict(
                os.environ,
                LAB_LAUNCH_ROOM=ROOM,
                LAB_LAUNCH_STUDY_ID=STUDY_ID,
                LAB_LAUNCH_PACE=f"{args.pace_scale:g}",
                LAB_LAUNCH_ARRIVALS=str(arrivals),
                LAB_LAUNCH_OUT=str(results_path),
            )
            profiler = start_profiler(server.process.pid, Path(args.profile)) if args.profile else None
            cpu_before, generator_before = server_cpu_seconds(server.process.pid), _children_cpu_seconds()
            began, started = time.perf_counter(), time.time()
            cpu_samples, sampled = [], threading.Event()
            sampler = threading.Thread(target=sample_cpu, args=(server.process.pid, cpu_samples, sampled), daemon=True)
            sampler.start()
            generator = subprocess.Popen(command, env=locust_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            summary = generator.communicate()[0].decode(errors="replace")
            if profiler:
                profiler.send_signal(signal.SIGINT)
                profiler.wait(timeout=60)
            wall = time.perf_counter() - began
            sampled.set()
            sampler.join()
            server_cpu = server_cpu_seconds(server.process.pid) - cpu_before
            generator_cpu = _children_cpu_seconds() - generator_before
            log = server.log_path.read_text(encoding="utf-8", errors="replace")
        finally:
            server.stop()
            shutil.rmtree(server.folder, ignore_errors=True)
    try:
        out = json.loads(results_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        print(summary[-3000:])
        raise SystemExit("Locust wrote no results (its output is above).") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    steps = len(out["latencies"])
    p50, p95, p99, top = (1000 * value for value in quantiles(out["latencies"]))
    w50, w95, _, wmax = quantiles(out["waits"])
    waited = sum(1 for w in out["waits"] if w > 0)
    gate = (
        "off (--no-gate)"
        if args.no_gate
        else f"LAB_ADMIT_MAX_IN_FLIGHT={args.max_in_flight}, LAB_ADMIT_TARGET_MS={args.target_ms}, "
        f"LAB_ADMIT_MAX_BUSY_PERCENT={args.max_busy_percent:g}, "
        f"LAB_ADMIT_ARRIVALS_PER_S={args.arrivals_per_s:g}, LAB_ADMIT_MAX_WAIT_S={args.max_wait_s:g}"
    )
    print(
        f"launch: {arrivals} arrivals at {args.rate:g}/s over {args.over:g} s by the room's Prolific URL, human pace "
        f"x{args.pace_scale:g}; gate {gate}"
    )
    load = Path("/proc/loadavg").read_text().split()[0]
    print(
        f"machine: {os.cpu_count()} cores, load average {load} at the end; database: "
        f"{'PostgreSQL' if args.database_url else 'SQLite'}; session created in {created:.0f} s"
    )
    print(
        f"wall time {wall:.0f} s; page steps of those let in: {steps} ({steps / wall:.1f}/s); server CPU "
        f"{1000 * server_cpu / max(steps, 1):.1f} ms per page step ({100 * server_cpu / wall:.0f}% of a core); "
        f"Locust {100 * generator_cpu / wall:.0f}% of a core"
    )
    print(f"page step ms (let in): p50 {p50:.0f}  p95 {p95:.0f}  p99 {p99:.0f}  max {top:.0f}")
    print(
        f"let in: {len(out['waits'])} of {arrivals} ({waited} after waiting); waited s: p50 {w50:.1f}  p95 {w95:.1f}  "
        f"max {wmax:.1f}; waiting pages served: {out['waiting_pages']}"
    )
    print("minute  let in  steps  p50 ms  p95 ms  max ms  server CPU")
    for row in by_minute(out["steps_at"], out["latencies"], out["admitted_at"], cpu_samples, start=started):
        print("{:>6}  {:>6}  {:>5}  {:>6.0f}  {:>6.0f}  {:>6.0f}  {:>9}%".format(*row))
    errors = out["errors"]
    print(summary[-6000:]) if os.environ.get("LAB_SHOW_LOCUST") else None
    print(f"failed requests: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
    print("server log:", *[line for line in log.splitlines() if "waiting" in line or "busy" in line][-3:], sep="\n  ")
    print(f"walks that reached the completion page: {out['completed']} of {arrivals}")
    met = p95 < 300 and len(out["waits"]) == arrivals == out["completed"] and not errors
    print(
        "target p95 < 300 ms, every arrival let in and through the study, zero failed requests: "
        + ("met" if met else "NOT met")
    )
    return 0 if met else 1


def _children_cpu_seconds() -> float:
    """CPU seconds of the finished child processes (Locust) of this process."""
    usage = os.times()
    return usage.children_user + usage.children_system


if __name__ == "__main__":
    sys.exit(main())
