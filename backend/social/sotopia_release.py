"""Reading the released Sotopia-π human evaluation: annotation tables, GPT-4 ratings, which agent is under test.

Files (see ``../shared/data/sotopia/README.md``): ``annotations/<model>_final.csv`` with one row per (episode,
annotator): ``pk``, ``prolific_id`` and, for agent ``i`` in {1, 2} and each dimension ``d``, the rating ``d_i``
and the reasoning ``d_reasoning_i``; ``gpt4_ratings/complete_gpt_score.json`` = ``{pk: {agent1: {d: score,
overall_score}, agent2: {...}}}``; ``gpt4_ratings/complete_pk_agent_pairs.json`` = ``[[pk, env_pk, "agent1"], ...]``
naming the GPT-4 side. The tables are quoted multi-line CSV, read here with a real CSV parser.

``ratings_from_release`` turns the tables into the long ratings frame the social report uses (columns
``RATING_COLUMNS`` of ``backend.social.report``), one row per (file, episode, agent, dimension, annotator row).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

DIMENSIONS = (
    "believability",
    "relationship",
    "knowledge",
    "secret",
    "social_rules",
    "financial_and_material_benefits",
    "goal",
)
# Annotation file stem -> folder of the episode files that annotators saw (README of the shared data).
EPISODE_FOLDERS = {
    "gpt4": "GPT3.5-GPT4",
    "gpt3.5": "GPT3.5-GPT3.5",
    "mistral-instruct": "GPT3.5-MistralInstruct",
    "BC": "GPT3.5-BC",
    "SR": "GPT3.5-SR",
    "BC+SR": "GPT3.5-BC-SR",
}


def looks_like_release(columns: Iterable[str]) -> bool:
    """Whether CSV columns are those of a released ``*_final.csv`` annotation table.

    >>> looks_like_release(["ID", "model", "pk", "data", "prolific_id", "believability_1", "goal_reasoning_2"])
    True
    """
    names = set(columns)
    return {"pk", "prolific_id", "believability_1", "goal_2"} <= names or (
        {"pk", "prolific_id", "believability_1"} <= names and "goal_reasoning_2" in names
    )


def group_of(path: str | Path) -> str:
    """The model group of an annotation file: its name without ``_final.csv`` (``gpt4_final.csv`` -> ``gpt4``)."""
    name = Path(path).name
    return name[: -len("_final.csv")] if name.endswith("_final.csv") else Path(path).stem


def read_annotation_table(path: str | Path) -> pd.DataFrame:
    """One released annotation table as a DataFrame of strings and integers, every row kept."""
    table = pd.read_csv(path, dtype={"pk": str, "prolific_id": str}, keep_default_na=False)
    missing = [f"{d}_{i}" for d in DIMENSIONS for i in (1, 2) if f"{d}_{i}" not in table.columns]
    if missing or not {"pk", "prolific_id"} <= set(table.columns):
        raise ValueError(
            f"{Path(path).name} is not a Sotopia annotation table: columns {missing or 'pk/prolific_id'} are missing."
        )
    return table


def ratings_from_release(
    paths: Sequence[str | Path], *, drop_identical_rows: bool = True, dimensions: Sequence[str] = DIMENSIONS
) -> pd.DataFrame:
    """The long ratings frame of the released tables.

    ``drop_identical_rows`` removes rows that repeat another row of the same file byte for byte apart from the
    row id (2 such rows in the release); other repeated annotations by the same annotator stay, and the agreement
    statistics keep only one rating per annotator and unit.
    """
    frames = []
    for path in paths:
        table = read_annotation_table(path)
        content = [column for column in table.columns if column not in ("ID", "") and not column.startswith("Unnamed")]
        if drop_identical_rows:
            table = table.loc[~table.duplicated(subset=content)]
        group = group_of(path)
        for agent in (1, 2):
            for dimension in dimensions:
                frames.append(
                    pd.DataFrame(
                        dict(
                            group=group,
                            episode_id=table["pk"].to_numpy(),
                            agent=agent,
                            dimension=dimension,
                            rating=pd.to_numeric(table[f"{dimension}_{agent}"]).astype(float).to_numpy(),
                            reasoning=table.get(f"{dimension}_reasoning_{agent}", pd.Series("", index=table.index))
                            .astype(str)
                            .to_numpy(),
                            annotator=table["prolific_id"].to_numpy(),
                            row=range(len(table)),
                        )
                    )
                )
    frame = pd.concat(frames, ignore_index=True)
    frame["model_rating"] = float("nan")
    frame["is_gold"] = False
    frame["is_focus"] = pd.NA
    return frame


def read_gpt4_scores(path: str | Path) -> dict[str, list[dict[str, float]]]:
    """GPT-4 ratings per episode: ``{pk: [agent 1 ratings, agent 2 ratings]}`` (``overall_score`` left out)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, Mapping):
        raise ValueError(f"{Path(path).name} must map episode pks to per-agent ratings.")
    scores = {}
    for pk, entry in data.items():
        try:
            scores[pk] = [
                {key: float(value) for key, value in entry[agent].items() if key != "overall_score"}
                for agent in ("agent1", "agent2")
            ]
        except (KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"{Path(path).name}: entry {pk!r} lacks agent1/agent2 ratings ({error}).") from error
    return scores


def read_focus_agents(path: str | Path) -> dict[str, int]:
    """Which agent (1 or 2) is the model under test in each episode, from ``complete_pk_agent_pairs.json``."""
    pairs = json.loads(Path(path).read_text(encoding="utf-8"))
    focus = {}
    for entry in pairs:
        if not (isinstance(entry, list) and len(entry) == 3 and entry[2] in ("agent1", "agent2")):
            raise ValueError(f"{Path(path).name}: entries must be [pk, env_pk, 'agent1'|'agent2'], got {entry!r}.")
        focus[entry[0]] = 1 if entry[2] == "agent1" else 2
    return focus


def attach_model_scores(frame: pd.DataFrame, scores: Mapping[str, Sequence[Mapping[str, float]]]) -> pd.DataFrame:
    """Fill ``model_rating`` from per-episode model scores (``read_gpt4_scores``) where the episode has them."""
    lookup = {
        (pk, agent + 1, dimension): value
        for pk, agents in scores.items()
        for agent, ratings in enumerate(agents)
        for dimension, value in ratings.items()
    }
    keys = zip(frame["episode_id"], frame["agent"], frame["dimension"], strict=True)
    found = pd.Series([lookup.get(key, float("nan")) for key in keys], index=frame.index, dtype=float)
    frame = frame.copy()
    frame["model_rating"] = frame["model_rating"].where(found.isna(), found)
    return frame


def attach_focus(frame: pd.DataFrame, focus: Mapping[str, int]) -> pd.DataFrame:
    """Mark rows of the agent under test (``is_focus`` True/False) where the episode's focus agent is known."""
    frame = frame.copy()
    known = frame["episode_id"].map(focus)
    frame["is_focus"] = pd.Series(
        [pd.NA if pd.isna(side) else bool(side == agent) for side, agent in zip(known, frame["agent"], strict=True)],
        index=frame.index,
        dtype="boolean",
    )
    return frame
