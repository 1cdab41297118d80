"""Mixed load: N social_eval annotators and M DoND players at once against one oTree server, on SQLite and PostgreSQL.

For each database the bench starts ONE ``otree prodserver`` (production mode, as a lab deploys it; ``--server
devserver`` for the tests' server) and the local OpenAI-compatible test server (``backend/core/llm/fake_server.py``, its
own process, every model reply after ``--latency`` seconds), creates a social_eval session of N and a dond_llm
session of M, warms both apps up with one participant each, then lets all N + M simulated participants start at the
same moment (``--ramp S`` spreads the arrivals over S seconds instead):

* an annotator walks start link, consent, instructions and 2 + 1 rating pages (``bench/annotation_load.py``);
* a DoND player walks start link, consent and instructions, then sends ``--exchanges`` chat messages over oTree's
  real websocket (``harness/dond_live_client.py``), each time waiting for the LLM's stored reply.

Both pause a random 0..2×``--think`` seconds between page steps and between messages (mean ``--think``; default
5 s; ``--think 0`` is the worst case: nobody ever reads). A page step is one HTTP request plus its redirect (a form
POST and the next page's GET), timed by the client; live replies are timed from sending a message to the first
streamed piece and to the state holding the LLM's reply, and reported apart from page latency (nothing subtracted).
Errors: HTTP status >= 400, timeouts (30 s per request, 120 s per live reply), connection and websocket failures,
rejected live messages, unexpected pages; a participant stops at its first error. (A "connection" error can be the
client's keep-alive race: uvicorn closes a connection idle for 5 s, and a request sent at that moment is reset; a
browser would resend it.) Not simulated: static files and the Bargain page's ``load`` message on opening.
The server's process tree is sampled every 0.2 s (VmRSS, summed over the tree) for its peak memory; its CPU time
is read from /proc at the start and end of the measured window.

Target (the issue): 300 participants at once with p95 page latency < 300 ms and zero errors; exit 0 when every
database run meets it (below 300 participants: when p95 < 300 ms and zero errors), else 1.

Run: ``python bench/mixed_load.py [--annotators 200] [--dond 100] [--think 5] [--latency 1] [--exchanges 5]
[--database sqlite|postgresql|both] [--server prodserver|devserver] [--ramp 0] [--profile DIR] [--quick]``;
``--quick`` is a smoke test (20 annotators + 10 DoND players), ``--annotators 0`` or ``--dond 0`` runs one app alone.
PostgreSQL comes from TEST_DATABASE_URL / ``--postgres-url`` or ``bash .ci/start_postgres.sh otree_bench_mixed``
(each run gets a fresh database of its own); ``both`` (the default) falls back to SQLite alone when it is unreachable.
"""

from __future__ import annotations

import argparse
import asyncio
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
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.annotation_load import annotate, write_episodes  # noqa: E402
from bench.probes import ServerProbe, process_tree, status_kb  # noqa: E402
from harness import PROJECT_ROOT  # noqa: E402
from harness.dond_live_client import on_bargain, play  # noqa: E402
from harness.participants import Annotator  # noqa: E402
from harness.servers import (  # noqa: E402
    base_env,
    create_session,
    deployment_mode,
    free_port,
    own_database,
    session_start_links,
    start_server,
)

TARGET_PARTICIPANTS, TARGET_P95_MS = 300, 300.0
PER_ANNOTATOR, ANNOTATORS_PER_EPISODE = 2, 2  # as bench/annotation_load.py: 2 regular episodes + 1 gold each


# --- the simulated participants ------------------------------------------------------------------------------------
class Gate:
    """Everyone waits at the barrier, then each participant arrives ``delay`` seconds later (``--ramp``)."""

    def __init__(self, barrier: threading.Barrier, delay: float = 0.0):
        self.barrier, self.delay = barrier, delay

    def wait(self) -> None:
        self.barrier.wait()
        if self.delay:
            time.sleep(self.delay)


def describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:200]


def dond_player(link: str, *, seed: int, think: float, exchanges: int, start: Gate, out: dict) -> None:
    """Consent and instructions by HTTP (timed like an annotator's pages), then the chat over the websocket."""
    rng = random.Random(seed)

    def pause() -> None:
        if think:
            time.sleep(rng.uniform(0, 2 * think))

    def step(action):
        began = time.perf_counter()
        try:
            return action()
        finally:
            out["latencies"].append(time.perf_counter() - began)

    start.wait()
    try:
        person = step(lambda: Annotator(link))  # the same plain-HTTP participant as the annotators
        pause()
        step(lambda: person.submit(dict(consent_given="True")))
        pause()
        step(lambda: person.submit())
        participant = on_bargain(person.url, person.html)
    except Exception as error:
        out["errors"].append(describe(error))
        return
    pause()  # reading the Bargain page before the first message
    try:
        asyncio.run(play(participant, exchanges, pause=lambda: asyncio.sleep(rng.uniform(0, 2 * think))))
    except Exception as error:
        out["errors"].append("live " + describe(error))
    finally:
        out["replies"] += participant.reply_times
        out["first_deltas"] += participant.first_delta_times


def error_kind(text: str) -> str:
    live = text.startswith("live ")
    name = text.removeprefix("live ").split(":", 1)[0]
    if "rejected" in text:
        return "rejected"
    if name == "HTTPError":
        return "http>=400"
    if "Timeout" in name:
        return "live timeout" if live else "timeout"
    if live:
        return "websocket"
    if name.startswith("Connection"):
        return "connection"
    return "unexpected page"


# --- one run ---------------------------------------------------------------------------------------------------------
@dataclass
class Result:
    database: str
    annotators: int
    dond: int
    load_before: str
    created_s: float = 0.0
    wall_s: float = 0.0
    pages: list[float] = field(default_factory=list)
    annotator_pages: list[float] = field(default_factory=list)
    dond_pages: list[float] = field(default_factory=list)
    forms: int = 0
    replies: list[float] = field(default_factory=list)
    first_deltas: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cpu_s: float = 0.0
    client_cpu_s: float = 0.0
    idle_mb: float = 0.0
    peak_mb: float = 0.0
    main_idle_mb: float = 0.0
    main_peak_mb: float = 0.0
    hwm_mb: float = 0.0
    profile: str = ""
    server_log: str = ""

    @property
    def participants(self) -> int:
        return self.annotators + self.dond

    @property
    def page_p95_ms(self) -> float:
        return quantiles_ms(self.pages)[1] if self.pages else float("inf")

    @property
    def meets_target(self) -> bool:
        return self.participants >= TARGET_PARTICIPANTS and self.page_p95_ms < TARGET_P95_MS and not self.errors

    @property
    def passes(self) -> bool:  # the exit status: the target's criteria at the load actually run
        return self.page_p95_ms < TARGET_P95_MS and not self.errors


class FakeLLM:
    """``backend/core/llm/fake_server.py`` in a process of its own: its threads do not share the clients' interpreter."""

    def __init__(self, latency: float):
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "backend.core.llm.fake_server",
                "--port",
                str(self.port),
                "--latency",
                str(latency),
                "--responder",
                "echo",
            ],
            cwd=PROJECT_ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(f"http://127.0.0.1:{self.port}/_requests", timeout=2)
                return
            except requests.RequestException:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise RuntimeError("the fake LLM server did not start") from None
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_profiler(pid: int, folder: Path, result: Result) -> subprocess.Popen:
    """``py-spy record`` of the server (raw collapsed stacks, active threads only) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    result.profile = str(folder / f"mixed-load-{result.database}-{time.strftime('%Y%m%d-%H%M%S')}.txt")
    py_spy = str(Path(sys.executable).with_name("py-spy"))
    command = [py_spy, "record", "--nonblocking", "--format", "raw", "--rate", "50", "--pid", str(pid)]
    command += ["--output", result.profile]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_profiler(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_one(database: str, database_url: str, args) -> Result:
    """Start the fake LLM and the oTree server on ``database``, measure, and always stop both."""
    result = Result(database, args.annotators, args.dond, Path("/proc/loadavg").read_text().strip())
    print(f"== {database}: load average before the run: {result.load_before}", flush=True)
    folder = Path(tempfile.mkdtemp(prefix="mixed-load-"))
    write_episodes(folder, regular=max(1, args.annotators * PER_ANNOTATOR // ANNOTATORS_PER_EPISODE))
    out = dict(annotators=dict(latencies=[], errors=[], forms=[]), players=dict(latencies=[], errors=[], replies=[]))
    out["players"]["first_deltas"] = []
    llm = FakeLLM(args.latency)
    try:
        env = base_env(
            OPENAI_BASE_URL=llm.base_url,
            OPENAI_API_KEY="sk-bench-not-a-key",
            LLM_MAX_CONCURRENCY=str(max(args.dond, 32)),
        )
        env = deployment_mode(env, debug=args.debug_mode)
        env["DATABASE_URL"] = database_url or f"sqlite:///{folder}/mixed.sqlite3"
        with own_database(env) as env:  # PostgreSQL: a fresh database, dropped after the server has stopped
            server = start_server(kind=args.server, env=env)
            probe = ServerProbe(server.process.pid)
            probe.start()
            try:
                measure(server, probe, folder, args, result, out)
            finally:
                probe.stop()
                server.stop()
                if out["annotators"]["errors"] or out["players"]["errors"]:  # keep the log: the causes
                    kept = Path(tempfile.gettempdir()) / f"mixed-load-{database}-{server.log_path.name}"
                    shutil.copyfile(server.log_path, kept)
                    result.server_log = str(kept)
                shutil.rmtree(server.folder, ignore_errors=True)
    finally:
        llm.stop()
        shutil.rmtree(folder, ignore_errors=True)
    annotators, players = out["annotators"], out["players"]
    result.peak_mb, result.main_peak_mb = probe.peak_kb / 1024, probe.main_peak_kb / 1024
    result.annotator_pages, result.dond_pages = annotators["latencies"], players["latencies"]
    result.pages = result.annotator_pages + result.dond_pages
    result.forms = len(annotators["forms"])
    result.replies, result.first_deltas = players["replies"], players["first_deltas"]
    result.errors = annotators["errors"] + players["errors"]
    return result


def measure(server, probe: ServerProbe, folder: Path, args, result: Result, out: dict) -> None:
    """Create the sessions, warm up, then release every participant at once and wait for all of them."""
    social = dict(
        episodes=str(folder / "episodes.json"),
        annotators_per_episode=ANNOTATORS_PER_EPISODE,
        episodes_per_annotator=PER_ANNOTATOR,
        attention_checks=1,
    )
    dond = dict(llm_model="test-model", first_mover="human", max_messages=max(args.exchanges, 5))
    warm_up(server.url, social if args.annotators else None, dond if args.dond else None)

    def links(config_name, participants, config):
        if not participants:
            return []
        return session_start_links(server.url, create_session(server.url, config_name, participants, **config)["code"])

    began = time.perf_counter()
    social_links, dond_links = links("social_eval", args.annotators, social), links("dond_llm", args.dond, dond)
    result.created_s = time.perf_counter() - began
    result.idle_mb = sum(status_kb(pid, "VmRSS") for pid in process_tree(server.process.pid)) / 1024
    result.main_idle_mb = status_kb(server.process.pid, "VmRSS") / 1024

    total = len(social_links) + len(dond_links)
    barrier = threading.Barrier(total + 1)
    arrivals = [args.ramp * i / total for i in range(total)]
    random.Random(0).shuffle(arrivals)
    gates = [Gate(barrier, delay) for delay in arrivals]
    threads = [
        threading.Thread(
            target=annotate, args=(link,), kwargs=dict(seed=i, think=args.think, start=gates[i], out=out["annotators"])
        )
        for i, link in enumerate(social_links)
    ]
    threads += [
        threading.Thread(
            target=dond_player,
            args=(link,),
            kwargs=dict(
                seed=10_000 + i,
                think=args.think,
                exchanges=args.exchanges,
                start=gates[len(social_links) + i],
                out=out["players"],
            ),
        )
        for i, link in enumerate(dond_links)
    ]
    for thread in threads:
        thread.start()
    profiler = start_profiler(server.process.pid, Path(args.profile), result) if args.profile else None
    try:
        cpu_before, client_before = probe.cpu_seconds(), time.process_time()
        barrier.wait()
        began = time.perf_counter()
        for thread in threads:
            thread.join()
        result.wall_s = time.perf_counter() - began
        result.cpu_s = probe.cpu_seconds() - cpu_before
        result.client_cpu_s = time.process_time() - client_before
        result.hwm_mb = probe.hwm_kb() / 1024
    finally:
        if profiler is not None:
            stop_profiler(profiler)


def warm_up(server_url: str, social: dict | None, dond: dict | None) -> None:
    """One annotator and one DoND exchange before the clock starts: templates compiled, first connections made."""
    warm = dict(latencies=[], errors=[], forms=[], replies=[], first_deltas=[])
    gate = Gate(threading.Barrier(1))
    if social is not None:
        link = session_start_links(server_url, create_session(server_url, "social_eval", 1, **social)["code"])[0]
        annotate(link, seed=-1, think=0, start=gate, out=warm)
    if dond is not None:
        link = session_start_links(server_url, create_session(server_url, "dond_llm", 1, **dond)["code"])[0]
        dond_player(link, seed=-1, think=0, exchanges=1, start=gate, out=warm)
    if warm["errors"] or (dond is not None and not warm["replies"]):
        raise RuntimeError(f"the warm-up failed: {warm['errors']}")


# --- the report ------------------------------------------------------------------------------------------------------
def quantiles_ms(seconds: list[float]) -> tuple[float, float, float, float]:
    ms = sorted(1000 * value for value in seconds)
    if not ms:
        return (float("nan"),) * 4
    q = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else ms * 99
    return q[49], q[94], q[98], ms[-1]


def latency_row(seconds: list[float]) -> str:
    if not seconds:
        return "–"
    return "{:.0f} / {:.0f} / {:.0f} / {:.0f}".format(*quantiles_ms(seconds))


def verdict(result: Result) -> str:
    if result.participants >= TARGET_PARTICIPANTS:
        return "MET" if result.meets_target else "NOT MET"
    return f"n/a (< {TARGET_PARTICIPANTS}); p95 and errors " + ("pass" if result.passes else "fail")


def report(results: list[Result], args) -> None:
    print()
    print(
        f"mixed load: {args.annotators} annotators + {args.dond} DoND players at once, think {args.think:g} s "
        f"(mean pause), ramp {args.ramp:g} s, model latency {args.latency:g} s, {args.exchanges} exchanges; "
        f"oTree {args.server} ({'debug' if args.debug_mode else 'production'} mode); {os.cpu_count()} cores"
    )
    rows = [("", [r.database for r in results])]

    def add(label, value):
        rows.append((label, [value(r) for r in results]))

    add("load average before", lambda r: " ".join(r.load_before.split()[:3]))
    add("participants", lambda r: f"{r.participants} ({r.annotators} + {r.dond})")
    add("session creation", lambda r: f"{r.created_s:.1f} s")
    add("duration (all finished)", lambda r: f"{r.wall_s:.1f} s")
    add("page steps", lambda r: f"{len(r.pages)} ({r.forms} rating forms)")
    add("page throughput", lambda r: f"{len(r.pages) / r.wall_s:.1f} steps/s")
    add("page ms p50/p95/p99/max", lambda r: latency_row(r.pages))
    add("  annotators' pages", lambda r: latency_row(r.annotator_pages))
    add("  DoND players' pages", lambda r: latency_row(r.dond_pages))
    add("DoND exchanges", lambda r: f"{len(r.replies)} of {r.dond * args.exchanges}")
    add("exchange throughput", lambda r: f"{len(r.replies) / r.wall_s:.2f} exchanges/s")
    add("first piece ms p50/p95/p99/max", lambda r: latency_row(r.first_deltas))
    add("LLM reply ms p50/p95/p99/max", lambda r: latency_row(r.replies))
    add("errors", lambda r: str(len(r.errors)))
    kinds = sorted({error_kind(e) for r in results for e in r.errors})
    for kind in kinds:
        add(f"  {kind}", lambda r, kind=kind: str(Counter(error_kind(e) for e in r.errors)[kind]))
    add("server CPU (busy share of 1 core)", lambda r: f"{r.cpu_s:.1f} s ({100 * r.cpu_s / r.wall_s:.0f} %)")
    add("bench client CPU", lambda r: f"{r.client_cpu_s:.1f} s")
    add("server tree RSS MB, before/peak", lambda r: f"{r.idle_mb:.0f} / {r.peak_mb:.0f}")
    add("  oTree process, before/peak/VmHWM", lambda r: f"{r.main_idle_mb:.0f} / {r.main_peak_mb:.0f} / {r.hwm_mb:.0f}")
    add(f"target: {TARGET_PARTICIPANTS} at once, p95 < {TARGET_P95_MS:.0f} ms, 0 errors", verdict)
    width = max(len(label) for label, _ in rows)
    widths = [max(len(values[i]) for _, values in rows) for i in range(len(results))]
    for label, values in rows:
        print("  " + label.ljust(width) + "  " + "  ".join(v.rjust(w) for v, w in zip(values, widths, strict=True)))
    for result in results:
        if result.errors:
            print(f"  first errors ({result.database}): " + " | ".join(result.errors[:3]))
        if result.server_log:
            print(f"  server log ({result.database}): {result.server_log}")
        if result.profile:
            print(f"  py-spy profile of the server ({result.database}): {result.profile}")


# --- main ------------------------------------------------------------------------------------------------------------
def postgres_url(args) -> str:
    """A PostgreSQL URL to create the runs' databases from, or "" when none is reachable."""
    url = args.postgres_url or os.environ.get("TEST_DATABASE_URL", "")
    if url:
        return url
    try:
        started = subprocess.run(
            ["bash", str(PROJECT_ROOT / ".ci" / "start_postgres.sh"), "otree_bench_mixed"],
            capture_output=True,
            text=True,
            timeout=600,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        print(f"PostgreSQL not started: {error}")
        return ""
    if started.returncode:
        print(f"PostgreSQL not started (.ci/start_postgres.sh exited {started.returncode}): {started.stderr[-500:]}")
        return ""
    return started.stdout.strip().splitlines()[-1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=200, help="simulated social_eval annotators")
    parser.add_argument("--dond", type=int, default=100, help="simulated DoND players (person vs LLM)")
    parser.add_argument(
        "--think", type=float, default=5.0, help="mean pause between pages and between messages, s (0 = worst case)"
    )
    parser.add_argument("--latency", type=float, default=1.0, help="seconds before each model reply")
    parser.add_argument("--exchanges", type=int, default=5, help="chat messages each DoND player sends")
    parser.add_argument("--database", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--postgres-url", default="", help="default: TEST_DATABASE_URL or .ci/start_postgres.sh")
    parser.add_argument("--server", choices=["prodserver", "devserver"], default="prodserver")
    parser.add_argument("--ramp", type=float, default=0.0, help="spread the arrivals over this many seconds")
    parser.add_argument("--debug-mode", action="store_true", help="OTREE_PRODUCTION=0 (as bench/annotation_load.py)")
    parser.add_argument("--profile", default="", help="folder: record the server with py-spy (raw stacks)")
    parser.add_argument("--quick", action="store_true", help="smoke test: 20 annotators + 10 DoND players")
    args = parser.parse_args(argv)
    if args.quick:
        args.annotators, args.dond = 20, 10
    if args.annotators < 0 or args.dond < 0 or args.annotators + args.dond < 1 or args.exchanges < 1:
        parser.error("--annotators and --dond: 0 or more, together at least 1; --exchanges at least 1")

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks: no stray servers
    databases = ["sqlite", "postgresql"] if args.database == "both" else [args.database]
    base_url = postgres_url(args) if "postgresql" in databases else ""
    if "postgresql" in databases and not base_url:
        if args.database == "postgresql":
            print("PostgreSQL is not reachable.")
            return 1
        print("PostgreSQL is not reachable: SQLite only.")
        databases = ["sqlite"]
    results = []
    for database in databases:
        results.append(run_one(database, base_url if database == "postgresql" else "", args))
    report(results, args)
    return 0 if all(r.passes for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
