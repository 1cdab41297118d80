"""``python -m backend release --out DIR EXPORT...``: write a dataset release (``backend.core.release``) with its
card (``backend.core.data_card``), the report figures of the exports that have a report, and a manifest.

Bundle layout::

    DIR/README.md              the data card (Hugging Face dataset card; its codebook is backend.codebook's)
    DIR/data/<kind>.parquet    one table per record kind, typed
    DIR/data/<kind>.jsonl      the same rows as JSON lines
    DIR/figures/<app>/...      the report's figures (SVG, PNG) of the released rows
    DIR/manifest.json          version, inputs (released names) with SHA-256, options, command line

The pseudonym key is read from ``RELEASE_PSEUDONYM_KEY``; the command refuses to run without it, and refuses an
``--out`` folder that is not empty (a release is never mixed with an older one). Nothing in the bundle names a folder
of the researcher's machine or an identifier of the exports: the manifest records each input by its released name and
the command line with paths cut to their last part (``backend.core.manifest.public_argv``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from backend.core import data_card, manifest, publish, release
from backend.core.figures import write_figures
from backend.core.manifest import public_argv
from backend.core.runs import write_rows
from backend.core.servers import check_servers, label_export, people_on_several_servers

REPORTERS = {  # record kind → report module whose figures the release includes
    "games": "backend.dond.report",
    "ratings": "backend.social.report",
    "judgements": "backend.reasoning.report",
    "bias_answers": "backend.bias.report",
}


def add_release_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", type=Path, help="exports to release (CSV)")
    parser.add_argument("--out", type=Path, required=True, help="empty or new folder for the bundle")
    parser.add_argument(
        "--free-text",
        choices=release.FREE_TEXT_MODES,
        default="mask",
        help="free-text columns: mask e-mail addresses, phone numbers and IDs in them (default), drop them, keep them",
    )
    parser.add_argument("--license", default="other", help="licence id for the card (e.g. cc-by-4.0)")
    parser.add_argument("--name", default="Study data", help="the dataset's name on its card")
    parser.add_argument(
        "--codebook",
        type=Path,
        help="JSON file: column name → meaning, replacing the project codebook's meaning of those columns on the card",
    )
    parser.add_argument("--no-figures", action="store_true", help="leave the report figures out")
    parser.add_argument(
        "--servers",
        help="one study on several servers: the server of each export, in order, comma-separated (e.g. lab1,lab2);"
        " two servers' equal codes stay two people (docs/multi-server.md)",
    )


def write_table(table: release.Table, folder: Path) -> list[Path]:
    """``<kind>.parquet`` and ``<kind>.jsonl`` of one table (types: the frame's, written by pyarrow / pandas)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    parquet, jsonl = folder / f"{table.kind}.parquet", folder / f"{table.kind}.jsonl"
    pq.write_table(pa.Table.from_pandas(table.frame, preserve_index=False), parquet)
    text = table.frame.to_json(orient="records", lines=True, force_ascii=False)
    jsonl.write_text(text if text.endswith("\n") or not text else text + "\n", encoding="utf-8")
    return [parquet, jsonl]


def release_figures(paths: Sequence[Path], folder: Path) -> tuple[list[Path], list[str]]:
    """The report figures of the exports' non-test rows, per app (no Pareto plots: they name games), and for each app
    whose report cannot be computed from them (e.g. only gold ratings) why it has no figures."""
    by_reporter: dict[str, list[Path]] = {}
    written, missing = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for index, path in enumerate(paths):
            kind, frame = release.read_export(path)
            if kind not in REPORTERS:
                continue
            kept = release.without_tests(frame)
            copy = Path(scratch) / f"{index}-{path.name}"
            write_rows(copy, kept.to_dict("records"), columns=list(kept.columns))
            by_reporter.setdefault(REPORTERS[kind], []).append(copy)
        for reporter, copies in by_reporter.items():
            app = reporter.split(".")[1]
            try:
                data = json.loads(importlib.import_module(reporter).report(copies, as_json=True))
            except ValueError as error:
                missing.append(f"{app}: no figures ({error})")
                continue
            specs, _ = publish.report_outputs(reporter, data)
            written += write_figures(specs, folder / app)
    return written, missing


def make_release(
    paths: Sequence[Path],
    out: Path,
    *,
    key: bytes,
    argv: Sequence[str],
    free_text: str = "mask",
    license: str = "other",
    name: str = "Study data",
    descriptions: Mapping[Any, str] | None = None,
    figures: bool = True,
    servers: Sequence[str] | None = None,
    codebook: data_card.Codebook = None,
) -> list[Path]:
    """Write the bundle (see the module docstring); returns every file written. ``servers`` names the server of each
    export (``backend.core.servers``): each server's codes are labelled before they are pseudonymised. ``codebook``:
    the column meanings on the card (the command line passes ``backend.codebook.release_columns``)."""
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"{out} is not empty; give a new or empty folder so the release is not mixed with others.")
    with tempfile.TemporaryDirectory(prefix="release-servers-") as scratch:
        read = paths
        if servers is not None:
            names = check_servers(servers, files=len(paths))
            read = [
                label_export(path, Path(scratch) / str(n), server=s)
                for n, (path, s) in enumerate(zip(paths, names, strict=True))
            ]
        built = release.build_release(read, key=key, free_text=free_text, servers=servers)
        tables = built.tables

        def scrub(text: str) -> str:  # a bare code of several servers' exports: replaced as the first server's
            for server in dict.fromkeys(servers or [None]):
                text = built.ids.replace(text, server=server)
            return text

        if descriptions:  # a researcher's meaning may quote a code ("see notes of session fihlp1iq")
            descriptions = {
                column: scrub(text) if isinstance(text, str) else text for column, text in descriptions.items()
            }
        written = [file for table in tables.values() for file in write_table(table, out / "data")]
        figure_files, missing = release_figures(read, out / "figures") if figures else ([], [])
    written += figure_files
    card = data_card.data_card(
        tables,
        pretty_name=scrub(name),
        license=license,
        descriptions=descriptions,
        figures=[file.relative_to(out).as_posix() for file in figure_files if file.suffix == ".png"],
        figure_notes=missing,
        free_text=free_text,
        codebook=codebook,
    )
    (out / "README.md").write_text(card, encoding="utf-8")
    written.append(out / "README.md")
    options = dict(
        free_text=free_text,
        license=license,
        name=scrub(name),
        figures=figures,
        key_variable=release.RELEASE_KEY_VARIABLE,
    )
    if servers is not None:
        options["servers"] = list(servers)
    names = [built.ids.replace(path.name, server=servers[n] if servers else None) for n, path in enumerate(paths)]
    record = manifest.build_manifest(
        inputs=paths,
        input_names=names,
        options=options,
        argv=public_argv(argv, paths, names, scrub),
        outputs=[file.relative_to(out).as_posix() for file in written],
    )
    written.append(manifest.write_manifest(out, record))
    return written


def run_release(
    parser: argparse.ArgumentParser, args: argparse.Namespace, argv: Sequence[str], *, codebook: data_card.Codebook
) -> int:
    """The ``release`` command: check the inputs and the key, write the bundle with the ``codebook``'s column
    meanings, print what was written."""
    for path in args.files:
        if not path.is_file():
            parser.error(f"{path} does not exist or is not a file.")
    try:
        key = release.key_from(os.environ)
        descriptions = json.loads(args.codebook.read_text(encoding="utf-8")) if args.codebook else None
        if descriptions is not None and not isinstance(descriptions, dict):
            raise ValueError(f"{args.codebook} must hold a JSON object: column name → meaning.")
        servers = None
        if args.servers is not None:
            servers = check_servers(args.servers.split(","), files=len(args.files))
            grouped: dict[str, list[Path]] = {}
            for path, server in zip(args.files, servers, strict=True):
                grouped.setdefault(server, []).append(path)
            for flag in people_on_several_servers(grouped):
                print(f"Flagged: {flag}", file=sys.stderr)
        written = make_release(
            args.files,
            args.out,
            key=key,
            argv=argv,
            free_text=args.free_text,
            license=args.license,
            name=args.name,
            descriptions=descriptions,
            figures=not args.no_figures,
            servers=servers,
            codebook=codebook,
        )
    except ValueError as error:
        parser.exit(2, f"python -m backend release: {error}\n")
    print(f"Wrote {len(written)} files to {args.out}.")
    return 0
