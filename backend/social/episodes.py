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

Sotopia layouts are recognised by their keys and converted:

* an ``EpisodeLog`` export (``pk``, ``environment``, ``tag``, ``models``, ``rewards_prompt``; optionally ``messages``,
  ``rewards``), as in the Sotopia and Sotopia-π human evaluations. Scenario, names, backgrounds, secrets, goals and
  turns come from ``rewards_prompt``; ``models[1:]`` name the agents' models; numeric ``rewards`` become model
  ratings by ``models[0]`` (the evaluator);
* the ``episodes_to_jsonl`` export (``episode_id``, ``scenario``, ``agents_background``, ``social_goals``,
  ``social_interactions``, ``rewards``).

Nothing is read at import time. Every problem raises ``EpisodeFormatError`` (a ``ValueError``) naming the file
and the field, e.g. ``bad.json: agents[1].goal: must be a non-empty string, got 3.``
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from backend.core import researcher_files
from backend.social.rubrics import Rubric

TURN_KINDS = ("speech", "action", "non-verbal", "leave")
_ID_PATTERN = re.compile(r"^[A-Za-z0-9_.\-]{1,80}$")
_TURN_HEADER = re.compile(r"^Turn #(\d+)(.*)$")
_SECRET_LABEL = re.compile(r"\s*[^\s.]+'s secrets:\s*")
# What follows a speaker's name at the start of a Sotopia statement (render_for_humans adds a colon for actions).
_STATEMENT_VERBS = (
    ("said:", "speech"),
    ("[action]", "action"),
    ("[non-verbal communication]", "non-verbal"),
    ("left the conversation", "leave"),
    ("did nothing", None),
)


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


# --------------------------------------------------------------------------------------------------------------
# Field checks


class _Fields:
    def __init__(self, source: str):
        self.source = source

    def fail(self, path: str, problem: str) -> EpisodeFormatError:
        return EpisodeFormatError(f"{self.source}: {path}: {problem}")

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(path, f"must be a JSON object, got {type(value).__name__}.")
        return value

    def get(self, data: Mapping[str, Any], name: str, path: str) -> Any:
        if name not in data:
            raise self.fail(f"{path}.{name}" if path else name, "is missing.")
        return data[name]

    def text(self, value: Any, path: str, *, allow_empty: bool = False) -> str:
        if not isinstance(value, str) or (not allow_empty and not value.strip()):
            raise self.fail(path, f"must be a non-empty string, got {value!r:.80}.")
        return value.strip()

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


# --------------------------------------------------------------------------------------------------------------
# Our format


def _own_episode(data: Mapping[str, Any], fields: _Fields, path: str, rubric: Rubric | None) -> Episode:
    episode_id = fields.text(fields.get(data, "id", path), _join(path, "id"))
    if not _ID_PATTERN.match(episode_id):
        raise fields.fail(_join(path, "id"), f"must be 1-80 letters, digits, '-', '_' or '.', got {episode_id!r}.")
    raw_agents = fields.get(data, "agents", path)
    if not isinstance(raw_agents, list) or len(raw_agents) != 2:
        raise fields.fail(_join(path, "agents"), f"must be a list of exactly two agents, got {raw_agents!r:.80}.")
    agents = []
    for index, raw in enumerate(raw_agents):
        where = _join(path, f"agents[{index}]")
        agent = fields.mapping(raw, where)
        agents.append(
            Agent(
                name=fields.text(fields.get(agent, "name", where), f"{where}.name"),
                background=fields.text(fields.get(agent, "background", where), f"{where}.background"),
                goal=fields.text(fields.get(agent, "goal", where), f"{where}.goal"),
                secret=fields.text(agent.get("secret", ""), f"{where}.secret", allow_empty=True),
                model=fields.text(agent.get("model", ""), f"{where}.model", allow_empty=True),
                model_ratings=fields.ratings(agent.get("model_ratings", {}), f"{where}.model_ratings", rubric),
                gold_ratings=fields.ratings(agent.get("gold_ratings", {}), f"{where}.gold_ratings", rubric),
            )
        )
    names = [agent.name for agent in agents]
    if names[0] == names[1]:
        raise fields.fail(_join(path, "agents"), f"the two agents must have different names, both are {names[0]!r}.")
    raw_turns = fields.get(data, "turns", path)
    if not isinstance(raw_turns, list) or not raw_turns:
        raise fields.fail(_join(path, "turns"), "must be a non-empty list of turns.")
    turns = []
    for index, raw in enumerate(raw_turns):
        where = _join(path, f"turns[{index}]")
        turn = fields.mapping(raw, where)
        speaker = fields.text(fields.get(turn, "speaker", where), f"{where}.speaker")
        if speaker not in names:
            raise fields.fail(f"{where}.speaker", f"must be one of the agents {names}, got {speaker!r}.")
        kind = turn.get("kind", "speech")
        if kind not in TURN_KINDS:
            raise fields.fail(f"{where}.kind", f"must be one of {TURN_KINDS}, got {kind!r}.")
        text = fields.text(turn.get("text", ""), f"{where}.text", allow_empty=kind == "leave")
        turns.append(Turn(speaker=speaker, text=text, kind=kind))
    return Episode(
        id=episode_id,
        scenario=fields.text(fields.get(data, "scenario", path), _join(path, "scenario")),
        agents=(agents[0], agents[1]),
        turns=tuple(turns),
        group=fields.text(data.get("group", ""), _join(path, "group"), allow_empty=True),
        model_rater=fields.text(data.get("model_rater", ""), _join(path, "model_rater"), allow_empty=True),
        source=fields.source,
    )


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# --------------------------------------------------------------------------------------------------------------
# Sotopia layouts


def parse_statements(text: str, names: Sequence[str], *, where: str = "conversation") -> list[Turn]:
    """Split Sotopia-rendered text into turns: lines opening with ``<name> said:``, ``<name> [action]`` and so on.

    A line that does not open a statement continues the previous one (multi-line speech). "did nothing" lines are
    dropped, and so are empty statements; the enclosing quotes of speech and the trailing comma Sotopia leaves on the
    last turn are removed.

    >>> parse_statements('Ann Lee said: "Hi!"\\nBo Ma [action] waves back,', ["Ann Lee", "Bo Ma"])
    [Turn(speaker='Ann Lee', text='Hi!', kind='speech'), Turn(speaker='Bo Ma', text='waves back', kind='action')]
    """
    statements: list[list[Any]] = []
    for line in text.split("\n"):
        opened = _open_statement(line, names)
        if opened is not None:
            statements.append(list(opened))
        elif statements:
            statements[-1][2] += "\n" + line
        elif line.strip():
            raise ValueError(
                f"{where}: the text {line.strip()[:60]!r} does not start with a speaker's name {list(names)}."
            )
    turns = []
    for speaker, kind, body in statements:
        if kind is None:
            continue
        body = body.strip()
        body = body[:-1].rstrip() if body.endswith(",") else body
        if kind == "speech" and len(body) >= 2 and body[0] == body[-1] == '"':
            body = body[1:-1].strip()
        if kind == "action":
            while body.startswith("[action]"):  # some models repeat the marker
                body = body[len("[action]") :].lstrip()
        if kind == "leave":
            body = "left the conversation"
        if not body:  # an empty speech or action is a turn where nothing happened
            continue
        turns.append(Turn(speaker=speaker, text=body, kind=kind))
    return turns


def _open_statement(line: str, names: Sequence[str]) -> tuple[str, str | None, str] | None:
    for name in names:
        if not line.startswith(name):
            continue
        rest = line[len(name) :]
        rest = rest[1:] if rest.startswith(":") else rest
        rest = rest.lstrip()
        for verb, kind in _STATEMENT_VERBS:
            if rest.startswith(verb):
                body = rest[len(verb) :] if kind not in ("leave", None) else rest
                return name, kind, body
    return None


def split_turn_blocks(lines: Sequence[str]) -> list[tuple[int, str]]:
    """Cut the conversation part of a ``rewards_prompt`` into ``(turn number, text)`` blocks.

    Two layouts occur: ``Turn #3: <text>`` on one line, and ``Turn #3`` alone with the text on the following lines.
    The first header fixes the layout and numbers must rise by one, so "Turn #k:" lines quoted inside a speech
    are kept as text.

    >>> split_turn_blocks(["Turn #1", 'A said: "x"', "Turn #2", "B left the conversation,"])
    [(1, 'A said: "x"'), (2, 'B left the conversation,')]
    >>> split_turn_blocks(['Turn #0: A said: "Turn #1: quoted"', 'Turn #1: B said: "y"'])
    [(0, 'A said: "Turn #1: quoted"'), (1, 'B said: "y"')]
    """
    blocks: list[list[Any]] = []
    inline: bool | None = None
    for line in lines:
        match = _TURN_HEADER.match(line)
        if match:
            number, rest = int(match.group(1)), match.group(2)
            is_inline = rest.startswith(":")
            is_header = is_inline or rest.strip() in ("", ",")
            expected = blocks[-1][0] + 1 if blocks else None
            if is_header and (inline is None or inline == is_inline) and (expected is None or number == expected):
                inline = is_inline
                blocks.append([number, rest[1:].strip() if is_inline else ""])
                continue
        if blocks:
            blocks[-1][1] += ("\n" if blocks[-1][1] else "") + line
        elif line.strip():
            raise ValueError(f"the line {line[:60]!r} comes before the first 'Turn #' header.")
    return [(number, text.strip()) for number, text in blocks]


def _split_secret(background: str) -> tuple[str, str]:
    matches = list(_SECRET_LABEL.finditer(background))
    if not matches:
        return background.strip(), ""
    last = matches[-1]
    return background[: last.start()].strip(), background[last.end() :].strip()


def parse_rewards_prompt(prompt: str, *, where: str = "rewards_prompt") -> dict[str, Any]:
    """Read scenario, both agents (name, background, secret, goal) and the turns out of a Sotopia ``rewards_prompt``.

    >>> prompt = "\\n".join([
    ...     "Prompt after formatting:", "Here is the context of this interaction:", "Scenario: Two friends chat",
    ...     "Participants: Ann Lee and Bo Ma",
    ...     "Ann Lee's background: Ann Lee is a 30-year-old nurse. Ann's secrets: She sings.",
    ...     "Bo Ma's background: Bo Ma is a 40-year-old chef. Bo's secrets: He paints.",
    ...     "Ann Lee's goal: Say hello", "Bo Ma's goal: Say goodbye",
    ...     "Turn #0: Ann Lee said: \\"Hello!\\"", "Turn #1: Bo Ma left the conversation,"])
    >>> parsed = parse_rewards_prompt(prompt)
    >>> parsed["names"], parsed["agents"][1]["secret"], [turn.kind for turn in parsed["turns"]]
    (['Ann Lee', 'Bo Ma'], 'He paints.', ['speech', 'leave'])
    """
    lines = prompt.split("\n")
    first_turn = next((i for i, line in enumerate(lines) if _TURN_HEADER.match(line)), len(lines))
    header = {}
    for line in lines[:first_turn]:
        for label in ("Scenario:", "Participants:"):
            if line.startswith(label):
                header[label] = line[len(label) :].strip()
    if "Participants:" not in header:
        raise ValueError(f"{where}: has no 'Participants:' line.")
    if "Scenario:" not in header:
        raise ValueError(f"{where}: has no 'Scenario:' line.")
    names = [name.strip() for name in header["Participants:"].split(" and ")]
    if len(names) != 2 or not all(names):
        raise ValueError(f"{where}: the 'Participants:' line must name two agents, got {header['Participants:']!r}.")
    agents = []
    for name in names:
        found = {}
        for line in lines[:first_turn]:
            for label in ("background", "goal"):
                prefix = f"{name}'s {label}:"
                if line.startswith(prefix):
                    found[label] = line[len(prefix) :].strip()
        for label in ("background", "goal"):
            if not found.get(label):
                raise ValueError(f"{where}: has no '{name}'s {label}:' line.")
        background, secret = _split_secret(found["background"])
        agents.append(dict(name=name, background=background, secret=secret, goal=found["goal"]))
    try:
        blocks = split_turn_blocks(lines[first_turn:])
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from error
    turns = []
    for number, text in blocks:
        turns.extend(parse_statements(text, names, where=f"{where} Turn #{number}"))
    return dict(scenario=header["Scenario:"], names=names, agents=agents, turns=turns)


def _reward_ratings(raw: Any) -> dict[str, float]:
    """Sotopia stores each agent's reward as ``overall`` or ``[overall, {dimension: score}]``."""
    if isinstance(raw, list | tuple) and len(raw) == 2 and isinstance(raw[1], Mapping):
        raw = raw[1]
    if isinstance(raw, Mapping):
        return {key: value for key, value in raw.items() if key != "overall_score"}
    return {}


def _sotopia_messages(messages: Any, names: Sequence[str], fields: _Fields) -> list[Turn]:
    """Turns from ``EpisodeLog.messages``: per turn, ``[sender, receiver, text]``; agents speak to "Environment"."""
    if not isinstance(messages, list):
        raise fields.fail("messages", "must be a list of turns.")
    turns = []
    for index, turn in enumerate(messages):
        for entry in turn if isinstance(turn, list) else []:
            if not (isinstance(entry, list | tuple) and len(entry) == 3):
                raise fields.fail(f"messages[{index}]", f"entries must be [sender, receiver, text], got {entry!r:.60}.")
            sender, receiver, text = entry
            if receiver == "Environment" and sender in names:
                turns.extend(parse_statements(f"{sender} {text}", names, where=f"{fields.source}: messages[{index}]"))
    return turns


def _sotopia_log(data: Mapping[str, Any], fields: _Fields, rubric: Rubric | None) -> Episode:
    episode_id = fields.text(data.get("pk") or data.get("episode_id", ""), "pk")
    try:
        parsed = parse_rewards_prompt(fields.text(fields.get(data, "rewards_prompt", ""), "rewards_prompt"))
    except ValueError as error:
        raise EpisodeFormatError(f"{fields.source}: {error}") from error
    turns = parsed["turns"]
    if not turns and data.get("messages"):
        turns = _sotopia_messages(data["messages"], parsed["names"], fields)
    if not turns:
        raise fields.fail("rewards_prompt", "contains no conversation turns.")
    models = data.get("models") or []
    if not isinstance(models, list) or not all(isinstance(model, str) for model in models):
        raise fields.fail("models", f"must be a list of model names, got {models!r:.80}.")
    rewards = data.get("rewards") or []
    if rewards and (not isinstance(rewards, list) or len(rewards) != 2):
        raise fields.fail("rewards", f"must hold one entry per agent (2), got {rewards!r:.80}.")
    agents = []
    for index, agent in enumerate(parsed["agents"]):
        ratings = _reward_ratings(rewards[index]) if rewards else {}
        agents.append(
            Agent(
                name=agent["name"],
                background=agent["background"],
                goal=agent["goal"],
                secret=agent["secret"],
                model=models[index + 1] if len(models) > index + 1 else "",
                model_ratings=fields.ratings(ratings, f"rewards[{index}]", rubric),
            )
        )
    return Episode(
        id=episode_id,
        scenario=parsed["scenario"],
        agents=(agents[0], agents[1]),
        turns=tuple(turns),
        group=str(data.get("tag") or ""),
        model_rater=(models[0] if models else "sotopia-evaluator") if any(a.model_ratings for a in agents) else "",
        source=fields.source,
    )


def _sotopia_jsonl(data: Mapping[str, Any], fields: _Fields, rubric: Rubric | None) -> Episode:
    backgrounds = fields.mapping(fields.get(data, "agents_background", ""), "agents_background")
    goals = fields.mapping(fields.get(data, "social_goals", ""), "social_goals")
    names = list(backgrounds)
    if len(names) != 2 or set(names) != set(goals):
        raise fields.fail("agents_background", f"must name the same two agents as social_goals, got {names}.")
    interactions = fields.text(fields.get(data, "social_interactions", ""), "social_interactions")
    blocks = [line for line in interactions.split("\n") if not _TURN_HEADER.match(line)]
    first = next((i for i, line in enumerate(blocks) if _open_statement(line, names)), None)
    if first is None:
        raise fields.fail("social_interactions", "contains no statement by either agent.")
    try:
        turns = parse_statements("\n".join(blocks[first:]), names, where=f"{fields.source}: social_interactions")
    except ValueError as error:
        raise EpisodeFormatError(str(error)) from error
    rewards = data.get("rewards") or []
    agents = []
    for index, name in enumerate(names):
        background, secret = _split_secret(fields.text(backgrounds[name], f"agents_background.{name}"))
        ratings = _reward_ratings(rewards[index]) if len(rewards) == 2 else {}
        agents.append(
            Agent(
                name=name,
                background=background,
                goal=fields.text(goals[name], f"social_goals.{name}"),
                secret=secret,
                model_ratings=fields.ratings(ratings, f"rewards[{index}]", rubric),
            )
        )
    return Episode(
        id=fields.text(fields.get(data, "episode_id", ""), "episode_id"),
        scenario=fields.text(fields.get(data, "scenario", ""), "scenario"),
        agents=(agents[0], agents[1]),
        turns=tuple(turns),
        group=str(data.get("codename") or ""),
        model_rater="sotopia-evaluator" if any(a.model_ratings for a in agents) else "",
        source=fields.source,
    )


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
    backend.social.episodes.EpisodeFormatError: bad.json: agents: must be a list of exactly two agents, got [...].
    """
    fields = _Fields(source)
    if isinstance(data, Mapping) and isinstance(data.get("episodes"), list):
        data = data["episodes"]
    if isinstance(data, list):
        if not data:
            raise fields.fail("(top level)", "the list of episodes is empty.")
        episodes = []
        for index, item in enumerate(data):
            episodes.extend(_one(item, _Fields(f"{source}[{index}]"), rubric))
        return episodes
    return _one(data, fields, rubric)


def _one(data: Any, fields: _Fields, rubric: Rubric | None) -> list[Episode]:
    data = fields.mapping(data, "(top level)")
    if "rewards_prompt" in data:
        return [_sotopia_log(data, fields, rubric)]
    if "agents_background" in data:
        return [_sotopia_jsonl(data, fields, rubric)]
    return [_own_episode(data, fields, "", rubric)]


def episode_from_dict(data: Mapping[str, Any], *, source: str = "<stored>") -> Episode:
    """One episode in our format (as written by ``Episode.as_dict``), e.g. read back from a database row."""
    return _own_episode(_Fields(source).mapping(data, "(top level)"), _Fields(source), "", None)


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
        fields = _Fields(f"model ratings of {episode.id}")
        agents = tuple(
            replace(agent, model_ratings=fields.ratings(_reward_ratings(dict(raw)), f"agent{i + 1}", rubric))
            for i, (agent, raw) in enumerate(zip(episode.agents, entry, strict=True))
        )
        updated.append(replace(episode, agents=agents, model_rater=rater))
    return updated
