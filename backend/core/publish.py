"""``python -m backend report … --figures DIR --latex DIR --markdown DIR --manifest FILE``: the report's figures and
paper tables, computed from the same JSON data ``--json`` prints, and a manifest of what made them.

Each app's ``figures`` module turns the parsed ``--json`` data into ``FigureSpec``s (``report_figures``) and
``Table``s (``report_tables``); the admin reports call the same functions, so a screen and a paper show the same
figure. Every output folder gets a ``manifest.json`` (``backend.core.manifest``); ``--manifest FILE`` writes the
manifest of the printed report itself (stdout stays the report alone, so ``--json`` output stays parseable).

A manifest goes out with what it describes (beside a paper's tables), so it names no folder of the researcher's
machine and no identifier of the exports, as a release's does (``public_record``): each input by its file name with
identifiers pseudonymised, the command line and the options' paths cut to their last part, and session codes (and
any other identifier the inputs hold) as keyed pseudonyms, the release's own when ``RELEASE_PSEUDONYM_KEY`` is set.
"""

from __future__ import annotations

import importlib
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from backend.core import figures as core_figures
from backend.core import manifest as core_manifest
from backend.core import paper_tables, release
from backend.core.csvio import read_csv_any

FIGURE_MODULES = {
    "backend.dond.report": "backend.dond.figures",
    "backend.social.report": "backend.social.figures",
    "backend.reasoning.report": "backend.reasoning.figures",
    "backend.bias.report": "backend.bias.figures",
}
FINISHED_OUTCOMES = ("success", "lose", "aborted")  # backend.dond.export: and "unfinished"
DEFAULT_PARETO_OUTCOMES = ("success", "lose")  # the default Pareto plot's game: a deal, else a game played out
# The reports' bootstrap settings (fixed in the report modules): recorded in every manifest.
SEEDS = {"bootstrap_seed": 0, "bootstrap_resamples": 1000}


def figures_module(reporter: str) -> ModuleType:
    """The figures module of a report module (``backend.<app>.report`` → ``backend.<app>.figures``)."""
    if reporter not in FIGURE_MODULES:
        raise ValueError(f"There are no figures for the report module {reporter!r}.")
    return importlib.import_module(FIGURE_MODULES[reporter])


def pareto_rows(paths: Sequence[str | Path], game_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The dond_games rows to draw a Pareto plot of: those named by ``game_ids`` (any finished game), else the
    first game that ended in a deal (``success``), else the first that ended without one (``lose``): an aborted game
    shows no bargaining outcome and is drawn only when asked for by its id.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "games.csv"
    >>> _ = path.write_text("game_id,outcome\\nA,aborted\\nB,unfinished\\nC,lose\\nD,success\\n")
    >>> [row["game_id"] for row in pareto_rows([path], [])], [row["game_id"] for row in pareto_rows([path], ["A"])]
    (['D'], ['A'])
    """
    from backend.core.csvio import read_csv_any

    rows = [row for path in paths for row in read_csv_any(path, dtype=str, keep_default_na=False).to_dict("records")]
    finished = [row for row in rows if row.get("outcome") in FINISHED_OUTCOMES]
    if not game_ids:
        for outcome in DEFAULT_PARETO_OUTCOMES:
            chosen = [row for row in finished if row.get("outcome") == outcome]
            if chosen:
                return chosen[:1]
        return []
    chosen = [row for row in finished if row["game_id"] in set(game_ids)]
    missing = sorted(set(game_ids) - {row["game_id"] for row in chosen})
    if missing:
        raise ValueError(f"No finished game has the id(s) {missing}; the files hold {len(finished)} finished games.")
    return chosen


def report_outputs(
    reporter: str, data: Any, *, paths: Sequence[str | Path] = (), game_ids: Sequence[str] = ()
) -> tuple[list[core_figures.FigureSpec], list[paper_tables.Table]]:
    """The figures and tables of one report's parsed JSON ``data`` (DoND: plus the Pareto plot of chosen games)."""
    module = figures_module(reporter)
    specs = module.report_figures(data)
    if reporter == "backend.dond.report" and paths:
        specs += [module.pareto_figure(row) for row in pareto_rows(paths, game_ids)]
    return specs, module.report_tables(data)


def publish(
    reporter: str,
    json_text: str,
    *,
    paths: Sequence[str | Path],
    argv: Sequence[str],
    options: Mapping[str, Any],
    figures: str | Path | None = None,
    latex: str | Path | None = None,
    markdown: str | Path | None = None,
    game_ids: Sequence[str] = (),
    rows_read: Sequence[str | Path] | None = None,
    input_names: Sequence[str] | None = None,
) -> list[Path]:
    """Write the figures and tables asked for, each folder with its manifest; returns every file written.
    ``rows_read`` are the files the report read (rows kept, codes labelled), where the Pareto plots' games are looked
    up; ``paths`` (the files as given) go into the manifests, under ``input_names`` when given (``public_record``)."""
    rows_read = paths if rows_read is None else rows_read
    specs, tables = report_outputs(reporter, json.loads(json_text), paths=rows_read, game_ids=game_ids)
    written: list[Path] = []
    for folder, write in (
        (figures, lambda folder: core_figures.write_figures(specs, folder)),
        (latex, lambda folder: paper_tables.write_tables(tables, folder, kind="latex")),
        (markdown, lambda folder: paper_tables.write_tables(tables, folder, kind="markdown")),
    ):
        if folder is None:
            continue
        files = write(folder)
        record = core_manifest.build_manifest(
            inputs=paths,
            input_names=input_names,
            options={**options, **SEEDS},
            argv=argv,
            outputs=[file.name for file in files],
        )
        written += [*files, core_manifest.write_manifest(folder, record)]
    return written


def write_report_manifest(
    target: str | Path,
    *,
    paths: Sequence[str | Path],
    argv: Sequence[str],
    options: Mapping[str, Any],
    input_names: Sequence[str] | None = None,
) -> Path:
    """The manifest of a printed report, written to the file ``target`` (inputs under ``input_names`` when given)."""
    record = core_manifest.build_manifest(
        inputs=paths, input_names=input_names, options={**options, **SEEDS}, argv=argv, outputs=["stdout"]
    )
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return target


@dataclass(frozen=True)
class PublicRecord:
    """What a report's manifests record, as ``public_record`` made it."""

    names: list[str]  # each input's file name, identifiers pseudonymised
    argv: list[str]
    options: dict[str, Any]


def public_record(
    paths: Sequence[Path],
    *,
    argv: Sequence[str],
    options: Mapping[str, Any],
    environ: Mapping[str, str],
    sessions: Sequence[str] = (),
    servers: Sequence[str] | None = None,
) -> PublicRecord:
    """The inputs' names, the command line and the options as a report's manifests record them: as a release's
    manifest (``backend.core.manifest.public_argv``, ``backend.core.release.Pseudonymiser``), every path cut to its
    last part and every identifier the CSV inputs hold, and every ``sessions`` code, replaced by its keyed pseudonym.
    The key is ``RELEASE_PSEUDONYM_KEY`` when ``environ`` sets it (a release's pseudonyms; ValueError when it is too
    short), else a key made for this run alone and not kept (the option ``pseudonyms`` says which). ``servers``: the
    server of each CSV input (``backend.core.servers``), whose codes are pseudonymised as that server's.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "alice"
    >>> folder.mkdir()
    >>> path = folder / "games_sess0001.csv"
    >>> _ = path.write_text("session_code,game_id\\nsess0001,g1\\n")
    >>> env = {"RELEASE_PSEUDONYM_KEY": "k" * 16}
    >>> done = public_record([path], argv=["report", str(path), "--session", "sess0001", "--latex", str(folder)],
    ...                      options={"latex": str(folder), "session": ["sess0001"]}, environ=env)
    >>> code = release.pseudonym("sess0001", kind="session", key=b"k" * 16)
    >>> done.names == [f"games_{code}.csv"]
    True
    >>> done.argv == ["report", f"games_{code}.csv", "--session", code, "--latex", "alice"]
    True
    >>> done.options == {"latex": "alice", "session": [code], "pseudonyms": "keyed with RELEASE_PSEUDONYM_KEY"}
    True
    """
    if environ.get(release.RELEASE_KEY_VARIABLE):
        key, how = release.key_from(environ), f"keyed with {release.RELEASE_KEY_VARIABLE}"
    else:
        key = secrets.token_bytes(32)
        how = f"keyed for this run alone (set {release.RELEASE_KEY_VARIABLE} for the release's pseudonyms)"
    csvs = [Path(path) for path in paths if Path(path).suffix.lower() != ".json"]
    server_of = dict(zip(csvs, servers, strict=True)) if servers is not None else {}
    ids = release.Pseudonymiser(key)
    for path in csvs:
        try:
            frame = read_csv_any(path, dtype=str, keep_default_na=False)
        except Exception:  # the report read it; a file pandas cannot read holds no identifier columns to collect
            continue
        if path in server_of:  # as backend.core.servers.label_export: this server's codes as <server>:<code>
            for column in frame.columns:
                if release.identifier_kind(column) in ("participant", "session"):
                    frame[column] = frame[column].map(lambda code, s=server_of[path]: f"{s}:{code}" if code else code)
        ids.collect(frame)
    for code in sessions:
        ids.mapping.setdefault(code, release.pseudonym(code, kind="session", key=key))

    def scrub(text: str) -> str:  # a bare code of several servers' exports: replaced as the first server's
        for server in dict.fromkeys(servers or [None]):
            text = ids.replace(text, server=server)
        return text

    names = [ids.replace(Path(path).name, server=server_of.get(Path(path))) for path in paths]

    def public(value: Any) -> Any:
        if isinstance(value, str):
            return core_manifest.public_argv([value], paths, names, scrub)[0]
        if isinstance(value, list | tuple):
            return [public(item) for item in value]
        return value

    return PublicRecord(
        names=names,
        argv=core_manifest.public_argv(argv, paths, names, scrub),
        options={**{name: public(value) for name, value in options.items()}, "pseudonyms": how},
    )
