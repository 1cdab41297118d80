"""Models as annotators of social_eval episodes: per agent and rubric dimension, a reasoning and a rating.

Command: ``python -m backend.social.annotator --episodes FILE [--rubric FILE] --model NAME --out DIR``.

A model rates the same episodes people rate in the ``social_eval`` app (``backend.social.episodes``: our JSON/JSONL format or
a Sotopia import) with the same rubric (``backend.social.rubrics``, default the bundled seven Sotopia dimensions): for each
agent and each dimension, a reasoning text and a whole-number rating within the dimension's range.

**Unit of work: one call per (episode, agent).** The prompt shows what the rating page shows people (the guideline
with its definitions and annotation examples, the scenario, both characters' backgrounds, goals and secrets, the
numbered turns) and asks for one character's ratings on every dimension. Why per agent, not per episode: the
answer stays one flat object ``{dimension: {"reasoning", "rating"}}`` whose schema can carry every bound, a model
cannot swap the two characters' ratings, a reply that breaks costs one character's ratings instead of both, and the
budget is half as large. The cost is that the conversation is read twice per episode.

**Asking and reading.** Each call sends a JSON schema (``ratings_schema``: per dimension ``reasoning`` string then
``rating`` integer with the rubric's ``minimum``/``maximum``); where the endpoint refuses schemas the same call goes
without one (``backend.core.llm``). ``parse_ratings`` reads the reply never guessing: the one JSON object holding the
dimension keys (code fences and text around it allowed), every dimension present, each rating a whole number within
its range, each reasoning as long as people's must be (``--min-reasoning-chars``, ``--max-reasoning-chars``).
Anything else (no object, two different objects, a duplicate key, a missing dimension, 11 on a 0..10 scale) is a
``RatingsParseError`` naming the problem; the model is asked again with that problem named, at most
``--parse-retries`` times, then the unit is recorded ``unparseable``. A reasoning model's thinking
(``record.reasoning``) is stored in ``model_thinking`` and never read as the answer.

**Token budget** (``unit_budget``): the reasoning limit of people (``social_forms.MAX_REASONING_CHARS`` characters per
explanation, or ``--max-reasoning-chars``) times the number of dimensions, plus the answer's JSON skeleton, through
``reply_budget``. ``--max-tokens`` overrides it; ``--reasoning-tokens`` adds room for thinking.

**Output** in ``--out`` (``<stem>`` = ``social_<model>_<episodes file stem>``):

* ``<stem>.csv``: one row per (episode, agent, dimension), ``COLUMNS``: rating and reasoning, ``status``
  (answered / unparseable / error), ``answer_source`` (structured: the schema was sent; text: read from a reply
  without one; empty for errors), ``problem``, ``model_thinking``, ``raw_reply``, ``calls`` (asks including
  re-asks), ``attempts`` (HTTP attempts), ``latency_s``, tokens, ``max_tokens``. Text cells are neutralised for
  spreadsheets (``backend.core.csvio``). Rows are appended as units finish; the file is the resume state: running the
  same command again asks only units without an answered or unparseable row set (errors are asked again).
* ``<stem>.episodes.json``: the same episodes in our documented format (a list), each agent's ``model_ratings``
  replaced by this model's answered ratings (empty where the unit is not answered) and ``model_rater`` = the model
  name (empty for an episode with no answered unit). ``python -m backend report ratings.csv <stem>.episodes.json``
  reads it next to people's export and fills the human-vs-model columns (n_model, model_mean, pearson, spearman,
  diff); load it into a social_eval session and the app's long export carries the ``model_rating`` column.

The episode file is written atomically (temporary file, then ``os.replace``) after every run. ``--model scripted``
answers offline with ``scripted_policy`` (a hash of episode, agent and dimension mapped into the range).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import hashlib
import json
import os
import re
import string
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from backend.core.csvio import iso_utc, neutralise_row, restore_row
from backend.core.llm import LLMSettings, add_endpoint_options, complete, reply_budget, settings_from_args
from backend.core.llm.replies import RepeatedKeyError, json_objects
from backend.core.progress import ProgressBar, RunTally
from backend.core.stored_text import typed_length
from backend.social.episodes import Episode, load_episodes
from backend.social.forms import MAX_REASONING_CHARS
from backend.social.report import RATING_CELLS
from backend.social.rubrics import Rubric, load_rubric

PROMPT_DIR = Path(__file__).resolve().parent / "data" / "social_annotator_prompts"
MIN_REASONING_CHARS = 20  # the social_eval session default of min_reasoning_chars: what people must write at least
FINAL_STATUSES = ("answered", "unparseable")
AGENT_INDEXES = (1, 2)
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
    "max_tokens",
    "rubric",
    "answered_at",
]
_TURN_MARKERS = {"speech": ":", "action": " [action]", "non-verbal": " [non-verbal]"}


class RatingsParseError(ValueError):
    """A reply that does not hold one complete, in-range set of ratings; the message names the problem."""


@dataclass(frozen=True)
class DimensionRating:
    rating: int
    reasoning: str


# --- prompts --------------------------------------------------------------------------------------------------------
def _template(name: str) -> string.Template:
    return string.Template((PROMPT_DIR / f"{name}.txt").read_text(encoding="utf-8").strip())


def _dimension_text(dimension) -> str:
    lines = [f"### {dimension.label} (key {dimension.key}; whole numbers from {dimension.min} to {dimension.max})"]
    lines.append(dimension.definition)
    for example in dimension.examples:
        verdict = "Good example" if example.is_good else "Bad example"
        lines.append(f'- {verdict}: reasoning "{example.rationale}", rating {example.rating}. {example.why}')
    return "\n".join(lines)


def _turn_text(number: int, turn) -> str:
    if turn.kind == "leave":
        return f"{number}. {turn.speaker} left the conversation."
    return f"{number}. {turn.speaker}{_TURN_MARKERS[turn.kind]} {turn.text}"


def answer_format(rubric: Rubric) -> str:
    """The answer's shape as shown in the prompt (placeholders, deliberately not valid JSON).

    >>> print(answer_format(load_rubric()).splitlines()[1])
      "believability": {"reasoning": "<your reasoning>", "rating": <whole number from 0 to 10>},
    """
    entries = [
        f'  "{d.key}": {{"reasoning": "<your reasoning>", "rating": <whole number from {d.min} to {d.max}>}}'
        for d in rubric.dimensions
    ]
    return "{\n" + ",\n".join(entries) + "\n}"


def build_messages(
    episode: Episode,
    agent_index: int,
    rubric: Rubric,
    *,
    min_reasoning_chars: int = MIN_REASONING_CHARS,
    max_reasoning_chars: int = MAX_REASONING_CHARS,
) -> list[dict[str, str]]:
    """The chat that asks for the ratings of agent ``agent_index`` (1 or 2) of ``episode``: system + user message.

    >>> from backend.social.rubrics import DEFAULT_RUBRIC_PATH
    >>> episode = load_episodes(DEFAULT_RUBRIC_PATH.parent / "episodes" / "borrowed_ladder.json")[0]
    >>> messages = build_messages(episode, 2, load_rubric())
    >>> [m["role"] for m in messages], "Rate Henrik Lund (character 2)" in messages[1]["content"]
    (['system', 'user'], True)
    """
    if agent_index not in AGENT_INDEXES:
        raise ValueError(f"The agent index must be 1 or 2, got {agent_index!r}.")
    _check_reasoning_limits(min_reasoning_chars, max_reasoning_chars)
    agents = "\n\n".join(
        f"Character {index}: {agent.name}\nBackground: {agent.background}\nSocial goal: {agent.goal}\n"
        f"Secret: {agent.secret or '(none)'}"
        for index, agent in enumerate(episode.agents, start=1)
    )
    user = _template("rate").substitute(
        title=rubric.title,
        instructions="\n\n".join(rubric.instructions),
        dimensions="\n\n".join(_dimension_text(d) for d in rubric.dimensions),
        scenario=episode.scenario,
        agents=agents,
        turns="\n".join(_turn_text(number, turn) for number, turn in enumerate(episode.turns, start=1)),
        agent_name=episode.agents[agent_index - 1].name,
        agent_index=agent_index,
        min_chars=min_reasoning_chars,
        max_chars=max_reasoning_chars,
        answer_format=answer_format(rubric),
    )
    return [{"role": "system", "content": _template("system").template}, {"role": "user", "content": user}]


def reprompt_message(problem: str) -> dict[str, str]:
    """The follow-up user message after a reply that could not be used, naming the problem."""
    return {"role": "user", "content": _template("reprompt").substitute(problem=problem.rstrip("."))}


def ratings_schema(rubric: Rubric) -> dict[str, Any]:
    """The JSON schema of one agent's answer: per dimension ``{"reasoning": str, "rating": int}`` with the range.

    ``reasoning`` comes first so that a model writing in order reasons before it rates, as people do on the page.
    No ``maxLength``: OpenAI's strict mode refuses it; ``parse_ratings`` checks the length.

    >>> schema = ratings_schema(load_rubric())
    >>> schema["required"][:2], schema["properties"]["relationship"]["properties"]["rating"]
    (['believability', 'relationship'], {'type': 'integer', 'minimum': -5, 'maximum': 5})
    """
    return {
        "type": "object",
        "properties": {
            d.key: {
                "type": "object",
                "properties": {
                    "reasoning": {"type": "string"},
                    "rating": {"type": "integer", "minimum": d.min, "maximum": d.max},
                },
                "required": ["reasoning", "rating"],
                "additionalProperties": False,
            }
            for d in rubric.dimensions
        },
        "required": list(rubric.keys),
        "additionalProperties": False,
    }


def unit_budget(rubric: Rubric, *, max_reasoning_chars: int = MAX_REASONING_CHARS) -> int:
    """The ``max_tokens`` budget of one (episode, agent) answer.

    budget = reply_budget(D * max_reasoning_chars + len(skeleton)), with D the rubric's dimensions and ``skeleton``
    the answer's JSON with empty reasonings and the widest ratings (keys, quotes, braces, numbers).

    >>> unit_budget(load_rubric()), unit_budget(load_rubric(), max_reasoning_chars=500)
    (17740, 1990)
    """
    _check_reasoning_limits(0, max_reasoning_chars)
    skeleton = json.dumps(
        {
            d.key: {"reasoning": "", "rating": d.min if len(str(d.min)) > len(str(d.max)) else d.max}
            for d in rubric.dimensions
        },
        indent=2,
    )
    return reply_budget(len(rubric.dimensions) * max_reasoning_chars + len(skeleton))


def _check_reasoning_limits(min_chars: int, max_chars: int) -> None:
    if not 0 <= min_chars <= max_chars or max_chars < 1:
        raise ValueError(
            f"The reasoning length limits must satisfy 0 <= minimum <= maximum and maximum >= 1, got {min_chars} "
            f"and {max_chars}."
        )


# --- reading a reply ------------------------------------------------------------------------------------------------
def _whole_number(value: Any) -> int | None:
    """An integer, an integral float (``7.0``) or an integer written as text (``"7"``, ``"-3"``, ``"−3"``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"[+\-−]?\d{1,4}", value.strip()):
        return int(value.strip().replace("−", "-"))
    return None


def parse_ratings(
    reply: str,
    rubric: Rubric,
    *,
    min_reasoning_chars: int = MIN_REASONING_CHARS,
    max_reasoning_chars: int = MAX_REASONING_CHARS,
) -> dict[str, DimensionRating]:
    """One agent's ratings from a reply: ``{dimension key: DimensionRating(rating, reasoning)}`` in rubric order.

    The reply must hold exactly one JSON object with dimension keys (repeats of the same object count once; objects
    without any dimension key are ignored), covering every dimension with ``{"reasoning": text, "rating": whole
    number within the range}``; other keys are ignored. Reasoning length counts as in the app (stripped,
    ``typed_length``). Every problem found is named in one ``RatingsParseError``.

    >>> rubric = load_rubric()
    >>> answer = {key: {"reasoning": "Nothing in the talk changes this.", "rating": 0} for key in rubric.keys}
    >>> parse_ratings("```json\\n" + json.dumps(answer) + "\\n```", rubric)["goal"]
    DimensionRating(rating=0, reasoning='Nothing in the talk changes this.')
    >>> answer["goal"]["rating"], answer["secret"] = 11, {"rating": -2}
    >>> parse_ratings(json.dumps(answer), rubric)
    Traceback (most recent call last):
    ...
    backend.social.annotator.RatingsParseError: secret: the reasoning is missing; goal: the rating 11 is outside the range 0 to 10.
    """
    _check_reasoning_limits(min_reasoning_chars, max_reasoning_chars)
    try:
        objects = json_objects(reply)
    except RepeatedKeyError as error:
        raise RatingsParseError(str(error)) from None
    candidates = []
    for value in objects:
        if isinstance(value, dict) and set(value) & set(rubric.keys) and value not in candidates:
            candidates.append(value)
    if not candidates:
        if any(isinstance(value, dict) for value in objects):
            raise RatingsParseError(f"the JSON object has none of the dimension keys {rubric.keys}")
        raise RatingsParseError("the reply holds no complete JSON object")
    if len(candidates) > 1:
        raise RatingsParseError(f"the reply holds {len(candidates)} different rating objects; give exactly one")
    (answer,) = candidates
    problems, ratings = [], {}
    missing = [key for key in rubric.keys if key not in answer]
    if missing:
        problems.append(f"the dimension(s) {missing} are missing")
    for dimension in rubric.dimensions:
        if dimension.key not in answer:
            continue
        entry, where = answer[dimension.key], dimension.key
        if not isinstance(entry, dict):
            problems.append(f'{where}: must be an object {{"reasoning": ..., "rating": ...}}, got {entry!r:.40}')
            continue
        reasoning = entry.get("reasoning")
        rating = _whole_number(entry.get("rating"))
        entry_problems = []
        if not isinstance(reasoning, str) or not reasoning.strip():
            entry_problems.append("the reasoning is missing")
        elif not min_reasoning_chars <= (length := typed_length(reasoning.strip())) <= max_reasoning_chars:
            entry_problems.append(
                f"the reasoning has {length} characters, it must have {min_reasoning_chars} to {max_reasoning_chars}"
            )
        if "rating" not in entry:
            entry_problems.append("the rating is missing")
        elif rating is None:
            entry_problems.append(f"the rating {entry['rating']!r:.20} is not a whole number")
        elif not dimension.contains(rating):
            entry_problems.append(f"the rating {rating} is outside the range {dimension.min} to {dimension.max}")
        if entry_problems:
            problems.append(f"{where}: {', '.join(entry_problems)}")
        else:
            ratings[dimension.key] = DimensionRating(rating=rating, reasoning=reasoning.strip())
    if problems:
        raise RatingsParseError("; ".join(problems) + ".")
    return ratings


# --- the scripted (offline) model -----------------------------------------------------------------------------------
def scripted_rating(episode_id: str, agent_name: str, dimension) -> int:
    """A deterministic rating: sha256 of ``episode|agent|dimension`` modulo the number of scale points, from min.

    >>> from backend.social.rubrics import Dimension
    >>> scripted_rating("e1", "Ann", Dimension("goal", "Goal", 0, 10, "")) in range(0, 11)
    True
    """
    digest = hashlib.sha256(f"{episode_id}|{agent_name}|{dimension.key}".encode()).digest()
    return dimension.min + int.from_bytes(digest[:8], "big") % (dimension.max - dimension.min + 1)


def scripted_policy(rubric: Rubric, episode_id: str, agent_name: str) -> Callable[[list[dict[str, str]]], str]:
    """The offline model of one unit: a function of the messages (which it does not need) returning a JSON answer
    with ``scripted_rating`` for every dimension and a sentence saying it is no judgement."""

    def policy(messages: list[dict[str, str]]) -> str:
        return json.dumps(
            {
                d.key: {
                    "reasoning": f"Scripted rating of {agent_name} on {d.label}: a hash of episode, agent and "
                    "dimension, not a judgement.",
                    "rating": scripted_rating(episode_id, agent_name, d),
                }
                for d in rubric.dimensions
            }
        )

    return policy


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


def _unit_rows(unit: Unit, rubric: Rubric, common: Mapping[str, Any], ratings: Mapping[str, DimensionRating]) -> list:
    agent = unit.episode.agents[unit.agent_index - 1]
    rows = []
    for dimension in rubric.dimensions:
        rated = ratings.get(dimension.key)
        rows.append(
            dict(
                episode_id=unit.episode.id,
                episode_group=unit.episode.group,
                is_gold=int(unit.episode.is_gold),
                agent_index=unit.agent_index,
                agent_name=agent.name,
                agent_model=agent.model,
                dimension=dimension.key,
                scale_min=dimension.min,
                scale_max=dimension.max,
                rating=rated.rating if rated else "",
                reasoning=rated.reasoning if rated else "",
                rubric=rubric_label(rubric),
                **common,
            )
        )
    return rows


async def ask_unit(
    unit: Unit,
    rubric: Rubric,
    settings: LLMSettings,
    *,
    parse_retries: int = 2,
    min_reasoning_chars: int = MIN_REASONING_CHARS,
    max_reasoning_chars: int = MAX_REASONING_CHARS,
) -> list[dict[str, Any]]:
    """Ask for one (episode, agent)'s ratings; return its CSV rows (one per dimension, ``COLUMNS``), all with the
    unit's status: answered, unparseable (after ``parse_retries`` re-asks) or error (a call failed for good)."""
    if parse_retries < 0:
        raise ValueError(f"parse_retries must be 0 or more, got {parse_retries}.")
    messages = build_messages(
        unit.episode,
        unit.agent_index,
        rubric,
        min_reasoning_chars=min_reasoning_chars,
        max_reasoning_chars=max_reasoning_chars,
    )
    policy = scripted_policy(rubric, unit.episode.id, unit.episode.agents[unit.agent_index - 1].name)
    budget, schema = unit_budget(rubric, max_reasoning_chars=max_reasoning_chars), ratings_schema(rubric)
    totals: dict[str, Any] = dict(calls=0, attempts=0, latency_s=0.0, prompt_tokens=None, completion_tokens=None)
    thinking: list[str] = []

    def common(status: str, source: str, problem: str, reply: str, max_tokens: int | None) -> dict[str, Any]:
        return dict(
            status=status,
            answer_source=source,
            problem=problem,
            model=settings.model,
            model_thinking="\n\n".join(part for part in thinking if part),
            raw_reply=reply,
            **{**totals, "latency_s": round(totals["latency_s"], 3)},
            max_tokens=max_tokens if max_tokens is not None else "",
            answered_at=iso_utc(time.time()),
        )

    problem, reply, source, max_tokens = "", "", "", None
    for _ in range(parse_retries + 1):
        record = await complete(messages, settings, scripted=policy, max_tokens=budget, response_schema=schema)
        totals["calls"] += 1
        totals["attempts"] += record.attempts
        totals["latency_s"] += record.latency_s
        for name in ("prompt_tokens", "completion_tokens"):
            if getattr(record, name) is not None:
                totals[name] = (totals[name] or 0) + getattr(record, name)
        thinking.append(record.reasoning)
        max_tokens = record.max_tokens if record.max_tokens is not None else settings.token_limit(budget)
        if not record.ok:
            error = f"{record.error_kind}: {record.error}"
            return _unit_rows(unit, rubric, common("error", "", error, record.reply, max_tokens), {})
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
        return _unit_rows(unit, rubric, common("answered", source, "", reply, max_tokens), ratings)
    return _unit_rows(unit, rubric, common("unparseable", source, problem, reply, max_tokens), {})


# --- files ----------------------------------------------------------------------------------------------------------
def output_stem(out_dir: str | Path, model: str, episodes_path: str | Path) -> Path:
    """``DIR/social_<model>_<episodes stem>`` with unsafe characters replaced.

    >>> output_stem("out", "org/model:7b", "data/my episodes.jsonl").as_posix()
    'out/social_org_model_7b_my_episodes'
    """

    def safe(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"

    return Path(out_dir) / f"social_{safe(model)}_{safe(Path(episodes_path).stem)}"


def read_finished(path: Path, units: Sequence[Unit], rubric: Rubric) -> list[dict[str, str]]:
    """The rows of an earlier run for planned units that need no new call: every dimension of the rubric present with
    an answered or unparseable status. Cells come back exactly as before neutralisation. A file of another layout
    or rubric is refused (pick another ``--out``)."""
    if not path.exists():
        return []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        if list(reader.fieldnames or []) != COLUMNS:
            raise ValueError(f"{path} exists but does not have the annotator's columns; move it away or pick --out.")
        rows = [restore_row(row) for row in reader]
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
    ratings = answered_ratings(rows)
    updated = []
    for episode in episodes:
        found = ratings.get(episode.id, {})
        agents = tuple(
            replace(agent, model_ratings=dict(found.get(index, {})))
            for index, agent in enumerate(episode.agents, start=1)
        )
        updated.append(replace(episode, agents=agents, model_rater=rater if found else ""))
    return updated


def write_json_atomically(path: Path, data: Any) -> None:
    """Write JSON to ``path`` through a temporary file and ``os.replace``: readers see the old or the new file."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)


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
    progress: TextIO | None = None,
) -> RunSummary:
    """Rate every (episode, agent) not yet answered or unparseable in the CSV, appending rows as units finish; then
    write the rated episode file and the report's model-ratings file (see the module doc)."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}.")
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
    temporary = summary.csv_path.with_name(summary.csv_path.name + ".tmp")
    with temporary.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(neutralise_row(row) for row in kept)
    os.replace(temporary, summary.csv_path)
    todo = [unit for unit in units if unit.key not in done]
    bar = ProgressBar(len(todo), progress)
    bar.show()
    gate = asyncio.Semaphore(concurrency)
    new_rows: list[dict[str, Any]] = []
    with summary.csv_path.open("a", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)

        async def one(unit: Unit) -> None:
            async with gate:
                rows = await ask_unit(
                    unit,
                    rubric,
                    settings,
                    parse_retries=parse_retries,
                    min_reasoning_chars=min_reasoning_chars,
                    max_reasoning_chars=max_reasoning_chars,
                )
            writer.writerows(neutralise_row(row) for row in rows)
            handle.flush()  # a crash keeps every unit finished so far
            new_rows.extend(rows)
            summary.counts[rows[0]["status"]] += 1
            bar.step(rows[0]["status"])

        await asyncio.gather(*(one(unit) for unit in todo))
    bar.close()
    all_rows = [*kept, *new_rows]
    rated = rated_episodes(episodes, all_rows, rater=settings.model)
    write_json_atomically(summary.episodes_path, [episode.as_dict() for episode in rated])
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend.social.annotator", description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=Path, required=True, help="episode file or folder (our format or Sotopia)")
    parser.add_argument("--rubric", type=Path, default=None, help="rubric JSON (default: the bundled Sotopia rubric)")
    parser.add_argument("--model", required=True, help="model name at the endpoint, or 'scripted' (offline)")
    parser.add_argument("--out", type=Path, required=True, help="output folder (the CSV is resumed if present)")
    parser.add_argument("--concurrency", type=int, default=4, help="units (episode x agent) in flight at once")
    parser.add_argument("--parse-retries", type=int, default=2, help="re-asks after an unusable reply")
    add_endpoint_options(parser, timeout_s=120.0)
    parser.add_argument("--min-reasoning-chars", type=int, default=MIN_REASONING_CHARS, help="per explanation")
    parser.add_argument("--max-reasoning-chars", type=int, default=MAX_REASONING_CHARS, help="per explanation")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        rubric = load_rubric(args.rubric)
        episodes = load_episodes(args.episodes, rubric=rubric)
        settings = settings_from_args(args, model=args.model)
        summary = asyncio.run(
            annotate(
                episodes,
                rubric,
                settings,
                out_dir=args.out,
                episodes_name=args.episodes,
                concurrency=args.concurrency,
                parse_retries=args.parse_retries,
                min_reasoning_chars=args.min_reasoning_chars,
                max_reasoning_chars=args.max_reasoning_chars,
                progress=None if args.quiet else sys.stderr,
            )
        )
    except ValueError as error:
        parser.error(str(error))
    return summary.finish(
        f"{summary.csv_path}: {summary.planned} units (episode x agent) planned, {summary.kept} kept from before, "
        f"{summary.counts_text()} ({time.monotonic() - started:.1f} s); rated episodes in {summary.episodes_path.name}."
    )


if __name__ == "__main__":
    sys.exit(main())
