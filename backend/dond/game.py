"""The turn rules of a DoND game as pure functions of its stored events, and what each player sees of them.

A game is a list of events, in the order they were stored (the app keeps them as database rows, the self-play
runner in memory); everything else is derived from them, so a reload or a restart resumes exactly where it was:

- ``message`` (role, text): a free chat message, passed on to the other player as typed;
- ``proposal`` (role, proposal = counts per type in ``item_types`` order, text = the raw reply if from an LLM);
- ``violation`` (role, text = the raw reply, error_kind, error): an LLM reply that broke a rule;
- ``reprompt`` (role, text): what the LLM was told after a violation;
- ``llm_error`` (role, error_kind, error): a model call of the role that failed after the client's retries (the
  endpoint down, a timeout, garbage): the model never answered, so this is not a violation and gets no re-prompt;
- ``abort`` (role = who ended it, or empty; text = the reason);
- anything else (``llm_call``, ``input_rejected``, ``note``, ``probe``) is a log entry and changes nothing.

``replay`` is strict: a history that breaks the rules raises. Readers (pages, exports, reports) use
``backend.dond.integrity`` instead, which leaves out what cannot be replayed and names it (the ``integrity``
column); writers judge each new event against the stored game with ``integrity.late_reason``.

Rules (clembench's turn flow): the opener and the other player alternate; on their turn a player sends a message
or makes a secret proposal. When someone has proposed, the other must propose (no more chat). When both have sent
``max_messages`` messages, the opener, who has just received the other's last message, proposes first, then the
other. The game ends when both have proposed or on an abort. An LLM reply that breaks a rule
is a violation; after more than ``llm_reprompts`` violations in a row by the same player the game is aborted.
Failed calls are counted apart (``llm_errors``): the turn is tried again, and after more than ``llm_reprompts``
failed calls in a row (no answer in between) the game is aborted as ``llm_error``.

>>> config = GameConfig(mode="semi", language="en", opener="B", max_messages=1)
>>> state = replay([{"kind": "message", "role": "B", "text": "Hi"}, {"kind": "message", "role": "A", "text": "Yo"}], config)
>>> state.phase, state.to_act
('propose', ('B',))
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from backend.dond.departures import departs
from backend.dond.errors import (
    AlreadyProposedError,
    EmptyMessageError,
    GameOverError,
    MessageTooLongError,
    OutOfTurnError,
    ProposalRequiredError,
)
from backend.dond.rules import ROLES, check_language, check_mode
from backend.dond.scoring import is_complementary

STATE_EVENTS = ("message", "proposal", "violation", "reprompt", "llm_error", "abort")
LOG_EVENTS = ("llm_call", "input_rejected", "note", "probe", "takeover")  # kept for the record; change no state


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
    clembench_exact: bool = False  # every departure of ``backend.dond.departures`` off

    def __post_init__(self):
        check_mode(self.mode)
        check_language(self.language)
        if self.opener not in ROLES:
            raise ValueError(f"opener must be 'A' or 'B', not {self.opener!r}.")
        for name in ("max_messages", "llm_reprompts", "max_message_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (1 if name != "llm_reprompts" else 0):
                raise ValueError(
                    f"{name} must be a whole number (at least {int(name != 'llm_reprompts')}), not {value!r}."
                )
        if not isinstance(self.clembench_exact, bool):
            raise ValueError(f"clembench_exact must be True or False, not {self.clembench_exact!r}.")

    def departs(self, name: str) -> bool:
        """Whether the departure ``name`` from clembench (``backend.dond.departures``) applies to this game."""
        return departs(name, clembench_exact=self.clembench_exact)

    @property
    def reprompt_limit(self) -> int:
        """Re-prompts after a violation in a row: ``llm_reprompts``, or 0 when clembench-exact.

        >>> GameConfig("semi", "en").reprompt_limit, GameConfig("semi", "en", clembench_exact=True).reprompt_limit
        (2, 0)
        """
        return self.llm_reprompts if self.departs("reprompts") else 0

    @property
    def retry_limit(self) -> int:
        """Failed model calls in a row that are asked again: ``llm_reprompts``, or 0 when clembench-exact."""
        return self.llm_reprompts if self.departs("call_retries") else 0


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
    counts: tuple[int, ...] = ()  # item counts, so that ``outcome`` can check complementarity

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
        """The role asked now (one at a time, as in clembench), or ``()`` when the game is over.

        In the chat it is whose turn it is; after a proposal, the one who has not proposed; when the messages ran
        out and nobody has proposed, the opener (the other just sent the last message, which the opener has not
        answered yet). This is the one place that decides who is asked: the model's turns, the person's controls
        and the turn check of every move follow it.

        >>> config = GameConfig(mode="semi", language="en", opener="A", max_messages=1)
        >>> chat = [{"kind": "message", "role": "A", "text": "Hi"}, {"kind": "message", "role": "B", "text": "Yo"}]
        >>> replay(chat, config).to_act
        ('A',)
        >>> replay([*chat, {"kind": "proposal", "role": "A", "proposal": [1]}], config).to_act
        ('B',)
        """
        if self.phase == "chat":
            return (self.chat_turn,)
        if self.phase == "propose":
            waiting = tuple(role for role in ROLES if self.proposals[role] is None)
            return (self.config.opener,) if len(waiting) == 2 else waiting
        return ()

    def must_propose(self, role: str) -> bool:
        """Whether ``role`` may only propose from now on (also while the opener proposes first)."""
        return self.phase == "propose" and self.proposals[role] is None

    def may_message(self, role: str) -> bool:
        return self.chat_turn == role

    def may_propose(self, role: str) -> bool:
        return role in self.to_act

    def reprompts_exhausted(self, role: str) -> bool:
        """True once ``role`` has more violations in a row than ``llm_reprompts`` allows: the game must abort."""
        return self.strikes[role] > self.config.reprompt_limit

    def failures_exhausted(self, role: str) -> bool:
        """True once ``role``'s model has failed more calls in a row than ``llm_reprompts`` allows: abort."""
        return self.failures[role] > self.config.retry_limit

    @property
    def outcome(self) -> str | None:
        """``aborted``, ``success`` (complementary proposals), ``lose`` or None while the game runs."""
        if self.aborted:
            return "aborted"
        if not self.finished:
            return None
        if not self.counts:
            raise ValueError("The outcome needs the item counts: pass counts= to replay.")
        return "success" if is_complementary(self.proposals["A"], self.proposals["B"], self.counts) else "lose"


def event_value(event: Any, key: str, default: Any = None) -> Any:
    """A field of a stored event, whether it is a dict (self-play, tests) or a database row (the app).

    >>> event_value({"kind": "message"}, "kind"), event_value({"kind": "message"}, "role", "")
    ('message', '')
    """
    if isinstance(event, Mapping):
        return event.get(key, default)
    return getattr(event, key, default)


def proposal_tuple(raw: Any) -> tuple[int, ...]:
    """A proposal event's counts as a tuple, from a list or its JSON text (as stored in a database row).

    >>> proposal_tuple("[1, 0, 2]"), proposal_tuple((2, 0))
    ((1, 0, 2), (2, 0))
    """
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
    kind = event_value(event, "kind")
    if kind not in STATE_EVENTS:
        return state
    role = event_value(event, "role") or None
    if kind == "abort":
        if state.finished:
            return state
        return replace(state, aborted_by=role, abort_reason=str(event_value(event, "text") or "aborted"))
    if role not in ROLES:
        raise ValueError(f"A {kind} event needs role 'A' or 'B', got {role!r}.")
    if state.finished:
        raise GameOverError("The game is over; no more messages or proposals are accepted.")
    if kind == "message":
        text = event_value(event, "text") or ""
        if state.phase == "propose":
            raise ProposalRequiredError("No more messages: a secret proposal is required now.")
        if state.chat_turn != role:
            raise OutOfTurnError("It is the other player's turn to write.")
        if not text.strip() and (state.config.departs("empty_message") or event_value(event, "actor") != "llm"):
            raise EmptyMessageError("The message is empty.")
        too_long = len(text) > state.config.max_message_chars
        if too_long and (state.config.departs("message_chars") or event_value(event, "actor") != "llm"):
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
        # A stored proposal of a player who owed one is accepted even out of ``to_act``'s order: games stored
        # before clembench's flow let the non-opener propose first. A new move is judged by ``check_move``.
        if role not in state.to_act and not state.must_propose(role):
            raise OutOfTurnError("It is the other player's turn.")
        proposal = proposal_tuple(event_value(event, "proposal"))
        if state.counts and len(proposal) != len(state.counts):
            raise ValueError(f"A proposal needs {len(state.counts)} counts, got {list(proposal)}.")
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


def check_move(state: GameState, event: Mapping[str, Any] | Any) -> GameState:
    """The state after a NEW move (judged against the stored history, just before it is stored): ``apply_event``'s
    checks, and the move must come from the role asked now (``GameState.to_act``). So when the messages ran out, the
    player who sent the last one cannot propose before the opener has (``OutOfTurnError``). Stored events are
    replayed with ``apply_event`` alone, which reads a proposal made out of that order (an older game) as made.

    >>> config = GameConfig(mode="semi", language="en", opener="A", max_messages=1)
    >>> chat = replay([{"kind": "message", "role": "A", "text": "Hi"}, {"kind": "message", "role": "B", "text": "Yo"}], config)
    >>> check_move(chat, {"kind": "proposal", "role": "B", "proposal": [1]})
    Traceback (most recent call last):
    ...
    backend.dond.errors.OutOfTurnError: The other player makes a secret proposal first; then it is your turn.
    >>> apply_event(chat, {"kind": "proposal", "role": "B", "proposal": [1]}).proposals["B"]
    (1,)
    """
    after = apply_event(state, event)
    role = event_value(event, "role")
    if event_value(event, "kind") == "proposal" and role not in state.to_act:
        raise OutOfTurnError("The other player makes a secret proposal first; then it is your turn.")
    return after


def replay(events: Iterable[Mapping[str, Any] | Any], config: GameConfig, *, counts: Sequence[int] = ()) -> GameState:
    """Fold the stored events into the game state (``counts`` lets ``outcome`` check complementarity).

    >>> events = [{"kind": "proposal", "role": "A", "proposal": [1, 0]}, {"kind": "proposal", "role": "B", "proposal": [0, 2]}]
    >>> replay(events, GameConfig(mode="coop", language="de"), counts=(1, 2)).outcome
    'success'
    """
    state = GameState(config, counts=tuple(int(c) for c in counts))
    for event in events:
        state = apply_event(state, event)
    return state


# ---------------------------------------------------------------------------------------------------------------
# What a person sees

ABORT_REASONS = (
    "partner_left",
    "partner_timeout",
    "time_limit",
    "llm_time_limit",  # the time limit ran out while only the model owed a move: the model's failure
    "no_connection",  # the time limit ran out and the person's page never connected: nobody could move
    "llm_invalid",
    "llm_error",
    "llm_budget",
    "llm_cost_cap",  # the study's spending cap on model calls was reached (backend.core.llm.costs)
)


def time_limit_reason(state: GameState, *, llm_role: str | None, page_connected: bool = True) -> str:
    """Why a game the page's time limit ended is aborted: ``no_connection`` when the person's page never connected
    (``page_connected`` False: no live message ever arrived, so nobody could move and the model was never asked);
    else ``llm_time_limit`` when only the model (``llm_role``; None when two people play) owed a move (its turn to
    write, or the one proposal still missing), so the person waited on it and cannot be blamed; else ``time_limit``.

    >>> config = GameConfig(mode="semi", language="en", opener="A", max_messages=2)
    >>> waiting = apply_event(GameState(config, counts=(1,)), {"kind": "message", "role": "A", "text": "hi"})
    >>> time_limit_reason(waiting, llm_role="B"), time_limit_reason(waiting, llm_role="A")
    ('llm_time_limit', 'time_limit')
    >>> time_limit_reason(waiting, llm_role=None)
    'time_limit'
    >>> time_limit_reason(waiting, llm_role="B", page_connected=False)
    'no_connection'
    """
    if not page_connected:
        return "no_connection"
    return "llm_time_limit" if llm_role is not None and state.to_act == (llm_role,) else "time_limit"


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
    for notices: ``you_proposed`` (with ``proposal``), ``other_proposed``, ``time_up`` (the messages ran out and
    this player, the opener, proposes first), ``time_up_wait`` (the messages ran out and the other proposes first),
    ``no_reply`` (the other's model sent an empty message, clembench-exact games only), ``retry`` (the other, an
    LLM, broke a rule and is asked again), ``unreachable`` (the other's model could not be reached and is asked
    again), ``aborted`` (with ``reason``), and ``takeover`` / ``taken_over`` (a model plays the other's / this
    player's seat since its person left, ``backend.dond.partner``). The other's proposal is never shown.

    >>> view = participant_view([{"kind": "message", "role": "A", "text": "hi"}], "B", GameConfig("semi", "en"))
    >>> view["chat"], view["can_message"], view["messages_left"]
    ([{'who': 'other', 'text': 'hi'}], True, 5)
    """
    other = other_role(role)
    chat: list[dict[str, Any]] = []
    state = GameState(config, counts=tuple(int(c) for c in counts))
    for event in events:
        kind, event_role = event_value(event, "kind"), event_value(event, "role")
        before = state
        state = apply_event(state, event)
        if kind == "message" and event_role == other and not (event_value(event, "text") or "").strip():
            chat.append({"who": "system", "notice": "no_reply"})
        elif kind == "message":
            chat.append({"who": "me" if event_role == role else "other", "text": event_value(event, "text") or ""})
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
            notice = {"who": "system", "notice": "aborted", "reason": abort_reason_code(state.abort_reason)}
            if notice["reason"] in ("partner_left", "partner_timeout") and event_role == role:
                notice["self"] = True  # this player is the one who left: they read it about themselves
            chat.append(notice)
        elif kind == "takeover":  # a partner left; a model plays their seat (backend.dond.partner)
            chat.append({"who": "system", "notice": "taken_over" if event_role == role else "takeover"})
        exhausted = before.phase == "chat" and state.phase == "propose" and not any(state.proposals.values())
        if exhausted:
            chat.append({"who": "system", "notice": "time_up" if state.to_act == (role,) else "time_up_wait"})
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
