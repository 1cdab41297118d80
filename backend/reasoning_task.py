"""The judging task of the payoff-reasoning app, without oTree: settings, loading logs, the page's data, verdicts.

Session-config keys (defaults in `DEFAULTS`):

- ``logs_folder``: folder of ``*.txt`` logs, or a ``.zip`` of them; relative paths start at the project root.
- ``logs_upload``: logs given directly, as a mapping (or its JSON text) of file name -> log text, e.g. through the
  REST API's ``modified_session_config_fields``; when set, ``logs_folder`` is not read.
- ``default_game``: game code for files whose names do not state one.
- ``extra_games``: more games (or replacements), as in `backend.games.games_with` (mapping or JSON text).
- ``judges_per_log`` (3), ``logs_per_judge`` (6), ``reservation_minutes`` (30): the assignment.
- ``csv_separator`` (``;``) for the protocol CSV download, ``aggregation_rule`` (``unanimity``/``majority``).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from backend import assignment
from backend.games import Game, games_with
from backend.reasoning_logs import ReasoningLog, parse_log_texts, sentence_lines
from backend.reasoning_protocol import (
    ERROR_TYPES,
    SEPARATORS,
    escape_newlines,
    protocol_csv,
    protocol_row,
    verdict_errors,
)
from backend.reasoning_report import RULES, format_figure, prepare_verdict_rows, summarise

DEFAULTS: Mapping[str, Any] = {
    "logs_folder": "payoff_reasoning_eval/logs",
    "logs_upload": "",
    "default_game": "",
    "extra_games": "",
    "judges_per_log": 3,
    "logs_per_judge": 6,
    "reservation_minutes": 30,
    "csv_separator": ";",
    "aggregation_rule": "unanimity",
}


class LogLoadError(ValueError):
    """The session's logs cannot be used; the message lists every problem, one per line, with file and line."""


@dataclass(frozen=True)
class TaskSettings:
    logs_folder: str
    logs_upload: Mapping[str, str] | None
    default_game: str | None
    games: Mapping[str, Game]
    judges_per_log: int
    logs_per_judge: int
    reservation_minutes: float
    csv_separator: str
    aggregation_rule: str


def _json_or_mapping(value: Any, *, key: str) -> Mapping | None:
    if value in (None, "", {}):
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as error:
            raise ValueError(f"The session-config key {key} must be JSON text of an object: {error}.") from None
    if not isinstance(value, Mapping):
        raise ValueError(f"The session-config key {key} must be a mapping, got {type(value).__name__}.")
    return value


def task_settings(config: Mapping[str, Any], *, max_logs_per_judge: int) -> TaskSettings:
    """Read and check the app's session-config keys (missing keys take `DEFAULTS`).

    >>> task_settings({"judges_per_log": 2}, max_logs_per_judge=30).judges_per_log
    2
    """
    merged = {**DEFAULTS, **{key: config[key] for key in DEFAULTS if key in config}}
    integers = {}
    for key, low, high in (
        ("judges_per_log", 1, 1000),
        ("logs_per_judge", 1, max_logs_per_judge),
        ("reservation_minutes", 1, 24 * 60),
    ):
        value = merged[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise ValueError(f"The session-config key {key} must be a number from {low} to {high}, got {value!r}.")
        integers[key] = value
    if merged["csv_separator"] not in SEPARATORS:
        raise ValueError(f"csv_separator must be one of {SEPARATORS!r}, got {merged['csv_separator']!r}.")
    if merged["aggregation_rule"] not in RULES:
        raise ValueError(f"aggregation_rule must be one of {RULES}, got {merged['aggregation_rule']!r}.")
    upload = _json_or_mapping(merged["logs_upload"], key="logs_upload")
    if upload is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in upload.items()):
        raise ValueError("logs_upload must map file names to log texts (strings).")
    games = games_with(_json_or_mapping(merged["extra_games"], key="extra_games"))
    default_game = merged["default_game"] or None
    if default_game is not None and default_game not in games:
        raise ValueError(f"default_game {default_game!r} is not a known game ({', '.join(sorted(games))}).")
    return TaskSettings(
        logs_folder=str(merged["logs_folder"]),
        logs_upload=upload,
        default_game=default_game,
        games=games,
        judges_per_log=int(integers["judges_per_log"]),
        logs_per_judge=int(integers["logs_per_judge"]),
        reservation_minutes=float(integers["reservation_minutes"]),
        csv_separator=merged["csv_separator"],
        aggregation_rule=merged["aggregation_rule"],
    )


def _read_texts(source: Path) -> tuple[dict[str, str], list[str]]:
    texts, problems = {}, []
    if source.is_dir():
        members = [(path.name, path.read_bytes) for path in sorted(source.glob("*.txt"))]
    elif source.suffix.lower() == ".zip" and source.is_file():
        archive = zipfile.ZipFile(source)
        names = [name for name in archive.namelist() if name.endswith(".txt") and not name.endswith("/")]
        members = [(PurePath(name).name, lambda name=name: archive.read(name)) for name in sorted(names)]
    else:
        raise LogLoadError(f"logs_folder {source} is neither a folder nor a .zip file.")
    for name, read in members:
        if name in texts:
            problems.append(f"{name}: the archive holds two files of this name.")
            continue
        try:
            texts[name] = read().decode("utf-8-sig")
        except UnicodeDecodeError as error:
            problems.append(f"{name}: not UTF-8 text ({error.reason} at byte {error.start}).")
    return texts, problems


def load_logs(settings: TaskSettings, *, project_root: Path) -> list[ReasoningLog]:
    """All logs of the session, checked against the games; `LogLoadError` lists every file that fails."""
    if settings.logs_upload is not None:
        texts, problems, where = dict(settings.logs_upload), [], "logs_upload"
    else:
        source = Path(settings.logs_folder)
        source = source if source.is_absolute() else project_root / source
        texts, problems = _read_texts(source)
        where = str(source)
    logs, errors = parse_log_texts(texts, games=settings.games, default_game=settings.default_game)
    problems += [str(error) for error in errors]
    if problems:
        raise LogLoadError(f"{len(problems)} log file(s) in {where} cannot be used:\n" + "\n".join(problems))
    if not logs:
        raise LogLoadError(f"No log files (*.txt) found in {where}.")
    return logs


def sentence_index(log: ReasoningLog) -> dict[str, str]:
    """Id -> text of every sentence a judge can mark: ``f<i>`` in the first response, ``l<i>`` in the last one
    (only when there is more than one attempt)."""
    index = {}
    responses = [("f", log.attempts[0])] + ([("l", log.attempts[-1])] if len(log.attempts) > 1 else [])
    for prefix, attempt in responses:
        position = 0
        for _, sentences in sentence_lines(attempt.response):
            for sentence in sentences:
                index[f"{prefix}{position}"] = sentence
                position += 1
    return index


def _paragraphs(text: str, prefix: str) -> list[dict[str, Any]]:
    paragraphs, position = [], 0
    for marker, sentences in sentence_lines(text):
        items = []
        for sentence in sentences:
            items.append({"id": f"{prefix}{position}", "text": sentence})
            position += 1
        paragraphs.append({"marker": marker, "sentences": items})
    return paragraphs


def judging_view(log: ReasoningLog, game: Game) -> dict[str, Any]:
    """What the judging page shows: the game's table and the first (and last) response as clickable sentences."""
    return {
        "game_name": game.name,
        "game_table": game.table(),
        "attempts": len(log.attempts),
        "first_response": _paragraphs(log.attempts[0].response, "f"),
        "last_response": _paragraphs(log.attempts[-1].response, "l") if len(log.attempts) > 1 else None,
    }


def split_codes(raw: str | None) -> list[str]:
    """Codes from a hidden field (``#`` or ``,`` separated), stripped, duplicates dropped, order kept.

    >>> split_codes("pa#rga, pa")
    ['pa', 'rga']
    """
    found = []
    for code in (raw or "").replace(",", "#").split("#"):
        code = code.strip()
        if code and code not in found:
            found.append(code)
    return found


def check_verdict(
    log: ReasoningLog, *, orig_cor: int | None, fin_cor: int | None, err_type: str | None, marked: str | None
) -> list[str]:
    """Problems with a submitted verdict (for the page's error message); [] when it may be saved."""
    if orig_cor is None:
        return ["Please say whether the first response is correct."]
    if len(log.attempts) > 1 and fin_cor is None:
        return ["Please say whether the last response is correct."]
    index = sentence_index(log)
    ids = split_codes(marked)
    unknown = [sentence_id for sentence_id in ids if sentence_id not in index]
    if unknown:
        return [f"Unknown sentence id(s) {', '.join(unknown)}; please mark sentences by clicking them."]
    return verdict_errors(
        orig_cor=orig_cor,
        fin_cor=orig_cor if len(log.attempts) == 1 else fin_cor,
        n_attempts=len(log.attempts),
        err_types=split_codes(err_type),
        sentences=[index[sentence_id] for sentence_id in ids],
    )


def verdict_row(
    log: ReasoningLog, *, orig_cor: int, fin_cor: int | None, err_type: str | None, marked: str | None, remarks: str
) -> dict[str, object]:
    """The protocol row of a valid verdict: sentences in text order, error types in the protocol's order."""
    index = sentence_index(log)
    ids = set(split_codes(marked))
    codes = set(split_codes(err_type))
    return protocol_row(
        log,
        orig_cor=orig_cor,
        fin_cor=orig_cor if len(log.attempts) == 1 else fin_cor,
        err_types=[code for code in ERROR_TYPES if code in codes] + sorted(codes - set(ERROR_TYPES)),
        sentences=[text for sentence_id, text in index.items() if sentence_id in ids],
        remarks=remarks or "",
    )


def script_json(value: Any) -> str:
    """JSON that is safe inside an HTML ``<script>`` element (``<``, ``>``, ``&`` escaped).

    >>> script_json("</script>")
    '"\\\\u003c/script\\\\u003e"'
    """
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def coverage_table(files: Iterable[str], coverage: Mapping[str, tuple[int, int]], *, per_log: int) -> list[dict]:
    """Rows for the admin report: file, finished judgements, live reservations, still needed."""
    return [
        {"file": file, "done": done, "reserved": live, "missing": max(per_log - done, 0)}
        for file in files
        for done, live in [coverage.get(file, (0, 0))]
    ]


def error_type_help() -> list[dict[str, str]]:
    """The error types for templates: code, name, definition, example."""
    return [
        {"code": code, "name": name, "definition": definition, "example": example}
        for code, (name, definition, example) in ERROR_TYPES.items()
    ]


SUMMARY_COLUMNS = (
    "model",
    "game",
    "logs",
    "ratings",
    "TP",
    "FP",
    "FN",
    "TN",
    "accuracy",
    "precision",
    "recall",
    "kappa_orig",
    "kappa_fin",
    "correct_first",
    "correct_final",
    "error_types",
)


def summary_rows(rows: Iterable[Mapping[str, object]], *, rule: str) -> list[dict[str, str]]:
    """The report's figures per model and game for a template, as text (see `backend.reasoning_report`)."""
    summary = summarise(prepare_verdict_rows(list(rows)), rule=rule)
    return [{column: format_figure(group[column]) for column in SUMMARY_COLUMNS} for group in summary]


def export_cell(column: str, value: object) -> object:
    """A protocol cell for oTree's export: None as empty, remarks with line breaks kept as ``\\n``."""
    if value is None:
        return ""
    return escape_newlines(str(value)) if column == "remarks" else value


SEPARATOR_NAMES = {";": "semicolon", ",": "comma", "\t": "tab", "|": "pipe"}


def next_log(
    files: Sequence[str], rows: Sequence[Mapping[str, Any]], *, participant: str, settings: TaskSettings, now: float
) -> tuple[str | None, bool]:
    """The log ``participant`` judges next and whether a reservation row must be added for it.

    None when they reached ``logs_per_judge`` (or all logs) or when every remaining log has its judges. A log the
    participant already holds a live reservation on is returned again (a reload), without a new row.

    >>> settings = task_settings({"judges_per_log": 1, "logs_per_judge": 2}, max_logs_per_judge=30)
    >>> rows = [{"item_id": "a", "participant": "p1", "status": "done", "reserved_at": 0.0}]
    >>> next_log(["a", "b"], rows, participant="p2", settings=settings, now=10.0)
    ('b', True)
    """
    done = sum(row["participant"] == participant and row["status"] == "done" for row in rows)
    if done >= min(settings.logs_per_judge, len(files)):
        return None, False
    timeout_s = settings.reservation_minutes * 60
    file = assignment.choose_item(
        files, rows, participant=participant, per_item=settings.judges_per_log, now=now, timeout_s=timeout_s
    )
    held = any(
        row["item_id"] == file
        and row["participant"] == participant
        and assignment.is_live_reservation(row, now=now, timeout_s=timeout_s)
        for row in rows
    )
    return file, file is not None and not held


def admin_report(
    files: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    verdicts: Sequence[Mapping[str, object]],
    *,
    settings: TaskSettings,
    session_code: str,
    now: float,
) -> dict[str, Any]:
    """The admin report's variables: progress per log, the figures, and the protocol CSV with the chosen separator."""
    coverage = assignment.coverage(files, rows, now=now, timeout_s=settings.reservation_minutes * 60)
    summary = summary_rows(verdicts, rule=settings.aggregation_rule) if verdicts else []
    return dict(
        logs=coverage_table(files, coverage, per_log=settings.judges_per_log),
        judges_per_log=settings.judges_per_log,
        ratings_done=len(verdicts),
        ratings_needed=len(files) * settings.judges_per_log,
        summary_columns=SUMMARY_COLUMNS,
        summary=[[group[column] for column in SUMMARY_COLUMNS] for group in summary],
        rule=settings.aggregation_rule,
        separator_name=SEPARATOR_NAMES[settings.csv_separator],
        protocol_csv_json=script_json(protocol_csv(verdicts, separator=settings.csv_separator)),
        download_name_json=script_json(f"payoff_reasoning_{session_code}.csv"),
    )
