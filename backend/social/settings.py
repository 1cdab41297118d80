"""The social_eval app's session keys as one typed, checked object; the defaults are defined here once.

``settings.py`` spreads `DEFAULTS` into the app's session configs and overrides only what differs. Keys:

- ``annotators_per_episode`` (2; 1-100): people who rate each regular episode;
- ``episodes_per_annotator`` (3) and ``attention_checks`` (0, gold episodes mixed in): together at most the app's
  rounds;
- ``gold_tolerance`` (2): the largest distance from a gold rating that still passes;
- ``reservation_timeout_s`` (1800): seconds an episode stays reserved (`backend.core.assignment.reservation_timeout`);
- ``min_reasoning_chars`` (20): the shortest reasoning accepted;
- ``comprehension_check`` (off) and ``comprehension_attempts`` (2): the rubric's quiz before the first episode;
- ``qualification_mode`` (off): every annotator rates the gold episodes only;
- ``pilot_overlap`` (off): a pilot in which every annotator rates the same regular episodes (the first
  ``episodes_per_annotator`` of the list, each person in a least-covered-first order), so agreement can be computed;
  ``annotators_per_episode`` is not read then; not with ``qualification_mode``;
- ``quality_floor_s`` (60; 0-3600): the admin report's quality view flags episodes rated faster than this;
- ``rubric_file`` ("" = the Sotopia rubric), ``episodes`` (files or folders, comma-separated) and ``episodes_json``
  (episodes pasted into the admin form): the material, relative paths starting at the project root.

>>> settings = social_settings({"annotators_per_episode": "3"}, max_tasks=15)
>>> settings.annotators_per_episode, settings.reservation_timeout_s
(3, 1800.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.core import assignment, session_keys
from backend.social import forms
from backend.social.episodes import load_episodes, parse_episode_text
from backend.social.rubrics import SCALE_LIMIT, Rubric, load_rubric

if TYPE_CHECKING:
    from backend.social.episodes import Episode

MAX_EPISODES_JSON_CHARS = 5_000_000  # pasted into the admin form; larger sets belong in files


@dataclass(frozen=True)
class SocialSettings:
    # In the order the configs in settings.py have always listed them (the wide export's session columns follow it).
    rubric_file: str = ""
    episodes: str = ""
    episodes_json: str = ""
    annotators_per_episode: int = 2
    episodes_per_annotator: int = 3
    attention_checks: int = 0
    gold_tolerance: float = 2
    reservation_timeout_s: float = assignment.DEFAULT_TIMEOUT_S
    min_reasoning_chars: int = 20
    comprehension_check: bool = False
    comprehension_attempts: int = 2
    qualification_mode: bool = False
    pilot_overlap: bool = False
    quality_floor_s: float = 60

    def handed_out(self, regular_ids: Sequence[str]) -> list[str]:
        """The regular episodes the assignment hands out: all of them, or in a pilot the ones everybody rates."""
        if self.pilot_overlap:
            return assignment.pilot_items(regular_ids, self.episodes_per_annotator)
        return list(regular_ids)

    @property
    def per_episode(self) -> int | None:
        """Annotators per regular episode for the assignment: None (no cap) in a pilot."""
        return None if self.pilot_overlap else self.annotators_per_episode

    def as_config(self) -> dict[str, Any]:
        """The typed values, to store in the session config (a form or the REST API may have sent text)."""
        return asdict(self)


DEFAULTS: Mapping[str, Any] = {field.name: field.default for field in fields(SocialSettings)}


def social_settings(config: Mapping[str, Any], *, max_tasks: int) -> SocialSettings:
    """Read every key (missing keys take `DEFAULTS`); one ValueError naming every key at fault.

    ``max_tasks``: the app's rounds, the most episodes one annotator can get.
    """
    whole = session_keys.whole_number_reader
    readers = dict(
        annotators_per_episode=whole(1, 100),
        episodes_per_annotator=whole(1, max_tasks),
        attention_checks=whole(0, max_tasks),
        gold_tolerance=lambda config, key: session_keys.number(config, key, minimum=0, maximum=2 * SCALE_LIMIT),
        reservation_timeout_s=lambda config, key: assignment.reservation_timeout(config),
        min_reasoning_chars=whole(0, 2000),
        comprehension_check=session_keys.flag,
        comprehension_attempts=whole(1, 20),
        qualification_mode=session_keys.flag,
        pilot_overlap=session_keys.flag,
        quality_floor_s=lambda config, key: session_keys.number(config, key, minimum=0, maximum=3600),
        rubric_file=lambda config, key: session_keys.text(config, key, max_chars=500),
        episodes=lambda config, key: session_keys.text(config, key, max_chars=5000),
        episodes_json=lambda config, key: session_keys.text(config, key, max_chars=MAX_EPISODES_JSON_CHARS),
    )
    values, problems = session_keys.read_keys({**DEFAULTS, **config}, readers)
    session_keys.refuse_problems(problems)
    return SocialSettings(**values)


def _path(value: str, project_root: Path) -> Path:
    path = Path(value.strip())
    return path if path.is_absolute() else project_root / path


def load_material(settings: SocialSettings, *, project_root: Path) -> tuple[Rubric, list[Episode]]:
    """The rubric and episodes the settings name; ValueError naming the key, file and field at fault."""
    rubric_value = settings.rubric_file.strip()
    rubric = load_rubric(
        _path(rubric_value, project_root) if rubric_value else None,
        what=f"The rubric_file {rubric_value!r}" if rubric_value else None,
    )
    forms.check_rubric_fits(rubric)
    episodes = []
    if settings.episodes.strip():
        parts = [_path(part, project_root) for part in settings.episodes.split(",") if part.strip()]
        try:
            episodes += load_episodes(parts, rubric=rubric)
        except ValueError as error:
            raise ValueError(f"The session key 'episodes' names a file that cannot be used: {error}") from None
    if settings.episodes_json.strip():
        episodes += parse_episode_text(settings.episodes_json, source="session config episodes_json", rubric=rubric)
    ids = [episode.id for episode in episodes]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"The episode ids {duplicates} occur twice (in 'episodes' and 'episodes_json').")
    if not episodes:
        raise ValueError("The session keys 'episodes' and 'episodes_json' are both empty: there is nothing to rate.")
    return rubric, episodes


def check_material(
    settings: SocialSettings, rubric: Rubric, episodes: Sequence[Episode], *, max_tasks: int, max_questions: int
) -> None:
    """The keys checked against each other and the material; one ValueError naming every problem.

    ``max_tasks``: the app's rounds; ``max_questions``: the comprehension questions a rubric may have.
    """
    regular = [e for e in episodes if not e.is_gold]
    gold = [e for e in episodes if e.is_gold]
    problems = []
    if settings.pilot_overlap and settings.qualification_mode:
        problems.append(
            "The session keys 'pilot_overlap' and 'qualification_mode' exclude each other: a qualification session "
            "already gives every annotator the same (gold) episodes. Switch one of them off."
        )
    if settings.qualification_mode:
        if not gold:
            problems.append("The session key 'qualification_mode' needs episodes with gold_ratings; there are none.")
        if len(gold) > max_tasks:
            problems.append(
                f"The session key 'qualification_mode' supports at most {max_tasks} gold episodes, "
                f"the episodes hold {len(gold)}."
            )
    else:
        per_person = settings.episodes_per_annotator + settings.attention_checks
        if per_person > max_tasks:
            problems.append(
                f"The session keys 'episodes_per_annotator' plus 'attention_checks' must be <= {max_tasks}, "
                f"not {per_person}."
            )
        if not regular:
            problems.append("The session key 'episodes' holds no regular (non-gold) episode.")
        if settings.attention_checks > len(gold):
            problems.append(
                f"The session key 'attention_checks' ({settings.attention_checks}) exceeds the {len(gold)} gold "
                "episodes (episodes with gold_ratings)."
            )
    if settings.comprehension_check and not 0 < len(rubric.comprehension) <= max_questions:
        problems.append(
            f"The session key 'comprehension_check' needs 1 to {max_questions} comprehension questions in the "
            f"rubric, which has {len(rubric.comprehension)}."
        )
    session_keys.refuse_problems(problems)


def checked_settings(
    config: Mapping[str, Any], *, project_root: Path, max_tasks: int, max_questions: int
) -> tuple[SocialSettings, Rubric, list[Episode]]:
    """Settings, rubric and episodes of a session config, everything checked (what creation runs)."""
    settings = social_settings(config, max_tasks=max_tasks)
    rubric, episodes = load_material(settings, project_root=project_root)
    check_material(settings, rubric, episodes, max_tasks=max_tasks, max_questions=max_questions)
    return settings, rubric, episodes


# What the admin's Create-session page says of each key (label, one line of help), in a researcher's words.
KEY_WORDS: Mapping[str, tuple[str, str]] = {
    "rubric_file": ("Rubric file", "Optional: your rubric (dimensions and scales); empty uses the bundled one."),
    "episodes": ("Episodes file or folder", "The conversations to rate; empty uses the bundled sample."),
    "episodes_json": ("Episodes as text", "Optional: the episodes pasted as JSON, instead of a file."),
    "annotators_per_episode": ("Raters per conversation", "How many people rate each conversation."),
    "episodes_per_annotator": ("Conversations per person", "How many conversations each person rates."),
    "attention_checks": ("Attention checks per person", "Conversations with known ratings mixed in to check care."),
    "gold_tolerance": (
        "Allowed distance on checks",
        "A check passes when every rating is within this of the known one.",
    ),
    "reservation_timeout_s": (
        "Hold a conversation (seconds)",
        "After this an unfinished conversation goes to someone else.",
    ),
    "min_reasoning_chars": ("Shortest explanation", "Characters each rating's explanation must have."),
    "comprehension_check": ("Comprehension quiz", "Tick to ask questions about the instructions before rating."),
    "comprehension_attempts": ("Quiz attempts", "Tries before someone who fails the quiz is screened out."),
    "qualification_mode": ("Qualification run", "Tick for a pilot of only the check conversations, to qualify raters."),
    "pilot_overlap": ("Pilot: everyone rates the same", "Tick so agreement between raters can be measured."),
    "quality_floor_s": ("Too fast (seconds)", "The admin report flags conversations rated faster than this."),
}
