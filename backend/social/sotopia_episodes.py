"""Sotopia's episode layouts, recognised by their keys and converted to our `Episode`:

* an ``EpisodeLog`` export (``pk``, ``environment``, ``tag``, ``models``, ``rewards_prompt``; optionally ``messages``,
  ``rewards``), as in the Sotopia and Sotopia-π human evaluations. Scenario, names, backgrounds, secrets, goals and
  turns come from ``rewards_prompt``; ``models[1:]`` name the agents' models; numeric ``rewards`` become model
  ratings by ``models[0]`` (the evaluator);
* the ``episodes_to_jsonl`` export (``episode_id``, ``scenario``, ``agents_background``, ``social_goals``,
  ``social_interactions``, ``rewards``).

`backend.social.episodes` picks the layout (`is_sotopia_log`, `is_sotopia_jsonl`) and reads it here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from backend.social.episode_model import Agent, Episode, EpisodeFormatError, FieldReader, Turn
from backend.social.rubrics import Rubric

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


def is_sotopia_log(data: Mapping[str, Any]) -> bool:
    """Whether decoded JSON is a Sotopia ``EpisodeLog`` export (it has ``rewards_prompt``)."""
    return "rewards_prompt" in data


def is_sotopia_jsonl(data: Mapping[str, Any]) -> bool:
    """Whether decoded JSON is a line of Sotopia's ``episodes_to_jsonl`` export (it has ``agents_background``)."""
    return "agents_background" in data


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


def reward_ratings(raw: Any) -> dict[str, float]:
    """Sotopia stores each agent's reward as ``overall`` or ``[overall, {dimension: score}]``."""
    if isinstance(raw, list | tuple) and len(raw) == 2 and isinstance(raw[1], Mapping):
        raw = raw[1]
    if isinstance(raw, Mapping):
        return {key: value for key, value in raw.items() if key != "overall_score"}
    return {}


def _sotopia_messages(messages: Any, names: Sequence[str], fields: FieldReader) -> list[Turn]:
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


def sotopia_log_episode(data: Mapping[str, Any], fields: FieldReader, rubric: Rubric | None) -> Episode:
    episode_id = fields.text(data.get("pk") or data.get("episode_id", ""), "pk")
    try:
        parsed = parse_rewards_prompt(fields.text(fields.field(data, "rewards_prompt", ""), "rewards_prompt"))
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
        ratings = reward_ratings(rewards[index]) if rewards else {}
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


def sotopia_jsonl_episode(data: Mapping[str, Any], fields: FieldReader, rubric: Rubric | None) -> Episode:
    backgrounds = fields.mapping(fields.field(data, "agents_background", ""), "agents_background")
    goals = fields.mapping(fields.field(data, "social_goals", ""), "social_goals")
    names = list(backgrounds)
    if len(names) != 2 or set(names) != set(goals):
        raise fields.fail("agents_background", f"must name the same two agents as social_goals, got {names}.")
    interactions = fields.text(fields.field(data, "social_interactions", ""), "social_interactions")
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
        ratings = reward_ratings(rewards[index]) if len(rewards) == 2 else {}
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
        id=fields.text(fields.field(data, "episode_id", ""), "episode_id"),
        scenario=fields.text(fields.field(data, "scenario", ""), "scenario"),
        agents=(agents[0], agents[1]),
        turns=tuple(turns),
        group=str(data.get("codename") or ""),
        model_rater="sotopia-evaluator" if any(a.model_ratings for a in agents) else "",
        source=fields.source,
    )
