"""The columns of one rating, shared by people's exports and the model annotator's file (no pandas: page modules
import it)."""

from __future__ import annotations

from typing import Any

from backend.social.episodes import Episode
from backend.social.rubrics import Dimension

# One rating: which episode, agent and dimension, on which scale, and the rating with its reasoning. People's export
# and the model annotator's file (backend.social.annotator) both start their rows with these.
RATING_CELLS = [
    "episode_id",
    "episode_group",
    "is_gold",
    "agent_index",
    "agent_name",
    "agent_model",
    "dimension",
    "scale_min",
    "scale_max",
    "rating",
    "reasoning",
]


def rating_cells(episode: Episode, agent_index: int, dimension: Dimension, *, rating: Any, reasoning: str) -> dict:
    """The `RATING_CELLS` of one rating of agent ``agent_index`` (1 or 2) of ``episode`` on ``dimension``.

    >>> from backend.social.rubrics import load_rubric
    >>> from backend.social.episodes import load_episodes
    >>> from backend.social.rubrics import DEFAULT_RUBRIC_PATH
    >>> episode = load_episodes(DEFAULT_RUBRIC_PATH.parent / "episodes" / "borrowed_ladder.json")[0]
    >>> cells = rating_cells(episode, 2, load_rubric().dimension("goal"), rating=7, reasoning="Got the ladder.")
    >>> list(cells) == RATING_CELLS, cells["agent_name"], cells["scale_max"]
    (True, 'Henrik Lund', 10)
    """
    agent = episode.agents[agent_index - 1]
    return dict(
        episode_id=episode.id,
        episode_group=episode.group,
        is_gold=int(episode.is_gold),
        agent_index=agent_index,
        agent_name=agent.name,
        agent_model=agent.model,
        dimension=dimension.key,
        scale_min=dimension.min,
        scale_max=dimension.max,
        rating=rating,
        reasoning=reasoning,
    )


# Who annotated and when, in both app exports (long and wide).
ANNOTATION_CELLS = [
    "annotator",  # oTree's participant code, under Sotopia's name (the codebook says so); no second copy of it
    "prolific_pid",
    "study_id",
    "prolific_session_id",
    "round",
    "seconds_spent",
    "attention_passed",
    "shown_at",  # ISO-8601 UTC
    "submitted_at",  # ISO-8601 UTC
]
# The app's long export, one row per (annotation, agent, dimension). Text cells are escaped (see escape_text).
EXPORT_COLUMNS = [
    "session_code",
    *RATING_CELLS,
    "model_rater",
    "model_rating",
    "gold_rating",
    *ANNOTATION_CELLS,
    "rubric",
]
