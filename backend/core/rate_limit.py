"""Per-game limits: ``requests_used`` counts the model requests a game has already made for one player, for a hard
budget per game. (Live messages per participant are limited before oTree, by the server's one budget:
``lab_server/budgets.py``.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def requests_used(events: Iterable[Mapping[str, Any] | Any], role: str) -> int:
    """Model requests already made for ``role``: the sum of ``attempts`` over its ``llm_call`` events (a call that
    was retried cost one request per attempt).

    >>> requests_used([{"kind": "llm_call", "role": "B", "attempts": 2}, {"kind": "message", "role": "B"}], "B")
    2
    """
    total = 0
    for event in events:
        get = event.get if isinstance(event, Mapping) else lambda key, e=event: getattr(e, key, None)
        if get("kind") == "llm_call" and get("role") == role:
            attempts = get("attempts")
            total += int(float(attempts)) if attempts not in (None, "") else 1
    return total
