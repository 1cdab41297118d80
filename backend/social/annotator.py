"""Models as annotators of social_eval episodes: per agent and rubric dimension, a reasoning and a rating.

Command: ``python -m backend.social.annotator --episodes FILE [--rubric FILE] --model NAME --out DIR``.

A model rates the same episodes people rate in the ``social_eval`` app (``backend.social.episodes``: our JSON/JSONL format or
a Sotopia import) with the same rubric (``backend.social.rubrics``, default the bundled seven Sotopia dimensions): for each
agent and each dimension, a reasoning text and a whole-number rating within the dimension's range.

**Unit of work: one call per (episode, agent).** The prompt (`backend.social.annotator_prompts`) shows what the
rating page shows people and asks for one character's ratings on every dimension. Why per agent, not per episode: the
answer stays one flat object ``{dimension: {"reasoning", "rating"}}`` whose schema can carry every bound, a model
cannot swap the two characters' ratings, a reply that breaks costs one character's ratings instead of both, and the
budget is half as large. The cost is that the conversation is read twice per episode.

**Asking and reading** (`backend.social.annotator_prompts`). Each call sends a JSON schema of the answer; where
the endpoint refuses schemas the same call goes without one (``backend.core.llm``). ``parse_ratings`` reads the
reply never guessing (``--min-reasoning-chars``, ``--max-reasoning-chars`` bound each reasoning); a reply it
cannot use is a ``RatingsParseError`` naming the problem, the model is asked again with that problem named, at
most ``--parse-retries`` times, then the unit is recorded ``unparseable``. A reasoning model's thinking
(``record.reasoning``) is stored in ``model_thinking`` and never read as the answer.

**Token budget** (``unit_budget``): people's reasoning limit per explanation (or ``--max-reasoning-chars``) times
the number of dimensions, plus the answer's JSON skeleton. ``--max-tokens`` overrides it; ``--reasoning-tokens``
adds room for thinking.

**Output** in ``--out`` (``<stem>`` = ``social_<model>_<episodes file stem>``):

* ``<stem>.csv``: one row per (episode, agent, dimension), ``COLUMNS``: rating and reasoning, ``status``
  (answered / unparseable / error), ``answer_source`` (structured: the schema was sent; text: read from a reply
  without one; empty for errors), ``problem``, ``model_thinking``, ``raw_reply``, ``calls`` (asks including
  re-asks), ``attempts`` (HTTP attempts), ``latency_s``, tokens, ``max_tokens``. Text cells are neutralised for
  spreadsheets (``backend.core.csvio``). Rows are appended as units finish; the file is the resume state
  (``backend.core.runs``): running the same command again asks only units without an answered or unparseable row
  set (errors are asked again). The cost estimate of the units still to ask (``backend.core.run_costs``) is
  measured on the kept ones (a pilot: run a few episodes first, then the folder in the same ``--out``).
* ``<stem>.episodes.json``: the same episodes in our documented format (a list), each agent's ``model_ratings``
  replaced by this model's answered ratings (empty where the unit is not answered) and ``model_rater`` = the model
  name (empty for an episode with no answered unit). ``python -m backend report ratings.csv <stem>.episodes.json``
  reads it next to people's export and fills the human-vs-model columns (n_model, model_mean, pearson, spearman,
  diff); load it into a social_eval session and the app's long export carries the ``model_rating`` column.

**k samples per unit** (``--samples K``, default 1): each (episode, agent) is rated K times independently (each
sample with its own re-asks). Per dimension the ``rating`` is the median of the K ratings (a half rounded up),
``rating_spread`` their sample SD (0 for one sample: the wider, the less sure the model), ``sample_ratings`` the K
ratings (``7#8#7``) and ``samples`` how many samples answered (`backend.core.calibration.rating_summary`); the
reasoning is that of the first sample that gave the median rating (else the first sample's). Samples that stay
unparseable are left out; none answered makes the unit unparseable, and a failed call an error (asked again on the
next run). More than one sample needs a temperature above 0, except for ``scripted``. The report reads the spread
from this file when it sits beside the episode file (``python -m backend report ratings.csv <stem>.episodes.json``).

The episode file is written atomically (temporary file, then ``os.replace``) after every run. ``--model scripted``
answers offline with ``scripted_policy`` (a hash of episode, agent and dimension mapped into the range).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from backend.core import calibration, run_costs, runs
from backend.core.csvio import iso_utc
from backend.core.llm import LLMSettings, add_endpoint_options, complete, costs, settings_from_args
from backend.core.llm.records import CallTotals
from backend.core.progress import RunTally
from backend.social.annotator_prompts import (
    AGENT_INDEXES,
    MIN_REASONING_CHARS,
    DimensionRating,
    RatingsParseError,
    build_messages,
    parse_ratings,
    ratings_schema,
    reprompt_message,
    scripted_policy,
    unit_budget,
)
from backend.social.cells import RATING_CELLS, rating_cells
from backend.social.episodes import Episode, attach_model_ratings, load_episodes
from backend.social.forms import MAX_REASONING_CHARS
from backend.social.rubrics import Rubric, load_rubric

FINAL_STATUSES = ("answered", "unparseable")
# The k-sample columns (backend.core.calibration.rating_summary); optional when a file of an earlier version is resumed.
SAMPLE_COLUMNS = ("samples", "rating_spread", "sample_ratings")
# What the unit's calls cost by --prices (empty while unknown; 0 for calls the response cache answered) and how many
# the cache answered (issue 37); optional when a file of an earlier version is resumed.
COST_COLUMNS = ("cost", "cached_calls")

COLUMNS = [
    *RATING_CELLS,
    "status",
    "answer_source",
    "problem",
    "model",
    "model_thinking",
    "raw_reply",
    "calls",
    "attempts",
    "latency_s",
    "prompt_tokens",
    "completion_tokens",
    *COST_COLUMNS,
    "max_tokens",
    "rubric",
    "answered_at",
    *SAMPLE_COLUMNS,
]


# --- asking one unit ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Unit:
    episode: Episode
    agent_index: int

    @property
    def key(self) -> tuple[str, str]:
        return (self.episode.id, str(self.agent_index))


def rubric_label(rubric: Rubric) -> str:
    """The ``rubric`` column: name and version.

    >>> rubric_label(load_rubric())
    'sotopia-seven-dimensions 1.0'
    """
    return f"{rubric.name} {rubric.version}".strip()


def _unit_rows(
    unit: Unit, rubric: Rubric, common: Mapping[str, Any], samples: Sequence[Mapping[str, DimensionRating]]
) -> list:
    """One row per dimension: the samples' median rating with its spread (`calibration.rating_summary`)."""
    rows = []
    for dimension in rubric.dimensions:
        rated = [sample[dimension.key] for sample in samples if dimension.key in sample]
        extra = dict.fromkeys(SAMPLE_COLUMNS, "")
        rating, reasoning = "", ""
        if rated:
            summary = calibration.rating_summary([one.rating for one in rated])
            rating = summary["rating"]
            reasoning = next((one.reasoning for one in rated if one.rating == rating), rated[0].reasoning)
            extra = dict(
                samples=summary["samples"],
                rating_spread=round(summary["spread"], 6),
                sample_ratings="#".join(str(one.rating) for one in rated),
            )
        cells = rating_cells(unit.episode, unit.agent_index, dimension, rating=rating, reasoning=reasoning)
        rows.append(dict(**cells, rubric=rubric_label(rubric), **common, **extra))
    return rows


async def ask_unit(
    unit: Unit,
    rubric: Rubric,
    settings: LLMSettings,
    *,
    parse_retries: int = 2,
    min_reasoning_chars: int = MIN_REASONING_CHARS,
    max_reasoning_chars: int = MAX_REASONING_CHARS,
    samples: int = 1,
) -> list[dict[str, Any]]:
    """Ask for one (episode, agent)'s ratings ``samples`` times; return its CSV rows (one per dimension,
    ``COLUMNS``), all with the unit's status: answered (the samples' median and spread), unparseable (no sample
    answered after ``parse_retries`` re-asks each) or error (a call failed for good)."""
    runs.check_parse_retries(parse_retries)
    calibration.check_samples(samples, settings)
    messages = build_messages(
        unit.episode,
        unit.agent_index,
        rubric,
        min_reasoning_chars=min_reasoning_chars,
        max_reasoning_chars=max_reasoning_chars,
    )
    policy = scripted_policy(rubric, unit.episode.id, unit.episode.agents[unit.agent_index - 1].name)
    budget, schema = unit_budget(rubric, max_reasoning_chars=max_reasoning_chars), ratings_schema(rubric)
    totals = CallTotals()

    def common(status: str, source: str, problem: str, reply: str, max_tokens: int | None) -> dict[str, Any]:
        return dict(
            status=status,
            answer_source=source,
            problem=problem,
            model=settings.model,
            model_thinking=totals.thinking,
            raw_reply=reply,
            **totals.cells(),
            max_tokens=max_tokens if max_tokens is not None else "",
            answered_at=iso_utc(time.time()),
        )

    problem, reply, source, max_tokens = "", "", "", None
    answered: list[tuple[str, str, Mapping[str, DimensionRating]]] = []  # (reply, source, ratings) per sample
    first_messages = messages
    for _ in range(samples):
        messages = first_messages
        for _ in range(parse_retries + 1):
            record = await complete(messages, settings, scripted=policy, max_tokens=budget, response_schema=schema)
            totals.add(record)
            max_tokens = record.max_tokens if record.max_tokens is not None else settings.token_limit(budget)
            if not record.ok:
                error = f"{record.error_kind}: {record.error}"
                return _unit_rows(unit, rubric, common("error", "", error, record.reply, max_tokens), [])
            reply, source = record.reply, "structured" if record.structured else "text"
            try:
                ratings = parse_ratings(
                    reply, rubric, min_reasoning_chars=min_reasoning_chars, max_reasoning_chars=max_reasoning_chars
                )
            except RatingsParseError as error:
                problem = str(error).rstrip(".")
                if record.finish_reason == "length":
                    problem += " (the reply was cut off at the token limit)"
                messages = [*messages, {"role": "assistant", "content": reply}, reprompt_message(problem)]
                continue
            answered.append((reply, source, ratings))
            break
    if answered:
        reply, source, _ = answered[0]
        rows = common("answered", source, "", reply, max_tokens)
        return _unit_rows(unit, rubric, rows, [ratings for _, _, ratings in answered])
    return _unit_rows(unit, rubric, common("unparseable", source, problem, reply, max_tokens), [])


# --- files ----------------------------------------------------------------------------------------------------------
def output_stem(out_dir: str | Path, model: str, episodes_path: str | Path) -> Path:
    """``DIR/social_<model>_<episodes stem>`` with unsafe characters replaced.

    >>> output_stem("out", "org/model:7b", "data/my episodes.jsonl").as_posix()
    'out/social_org_model_7b_my_episodes'
    """
    return (
        Path(out_dir)
        / f"social_{runs.safe_name(model, empty='x')}_{runs.safe_name(Path(episodes_path).stem, empty='x')}"
    )


def read_finished(path: Path, units: Sequence[Unit], rubric: Rubric) -> list[dict[str, str]]:
    """The rows of an earlier run for planned units that need no new call: every dimension of the rubric present with
    an answered or unparseable status. Cells come back exactly as before neutralisation. A file of another layout
    or rubric is refused (pick another ``--out``)."""
    rows = runs.read_rows(path, columns=COLUMNS, optional=SAMPLE_COLUMNS + COST_COLUMNS, what="the annotator's output")
    label = rubric_label(rubric)
    other = sorted({row["rubric"] for row in rows} - {label})
    if other:
        raise ValueError(f"{path} was written with the rubric {other[0]!r}, not {label!r}; pick another --out.")
    by_unit: dict[tuple[str, str], list[dict[str, str]]] = {}
    for row in rows:
        by_unit.setdefault((row["episode_id"], row["agent_index"]), []).append(row)
    kept = []
    for unit in units:
        unit_rows = by_unit.get(unit.key, [])
        statuses = {row["status"] for row in unit_rows}
        if (
            len(statuses) == 1
            and statuses <= set(FINAL_STATUSES)
            and [r["dimension"] for r in unit_rows] == rubric.keys
        ):
            kept.extend(unit_rows)
    return kept


def answered_ratings(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[int, dict[str, int]]]:
    """``{episode_id: {agent index: {dimension: rating}}}`` of the answered rows.

    >>> answered_ratings([dict(episode_id="e1", agent_index="2", dimension="goal", rating="7", status="answered"),
    ...                   dict(episode_id="e1", agent_index="1", dimension="goal", rating="", status="error")])
    {'e1': {2: {'goal': 7}}}
    """
    found: dict[str, dict[int, dict[str, int]]] = {}
    for row in rows:
        if row["status"] == "answered":
            agents = found.setdefault(str(row["episode_id"]), {})
            agents.setdefault(int(row["agent_index"]), {})[str(row["dimension"])] = int(row["rating"])
    return found


def rated_episodes(episodes: Sequence[Episode], rows: Iterable[Mapping[str, Any]], *, rater: str) -> list[Episode]:
    """The episodes with this model's answered ratings as ``model_ratings`` and ``model_rater`` = ``rater``.

    Earlier model ratings are removed everywhere (an agent this model did not rate gets none), so the file never
    labels another rater's numbers with this model's name.
    """
    cleared = [
        replace(episode, agents=tuple(replace(agent, model_ratings={}) for agent in episode.agents), model_rater="")
        for episode in episodes
    ]
    by_agent = {
        episode_id: [found.get(index, {}) for index in AGENT_INDEXES]
        for episode_id, found in answered_ratings(rows).items()
    }
    return attach_model_ratings(cleared, by_agent, rater=rater)


# --- the run --------------------------------------------------------------------------------------------------------
@dataclass(kw_only=True)
class RunSummary(RunTally):
    csv_path: Path
    episodes_path: Path


async def annotate(
    episodes: Sequence[Episode],
    rubric: Rubric,
    settings: LLMSettings,
    *,
    out_dir: str | Path,
    episodes_name: str | Path,
    concurrency: int = 4,
    parse_retries: int = 2,
    min_reasoning_chars: int = MIN_REASONING_CHARS,
    max_reasoning_chars: int = MAX_REASONING_CHARS,
    samples: int = 1,
    progress: TextIO | None = None,
) -> RunSummary:
    """Rate every (episode, agent) not yet answered or unparseable in the CSV, appending rows as units finish; then
    write the rated episode file and the report's model-ratings file (see the module doc)."""
    stem = output_stem(out_dir, settings.model, episodes_name)
    stem.parent.mkdir(parents=True, exist_ok=True)
    summary = RunSummary(
        csv_path=stem.with_name(stem.name + ".csv"),
        episodes_path=stem.with_name(stem.name + ".episodes.json"),
    )
    units = [Unit(episode, index) for episode in episodes for index in AGENT_INDEXES]
    kept = read_finished(summary.csv_path, units, rubric)
    done = {(row["episode_id"], row["agent_index"]) for row in kept}
    summary.planned, summary.kept = len(units), len(done)
    # Rewrite the kept rows first (failed and unplanned units dropped), so that no unit is ever in the file twice.
    runs.write_rows(summary.csv_path, kept, columns=COLUMNS)
    todo = [unit for unit in units if unit.key not in done]
    # The cost estimate: the kept units' calls and tokens (a pilot), prompt tokens scaled to each unit's prompt size.
    pilot = costs.measure_rows(kept, unit_key=["episode_id", "agent_index"])
    run_costs.use_pilot(pilot, pilot_units=[unit for unit in units if unit.key in pilot.keys])
    new_rows: list[dict[str, Any]] = []

    async def work(unit: Unit) -> list[dict[str, Any]]:
        return await ask_unit(
            unit,
            rubric,
            settings,
            parse_retries=parse_retries,
            min_reasoning_chars=min_reasoning_chars,
            max_reasoning_chars=max_reasoning_chars,
            samples=samples,
        )

    calibration.check_samples(samples, settings)
    with runs.RowAppender(summary.csv_path, columns=COLUMNS) as out:

        def store(unit: Unit, rows: list[dict[str, Any]]) -> str:
            out.write(rows)  # flushed: a crash keeps every unit finished so far
            new_rows.extend(rows)
            summary.record(rows[0]["status"], rows[0]["problem"])
            return rows[0]["status"]

        await runs.run_each(todo, work, concurrency=concurrency, progress=progress, on_done=store)
    all_rows = [*kept, *new_rows]
    rated = rated_episodes(episodes, all_rows, rater=settings.model)
    document = json.dumps([episode.as_dict() for episode in rated], indent=2, ensure_ascii=False) + "\n"
    runs.write_text_atomically(summary.episodes_path, document)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend.social.annotator", description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=Path, required=True, help="episode file or folder (our format or Sotopia)")
    parser.add_argument("--rubric", type=Path, default=None, help="rubric JSON (default: the bundled Sotopia rubric)")
    parser.add_argument("--model", required=True, help="model name at the endpoint, or 'scripted' (offline)")
    runs.add_run_options(
        parser, unit="units (episode x agent)", out_help="output folder (the CSV is resumed if present)"
    )
    add_endpoint_options(parser, timeout_s=120.0)
    parser.add_argument("--min-reasoning-chars", type=int, default=MIN_REASONING_CHARS, help="per explanation")
    parser.add_argument("--max-reasoning-chars", type=int, default=MAX_REASONING_CHARS, help="per explanation")
    parser.add_argument(
        "--samples", type=int, default=1, help="ratings per unit; their spread is the model's uncertainty"
    )

    async def start(args: argparse.Namespace, progress: TextIO | None) -> RunSummary:
        rubric = load_rubric(args.rubric)
        return await annotate(
            load_episodes(args.episodes, rubric=rubric),
            rubric,
            settings_from_args(args, model=args.model),
            **runs.run_options(args),
            episodes_name=args.episodes,
            min_reasoning_chars=args.min_reasoning_chars,
            max_reasoning_chars=args.max_reasoning_chars,
            samples=args.samples,
            progress=progress,
        )

    def finish(summary: RunSummary, seconds: float) -> int:
        return summary.finish(
            f"{summary.csv_path}: {summary.planned} units (episode x agent) planned, {summary.kept} kept from before, "
            f"{summary.counts_text()} ({seconds:.1f} s); rated episodes in {summary.episodes_path.name}."
        )

    return runs.run_command(parser, argv, start, finish)


if __name__ == "__main__":
    sys.exit(main())
