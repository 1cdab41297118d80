"""Rating rubrics as data: dimensions with ranges, definitions and annotation examples, loaded from a JSON file.

The bundled guideline ``backend/social/data/sotopia_rubric.json`` holds the seven Sotopia dimensions (believability 0..10,
relationship −5..5, knowledge 0..10, secret −10..0, social rules −10..0, financial and material benefits −5..5,
goal 0..10) with definitions and good/bad annotation examples written for this project. A researcher can point the
``social_eval`` session config at their own file with the same layout::

    {
      "name": "...", "version": "...", "title": "...",
      "instructions": ["paragraph", ...],           # shown on the instructions page
      "reasoning_hint": "...",                      # optional placeholder of the reasoning boxes
      "dimensions": [
        {"key": "snake_case_id", "label": "...", "min": -5, "max": 5, "definition": "...",
         "examples": [{"rationale": "...", "rating": 3, "is_good": true, "why": "..."}, ...]},
        ...
      ],
      "comprehension": [                            # optional quiz before the task
        {"key": "...", "question": "...", "options": ["...", "..."], "answer": 0}
      ],
      "worked_example": {                           # optional fully rated conversation
        "scenario": "...", "agents": [{"name", "background", "goal", "secret"} x 2],
        "turns": [{"speaker": "<agent name>", "text": "..."}],
        "ratings": [{"<key>": {"rating": 1, "reasoning": "..."}, ...} x 2]
      }
    }

Every problem is reported as a ``RubricError`` (a ``ValueError``) naming the file and the field, e.g.
``my_rubric.json: dimensions[1].min: must be smaller than max (5), got 5.``

A scale has at most ``MAX_SCALE_POINTS`` (21) points, from ``-SCALE_LIMIT`` to ``SCALE_LIMIT``: every point is a
radio button on the rating page and the ratings are stored as database integers, so ``"max": 200000`` (a 66 MB page)
or ``"max": 1e300`` (no integer column holds it) are refused when the file is read, not met by participants.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.core import researcher_files
from backend.core.material_language import declared_language
from backend.social.json_fields import JsonFields

DEFAULT_RUBRIC_PATH = Path(__file__).resolve().parent / "data" / "sotopia_rubric.json"
_KEY_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
MAX_SCALE_POINTS = 21  # -10..10, the widest scale a rating row shows well
SCALE_LIMIT = 1000  # |min| and |max|: plain numbers on the page, far inside a database integer
MAX_OPTIONS = 10  # answer options of one comprehension question
MAX_RUBRIC_BYTES = 2 * 1024 * 1024  # a guideline with examples, not a data set


class RubricError(ValueError):
    """A rubric file or mapping that does not follow the documented layout."""


@dataclass(frozen=True)
class AnnotationExample:
    rationale: str
    rating: int
    is_good: bool
    why: str


@dataclass(frozen=True)
class Dimension:
    key: str
    label: str
    min: int
    max: int
    definition: str
    examples: tuple[AnnotationExample, ...] = ()

    @property
    def choices(self) -> list[int]:
        """Every allowed rating, from ``min`` to ``max``.

        >>> Dimension("secret", "Secret", -3, 0, "").choices
        [-3, -2, -1, 0]
        """
        return list(range(self.min, self.max + 1))

    @property
    def range_text(self) -> str:
        """The scale as shown to annotators, with a real minus sign.

        >>> Dimension("relationship", "Relationship", -5, 5, "").range_text
        '−5 to 5'
        """
        return f"{_signed(self.min)} to {_signed(self.max)}"

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies on the scale (integers only for human ratings is checked elsewhere).

        >>> Dimension("goal", "Goal", 0, 10, "").contains(10.0), Dimension("goal", "Goal", 0, 10, "").contains(-1)
        (True, False)
        """
        return self.min <= value <= self.max


@dataclass(frozen=True)
class ComprehensionQuestion:
    key: str
    question: str
    options: tuple[str, ...]
    answer: int


@dataclass(frozen=True)
class Rubric:
    name: str
    version: str
    title: str
    instructions: tuple[str, ...]
    reasoning_hint: str
    dimensions: tuple[Dimension, ...]
    comprehension: tuple[ComprehensionQuestion, ...] = ()
    worked_example: Mapping[str, Any] | None = None
    source: str = "<dict>"
    language: str | None = None  # the declared language (backend.core.material_language); None: undeclared

    @property
    def keys(self) -> list[str]:
        return [dimension.key for dimension in self.dimensions]

    def dimension(self, key: str) -> Dimension:
        for dimension in self.dimensions:
            if dimension.key == key:
                return dimension
        raise KeyError(f"The rubric {self.name!r} has no dimension {key!r}; it has {self.keys}.")

    def as_dict(self) -> dict[str, Any]:
        """The rubric as JSON-ready data (``rubric_from_dict`` reads it back unchanged)."""
        return dict(
            name=self.name,
            version=self.version,
            title=self.title,
            instructions=list(self.instructions),
            reasoning_hint=self.reasoning_hint,
            dimensions=[
                dict(
                    key=d.key,
                    label=d.label,
                    min=d.min,
                    max=d.max,
                    definition=d.definition,
                    examples=[vars(example).copy() for example in d.examples],
                )
                for d in self.dimensions
            ],
            comprehension=[
                dict(key=q.key, question=q.question, options=list(q.options), answer=q.answer)
                for q in self.comprehension
            ],
            worked_example=json.loads(json.dumps(self.worked_example)) if self.worked_example else None,
        ) | ({"language": self.language} if self.language else {})


def _short(value: int) -> str:
    """An integer for a message; a 300-digit one as its first digits and length."""
    text = str(value)
    return text if len(text) <= 12 else f"{text[:8]}... ({len(text.lstrip('-'))} digits)"


def _signed(value: int) -> str:
    return f"−{-value}" if value < 0 else str(value)


def _dimension(check: JsonFields, raw: Any, path: str) -> Dimension:
    data = check.mapping(raw, path)
    key = check.text(check.field(data, "key", path), f"{path}.key")
    if not _KEY_PATTERN.fullmatch(key):
        raise check.fail(f"{path}.key", f"must be snake_case (a-z, 0-9, _; at most 40 characters), got {key!r}.")
    low = check.integer(check.field(data, "min", path), f"{path}.min")
    high = check.integer(check.field(data, "max", path), f"{path}.max")
    for name, value in (("min", low), ("max", high)):
        if not -SCALE_LIMIT <= value <= SCALE_LIMIT:
            raise check.fail(
                f"{path}.{name}", f"must be a whole number from {-SCALE_LIMIT} to {SCALE_LIMIT}, got {_short(value)}."
            )
    if low >= high:
        raise check.fail(f"{path}.min", f"must be smaller than max ({high}), got {low}.")
    if high - low + 1 > MAX_SCALE_POINTS:
        raise check.fail(
            f"{path}.max",
            f"the scale {low}..{high} has {high - low + 1} points, but a rating scale may have at most "
            f"{MAX_SCALE_POINTS} (for example -10..10).",
        )
    examples = []
    for index, raw_example in enumerate(
        check.items(check.field(data, "examples", path, required=False, default=[]), f"{path}.examples")
    ):
        where = f"{path}.examples[{index}]"
        example = check.mapping(raw_example, where)
        rating = check.integer(check.field(example, "rating", where), f"{where}.rating")
        if not low <= rating <= high:
            raise check.fail(f"{where}.rating", f"must lie within the dimension's range {low}..{high}, got {rating}.")
        is_good = check.field(example, "is_good", where)
        if not isinstance(is_good, bool):
            raise check.fail(f"{where}.is_good", f"must be true or false, got {is_good!r}.")
        examples.append(
            AnnotationExample(
                rationale=check.text(check.field(example, "rationale", where), f"{where}.rationale"),
                rating=rating,
                is_good=is_good,
                why=check.text(check.field(example, "why", where), f"{where}.why"),
            )
        )
    return Dimension(
        key=key,
        label=check.text(check.field(data, "label", path), f"{path}.label"),
        min=low,
        max=high,
        definition=check.text(check.field(data, "definition", path), f"{path}.definition"),
        examples=tuple(examples),
    )


def _question(check: JsonFields, raw: Any, path: str) -> ComprehensionQuestion:
    data = check.mapping(raw, path)
    options = tuple(
        check.text(option, f"{path}.options[{index}]")
        for index, option in enumerate(check.items(check.field(data, "options", path), f"{path}.options", minimum=2))
    )
    if len(options) > MAX_OPTIONS:
        raise check.fail(f"{path}.options", f"may hold at most {MAX_OPTIONS} options, got {len(options)}.")
    answer = check.integer(check.field(data, "answer", path), f"{path}.answer")
    if not 0 <= answer < len(options):
        raise check.fail(
            f"{path}.answer", f"must be the 0-based position of an option (0..{len(options) - 1}), got {answer}."
        )
    return ComprehensionQuestion(
        key=check.text(check.field(data, "key", path), f"{path}.key"),
        question=check.text(check.field(data, "question", path), f"{path}.question"),
        options=options,
        answer=answer,
    )


def _worked_example(check: JsonFields, raw: Any, dimensions: Sequence[Dimension]) -> dict[str, Any]:
    path = "worked_example"
    data = check.mapping(raw, path)
    check.text(check.field(data, "scenario", path), f"{path}.scenario")
    agents = check.items(check.field(data, "agents", path), f"{path}.agents", minimum=2)
    if len(agents) != 2:
        raise check.fail(f"{path}.agents", f"must describe exactly two agents, got {len(agents)}.")
    names = []
    for index, raw_agent in enumerate(agents):
        where = f"{path}.agents[{index}]"
        agent = check.mapping(raw_agent, where)
        names.append(check.text(check.field(agent, "name", where), f"{where}.name"))
        for name in ("background", "goal"):
            check.text(check.field(agent, name, where), f"{where}.{name}")
        check.text(check.field(agent, "secret", where, required=False, default=""), f"{where}.secret", allow_empty=True)
    for index, raw_turn in enumerate(check.items(check.field(data, "turns", path), f"{path}.turns", minimum=1)):
        where = f"{path}.turns[{index}]"
        turn = check.mapping(raw_turn, where)
        speaker = check.text(check.field(turn, "speaker", where), f"{where}.speaker")
        if speaker not in names:
            raise check.fail(f"{where}.speaker", f"must be one of the agents {names}, got {speaker!r}.")
        check.text(check.field(turn, "text", where), f"{where}.text")
    ratings = check.items(check.field(data, "ratings", path), f"{path}.ratings", minimum=2)
    if len(ratings) != 2:
        raise check.fail(f"{path}.ratings", f"must hold one entry per agent (2), got {len(ratings)}.")
    for agent_index, raw_ratings in enumerate(ratings):
        where = f"{path}.ratings[{agent_index}]"
        per_dimension = check.mapping(raw_ratings, where)
        for dimension in dimensions:
            entry = check.mapping(check.field(per_dimension, dimension.key, where), f"{where}.{dimension.key}")
            rating = check.integer(
                check.field(entry, "rating", f"{where}.{dimension.key}"), f"{where}.{dimension.key}.rating"
            )
            if not dimension.contains(rating):
                raise check.fail(
                    f"{where}.{dimension.key}.rating",
                    f"must lie within {dimension.min}..{dimension.max}, got {rating}.",
                )
            check.text(
                check.field(entry, "reasoning", f"{where}.{dimension.key}"), f"{where}.{dimension.key}.reasoning"
            )
    return json.loads(json.dumps(data))


def rubric_from_dict(data: Any, *, source: str = "<dict>") -> Rubric:
    """Validate rubric data (see the module docstring for the layout) and return a ``Rubric``.

    >>> rubric = rubric_from_dict({
    ...     "name": "tiny", "title": "Tiny", "instructions": ["Rate it."],
    ...     "dimensions": [{"key": "warmth", "label": "Warmth", "min": -2, "max": 2, "definition": "How warm?"}],
    ... })
    >>> rubric.keys, rubric.dimension("warmth").choices
    (['warmth'], [-2, -1, 0, 1, 2])
    >>> rubric_from_dict({"name": "x", "title": "x", "instructions": [],
    ...     "dimensions": [{"key": "w", "label": "W", "min": 5, "max": -5, "definition": "d"}]}, source="mine.json")
    Traceback (most recent call last):
    ...
    backend.social.rubrics.RubricError: mine.json: dimensions[0].min: must be smaller than max (-5), got 5.
    """
    check = JsonFields(source, error=RubricError)
    root = check.mapping(data, "(top level)")
    dimensions = tuple(
        _dimension(check, raw, f"dimensions[{index}]")
        for index, raw in enumerate(check.items(check.field(root, "dimensions", ""), "dimensions", minimum=1))
    )
    keys = [dimension.key for dimension in dimensions]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise check.fail("dimensions", f"keys must be unique, but {duplicates} occur more than once.")
    instructions = tuple(
        check.text(paragraph, f"instructions[{index}]")
        for index, paragraph in enumerate(check.items(check.field(root, "instructions", ""), "instructions"))
    )
    questions = tuple(
        _question(check, raw, f"comprehension[{index}]")
        for index, raw in enumerate(
            check.items(check.field(root, "comprehension", "", required=False, default=[]), "comprehension")
        )
    )
    worked = root.get("worked_example")
    return Rubric(
        name=check.text(check.field(root, "name", ""), "name"),
        version=str(root.get("version", "")),
        title=check.text(check.field(root, "title", ""), "title"),
        instructions=instructions,
        reasoning_hint=check.text(root.get("reasoning_hint", ""), "reasoning_hint", allow_empty=True),
        dimensions=dimensions,
        comprehension=questions,
        worked_example=_worked_example(check, worked, dimensions) if worked is not None else None,
        source=source,
        language=_declared(root, source),
    )


def _declared(root: Mapping[str, Any], source: str) -> str | None:
    try:
        return declared_language(root, what=source)
    except ValueError as error:
        raise RubricError(str(error)) from None


def load_rubric(path: str | Path | None = None, *, what: str | None = None) -> Rubric:
    """Read and validate a rubric JSON file (default: the bundled seven Sotopia dimensions).

    UTF-8 with or without a byte-order mark; other encodings, a missing file and invalid JSON are refused with the
    file's name (``what``, default the file name), line and column.

    >>> [(d.key, d.min, d.max) for d in load_rubric().dimensions][:2]
    [('believability', 0, 10), ('relationship', -5, 5)]
    >>> load_rubric("nowhere.json", what="rubric_file 'nowhere.json'")
    Traceback (most recent call last):
    ...
    backend.social.rubrics.RubricError: rubric_file 'nowhere.json' was not found (looked for nowhere.json).
    """
    path = Path(path) if path is not None else DEFAULT_RUBRIC_PATH
    what = what or path.name
    try:
        data = researcher_files.read_json(path, what=what, max_bytes=MAX_RUBRIC_BYTES)
    except ValueError as error:
        raise RubricError(str(error)) from None
    return rubric_from_dict(data, source=what)


def overall_score(ratings: Mapping[str, float], rubric: Rubric) -> float:
    """The overall score of one agent: the unweighted mean of its ratings on every rubric dimension.

    overall = (1 / D) * sum_d rating_d, over the D dimensions of the rubric (Sotopia's ``overall_score``).

    >>> overall_score({"believability": 9, "relationship": 3, "knowledge": 2, "secret": 0, "social_rules": 0,
    ...                "financial_and_material_benefits": -1, "goal": 9}, load_rubric())
    3.142857142857143
    """
    missing = [key for key in rubric.keys if key not in ratings]
    if missing:
        raise ValueError(f"The ratings must cover every rubric dimension; {missing} are missing.")
    values = [float(ratings[key]) for key in rubric.keys]
    if any(math.isnan(value) for value in values):
        raise ValueError("The ratings must not contain NaN.")
    return sum(values) / len(values)
