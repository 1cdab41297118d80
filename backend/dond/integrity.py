"""Stored history is the truth, and reading it never fails: the tolerant reading of a game's events, for every
reader (pages, transcripts, study status, exports, reports), and the judgement a writer makes of each new event
against the game as stored (``late_reason``), just before storing it, under the lock.

The strict rules are ``backend.dond.game`` (``replay`` raises on a history that breaks them). A history that should
not exist (a late LLM reply stored after the abort by an older version, an unknown kind, a hand-edited or broken
row) is read here: what replays is used, the rest is named in the game's ``integrity`` column
(``docs/integrity.md``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from backend.dond.errors import GameOverError, MoveError
from backend.dond.game import (
    LOG_EVENTS,
    STATE_EVENTS,
    GameConfig,
    GameState,
    abort_reason_code,
    apply_event,
    event_value,
    replay,
)

ASIDE_EVENTS = ("note", "probe")  # never shown; a turn's asides, with their llm_call of the same purpose


def _problem_kind(kind: Any) -> str:
    """A stored kind as a problem names it: at most 40 characters of letters, digits and ``_`` (others become ?)."""
    return re.sub(r"[^A-Za-z0-9_]", "?", str(kind)[:40])


def checked_events(
    events: Iterable[Mapping[str, Any] | Any], config: GameConfig, *, counts: Sequence[int] = ()
) -> tuple[list[Any], list[str]]:
    """The tolerant reading of a stored history: ``(kept, problems)``, where ``kept`` are the events that replay by
    the rules (in order) and ``problems`` names each event left out as ``<what>:<kind>@<seq>``, ``seq`` being its
    0-based position in ``events`` (the ``seq`` column of ``dond_events``). ``<what>`` is

    - ``event_after_end``: a move (message, proposal, violation, re-prompt, failed call, abort) after the game ended;
    - ``unknown_kind``: a kind this code does not know (the kind is shown with characters other than letters, digits
      and ``_`` as ``?``, at most 40);
    - ``invalid_move``: a move the turn rules refuse (out of turn, empty, too long, a second proposal);
    - ``broken_row``: no kind, or a field missing or unreadable (a proposal that is not a list of counts, a role
      that is not A or B).

    Log events (``llm_call``, ``input_rejected``, ``note``, ``probe``) are kept even after the end. No such history
    is written any more (see ``late_reason``); older or hand-edited databases may hold one, and a reader must never
    fail on it. ``replay(kept)`` is the game as far as it is readable.

    >>> config = GameConfig(mode="semi", language="en", opener="A")
    >>> history = [{"kind": "abort", "role": "", "text": "time_limit"}, {"kind": "message", "role": "B", "text": "late"},
    ...            {"kind": "shout"}, {"kind": "proposal", "role": "A", "proposal": "[1,"}, None]
    >>> kept, problems = checked_events(history, config)
    >>> len(kept), problems
    (1, ['event_after_end:message@1', 'unknown_kind:shout@2', 'event_after_end:proposal@3', 'broken_row:None@4'])
    >>> checked_events([{"kind": "proposal", "role": "A", "proposal": "[1,"}], config)[1]
    ['broken_row:proposal@0']
    """
    state = GameState(config, counts=tuple(int(c) for c in counts))
    kept: list[Any] = []
    problems: list[str] = []
    for seq, event in enumerate(events):
        kind = event_value(event, "kind") if event is not None else None
        problem = None
        if not isinstance(kind, str) or not kind:
            problem = "broken_row"
        elif kind not in STATE_EVENTS and kind not in LOG_EVENTS:
            problem = "unknown_kind"
        elif kind == "abort" and state.finished:
            problem = "event_after_end"
        else:
            try:
                state = apply_event(state, event)
            except GameOverError:
                problem = "event_after_end"
            except MoveError:
                problem = "invalid_move"
            except (ValueError, TypeError, KeyError, AttributeError, OverflowError):
                problem = "broken_row"
        if problem:
            problems.append(f"{problem}:{_problem_kind(kind)}@{seq}")
        else:
            kept.append(event)
    return kept, problems


def replay_checked(
    events: Iterable[Mapping[str, Any] | Any], config: GameConfig, *, counts: Sequence[int] = ()
) -> tuple[GameState, list[str]]:
    """The state of the readable part of a stored history, and its problems (see ``checked_events``); never raises
    for a bad history (``config`` and ``counts`` are the game's own and checked as ``replay`` checks them).

    >>> config = GameConfig(mode="semi", language="en")
    >>> state, problems = replay_checked([{"kind": "abort", "text": "time_limit"}, {"kind": "abort"}], config)
    >>> state.abort_reason, problems
    ('time_limit', ['event_after_end:abort@1'])
    """
    kept, problems = checked_events(events, config, counts=counts)
    return replay(kept, config, counts=counts), problems


def late_reason(state: GameState, event: Mapping[str, Any] | Any) -> str | None:
    """Why ``event`` may not join a game whose stored events give ``state`` (None when it may): a writer asks this
    under the lock, just before storing, of every event that was prepared from an older copy of the game (an LLM
    reply that took its time). The answer becomes the late call's ``late_reason``:

    - ``after_abort:<reason code>`` or ``after_end`` (both proposed): the game is over. Every event is refused,
      except a turn's asides (``note``, ``probe`` and their ``llm_call``) after both proposals, when the probe of
      the last turn legitimately finishes after the last move;
    - ``refused:<error kind>``: the move breaks the turn rules of the stored game (e.g. ``refused:out_of_turn``).

    >>> config = GameConfig(mode="semi", language="en", opener="A")
    >>> over = replay([{"kind": "abort", "text": "llm_time_limit"}], config)
    >>> late_reason(over, {"kind": "llm_call", "purpose": "message"}), late_reason(over, {"kind": "message", "role": "B"})
    ('after_abort:llm_time_limit', 'after_abort:llm_time_limit')
    >>> running = replay([], config)
    >>> late_reason(running, {"kind": "message", "role": "B", "text": "hi"}), late_reason(running, {"kind": "llm_call"})
    ('refused:out_of_turn', None)
    """
    kind = event_value(event, "kind")
    aside = kind in ASIDE_EVENTS or (kind == "llm_call" and event_value(event, "purpose") in ASIDE_EVENTS)
    if state.aborted:
        return f"after_abort:{abort_reason_code(state.abort_reason)}"
    if state.finished:
        return None if aside else "after_end"
    if kind in STATE_EVENTS:
        try:
            apply_event(state, event)
        except MoveError as error:
            return f"refused:{error.kind}"
        except (ValueError, TypeError, KeyError):
            return "refused:bad_request"
    return None


def integrity_text(problems: Sequence[str]) -> str:
    """The ``integrity`` cell of a game: its problems joined by ``; `` (empty when the history is sound).

    >>> integrity_text(["event_after_end:message@12", "unknown_kind:shout@13"]), integrity_text([])
    ('event_after_end:message@12; unknown_kind:shout@13', '')
    """
    return "; ".join(problems)
