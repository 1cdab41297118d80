"""The judging task of the payoff-reasoning app, without oTree: settings, loading logs, the page's data, verdicts.

Session-config keys (defaults in `DEFAULTS`):

- ``logs_folder``: folder of ``*.txt`` logs, or a ``.zip`` of them; relative paths start at the project root.
- ``logs_upload``: logs given directly, as a mapping (or its JSON text) of file name -> log text, e.g. through the
  REST API's ``modified_session_config_fields``; when set, ``logs_folder`` is not read.
- ``default_game``: game code for files whose names do not state one.
- ``extra_games``: more games (or replacements), as in `backend.reasoning.games.games_with` (mapping or JSON text).
- ``judges_per_log`` (3; 1-100), ``logs_per_judge`` (6; 1-30), ``reservation_timeout_s`` (1800 s; 1 s to a week,
  as in social_eval: `backend.core.assignment.reservation_timeout`, which refuses the former ``reservation_minutes``):
  the assignment.
- ``csv_separator`` (``;``) for the protocol CSV download, ``aggregation_rule`` (``unanimity``/``majority``).
- ``pilot_overlap`` (off): a pilot in which every judge gets the same logs (the first ``logs_per_judge`` of the
  session, each judge in a least-covered-first order), so agreement can be computed; ``judges_per_log`` is not read.
- ``quality_floor_s`` (30; 0-3600): the admin report's quality view flags logs judged faster than this.

Logs are read within bounds (`backend.reasoning.log_files`: how many, how large each and together), whether they
come from a folder, a ``.zip`` or ``logs_upload``, so a crafted archive or upload cannot fill the server's memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from backend.core import assignment, material_language, session_keys
from backend.core.researcher_files import parse_json
from backend.core.script_json import script_json
from backend.core.stored_text import typed_length
from backend.reasoning.games import Game, games_with
from backend.reasoning.log_files import (
    LogLoadError,
    check_log_name,
    check_sizes,
    declared_log_language,
    read_log_texts,
)
from backend.reasoning.logs import ReasoningLog, parse_log_texts, sentence_lines
from backend.reasoning.protocol import (
    ERROR_TYPES,
    RULES,
    SEPARATORS,
    protocol_csv,
    protocol_row,
    split_hash_field,
    verdict_errors,
)

MAX_UPLOAD_CHARS = 25_000_000  # the logs_upload JSON text
MAX_EXTRA_GAMES_CHARS = 100_000


T, K = session_keys.Text, session_keys.key


class TaskKeys(session_keys.Keys):
    """The app's session keys as a config gives them; `task_settings` reads the JSON ones and the games."""

    logs_folder: T = K("payoff_reasoning_eval/logs", "Logs folder", max_chars=1000)
    """A folder (or .zip) of the model's reasoning logs to be judged."""
    logs_upload: Any = K("", "Logs as text", allowed="a JSON object")
    """Optional: the logs given directly (file name -> text), instead of a folder."""
    default_game: T = K("", "Game of unnamed logs", max_chars=40)
    """The game a log is about when its file name does not say."""
    extra_games: Any = K("", "More games", allowed="a JSON object")
    """Optional: further 2x2 games (or replacements), as JSON."""
    judges_per_log: session_keys.Whole = K(3, "Judges per log", ge=1, le=100)
    """How many people judge each log."""
    logs_per_judge: session_keys.Whole = K(6, "Logs per person", ge=1, le="max_logs_per_judge")
    """How many logs each person judges."""
    # the former minutes: assignment.refuse_former_minutes
    reservation_timeout_s: session_keys.Number = K(
        assignment.DEFAULT_TIMEOUT_S, "Hold a log (seconds)", ge=1, le=assignment.MAX_TIMEOUT_S
    )
    """After this an unfinished log goes to someone else."""
    csv_separator: Literal[SEPARATORS] = K(";", "Separator of the protocol file")
    """The character between columns in the report's download."""
    aggregation_rule: Literal[RULES] = K("unanimity", "Combining judges")
    """unanimity: correct only if all judges agree; majority: if most do."""
    pilot_overlap: session_keys.Flag = K(False, "Pilot: everyone judges the same")
    """Tick so agreement between judges can be measured."""
    quality_floor_s: session_keys.Number = K(30, "Too fast (seconds)", ge=0, le=3600)
    """The admin report flags logs judged faster than this."""


DEFAULTS: Mapping[str, Any] = TaskKeys().as_config()


@dataclass(frozen=True)
class TaskSettings:
    logs_folder: str
    logs_upload: Mapping[str, str] | None
    default_game: str | None
    games: Mapping[str, Game]
    judges_per_log: int
    logs_per_judge: int
    reservation_timeout_s: float
    csv_separator: str
    aggregation_rule: str
    pilot_overlap: bool = False
    quality_floor_s: float = 30


def _json_object(value: Any, *, key: str, max_chars: int) -> Mapping | None:
    """A key given as a mapping or as JSON text of an object; None when empty."""
    if value in (None, "", {}):
        return None
    if isinstance(value, str):
        if len(value) > max_chars:
            raise ValueError(
                f"The session key {key!r} holds {len(value):,} characters, more than the {max_chars:,} allowed."
            )
        value = parse_json(value, what=f"The session key {key!r}")
    if not isinstance(value, Mapping):
        raise ValueError(f"The session key {key!r} must be a JSON object, not {type(value).__name__}.")
    return value


def _checked_upload(value: Any) -> dict[str, str] | None:
    """``logs_upload`` as a mapping of file name -> log text, within the bounds of `log_files.check_sizes`."""
    upload = _json_object(value, key="logs_upload", max_chars=MAX_UPLOAD_CHARS)
    if upload is None:
        return None
    for name, text in upload.items():
        if not isinstance(name, str) or not isinstance(text, str):
            raise ValueError("The session key 'logs_upload' must map file names to log texts (strings).")
        check_log_name(name, where="logs_upload")
    sizes = {name: len(text.encode("utf-8", "surrogatepass")) for name, text in upload.items()}
    check_sizes(sizes, what="The session key 'logs_upload'", unit="log", units="logs")
    return dict(upload)


def task_settings(config: Mapping[str, Any], *, max_logs_per_judge: int) -> TaskSettings:
    """Read and check the app's session-config keys (missing keys take `DEFAULTS`); ValueError names the key.

    >>> task_settings({"judges_per_log": "2"}, max_logs_per_judge=30).judges_per_log
    2
    >>> task_settings({"logs_per_judge": 31}, max_logs_per_judge=30)
    Traceback (most recent call last):
    ...
    ValueError: The session key 'logs_per_judge' must be a whole number from 1 to 30, not 31.
    """
    assignment.refuse_former_minutes(config)
    keys = session_keys.checked(TaskKeys, config, max_logs_per_judge=max_logs_per_judge)
    games = games_with(_json_object(keys.extra_games, key="extra_games", max_chars=MAX_EXTRA_GAMES_CHARS))
    if keys.default_game and keys.default_game not in games:
        raise ValueError(
            f"The session key 'default_game' must be a known game ({', '.join(sorted(games))}), not {keys.default_game!r}."
        )
    values = {name: value for name, value in keys.as_config().items() if name != "extra_games"}
    upload = _checked_upload(keys.logs_upload)
    return TaskSettings(**{**values, "logs_upload": upload, "default_game": keys.default_game or None, "games": games})


def normalised_config(settings: TaskSettings) -> dict[str, Any]:
    """The typed values of the keys a form or the REST API may send as text (``"3"`` -> 3), to store in the config."""
    return {
        "judges_per_log": settings.judges_per_log,
        "logs_per_judge": settings.logs_per_judge,
        "reservation_timeout_s": settings.reservation_timeout_s,
        "pilot_overlap": settings.pilot_overlap,
        "quality_floor_s": settings.quality_floor_s,
    }


def load_logs(settings: TaskSettings, *, project_root: Path) -> list[ReasoningLog]:
    """All logs of the session, checked against the games; `LogLoadError` lists every file that fails.

    Nothing over the bounds of `backend.reasoning.log_files` is read into memory.
    """
    if settings.logs_upload is not None:
        texts, problems, where = dict(settings.logs_upload), [], "logs_upload"
    else:
        source = Path(settings.logs_folder)
        source = source if source.is_absolute() else project_root / source
        where = f"logs_folder {settings.logs_folder!r}"
        texts, problems = read_log_texts(source, what=where)
    logs, errors = parse_log_texts(texts, games=settings.games, default_game=settings.default_game)
    problems += [str(error) for error in errors]
    if problems:
        raise LogLoadError(f"{len(problems)} log file(s) in {where} cannot be used:\n" + "\n".join(problems))
    if not logs:
        raise LogLoadError(f"No log files (*.txt) found in {where}.")
    return logs


def check_log_language(settings: TaskSettings, config: Mapping[str, Any], *, project_root: Path) -> None:
    """Refuse a researcher's log folder or ``.zip`` whose ``language.json`` declares another language than the
    session's pages, unless ``allow_material_language_mismatch`` confirms it (`backend.core.material_language`).
    ``logs_upload`` and our bundled demo logs (English only so far) are not checked."""
    if settings.logs_upload is not None or settings.logs_folder == DEFAULTS["logs_folder"]:
        return
    source = Path(settings.logs_folder)
    source = source if source.is_absolute() else project_root / source
    what = f"logs_folder {settings.logs_folder!r}"
    material_language.check_material_languages(
        {f"the {what}": declared_log_language(source, what=what)},
        language=material_language.session_language(config),
        allow_mismatch=material_language.mismatch_allowed(config),
    )


def sentence_paragraphs(text: str, prefix: str) -> list[dict[str, Any]]:
    """A response's paragraphs as the page shows them: each its list marker and its sentences with their ids, which
    count on across paragraphs (``f0, f1, ...`` with ``prefix`` ``f``).

    >>> sentence_paragraphs("I get 5. They get 0.\\n- So {R}", "f")[1]
    {'marker': '- ', 'sentences': [{'id': 'f2', 'text': 'So {R}'}]}
    """
    paragraphs, position = [], 0
    for marker, sentences in sentence_lines(text):
        items = []
        for sentence in sentences:
            items.append({"id": f"{prefix}{position}", "text": sentence})
            position += 1
        paragraphs.append({"marker": marker, "sentences": items})
    return paragraphs


def sentence_index(log: ReasoningLog) -> dict[str, str]:
    """Id -> text of every sentence a judge can mark: ``f<i>`` in the first response, ``l<i>`` in the last one
    (only when there is more than one attempt)."""
    responses = [("f", log.attempts[0])] + ([("l", log.attempts[-1])] if len(log.attempts) > 1 else [])
    return {
        item["id"]: item["text"]
        for prefix, attempt in responses
        for paragraph in sentence_paragraphs(attempt.response, prefix)
        for item in paragraph["sentences"]
    }


def judging_view(log: ReasoningLog, game: Game) -> dict[str, Any]:
    """What the judging page shows: the game's table and the first (and last) response as clickable sentences."""
    return {
        "game_name": game.name,
        "game_table": game.table(),
        "attempts": len(log.attempts),
        "first_response": sentence_paragraphs(log.attempts[0].response, "f"),
        "last_response": sentence_paragraphs(log.attempts[-1].response, "l") if len(log.attempts) > 1 else None,
    }


def split_codes(raw: str | None) -> list[str]:
    """Codes from a hidden field (``#`` or ``,`` separated), stripped, duplicates dropped, order kept.

    >>> split_codes("pa#rga, pa")
    ['pa', 'rga']
    """
    return list(dict.fromkeys(split_hash_field((raw or "").replace(",", "#"))))


def check_verdict(
    log: ReasoningLog,
    *,
    orig_cor: int | None,
    fin_cor: int | None,
    err_type: str | None,
    marked: str | None,
    remarks: str | None = None,
) -> list[str]:
    """Problems with a submitted verdict (for the page's error message); [] when it may be saved.

    Remarks are bounded (``MAX_REMARKS_CHARS``) like social_eval's reasoning: the form takes up to 512 KiB, and every
    export and report would carry a pasted book.
    """
    if remarks and (length := typed_length(remarks)) > MAX_REMARKS_CHARS:
        return [f"Please shorten your remarks to at most {MAX_REMARKS_CHARS:,} characters (they have {length:,})."]
    if orig_cor is None:
        return ["Please say whether the first response is correct."]
    if len(log.attempts) > 1 and fin_cor is None:
        return ["Please say whether the last response is correct."]
    index = sentence_index(log)
    ids = split_codes(marked)
    unknown = [sentence_id for sentence_id in ids if sentence_id not in index]
    if unknown:
        return [f"Unknown sentence id(s) {', '.join(unknown)}; please mark only sentences of the responses shown."]
    return verdict_errors(
        orig_cor=orig_cor,
        fin_cor=orig_cor if len(log.attempts) == 1 else fin_cor,
        n_attempts=len(log.attempts),
        err_types=split_codes(err_type),
        sentences=[index[sentence_id] for sentence_id in ids],
    )


MAX_REMARKS_CHARS = 5000


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
    """The report's figures per model and game for a template, as text (see `backend.reasoning.report`)."""
    from backend.reasoning.report import format_figure, prepare_verdict_rows, summarise  # pandas: only here

    summary = summarise(prepare_verdict_rows(list(rows)), rule=rule)
    return [{column: format_figure(group[column]) for column in SUMMARY_COLUMNS} for group in summary]


# What the protocol export with identifiers adds to the 12 protocol columns (judged_at: ISO-8601 UTC).
IDENTITY_COLUMNS = ("participant_code", "prolific_pid", "study_id", "session_code", "judged_at")

SEPARATOR_NAMES = {";": "semicolon", ",": "comma", "\t": "tab", "|": "pipe"}


def next_log(
    files: Sequence[str], rows: Sequence[Mapping[str, Any]], *, participant: str, settings: TaskSettings, now: float
) -> tuple[str | None, bool]:
    """The log ``participant`` judges next and whether a reservation row must be added for it.

    None when they reached ``logs_per_judge`` (or all logs) or when every remaining log has its judges. A log the
    participant already holds a live reservation on is returned again (a reload), without a new row. In a pilot
    (``pilot_overlap``) the logs are the first ``logs_per_judge`` ones and every judge gets each of them.

    >>> settings = task_settings({"judges_per_log": 1, "logs_per_judge": 2}, max_logs_per_judge=30)
    >>> rows = [{"item_id": "a", "participant": "p1", "status": "done", "reserved_at": 0.0}]
    >>> next_log(["a", "b"], rows, participant="p2", settings=settings, now=10.0)
    ('b', True)
    >>> pilot = task_settings({"pilot_overlap": True, "logs_per_judge": 1}, max_logs_per_judge=30)
    >>> next_log(["a", "b"], rows, participant="p2", settings=pilot, now=10.0)
    ('a', True)
    """
    done = sum(row["participant"] == participant and row["status"] == "done" for row in rows)
    if done >= min(settings.logs_per_judge, len(files)):
        return None, False
    timeout_s = settings.reservation_timeout_s
    if settings.pilot_overlap:
        files, per_item = assignment.pilot_items(files, settings.logs_per_judge), None
    else:
        per_item = settings.judges_per_log
    file = assignment.choose_item(files, rows, participant=participant, per_item=per_item, now=now, timeout_s=timeout_s)
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
    coverage = assignment.coverage(files, rows, now=now, timeout_s=settings.reservation_timeout_s)
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
