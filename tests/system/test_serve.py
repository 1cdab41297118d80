"""``python -m backend.core.llm.serve`` starts the bundled model in one command and prints the base URL to use."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from backend.core.llm import LLMSettings, complete
from backend.core.llm.context import context_tokens
from harness import PROJECT_ROOT
from harness.servers import free_port, run_async

pytestmark = [pytest.mark.real_model, pytest.mark.slow]


def _as_a_background_job():
    # What a script's `command &` gives its job: SIGINT ignored (CI starts one of its two suites that way).
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start(tmp_path, port):
    command = [sys.executable, "-m", "backend.core.llm.serve", "--port", str(port), "--log", str(tmp_path / "s.log")]
    return subprocess.Popen(
        command, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True, preexec_fn=_as_a_background_job
    )


def _stops_with_its_server(process, port, stop_signal):
    process.send_signal(stop_signal)
    try:
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1)  # noqa: S310 (our own server)
        except OSError:
            return
        time.sleep(0.5)
    pytest.fail("the model server still answers after the command was stopped")


def test_the_serve_command_starts_the_model_with_a_thread_per_core_and_prints_its_url(tmp_path):
    port = free_port()
    process = _start(tmp_path, port)
    try:
        first = process.stdout.readline()  # blocks until the server answers (or the command fails)
        assert first.startswith("Serving smollm2 at "), first
        base_url = re.search(r"at (\S+) ", first).group(1)
        assert base_url == f"http://127.0.0.1:{port}/v1"
        assert f"{os.cpu_count()} threads" in first and "context 8192 tokens" in first
        usage = process.stdout.readline()
        assert usage.strip() == f"Use: --model smollm2 --base-url {base_url} --context-tokens 8192"
        settings = LLMSettings(model="smollm2", base_url=base_url, temperature=0.0, timeout_s=120, max_retries=1)
        record = run_async(complete([{"role": "user", "content": "Say hello."}], settings, max_tokens=8))
        assert record.ok and record.reply.strip(), record.error
        # llama-cpp-python reports no context size; the researcher's flag is what fits the limits to it
        assert run_async(context_tokens(LLMSettings(model="smollm2", base_url=base_url, context_tokens=8192))) == 8192
    finally:
        # Ctrl-C stops the server with the command, also when the command inherited SIGINT as ignored
        _stops_with_its_server(process, port, signal.SIGINT)


def test_a_plain_kill_of_the_serve_command_stops_the_model_server_too(tmp_path):
    port = free_port()
    process = _start(tmp_path, port)
    try:
        assert process.stdout.readline().startswith("Serving smollm2 at ")
    finally:
        _stops_with_its_server(process, port, signal.SIGTERM)
