"""The assignment policy's tallies of a session, kept in this process: choosing an item costs the same at the first
annotator and at the three-thousandth.

``backend.core.assignment.choose_item`` reads every regular row of the session (a row per annotator and task), a cost
that grows with the session (docs/decisions/0009-a-page-step-costs-the-same-at-any-size.md). Here the rows are read
once per session and ``REFRESH_S``; between those reads the tallies follow every change the ORM writes to an
``Assignment`` row:

- a change is noted when it is flushed (``after_insert``/``after_update``/``after_delete``) in the SQLAlchemy session
  that made it, and goes into the tallies when that session commits; a rollback drops it. A request that has
  changed rows and not committed yet (a rating page finished, then the next episode chosen) sees its own changes on
  top of the tallies, as a query would;
- what is stored stays the truth: the tallies are read again every ``REFRESH_S`` seconds, so a change made behind
  the ORM's back (a database edited by hand, a restore) counts within that time; a row the policy cannot read
  (`policy_can_read`) counts as absent, as in `policy_rows`.

The choice itself is ``backend.core.assignment.choose_from_tallies`` (numpy over the items), the same function
``choose_item`` ends in. ``study_flow/assignments.py`` keeps the rows and follows them (``follow``, for each app's model); ``social_eval``
chooses an episode through ``choose``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sqlalchemy
from sqlalchemy.orm import Session, object_session

from backend.core import assignment

REFRESH_S = 60.0  # the tallies are read again from the database after this long
PENDING = "lab_assignment_changes"  # session.info: (table, row id) -> the row's new state (None: deleted)
INSERTED = "lab_assignment_inserted"  # session.info: (table, row id) of the rows this transaction added

FORGET_S = 3600.0  # tallies not used for this long are dropped (the sessions a process served stay few)
_kept: dict[tuple[str, int], Tallies] = {}  # (table, round-1 subsession id) -> its tallies


@dataclass
class Tallies:
    """One session's regular rows as the policy counts them: finished ratings per item, reservations, who finished
    what. ``rows``: row id -> (item, participant, status, reserved_at) of every readable regular row."""

    loaded_at: float
    owner: str = ""  # the oTree session's code: SQLite gives a deleted session's ids to the next one
    used_at: float = 0.0
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


def policy_rows(Assignment, root_id: int, *, except_id: int | None = None) -> list[dict[str, Any]]:
    """The session's regular (non-gold) rows in order, as the dicts ``backend.core.assignment`` reads. Five columns
    as plain tuples: a session has a row per annotator and task, and whole ORM rows made this the costliest read of
    a page step."""
    query = (
        Assignment.objects_filter(subsession_id=root_id, is_gold=False)
        .order_by(Assignment.id)
        .with_entities(
            Assignment.id, Assignment.item_id, Assignment.participant_code, Assignment.status, Assignment.reserved_at
        )
    )
    return [
        dict(item_id=item_id, participant=participant_code, status=status, reserved_at=reserved_at)
        for row_id, item_id, participant_code, status, reserved_at in query
        if row_id != except_id and policy_can_read(status, reserved_at)
    ]


def policy_can_read(status, reserved_at) -> bool:
    """Whether a stored row can be read by the policy: a known status, and a reservation with a time. A row that
    cannot (corrupted by hand, say) is left out of the policy, so its item may be handed out again, and is flagged in
    the export (``integrity``), never failing a page or a report."""
    if status not in assignment.STATUSES:
        return False
    number = isinstance(reserved_at, (int, float)) and not isinstance(reserved_at, bool)
    return status != "reserved" or (number and math.isfinite(reserved_at))


def _readable(state: tuple) -> bool:
    return policy_can_read(state[2], state[3])


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
    owner: str,
    participant: str,
    per_item: int | None,
    now: float,
    timeout_s: float,
) -> str | None:
    """``backend.core.assignment.choose_item`` over the regular rows of the oTree session ``owner`` (its code), from
    the kept tallies and the changes ``session`` (the request's SQLAlchemy session) has made and not committed yet."""
    assignment.check_choice(item_ids, per_item=per_item, timeout_s=timeout_s)
    session.flush()  # this request's changes, noted as they are written (what a query's autoflush did)
    table = Assignment.__table__.name
    pending = {
        row_id: state
        for (name, row_id), state in session.info.get(PENDING, {}).items()
        if name == table and (state is None or state[0] == root_id)
    }
    key, clock = (table, root_id), time.monotonic()
    tallies = _kept.get(key)
    if tallies is not None and tallies.owner != owner:
        tallies = None  # a deleted session's tallies, for a new session that got its ids
    if tallies is None or clock - tallies.loaded_at > REFRESH_S:
        inserted = {row_id for name, row_id in session.info.get(INSERTED, ()) if name == table}
        fresh = _read_again(Assignment, root_id, pending, inserted, old=tallies, now=clock)
        if fresh is None:  # a request's own changes to rows not known before: read as the policy reads them
            rows = policy_rows(Assignment, root_id)
            return assignment.choose_item(
                item_ids, rows, participant=participant, per_item=per_item, now=now, timeout_s=timeout_s
            )
        fresh.owner, fresh.used_at = owner, clock
        _forget_unused(clock)
        tallies = _kept[key] = fresh
    tallies.used_at = clock
    return from_tallies(
        tallies, pending, item_ids, participant=participant, per_item=per_item, now=now, timeout_s=timeout_s
    )


def _read_again(
    Assignment, root_id: int, pending: dict, inserted: set, *, old: Tallies | None, now: float
) -> Tallies | None:
    """The tallies as stored, without this request's uncommitted changes (``pending``): a row it changed counts as
    it was committed (as the old tallies have it), a row it added not at all. None when a changed row's committed
    state is unknown (no old tallies)."""
    tallies = load(Assignment, root_id, now=now)
    for row_id in pending:
        if row_id in inserted:
            tallies.apply(row_id, None)
        elif old is not None:
            tallies.apply(row_id, old.rows.get(row_id))
        else:
            return None
    return tallies


def _forget_unused(clock: float) -> None:
    for key in [key for key, kept in _kept.items() if clock - kept.used_at > FORGET_S]:
        del _kept[key]


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
    if session is not None and target.is_gold is False:  # gold rows are never counted
        state = (target.subsession_id, *_state(target))
        session.info.setdefault(PENDING, {})[(target.__table__.name, target.id)] = state


def _inserted(mapper, connection, target) -> None:
    _noted(mapper, connection, target)
    session = object_session(target)
    if session is not None:
        session.info.setdefault(INSERTED, set()).add((target.__table__.name, target.id))


def _deleted(mapper, connection, target) -> None:
    session = object_session(target)
    if session is not None:
        session.info.setdefault(PENDING, {})[(target.__table__.name, target.id)] = None


def _committed(session) -> None:
    session.info.pop(INSERTED, None)
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
    session.info.pop(INSERTED, None)


def follow(Assignment) -> None:
    """Note every write to ``Assignment``'s rows (once per model class)."""
    for name, listener in (("after_insert", _inserted), ("after_update", _noted), ("after_delete", _deleted)):
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
