"""The episode as every part of the product holds it (`Episode`, `Agent`, `Turn`), and the field checks its readers
share (`FieldReader`): each problem raises `EpisodeFormatError` naming the file and the field, e.g.
``bad.json: agents[1].goal: must be a non-empty string, got 3.``

The readers: `backend.social.episodes` (our format and the public loading API) and
`backend.social.sotopia_episodes` (Sotopia's layouts).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from backend.social.json_fields import JsonFields
from backend.social.rubrics import Rubric

TURN_KINDS = ("speech", "action", "non-verbal", "leave")


class EpisodeFormatError(ValueError):
    """An episode file that does not follow one of the supported layouts."""


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str
    kind: str = "speech"


@dataclass(frozen=True)
class Agent:
    name: str
    background: str
    goal: str
    secret: str = ""
    model: str = ""
    model_ratings: Mapping[str, float] = field(default_factory=dict)
    gold_ratings: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Episode:
    id: str
    scenario: str
    agents: tuple[Agent, Agent]
    turns: tuple[Turn, ...]
    group: str = ""
    model_rater: str = ""
    source: str = ""
    language: str | None = None  # the declared language (backend.core.material_language); None: undeclared

    @property
    def is_gold(self) -> bool:
        """Whether the episode carries reference ratings (an attention / qualification episode)."""
        return any(agent.gold_ratings for agent in self.agents)

    @property
    def has_model_ratings(self) -> bool:
        return any(agent.model_ratings for agent in self.agents)

    def as_dict(self) -> dict[str, Any]:
        """The episode in our JSON format (``parse_episode_data`` reads it back unchanged)."""
        data: dict[str, Any] = dict(id=self.id, scenario=self.scenario)
        if self.language:
            data["language"] = self.language
        if self.group:
            data["group"] = self.group
        if self.model_rater:
            data["model_rater"] = self.model_rater
        data["agents"] = []
        for agent in self.agents:
            entry: dict[str, Any] = dict(
                name=agent.name, background=agent.background, goal=agent.goal, secret=agent.secret
            )
            if agent.model:
                entry["model"] = agent.model
            if agent.model_ratings:
                entry["model_ratings"] = dict(agent.model_ratings)
            if agent.gold_ratings:
                entry["gold_ratings"] = dict(agent.gold_ratings)
            data["agents"].append(entry)
        data["turns"] = [dict(speaker=turn.speaker, text=turn.text, kind=turn.kind) for turn in self.turns]
        return data


class FieldReader(JsonFields):
    """`JsonFields` of an episode source: failures are `EpisodeFormatError`, text comes back stripped, and ratings
    are checked against a rubric."""

    def __init__(self, source: str):
        super().__init__(source, error=EpisodeFormatError)

    def text(self, value: Any, path: str, *, allow_empty: bool = False) -> str:
        return super().text(value, path, allow_empty=allow_empty).strip()

    def ratings(self, value: Any, path: str, rubric: Rubric | None) -> dict[str, float]:
        data = self.mapping(value, path)
        ratings = {}
        for key, rating in data.items():
            if isinstance(rating, bool) or not isinstance(rating, int | float) or rating != rating:
                raise self.fail(f"{path}.{key}", f"must be a number, got {rating!r}.")
            if rubric is not None:
                if key not in rubric.keys:
                    raise self.fail(f"{path}.{key}", f"is not a dimension of the rubric {rubric.name!r} {rubric.keys}.")
                dimension = rubric.dimension(key)
                if not dimension.contains(rating):
                    raise self.fail(f"{path}.{key}", f"must lie within {dimension.min}..{dimension.max}, got {rating}.")
            ratings[key] = int(rating) if float(rating).is_integer() else float(rating)
        return ratings
