"""Per-participant limits: live messages in a sliding time window, model requests per game.

A participant's browser can send live messages as fast as a script can; each one costs the server a database read
and may start a model call. ``wait_seconds`` is a sliding-window limit (at most ``limit`` actions in any
``window_s`` seconds); ``requests_used`` counts the model requests a game has already made for one player, for a
hard budget per game.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np


def wait_seconds(times: Sequence[float], now: float, *, limit: int, window_s: float) -> float:
    """Seconds until one more action is allowed (0.0 = allowed now).

    With the action times ``t`` inside the window, ``R = {t : now - window_s < t <= now}``: if ``|R| < limit``
    the wait is 0; else it is ``r_(|R|-limit+1) + window_s - now``, where ``r_(k)`` is the k-th earliest time in
    ``R`` (the moment the window has room again). The result lies in [0, window_s].

    >>> wait_seconds([0.0, 1.0, 2.0], 2.5, limit=3, window_s=10)
    7.5
    >>> wait_seconds([0.0, 1.0, 2.0], 10.5, limit=3, window_s=10)
    0.0
    >>> wait_seconds([], 0.0, limit=1, window_s=60)
    0.0
    """
    if isinstance(limit, bool) or not isinstance(limit, int | np.integer) or limit < 1:
        raise ValueError(f"The limit must be a whole number of at least 1, got {limit!r}.")
    if not window_s > 0:
        raise ValueError(f"The window must be a positive number of seconds, got {window_s!r}.")
    stamps = np.asarray(times, dtype=float)
    if stamps.ndim != 1 or not np.isfinite(stamps).all():
        raise ValueError("The action times must be a flat list of finite numbers (seconds).")
    recent = np.sort(stamps[(stamps > now - window_s) & (stamps <= now)])
    if recent.size < limit:
        return 0.0
    return float(recent[recent.size - limit] + window_s - now)


def prune(times: Iterable[float], now: float, *, window_s: float) -> list[float]:
    """The times still inside the window ending at ``now`` (what a limiter must keep; older ones can go).

    >>> prune([1.0, 5.0, 9.0], 10.0, window_s=6)
    [5.0, 9.0]
    """
    return [t for t in times if now - window_s < t <= now]


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
