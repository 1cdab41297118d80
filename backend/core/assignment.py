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

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from backend.core import session_keys

STATUSES = ("reserved", "done", "released")

TIMEOUT_KEY = "reservation_timeout_s"
DEFAULT_TIMEOUT_S = 1800  # 30 minutes
MAX_TIMEOUT_S = 7 * 24 * 3600


def reservation_timeout(config: Mapping[str, Any]) -> float:
    """The session key ``reservation_timeout_s``: seconds from 1 to a week, `DEFAULT_TIMEOUT_S` when left out.

    >>> reservation_timeout({}), reservation_timeout({"reservation_timeout_s": "90"})
    (1800.0, 90.0)
    """
    refuse_former_minutes(config)
    return session_keys.checked(Reservation, config).reservation_timeout_s


def refuse_former_minutes(config: Mapping[str, Any]) -> None:
    """The former minutes key of the payoff app is refused with what to set instead, so an old config cannot
    silently run with the default.

    >>> refuse_former_minutes({"reservation_minutes": 30})
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


class Reservation(session_keys.Keys):
    """The one key of a reservation; an app's own model words it for its tasks (a conversation, a log)."""

    reservation_timeout_s: session_keys.Number = session_keys.key(
        DEFAULT_TIMEOUT_S, "Hold a task (seconds)", ge=1, le=MAX_TIMEOUT_S
    )
    """After this an unfinished task goes to someone else."""


def minutes_shown(timeout_s: float) -> int:
    """The reservation in whole minutes as a page states it: rounded up and at least 1 (a 20 s reservation read
    "reserved for you for 0 minutes" when rounded).

    >>> minutes_shown(20), minutes_shown(60), minutes_shown(90), minutes_shown(1800)
    (1, 1, 2, 30)
    """
    return max(1, math.ceil(float(timeout_s) / 60))


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


def check_choice(item_ids: Sequence[str], *, per_item: int | None, timeout_s: float) -> None:
    """Refuse arguments no choice can be made with (``per_item`` below 1, repeated item ids, a timeout not above 0)."""
    if per_item is not None and per_item < 1:
        raise ValueError(f"Each item needs at least one annotator (per_item >= 1), got {per_item}.")
    if len(set(item_ids)) != len(item_ids):
        raise ValueError("The item ids must be unique.")
    if timeout_s <= 0:
        raise ValueError(f"The reservation timeout must be positive, got {timeout_s}.")


def tallies(
    item_ids: Sequence[str], rows: list[Any], *, participant: str, now: float, timeout_s: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """What the policy reads of the rows, per position of ``item_ids``: finished ratings, live reservations, and
    whether ``participant`` finished the item (int, int and bool arrays); and the items of the participant's own live
    reservations, in row order (the first one is resumed).

    >>> rows = [{"item_id": "b", "participant": "p1", "status": "done", "reserved_at": 0},
    ...         {"item_id": "a", "participant": "p2", "status": "reserved", "reserved_at": 95}]
    >>> done, live, mine, resumed = tallies(["a", "b"], rows, participant="p1", now=100, timeout_s=60)
    >>> done.tolist(), live.tolist(), mine.tolist(), resumed
    ([0, 1], [1, 0], [False, True], [])
    """
    position = {item: index for index, item in enumerate(item_ids)}
    done, live = np.zeros(len(item_ids), dtype=np.int64), np.zeros(len(item_ids), dtype=np.int64)
    mine_done, resumed = np.zeros(len(item_ids), dtype=bool), []
    for row in rows:
        status, item = _get(row, "status"), _get(row, "item_id")
        if status not in STATUSES:
            raise ValueError(f"Assignment status must be one of {STATUSES}, got {status!r}.")
        index, own = position.get(item), _get(row, "participant") == participant
        if status == "done":
            if index is not None:
                done[index] += 1
                mine_done[index] |= own
        elif is_live_reservation(row, now=now, timeout_s=timeout_s):
            if index is not None:
                live[index] += 1
            if own:
                resumed.append(item)
    return done, live, mine_done, resumed


def open_items(done: np.ndarray, live: np.ndarray, mine_done: np.ndarray, *, per_item: int | None) -> np.ndarray:
    """Positions of the items still open to the participant, in list order: not finished by them and, unless
    ``per_item`` is None (a pilot: no cap), with fewer than ``per_item`` finished ratings and live reservations."""
    mask = ~mine_done
    if per_item is not None:
        mask &= done + live < per_item
    return np.flatnonzero(mask)


def pick(done: np.ndarray, live: np.ndarray, mine_done: np.ndarray, *, per_item: int | None) -> int | None:
    """The position of the open item with the fewest finished ratings, then the fewest live reservations, then the
    earliest in the list; None when none is open. numpy over the items: its cost does not grow with the rows.

    >>> pick(np.array([1, 0, 0]), np.array([0, 1, 0]), np.array([False, False, False]), per_item=2)
    2
    >>> pick(np.array([2, 1]), np.array([0, 1]), np.array([False, False]), per_item=2) is None
    True
    """
    candidates = open_items(done, live, mine_done, per_item=per_item)
    if not len(candidates):
        return None
    candidates = candidates[done[candidates] == done[candidates].min()]
    candidates = candidates[live[candidates] == live[candidates].min()]
    return int(candidates[0])


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
    if timeout_s <= 0:
        raise ValueError(f"The reservation timeout must be positive, got {timeout_s}.")
    done, live, _, _ = tallies(list(item_ids), list(assignments), participant="", now=now, timeout_s=timeout_s)
    return {item: (int(done[index]), int(live[index])) for index, item in enumerate(item_ids)}


def pilot_items(item_ids: Sequence[str], per_annotator: int) -> list[str]:
    """The items of a pilot: the first ``per_annotator`` of the list, which every annotator gets.

    >>> pilot_items(["a", "b", "c"], 2), pilot_items(["a"], 3)
    (['a', 'b'], ['a'])
    """
    if per_annotator < 1:
        raise ValueError(f"A pilot needs at least one item per annotator, got {per_annotator}.")
    return list(item_ids[:per_annotator])


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
    check_choice(item_ids, per_item=per_item, timeout_s=timeout_s)
    found = tallies(item_ids, list(assignments), participant=participant, now=now, timeout_s=timeout_s)
    return choose_from_tallies(item_ids, *found, per_item=per_item)


def choose_from_tallies(
    item_ids: Sequence[str],
    done: np.ndarray,
    live: np.ndarray,
    mine_done: np.ndarray,
    resumed: Sequence[str],
    *,
    per_item: int | None,
) -> str | None:
    """``choose_item`` from tallies already made (``tallies``, or kept up to date by a caller that keeps the rows):
    the participant's first live reservation, else the open item ``pick`` finds."""
    if resumed:
        return resumed[0]
    position = pick(done, live, mine_done, per_item=per_item)
    return None if position is None else item_ids[position]


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
    check_choice(item_ids, per_item=per_item, timeout_s=timeout_s)
    done, live, mine_done, _ = tallies(
        item_ids, list(assignments), participant=participant, now=now, timeout_s=timeout_s
    )
    return len(open_items(done, live, mine_done, per_item=per_item))
