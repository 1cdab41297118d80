"""Conversation episodes to annotate: our documented JSON format, plus import of Sotopia episode files.

Our format (``*.json``: one episode object, a list of them, or ``{"episodes": [...]}``; ``*.jsonl``: one per line)::

    {
      "id": "dinner-party",                       # unique in the set: letters, digits, '-', '_', '.'
      "scenario": "Two flatmates plan a dinner party.",
      "group": "gpt-4o-vs-human",                 # optional label: condition / model under test
      "model_rater": "gpt-4",                     # optional: who produced the model_ratings below
      "agents": [                                 # exactly two
        {"name": "Aisha Karimi", "background": "...", "goal": "...", "secret": "...",   # secret may be ""
         "model": "gpt-4o",                       # optional: who played this agent
         "model_ratings": {"goal": 7, ...},       # optional: per rubric dimension, numbers within its range
         "gold_ratings": {"secret": 0, ...}},     # optional: reference ratings; makes this a gold/attention episode
        {...}
      ],
      "turns": [{"speaker": "Aisha Karimi", "text": "Shall we cook?", "kind": "speech"}, ...]
    }                                             # kind: speech (default), action, non-verbal or leave

Sotopia's layouts (an ``EpisodeLog`` export, the ``episodes_to_jsonl`` export) are recognised by their keys and
converted (`backend.social.sotopia_episodes`). The episode itself and the field checks: `backend.social.episode_model`.

Nothing is read at import time. Every problem raises ``EpisodeFormatError`` (a ``ValueError``) naming the file
and the field, e.g. ``bad.json: agents[1].goal: must be a non-empty string, got 3.``
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from backend.core import researcher_files
from backend.core.material_language import declared_language
from backend.social.episode_model import TURN_KINDS, Agent, Episode, EpisodeFormatError, FieldReader, Turn
from backend.social.rubrics import Rubric
from backend.social.sotopia_episodes import (
    is_sotopia_jsonl,
    is_sotopia_log,
    reward_ratings,
    sotopia_jsonl_episode,
    sotopia_log_episode,
)

_ID_PATTERN = re.compile(r"^[A-Za-z0-9_.\-]{1,80}$")


# --------------------------------------------------------------------------------------------------------------
# Our format


def _own_episode(data: Mapping[str, Any], fields: FieldReader, path: str, rubric: Rubric | None) -> Episode:
    episode_id = fields.text(fields.field(data, "id", path), _join(path, "id"))
    if not _ID_PATTERN.match(episode_id):
        raise fields.fail(_join(path, "id"), f"must be 1-80 letters, digits, '-', '_' or '.', got {episode_id!r}.")
    raw_agents = fields.field(data, "agents", path)
    if not isinstance(raw_agents, list) or len(raw_agents) != 2:
        raise fields.fail(_join(path, "agents"), f"must be a list of exactly two agents, got {raw_agents!r:.80}.")
    agents = []
    for index, raw in enumerate(raw_agents):
        where = _join(path, f"agents[{index}]")
        agent = fields.mapping(raw, where)
        agents.append(
            Agent(
                name=fields.text(fields.field(agent, "name", where), f"{where}.name"),
                background=fields.text(fields.field(agent, "background", where), f"{where}.background"),
                goal=fields.text(fields.field(agent, "goal", where), f"{where}.goal"),
                secret=fields.text(agent.get("secret", ""), f"{where}.secret", allow_empty=True),
                model=fields.text(agent.get("model", ""), f"{where}.model", allow_empty=True),
                model_ratings=fields.ratings(agent.get("model_ratings", {}), f"{where}.model_ratings", rubric),
                gold_ratings=fields.ratings(agent.get("gold_ratings", {}), f"{where}.gold_ratings", rubric),
            )
        )
    names = [agent.name for agent in agents]
    if names[0] == names[1]:
        raise fields.fail(_join(path, "agents"), f"the two agents must have different names, both are {names[0]!r}.")
    raw_turns = fields.field(data, "turns", path)
    if not isinstance(raw_turns, list) or not raw_turns:
        raise fields.fail(_join(path, "turns"), "must be a non-empty list of turns.")
    turns = []
    for index, raw in enumerate(raw_turns):
        where = _join(path, f"turns[{index}]")
        turn = fields.mapping(raw, where)
        speaker = fields.text(fields.field(turn, "speaker", where), f"{where}.speaker")
        if speaker not in names:
            raise fields.fail(f"{where}.speaker", f"must be one of the agents {names}, got {speaker!r}.")
        kind = turn.get("kind", "speech")
        if kind not in TURN_KINDS:
            raise fields.fail(f"{where}.kind", f"must be one of {TURN_KINDS}, got {kind!r}.")
        text = fields.text(turn.get("text", ""), f"{where}.text", allow_empty=kind == "leave")
        turns.append(Turn(speaker=speaker, text=text, kind=kind))
    return Episode(
        id=episode_id,
        scenario=fields.text(fields.field(data, "scenario", path), _join(path, "scenario")),
        agents=(agents[0], agents[1]),
        turns=tuple(turns),
        group=fields.text(data.get("group", ""), _join(path, "group"), allow_empty=True),
        model_rater=fields.text(data.get("model_rater", ""), _join(path, "model_rater"), allow_empty=True),
        source=fields.source,
        language=_declared(data, fields),
    )


def _declared(data: Mapping[str, Any], fields: FieldReader) -> str | None:
    try:
        return declared_language(data, what=fields.source)
    except ValueError as error:
        raise EpisodeFormatError(str(error)) from None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# --------------------------------------------------------------------------------------------------------------
# Public loading API


def parse_episode_data(data: Any, *, source: str = "<data>", rubric: Rubric | None = None) -> list[Episode]:
    """Episodes from decoded JSON: one episode (any supported layout), a list, or ``{"episodes": [...]}``.

    ``rubric`` (optional) checks the dimension names and ranges of model and gold ratings.

    >>> data = {"id": "e1", "scenario": "Two people meet.", "agents": [
    ...     {"name": "Ann", "background": "A nurse.", "goal": "Greet.", "secret": ""},
    ...     {"name": "Bo", "background": "A chef.", "goal": "Leave.", "gold_ratings": {"goal": 8}}],
    ...     "turns": [{"speaker": "Ann", "text": "Hello."}, {"speaker": "Bo", "text": "", "kind": "leave"}]}
    >>> [(episode.id, episode.is_gold, len(episode.turns)) for episode in parse_episode_data(data)]
    [('e1', True, 2)]
    >>> parse_episode_data({**data, "agents": data["agents"][:1]}, source="bad.json")
    Traceback (most recent call last):
    ...
    backend.social.episode_model.EpisodeFormatError: bad.json: agents: must be a list of exactly two agents, got [...].
    """
    fields = FieldReader(source)
    language = None  # a wrapper's "language" declares every episode in it that does not declare its own
    if isinstance(data, Mapping) and isinstance(data.get("episodes"), list):
        language = _declared(data, fields)
        data = data["episodes"]
    if isinstance(data, list):
        if not data:
            raise fields.fail("(top level)", "the list of episodes is empty.")
        episodes = []
        for index, item in enumerate(data):
            episodes.extend(_one(item, FieldReader(f"{source}[{index}]"), rubric))
        return [e if e.language or not language else replace(e, language=language) for e in episodes]
    return _one(data, fields, rubric)


def _one(data: Any, fields: FieldReader, rubric: Rubric | None) -> list[Episode]:
    data = fields.mapping(data, "(top level)")
    if is_sotopia_log(data):
        return [sotopia_log_episode(data, fields, rubric)]
    if is_sotopia_jsonl(data):
        return [sotopia_jsonl_episode(data, fields, rubric)]
    return [_own_episode(data, fields, "", rubric)]


def episode_from_dict(data: Mapping[str, Any], *, source: str = "<stored>") -> Episode:
    """One episode in our format (as written by ``Episode.as_dict``), e.g. read back from a database row."""
    return _own_episode(FieldReader(source).mapping(data, "(top level)"), FieldReader(source), "", None)


def parse_episode_text(text: str, *, source: str, rubric: Rubric | None = None) -> list[Episode]:
    """Episodes from the text of a ``.json`` file, or of a ``.jsonl`` file (one JSON value per line)."""
    if source.endswith(".jsonl"):
        episodes = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                episodes.extend(
                    parse_episode_data(
                        _decode(line, f"{source} line {number}"), source=f"{source} line {number}", rubric=rubric
                    )
                )
        if not episodes:
            raise EpisodeFormatError(f"{source}: the file holds no episodes.")
        return episodes
    return parse_episode_data(_decode(text, source), source=source, rubric=rubric)


def _decode(text: str, source: str) -> Any:
    # A pasted or Windows-made text may start with a byte-order mark; nesting too deep is refused like bad JSON.
    try:
        return researcher_files.parse_json(text, what=source)
    except ValueError as error:
        raise EpisodeFormatError(str(error)) from None


def episode_files(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    """The ``*.json`` / ``*.jsonl`` files named by ``paths`` (files, or folders searched recursively), sorted."""
    if isinstance(paths, str | Path):
        paths = [paths]
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            raise EpisodeFormatError(f"{path}: no such episode file or folder.")
    return files


def load_episodes(paths: str | Path | Iterable[str | Path], *, rubric: Rubric | None = None) -> list[Episode]:
    """Read every episode under ``paths`` (files or folders), checking that ids are unique across files."""
    files = episode_files(paths)
    if not files:
        raise EpisodeFormatError(f"{paths}: no .json or .jsonl episode files found.")
    episodes: list[Episode] = []
    seen: dict[str, str] = {}
    for path in files:
        try:
            text = researcher_files.read_text(path, what=path.name)
        except ValueError as error:
            raise EpisodeFormatError(str(error)) from None
        for episode in parse_episode_text(text, source=path.name, rubric=rubric):
            if episode.id in seen:
                raise EpisodeFormatError(
                    f"{episode.source}: id: the episode id {episode.id!r} is already used in {seen[episode.id]}."
                )
            seen[episode.id] = episode.source
            episodes.append(episode)
    return episodes


def attach_model_ratings(
    episodes: Sequence[Episode],
    ratings: Mapping[str, Sequence[Mapping[str, float]]],
    *,
    rater: str,
    rubric: Rubric | None = None,
) -> list[Episode]:
    """Copies of ``episodes`` with model ratings ``ratings[episode_id] = [agent 1 ratings, agent 2 ratings]`` added.

    Episodes without an entry are returned unchanged; an ``overall_score`` key is dropped (it is recomputed).
    """
    updated = []
    for episode in episodes:
        entry = ratings.get(episode.id)
        if entry is None:
            updated.append(episode)
            continue
        if len(entry) != 2:
            raise ValueError(f"The model ratings of episode {episode.id!r} must hold two agents, got {len(entry)}.")
        fields = FieldReader(f"model ratings of {episode.id}")
        agents = tuple(
            replace(agent, model_ratings=fields.ratings(reward_ratings(dict(raw)), f"agent{i + 1}", rubric))
            for i, (agent, raw) in enumerate(zip(episode.agents, entry, strict=True))
        )
        updated.append(replace(episode, agents=agents, model_rater=rater))
    return updated
