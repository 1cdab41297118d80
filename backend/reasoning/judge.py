"""A language model as a judge of payoff-reasoning logs, under the protocol people follow in payoff_reasoning_eval:
``python -m backend.reasoning.judge --logs PATH --model NAME --out DIR``.

The model sees what a person sees on the Judge page (`backend.reasoning.task.judging_view`): the game's table and
the first (and, with more than one attempt, the last) response split into sentences labelled ``f0, f1, ...`` and
``l0, l1, ...``; never the Prolog predicates nor the failed queries. It answers with one JSON object::

    {"orig_cor": 0|1, "fin_cor": 0|1, "err_type": ["pa", ...], "sentences": ["f2", ...], "remarks": "..."}

(``fin_cor`` only when the log has more than one attempt). The verdict must pass the page's own check
(`backend.reasoning.task.check_verdict`: `backend.reasoning.protocol.verdict_errors`, known sentence ids, the
remarks' bound) and becomes a row with `backend.reasoning.task.verdict_row`, exactly as a person's would.

Outputs in ``DIR`` (``<model>`` made safe for a file name):

- ``reasoning_judge_<model>.csv``: the protocol form (`PROTOCOL_COLUMNS`, written cell by cell as `protocol_csv`
  writes them, ``--separator``, default ``;``) plus the identifier columns of the app's
  ``custom_export_protocol_with_ids`` (`backend.reasoning.task.IDENTITY_COLUMNS`), with
  ``participant_code = model:<model>``: `backend.reasoning.report` sets such judges beside people.
- ``reasoning_judge_calls_<model>.csv``: one row per log (`CALL_COLUMNS`): status (``judged``, ``unparseable``,
  ``error``), how the judgement was read (``answer_source``: ``structured`` = JSON the endpoint constrained to the
  schema, ``json`` = a JSON object found in free text, empty when none was read), the verdict, the problem, the raw
  reply, the model's reasoning (kept apart, never parsed), attempts, latency and tokens. It is the resume state:
  running the same command again asks only the logs that are missing or whose call failed (``error``).

A reply that cannot be read, or whose verdict breaks the protocol's rules, is asked again (``--parse-retries``
times) with a follow-up message naming the problem, then recorded as ``unparseable``, never guessed. Every request
carries ``max_tokens`` = `token_budget` (the longest judgement the protocol allows for that log). ``--model
scripted`` judges offline: its verdict is the automated check's (`scripted_judgement`).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
import os
import re
import string
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TextIO

from backend.core.csvio import iso_utc, neutralise_row, restore_row
from backend.core.llm import LLMSettings, add_endpoint_options, complete, reply_budget, settings_from_args
from backend.core.llm.replies import RepeatedKeyError, json_objects
from backend.core.progress import ProgressBar, RunTally
from backend.reasoning import task
from backend.reasoning.games import ACTIONS, Game
from backend.reasoning.logs import ReasoningLog, sentence_lines
from backend.reasoning.protocol import ERROR_TYPES, SEPARATORS, protocol_csv
from backend.reasoning.report import MODEL_JUDGE_PREFIX

PROMPTS_PATH = Path(__file__).resolve().parent / "data" / "reasoning_judge_prompts"
STATUSES = ("judged", "unparseable", "error")
FINAL_STATUSES = ("judged", "unparseable")  # kept on a resumed run; "error" is asked again
# A judge's remark is a sentence or two; the form's own bound (MAX_REMARKS_CHARS) is there for pasted text, and a
# token budget sized for it would cost every call of a small local model most of its context.
DEFAULT_REMARK_CHARS = 500
JSON_LAYOUT_TOKENS = 32  # a model's indentation, line breaks and code fence around the JSON object
CALL_COLUMNS = (
    "file",
    "game",
    "model",
    "status",
    "answer_source",
    "orig_cor",
    "fin_cor",
    "err_type",
    "marked",
    "remarks",
    "problem",
    "reply",
    "reasoning",
    "asks",
    "attempts",
    "structured",
    "latency_s",
    "prompt_tokens",
    "completion_tokens",
    "max_tokens",
    "judged_at",
)
_KEYS = {  # accepted spellings of the reply's keys (lower case), canonical first
    "orig_cor": ("orig_cor", "first_correct"),
    "fin_cor": ("fin_cor", "last_correct", "final_correct"),
    "err_type": ("err_type", "err_types", "error_types", "error_type"),
    "sentences": ("sentences", "marked", "marked_sentences", "sentence_ids"),
    "remarks": ("remarks", "remark"),
}
_VERDICT_WORDS = {"correct": 1, "incorrect": 0}


class JudgementParseError(ValueError):
    """A reply that holds no usable judgement: unreadable, ambiguous, or breaking the protocol's rules."""


@dataclass(frozen=True)
class Judgement:
    """A verdict as the Judge page receives it: ``fin_cor`` None for a single attempt; ``marked`` sentence ids."""

    orig_cor: int
    fin_cor: int | None
    err_types: tuple[str, ...]
    marked: tuple[str, ...]
    remarks: str = ""


# --- prompts -------------------------------------------------------------------------------------------------------
@cache
def _template(name: str) -> string.Template:
    return string.Template((PROMPTS_PATH / f"{name}.txt").read_text(encoding="utf-8").strip("\n"))


def _check_remark_chars(remark_chars: int) -> None:
    if not 0 <= remark_chars <= task.MAX_REMARKS_CHARS:
        raise ValueError(
            f"The remark length must be from 0 to the form's {task.MAX_REMARKS_CHARS:,} characters, got {remark_chars}."
        )


def _reply_form(log: ReasoningLog) -> str:
    second = ' "fin_cor": 0 or 1,' if len(log.attempts) > 1 else ""
    return (
        f'{{"orig_cor": 0 or 1,{second} "err_type": [error type codes], "sentences": [sentence ids], '
        '"remarks": "text or empty"}'
    )


def _labelled(text: str, prefix: str) -> str:
    """A response as the page shows it, one line per paragraph, each sentence behind its id: ``[f0] ...``."""
    lines, position = [], 0
    for marker, sentences in sentence_lines(text):
        labelled = []
        for sentence in sentences:
            labelled.append(f"[{prefix}{position}] {sentence}")
            position += 1
        lines.append(marker + " ".join(labelled))
    return "\n".join(lines)


def _table_text(game: Game) -> str:
    header = " | ".join(["model's letter \\ other's letter", *(game.label(action) for action in ACTIONS)])
    return "\n".join([header, *(" | ".join([row["label"], *row["cells"]]) for row in game.table())])


def build_messages(log: ReasoningLog, game: Game, *, remark_chars: int = DEFAULT_REMARK_CHARS) -> list[dict]:
    """The chat messages that ask for a judgement of ``log`` (system: the protocol; user: the page's content).

    >>> from backend.reasoning.games import GAMES
    >>> from backend.reasoning.logs import Attempt
    >>> log = ReasoningLog((Attempt(0, "R pays 5. So {R}"),), "m_pd_p1_1_5_0_3_0_1.txt", game="pd")
    >>> messages = build_messages(log, GAMES["pd"])
    >>> "[f0] R pays 5. [f1] So {R}" in messages[1]["content"], '"fin_cor"' in messages[0]["content"]
    (True, False)
    """
    _check_remark_chars(remark_chars)
    error_types = "\n".join(
        f"- {code} ({name}): {definition} Example: {example}"
        for code, (name, definition, example) in ERROR_TYPES.items()
    )
    system = _template("system").substitute(
        error_types=error_types, remark_chars=remark_chars, reply_form=_reply_form(log)
    )
    several = len(log.attempts) > 1
    last_section = (
        "\n"
        + _template("last_section").substitute(
            attempts=len(log.attempts), last_response=_labelled(log.attempts[-1].response, "l")
        )
        if several
        else ""
    )
    user = _template("judge").substitute(
        game_name=game.name,
        game_table=_table_text(game),
        attempts_note=f" (of {len(log.attempts)} attempts)" if several else "",
        first_response=_labelled(log.attempts[0].response, "f"),
        last_section=last_section,
        which="first and the last response" if several else "response",
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def reprompt_message(problem: str) -> dict[str, str]:
    """The follow-up user message after a reply that gave no usable judgement, naming the problem."""
    return {"role": "user", "content": _template("reprompt").substitute(problem=problem)}


def judgement_schema(log: ReasoningLog) -> dict[str, Any]:
    """The JSON schema of a judgement of ``log`` (structured output): the verdicts, codes and ids it may hold.

    Only keywords that strict structured output accepts everywhere (no ``maxLength``, ``uniqueItems``); the
    parser checks the rest.

    >>> from backend.reasoning.logs import Attempt
    >>> schema = judgement_schema(ReasoningLog((Attempt(0, "I get 5. {R}"),)))
    >>> schema["required"], schema["properties"]["sentences"]["items"]["enum"]
    (['orig_cor', 'err_type', 'sentences', 'remarks'], ['f0', 'f1'])
    """
    verdict = {"type": "integer", "enum": [0, 1]}
    properties: dict[str, Any] = {"orig_cor": verdict}
    if len(log.attempts) > 1:
        properties["fin_cor"] = verdict
    properties["err_type"] = {"type": "array", "items": {"type": "string", "enum": list(ERROR_TYPES)}}
    properties["sentences"] = {"type": "array", "items": {"type": "string", "enum": list(task.sentence_index(log))}}
    properties["remarks"] = {"type": "string"}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def token_budget(log: ReasoningLog, *, remark_chars: int = DEFAULT_REMARK_CHARS) -> int:
    """``max_tokens`` of a judgement of ``log``: `reply_budget` of the longest judgement the protocol allows (every
    error type, every sentence id, a remark of ``remark_chars``) with `JSON_LAYOUT_TOKENS` for its layout.

    >>> from backend.reasoning.logs import Attempt
    >>> log = ReasoningLog((Attempt(0, "I get 5. {R}"),))  # longest: 95 characters of JSON + 500 of remarks
    >>> token_budget(log), token_budget(log, remark_chars=0)
    (330, 80)
    """
    _check_remark_chars(remark_chars)
    longest = {"orig_cor": 0, "err_type": list(ERROR_TYPES), "sentences": list(task.sentence_index(log))}
    if len(log.attempts) > 1:
        longest["fin_cor"] = 0
    longest["remarks"] = ""
    return reply_budget(len(json.dumps(longest)) + remark_chars, overhead_tokens=JSON_LAYOUT_TOKENS)


# --- reading a reply -----------------------------------------------------------------------------------------------
def _field(data: Mapping[str, Any], name: str) -> tuple[bool, Any]:
    present = [key for key in _KEYS[name] if key in data]
    if len(present) > 1:
        raise JudgementParseError(f"the JSON object gives {name} twice (as {', '.join(present)}).")
    return (True, data[present[0]]) if present else (False, None)


def _verdict(value: Any, name: str) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("0", "1"):
            return int(text)
        if text in _VERDICT_WORDS:
            return _VERDICT_WORDS[text]
    raise JudgementParseError(f"{name} must be 0 (incorrect) or 1 (correct), got {value!r}.")


def _items(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = task.split_codes(value)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise JudgementParseError(f"{name} must be a list of strings, got {value!r}.")
    items = []
    for item in value:
        item = item.strip().strip("[]").strip().lower()
        if item and item not in items:
            items.append(item)
    return items


def parse_judgement(reply: str, log: ReasoningLog) -> Judgement:
    """The judgement in ``reply``, checked as the Judge page checks a person's; `JudgementParseError` otherwise.

    Reads the JSON object (in a code fence or text too; keys in any case; verdicts as 0/1, true/false or
    "correct"/"incorrect"; codes and ids as a list or a ``#``-joined string, case and brackets ignored). Refuses a
    reply with no JSON object, two different judgements, an unknown code or sentence id, a missing verdict, a
    second verdict on a single attempt that differs from the first, and every breach of the protocol's rules.

    >>> from backend.reasoning.logs import Attempt
    >>> log = ReasoningLog((Attempt(0, "I get 5. {R}"),))
    >>> parse_judgement('```json\\n{"orig_cor": 0, "err_type": "PA", "sentences": ["[f0]"]}\\n```', log)
    Judgement(orig_cor=0, fin_cor=None, err_types=('pa',), marked=('f0',), remarks='')
    >>> parse_judgement('{"orig_cor": 0, "err_type": [], "sentences": []}', log)
    Traceback (most recent call last):
    ...
    backend.reasoning.judge.JudgementParseError: A reasoning judged incorrect needs at least one error type. ...
    """
    if not isinstance(reply, str) or not reply.strip():
        raise JudgementParseError("the reply is empty.")
    candidates = []
    try:
        objects = json_objects(reply)
    except RepeatedKeyError as error:
        raise JudgementParseError(f"{error}.") from None
    for data in objects:
        lowered = {str(key).strip().lower(): value for key, value in data.items()}
        if any(key in lowered for names in _KEYS.values() for key in names):
            judgement = _judgement(lowered, log)
            if judgement not in candidates:
                candidates.append(judgement)
    if not candidates:
        raise JudgementParseError('the reply holds no JSON object with "orig_cor".')
    if len(candidates) > 1:
        raise JudgementParseError(f"the reply holds {len(candidates)} different judgements; give exactly one.")
    return candidates[0]


def _judgement(data: Mapping[str, Any], log: ReasoningLog) -> Judgement:
    has_orig, orig = _field(data, "orig_cor")
    if not has_orig:
        raise JudgementParseError('the JSON object has no "orig_cor" (the verdict on the first response).')
    orig_cor = _verdict(orig, "orig_cor")
    has_fin, fin = _field(data, "fin_cor")
    if len(log.attempts) > 1:
        if not has_fin:
            raise JudgementParseError('the JSON object has no "fin_cor" (the verdict on the last response).')
        fin_cor = _verdict(fin, "fin_cor")
    else:
        if has_fin and fin is not None and _verdict(fin, "fin_cor") != orig_cor:
            raise JudgementParseError("there is a single response, so fin_cor must equal orig_cor (or be left out).")
        fin_cor = None
    err_types = _items(_field(data, "err_type")[1], "err_type")
    marked = _items(_field(data, "sentences")[1], "sentences")
    remarks = _field(data, "remarks")[1]
    if remarks is None:
        remarks = ""
    if not isinstance(remarks, str):
        raise JudgementParseError(f"remarks must be text, got {remarks!r}.")
    problems = task.check_verdict(
        log, orig_cor=orig_cor, fin_cor=fin_cor, err_type="#".join(err_types), marked="#".join(marked), remarks=remarks
    )
    if problems:
        raise JudgementParseError(" ".join(problems))
    index = list(task.sentence_index(log))
    ordered_codes = [code for code in ERROR_TYPES if code in err_types]
    return Judgement(orig_cor, fin_cor, tuple(ordered_codes), tuple(sorted(marked, key=index.index)), remarks.strip())


# --- the scripted judge ---------------------------------------------------------------------------------------------
def _first_numeric_sentence(log: ReasoningLog, prefix: str) -> str:
    ids = [sentence_id for sentence_id in task.sentence_index(log) if sentence_id.startswith(prefix)]
    index = task.sentence_index(log)
    return next((sentence_id for sentence_id in ids if re.search(r"\d", index[sentence_id])), ids[0])


def scripted_judgement(log: ReasoningLog) -> str:
    """The offline judge's reply: the automated check's verdicts (attempt 0, last attempt); an incorrect response
    gets type ``u`` on its first sentence with a number (else its first sentence).

    >>> from backend.reasoning.logs import Attempt
    >>> print(scripted_judgement(ReasoningLog((Attempt(0, "Hm. I get 5. {R}", (), ("q.",)), Attempt(1, "{B}", (), ())))))
    {"orig_cor": 0, "fin_cor": 1, "err_type": ["u"], "sentences": ["f1"], "remarks": "Scripted: the automated check."}
    """
    orig_cor = int(log.check_passed)
    judgement: dict[str, Any] = {"orig_cor": orig_cor}
    marked = [] if orig_cor else [_first_numeric_sentence(log, "f")]
    if len(log.attempts) > 1:
        judgement["fin_cor"] = int(log.final_check_passed)
        if not judgement["fin_cor"]:
            marked.append(_first_numeric_sentence(log, "l"))
    judgement["err_type"] = ["u"] if marked else []
    judgement["sentences"] = marked
    judgement["remarks"] = "Scripted: the automated check."
    return json.dumps(judgement)


# --- asking --------------------------------------------------------------------------------------------------------
def _joined(parts: Iterable[str]) -> str:
    return "\n\n".join(part for part in parts if part)


async def judge_log(
    log: ReasoningLog,
    game: Game,
    settings: LLMSettings,
    *,
    parse_retries: int = 2,
    remark_chars: int = DEFAULT_REMARK_CHARS,
    policy: Callable[[ReasoningLog], str] = scripted_judgement,
) -> dict[str, Any]:
    """Ask for a judgement of one log; return its calls row (`CALL_COLUMNS`): judged, unparseable or error."""
    messages = build_messages(log, game, remark_chars=remark_chars)
    budget, schema = token_budget(log, remark_chars=remark_chars), judgement_schema(log)
    row: dict[str, Any] = dict.fromkeys(CALL_COLUMNS, "")
    row.update(file=log.filename, game=log.game, model=settings.model, asks=0, attempts=0, latency_s=0.0)
    thinking, prompt_tokens, completion_tokens = [], None, None
    for _ in range(parse_retries + 1):
        record = await complete(
            messages, settings, scripted=lambda _messages: policy(log), max_tokens=budget, response_schema=schema
        )
        row["asks"] += 1
        row["attempts"] += record.attempts
        row["latency_s"] = round(row["latency_s"] + record.latency_s, 3)
        # Summed over the asks; blank when the endpoint reported no usage at all (the scripted model).
        if record.prompt_tokens is not None:
            prompt_tokens = (prompt_tokens or 0) + record.prompt_tokens
        if record.completion_tokens is not None:
            completion_tokens = (completion_tokens or 0) + record.completion_tokens
        thinking.append(record.reasoning)
        row.update(
            reply=record.reply,
            reasoning=_joined(thinking),
            structured="" if record.structured is None else int(record.structured),
            max_tokens=record.max_tokens or "",
            prompt_tokens="" if prompt_tokens is None else prompt_tokens,
            completion_tokens="" if completion_tokens is None else completion_tokens,
            judged_at=iso_utc(time.time()),
        )
        if not record.ok:
            row.update(status="error", answer_source="", problem=f"{record.error_kind}: {record.error}")
            return row
        try:
            judgement = parse_judgement(record.reply, log)
        except JudgementParseError as error:
            row.update(status="unparseable", answer_source="", problem=str(error))
            messages = [*messages, {"role": "assistant", "content": record.reply}, reprompt_message(str(error))]
            continue
        row.update(
            status="judged",
            answer_source="structured" if record.structured else "json",
            problem="",
            orig_cor=judgement.orig_cor,
            fin_cor="" if judgement.fin_cor is None else judgement.fin_cor,
            err_type="#".join(judgement.err_types),
            marked="#".join(judgement.marked),
            remarks=judgement.remarks,
        )
        return row
    return row


# --- files ---------------------------------------------------------------------------------------------------------
def output_paths(out_dir: str | Path, model: str) -> tuple[Path, Path]:
    """(protocol file, calls file) of ``model`` in ``out_dir``.

    >>> [path.name for path in output_paths("out", "org/model:7b")]
    ['reasoning_judge_org_model_7b.csv', 'reasoning_judge_calls_org_model_7b.csv']
    """
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_") or "model"
    return Path(out_dir) / f"reasoning_judge_{safe}.csv", Path(out_dir) / f"reasoning_judge_calls_{safe}.csv"


def read_calls(path: Path) -> list[dict[str, str]]:
    """The calls rows of an earlier run (cells restored exactly as they were before neutralisation)."""
    if not path.exists():
        return []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != CALL_COLUMNS:
            raise ValueError(f"{path} exists but does not have the judge's call columns; move it away or pick --out.")
        return [restore_row(row) for row in reader]


def protocol_header(separator: str) -> str:
    """The header line of the protocol file: `PROTOCOL_COLUMNS`, then `backend.reasoning.task.IDENTITY_COLUMNS`."""
    line = protocol_csv([], separator=separator).rstrip("\n")
    return separator.join([line, *task.IDENTITY_COLUMNS]) + "\n"


def protocol_line(row: Mapping[str, object], identity: Sequence[str], *, separator: str) -> str:
    """One line of the protocol file: the 12 cells exactly as `protocol_csv` writes them, then the identifiers.

    >>> protocol_line({"file": "a.txt", "remarks": "x\\ny", "orig_cor": 1}, ["model:m", "", "", "", "t"], separator=";")
    'a.txt;;;;;1;;;;;x\\\\ny;;model:m;;;;t\\n'
    """
    # protocol_csv's lines hold no line break: remarks are escaped, every other cell is single-line.
    cells = protocol_csv([row], separator=separator).split("\n")[1]
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=separator, lineterminator="").writerow(neutralise_row(list(identity)))
    return separator.join([cells, buffer.getvalue()]) + "\n"


def _protocol_row(log: ReasoningLog, call: Mapping[str, Any]) -> dict[str, object]:
    return task.verdict_row(
        log,
        orig_cor=int(call["orig_cor"]),
        fin_cor=int(call["fin_cor"]) if str(call["fin_cor"]).strip() else None,
        err_type=str(call["err_type"]),
        marked=str(call["marked"]),
        remarks=str(call["remarks"]),
    )


def _identity(model: str, judged_at: str) -> list[str]:
    # The IDENTITY_COLUMNS: participant_code, prolific_pid, study_id, session_code, judged_at.
    return [f"{MODEL_JUDGE_PREFIX}{model}", "", "", "", judged_at]


@dataclass(kw_only=True)
class JudgeSummary(RunTally):
    protocol_path: Path
    calls_path: Path


async def run_judge(
    logs: Sequence[ReasoningLog],
    games: Mapping[str, Game],
    settings: LLMSettings,
    *,
    out_dir: str | Path,
    concurrency: int = 4,
    parse_retries: int = 2,
    remark_chars: int = DEFAULT_REMARK_CHARS,
    separator: str = ";",
    progress: TextIO | None = None,
) -> JudgeSummary:
    """Judge every log not yet judged (or found unparseable) in the calls file; write both files as calls finish."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}.")
    if parse_retries < 0:
        raise ValueError(f"parse_retries must be 0 or more, got {parse_retries}.")
    if separator not in SEPARATORS:
        raise ValueError(f"separator must be one of {SEPARATORS!r}, got {separator!r}.")
    _check_remark_chars(remark_chars)
    by_file = {log.filename: log for log in logs}
    protocol_path, calls_path = output_paths(out_dir, settings.model)
    protocol_path.parent.mkdir(parents=True, exist_ok=True)
    kept = [row for row in read_calls(calls_path) if row["status"] in FINAL_STATUSES and row["file"] in by_file]
    summary = JudgeSummary(protocol_path=protocol_path, calls_path=calls_path, planned=len(logs), kept=len(kept))
    # Both files are rewritten from the kept calls first (failed calls dropped), so that no log appears twice.
    calls_text = io.StringIO()
    calls_writer = csv.DictWriter(calls_text, fieldnames=CALL_COLUMNS)
    calls_writer.writeheader()
    calls_writer.writerows(neutralise_row(row) for row in kept)
    protocol_text = protocol_header(separator) + "".join(
        protocol_line(
            _protocol_row(by_file[row["file"]], row), _identity(row["model"], row["judged_at"]), separator=separator
        )
        for row in kept
        if row["status"] == "judged"
    )
    for path, text in ((calls_path, calls_text.getvalue()), (protocol_path, protocol_text)):
        temporary = path.with_suffix(".csv.tmp")
        temporary.write_text(text, encoding="utf-8", newline="")
        os.replace(temporary, path)
    done = {row["file"] for row in kept}
    todo = [log for log in logs if log.filename not in done]
    bar = ProgressBar(len(todo), progress)
    bar.show()
    gate = asyncio.Semaphore(concurrency)
    with (
        calls_path.open("a", encoding="utf-8", newline="") as calls_handle,
        protocol_path.open("a", encoding="utf-8", newline="") as protocol_handle,
    ):
        calls_writer = csv.DictWriter(calls_handle, fieldnames=CALL_COLUMNS)

        async def one(log: ReasoningLog) -> None:
            async with gate:
                row = await judge_log(
                    log, games[log.game], settings, parse_retries=parse_retries, remark_chars=remark_chars
                )
            if row["status"] == "judged":
                line = protocol_line(
                    _protocol_row(log, row), _identity(settings.model, row["judged_at"]), separator=separator
                )
                protocol_handle.write(line)
                protocol_handle.flush()
            calls_writer.writerow(neutralise_row(row))
            calls_handle.flush()  # a crash keeps every call made so far
            summary.counts[row["status"]] += 1
            bar.step(row["status"])

        await asyncio.gather(*(one(log) for log in todo))
    bar.close()
    return summary


def load_judged_logs(
    logs: str | Path, *, default_game: str = "", extra_games: str = ""
) -> tuple[list[ReasoningLog], Mapping[str, Game]]:
    """The logs of a folder or ``.zip``, read and checked exactly as the app reads ``logs_folder`` at session
    creation (`backend.reasoning.task.load_logs`), and the games they are checked against."""
    settings = task.task_settings(
        {"logs_folder": str(Path(logs).resolve()), "default_game": default_game, "extra_games": extra_games},
        max_logs_per_judge=30,  # the app's bound on logs_per_judge, a key the judge does not use
    )
    return task.load_logs(settings, project_root=Path.cwd()), settings.games


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend.reasoning.judge", description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=Path, required=True, help="folder of *.txt logs, or a .zip of them")
    parser.add_argument("--model", required=True, help="model name at the endpoint, or 'scripted' (offline)")
    parser.add_argument("--out", type=Path, required=True, help="output folder (its files are resumed if present)")
    parser.add_argument("--default-game", default="", help="game code for log files whose names state none")
    parser.add_argument("--extra-games", type=Path, default=None, help="JSON file of more games (as extra_games)")
    parser.add_argument("--separator", default=";", choices=SEPARATORS, help="separator of the protocol file")
    parser.add_argument("--remark-chars", type=int, default=DEFAULT_REMARK_CHARS, help="longest remark asked for")
    parser.add_argument("--concurrency", type=int, default=4, help="calls in flight at once")
    parser.add_argument("--parse-retries", type=int, default=2, help="re-asks after an unusable reply")
    add_endpoint_options(parser, temperature=0.0, timeout_s=120.0)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        extra_games = args.extra_games.read_text(encoding="utf-8-sig") if args.extra_games else ""
        logs, games = load_judged_logs(args.logs, default_game=args.default_game, extra_games=extra_games)
        settings = settings_from_args(args, model=args.model)
        started = time.monotonic()
        summary = asyncio.run(
            run_judge(
                logs,
                games,
                settings,
                out_dir=args.out,
                concurrency=args.concurrency,
                parse_retries=args.parse_retries,
                remark_chars=args.remark_chars,
                separator=args.separator,
                progress=None if args.quiet else sys.stderr,
            )
        )
    except (ValueError, OSError) as error:
        parser.error(str(error))
    return summary.finish(
        f"{summary.protocol_path}: {summary.planned} logs, {summary.kept} kept from before, {summary.counts_text()} "
        f"({time.monotonic() - started:.1f} s); calls in {summary.calls_path.name}."
    )


if __name__ == "__main__":
    sys.exit(main())
