"""DoND games at once while the model endpoint fails; prints the abort rate the injected faults cause.

For each fault rate, ``--games`` people play a whole game each (two messages, then a proposal) against the local
OpenAI-compatible test server, which fails that share of calls, evenly: timeout, 429 with Retry-After, 500, a stream
dropped after three words, garbage. Printed per rate: games finished (the rest are stuck: must be 0), aborted and
why, failed calls by stored kind, requests made, the highest number of model calls in flight (never above
``LLM_MAX_CONCURRENCY``), wall time.

Run: ``python bench/dond_faults.py [--games 100] [--rates 0,0.1,0.2,0.35,0.5] [--cap 32]``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.core.llm.fake_server import FakeOpenAIServer  # noqa: E402
from harness.dond_fault_run import FaultyModel, play_all_to_end, summarise  # noqa: E402
from harness.dond_live_client import advance_all  # noqa: E402
from harness.servers import base_env, create_session, export_rows, running_server  # noqa: E402

REPROMPTS = 2
RETRIES = 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--rates", default="0,0.1,0.2,0.35,0.5", help="comma-separated shares of failing calls")
    parser.add_argument("--cap", type=int, default=32, help="LLM_MAX_CONCURRENCY of the server")
    parser.add_argument("--timeout", type=float, default=5.0, help="llm_timeout_s (a timeout fault stalls 1 s longer)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rates = [float(rate) for rate in args.rates.split(",")]

    llm = FakeOpenAIServer()
    llm.start()
    env = base_env(OPENAI_BASE_URL=llm.base_url, OPENAI_API_KEY="sk-bench-not-a-key", LLM_MAX_CONCURRENCY=str(args.cap))
    print(
        f"dond under LLM faults: {args.games} games at once per rate, llm_timeout_s {args.timeout}, "
        f"llm_max_retries {RETRIES}, llm_reprompts {REPROMPTS}, LLM_MAX_CONCURRENCY {args.cap}"
    )
    print(
        f"  {'fault rate':>10} {'finished':>9} {'stuck':>6} {'aborted':>8} {'abort rate':>10} "
        f"{'requests':>9} {'in flight':>9} {'wall s':>7}  failed calls by kind"
    )
    stuck_total = 0
    try:
        with running_server(kind="prodserver", env=env) as server:
            for rate in rates:
                model = FaultyModel(fault_rate=rate, seed=args.seed, timeout_s=args.timeout)
                llm.clear()
                llm.responder = model
                session = create_session(
                    server.url,
                    "dond_llm",
                    args.games,
                    llm_model="test-model",
                    first_mover="human",
                    llm_timeout_s=args.timeout,
                    llm_max_retries=RETRIES,
                    llm_reprompts=REPROMPTS,
                )
                players = advance_all(server.url, session["code"])
                began = time.monotonic()
                outcomes = asyncio.run(play_all_to_end([p.live_url for p in players], deadline_s=300))
                wall = time.monotonic() - began
                games = export_rows(server.url, "dond", "custom_export_dond_games", session_code=session["code"])
                events = export_rows(server.url, "dond", "custom_export_dond_events", session_code=session["code"])
                report = summarise(games, events)
                stuck = sum(not outcome.finished for outcome in outcomes)
                stuck_total += stuck
                failed = ", ".join(f"{kind} {n}" for kind, n in sorted(report["failed_calls"].items())) or "-"
                print(
                    f"  {rate:>10.2f} {report['finished']:>9d} {stuck:>6d} {report['aborted']:>8d} "
                    f"{report['aborted'] / max(report['games'], 1):>10.1%} {len(llm.requests):>9d} "
                    f"{llm.max_in_flight:>9d} {wall:>7.1f}  {failed}"
                )
    finally:
        llm.stop()
    return 0 if stuck_total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
