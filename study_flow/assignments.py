"""Who annotates what, on the oTree side: the ``Assignment`` rows both annotation apps keep, and what they do with them.

The policy (which item next, coverage, when a reservation expires) is pure and lives in ``backend/core/assignment.py``;
this module stores its rows and hands them to it. ``social_eval`` and ``payoff_reasoning_eval`` share:

- one model, ``model(Subsession)``: the same columns with the same meaning in both apps (``participant_code``,
  ``reserved_at`` and ``finished_at`` in epoch seconds, ``status`` one of ``reserved``, ``done``, ``released``);
- ``reserve``, ``finish``, ``release`` and ``is_expired`` (the timeout is ``reservation_timeout_s``, in seconds, in
  both apps);
- ``policy_rows``: the rows as the policy reads them; ``held_rows``: a participant's unreleased rows of an item;
- ``log_rows``: who held or finished which item and when, with the Prolific identifiers; ``export``: those rows as
  an app's ``custom_export_assignments`` (each app keeps its own column names).

Rows are session-wide: they link to the round-1 subsession (``root``; ``root_id`` below is its id).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from otree.api import ExtraModel, models

import study_flow.lookups as lookups
import study_flow.tallies as tallies
from backend.core import assignment
from backend.core.csvio import iso_utc

from .entry import identifiers
from .tallies import policy_can_read, policy_rows  # noqa: F401  (the rows' readers live beside the tallies)

IDENTITY_COLUMNS = ("participant_code", "prolific_pid", "study_id", "prolific_session_id")


def model(subsession_class: type) -> type:
    """The app's ``Assignment`` ExtraModel, linked to its ``Subsession`` (oTree names the table after the app)."""

    class Assignment(ExtraModel):
        """Who holds or finished which item; session-wide, linked to the round-1 subsession."""

        __module__ = subsession_class.__module__  # the app's: oTree derives the table name from it
        subsession = models.Link(subsession_class)
        item_id = models.StringField()  # the episode id (social_eval) or the log file (payoff_reasoning_eval)
        participant_code = models.StringField()
        status = models.StringField()  # reserved, done or released
        reserved_at = models.FloatField()  # epoch seconds
        finished_at = models.FloatField(blank=True)  # epoch seconds, set when the status becomes done
        round_number = models.IntegerField()  # the round the item was given in
        is_gold = models.BooleanField()  # a gold item (attention check); the policy hands out the others

    tallies.follow(Assignment)  # the policy's counts kept in this process follow every write to its rows
    lookups.index(Assignment, "subsession_id", "participant_code", "item_id")  # held_rows, on every rating page
    return Assignment


def root(player_or_subsession):
    """The round-1 subsession of the app, which holds its session-wide rows (assignments, the items)."""
    subsession = getattr(player_or_subsession, "subsession", player_or_subsession)
    return subsession if subsession.round_number == 1 else subsession.in_round(1)


def reserve(
    Assignment, root_id: int, *, item_id: str, participant_code: str, round_number: int, now: float, is_gold=False
):
    """A new reservation row of ``item_id`` for the participant."""
    return Assignment.create(
        subsession_id=root_id,
        item_id=item_id,
        participant_code=participant_code,
        status="reserved",
        reserved_at=now,
        round_number=round_number,
        is_gold=is_gold,
    )


def finish(rows: Iterable[Any], *, now: float) -> None:
    """Mark the reserved ones among ``rows`` done at ``now``."""
    for row in rows:
        if row.status == "reserved":
            row.status, row.finished_at = "done", now


def release(row) -> None:
    """Give a reservation up: the item goes back to the pool; the row stays in the log."""
    row.status = "released"


def held_rows(Assignment, root_id: int, *, participant_code: str, item_id: str, round_number: int | None = None):
    """The participant's rows of ``item_id`` that were not released (of one round when ``round_number`` is given)."""
    where = dict(subsession_id=root_id, participant_code=participant_code, item_id=item_id)
    if round_number is not None:
        where["round_number"] = round_number
    session = Assignment.objects_filter().session  # the request's (asked on every rating page: compiled once)
    return [row for row in lookups.rows(session, Assignment, **where) if row.status != "released"]


def is_expired(row, *, now: float, timeout_s: float) -> bool:
    """A reservation older than the timeout (a done or released row never expires)."""
    policy_row = dict(
        item_id=row.item_id, participant=row.participant_code, status=row.status, reserved_at=row.reserved_at
    )
    return row.status == "reserved" and not assignment.is_live_reservation(policy_row, now=now, timeout_s=timeout_s)


def still_needed(Assignment, root_id: int, row, *, now: float, timeout_s: float, per_item: int | None) -> bool:
    """Whether the item of ``row`` lacks people without it (so the holder of an expired reservation may keep it);
    always in a pilot (``per_item`` None: everybody rates every pilot item)."""
    if per_item is None:
        return True
    others = policy_rows(Assignment, root_id, except_id=row.id)
    done, live = assignment.coverage([row.item_id], others, now=now, timeout_s=timeout_s)[row.item_id]
    return done + live < per_item


def log_rows(Assignment, players) -> Iterator[dict[str, Any]]:
    """Every assignment row of the sessions of ``players`` (times as ISO-8601 UTC, ``finished_at`` empty until done),
    with the participant's identifiers (empty for a participant not among ``players``), the study columns
    (``test_data.session_cells``) and ``integrity`` (what was wrong with a stored row; its readable cells are kept).
    Rows of test participants are left out of an export of all sessions (``test_data.exported``)."""
    import study_flow.test_data as test_data

    sessions, participants = {}, {}
    studied = test_data.exported(players)
    kept = {player.participant.code for player in studied}
    kept_sessions = {player.session.code for player in studied}
    for player in players:
        participants.setdefault(player.participant.code, player.participant)
        if player.round_number == 1 and player.session.code in kept_sessions:
            sessions.setdefault(player.session.code, player.subsession)
    for root in sessions.values():
        for row in Assignment.filter(subsession=root):
            participant = participants.get(row.participant_code)
            if participant is not None and row.participant_code not in kept:
                continue
            identity = identifiers(participant) if participant else dict.fromkeys(IDENTITY_COLUMNS, "")
            cells, problems = _readable_cells(row)
            yield dict(
                identity,
                **test_data.session_cells(root.session, participant),
                participant_code=row.participant_code,
                **cells,
                integrity="; ".join(problems),
            )


def _readable_cells(row) -> tuple[dict[str, Any], list[str]]:
    """An assignment row's cells for the log, and what was wrong with any of them (never an exception)."""
    problems = []

    def time_of(name):
        value = getattr(row, name, None)
        if value is None:
            return ""
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return iso_utc(value)
        problems.append(f"{name}: {str(value)[:40]!r} is not a time")
        return ""

    status = row.status
    if status not in assignment.STATUSES:
        problems.append(f"status: {str(status)[:40]!r} is not one of {', '.join(assignment.STATUSES)}")
    return (
        dict(
            item_id=row.item_id,
            status=status,
            reserved_at=time_of("reserved_at"),
            finished_at=time_of("finished_at") if status == "done" else "",
            round_number=row.round_number,
            is_gold=int(bool(row.is_gold)),
        ),
        problems,
    )


def export(Assignment, players, columns: Mapping[str, str]) -> Iterator[list[Any]]:
    """The assignment log as an export: a header of ``columns``' names, then per row the values of the `log_rows`
    keys they map to (``{"episode_id": "item_id", ...}``)."""
    yield list(columns)
    for row in log_rows(Assignment, players):
        yield [row[key] for key in columns.values()]
