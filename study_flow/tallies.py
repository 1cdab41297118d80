"""The assignment policy's tallies of a session, kept in this process: choosing an item costs the same at the first
annotator and at the three-thousandth.

``backend.core.assignment.choose_item`` reads every regular row of the session (a row per annotator and task), and
reading them was the cost of a page step that grew with the session: 6,000 rows near the end of a 3,000-person
launch, read twice per annotator, were 8 ms of SQL and as much of Python each time (docs/performance.md). Here the
rows are read once per session and ``REFRESH_S``; between those reads the tallies follow every change the ORM
writes to an ``Assignment`` row:

- a change is noted when it is flushed (``after_insert``/``after_update``/``after_delete``) in the SQLAlchemy session
  that made it, and goes into the tallies when that session commits; a rollback drops it. A request that has
  changed rows and not committed yet (a rating page finished, then the next episode chosen) sees its own changes on
  top of the tallies, as a query would;
- what is stored stays the truth: the tallies are read again every ``REFRESH_S`` seconds, so a change made behind
  the ORM's back (a database edited by hand, a restore) counts within that time; a row the policy cannot read
  (``assignments._usable``) counts as absent, as in ``policy_rows``.

The choice itself is ``backend.core.assignment.choose_from_tallies`` (numpy over the items), the same function
``choose_item`` ends in. ``study_flow/assignments.py`` keeps the rows and follows them (``follow``, for each app's model); ``social_eval``
chooses an episode through ``choose``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import sqlalchemy
from sqlalchemy.orm import Session, object_session

from backend.core import assignment

REFRESH_S = 60.0  # the tallies are read again from the database after this long
PENDING = "lab_assignment_changes"  # session.info: (table, row id) -> the row's new state (None: deleted)

_kept: dict[tuple[str, int], Tallies] = {}  # (table, round-1 subsession id) -> its tallies


@dataclass
class Tallies:
    """One session's regular rows as the policy counts them: finished ratings per item, reservations, who finished
    what. ``rows``: row id -> (item, participant, status, reserved_at) of every readable regular row."""

    loaded_at: float
    rows: dict[int, tuple] = field(default_factory=dict)
    done: dict[str, int] = field(default_factory=dict)
    reserved: dict[int, tuple] = field(default_factory=dict)  # row id -> (item, participant, reserved_at)
    finished_by: dict[str, dict[str, int]] = field(default_factory=dict)  # participant -> item -> done rows

    def apply(self, row_id: int, state: tuple | None) -> None:
        """Row ``row_id`` is now ``state`` (item, participant, status, reserved_at), or gone (None)."""
        old = self.rows.pop(row_id, None)
        if old is not None:
            self._count(row_id, old, -1)
        if state is not None and _readable(state):
            self.rows[row_id] = state
            self._count(row_id, state, +1)

    def _count(self, row_id: int, state: tuple, step: int) -> None:
        item, participant, status, reserved_at = state
        if status == "done":
            self.done[item] = self.done.get(item, 0) + step
            mine = self.finished_by.setdefault(participant, {})
            mine[item] = mine.get(item, 0) + step
        elif status == "reserved":
            if step > 0:
                self.reserved[row_id] = (item, participant, reserved_at)
            else:
                self.reserved.pop(row_id, None)


def _readable(state: tuple) -> bool:
    from .assignments import _usable

    return _usable(state[2], state[3])


def _state(row) -> tuple:
    return (row.item_id, row.participant_code, row.status, row.reserved_at)


def load(Assignment, root_id: int, *, now: float) -> Tallies:
    """The tallies of the session's regular rows as stored."""
    tallies = Tallies(loaded_at=now)
    query = Assignment.objects_filter(subsession_id=root_id, is_gold=False).with_entities(
        Assignment.id, Assignment.item_id, Assignment.participant_code, Assignment.status, Assignment.reserved_at
    )
    for row_id, *state in query:
        tallies.apply(row_id, tuple(state))
    return tallies


def choose(
    session,
    Assignment,
    root_id: int,
    item_ids: list[str],
    *,
    participant: str,
    per_item: int | None,
    now: float,
    timeout_s: float,
) -> str | None:
    """``backend.core.assignment.choose_item`` over the session's regular rows, from the kept tallies and the
    changes ``session`` (the request's SQLAlchemy session) has made and not committed yet."""
    assignment.check_choice(item_ids, per_item=per_item, timeout_s=timeout_s)
    session.flush()  # this request's changes, noted as they are written (what a query's autoflush did)
    table = Assignment.__table__.name
    pending = {
        row_id: state
        for (name, row_id), state in session.info.get(PENDING, {}).items()
        if name == table and (state is None or state[0] == root_id)
    }
    key = (table, root_id)
    tallies = _kept.get(key)
    if tallies is None or time.monotonic() - tallies.loaded_at > REFRESH_S:
        if pending:  # a read now would hold this request's changes, which may yet be rolled back
            from .assignments import policy_rows

            rows = policy_rows(Assignment, root_id)
            return assignment.choose_item(
                item_ids, rows, participant=participant, per_item=per_item, now=now, timeout_s=timeout_s
            )
        tallies = _kept[key] = load(Assignment, root_id, now=time.monotonic())
    return from_tallies(
        tallies, pending, item_ids, participant=participant, per_item=per_item, now=now, timeout_s=timeout_s
    )


def from_tallies(
    tallies: Tallies,
    pending: dict,
    item_ids: list[str],
    *,
    participant: str,
    per_item: int | None,
    now: float,
    timeout_s: float,
) -> str | None:
    """The choice from ``tallies`` with the uncommitted changes ``pending`` (row id -> (root id, item, participant,
    status, reserved_at), or None for a deleted row) on top."""
    done_change: dict[str, int] = {}
    mine = dict(tallies.finished_by.get(participant, {}))
    reserved = dict(tallies.reserved)
    for row_id, state in pending.items():
        old, new = tallies.rows.get(row_id), None if state is None else tuple(state[1:])
        for step, counted in ((-1, old), (+1, new)):
            if counted is None or not _readable(counted):
                continue
            item, who, status, reserved_at = counted
            if status == "done":
                done_change[item] = done_change.get(item, 0) + step
                if who == participant:
                    mine[item] = mine.get(item, 0) + step
            elif status == "reserved":
                if step < 0:
                    reserved.pop(row_id, None)
                else:
                    reserved[row_id] = (item, who, reserved_at)
    count = len(item_ids)
    done = np.fromiter(
        (tallies.done.get(item, 0) + done_change.get(item, 0) for item in item_ids), dtype=np.int64, count=count
    )
    mine_done = np.fromiter((mine.get(item, 0) > 0 for item in item_ids), dtype=bool, count=count)
    position = {item: index for index, item in enumerate(item_ids)} if reserved else {}
    live, resumed = np.zeros(count, dtype=np.int64), []
    for row_id in sorted(reserved):
        item, who, reserved_at = reserved[row_id]
        if now - float(reserved_at) < timeout_s:
            index = position.get(item)
            if index is not None:
                live[index] += 1
            if who == participant:
                resumed.append(item)
    return assignment.choose_from_tallies(item_ids, done, live, mine_done, resumed, per_item=per_item)


# -- following the ORM's writes -------------------------------------------------------------------------------------
def _noted(mapper, connection, target) -> None:
    session = object_session(target)
    if session is not None and not target.is_gold:  # gold rows are never counted
        state = (target.subsession_id, *_state(target))
        session.info.setdefault(PENDING, {})[(target.__table__.name, target.id)] = state


def _deleted(mapper, connection, target) -> None:
    session = object_session(target)
    if session is not None:
        session.info.setdefault(PENDING, {})[(target.__table__.name, target.id)] = None


def _committed(session) -> None:
    for (table, row_id), state in session.info.pop(PENDING, {}).items():
        if state is None:
            for (kept_table, _), tallies in _kept.items():
                if kept_table == table:
                    tallies.apply(row_id, None)
            continue
        tallies = _kept.get((table, state[0]))
        if tallies is not None:
            tallies.apply(row_id, tuple(state[1:]))


def _rolled_back(session) -> None:
    session.info.pop(PENDING, None)


def follow(Assignment) -> None:
    """Note every write to ``Assignment``'s rows (once per model class)."""
    for name, listener in (("after_insert", _noted), ("after_update", _noted), ("after_delete", _deleted)):
        if not sqlalchemy.event.contains(Assignment, name, listener):
            sqlalchemy.event.listen(Assignment, name, listener)
    for name, listener in (("after_commit", _committed), ("after_rollback", _rolled_back)):
        if not sqlalchemy.event.contains(Session, name, listener):
            sqlalchemy.event.listen(Session, name, listener)


def kept(table: str, root_id: int) -> Tallies | None:
    """The tallies kept for a session (for tests and the status page), or None."""
    return _kept.get((table, root_id))


def forget() -> None:
    """Drop every kept tally (the next choice reads the rows again)."""
    _kept.clear()
