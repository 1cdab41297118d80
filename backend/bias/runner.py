"""Ask a language model the bias tests: ``python -m backend.bias.runner --model NAME --items FILE --repeats R
--concurrency C --out DIR``.

Each run r = 1..R is one respondent (``<model>#<r>``) answering every test version of the item file, each in a fresh
conversation, in that respondent's seeded order (``backend.bias.items.build_sequence``; positions are recorded
even though fresh conversations make the order matter less than for people). Calls go through ``backend.core.llm``
(OpenAI-compatible endpoint from ``--base-url`` or ``OPENAI_BASE_URL``; its own retries for timeouts, 429 and 5xx);
``--model scripted`` answers offline with ``backend.bias.prompts.scripted_reply``.

- A reply that cannot be read is re-asked (``--parse-retries`` times, with a follow-up message naming the problem),
  then recorded with ``status=unparseable`` and the raw reply, never guessed. When only its stated probabilities
  are unusable (they do not add up to 1), the answer is kept without a confidence and ``problem`` says why.
- A call that fails for good is recorded with ``status=error``; running the same command again re-asks exactly the
  missing and failed tests (answered and unparseable ones are kept): the run is resumable.
- Rows are appended as answers arrive, with ``backend.bias.items.EXPORT_COLUMNS`` (the app's export columns; the
  participant identifiers stay empty, ``answered_at`` is the reply's ISO-8601 UTC time), to
  ``DIR/bias_<model>_<item set>.csv``. Text cells are neutralised for spreadsheets (``backend.core.csvio``: a reply
  starting with ``=`` is written ``'=``) and read back exactly. A file written before the identifier columns existed
  is resumed and rewritten with them. A progress bar goes to stderr.
- The item file is checked exactly as the app checks it at session creation (``backend.bias.items.load_items``).
- ``--confidence logprobs`` also asks for token log-probabilities and, where the endpoint returns them, takes the
  option probabilities from the answer letter's alternatives instead of the stated ones.
- ``--answer-mode`` says how a model is asked (``answer_mode`` column; ``answer_source`` says how each answer was
  read, ``backend.bias.replies.ANSWER_SOURCES``):
  - ``stated`` (default): the JSON reply above, read by the tolerant parser (JSON, or an unambiguous text shape:
    ``B``, ``B.``, ``(B)``, ``Answer: B``, an option's exact text, yes/no for accept and agree tests);
  - ``structured``: the same JSON constrained by a JSON schema (``response_format``) where the endpoint accepts
    one; where it refuses, the same call without it, read as in ``stated``;
  - ``logprobs``: the letter alone, scored by the log-probabilities of the option letters at the answer token
    (``backend.bias.replies.letter_scores``; ``confidence_source=logprobs``): the first letter the model wrote
    (``letter_logprob``), or, when it wrote none, the first token whose alternatives hold option letters
    (``letter_logprob_alternatives``, ``problem`` saying what it wrote and how much probability the letters held).
    An arguments test is asked one yes/no letter per argument and selects those with P(yes) > P(no), or, when
    none does, the one with the highest P(yes) (people must select at least one). An endpoint that returns no log-probabilities, or no option letter
    among them, leaves the test ``unparseable`` with the reason in ``problem``.
- Token budgets: ``ANSWER_CHARS`` characters for a JSON answer, one token and a margin for a letter;
  ``--max-tokens`` overrides, ``--reasoning-tokens`` adds room for a reasoning model's thinking (kept in
  ``reasoning``, never parsed).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from backend.bias.contradictions import contradiction, flagged
from backend.bias.export import ADDED_COLUMNS, EXPORT_COLUMNS, export_row
from backend.bias.items import BiasItem, ItemSet, Presented, argument_order, build_sequence, load_items, present
from backend.bias.prompts import (
    LETTERS,
    argument_letter_labels,
    build_argument_letter_messages,
    build_letter_messages,
    build_messages,
    choice_schema,
    reprompt_message,
    scripted_reply,
    selection_schema,
)
from backend.bias.replies import (
    ChoiceReply,
    ReplyParseError,
    letter_scores,
    option_probabilities_from_logprobs,
    parse_choice,
    parse_selection,
)
from backend.core import runs
from backend.core.csvio import iso_utc
from backend.core.llm import CallRecord, LLMSettings, add_endpoint_options, complete, reply_budget, settings_from_args
from backend.core.llm.records import CallTotals
from backend.core.progress import RunTally

FINAL_STATUSES = ("answered", "unparseable")
ANSWER_MODES = ("stated", "structured", "logprobs")
ANSWER_CHARS = 400  # a JSON answer with a probability for each of up to 20 options, or a list of argument numbers
LETTER_TOKENS = 8  # a letter, and room for a leading space, bracket or "Answer:" before it
TOP_LOGPROBS = 20  # the most alternatives OpenAI's API returns per token


@dataclass(frozen=True)
class Job:
    run: int
    position: int
    item: BiasItem
    presented: Presented
    item_set: str
    language: str = "en"  # the item set's language: the words of the per-argument letters

    @property
    def key(self) -> tuple[str, str, str]:
        return (str(self.run), self.item.id, self.presented.version)


@dataclass(kw_only=True)
class RunSummary(RunTally):
    path: Path


def output_path(out_dir: str | Path, model: str, items: ItemSet) -> Path:
    return Path(out_dir) / f"bias_{runs.safe_name(model)}_{items.name}.csv"


def plan_jobs(items: ItemSet, *, model: str, repeats: int, seed: Any) -> list[Job]:
    """Every (run, test version) a model answers, in each run's seeded order."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}.")
    jobs = []
    for run in range(1, repeats + 1):
        respondent_seed = f"{seed}:{model}:{run}"
        for position, (item_id, version) in enumerate(build_sequence(items.items, seed=respondent_seed), 1):
            item = items.item(item_id)
            order = argument_order(item, seed=respondent_seed) if item.arguments else None
            shown = present(item, version, argument_order=order)
            jobs.append(
                Job(
                    run=run, position=position, item=item, presented=shown, item_set=items.name, language=items.language
                )
            )
    return jobs


def read_finished(path: Path) -> list[dict[str, str]]:
    """The rows of an earlier run that need no new call (answered or unparseable), cells restored exactly as they
    were before neutralisation (``backend.core.runs.read_rows``); failed calls are dropped. Files from before the
    identifier and answer columns (``ADDED_COLUMNS``) are read too."""
    rows = runs.read_rows(path, columns=EXPORT_COLUMNS, optional=ADDED_COLUMNS, what="the bias export")
    return [row for row in rows if row["status"] in FINAL_STATUSES]


def _row(job: Job, model: str, status: str, totals: CallTotals, reply: str, **answer: Any) -> dict:
    return export_row(
        job.item,
        job.presented,
        respondent_kind="model",
        respondent_id=f"{model}#{job.run}",
        item_set=job.item_set,
        position=job.position,
        status=status,
        model=model,
        run=job.run,
        attempts=totals.attempts,
        cost=totals.cells()["cost"],
        cached_calls=totals.cached,
        seconds=round(totals.latency_s, 3),
        reasoning=totals.thinking,
        answered_at=iso_utc(time.time()),
        raw_reply=reply,
        **answer,
    )


async def ask(
    job: Job,
    settings: LLMSettings,
    *,
    parse_retries: int = 2,
    use_logprobs: bool = False,
    answer_mode: str = "stated",
    policy: Callable = scripted_reply,
) -> dict[str, Any]:
    """Ask one test version; return its export row (answered, unparseable or error)."""
    if answer_mode not in ANSWER_MODES:
        raise ValueError(f"The answer mode must be one of {', '.join(ANSWER_MODES)}, got {answer_mode!r}.")
    if answer_mode == "logprobs" and not settings.is_scripted:
        return await _ask_letters(job, settings)
    shown, model = job.presented, settings.model
    messages = build_messages(shown)
    totals, reply, problem = CallTotals(), "", ""
    options = {"logprobs": True, "top_logprobs": 5} if use_logprobs and not settings.is_scripted else {}
    if answer_mode == "structured":
        schema = (
            selection_schema(len(shown.arguments)) if shown.kind == "arguments" else choice_schema(len(shown.options))
        )
        options["response_schema"] = schema
    row = _row_maker(job, model, answer_mode)
    for _ in range(parse_retries + 1):
        record = await complete(messages, settings, scripted=policy, max_tokens=reply_budget(ANSWER_CHARS), **options)
        totals.add(record)
        reply = record.reply
        if not record.ok:
            error = f"{record.error_kind}: {record.error}"
            return row("error", totals, error, problem=error)
        try:
            if shown.kind == "arguments":
                numbers = parse_selection(reply, len(shown.arguments))
                selected = [shown.arguments[number - 1].id for number in numbers]
                source = "structured" if record.structured else "json"
                return row(
                    "answered",
                    totals,
                    reply,
                    selected=selected,
                    answer_source=source,
                )
            parsed = parse_choice(reply, [option.label for option in shown.options])
        except ReplyParseError as error:
            problem = str(error)
            messages = [*messages, {"role": "assistant", "content": reply}, reprompt_message(problem)]
            continue
        probabilities, confidence_source = parsed.probabilities, "stated" if parsed.probabilities is not None else ""
        if use_logprobs:
            from_logprobs = option_probabilities_from_logprobs(record.extra.get("logprobs"), len(shown.options))
            if from_logprobs is not None:
                probabilities, confidence_source = from_logprobs, "logprobs"
        return row(
            "answered",
            totals,
            reply,
            **_choice(shown, record, parsed),
            confidence=probabilities[parsed.index] if probabilities is not None else None,
            option_probabilities=probabilities,
            confidence_source=confidence_source,
            problem=_contradiction(reply, shown, parsed),
        )
    if shown.kind == "choice":
        # The answer itself may be clear while its stated probabilities are not (they must add up to 1): keep the
        # answer, without a confidence, and say why.
        try:
            parsed = parse_choice(reply, [option.label for option in shown.options], read_probabilities=False)
        except ReplyParseError:
            pass
        else:
            answer = _choice(shown, record, parsed)
            said_otherwise = _contradiction(reply, shown, parsed)
            return row(
                "answered",
                totals,
                reply,
                **answer,
                problem=said_otherwise or f"no confidence: {problem}",
            )
    return row("unparseable", totals, reply, problem=problem)


def _choice(shown: Presented, record: CallRecord, parsed: ChoiceReply) -> dict[str, Any]:
    """The chosen option's value, and how it was read: "structured" for the JSON of a reply the endpoint constrained
    to the schema, otherwise the parser's own source (``backend.bias.replies.ANSWER_SOURCES``)."""
    source = "structured" if record.structured and parsed.source == "json" else parsed.source
    return {"answer": shown.options[parsed.index].value, "answer_source": source}


def _contradiction(reply: str, shown: Presented, parsed: ChoiceReply) -> str:
    """The ``problem`` of a text answer whose own words contradict its letter (``backend.bias.contradictions``);
    "" for a JSON answer (its letter is the whole answer) and for a text answer that agrees."""
    if parsed.source in ("json", "structured"):
        return ""
    reason = contradiction(reply, [option.label for option in shown.options], parsed.index)
    return flagged(reason) if reason else ""


def _row_maker(job: Job, model: str, answer_mode: str) -> Callable[..., dict[str, Any]]:
    def row(status: str, totals: CallTotals, reply: str, **answer: Any) -> dict[str, Any]:
        return _row(job, model, status, totals, reply, answer_mode=answer_mode, **answer)

    return row


async def _letter_call(messages, settings: LLMSettings) -> CallRecord:
    return await complete(messages, settings, max_tokens=LETTER_TOKENS, logprobs=True, top_logprobs=TOP_LOGPROBS)


async def _ask_letters(job: Job, settings: LLMSettings) -> dict[str, Any]:
    """The log-probability answer mode (see the module doc): one letter call per choice test, one per argument."""
    shown = job.presented
    row = _row_maker(job, settings.model, "logprobs")
    if shown.kind == "arguments":
        numbers = range(1, len(shown.arguments) + 1)
        records = [
            await _letter_call(build_argument_letter_messages(shown, number, language=job.language), settings)
            for number in numbers
        ]
    else:
        records = [await _letter_call(build_letter_messages(shown), settings)]
    totals = CallTotals()
    for record in records:
        totals.add(record)
    replies = " | ".join(record.reply for record in records)
    failed = next((record for record in records if not record.ok), None)
    if failed is not None:
        error = f"{failed.error_kind}: {failed.error}"
        return row("error", totals, error, problem=error)
    n_letters = 2 if shown.kind == "arguments" else len(shown.options)
    scored = [letter_scores(record.extra.get("logprobs"), n_letters) for record in records]
    unusable = [note for probabilities, _, note in scored if not probabilities]
    if unusable:
        return row("unparseable", totals, replies, problem=unusable[0])
    notes = "; ".join(dict.fromkeys(note for _, _, note in scored if note))
    if shown.kind == "arguments":
        yes = [probabilities[0] for probabilities, _, _ in scored]
        chosen = [index for index, p_yes in enumerate(yes) if p_yes > 0.5] or [
            max(range(len(yes)), key=yes.__getitem__)
        ]
        labels = argument_letter_labels(job.language)
        said_otherwise = [
            f"argument {number}: {reason}"
            for number, (record, p_yes) in enumerate(zip(records, yes, strict=True), 1)
            if (reason := contradiction(record.reply, labels, 0 if p_yes > 0.5 else 1))
        ]
        return row(
            "answered",
            totals,
            replies,
            selected=[shown.arguments[index].id for index in chosen],
            answer_source="letter_logprob_per_argument",
            problem="; ".join(
                part
                for part in (
                    flagged("; ".join(said_otherwise)) if said_otherwise else "",
                    notes,
                    "" if any(p_yes > 0.5 for p_yes in yes) else "P(yes) < 0.5 for every argument",
                )
                if part
            ),
        )
    probabilities = scored[0][0]
    best = max(range(len(probabilities)), key=probabilities.__getitem__)
    if sorted(probabilities)[-2:] == [probabilities[best]] * 2:
        tie = ", ".join(LETTERS[k] for k, p in enumerate(probabilities) if p == probabilities[best])
        return row("unparseable", totals, replies, problem=f"the letters {tie} are exactly as likely")
    reason = contradiction(records[0].reply, [option.label for option in shown.options], best)
    return row(
        "answered",
        totals,
        replies,
        answer=shown.options[best].value,
        confidence=probabilities[best],
        option_probabilities=probabilities,
        confidence_source="logprobs",
        answer_source="letter_logprob" if not notes else "letter_logprob_alternatives",
        problem="; ".join(part for part in (flagged(reason) if reason else "", notes) if part),
    )


async def run_tests(
    items: ItemSet,
    settings: LLMSettings,
    *,
    out_dir: str | Path,
    repeats: int = 1,
    concurrency: int = 4,
    parse_retries: int = 2,
    use_logprobs: bool = False,
    answer_mode: str = "stated",
    seed: Any = 1,
    progress: TextIO | None = None,
) -> RunSummary:
    """Ask every planned test version not yet answered in the output file; append the rows as they arrive."""
    runs.check_parse_retries(parse_retries)
    path = output_path(out_dir, settings.model, items)
    path.parent.mkdir(parents=True, exist_ok=True)
    jobs = plan_jobs(items, model=settings.model, repeats=repeats, seed=seed)
    planned = {job.key for job in jobs}
    finished = [row for row in read_finished(path) if (row["run"], row["item_id"], row["version"]) in planned]
    done = {(row["run"], row["item_id"], row["version"]) for row in finished}
    summary = RunSummary(path=path, planned=len(jobs), kept=len(finished))
    # Rewrite the kept rows first (dropping failed calls), so that the file never holds a test twice.
    runs.write_rows(path, finished, columns=EXPORT_COLUMNS)
    todo = [job for job in jobs if job.key not in done]

    async def work(job: Job) -> dict[str, Any]:
        return await ask(job, settings, parse_retries=parse_retries, use_logprobs=use_logprobs, answer_mode=answer_mode)

    with runs.RowAppender(path, columns=EXPORT_COLUMNS) as out:

        def store(job: Job, row: dict[str, Any]) -> str:
            out.write([row])
            summary.record(row["status"], row["problem"])
            return row["status"]

        await runs.run_each(todo, work, concurrency=concurrency, progress=progress, on_done=store)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m backend.bias.runner", description=" ".join(__doc__.split("\n\n")[0].split())
    )
    parser.add_argument("--model", required=True, help="model name at the endpoint, or 'scripted' (offline)")
    parser.add_argument("--items", type=Path, default=None, help="item file (default: the bundled sample)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per test version (each run = one respondent)")
    runs.add_run_options(parser, unit="calls", out_help="output folder (the CSV is resumed if present)")
    parser.add_argument("--confidence", choices=("stated", "logprobs"), default="stated")
    parser.add_argument("--answer-mode", choices=ANSWER_MODES, default="stated", help="how a model is asked")
    add_endpoint_options(parser)
    parser.add_argument("--seed", default="1", help="seed of each run's order and argument shuffles")

    async def start(args: argparse.Namespace, progress: TextIO | None) -> RunSummary:
        return await run_tests(
            load_items(args.items),
            settings_from_args(args, model=args.model),
            **runs.run_options(args),
            repeats=args.repeats,
            use_logprobs=args.confidence == "logprobs",
            answer_mode=args.answer_mode,
            seed=args.seed,
            progress=progress,
        )

    def finish(summary: RunSummary, seconds: float) -> int:
        return summary.finish(
            f"{summary.path}: {summary.planned} test versions planned, {summary.kept} kept from before, "
            f"{summary.counts_text()} ({seconds:.1f} s)."
        )

    return runs.run_command(parser, argv, start, finish)


if __name__ == "__main__":
    sys.exit(main())
