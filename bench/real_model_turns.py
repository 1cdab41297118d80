"""Time per DoND turn against a real OpenAI-compatible server: self-play of one model against itself, every turn's
latency and prompt size, and how much of the time is reading the prompt versus writing the reply.

Each player's prompt only grows at the end (``tests/backend/dond/test_selfplay.py`` checks it), so a server that reuses the
longest common prefix of its last prompt (llama.cpp, vLLM, OpenAI) reads only the new tail of each turn. The second
part measures what that is worth: the run's longest prompt read cold, read again with one more exchange appended
(our prompts), and read with a line changed at its start (a prompt that is rebuilt each turn, e.g. with a turn
counter on top), each after an unrelated prompt has taken the server's cache.

Run: ``python bench/real_model_turns.py --base-url http://127.0.0.1:8000/v1 --model smollm2 [--instances 2]
[--max-messages 3]``. Start the server, for example, with
``python -m llama_cpp.server --model SmolLM2-135M-Instruct.Q4_1.gguf --model_alias smollm2 --n_ctx 8192
[--cache true]``.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.core.csvio import unescape_text  # noqa: E402
from backend.dond.protocol import PLAIN  # noqa: E402
from backend.dond.selfplay import run_selfplay  # noqa: E402


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
    prompts = [json.loads(unescape_text(call["llm_messages"])) for call in calls]
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
    prefix_reuse(args.base_url, args.model, max(prompts, key=lambda messages: len(json.dumps(messages))))


def prefix_reuse(base_url: str, model: str, longest: list[dict], *, repeats: int = 3) -> None:
    """Seconds to read the longest prompt: cold, with an exchange appended, with its start edited (1-token replies)."""

    def read(messages) -> tuple[float, int]:
        started = time.monotonic()
        body = {"model": model, "messages": messages, "max_tokens": 1, "temperature": 0}
        answer = requests.post(f"{base_url}/chat/completions", json=body, timeout=300).json()
        return time.monotonic() - started, answer["usage"]["prompt_tokens"]

    evict = [{"role": "user", "content": "An unrelated text that takes the server's cache. " * 40}]
    appended = [*longest, {"role": "assistant", "content": "Fine."}, {"role": "user", "content": "I propose: 1 book."}]
    edited = [dict(longest[0], content="Turn 7 of 10.\n" + longest[0]["content"]), *longest[1:]]
    for name, messages in (("cold", longest), ("appended (ours)", appended), ("start edited", edited)):
        times = []
        for _ in range(repeats):
            read(evict)
            if name != "cold":
                read(longest)  # the previous turn's prompt, as the server last saw it
            seconds, tokens = read(messages)
            times.append(seconds)
        print(f"prompt of {tokens} tokens, {name}: {statistics.median(times):.2f} s (median of {repeats})")


if __name__ == "__main__":
    main()
