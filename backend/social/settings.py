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
- ``rubric_file`` ("" = our Sotopia rubric in the session's language), ``episodes`` (files or folders,
  comma-separated; ``samples`` = our sample episodes in the session's language) and ``episodes_json`` (episodes pasted
  into the admin form): the material, relative paths starting at the project root (`backend.social.bundled`).
  Material that declares another language than the session's is refused unless the shared key
  ``allow_material_language_mismatch`` confirms it (`backend.core.material_language`, docs/languages.md).

>>> settings = social_settings({"annotators_per_episode": "3"}, max_tasks=15)
>>> settings.annotators_per_episode, settings.reservation_timeout_s
(3, 1800.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.core import assignment, material_language, session_keys
from backend.social import forms
from backend.social.bundled import SAMPLES, bundled_episodes_path, bundled_rubric_path
from backend.social.episodes import load_episodes, parse_episode_text
from backend.social.rubrics import SCALE_LIMIT, Rubric, load_rubric

if TYPE_CHECKING:
    from backend.social.episodes import Episode

MAX_EPISODES_JSON_CHARS = 5_000_000  # pasted into the admin form; larger sets belong in files


W, N, F, T, K = session_keys.Whole, session_keys.Number, session_keys.Flag, session_keys.Text, session_keys.key


class SocialSettings(session_keys.Keys):
    # In the order the configs in settings.py have always listed them (the wide export's session columns follow it).
    rubric_file: T = K("", "Rubric file", max_chars=500)
    """Optional: your rubric (dimensions and scales); empty uses the bundled one."""
    episodes: T = K("", "Episodes files or folders", max_chars=5000)
    """The conversations to rate, comma-separated; samples: ours, in the session's language."""
    episodes_json: T = K("", "Episodes as text", max_chars=MAX_EPISODES_JSON_CHARS)
    """Optional: the episodes pasted as JSON, instead of a file."""
    annotators_per_episode: W = K(2, "Raters per conversation", ge=1, le=100)
    """How many people rate each conversation."""
    episodes_per_annotator: W = K(3, "Conversations per person", ge=1, le="max_tasks")
    """How many conversations each person rates."""
    attention_checks: W = K(0, "Attention checks per person", ge=0, le="max_tasks")
    """Conversations with known ratings mixed in to check care."""
    gold_tolerance: N = K(2, "Allowed distance on checks", ge=0, le=2 * SCALE_LIMIT)
    """A check passes when every rating is within this of the known one."""
    # the former minutes: assignment.refuse_former_minutes
    reservation_timeout_s: N = K(
        assignment.DEFAULT_TIMEOUT_S, "Hold a conversation (seconds)", ge=1, le=assignment.MAX_TIMEOUT_S
    )
    """After this an unfinished conversation goes to someone else."""
    min_reasoning_chars: W = K(20, "Shortest explanation", ge=0, le=2000)
    """Characters each rating's explanation must have."""
    comprehension_check: F = K(False, "Comprehension quiz")
    """Tick to ask questions about the instructions before rating."""
    comprehension_attempts: W = K(2, "Quiz attempts", ge=1, le=20)
    """Tries before someone who fails the quiz is screened out."""
    qualification_mode: F = K(False, "Qualification run")
    """Tick for a pilot of only the check conversations, to qualify raters."""
    pilot_overlap: F = K(False, "Pilot: everyone rates the same")
    """Tick so agreement between raters can be measured."""
    quality_floor_s: N = K(60, "Too fast (seconds)", ge=0, le=3600)
    """The admin report flags conversations rated faster than this."""

    def handed_out(self, regular_ids: Sequence[str]) -> list[str]:
        """The regular episodes the assignment hands out: all of them, or in a pilot the ones everybody rates."""
        if self.pilot_overlap:
            return assignment.pilot_items(regular_ids, self.episodes_per_annotator)
        return list(regular_ids)

    @property
    def per_episode(self) -> int | None:
        """Annotators per regular episode for the assignment: None (no cap) in a pilot."""
        return None if self.pilot_overlap else self.annotators_per_episode


DEFAULTS: Mapping[str, Any] = SocialSettings().as_config()


def social_settings(config: Mapping[str, Any], *, max_tasks: int) -> SocialSettings:
    """Read every key (missing keys take `DEFAULTS`); one ValueError naming every key at fault.

    ``max_tasks``: the app's rounds, the most episodes one annotator can get.
    """
    assignment.refuse_former_minutes(config)
    return session_keys.checked(SocialSettings, config, max_tasks=max_tasks)


def _path(value: str, project_root: Path) -> Path:
    path = Path(value.strip())
    return path if path.is_absolute() else project_root / path


def load_material(
    settings: SocialSettings, *, project_root: Path, language: str = "en"
) -> tuple[Rubric, list[Episode]]:
    """The rubric and episodes the settings name (our bundled ones in ``language`` where the settings say so);
    ValueError naming the key, file and field at fault."""
    rubric_value = settings.rubric_file.strip()
    rubric = load_rubric(
        _path(rubric_value, project_root) if rubric_value else bundled_rubric_path(language),
        what=f"The rubric_file {rubric_value!r}" if rubric_value else None,
    )
    forms.check_rubric_fits(rubric)
    episodes = []
    if settings.episodes.strip():
        parts = [
            bundled_episodes_path(language) if part.strip() == SAMPLES else _path(part, project_root)
            for part in settings.episodes.split(",")
            if part.strip()
        ]
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
    language = material_language.session_language(config)
    rubric, episodes = load_material(settings, project_root=project_root, language=language)
    check_material(settings, rubric, episodes, max_tasks=max_tasks, max_questions=max_questions)
    material_language.check_material_languages(
        declared_languages(settings, rubric, episodes),
        language=language,
        allow_mismatch=material_language.mismatch_allowed(config),
    )
    return settings, rubric, episodes


def declared_languages(settings: SocialSettings, rubric: Rubric, episodes: Sequence[Episode]) -> dict[str, str | None]:
    """What each piece of material declares: the rubric, then each episode source (file, or pasted text)."""
    rubric_value = settings.rubric_file.strip()
    declared = {f"the rubric_file {rubric_value!r}" if rubric_value else "our Sotopia rubric": rubric.language}
    for episode in episodes:
        what = f"the episodes in {episode.source.split('[')[0]!r}"
        if declared.get(what) is None:
            declared[what] = episode.language
    return declared
