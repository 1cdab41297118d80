"""A partner who leaves a person-vs-person DoND game: what the session key ``partner_leaves`` does, how the switch to
a model is stored, and who is paid by which rule.

A partner has left when their page sent no heartbeat for ``disconnect_timeout_s``, or stopped answering when only
they owed a move for ``turn_timeout_s`` (the reasons ``partner_left`` and ``partner_timeout``, one definition in
``backend.dond.game.ABORT_REASONS``). Then, with ``partner_leaves``:

- ``end``: the game is aborted with that reason. The person left behind is paid by ``partner_left_pay``
  (``half_total``: ceil(half their total value of all items), what an even split is worth; ``zero``: no bonus),
  the same rule shape as ``model_failure_pay`` (``backend.dond.scoring.model_failure_bonus``), on top of the
  participation fee.
- ``model``: a ``takeover`` event is stored (role = the seat the model takes, text = the reason, model = its name,
  created_at = the moment); from then on the session's model plays that seat. The game goes on and is scored as
  usual for the person left behind; should that model break the game (``backend.dond.scoring.MODEL_FAILURES``),
  ``partner_left_pay`` pays them.

Either way the one who left is paid no bonus (rule ``left_game``).

The takeover event changes no game state (``backend.dond.game.LOG_EVENTS``): the turn order goes on as before.

>>> event = takeover_event(role="B", reason="partner_left", model="gpt-x", at=10.0)
>>> model_role([{"kind": "message", "role": "A"}, event])
'B'
>>> from backend.dond.game import LOG_EVENTS
>>> event["kind"] in LOG_EVENTS
True
>>> takeover_columns([event])
{'taken_over_by_model': 1, 'takeover_role': 'B', 'takeover_reason': 'partner_left', 'takeover_at': 10.0}
>>> partner_rule(outcome="aborted", abort_code="partner_left", aborted_by="B", takeover_role="", role="A", partner_left_pay="half_total")
'partner_left_half_total'
>>> partner_rule(outcome="success", abort_code="other", aborted_by="", takeover_role="B", role="B", partner_left_pay="zero")
'left_game'
>>> partner_rule(outcome="success", abort_code="other", aborted_by="", takeover_role="B", role="A", partner_left_pay="zero") is None
True
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from backend.dond.game import event_value
from backend.dond.scoring import MODEL_FAILURE_PAYS, MODEL_FAILURES, PAY_RULES

PARTNER_LEAVES = ("end", "model")  # session key partner_leaves
PARTNER_LEFT_PAYS = MODEL_FAILURE_PAYS  # session key partner_left_pay: the shape of model_failure_pay
PARTNER_LEFT_REASONS = ("partner_left", "partner_timeout")  # abort / takeover reasons (backend.dond.game)
PARTNER_PAY_RULES = tuple(rule for rule in PAY_RULES if rule == "left_game" or rule.startswith("partner_left_"))
TAKEOVER_COLUMNS = ("taken_over_by_model", "takeover_role", "takeover_reason", "takeover_at")
TAKEOVER_MODEL_PREFIX = "takeover:"  # the games row's model column of a taken-over game: its own report condition


def gone_reason(
    *,
    now: float,
    partner_owes: bool,
    partner_seen: float,
    partner_could_act: float | None,
    last_move: float | None,
    disconnect_timeout_s: float,
    turn_timeout_s: float,
) -> str | None:
    """Whether a person-vs-person partner has left, judged at ``now`` (epoch seconds): ``partner_left`` when their
    page has sent nothing for more than ``disconnect_timeout_s`` since ``partner_seen``; ``partner_timeout`` when only
    they owe a move (``partner_owes``) and have let more than ``turn_timeout_s`` pass since their turn began; else
    None.

    Their turn begins at the later of the game's last move (``last_move``, None before the first) and the moment
    they could first act (``partner_could_act``: their Bargain page's first live message; None while they have not
    reached it, e.g. still reading the Instructions). A partner who could not act yet is never timed out for their
    turn: only their page's silence (``partner_left``) counts then.

    >>> facts = dict(partner_seen=100.0, disconnect_timeout_s=90, turn_timeout_s=300, partner_owes=True)
    >>> gone_reason(now=450.0, partner_could_act=None, last_move=None, **facts | dict(partner_seen=440.0))
    >>> gone_reason(now=450.0, partner_could_act=120.0, last_move=None, **facts | dict(partner_seen=440.0))
    'partner_timeout'
    >>> gone_reason(now=450.0, partner_could_act=200.0, last_move=None, **facts | dict(partner_seen=440.0))
    >>> gone_reason(now=450.0, partner_could_act=None, last_move=None, **facts)
    'partner_left'
    """
    if now - partner_seen > disconnect_timeout_s:
        return "partner_left"
    if partner_owes and partner_could_act is not None:
        turn_began = max(partner_could_act, last_move if last_move is not None else partner_could_act)
        if now - turn_began > turn_timeout_s:
            return "partner_timeout"
    return None


def takeover_event(*, role: str, reason: str, model: str, at: float | None = None) -> dict[str, Any]:
    """The event that gives ``role``'s seat to ``model`` because its person left (``reason``), at ``at``."""
    if role not in ("A", "B"):
        raise ValueError(f"A takeover needs role 'A' or 'B', not {role!r}.")
    if reason not in PARTNER_LEFT_REASONS:
        raise ValueError(f"A takeover's reason must be one of {', '.join(PARTNER_LEFT_REASONS)}, not {reason!r}.")
    return dict(kind="takeover", role=role, actor="system", text=reason, model=model, created_at=at or time.time())


def takeover_of(events: Iterable[Mapping[str, Any] | Any]) -> Mapping[str, Any] | Any | None:
    """The game's takeover event (the first; a second should not exist and is ignored), else None."""
    return next((event for event in events if event_value(event, "kind") == "takeover"), None)


def model_role(events: Iterable[Mapping[str, Any] | Any]) -> str | None:
    """The role a model plays since a takeover, else None."""
    event = takeover_of(events)
    return event_value(event, "role") if event is not None else None


def takeover_columns(events: Iterable[Mapping[str, Any] | Any]) -> dict[str, Any]:
    """The ``dond_games`` columns of the switch: 1 and the role, reason and moment (epoch seconds), or 0 and empty."""
    event = takeover_of(events)
    if event is None:
        return {"taken_over_by_model": 0, "takeover_role": "", "takeover_reason": "", "takeover_at": ""}
    return {
        "taken_over_by_model": 1,
        "takeover_role": event_value(event, "role") or "",
        "takeover_reason": event_value(event, "text") or "",
        "takeover_at": event_value(event, "created_at"),
    }


def partner_rule(
    *, outcome: str, abort_code: str, aborted_by: str, takeover_role: str, role: str, partner_left_pay: str
) -> str | None:
    """The pay rule of the person in ``role`` when a partner left, else None (the game's other rules apply):
    ``left_game`` for the one who left (their seat taken over, or the game ended because of them), and
    ``partner_left_<partner_left_pay>`` for the one left behind in a game that ended (``partner_leaves=end``), or
    whose game the model that took over then broke (``backend.dond.scoring.MODEL_FAILURES``).

    >>> partner_rule(outcome="aborted", abort_code="llm_invalid", aborted_by="B", takeover_role="B", role="A", partner_left_pay="zero")
    'partner_left_zero'
    """
    if partner_left_pay not in PARTNER_LEFT_PAYS:
        raise ValueError(f"partner_left_pay must be one of {', '.join(PARTNER_LEFT_PAYS)}, not {partner_left_pay!r}.")
    if takeover_role == role:
        return "left_game"
    if outcome == "aborted" and abort_code in PARTNER_LEFT_REASONS and aborted_by in ("A", "B"):
        return "left_game" if aborted_by == role else f"partner_left_{partner_left_pay}"
    if takeover_role and outcome == "aborted" and abort_code in MODEL_FAILURES:  # the model that took over broke it
        return f"partner_left_{partner_left_pay}"
    return None
