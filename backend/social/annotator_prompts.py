"""What a model annotator of social_eval episodes is asked and how its reply is read (`backend.social.annotator`
runs it).

**Asking** (`build_messages`): the prompt shows what the rating page shows people (the guideline with its
definitions and annotation examples, the scenario, both characters' backgrounds, goals and secrets, the numbered
turns) and asks for one character's ratings on every dimension, as one flat object ``{dimension: {"reasoning",
"rating"}}``. Each call sends a JSON schema (`ratings_schema`: per dimension ``reasoning`` string then ``rating``
integer with the rubric's ``minimum``/``maximum``).

**Reading** (`parse_ratings`) never guesses: the one JSON object holding the dimension keys (code fences and text
around it allowed), every dimension present, each rating a whole number within its range, each reasoning as long as
people's must be. Anything else (no object, two different objects, a duplicate key, a missing dimension, 11 on a
0..10 scale) is a `RatingsParseError` naming the problem.

**Token budget** (`unit_budget`): the reasoning limit of people (``forms.MAX_REASONING_CHARS`` characters per
explanation) times the number of dimensions, plus the answer's JSON skeleton, through ``reply_budget``.
`scripted_policy` is the offline model (a hash of episode, agent and dimension mapped into the range).
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.core.llm import reply_budget
from backend.core.llm.replies import RepeatedKeyError, echoed_placeholder, json_objects
from backend.social.episodes import Episode
from backend.social.forms import MAX_REASONING_CHARS, reason_problem
from backend.social.rubrics import Rubric

PROMPT_DIR = Path(__file__).resolve().parent / "data" / "social_annotator_prompts"
MIN_REASONING_CHARS = 20  # the social_eval session default of min_reasoning_chars: what people must write at least
AGENT_INDEXES = (1, 2)
REASONING_PLACEHOLDER = "<your reasoning>"  # the answer form's placeholder; a reasoning repeating it is refused
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

    >>> from backend.social.rubrics import load_rubric
    >>> print(answer_format(load_rubric()).splitlines()[1])
      "believability": {"reasoning": "<your reasoning>", "rating": <whole number from 0 to 10>},
    """
    entries = [
        f'  "{d.key}": {{"reasoning": "{REASONING_PLACEHOLDER}", "rating": <whole number from {d.min} to {d.max}>}}'
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

    >>> from backend.social.episodes import load_episodes
    >>> from backend.social.rubrics import DEFAULT_RUBRIC_PATH, load_rubric
    >>> episode = load_episodes(DEFAULT_RUBRIC_PATH.parent / "episodes" / "borrowed_ladder.json")[0]
    >>> messages = build_messages(episode, 2, load_rubric())
    >>> [m["role"] for m in messages], "Rate Henrik Lund (character 2)" in messages[1]["content"]
    (['system', 'user'], True)
    """
    if agent_index not in AGENT_INDEXES:
        raise ValueError(f"The agent index must be 1 or 2, got {agent_index!r}.")
    check_reasoning_limits(min_reasoning_chars, max_reasoning_chars)
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

    >>> from backend.social.rubrics import load_rubric
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

    >>> from backend.social.rubrics import load_rubric
    >>> unit_budget(load_rubric()), unit_budget(load_rubric(), max_reasoning_chars=500)
    (17740, 1990)
    """
    check_reasoning_limits(0, max_reasoning_chars)
    skeleton = json.dumps(
        {
            d.key: {"reasoning": "", "rating": d.min if len(str(d.min)) > len(str(d.max)) else d.max}
            for d in rubric.dimensions
        },
        indent=2,
    )
    return reply_budget(len(rubric.dimensions) * max_reasoning_chars + len(skeleton))


def check_reasoning_limits(min_chars: int, max_chars: int) -> None:
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

    >>> from backend.social.rubrics import load_rubric
    >>> rubric = load_rubric()
    >>> answer = {key: {"reasoning": "Nothing in the talk changes this.", "rating": 0} for key in rubric.keys}
    >>> parse_ratings("```json\\n" + json.dumps(answer) + "\\n```", rubric)["goal"]
    DimensionRating(rating=0, reasoning='Nothing in the talk changes this.')
    >>> answer["goal"]["rating"], answer["secret"] = 11, {"rating": -2}
    >>> parse_ratings(json.dumps(answer), rubric)
    Traceback (most recent call last):
    ...
    backend.social.annotator_prompts.RatingsParseError: secret: the reasoning is missing; goal: the rating 11 is outside the range 0 to 10.
    """
    check_reasoning_limits(min_reasoning_chars, max_reasoning_chars)
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
        fault = reason_problem(reasoning, min_chars=min_reasoning_chars, max_chars=max_reasoning_chars)
        if fault is not None and fault[0] == "reason_missing":
            entry_problems.append("the reasoning is missing")
        elif fault is not None:
            entry_problems.append(
                f"the reasoning has {fault[1]['count']} characters, it must have {min_reasoning_chars} to "
                f"{max_reasoning_chars}"
            )
        elif echoed_placeholder(reasoning, [REASONING_PLACEHOLDER]):
            entry_problems.append(f"the reasoning only repeats the placeholder {REASONING_PLACEHOLDER!r}")
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
