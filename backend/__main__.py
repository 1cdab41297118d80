"""Command line entry: ``python -m backend report FILE... [--json] [--session CODE]... [--include-tests]``, and
``python -m backend launch-check|bonus|review --server URL --session CODE`` (``backend/core/admin_client.py``; one
study on several servers: a ``--server``/``--session`` pair per server gives one answer over all).

Test rows (an export's ``is_test`` column: demo sessions, test links) are left out unless ``--include-tests``;
``--session`` keeps only the sessions named (``backend/core/report_rows.py``). What was left out goes to stderr.
``--servers lab1,lab2`` reads the exports of one study run on several servers as one (``backend/core/servers.py``).

``report`` also writes figures, paper tables and manifests (``--figures DIR``, ``--latex DIR``, ``--markdown DIR``,
``--manifest FILE``), and ``python -m backend release --out DIR EXPORT...`` writes a pseudonymised dataset release
with its card (docs/publishing.md, ``backend.core.publish``, ``backend.core.release_cli``).

Every CSV export the product writes is recognised by columns only it has, whatever else is added to it later:

| export | what the report does |
|---|---|
| dond ``custom_export_dond_games`` (and the self-play runner's games CSV) | DoND report |
| dond ``custom_export_dond_events`` / ``custom_export_dond_late_calls`` | refused: pass the games export |
| social_eval ``custom_export_ratings_long`` / ``custom_export_ratings_wide``, Sotopia ``*_final.csv`` | social report |
| social_eval ``custom_export_qualified`` / ``custom_export_assignments`` | refused: pass the ratings export |
| payoff_reasoning_eval ``custom_export`` (protocol) / ``custom_export_protocol_with_ids`` | reasoning report |
| payoff_reasoning_eval ``custom_export_assignments`` | refused: pass the protocol export |
| bias_tests ``custom_export`` (and the bias runner's CSV) | bias report |
| oTree's all-apps wide export, per-app export, page times, chat | refused: which custom export to pass |
| every app's ``custom_export_codebook`` | refused: it describes the columns, it holds no data |

All files of one call must be the same export (model-rating JSON files may follow social-evaluation CSVs); anything
else is refused with the reason, so a report is never computed from the wrong file. Files are read with
``backend.core.csvio.read_csv_any``, which restores cells that the exports neutralised for spreadsheets.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# What to pass instead, per app, when a file is one the report cannot read.
APP_EXPORTS = {
    "dond": "dond's custom_export_dond_games",
    "social_eval": "social_eval's custom_export_ratings_long (or custom_export_ratings_wide)",
    "payoff_reasoning_eval": "payoff_reasoning_eval's custom_export (the protocol) or custom_export_protocol_with_ids",
    "bias_tests": "bias_tests' custom_export",
}
# Player fields only one app has: they name the app of oTree's per-app export.
APP_PLAYER_FIELDS = {
    "dond": {"player.game_role", "player.is_unpaired"},
    "social_eval": {"player.episode_id", "player.rating_1_1"},
    "payoff_reasoning_eval": {"player.log_file", "player.orig_choice"},
    "bias_tests": {"player.bias", "player.arguments_shown"},
}
_WIDE_APP_COLUMN = re.compile(r"^([a-z_][a-z0-9_]*)\.\d+\.player\.")


@dataclass(frozen=True)
class ExportKind:
    """One export of the product: the columns that identify it, and its report module or why it is refused."""

    name: str
    required: frozenset[str]
    reporter: str | None = None  # module with ``report(paths, *, as_json)``
    refusal: str = ""  # for exports the report does not read: what to pass instead

    def matches(self, columns: set[str]) -> bool:
        return self.required <= columns


# Checked in order: the first that matches names the file.
KINDS = [
    ExportKind(
        "dond custom_export_dond_events",
        frozenset({"game_id", "seq", "kind", "actor", "llm_messages"}),
        refusal="it holds one row per chat event; the report reads one row per game: pass " + APP_EXPORTS["dond"] + ".",
    ),
    ExportKind(
        "dond custom_export_dond_late_calls",
        frozenset({"game_id", "arrived_at", "late_reason", "kind"}),
        refusal="it holds the model replies that came after their game had ended (docs/integrity.md), none of the "
        "games: pass " + APP_EXPORTS["dond"] + ".",
    ),
    ExportKind(
        "dond custom_export_dond_games",
        frozenset({"game_id", "mode", "language", "model", "cell", "outcome", "main_score", "values_a"}),
        reporter="backend.dond.report",
    ),
    ExportKind(
        "social_eval custom_export_qualified",
        frozenset({"participant_code", "gold_rated", "gold_passed", "qualified"}),
        refusal="it lists who passed the gold episodes and holds no ratings: pass " + APP_EXPORTS["social_eval"] + ".",
    ),
    ExportKind(
        "social_eval custom_export_assignments",
        frozenset({"episode_id", "annotator", "status", "reserved_at", "is_gold"}),
        refusal="it is the log of who held which episode and holds no ratings: pass "
        + APP_EXPORTS["social_eval"]
        + ".",
    ),
    ExportKind(
        "social_eval custom_export_ratings_long",
        frozenset({"episode_id", "agent_index", "dimension", "rating", "annotator"}),
        reporter="backend.social.report",
    ),
    ExportKind(
        "social_eval custom_export_ratings_wide",
        frozenset({"session_code", "episode_id", "annotator", "is_gold"}),
        reporter="backend.social.report",
    ),
    ExportKind(
        "social_eval custom_export_ratings_wide (written before 2026-11, episode_id named pk)",
        frozenset({"session_code", "pk", "annotator", "is_gold"}),
        reporter="backend.social.report",
    ),
    ExportKind(
        "Sotopia annotation table (*_final.csv)",
        frozenset({"pk", "prolific_id", "believability_1"}),
        reporter="backend.social.report",
    ),
    ExportKind(
        "payoff_reasoning_eval custom_export_assignments",
        frozenset({"file", "participant_code", "status", "reserved_at", "finished_at"}),
        refusal="it is the log of who held which log file and holds no verdicts: pass "
        + APP_EXPORTS["payoff_reasoning_eval"]
        + ".",
    ),
    ExportKind(
        "payoff_reasoning_eval custom_export_protocol_with_ids",
        frozenset(
            {"file", "game", "attempts", "orig_choice", "final_choice", "orig_cor", "fin_cor", "err_type", "sentence"}
            | {"con_mat", "remarks", "failed_queries", "participant_code", "prolific_pid", "session_code"}
        ),
        reporter="backend.reasoning.report",
    ),
    ExportKind(
        "payoff_reasoning_eval custom_export (protocol)",
        frozenset(
            {"file", "game", "attempts", "orig_choice", "final_choice", "orig_cor", "fin_cor", "err_type", "sentence"}
            | {"con_mat", "remarks", "failed_queries"}
        ),
        reporter="backend.reasoning.report",
    ),
    ExportKind(
        "bias_tests custom_export",
        frozenset({"respondent_kind", "item_id", "bias", "version", "pro_selected", "arguments_selected"}),
        reporter="backend.bias.report",
    ),
    ExportKind(
        "an app's custom_export_codebook",
        frozenset({"app", "export", "one_row_is", "column", "type", "unit", "meaning"}),
        refusal="it is the codebook (what every column of the exports means), not data: pass an app's data export.",
    ),
    ExportKind(
        "oTree's page-times export",
        frozenset({"session_code", "participant_code", "page_name", "epoch_time_completed"}),
        refusal="it holds when each page was submitted, no results: pass the app's custom export ("
        + "; ".join(APP_EXPORTS.values())
        + ").",
    ),
    ExportKind(
        "oTree's chat export",
        frozenset({"session_code", "participant_code", "channel", "nickname", "body"}),
        refusal="it holds oTree's chat messages, no results: pass the app's custom export ("
        + "; ".join(APP_EXPORTS.values())
        + ").",
    ),
]


def _otree_page_data(columns: set[str]) -> ExportKind | None:
    """oTree's all-apps wide export or its per-app export (page data, one row per participant or player)."""
    if "participant.code" not in columns:
        return None
    wide_apps = sorted({match.group(1) for column in columns if (match := _WIDE_APP_COLUMN.match(column))})
    if wide_apps:
        name, apps = f"oTree's all-apps wide export (apps {', '.join(wide_apps)})", wide_apps
    elif any(column.startswith("player.") for column in columns):
        apps = [app for app, fields in APP_PLAYER_FIELDS.items() if fields <= columns]
        name = f"oTree's per-app export of {apps[0]}" if len(apps) == 1 else "oTree's per-app export"
    else:
        return None
    advice = [APP_EXPORTS[app] for app in apps if app in APP_EXPORTS] or list(APP_EXPORTS.values())
    return ExportKind(
        name,
        frozenset(),
        refusal="it holds the page data of each participant, not the results the report reads: pass "
        + "; or ".join(advice)
        + ".",
    )


def recognise(columns: Sequence[str]) -> ExportKind | None:
    """The export a CSV header belongs to, or None.

    >>> recognise(["session_code", "episode_id", "agent_index", "dimension", "rating", "annotator"]).reporter
    'backend.social.report'
    >>> print(recognise(["participant.code", "social_eval.1.player.rating_1_1"]).refusal)
    it holds the page data of each participant, not the results the report reads: pass social_eval's custom_export_ratings_long (or custom_export_ratings_wide).
    >>> recognise(["a", "b"]) is None
    True
    """
    names = {str(column).strip() for column in columns}
    page_data = _otree_page_data(names)
    if page_data is not None:
        return page_data
    return next((kind for kind in KINDS if kind.matches(names)), None)


def find_reporter(columns: Sequence[str]):
    """The report module for a header, or None when the header is no export the report reads."""
    kind = recognise(columns)
    return importlib.import_module(kind.reporter) if kind is not None and kind.reporter else None


class RefusedFile(ValueError):
    """A file the report does not compute from, with the reason in plain words."""


def _read_header(path: Path) -> list[str]:
    from backend.core.csvio import read_csv_any

    try:
        return [str(column).strip() for column in read_csv_any(path, nrows=0).columns]
    except UnicodeDecodeError as error:
        raise RefusedFile(
            f"{path} is not UTF-8 text (byte {error.start + 1} cannot be read): save it as UTF-8 CSV, or pass the "
            "file as the server exported it."
        ) from None
    except Exception as error:  # pandas raises several kinds for an empty or broken file
        raise RefusedFile(f"{path} cannot be read as CSV ({type(error).__name__}: {error}).") from None


def _people_beside_model_judges(kinds: dict[Path, ExportKind]) -> bool:
    """People's plain protocol export beside a model judge's protocol file (``backend.reasoning.judge``): the two
    payoff protocol exports may be mixed when every with-ids file holds model judges only, so no person's row can be
    counted twice."""
    from backend.core.csvio import read_csv_any
    from backend.reasoning.report import MODEL_JUDGE_PREFIX

    protocol = {
        "payoff_reasoning_eval custom_export (protocol)",
        "payoff_reasoning_eval custom_export_protocol_with_ids",
    }
    if {kind.name for kind in kinds.values()} != protocol:
        return False
    for path, kind in kinds.items():
        if kind.name.endswith("with_ids"):
            judges = read_csv_any(path, usecols=["participant_code"], dtype=str, keep_default_na=False)
            if not judges["participant_code"].str.startswith(MODEL_JUDGE_PREFIX).all():
                return False
    return True


def choose_reporter(paths: Sequence[Path]) -> str:
    """The report module for ``paths``, or ``RefusedFile`` saying which file is which export and what to pass."""
    if len({path.resolve() for path in paths}) != len(paths):
        raise RefusedFile("The same file is given twice; its rows would be counted twice.")
    kinds = {}
    for path in paths:
        if path.suffix.lower() == ".json":
            continue
        columns = _read_header(path)
        kind = recognise(columns)
        if kind is None:
            raise RefusedFile(
                f"{path} matches no export of this product (its columns start {columns[:6]}). The report reads: "
                + "; ".join(APP_EXPORTS.values())
                + "; or a released Sotopia *_final.csv."
            )
        if kind.reporter is None:
            raise RefusedFile(f"{path} is {kind.name}, which the report does not read: {kind.refusal}")
        kinds[path] = kind
    if not kinds:
        raise RefusedFile("Give at least one CSV export; JSON files only add model ratings to social_eval exports.")
    if len({kind.name for kind in kinds.values()}) > 1 and not _people_beside_model_judges(kinds):
        listing = "; ".join(f"{path.name} is {kind.name}" for path, kind in kinds.items())
        raise RefusedFile(f"The files are different exports ({listing}): report one export at a time.")
    (reporter,) = {kind.reporter for kind in kinds.values()}
    if len(kinds) < len(paths) and reporter != "backend.social.report":
        raise RefusedFile("JSON files (model ratings) can only accompany social_eval exports or Sotopia tables.")
    return reporter


# What ``python -m backend --help`` says first: whole sentences (the module docstring's first line ends mid-sentence).
DESCRIPTION = (
    "Reports, figures, paper tables and dataset releases from the product's CSV exports, and a running server's "
    "launch check, bonus lines and review list. Each command's options: python -m backend COMMAND --help."
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    report = sub.add_parser("report", help="print the metrics of an exported CSV file")
    report.add_argument("files", nargs="+", type=Path, help="CSV export(s) of one kind")
    report.add_argument("--json", action="store_true", help="print JSON instead of tables")
    report.add_argument("--session", action="append", default=[], help="only this session code (repeatable)")
    report.add_argument("--include-tests", action="store_true", help="keep test rows (demo sessions, test links)")
    report.add_argument(
        "--servers",
        help="one study on several servers: the server of each CSV file, in order, comma-separated (e.g. lab1,lab2);"
        " codes become SERVER:CODE, so two servers' codes never collide (docs/multi-server.md)",
    )
    for name, text in (
        ("launch-check", "what would hurt a session's study (exit status 1 when there is a problem)"),
        ("bonus", "Prolific's bulk-bonus lines of a session (PID,amount)"),
        ("review", "the review list of a session (CSV: status, reason, completion code, bonus)"),
    ):
        page = sub.add_parser(name, help=text + "; from a running server, password in OTREE_ADMIN_PASSWORD")
        page.add_argument(
            "--server",
            required=True,
            action="append",
            help="the server's URL, e.g. https://lab.example.org; one study on several servers: --server and "
            "--session once per server, in pairs, for one answer over all (docs/multi-server.md)",
        )
        page.add_argument("--session", required=True, action="append", help="the session code (on that server)")
    report.add_argument("--figures", type=Path, help="write the report's figures (SVG, PNG) into this folder")
    report.add_argument("--latex", type=Path, help="write the report's paper tables (LaTeX) into this folder")
    report.add_argument("--markdown", type=Path, help="write the report's paper tables (Markdown) into this folder")
    report.add_argument("--game", action="append", default=[], help="DoND: a game id to draw the Pareto plot of")
    report.add_argument("--manifest", type=Path, help="write the manifest of the printed report to this file")
    release = sub.add_parser("release", help="write a pseudonymised dataset release of exports")
    from backend.core.release_cli import add_release_arguments

    add_release_arguments(release)
    report.add_argument(
        "--admit-at",
        type=float,
        help="model judges and annotators: the agreement with people a judge must clear at the lower bound of its "
        "interval to be admitted (kappa for verdicts, Spearman's rho for ratings; default 0.6)",
    )
    report.add_argument(
        "--include-contradictions",
        action="store_true",
        help="bias tests: count answers whose words contradict their letter in the metrics (left out by default)",
    )
    args = parser.parse_args(argv)
    if args.command == "release":
        from backend.codebook import release_columns
        from backend.core.release_cli import run_release

        return run_release(parser, args, argv if argv is not None else sys.argv[1:], codebook=release_columns)
    if args.command != "report":
        return _from_server(parser, args)

    for path in args.files:
        if not path.is_file():
            parser.error(f"{path} does not exist or is not a file.")
    try:
        module = importlib.import_module(choose_reporter(args.files))
        options = {"include_contradictions": True} if args.include_contradictions else {}
        if options and module.__name__ != "backend.bias.report":
            raise RefusedFile("--include-contradictions applies to bias-test exports only.")
        if args.admit_at is not None:
            if module.__name__ not in ("backend.reasoning.report", "backend.social.report"):
                raise RefusedFile("--admit-at applies to payoff-reasoning and social_eval exports only.")
            options["admit_at"] = args.admit_at
        with tempfile.TemporaryDirectory(prefix="report-rows-") as scratch:
            files, notes, flags = _rows_to_read(args, Path(scratch))
            for flag in flags:
                print(f"Flagged: {flag}", file=sys.stderr)
            for note in notes:  # before the report, which may refuse a file that has no rows left
                print(f"Left out: {note}", file=sys.stderr)
            output = module.report(files, as_json=args.json, **options)
            _publish(module.__name__, args, output, argv if argv is not None else sys.argv[1:], files)
    except ValueError as error:  # RefusedFile, or a reporter's own plain-words refusal
        parser.exit(2, f"python -m backend report: {error}\n")
    print(output)
    return 0


def _from_server(parser, args) -> int:
    """``launch-check``, ``bonus`` and ``review``: what the server's researcher pages compute, fetched; for one study
    on several servers (``--server``/``--session`` pairs) one answer over all: each server's launch check under its
    name (exit status 1 when any has a problem), one bonus file (``servers.one_bonus_file``: a person paid by two
    servers is flagged on stderr), one review list with a ``server`` column (``servers.one_review_list``)."""
    from backend.core import servers
    from backend.core.admin_client import AdminClient, launch_check_table

    if problem := servers.pairs_problem(args.server, args.session):  # a pair twice: its bonus summed with itself
        parser.error(problem)
    texts = []
    for server, session in zip(args.server, args.session, strict=True):
        try:
            texts.append((server, AdminClient(server).fetch(args.command, session)))
        except (ValueError, OSError) as error:
            where = f"{server}: " if len(args.server) > 1 else ""
            parser.exit(2, f"python -m backend {args.command}: {where}{error}\n")
    if args.command == "launch-check":
        statuses = []
        for (server, text), session in zip(texts, args.session, strict=True):
            table, status = launch_check_table(text)
            print(f"{server} (session {session}):\n{table}" if len(texts) > 1 else table)
            statuses.append(status)
        return max(statuses)
    if len(texts) == 1:
        print(texts[0][1], end="")
    elif args.command == "bonus":
        lines, flags = servers.one_bonus_file(texts)
        for flag in flags:
            print(f"Flagged: {flag}", file=sys.stderr)
        print("".join(line + "\n" for line in lines), end="")
    else:
        print(servers.one_review_list(texts), end="")
    return 0


def _rows_to_read(args, scratch: Path) -> tuple[list[Path], list[str], list[str]]:
    """The files the reporter reads: each CSV with its server's codes labelled (``--servers``,
    ``backend.core.servers``), test rows and other sessions' rows left out; notes on what was left out, and the
    people flagged for coming to several servers."""
    from backend.core import servers
    from backend.core.report_rows import keep_rows

    csvs = [path for path in args.files if path.suffix.lower() != ".json"]
    names = servers.check_servers(args.servers.split(","), files=len(csvs)) if args.servers is not None else []
    server_of = dict(zip(csvs, names, strict=True)) if names else {}
    flags = servers.people_on_several_servers(_by_server(server_of), include_tests=args.include_tests) if names else []
    files, notes = [], []
    for index, path in enumerate(args.files):
        if path.suffix.lower() == ".json":
            files.append(path)
            continue
        if path in server_of:
            path = servers.label_export(path, scratch / f"server-{index}", server=server_of[path])
        kept, said = keep_rows(path, scratch / str(index), sessions=set(args.session), include_tests=args.include_tests)
        files.append(kept)
        notes += said
    return files, notes, flags


def _by_server(server_of: dict[Path, str]) -> dict[str, list[Path]]:
    grouped: dict[str, list[Path]] = {}
    for path, server in server_of.items():
        grouped.setdefault(server, []).append(path)
    return grouped


def _publish(reporter: str, args: argparse.Namespace, output: str, argv: list[str], files: list[Path]) -> None:
    """The figures, tables and manifests asked for (``backend.core.publish``), from the report's JSON data of the
    rows kept (``files``); the manifests name the files, the command line and the options as a release's manifest
    does (``publish.public_record``: no folder of this machine, session codes pseudonymised)."""
    from backend.core import publish
    from backend.core.servers import check_servers

    options = dict(
        json=args.json,
        figures=args.figures,
        latex=args.latex,
        markdown=args.markdown,
        game=args.game,
        session=args.session,
        include_tests=args.include_tests,
        include_contradictions=args.include_contradictions,
    )
    if args.admit_at is not None:
        options["admit_at"] = args.admit_at
    if args.servers is not None:
        options["servers"] = args.servers
    options = {key: str(value) if isinstance(value, Path) else value for key, value in options.items()}
    if not (args.figures or args.latex or args.markdown or args.manifest):
        return
    # the manifests go out with the tables: no folder of this machine, no session code (as a release's manifest)
    csvs = [path for path in args.files if path.suffix.lower() != ".json"]
    servers = check_servers(args.servers.split(","), files=len(csvs)) if args.servers is not None else None
    public = publish.public_record(
        args.files, argv=argv, options=options, environ=os.environ, sessions=args.session, servers=servers
    )
    if args.figures or args.latex or args.markdown:
        extra = {"include_contradictions": True} if args.include_contradictions else {}  # as the text report
        if args.admit_at is not None:
            extra["admit_at"] = args.admit_at
        data = output if args.json else importlib.import_module(reporter).report(files, as_json=True, **extra)
        publish.publish(
            reporter,
            data,
            paths=args.files,
            argv=public.argv,
            options=public.options,
            figures=args.figures,
            latex=args.latex,
            markdown=args.markdown,
            game_ids=args.game,
            rows_read=files,
            input_names=public.names,
        )
    if args.manifest:
        publish.write_report_manifest(
            args.manifest, paths=args.files, argv=public.argv, options=public.options, input_names=public.names
        )


if __name__ == "__main__":
    sys.exit(main())
