"""Tools that cannot share the project's environment get one of their own, made once per machine and reused.

oTree 6 pins an old web stack (Starlette 0.14, MarkupSafe 1.1, SQLAlchemy 1.3); a tool whose own stack is newer
would break it if installed beside it. Such a tool lives in a virtual environment of its own under the user's cache
folder (``$XDG_CACHE_HOME`` or ``~/.cache``, in ``llm-human-lab/``), named after the tool, its version and the
Python it runs on:

| environment | what it holds | who makes it |
|---|---|---|
| ``llama-cpp-python-<version>`` | llama.cpp's OpenAI-compatible server and the bundled model | ``backend.core.llm.serve`` |
| ``locust-<version>`` | the load generator of the launch benches | ``bench/admission.py`` |
| ``datasets-<version>`` | Hugging Face ``datasets``, to load a released dataset as its users will | the release tests |

``environment`` makes it under a file lock, so two processes that need it at once (CI's two suites side by side)
make it once; it is made again when its check fails (a half-made or broken environment).
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path


def cache_folder() -> Path:
    """Where the tools' environments live: ``$XDG_CACHE_HOME/llm-human-lab`` (``~/.cache/llm-human-lab``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "llm-human-lab"


def folder_of(name: str) -> Path:
    """The environment folder of tool ``name`` (with its version) for this Python.

    >>> folder_of("locust-2.47.0").name == f"locust-2.47.0-py{sys.version_info.major}{sys.version_info.minor}"
    True
    """
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"A tool environment needs a plain name such as 'locust-2.47.0', got {name!r}.")
    return cache_folder() / f"{name}-py{sys.version_info.major}{sys.version_info.minor}"


def python_of(folder: Path) -> Path:
    return folder / "bin" / "python"


def works(folder: Path, check: str) -> bool:
    """Whether the environment in ``folder`` runs the Python statement ``check`` (e.g. an import) without error."""
    python = python_of(folder)
    if not python.exists():
        return False
    return subprocess.run([str(python), "-c", check], capture_output=True, check=False).returncode == 0


def environment(
    name: str,
    requirements: Sequence[str],
    *,
    check: str,
    build_env: Mapping[str, str] | None = None,
    announce: str = "",
    timeout_s: float = 3600,
) -> Path:
    """The folder of tool ``name``'s environment with ``requirements`` installed, made now unless it passes
    ``check``; ``build_env``: extra environment variables for the install (a compiled package's flags);
    ``announce``: printed before a build (how long it takes)."""
    folder = folder_of(name)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if works(folder, check):
            return folder
        if announce:
            print(announce.format(folder=folder), flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder)], check=True)
        pip = [str(python_of(folder)), "-m", "pip", "install", "-q"]
        env = dict(os.environ, **(build_env or {}))
        subprocess.run([*pip, "--upgrade", "pip"], check=True, env=env, timeout=timeout_s)
        subprocess.run([*pip, *requirements], check=True, env=env, timeout=timeout_s)
        if not works(folder, check):
            raise RuntimeError(f"{name} was installed into {folder} but does not pass its check ({check}).")
    return folder
