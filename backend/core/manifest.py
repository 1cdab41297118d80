"""What made an output: the product version, the input files with their SHA-256, the options and seeds, the command.

Every report (text and ``--json``), figure set, table set and data release writes one ``manifest.json`` beside its
outputs (``build_manifest`` + ``write_manifest``), so a number in a paper can be traced to the files it came from.

version = ``git describe --always --dirty`` of the product's checkout, or "unknown" outside git (a copied folder,
no git installed).

>>> manifest = build_manifest(inputs=[], options={"seed": 0}, argv=["report", "x.csv"], outputs=[])
>>> sorted(manifest)
['command', 'created_at', 'inputs', 'options', 'outputs', 'tool', 'version']
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

PRODUCT_ROOT = Path(__file__).resolve().parents[2]
MANIFEST_FILE = "manifest.json"


def sha256_of(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, as hex (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def product_version(root: str | Path = PRODUCT_ROOT) -> str:
    """``git describe --always --dirty`` of ``root``, or "unknown" when it is no git checkout or git is missing."""
    try:
        done = subprocess.run(
            ["git", "describe", "--always", "--dirty"], cwd=root, capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"


def build_manifest(
    *,
    inputs: Sequence[str | Path],
    options: Mapping[str, Any],
    argv: Sequence[str],
    outputs: Sequence[str | Path],
    tool: str = "python -m backend",
    input_names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The manifest of one run: inputs (path, bytes, sha256), options, command line, outputs (names), version.
    ``input_names`` are recorded as the inputs' paths instead of where they are (a release names each input by its
    released file name: no folder of the researcher's machine, no session code)."""
    names = [str(path) for path in inputs] if input_names is None else [str(name) for name in input_names]
    if len(names) != len(inputs):
        raise ValueError(f"input_names holds {len(names)} names for {len(inputs)} inputs; give one name per input.")
    return {
        "tool": tool,
        "version": product_version(),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": shlex.join([*shlex.split(tool), *map(str, argv)]),
        "options": dict(options),
        "inputs": [
            {"path": name, "bytes": Path(path).stat().st_size, "sha256": sha256_of(path)}
            for path, name in zip(inputs, names, strict=True)
        ],
        "outputs": [str(path) for path in outputs],
    }


def public_argv(
    argv: Sequence[str], paths: Sequence[Path], names: Sequence[str], scrub: Callable[[str], str]
) -> list[str]:
    """The command line as a published manifest records it (a release's, a report's): each input as its released
    name (``names``), every other path (absolute, or naming a file or folder that exists, e.g. ``--out``,
    ``--codebook``) as its last part, and every identifier of the exports in any argument pseudonymised (``scrub``):
    no folder of the researcher's machine and no session code is published.

    >>> from backend.core.release import Pseudonymiser
    >>> ids = Pseudonymiser(b"k", {"sess0001": "S-1"})
    >>> public_argv(["release", "--out=/home/ann/out", "/home/ann/x_sess0001.csv", "--name", "A/B sess0001"],
    ...             [Path("/home/ann/x_sess0001.csv")], ["x_S-1.csv"], ids.replace)
    ['release', '--out=out', 'x_S-1.csv', '--name', 'A/B S-1']
    """
    released = {path: name for path, name in zip(paths, names, strict=True)}

    def public(value: str) -> str:
        path = Path(value)
        if path in released:
            return released[path]
        if value and (path.is_absolute() or (len(path.parts) > 1 and path.exists())):
            value = path.name
        return scrub(value)

    out = []
    for token in map(str, argv):
        option, equals, value = token.partition("=")
        out.append(option + equals + public(value) if token.startswith("--") and equals else public(token))
    return out


def write_manifest(folder: str | Path, manifest: Mapping[str, Any]) -> Path:
    """Write ``manifest`` as ``folder/manifest.json`` (the folder is created); returns the file."""
    path = Path(folder) / MANIFEST_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
