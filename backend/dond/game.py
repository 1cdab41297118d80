"""The turn rules of a DoND game as pure functions of its stored events, and the prompts an LLM player sees.

A game is a list of events, in the order they were stored (the app keeps them as database rows, the self-play
runner in memory); everything else is derived from them, so a reload or a restart resumes exactly where it was:

- ``message`` (role, text): a free chat message, passed on to the other player as typed;
- ``proposal`` (role, proposal = counts per type in ``item_types`` order, text = the raw reply if from an LLM);
- ``violation`` (role, text = the raw reply, error_kind, error): an LLM reply that broke a rule;
- ``reprompt`` (role, text): what the LLM was told after a violation;
- ``llm_error`` (role, error_kind, error): a model call of the role that failed after the client's retries (the
  endpoint down, a timeout, garbage): the model never answered, so this is not a violation and gets no re-prompt;
- ``abort`` (role = who ended it, or empty; text = the reason);
- anything else (``llm_call``, ``input_rejected``, ``notice``, ...) is a log entry and changes nothing.

Rules: the opener and the other player alternate; on their turn a player sends a message or makes a secret
proposal. When someone has proposed, or both have sent ``max_messages`` messages, every player who has not proposed
must propose (no more chat). The game ends when both have proposed or on an abort. An LLM reply that breaks a rule
is a violation; after more than ``llm_reprompts`` violations in a row by the same player the game is aborted.
Failed calls are counted apart (``llm_errors``): the turn is tried again, and after more than ``llm_reprompts``
failed calls in a row (no answer in between) the game is aborted as ``llm_error``.

>>> config = GameConfig(mode="semi", language="en", opener="B", max_messages=1)
>>> state = replay([{"kind": "message", "role": "B", "text": "Hi"}, {"kind": "message", "role": "A", "text": "Yo"}], config)
>>> state.phase, state.to_act
('propose', ('A', 'B'))
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

from backend.dond.rules import (
    LANGUAGES,
    MODES,
    PROPOSAL_PREFIX,
    ROLES,
    EmptyMessageError,
    Instance,
    MoveError,
    ProposalRequiredError,
    format_items,
    format_proposal,
    format_values,
)

PROMPTS_DIR = Path(__file__).with_name("data") / "dond_prompts"
FORMAT_HINT = {
    "en": "[Proposal: <number> <item>, <number> <item>, ...]",
    "de": "[Vorschlag: <Anzahl> <Gegenstand>, <Anzahl> <Gegenstand>, ...]",
    "it": "[Proposta: <numero> <oggetto>, <numero> <oggetto>, ...]",
}
STATE_EVENTS = ("message", "proposal", "violation", "reprompt", "llm_error", "abort")


class OutOfTurnError(MoveError):
    """A message or proposal from a player whose turn it is not."""

    kind = "out_of_turn"


class AlreadyProposedError(MoveError):
    """A second proposal from the same player."""

    kind = "already_proposed"


class GameOverError(MoveError):
    """A move after the game ended."""

    kind = "game_over"


class MessageTooLongError(MoveError):
    """A message longer than the configured limit."""

    kind = "too_long"


# Counterbalancing cells (LAMEN-style debiasing): which value function the focal player (the person; player A in
# self-play) gets × who opens. Successive games cycle through them; the debiased mean averages the cell means.
CELLS = {1: ("A", True), 2: ("A", False), 3: ("B", True), 4: ("B", False)}


def cell_roles(cell: int) -> tuple[str, str]:
    """``(focal_role, opener)`` of a counterbalancing cell 1..4.

    >>> [cell_roles(cell) for cell in (1, 2, 3, 4)]
    [('A', 'A'), ('A', 'B'), ('B', 'B'), ('B', 'A')]
    """
    if cell not in CELLS:
        raise ValueError(f"cell must be 1, 2, 3 or 4, not {cell!r}.")
    focal, focal_opens = CELLS[cell]
    return focal, focal if focal_opens else other_role(focal)


def cell_for_game(index: int) -> int:
    """The cell of the ``index``-th game (0-based) when cycling through the four cells.

    >>> [cell_for_game(i) for i in range(6)]
    [1, 2, 3, 4, 1, 2]
    """
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ValueError(f"index must be a non-negative whole number, not {index!r}.")
    return index % 4 + 1


def other_role(role: str) -> str:
    """The other player's role.

    >>> other_role("A")
    'B'
    """
    if role not in ROLES:
        raise ValueError(f"role must be 'A' or 'B', not {role!r}.")
    return "B" if role == "A" else "A"


@dataclass(frozen=True)
class GameConfig:
    """The settings of one game (session-config keys of the app, arguments of the runner)."""

    mode: str
    language: str
    opener: str = "A"
    max_messages: int = 5
    llm_reprompts: int = 2
    max_message_chars: int = 1000

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}.")
        if self.language not in LANGUAGES:
            raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, not {self.language!r}.")
        if self.opener not in ROLES:
            raise ValueError(f"opener must be 'A' or 'B', not {self.opener!r}.")
        for name in ("max_messages", "llm_reprompts", "max_message_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (1 if name != "llm_reprompts" else 0):
                raise ValueError(
                    f"{name} must be a whole number (at least {int(name != 'llm_reprompts')}), not {value!r}."
                )


@dataclass(frozen=True)
class GameState:
    """Where a game stands after its events (see ``replay``)."""

    config: GameConfig
    messages_sent: Mapping[str, int] = field(default_factory=lambda: {"A": 0, "B": 0})
    proposals: Mapping[str, tuple[int, ...] | None] = field(default_factory=lambda: {"A": None, "B": None})
    violations: Mapping[str, int] = field(default_factory=lambda: {"A": 0, "B": 0})
    strikes: Mapping[str, int] = field(default_factory=lambda: {"A": 0, "B": 0})  # violations since a valid move
    llm_errors: Mapping[str, int] = field(default_factory=lambda: {"A": 0, "B": 0})  # failed model calls
    failures: Mapping[str, int] = field(default_factory=lambda: {"A": 0, "B": 0})  # failed calls since an answer
    aborted_by: str | None = None
    abort_reason: str | None = None
    _counts: tuple[int, ...] = ()  # item counts, so that ``outcome`` can check complementarity

    @property
    def aborted(self) -> bool:
        return self.abort_reason is not None

    @property
    def finished(self) -> bool:
        return self.aborted or all(self.proposals[role] is not None for role in ROLES)

    @property
    def phase(self) -> str:
        """``chat`` (alternating messages), ``propose`` (everyone left must propose) or ``finished``."""
        if self.finished:
            return "finished"
        exhausted = all(self.messages_sent[role] >= self.config.max_messages for role in ROLES)
        if exhausted or any(self.proposals[role] is not None for role in ROLES):
            return "propose"
        return "chat"

    @property
    def chat_turn(self) -> str | None:
        """Whose turn it is in the chat phase (the opener when both have sent as many messages), else None."""
        if self.phase != "chat":
            return None
        opener = self.config.opener
        return opener if self.messages_sent[opener] <= self.messages_sent[other_role(opener)] else other_role(opener)

    @property
    def to_act(self) -> tuple[str, ...]:
        """The roles expected to act now."""
        if self.phase == "chat":
            return (self.chat_turn,)
        if self.phase == "propose":
            return tuple(role for role in ROLES if self.proposals[role] is None)
        return ()

    def must_propose(self, role: str) -> bool:
        return self.phase == "propose" and self.proposals[role] is None

    def may_message(self, role: str) -> bool:
        return self.chat_turn == role

    def may_propose(self, role: str) -> bool:
        return role in self.to_act

    def reprompts_exhausted(self, role: str) -> bool:
        """True once ``role`` has more violations in a row than ``llm_reprompts`` allows: the game must abort."""
        return self.strikes[role] > self.config.llm_reprompts

    def failures_exhausted(self, role: str) -> bool:
        """True once ``role``'s model has failed more calls in a row than ``llm_reprompts`` allows: abort."""
        return self.failures[role] > self.config.llm_reprompts

    @property
    def outcome(self) -> str | None:
        """``aborted``, ``success`` (complementary proposals), ``lose`` or None while the game runs."""
        if self.aborted:
            return "aborted"
        if not self.finished:
            return None
        return "success" if self._complementary() else "lose"

    def _complementary(self) -> bool:
        if not self._counts:
            raise ValueError("The outcome needs the item counts: pass counts= to replay.")
        return all(a + b <= c for a, b, c in zip(self.proposals["A"], self.proposals["B"], self._counts, strict=True))


def _event_value(event: Any, key: str, default: Any = None) -> Any:
    if isinstance(event, Mapping):
        return event.get(key, default)
    return getattr(event, key, default)


def _proposal_tuple(raw: Any) -> tuple[int, ...]:
    if isinstance(raw, str):
        raw = json.loads(raw)
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise ValueError(f"A proposal event needs a list of counts, got {raw!r}.")
    return tuple(int(v) for v in raw)


def apply_event(state: GameState, event: Mapping[str, Any] | Any) -> GameState:
    """The state after one more event; raises a ``MoveError`` if the event breaks the turn rules.

    Checks: no move after the end (``GameOverError``); a message only on one's chat turn (``OutOfTurnError``,
    or ``ProposalRequiredError`` in the proposal phase), neither empty nor longer than ``max_message_chars``;
    a proposal only when it is one's turn to act and only once (``AlreadyProposedError``).
    """
    kind = _event_value(event, "kind")
    if kind not in STATE_EVENTS:
        return state
    role = _event_value(event, "role") or None
    if kind == "abort":
        if state.finished:
            return state
        return replace(state, aborted_by=role, abort_reason=str(_event_value(event, "text") or "aborted"))
    if role not in ROLES:
        raise ValueError(f"A {kind} event needs role 'A' or 'B', got {role!r}.")
    if state.finished:
        raise GameOverError("The game is over; no more messages or proposals are accepted.")
    if kind == "message":
        text = _event_value(event, "text") or ""
        if state.phase == "propose":
            raise ProposalRequiredError("No more messages: a secret proposal is required now.")
        if state.chat_turn != role:
            raise OutOfTurnError("It is the other player's turn to write.")
        if not text.strip():
            raise EmptyMessageError("The message is empty.")
        if len(text) > state.config.max_message_chars:
            raise MessageTooLongError(
                f"The message has {len(text)} characters; the limit is {state.config.max_message_chars}.",
                limit=state.config.max_message_chars,
            )
        return replace(
            state,
            messages_sent={**state.messages_sent, role: state.messages_sent[role] + 1},
            strikes={**state.strikes, role: 0},
            failures={**state.failures, role: 0},
        )
    if kind == "proposal":
        if state.proposals[role] is not None:
            raise AlreadyProposedError("You have already made your secret proposal.")
        if role not in state.to_act:
            raise OutOfTurnError("It is the other player's turn.")
        proposal = _proposal_tuple(_event_value(event, "proposal"))
        if state._counts and len(proposal) != len(state._counts):
            raise ValueError(f"A proposal needs {len(state._counts)} counts, got {list(proposal)}.")
        return replace(
            state,
            proposals={**state.proposals, role: proposal},
            strikes={**state.strikes, role: 0},
            failures={**state.failures, role: 0},
        )
    if kind == "violation":  # the model answered (wrongly): its failed calls in a row end here
        return replace(
            state,
            violations={**state.violations, role: state.violations[role] + 1},
            strikes={**state.strikes, role: state.strikes[role] + 1},
            failures={**state.failures, role: 0},
        )
    if kind == "llm_error":
        return replace(
            state,
            llm_errors={**state.llm_errors, role: state.llm_errors[role] + 1},
            failures={**state.failures, role: state.failures[role] + 1},
        )
    return state  # reprompt: nothing changes


def replay(events: Iterable[Mapping[str, Any] | Any], config: GameConfig, *, counts: Sequence[int] = ()) -> GameState:
    """Fold the stored events into the game state (``counts`` lets ``outcome`` check complementarity).

    >>> events = [{"kind": "proposal", "role": "A", "proposal": [1, 0]}, {"kind": "proposal", "role": "B", "proposal": [0, 2]}]
    >>> replay(events, GameConfig(mode="coop", language="de"), counts=(1, 2)).outcome
    'success'
    """
    state = GameState(config, _counts=tuple(int(c) for c in counts))
    for event in events:
        state = apply_event(state, event)
    return state


# ---------------------------------------------------------------------------------------------------------------
# Prompts of an LLM player


@cache
def _template(language: str, name: str) -> Template:
    return Template((PROMPTS_DIR / language / name).read_text(encoding="utf-8").strip())


@cache
def _problems(language: str) -> dict[str, str]:
    return json.loads((PROMPTS_DIR / language / "problems.json").read_text(encoding="utf-8"))


def initial_prompt(instance: Instance, role: str, config: GameConfig) -> str:
    """The rules, the goal of the mode, the items and the player's own values (template ``initial_<mode>.txt``)."""
    language = config.language
    return _template(language, f"initial_{config.mode}.txt").substitute(
        max_messages=config.max_messages,
        format=FORMAT_HINT[language],
        items=format_items(instance, language),
        values=format_values(instance.values(role), instance, language),
    )


def notice(name: str, config: GameConfig) -> str:
    """The text of ``other_proposed`` or ``time_up`` in the game's language."""
    if name not in ("other_proposed", "time_up"):
        raise ValueError(f"name must be 'other_proposed' or 'time_up', not {name!r}.")
    return _template(config.language, f"{name}.txt").substitute(format=FORMAT_HINT[config.language])


def problem_text(error_kind: str, details: Mapping[str, Any], instance: Instance, config: GameConfig) -> str:
    """What was wrong with a reply, in the game's language (for the re-prompt)."""
    language = config.language
    problems = _problems(language)
    key = details.get("reason") if error_kind == "format" else error_kind
    template = problems.get(key) or problems.get(error_kind) or problems["pairs"]
    values = {
        "format": FORMAT_HINT[language],
        "prefix": PROPOSAL_PREFIX[language],
        "items": format_items(instance, language),
        **{name: value for name, value in details.items() if isinstance(value, str | int)},
    }
    if error_kind in ("over_ask", "duplicate_item") and details.get("item") in instance.item_types:
        index = instance.item_types.index(details["item"])
        values["item"] = instance.plural(language)[index]
    return Template(template).safe_substitute(values)


def reprompt_text(error: MoveError, instance: Instance, config: GameConfig) -> str:
    """The message sent to an LLM after a violation: what was wrong, and to answer again.

    >>> from backend.dond.rules import Instance, OverAskError
    >>> instance = Instance(("egg",), (1,), (10,), (10,))
    >>> reprompt_text(OverAskError("", item="egg", asked=2, available=1), instance, GameConfig(mode="semi", language="en"))
    'Your last reply could not be accepted: You asked for 2 of "eggs", but there are only 1. Please reply again and follow the rules.'
    """
    return _template(config.language, "reprompt.txt").substitute(
        problem=problem_text(error.kind, error.details, instance, config)
    )


def llm_messages(
    events: Iterable[Mapping[str, Any] | Any], role: str, instance: Instance, config: GameConfig
) -> list[dict[str, str]]:
    """The chat an LLM playing ``role`` sees, rebuilt from the events (so it is the same after a restart).

    Its first user turn is the initial prompt (followed by the other's first message when the other opened); the
    other's messages are user turns, its own replies (also invalid ones) assistant turns, a re-prompt is a user
    turn; a proposal of the other player shows only as the ``other_proposed`` notice, and when all messages are
    used the ``time_up`` notice follows. Consecutive turns of the same side are joined with a blank line.
    """
    other = other_role(role)
    chat: list[dict[str, str]] = []

    def add(side: str, text: str) -> None:
        if chat and chat[-1]["role"] == side:
            chat[-1]["content"] += "\n\n" + text
        else:
            chat.append({"role": side, "content": text})

    add("user", initial_prompt(instance, role, config))
    state = GameState(config, _counts=instance.counts)
    told_time_up = False
    for event in events:
        kind, event_role = _event_value(event, "kind"), _event_value(event, "role")
        text = _event_value(event, "text") or ""
        before = state
        state = apply_event(state, event)
        if state.proposals[role] is not None or state.finished:
            if kind in ("message", "proposal", "violation") and event_role == role and text:
                add("assistant", text)
            continue
        if kind == "message":
            add("assistant" if event_role == role else "user", text)
        elif kind == "proposal" and event_role == other:
            add("user", notice("other_proposed", config))
        elif kind == "violation" and event_role == role and text:
            add("assistant", text)
        elif kind == "reprompt" and event_role == role:
            add("user", text)
        if before.phase == "chat" and state.phase == "propose" and state.proposals[other] is None and not told_time_up:
            add("user", notice("time_up", config))
            told_time_up = True
    return chat


# ---------------------------------------------------------------------------------------------------------------
# The scripted agent (offline, deterministic): what `llm_model = "scripted"` plays.

_SCRIPTED_OPENING = {
    "en": "Hello! What matters most to me are the {items}. Which items matter most to you?",
    "de": "Hallo! Am wichtigsten sind mir: {items}. Welche Gegenstände sind dir am wichtigsten?",
    "it": "Ciao! Per me contano soprattutto: {items}. Quali oggetti contano di più per te?",
}
_SCRIPTED_CLOSING = {
    "en": "Thanks. I will make my proposal based on that.",
    "de": "Danke. Ich mache meinen Vorschlag auf dieser Grundlage.",
    "it": "Grazie. Farò la mia proposta su questa base.",
}


def scripted_proposal(instance: Instance, role: str) -> dict[str, int]:
    """The scripted agent's proposal: every item whose value to it is at least 2, nothing else.

    >>> scripted_proposal(Instance(("egg", "knife", "pen"), (1, 2, 4), (4, 3, 0), (2, 0, 2)), "A")
    {'egg': 1, 'knife': 2, 'pen': 0}
    """
    return {
        item: count if value >= 2 else 0
        for item, count, value in zip(instance.item_types, instance.counts, instance.values(role), strict=True)
    }


def scripted_policy(instance: Instance, role: str, state: GameState) -> Callable[[list[dict[str, str]]], str]:
    """A deterministic player for ``llm_model = "scripted"``: one opening message, one closing message, then its
    proposal (earlier when a proposal is required)."""
    language = state.config.language

    def policy(messages: list[dict[str, str]]) -> str:
        if state.must_propose(role) or state.messages_sent[role] >= 2:
            return format_proposal(scripted_proposal(instance, role), instance, language)
        if state.messages_sent[role] == 0:
            values = instance.values(role)
            best = max(range(len(values)), key=lambda i: (values[i], -i))
            return _SCRIPTED_OPENING[language].format(items=instance.plural(language)[best])
        return _SCRIPTED_CLOSING[language]

    return policy


# ---------------------------------------------------------------------------------------------------------------
# What a person sees

ABORT_REASONS = ("partner_left", "partner_timeout", "time_limit", "llm_invalid", "llm_error", "llm_budget")


def abort_reason_code(reason: str | None) -> str:
    """The code at the start of a stored abort reason (``"llm_invalid: ..."`` → ``llm_invalid``), else ``other``.

    >>> abort_reason_code("llm_invalid: over_ask"), abort_reason_code("power cut")
    ('llm_invalid', 'other')
    """
    code = (reason or "").split(":", 1)[0].strip()
    return code if code in ABORT_REASONS else "other"


def participant_view(
    events: Iterable[Mapping[str, Any] | Any], role: str, config: GameConfig, *, counts: Sequence[int] = ()
) -> dict[str, Any]:
    """The chat and controls of the player in ``role``, from the events (the app localises the notices).

    ``chat`` holds ``{"who": "me"|"other", "text"}`` for messages and ``{"who": "system", "notice": code, ...}``
    for notices: ``you_proposed`` (with ``proposal``), ``other_proposed``, ``time_up``, ``retry`` (the other, an
    LLM, broke a rule and is asked again), ``unreachable`` (the other's model could not be reached and is asked
    again) and ``aborted`` (with ``reason``). The other's proposal is never shown.

    >>> view = participant_view([{"kind": "message", "role": "A", "text": "hi"}], "B", GameConfig("semi", "en"))
    >>> view["chat"], view["can_message"], view["messages_left"]
    ([{'who': 'other', 'text': 'hi'}], True, 5)
    """
    other = other_role(role)
    chat: list[dict[str, Any]] = []
    state = GameState(config, _counts=tuple(int(c) for c in counts))
    for event in events:
        kind, event_role = _event_value(event, "kind"), _event_value(event, "role")
        before = state
        state = apply_event(state, event)
        if kind == "message":
            chat.append({"who": "me" if event_role == role else "other", "text": _event_value(event, "text") or ""})
        elif kind == "proposal" and event_role == role:
            chat.append({"who": "system", "notice": "you_proposed", "proposal": list(state.proposals[role])})
        elif kind == "proposal" and state.proposals[role] is None:
            chat.append({"who": "system", "notice": "other_proposed"})
        # No "asked again" notice when the budget is used up: the abort that follows says how the game ended.
        elif kind == "violation" and event_role == other and not state.finished:
            if not state.reprompts_exhausted(other):
                chat.append({"who": "system", "notice": "retry"})
        elif kind == "llm_error" and event_role == other and not state.finished:
            if not state.failures_exhausted(other):
                chat.append({"who": "system", "notice": "unreachable"})
        elif kind == "abort" and not before.finished:
            chat.append({"who": "system", "notice": "aborted", "reason": abort_reason_code(state.abort_reason)})
        exhausted = before.phase == "chat" and state.phase == "propose" and not any(state.proposals.values())
        if exhausted:
            chat.append({"who": "system", "notice": "time_up"})
    return {
        "chat": chat,
        "phase": state.phase,
        "can_message": state.may_message(role),
        "can_propose": state.may_propose(role),
        "must_propose": state.must_propose(role),
        "waiting_for_other": not state.finished and role not in state.to_act,
        "other_to_act": not state.finished and other in state.to_act,
        "messages_left": max(config.max_messages - state.messages_sent[role], 0),
        "finished": state.finished,
        "outcome": state.outcome if counts or not state.finished or state.aborted else None,
    }
