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

Several servers (issue 39): ``--servers N`` starts the study as a lab does, with ``python -m
backend.core.study_servers`` (N ``otree prodserver`` behind nginx under honcho, each server's session with its share
of the places and a few spares, since nginx's hash spreads random Prolific IDs unevenly by a few), and sends everyone
by the one Prolific URL through nginx's redirector; each person then stays on the server it chose. It prints the
figures of the whole (admitted arrivals per second: those let in over the time from the first arrival to the last
admission), and for each server its arrivals, its longest wait and its share of a core (``/proc/<pid>/stat`` of its
``otree prodserver`` process tree), with nginx's share; the table per minute has a column per server. ``--servers
1`` is the same path with one server behind nginx; without ``--servers``, one server is reached directly as before.

Run: ``python bench/admission.py [--rate 10] [--over 300] [--pace-scale 1] [--servers N] [--no-gate]
[--database-url URL] [--longest-wait-s S]``.
The figures and how they were taken: docs/running/busy-launch.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.core import tool_envs  # noqa: E402
from backend.core.environment import VARIABLES  # noqa: E402
from bench.annotation_load import server_cpu_seconds, start_profiler, write_episodes  # noqa: E402
from harness import PROJECT_ROOT  # noqa: E402
from harness.servers import (  # noqa: E402
    base_env,
    create_session,
    deployment_mode,
    free_port,
    own_database,
    rest,
    start_server,
)

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


def core_share(samples: list[tuple[float, float]], low: float, high: float) -> float:
    """The share of a core (1.0: one core) that samples of (Unix time, CPU seconds so far) show from ``low`` to
    ``high``.

    >>> core_share([(0.0, 0.0), (60.0, 30.0), (120.0, 36.0)], 0, 60), core_share([(0.0, 0.0)], 0, 60)
    (0.5, 0.0)
    """
    inside = [(at, seconds) for at, seconds in samples if low <= at <= high]
    return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0]) if len(inside) > 1 else 0.0


def sample_cpu(pids: dict[str, int], samples: dict[str, list], stop: threading.Event, *, every_s: float = 5.0) -> None:
    """Append (Unix time, CPU seconds so far) of each process tree in ``pids`` (name: pid) to ``samples[name]``
    every ``every_s`` until ``stop``."""
    while not stop.is_set():
        for name, pid in pids.items():
            samples.setdefault(name, []).append((time.time(), server_cpu_seconds(pid)))
        stop.wait(every_s)


def default(name: str) -> float:
    """A gate setting's default, from the environment reference (``backend/core/environment.py``).

    >>> default("LAB_ADMIT_MAX_WAIT_S")
    300.0
    """
    return float(VARIABLES[name].default)


def spare_places(arrivals: int, servers: int) -> int:
    """Spare places on each of ``servers`` behind the front door: nginx's hash sends each random Prolific ID to one
    server, so a server's arrivals vary around their share (binomially); five standard deviations and five more
    keep every arrival a place. One server takes everyone: no spare.

    >>> spare_places(3000, 2), spare_places(200, 2), spare_places(3000, 1)
    (142, 41, 0)
    """
    if servers <= 1:
        return 0
    return math.ceil(5 * math.sqrt(arrivals * (1 / servers) * (1 - 1 / servers))) + 5


def front_door_port(servers: int) -> int:
    """A port P for the front door with P..P+``servers`` and P+101..P+100+``servers`` free (nginx's ports and the
    servers' loopback ports, ``backend.core.study_servers``)."""
    for _ in range(100):
        port = free_port()
        offsets = [*range(servers + 1), *range(101, 101 + servers)]
        if port + offsets[-1] > 65535:
            continue
        try:
            for offset in offsets:
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", port + offset))
        except OSError:
            continue
        return port
    raise RuntimeError("no free run of ports for the front door")


def _processes() -> Iterator[tuple[int, int, str]]:
    """(pid, parent pid, command line with spaces) of every process."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            stat = (entry / "stat").read_text()
            yield int(entry.name), int(stat[stat.rindex(")") + 2 :].split()[1]), line
        except (OSError, ValueError, IndexError):
            continue


def top_process(pattern: str) -> int:
    """The pid of the process whose command line matches ``pattern`` (a regular expression) and whose parent's does
    not: an ``otree prodserver`` process, or nginx's master (its workers are its children)."""
    found = {pid: parent for pid, parent, line in _processes() if re.search(pattern, line)}
    tops = [pid for pid, parent in found.items() if parent not in found]
    if len(tops) != 1:
        raise RuntimeError(f"{len(tops)} processes match {pattern!r}, not one")
    return tops[0]


def local_postgres(url: str) -> int | None:
    """The pid of the PostgreSQL server on this machine that ``url`` names (its postmaster: every connection's
    process is its child), or None (SQLite, another machine, or no cluster found). Its share of a core counts every
    database of the cluster, so run on a quiet machine.

    >>> local_postgres(""), local_postgres("postgresql://u:p@db.example.org/study")
    (None, None)
    """
    host = urllib.parse.urlsplit(url).hostname if url else None
    if host not in ("127.0.0.1", "localhost", "::1"):
        return None
    port = str(urllib.parse.urlsplit(url).port or 5432)
    for pid_file in Path("/var/lib/postgresql").glob("*/*/postmaster.pid"):
        lines = pid_file.read_text().splitlines()
        if len(lines) > 3 and lines[3].strip() == port:
            return int(lines[0])
    return None


@dataclass
class Study:
    """The study under load: the URL people open (the server itself, or the front door), each oTree server's
    process (name: pid) and the place it has behind the front door (``host:port``: name), nginx's process, how long
    creating the sessions took, and the log of every process."""

    url: str
    servers: dict[str, int]
    log_path: Path
    created_s: float
    nginx: int | None = None
    addresses: dict[str, str] = field(default_factory=dict)
    places: dict[str, int] = field(default_factory=dict)


SESSION_KEYS = dict(annotators_per_episode=2, episodes_per_annotator=2, attention_checks=1)


@contextlib.contextmanager
def direct_study(env: dict, arrivals: int, episodes: Path) -> Iterator[Study]:
    """One ``otree prodserver`` reached directly (as before ``--servers``), its session with a place per arrival."""
    server = start_server(kind="prodserver", env=env)
    try:
        began = time.perf_counter()
        keys = dict(SESSION_KEYS, episodes=str(episodes), prolific_study_id=STUDY_ID)
        create_session(server.url, "social_eval", arrivals, room=ROOM, timeout=1800, **keys)
        created = time.perf_counter() - began
        yield Study(server.url, {"server": server.process.pid}, server.log_path, created, places={"server": arrivals})
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)


@contextlib.contextmanager
def front_door_study(env: dict, arrivals: int, episodes: Path, *, servers: int, folder: Path) -> Iterator[Study]:
    """The study on ``servers`` servers behind nginx, started as a lab starts it: ``python -m
    backend.core.study_servers`` (each server's share of the places plus spares, the same session keys); people
    open its one Prolific URL. Stopped by Ctrl-C's signal, as a lab stops it."""
    port = front_door_port(servers)
    spare = spare_places(arrivals, servers)
    keys = dict(SESSION_KEYS, episodes=str(episodes))
    command = [
        *(sys.executable, "-m", "backend.core.study_servers", "--servers", str(servers)),
        *("--config", "social_eval", "--room", ROOM, "--places", str(arrivals), "--spare", str(spare)),
        *("--study-id", STUDY_ID, *[f"--set={key}={value}" for key, value in keys.items()]),
        *("--port", str(port), "--listen", "127.0.0.1", "--public-host", "127.0.0.1"),
        *("--folder", str(folder / "study-servers")),
    ]
    log_path = folder / "study-servers.log"
    began = time.perf_counter()
    with log_path.open("wb") as out:
        process = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        while "Ready." not in log_path.read_text(errors="replace"):
            if process.poll() is not None:
                raise RuntimeError("the study did not start:\n" + log_path.read_text(errors="replace")[-3000:])
            if time.perf_counter() - began > 3600:
                raise RuntimeError("the study was not ready within an hour")
            time.sleep(0.5)
        created = time.perf_counter() - began
        names = [f"server{i}" for i in range(1, servers + 1)]
        pids = {
            name: top_process(rf"otree prodserver 127\.0\.0\.1:{port + 100 + i}$") for i, name in enumerate(names, 1)
        }
        nginx = top_process(rf"nginx: master process .* -c {re.escape(str(folder / 'study-servers'))}/nginx\.conf")
        shares = [int(n) for n in re.findall(r"created, (\d+) places", log_path.read_text(errors="replace"))]
        yield Study(
            f"http://127.0.0.1:{port}",
            pids,
            log_path,
            created,
            nginx=nginx,
            addresses={f"127.0.0.1:{port + i}": name for i, name in enumerate(names, 1)},
            places=dict(zip(names, shares, strict=True)),
        )
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
        _drop_server_databases(env, servers)


def one_report(study: Study, folder: Path) -> str:
    """The first line of one report over every server's ratings export (``python -m backend report ... --servers
    server1,server2``), as a lab computes it after the study."""
    files = []
    for address, name in study.addresses.items():
        exported = rest(
            f"http://{address}",
            "GET",
            "/api/export_app_custom",
            params=dict(app="social_eval", function_name="custom_export_ratings_long"),
        )
        exported.raise_for_status()
        files.append(folder / "exports" / name / "ratings_long.csv")
        files[-1].parent.mkdir(parents=True, exist_ok=True)
        files[-1].write_bytes(exported.content)
    command = [
        sys.executable,
        "-m",
        "backend",
        "report",
        *map(str, files),
        "--servers",
        ",".join(study.addresses.values()),
    ]
    done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=1800)
    return (done.stdout.strip().splitlines() or [f"no report: {done.stderr.strip()[-500:]}"])[0]


def _drop_server_databases(env: dict, servers: int) -> None:
    """On PostgreSQL, the databases ``study_servers`` made beside the run's own (``<name>_server1``, ...)."""
    url = env.get("DATABASE_URL", "")
    if not url or url.startswith("sqlite"):
        return
    import psycopg2

    admin = psycopg2.connect(url.rpartition("/")[0] + "/postgres")
    admin.autocommit = True
    try:
        with admin.cursor() as cursor:
            for n in range(1, servers + 1):
                cursor.execute(f"DROP DATABASE IF EXISTS {url.rpartition('/')[2]}_server{n} WITH (FORCE)")
    finally:
        admin.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=10.0, help="arrivals per second (default: 3,000 in 5 min)")
    parser.add_argument("--over", type=float, default=300.0, help="seconds during which people arrive")
    parser.add_argument("--pace-scale", type=float, default=1.0, help="scales every stay on a page (0.2: 5x quicker)")
    parser.add_argument(
        "--servers",
        type=int,
        default=0,
        help="the study on N servers behind nginx, started by python -m backend.core.study_servers, people arriving "
        "by its one Prolific URL (1: one server behind the front door); without it one server reached directly",
    )
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
    parser.add_argument(
        "--profile", default="", help="a file: py-spy's raw stacks of the server during the launch (.serverN each)"
    )
    parser.add_argument(
        "--longest-wait-s",
        type=float,
        default=0,
        help="also require that nobody waited longer (issue 39: 575 for 3,000 in five minutes on two servers)",
    )
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
    episodes = folder / "episodes.json"
    with contextlib.ExitStack() as stack:
        env = stack.enter_context(own_database(env))
        if args.servers:
            study = stack.enter_context(front_door_study(env, arrivals, episodes, servers=args.servers, folder=folder))
        else:
            study = stack.enter_context(direct_study(env, arrivals, episodes))
        command = [
            *locust,
            *("-f", str(LOCUSTFILE), "--headless", "--only-summary", "--host", study.url),
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
        watched = dict(study.servers, **({"nginx": study.nginx} if study.nginx else {}))
        postgres = local_postgres(args.database_url)
        if postgres:
            watched["postgres"] = postgres
        profilers = [
            start_profiler(pid, Path(args.profile + (f".{name}" if args.servers else "")))
            for name, pid in study.servers.items()
            if args.profile
        ]
        cpu_before = {name: server_cpu_seconds(pid) for name, pid in watched.items()}
        generator_before = _children_cpu_seconds()
        began, started = time.perf_counter(), time.time()
        cpu_samples: dict[str, list] = {}
        sampled = threading.Event()
        sampler = threading.Thread(target=sample_cpu, args=(watched, cpu_samples, sampled), daemon=True)
        sampler.start()
        generator = subprocess.Popen(command, env=locust_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        summary = generator.communicate()[0].decode(errors="replace")
        for profiler in profilers:
            profiler.send_signal(signal.SIGINT)
            profiler.wait(timeout=60)
        wall = time.perf_counter() - began
        sampled.set()
        sampler.join()
        cpu = {name: server_cpu_seconds(pid) - cpu_before[name] for name, pid in watched.items()}
        generator_cpu = _children_cpu_seconds() - generator_before
        log = study.log_path.read_text(encoding="utf-8", errors="replace")
        try:  # the figures are printed whatever happens to the export
            report = one_report(study, folder) if args.servers else ""
        except (OSError, ValueError) as error:
            report = f"no report: {type(error).__name__}: {str(error)[:200]}"
    try:
        out = json.loads(results_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        print(summary[-3000:])
        raise SystemExit("Locust wrote no results (its output is above).") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    steps = len(out["latencies"])
    server_cpu = sum(seconds for name, seconds in cpu.items() if name in study.servers)
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
    path = (
        f"the front door (nginx) of {args.servers} server{'s' if args.servers > 1 else ''} started by "
        "python -m backend.core.study_servers"
        if args.servers
        else "one server reached directly"
    )
    print(
        f"launch: {arrivals} arrivals at {args.rate:g}/s over {args.over:g} s by the room's Prolific URL through "
        f"{path}, human pace x{args.pace_scale:g}; gate {gate}"
    )
    load = Path("/proc/loadavg").read_text().split()[0]
    places = ", ".join(f"{name} {count}" for name, count in study.places.items())
    print(
        f"machine: {os.cpu_count()} cores, load average {load} at the end; database: "
        f"{'PostgreSQL' if args.database_url else 'SQLite'}; places: {places}; sessions created in "
        f"{study.created_s:.0f} s"
    )
    print(
        f"wall time {wall:.0f} s; page steps of those let in: {steps} ({steps / wall:.1f}/s); server CPU "
        f"{1000 * server_cpu / max(steps, 1):.1f} ms per page step ({100 * server_cpu / wall:.0f}% of a core, all "
        f"servers); Locust {100 * generator_cpu / wall:.0f}% of a core"
        + (
            f"; nginx {100 * cpu['nginx'] / wall:.1f}% of a core ({1000 * cpu['nginx'] / max(steps, 1):.2f} ms per "
            "page step)"
            if "nginx" in cpu
            else ""
        )
        + (
            f"; PostgreSQL {100 * cpu['postgres'] / wall:.0f}% of a core "
            f"({1000 * cpu['postgres'] / max(steps, 1):.1f} ms per page step)"
            if "postgres" in cpu
            else ""
        )
    )
    print(f"page step ms (let in): p50 {p50:.0f}  p95 {p95:.0f}  p99 {p99:.0f}  max {top:.0f}")
    let_in = len(out["waits"])
    span = max(out["admitted_at"], default=started) - started
    later = [at for at in out["admitted_at"] if at >= started + 60]  # past the first minute's burst
    last = max(later, default=0.0)
    sustained = len(later) / (last - started - 60) if len(later) > 1 and last > started + 60 else 0.0
    print(
        f"let in: {let_in} of {arrivals} ({waited} after waiting) in {span:.0f} s: "
        f"{let_in / max(span, 1e-9):.2f} admitted arrivals per second ({sustained:.2f} from the second minute on); "
        f"waited s: p50 {w50:.1f}  p95 {w95:.1f}  max {wmax:.1f}; waiting pages served: {out['waiting_pages']}"
    )
    if args.servers:
        landed = [study.addresses.get(where, where) for where in out.get("servers", [])]
        for name in study.servers:
            mine = [w for w, there in zip(out["waits"], landed, strict=True) if there == name]
            busiest = max(
                (
                    core_share(cpu_samples.get(name, []), started + 60 * m, started + 60 * (m + 1))
                    for m in range(int(wall // 60) + 1)
                ),
                default=0.0,
            )
            print(
                f"  {name}: let in {len(mine)} (places {study.places.get(name, '?')}), longest wait "
                f"{max(mine, default=0):.0f} s; {100 * cpu[name] / wall:.0f}% of a core over the run, "
                f"{100 * busiest:.0f}% in its busiest minute"
            )
    names = list(watched)
    header = "  ".join(f"{name:>8}" for name in names)
    print(f"minute  let in  steps  p50 ms  p95 ms  max ms  {header}  (share of a core)")
    for row in by_minute(out["steps_at"], out["latencies"], out["admitted_at"], [], start=started):
        low, high = started + 60 * row[0], started + 60 * (row[0] + 1)
        shares = "  ".join(f"{round(100 * core_share(cpu_samples.get(n, []), low, high)):>7}%" for n in names)
        print("{:>6}  {:>6}  {:>5}  {:>6.0f}  {:>6.0f}  {:>6.0f}".format(*row[:6]) + f"  {shares}")
    errors = out["errors"]
    print(summary[-6000:]) if os.environ.get("LAB_SHOW_LOCUST") else None
    print(f"failed requests: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
    print("server log:", *[line for line in log.splitlines() if "waiting" in line or "busy" in line][-3:], sep="\n  ")
    print(f"walks that reached the completion page: {out['completed']} of {arrivals}")
    if report:
        print(f"one report over all servers' exports (--servers): {report}")
    met = p95 < 300 and let_in == arrivals == out["completed"] and not errors
    if args.longest_wait_s:
        met = met and wmax <= args.longest_wait_s
    print(
        "target p95 < 300 ms, every arrival let in and through the study, zero failed requests"
        + (f", nobody waited over {args.longest_wait_s:g} s" if args.longest_wait_s else "")
        + ": "
        + ("met" if met else "NOT met")
    )
    return 0 if met else 1


def _children_cpu_seconds() -> float:
    """CPU seconds of the finished child processes (Locust) of this process."""
    usage = os.times()
    return usage.children_user + usage.children_system


if __name__ == "__main__":
    sys.exit(main())
