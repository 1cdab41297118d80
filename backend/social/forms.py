"""The rating form of the social_eval app as pure functions: field names, checks, gold scoring, task plan, exports.

The app's Player has a fixed set of slot fields, ``rating_<agent>_<slot>`` (integer) and ``reason_<agent>_<slot>``
(text), for agent 1 or 2 and slot 1..MAX_DIMENSIONS; the session's rubric decides which slots are used and what
their ranges are. So a researcher's own rubric needs no code change, and no field is copied by hand.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from backend.core.catalogues import Plural, PluralText, english, translated
from backend.core.csvio import escape_text
from backend.core.stored_text import typed_length
from backend.social.cells import ANNOTATION_CELLS, EXPORT_COLUMNS, rating_cells
from backend.social.episodes import Episode
from backend.social.rubrics import Rubric

MAX_DIMENSIONS = 10
MAX_REASONING_CHARS = 5000  # one explanation; a forged form could otherwise store megabytes in every export
AGENTS = (1, 2)


# What a participant is told about their own input: the English source of these messages of the ``social_eval``
# catalogue (locale/<language>/LC_MESSAGES/social_eval.po); a count picks a Plural's form by the language's rule.
MESSAGES = english(
    "social_eval",
    {
        "form.reason_missing": "Please explain your rating.",
        "form.rating_missing": "Please choose a rating on the scale.",
        "form.quiz_unanswered": "Please answer every question (not answered yet: {questions}).",
        "form.reason_short": "Please explain your rating in at least {minimum} characters (you wrote {count}).",
        "form.reason_long": "Please keep this explanation to at most {maximum} characters (you wrote {count}).",
        "form.and": "and",
        "form.rating_range": "Choose a whole number from {minimum} to {maximum}.",
        "form.quiz_wrong": Plural(
            "Question {questions} is not right yet.",
            "Questions {questions} are not right yet.",
        ),
        "form.quiz_retry": Plural(
            "Please re-read the guideline at the top of this page and try again ({count} attempt left).",
            "Please re-read the guideline at the top of this page and try again ({count} attempts left).",
        ),
        "form.reservation_lost": Plural(
            "This page was open for more than {count} minute, so the conversation was given to someone else and your ratings of it cannot be used. Please rate the conversation shown now instead.",
            "This page was open for more than {count} minutes, so the conversation was given to someone else and your ratings of it cannot be used. Please rate the conversation shown now instead.",
        ),
    },
)


def message(key: str, *, language: str | None = None, count: int | None = None, **values: Any) -> str:
    """A participant message in ``language`` (an available one; anything else gives English); a plural message's
    form is the one ``count`` takes.

    >>> message("reason_short", language="de", minimum=20, count=5)
    'Bitte begründen Sie Ihre Bewertung mit mindestens 20 Zeichen (Sie haben 5 geschrieben).'
    """
    text = translated(MESSAGES, language)[f"form.{key}"]
    if isinstance(text, PluralText):
        text = text(count)
    return text.format(**values, **({} if count is None else {"count": count}))


def reservation_lost_message(minutes: int, *, language: str | None = None) -> str:
    """The rating page's refusal when the reservation (``minutes``, as `backend.core.assignment.minutes_shown` states
    it) ran out and the conversation went to someone else; "1 minute" in the singular of each language.

    >>> reservation_lost_message(1).split(", so")[0]
    'This page was open for more than 1 minute'
    >>> reservation_lost_message(30, language="it").split(", quindi")[0]
    'Questa pagina è rimasta aperta per più di 30 minuti'
    """
    return message("reservation_lost", language=language, count=minutes)


def joined(numbers: Sequence[int], language: str | None = None) -> str:
    """``1``, ``1 and 3``, ``1, 2 and 3`` (``und``, ``e``).

    >>> joined([1, 2, 3], "it")
    '1, 2 e 3'
    """
    texts = [str(n) for n in numbers]
    if len(texts) == 1:
        return texts[0]
    return f"{', '.join(texts[:-1])} {message('and', language=language)} {texts[-1]}"


def quiz_retry_message(wrong: Sequence[int], attempts_left: int, *, language: str | None = None) -> str:
    """Which comprehension questions were answered wrongly, and how many attempts are left, in ``language``.

    >>> quiz_retry_message([2], 1)
    'Question 2 is not right yet. Please re-read the guideline at the top of this page and try again (1 attempt left).'
    >>> quiz_retry_message([1, 2, 3], 2, language="de").split(". ")[0]
    'Die Fragen 1, 2 und 3 sind noch nicht richtig beantwortet'
    >>> quiz_retry_message([1, 3], 2, language="it")
    'Le risposte alle domande 1 e 3 non sono ancora corrette. Rilegga le istruzioni in cima a questa pagina e riprovi (restano 2 tentativi).'
    """
    numbers = [str(n) for n in wrong]
    joined_numbers = joined(wrong, language)
    which = translated(MESSAGES, language)["form.quiz_wrong"](len(numbers)).format(questions=joined_numbers)
    retry = message("quiz_retry", language=language, count=attempts_left)
    return f"{which} {retry}"


def rating_field(agent: int, slot: int) -> str:
    """Name of the rating field of ``agent`` (1 or 2) on the rubric's ``slot``-th dimension (1-based).

    >>> rating_field(2, 7), reason_field(2, 7)
    ('rating_2_7', 'reason_2_7')
    """
    return f"rating_{agent}_{slot}"


def reason_field(agent: int, slot: int) -> str:
    return f"reason_{agent}_{slot}"


def check_rubric_fits(rubric: Rubric) -> None:
    """Refuse a rubric with more dimensions than the form has slots."""
    if len(rubric.dimensions) > MAX_DIMENSIONS:
        raise ValueError(
            f"{rubric.source}: dimensions: the form has room for {MAX_DIMENSIONS} dimensions, "
            f"the rubric has {len(rubric.dimensions)}."
        )


def form_fields(rubric: Rubric) -> list[str]:
    """The rating page's fields in page order: per agent and dimension, the reasoning box then the rating.

    >>> from backend.social.rubrics import load_rubric
    >>> form_fields(load_rubric())[:4]
    ['reason_1_1', 'rating_1_1', 'reason_1_2', 'rating_1_2']
    """
    check_rubric_fits(rubric)
    return [
        name
        for agent in AGENTS
        for slot in range(1, len(rubric.dimensions) + 1)
        for name in (reason_field(agent, slot), rating_field(agent, slot))
    ]


def slot_bounds(rubric: Rubric, field_name: str) -> tuple[int, int]:
    """(min, max) of a rating slot; slots the rubric does not use get (0, 0).

    >>> from backend.social.rubrics import load_rubric
    >>> slot_bounds(load_rubric(), "rating_1_2"), slot_bounds(load_rubric(), "rating_2_9")
    ((-5, 5), (0, 0))
    """
    slot = int(field_name.rsplit("_", 1)[1])
    if 1 <= slot <= len(rubric.dimensions):
        dimension = rubric.dimensions[slot - 1]
        return dimension.min, dimension.max
    return 0, 0


def reasoning_errors(
    values: Mapping[str, Any],
    rubric: Rubric,
    *,
    min_chars: int,
    max_chars: int = MAX_REASONING_CHARS,
    language: str | None = None,
) -> dict[str, str]:
    """Per reasoning field, a message when the text (stripped) is shorter than ``min_chars`` or longer than
    ``max_chars`` characters.

    >>> from backend.social.rubrics import load_rubric
    >>> values = {reason_field(a, s): "Long enough text." for a in AGENTS for s in range(1, 8)}
    >>> values["reason_2_3"] = "  short "
    >>> reasoning_errors(values, load_rubric(), min_chars=10)
    {'reason_2_3': 'Please explain your rating in at least 10 characters (you wrote 5).'}
    >>> values["reason_2_3"] = "x" * 5001
    >>> reasoning_errors(values, load_rubric(), min_chars=10)
    {'reason_2_3': 'Please keep this explanation to at most 5000 characters (you wrote 5001).'}
    >>> values["reason_2_3"] = "x\\r\\n" * 2500  # 5,000 characters in the browser, line breaks posted as CR LF
    >>> reasoning_errors(values, load_rubric(), min_chars=10)
    {}
    """
    errors = {}
    for agent in AGENTS:
        for slot in range(1, len(rubric.dimensions) + 1):
            name = reason_field(agent, slot)
            problem = reason_problem(values.get(name), min_chars=min_chars, max_chars=max_chars)
            if problem is not None:
                errors[name] = message(problem[0], language=language, **problem[1])
    return errors


def reason_problem(text: Any, *, min_chars: int, max_chars: int = MAX_REASONING_CHARS) -> tuple[str, dict] | None:
    """What is wrong with one explanation, by the rating page's rule, the same for people and model annotators
    (``backend.social.annotator_prompts.parse_ratings``): ``("reason_missing", {})`` for no text,
    ``("reason_short", {"minimum", "count"})`` under ``min_chars`` characters, ``("reason_long", {"maximum",
    "count"})`` over ``max_chars`` (stripped, counted as the browser counts, ``typed_length``); None when it fits.
    The key names the participant's message (``message``).

    >>> reason_problem("  short ", min_chars=10), reason_problem("Long enough text.", min_chars=10)
    (('reason_short', {'minimum': 10, 'count': 5}), None)
    """
    if min_chars < 0:
        raise ValueError(f"min_chars must be non-negative, got {min_chars}.")
    text = (text or "").strip() if isinstance(text, str) or text is None else ""
    if not text:
        return "reason_missing", {}
    length = typed_length(text)
    if length < min_chars:
        return "reason_short", {"minimum": min_chars, "count": length}
    if length > max_chars:
        return "reason_long", {"maximum": max_chars, "count": length}
    return None


def rating_errors(values: Mapping[str, Any], rubric: Rubric, *, language: str | None = None) -> dict[str, str]:
    """Per rating field, a message (in ``language``) when the value is missing, not whole or outside the dimension's
    range.

    (oTree's own min/max validation does the same for the browser; this guards any other caller.)
    """
    errors = {}
    for agent in AGENTS:
        for slot, dimension in enumerate(rubric.dimensions, start=1):
            name = rating_field(agent, slot)
            value = values.get(name)
            if value is None or isinstance(value, bool) or not isinstance(value, int | float):
                errors[name] = message("rating_missing", language=language)
            elif not float(value).is_integer() or not dimension.contains(value):
                errors[name] = message("rating_range", language=language, minimum=dimension.min, maximum=dimension.max)
    return errors


def collected_ratings(values: Mapping[str, Any], rubric: Rubric) -> dict[tuple[int, str], tuple[int, str]]:
    """``{(agent, dimension key): (rating, reasoning)}`` from submitted form values."""
    return {
        (agent, dimension.key): (int(values[rating_field(agent, slot)]), values.get(reason_field(agent, slot)) or "")
        for agent in AGENTS
        for slot, dimension in enumerate(rubric.dimensions, start=1)
    }


def readable_ratings(values: Mapping[str, Any], rubric: Rubric) -> tuple[dict[tuple[int, str], tuple], list[str]]:
    """Stored form values read for an export that must not fail: ``{(agent, dimension key): (rating, reasoning)}``
    with None for a rating that is not a whole number within the dimension's scale, and what was wrong with each.

    >>> from backend.social.rubrics import load_rubric
    >>> values = {name: 0 if name.startswith("rating_") else "ok" for name in form_fields(load_rubric())}
    >>> values["rating_1_2"], values["reason_2_1"] = "x", None
    >>> ratings, problems = readable_ratings(values, load_rubric())
    >>> ratings[(1, "believability")], ratings[(1, "relationship")], problems
    ((0, 'ok'), (None, 'ok'), ["rating_1_2: 'x' is not a whole number from -5 to 5", 'reason_2_1: missing'])
    """
    ratings, problems = {}, []
    for agent in AGENTS:
        for slot, dimension in enumerate(rubric.dimensions, start=1):
            name, reason_name = rating_field(agent, slot), reason_field(agent, slot)
            value, reasoning = values.get(name), values.get(reason_name)
            rating = None
            if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer():
                rating = int(value) if dimension.min <= value <= dimension.max else None
            if rating is None:
                problems.append(f"{name}: {value!r} is not a whole number from {dimension.min} to {dimension.max}")
            if not isinstance(reasoning, str):
                problems.append(f"{reason_name}: missing" if reasoning is None else f"{reason_name}: not text")
                reasoning = "" if reasoning is None else str(reasoning)
            ratings[(agent, dimension.key)] = (rating, reasoning)
    return ratings, problems


def gold_check(ratings: Mapping[tuple[int, str], float], episode: Episode, *, tolerance: float) -> tuple[bool, float]:
    """Whether every rating with a gold reference lies within ``tolerance`` of it, and the largest |difference|.

    Only dimensions the gold episode lists are checked (an attention episode may check just the clear-cut ones).

    >>> from backend.social.episodes import parse_episode_data
    >>> (episode,) = parse_episode_data({"id": "g", "scenario": "s", "turns": [{"speaker": "A", "text": "hi"}],
    ...     "agents": [{"name": "A", "background": "b", "goal": "g", "gold_ratings": {"secret": -10, "goal": 0}},
    ...                {"name": "B", "background": "b", "goal": "g", "gold_ratings": {"goal": 9}}]})
    >>> gold_check({(1, "secret"): -8, (1, "goal"): 1, (2, "goal"): 9, (2, "secret"): 0}, episode, tolerance=2)
    (True, 2.0)
    >>> gold_check({(1, "secret"): -5, (1, "goal"): 1, (2, "goal"): 9}, episode, tolerance=2)
    (False, 5.0)
    """
    if tolerance < 0:
        raise ValueError(f"tolerance must be non-negative, got {tolerance}.")
    if not episode.is_gold:
        raise ValueError(f"Episode {episode.id!r} has no gold ratings to check against.")
    largest = 0.0
    for agent_index, agent in enumerate(episode.agents, start=1):
        for key, reference in agent.gold_ratings.items():
            given = ratings.get((agent_index, key))
            if given is None:
                return False, math.inf
            largest = max(largest, abs(float(given) - float(reference)))
    return largest <= tolerance, largest


def task_plan(
    *,
    regular: int,
    gold_ids: Sequence[str],
    attention_checks: int,
    rotation: int,
    qualification: bool,
) -> list[str]:
    """The annotator's sequence of tasks: ``"regular"`` slots and ``"gold:<id>"`` attention episodes.

    Qualification (pilot) mode rates every gold episode and nothing else. Otherwise ``attention_checks`` gold
    episodes (rotating through the gold set by ``rotation``, e.g. the participant's number) are spread evenly
    between the ``regular`` episodes, never first.

    >>> task_plan(regular=3, gold_ids=["g1", "g2"], attention_checks=1, rotation=1, qualification=False)
    ['regular', 'regular', 'gold:g2', 'regular']
    >>> task_plan(regular=3, gold_ids=["g1", "g2"], attention_checks=2, rotation=0, qualification=False)
    ['regular', 'gold:g1', 'regular', 'gold:g2', 'regular']
    >>> task_plan(regular=3, gold_ids=["g1", "g2"], attention_checks=0, rotation=0, qualification=True)
    ['gold:g1', 'gold:g2']
    """
    if regular < 0 or attention_checks < 0:
        raise ValueError(f"regular and attention_checks must be non-negative, got {regular} and {attention_checks}.")
    if qualification:
        if not gold_ids:
            raise ValueError("Qualification mode needs at least one gold episode (an episode with gold_ratings).")
        return [f"gold:{gold}" for gold in gold_ids]
    if attention_checks and not gold_ids:
        raise ValueError("attention_checks > 0 needs at least one gold episode (an episode with gold_ratings).")
    if attention_checks > len(gold_ids):
        raise ValueError(
            f"attention_checks ({attention_checks}) exceeds the number of gold episodes ({len(gold_ids)})."
        )
    gold = [gold_ids[(rotation + index) % len(gold_ids)] for index in range(attention_checks)]
    plan = ["regular"] * regular
    total = regular + attention_checks
    for index, gold_id in enumerate(gold):
        position = max(1, (index + 1) * total // (attention_checks + 1))
        plan.insert(min(position, len(plan)), f"gold:{gold_id}")
    return plan


def long_rows(record: Mapping[str, Any], episode: Episode, rubric: Rubric) -> list[dict[str, Any]]:
    """Rows of the long export (``EXPORT_COLUMNS``) for one finished annotation.

    ``record`` holds ``ratings`` ({(agent, key): (rating, reasoning)}) and the annotation's metadata
    (session_code, annotator, prolific_pid, study_id, prolific_session_id, round, seconds_spent,
    attention_passed, submitted_at). Reasoning is escaped (``escape_text``) so multi-line text stays intact.
    """
    rows = []
    for agent_index, agent in enumerate(episode.agents, start=1):
        for dimension in rubric.dimensions:
            rating, reasoning = record["ratings"][(agent_index, dimension.key)]
            rating = "" if rating is None else rating  # unreadable as stored (readable_ratings)
            row = dict.fromkeys(EXPORT_COLUMNS, "")
            row.update({key: record.get(key, "") for key in EXPORT_COLUMNS if key in record})
            row.update(
                rating_cells(episode, agent_index, dimension, rating=rating, reasoning=escape_text(reasoning)),
                model_rater=episode.model_rater if dimension.key in agent.model_ratings else "",
                model_rating=agent.model_ratings.get(dimension.key, ""),
                gold_rating=agent.gold_ratings.get(dimension.key, ""),
                rubric=rubric.name,
            )
            rows.append(row)
    return rows


WIDE_HEAD = [
    "session_code",
    "episode_id",  # Sotopia's tables call it pk
    "episode_group",
    "is_gold",
    *ANNOTATION_CELLS,
]


def wide_columns(rubric: Rubric) -> list[str]:
    """Header of the wide export: one row per annotation, Sotopia's column names (``goal_1``, ``goal_reasoning_1``).

    >>> from backend.social.rubrics import load_rubric
    >>> wide_columns(load_rubric())[:8]
    ['session_code', 'episode_id', 'episode_group', 'is_gold', 'annotator', 'prolific_pid', 'study_id', 'prolific_session_id']
    >>> wide_columns(load_rubric())[len(WIDE_HEAD):len(WIDE_HEAD) + 2]
    ['believability_1', 'believability_reasoning_1']
    """
    return WIDE_HEAD + dimension_columns(rubric)


def dimension_columns(rubric: Rubric) -> list[str]:
    """The wide export's rating columns of ``rubric``: per agent and dimension the rating, its reasoning and the time
    on its step of the Rate page."""
    return [
        name
        for agent in AGENTS
        for d in rubric.dimensions
        for name in (f"{d.key}_{agent}", f"{d.key}_reasoning_{agent}", f"{d.key}_seconds_{agent}")
    ]


def wide_values(record: Mapping[str, Any], episode: Episode) -> dict[str, Any]:
    """One annotation's cells of the wide export, by column name (``record`` as for ``long_rows``)."""
    values = {column: record.get(column, "") for column in WIDE_HEAD}
    values.update(
        episode_id=episode.id,
        episode_group=episode.group,
        is_gold=int(episode.is_gold),
        annotator=record.get("annotator") or record.get("participant_code", ""),
    )
    for (agent, key), (rating, reasoning) in record["ratings"].items():
        values[f"{key}_{agent}"] = "" if rating is None else rating
        values[f"{key}_reasoning_{agent}"] = escape_text(reasoning)
    return values


def wide_row(record: Mapping[str, Any], episode: Episode, rubric: Rubric) -> list[Any]:
    """``wide_values`` in the order of ``wide_columns(rubric)``."""
    values = wide_values(record, episode)
    return [values.get(column, "") for column in wide_columns(rubric)]
