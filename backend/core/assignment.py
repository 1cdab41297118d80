"""Which item a person should annotate next: k people per item, least-covered first, expiring reservations.

The state lives in the database (one row per reservation); these pure functions decide from those rows, so the
decision survives a server restart and is the same in every app. An assignment row is any mapping or object with
``item_id``, ``participant`` (who), ``status`` (``reserved``, ``done`` or ``released``) and ``reserved_at`` (epoch
seconds).

Coverage of an item = people who finished it + people holding a live (unexpired) reservation on it. A person gets:

1. the item they already hold a live reservation on (a reload resumes it), else
2. among items they have never finished or live-reserved and whose coverage is below ``per_item``, the one with
   the fewest finished ratings, then the fewest live reservations, then the earliest in the item list;
3. nothing (``None``) when every item is covered or already theirs.

In a pilot (``pilot_overlap``, a session key of both annotation apps) every annotator gets the same items: the items
handed out are `pilot_items` (the first ones of the list, as many as one person annotates) and ``per_item`` is None
(no cap), so each person is given every pilot item once, least-covered first, which varies the order between people.

How long a reservation lasts is the session key ``reservation_timeout_s`` (seconds, the same key, default and bounds in
both annotation apps): `reservation_timeout` reads it. The oTree side (the ``Assignment`` rows, reserving, finishing,
releasing, the export of who did what) is ``study_flow/assignments.py``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from backend.core import session_keys

STATUSES = ("reserved", "done", "released")

TIMEOUT_KEY = "reservation_timeout_s"
DEFAULT_TIMEOUT_S = 1800  # 30 minutes
MAX_TIMEOUT_S = 7 * 24 * 3600


def reservation_timeout(config: Mapping[str, Any]) -> float:
    """The session key ``reservation_timeout_s``: seconds from 1 to a week, `DEFAULT_TIMEOUT_S` when left out.

    The former minutes key of the payoff app is refused with what to set instead, so an old config cannot silently
    run with the default.

    >>> reservation_timeout({}), reservation_timeout({"reservation_timeout_s": "90"})
    (1800.0, 90.0)
    >>> reservation_timeout({"reservation_minutes": 30})
    Traceback (most recent call last):
    ...
    ValueError: The session key 'reservation_minutes' is no longer read: reservations are set in seconds. Set 'reservation_timeout_s' = 1800 instead.
    """
    if "reservation_minutes" in config:
        minutes = config["reservation_minutes"]
        try:
            hint = f"{float(minutes) * 60:g}"
        except (TypeError, ValueError):
            hint = "the minutes times 60"
        raise ValueError(
            "The session key 'reservation_minutes' is no longer read: reservations are set in seconds. "
            f"Set {TIMEOUT_KEY!r} = {hint} instead."
        )
    return session_keys.number(config, TIMEOUT_KEY, minimum=1, maximum=MAX_TIMEOUT_S, default=DEFAULT_TIMEOUT_S)


def _get(row: Any, name: str) -> Any:
    return row[name] if isinstance(row, Mapping) else getattr(row, name)


def is_live_reservation(row: Any, *, now: float, timeout_s: float) -> bool:
    """A reservation still held: status ``reserved`` and younger than ``timeout_s`` seconds.

    >>> is_live_reservation({"status": "reserved", "reserved_at": 100.0}, now=150.0, timeout_s=60)
    True
    >>> is_live_reservation({"status": "reserved", "reserved_at": 100.0}, now=161.0, timeout_s=60)
    False
    """
    if timeout_s <= 0:
        raise ValueError(f"The reservation timeout must be positive, got {timeout_s}.")
    return _get(row, "status") == "reserved" and now - float(_get(row, "reserved_at")) < timeout_s


def coverage(
    item_ids: Sequence[str], assignments: Iterable[Any], *, now: float, timeout_s: float
) -> dict[str, tuple[int, int]]:
    """For each item: (finished ratings, live reservations).

    >>> rows = [
    ...     {"item_id": "a", "participant": "p1", "status": "done", "reserved_at": 0},
    ...     {"item_id": "a", "participant": "p2", "status": "reserved", "reserved_at": 95},
    ...     {"item_id": "b", "participant": "p3", "status": "reserved", "reserved_at": 10},
    ... ]
    >>> coverage(["a", "b"], rows, now=100, timeout_s=60)
    {'a': (1, 1), 'b': (0, 0)}
    """
    done: Counter = Counter()
    live: Counter = Counter()
    for row in assignments:
        status = _get(row, "status")
        if status not in STATUSES:
            raise ValueError(f"Assignment status must be one of {STATUSES}, got {status!r}.")
        if status == "done":
            done[_get(row, "item_id")] += 1
        elif is_live_reservation(row, now=now, timeout_s=timeout_s):
            live[_get(row, "item_id")] += 1
    return {item: (done[item], live[item]) for item in item_ids}


def pilot_items(item_ids: Sequence[str], per_annotator: int) -> list[str]:
    """The items of a pilot: the first ``per_annotator`` of the list, which every annotator gets.

    >>> pilot_items(["a", "b", "c"], 2), pilot_items(["a"], 3)
    (['a', 'b'], ['a'])
    """
    if per_annotator < 1:
        raise ValueError(f"A pilot needs at least one item per annotator, got {per_annotator}.")
    return list(item_ids[:per_annotator])


def _open_candidates(
    item_ids: Sequence[str], rows: list[Any], *, participant: str, per_item: int | None, now: float, timeout_s: float
) -> list[tuple[int, int, int, str]]:
    """(finished, live, position, item) for items still open to ``participant``: not theirs, below ``per_item``
    (None: no cap, a pilot)."""
    if per_item is not None and per_item < 1:
        raise ValueError(f"Each item needs at least one annotator (per_item >= 1), got {per_item}.")
    if len(set(item_ids)) != len(item_ids):
        raise ValueError("The item ids must be unique.")
    mine_done = {
        _get(row, "item_id")
        for row in rows
        if _get(row, "participant") == participant and _get(row, "status") == "done"
    }
    counts = coverage(item_ids, rows, now=now, timeout_s=timeout_s)
    return [
        (done, live, position, item)
        for position, (item, (done, live)) in enumerate(counts.items())
        if item not in mine_done and (per_item is None or done + live < per_item)
    ]


def choose_item(
    item_ids: Sequence[str],
    assignments: Iterable[Any],
    *,
    participant: str,
    per_item: int | None,
    now: float,
    timeout_s: float,
) -> str | None:
    """The item ``participant`` should work on next, or None when nothing is left for them (see module doc);
    ``per_item`` None: no cap (a pilot, in which everyone gets every item).

    >>> rows = [
    ...     {"item_id": "a", "participant": "p1", "status": "done", "reserved_at": 0},
    ...     {"item_id": "b", "participant": "p2", "status": "reserved", "reserved_at": 90},
    ... ]
    >>> choose_item(["a", "b", "c"], rows, participant="p3", per_item=2, now=100, timeout_s=60)
    'c'
    >>> choose_item(["a", "b", "c"], rows, participant="p2", per_item=2, now=100, timeout_s=60)
    'b'
    >>> choose_item(["a"], rows, participant="p1", per_item=2, now=100, timeout_s=60) is None
    True
    >>> choose_item(["a", "b"], rows, participant="p1", per_item=None, now=100, timeout_s=60)  # a pilot: no cap
    'b'
    """
    rows = list(assignments)
    candidates = _open_candidates(
        item_ids, rows, participant=participant, per_item=per_item, now=now, timeout_s=timeout_s
    )
    mine_live = [
        _get(row, "item_id")
        for row in rows
        if _get(row, "participant") == participant and is_live_reservation(row, now=now, timeout_s=timeout_s)
    ]
    if mine_live:
        return mine_live[0]
    return min(candidates)[3] if candidates else None


def items_left_for(
    item_ids: Sequence[str],
    assignments: Iterable[Any],
    *,
    participant: str,
    per_item: int | None,
    now: float,
    timeout_s: float,
) -> int:
    """How many items could still be given to ``participant`` now (for "nothing left" pages and progress)."""
    rows = list(assignments)
    return len(
        _open_candidates(item_ids, rows, participant=participant, per_item=per_item, now=now, timeout_s=timeout_s)
    )
