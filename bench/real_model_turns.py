"""Time per DoND turn against a real OpenAI-compatible server: self-play of one model against itself, every turn's
latency and prompt size, and how much of the time is reading the prompt versus writing the reply.

Each player's prompt only grows at the end (``tests/test_selfplay.py`` checks it), so a server with a prefix cache
reads only the new tail of each turn. Whether it does depends on the server: llama-cpp-python keeps only the last
prompt's state by default, so two players alternating on one server lose it every turn; ``--cache true`` keeps the
states of earlier prompts. Run this once against each setting, with the same arguments (temperature 0: the same
games), and compare.

Run: ``python bench/real_model_turns.py --base-url http://127.0.0.1:8000/v1 --model smollm2 [--instances 2]
[--max-messages 3]``. Start the server, for example, with
``python -m llama_cpp.server --model SmolLM2-135M-Instruct.Q4_1.gguf --model_alias smollm2 --n_ctx 8192
[--cache true]``.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.negotiation_protocol import PLAIN  # noqa: E402
from backend.selfplay import run_selfplay  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--instances", type=int, default=2)
    parser.add_argument("--max-messages", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        asyncio.run(
            run_selfplay(
                model_a=args.model,
                model_b=args.model,
                instances=args.instances,
                mode="semi",
                language="en",
                out_dir=folder,
                max_messages=args.max_messages,
                llm_reprompts=1,
                protocol=PLAIN,
                settings_options=dict(temperature=0.0, timeout_s=300, max_retries=0, base_url=args.base_url),
                concurrency=1,
            )
        )
        wall = time.monotonic() - started
        with open(Path(folder) / "dond_events.csv", encoding="utf-8", newline="") as handle:
            calls = [row for row in csv.DictReader(handle) if row["kind"] == "llm_call" and not row["llm_error_kind"]]
    latency = [float(call["latency_s"]) for call in calls]
    prompt = [int(call["prompt_tokens"]) for call in calls]
    reply = [int(call["completion_tokens"]) for call in calls]
    print(f"{len(calls)} model turns in {wall:.1f} s")
    print(
        f"seconds per turn: mean {statistics.mean(latency):.2f}, median {statistics.median(latency):.2f}, "
        f"max {max(latency):.2f}"
    )
    print(
        f"prompt tokens per turn: mean {statistics.mean(prompt):.0f}, max {max(prompt)}; "
        f"reply tokens: mean {statistics.mean(reply):.0f}, max {max(reply)}"
    )
    print(f"total: {sum(prompt)} prompt tokens, {sum(reply)} reply tokens, {sum(latency):.1f} s in calls")


if __name__ == "__main__":
    main()
