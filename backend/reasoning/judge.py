"""A language model as a judge of payoff-reasoning logs, under the protocol people follow in payoff_reasoning_eval:
``python -m backend.reasoning.judge --logs PATH --model NAME --out DIR``.

What the model is asked and how its reply is read: `backend.reasoning.judge_prompts`. The verdict must pass the
page's own check (`backend.reasoning.task.check_verdict`) and becomes a row with
`backend.reasoning.task.verdict_row`, exactly as a person's would.

Outputs in ``DIR`` (``<model>`` made safe for a file name):

- ``reasoning_judge_<model>.csv``: the protocol form (`PROTOCOL_COLUMNS`, written cell by cell as `protocol_csv`
  writes them, ``--separator``, default ``;``) plus the identifier columns of the app's
  ``custom_export_protocol_with_ids`` (`backend.reasoning.task.IDENTITY_COLUMNS`), with
  ``participant_code = model:<model>``: `backend.reasoning.report` sets such judges beside people.
- ``reasoning_judge_calls_<model>.csv``: one row per log (`CALL_COLUMNS`): status (``judged``, ``unparseable``,
  ``error``), how the judgement was read (``answer_source``: ``structured`` = JSON the endpoint constrained to the
  schema, ``json`` = a JSON object found in free text, empty when none was read), the verdict, the problem, the raw
  reply, the model's reasoning (kept apart, never parsed), attempts, latency and tokens. It is the resume state
  (`backend.core.runs`): running the same command again asks only the logs that are missing or whose call failed (``error``).

**k samples per log** (``--samples K``, default 1): the log is judged K times independently (each sample with its
own re-asks) and the judge's verdict on the first answer is the majority of the samples' ``orig_cor`` (a tie counts
as wrong, the report's majority rule); the other fields come from the first sample that gave that verdict. The calls
row records ``samples`` (samples judged), ``votes_correct``, ``p_correct`` (share saying correct: what the Brier
score scores), ``confidence`` (share agreeing with the verdict: what ECE bins) and ``sample_verdicts`` (``1#1#0``):
`backend.core.calibration`. The report reads them from the calls file beside the protocol file and scores them
against people's verdicts on the same logs. More than one sample needs a temperature above 0 (``--temperature``; the
default 0 would give K copies of one answer), except for ``scripted``. Tokens and asks add up over the samples.

A reply that cannot be read, or whose verdict breaks the protocol's rules, is asked again (``--parse-retries``
times) with a follow-up message naming the problem, then recorded as ``unparseable``, never guessed. Every request
carries ``max_tokens`` = `token_budget` (the longest judgement the protocol allows for that log). ``--model
scripted`` judges offline: its verdict is the automated check's (`scripted_judgement`).
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from backend.core import calibration, run_costs, runs
from backend.core.csvio import iso_utc, neutralise_row
from backend.core.llm import LLMSettings, add_endpoint_options, complete, costs, settings_from_args
from backend.core.llm.records import CallTotals
from backend.core.progress import RunTally
from backend.reasoning import task
from backend.reasoning.games import Game
from backend.reasoning.judge_prompts import (
    DEFAULT_REMARK_CHARS,
    JudgementParseError,
    build_messages,
    check_remark_chars,
    judgement_schema,
    parse_judgement,
    reprompt_message,
    scripted_judgement,
    token_budget,
)
from backend.reasoning.logs import ReasoningLog
from backend.reasoning.protocol import SEPARATORS, protocol_csv
from backend.reasoning.report import MODEL_JUDGE_PREFIX

STATUSES = ("judged", "unparseable", "error")
FINAL_STATUSES = ("judged", "unparseable")  # kept on a resumed run; "error" is asked again
# The k-sample columns (backend.core.calibration.vote_summary); optional when a file of an earlier version is resumed.
SAMPLE_COLUMNS = ("samples", "votes_correct", "p_correct", "confidence", "sample_verdicts")
# What the log's calls cost by --prices (empty while unknown; 0 for calls the response cache answered) and how many
# the cache answered (issue 37); optional when a file of an earlier version is resumed.
COST_COLUMNS = ("cost", "cached_calls")

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
    *COST_COLUMNS,
    "max_tokens",
    "judged_at",
    *SAMPLE_COLUMNS,
)


# --- asking --------------------------------------------------------------------------------------------------------
async def judge_log(
    log: ReasoningLog,
    game: Game,
    settings: LLMSettings,
    *,
    parse_retries: int = 2,
    remark_chars: int = DEFAULT_REMARK_CHARS,
    policy: Callable[[ReasoningLog], str] = scripted_judgement,
    samples: int = 1,
) -> dict[str, Any]:
    """Ask for a judgement of one log ``samples`` times; return its calls row (`CALL_COLUMNS`): judged (the
    majority verdict with its votes and confidence), unparseable (no sample judged) or error (a call failed)."""
    calibration.check_samples(samples, settings)
    totals = CallTotals()  # tokens summed over the asks; blank when the endpoint reported none (the scripted model)
    rows = []
    for _ in range(samples):
        row = await _judge_once(log, game, settings, totals, parse_retries, remark_chars, policy)
        if row["status"] == "error":
            return row
        rows.append(row)
    judged = [row for row in rows if row["status"] == "judged"]
    if not judged:
        return rows[-1]
    votes = calibration.vote_summary([int(row["orig_cor"]) for row in judged])
    chosen = next(row for row in judged if int(row["orig_cor"]) == votes["verdict"])
    return dict(
        chosen,
        **{
            key: rows[-1][key]
            for key in ("asks", "attempts", "latency_s", "prompt_tokens", "completion_tokens", *COST_COLUMNS)
        },
        samples=votes["samples"],
        votes_correct=votes["votes_correct"],
        p_correct=round(votes["p_correct"], 6),
        confidence=round(votes["confidence"], 6),
        sample_verdicts="#".join(str(row["orig_cor"]) for row in judged),
    )


async def _judge_once(
    log: ReasoningLog,
    game: Game,
    settings: LLMSettings,
    totals: CallTotals,
    parse_retries: int,
    remark_chars: int,
    policy: Callable[[ReasoningLog], str],
) -> dict[str, Any]:
    """One sample: ask (and re-ask) until a judgement is read; its calls row, with the totals of every ask so far."""
    messages = build_messages(log, game, remark_chars=remark_chars)
    budget, schema = token_budget(log, remark_chars=remark_chars), judgement_schema(log)
    row: dict[str, Any] = dict.fromkeys(CALL_COLUMNS, "")
    row.update(file=log.filename, game=log.game, model=settings.model)
    for _ in range(parse_retries + 1):
        record = await complete(
            messages, settings, scripted=lambda _messages: policy(log), max_tokens=budget, response_schema=schema
        )
        totals.add(record)
        cells = totals.cells()
        row.update(
            asks=cells.pop("calls"),
            **cells,
            reply=record.reply,
            reasoning=totals.thinking,
            structured="" if record.structured is None else int(record.structured),
            max_tokens=record.max_tokens or "",
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
    safe = runs.safe_name(model)
    return Path(out_dir) / f"reasoning_judge_{safe}.csv", Path(out_dir) / f"reasoning_judge_calls_{safe}.csv"


def read_calls(path: Path) -> list[dict[str, str]]:
    """The calls rows of an earlier run (cells restored exactly as they were before neutralisation); a file written
    before k samples existed reads with the sample columns empty."""
    return runs.read_rows(
        path, columns=CALL_COLUMNS, optional=SAMPLE_COLUMNS + COST_COLUMNS, what="the judge's calls file"
    )


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
    samples: int = 1,
    progress: TextIO | None = None,
) -> JudgeSummary:
    """Judge every log not yet judged (or found unparseable) in the calls file, ``samples`` times each; write both
    files as calls finish."""
    runs.check_parse_retries(parse_retries)
    calibration.check_samples(samples, settings)
    if separator not in SEPARATORS:
        raise ValueError(f"separator must be one of {SEPARATORS!r}, got {separator!r}.")
    check_remark_chars(remark_chars)
    by_file = {log.filename: log for log in logs}
    protocol_path, calls_path = output_paths(out_dir, settings.model)
    protocol_path.parent.mkdir(parents=True, exist_ok=True)
    kept = [row for row in read_calls(calls_path) if row["status"] in FINAL_STATUSES and row["file"] in by_file]
    summary = JudgeSummary(protocol_path=protocol_path, calls_path=calls_path, planned=len(logs), kept=len(kept))
    # Both files are rewritten from the kept calls first (failed calls dropped), so that no log appears twice.
    runs.write_rows(calls_path, kept, columns=CALL_COLUMNS)
    runs.write_text_atomically(
        protocol_path,
        protocol_header(separator)
        + "".join(
            protocol_line(
                _protocol_row(by_file[row["file"]], row), _identity(row["model"], row["judged_at"]), separator=separator
            )
            for row in kept
            if row["status"] == "judged"
        ),
    )
    done = {row["file"] for row in kept}
    todo = [log for log in logs if log.filename not in done]
    # The cost estimate: the kept logs' asks and tokens (a pilot), prompt tokens scaled to each log's prompt size.
    pilot = costs.measure_rows([dict(row, calls=row["asks"]) for row in kept], unit_key=["file"])
    run_costs.use_pilot(pilot, unit="log", pilot_units=[log for log in logs if (log.filename,) in pilot.keys])

    async def work(log: ReasoningLog) -> dict[str, Any]:
        return await judge_log(
            log, games[log.game], settings, parse_retries=parse_retries, remark_chars=remark_chars, samples=samples
        )

    with (
        runs.RowAppender(calls_path, columns=CALL_COLUMNS) as calls_out,
        protocol_path.open("a", encoding="utf-8", newline="") as protocol_handle,
    ):

        def store(log: ReasoningLog, row: dict[str, Any]) -> str:
            if row["status"] == "judged":
                line = protocol_line(
                    _protocol_row(log, row), _identity(settings.model, row["judged_at"]), separator=separator
                )
                protocol_handle.write(line)
                protocol_handle.flush()
            calls_out.write([row])  # flushed: a crash keeps every call made so far
            summary.record(row["status"], row["problem"])
            return row["status"]

        await runs.run_each(todo, work, concurrency=concurrency, progress=progress, on_done=store)
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
    parser = argparse.ArgumentParser(
        prog="python -m backend.reasoning.judge", description=" ".join(__doc__.split("\n\n")[0].split())
    )
    parser.add_argument("--logs", type=Path, required=True, help="folder of *.txt logs, or a .zip of them")
    parser.add_argument("--model", required=True, help="model name at the endpoint, or 'scripted' (offline)")
    parser.add_argument("--default-game", default="", help="game code for log files whose names state none")
    parser.add_argument("--extra-games", type=Path, default=None, help="JSON file of more games (as extra_games)")
    parser.add_argument("--separator", default=";", choices=SEPARATORS, help="separator of the protocol file")
    parser.add_argument("--remark-chars", type=int, default=DEFAULT_REMARK_CHARS, help="longest remark asked for")
    parser.add_argument(
        "--samples", type=int, default=1, help="judgements per log; the vote share is the judge's confidence"
    )
    runs.add_run_options(parser, unit="calls")
    add_endpoint_options(parser, temperature=0.0, timeout_s=120.0)

    async def start(args: argparse.Namespace, progress: TextIO | None) -> JudgeSummary:
        extra_games = args.extra_games.read_text(encoding="utf-8-sig") if args.extra_games else ""
        logs, games = load_judged_logs(args.logs, default_game=args.default_game, extra_games=extra_games)
        return await run_judge(
            logs,
            games,
            settings_from_args(args, model=args.model),
            **runs.run_options(args),
            remark_chars=args.remark_chars,
            separator=args.separator,
            samples=args.samples,
            progress=progress,
        )

    def finish(summary: JudgeSummary, seconds: float) -> int:
        return summary.finish(
            f"{summary.protocol_path}: {summary.planned} logs, {summary.kept} kept from before, "
            f"{summary.counts_text()} ({seconds:.1f} s); calls in {summary.calls_path.name}."
        )

    return runs.run_command(parser, argv, start, finish, refused=(ValueError, OSError))


if __name__ == "__main__":
    sys.exit(main())
