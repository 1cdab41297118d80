"""social_eval's data as the tests see it: the bundled episodes, the rubric, and a row of people's long export."""

from __future__ import annotations

from backend.core import csvio
from backend.social import cells as social_cells
from backend.social.episodes import load_episodes
from backend.social.rubrics import load_rubric
from harness import PROJECT_ROOT

SAMPLES = {episode.id: episode for episode in load_episodes(PROJECT_ROOT / "backend" / "social" / "data" / "episodes")}
RUBRIC = load_rubric()


def human_export_row(
    episode, annotator, agent, dimension, rating, *, model=None, gold=False, passed="", reasoning="Because."
):
    """One row of people's long export (``social_cells.EXPORT_COLUMNS``): ``annotator`` rated ``agent`` of
    ``episode`` ``rating`` on ``dimension``; ``model`` is the model's rating of the same cell, if any."""
    row = dict.fromkeys(social_cells.EXPORT_COLUMNS, "")
    row.update(
        session_code="s1",
        episode_id=episode,
        episode_group="gold" if gold else "demo",
        is_gold=int(gold),
        agent_index=agent,
        dimension=dimension,
        rating=rating,
        reasoning=csvio.escape_text(reasoning),
        model_rating="" if model is None else model,
        annotator=annotator,
        attention_passed=passed,
    )
    return row
