"""The project's deliberate departures from clembench's DoND, each listed once with its reason, and the
"clembench-exact" switch that turns all of them off.

The turn flow itself is clembench's in every game (``backend.dond.game.GameState.to_act``): players alternate, a
proposal made early obliges the other to propose, and when the messages run out the opener (who just received the
other's last message, with the time-up notice) proposes first, then the other (told only that a proposal was made).

What follows differs from clembench on purpose, because people take part or because a run must survive a real
endpoint. With ``clembench_exact`` set (the session key ``clembench_exact``, the self-play flag
``--clembench-exact``), none of it applies and a game follows clembench's rules as its reference implementation
plays them. The code that applies a departure asks ``departs(name, clembench_exact=...)`` with the name used here,
so this table is the one list.

>>> sorted(DEPARTURES)
['call_retries', 'empty_message', 'message_chars', 'reprompts', 'request_budget']
>>> departs("reprompts", clembench_exact=False), departs("reprompts", clembench_exact=True)
(True, False)
>>> departs("typo", clembench_exact=False)
Traceback (most recent call last):
...
ValueError: 'typo' is not a departure from clembench; the departures are call_retries, empty_message, message_chars, reprompts, request_budget.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Departure:
    """What the project does, what clembench does, and why the project differs."""

    ours: str
    clembench: str
    reason: str


DEPARTURES: dict[str, Departure] = {
    "reprompts": Departure(
        ours="A model reply that breaks a rule is stored as a violation and the model is told what was wrong and asked "
        "again, up to llm_reprompts times in a row; then the game is aborted.",
        clembench="The first reply that breaks a rule aborts the game.",
        reason="A person who has negotiated for minutes should not lose the game to one misplaced bracket of the "
        "model; the violations are still counted per game.",
    ),
    "call_retries": Departure(
        ours="A model call that fails after the client's own retries (endpoint down, timeout) is stored as an "
        "llm_error and the same turn is asked again, up to llm_reprompts times in a row; then the game is aborted.",
        clembench="No game-level retry: a call that fails ends the episode.",
        reason="A short outage of the endpoint must not end a person's game; it is never counted as a violation.",
    ),
    "message_chars": Departure(
        ours="A message longer than max_message_chars is a violation (refused for a person).",
        clembench="No length limit on messages.",
        reason="The page and the stored rows need a bound; a model that rambles is asked again.",
    ),
    "empty_message": Departure(
        ours="An empty model reply is a failed call (the client asks again, then llm_error); a person cannot send "
        "an empty message.",
        clembench="An empty message is passed on; the other player is told there was no response.",
        reason="An empty reply from an endpoint is almost always a fault of the endpoint, not a move.",
    ),
    "request_budget": Departure(
        ours="A model player makes at most llm_requests_per_game requests per game; then the game is aborted "
        "(llm_budget).",
        clembench="No cap.",
        reason="A cost and safety bound for studies with people.",
    ),
}


def departs(name: str, *, clembench_exact: bool) -> bool:
    """Whether the departure ``name`` applies: every departure does, unless the game is clembench-exact."""
    if name not in DEPARTURES:
        raise ValueError(
            f"{name!r} is not a departure from clembench; the departures are {', '.join(sorted(DEPARTURES))}."
        )
    return not clembench_exact


def exact_problem(*, clembench_exact: bool, protocol_name: str, probe_external: bool) -> str | None:
    """Why a clembench-exact game cannot use this protocol (clembench has only plain replies), else None.

    >>> exact_problem(clembench_exact=True, protocol_name="notes", probe_external=False)
    'clembench-exact games use the plain protocol (clembench has no private notes or probes), not notes.'
    >>> exact_problem(clembench_exact=False, protocol_name="notes", probe_external=True) is None
    True
    """
    if clembench_exact and (protocol_name != "plain" or probe_external):
        used = protocol_name if protocol_name != "plain" else "plain with the external probe"
        return f"clembench-exact games use the plain protocol (clembench has no private notes or probes), not {used}."
    return None
