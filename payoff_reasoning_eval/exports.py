"""The app's downloads (oTree's ``custom_export*``) and its admin report."""

import time

import study_flow
from backend.reasoning import task
from backend.reasoning.protocol import PROTOCOL_COLUMNS, export_cell
from study_flow import assignments

from .study import log_files, session_players, settings_of, verdict_rows
from .tasks import assignment_rows


def vars_for_admin_report(subsession):
    return task.admin_report(
        log_files(subsession),
        assignment_rows(subsession),
        verdict_rows(session_players(subsession.session)),
        settings=settings_of(subsession.session),
        session_code=subsession.session.code,
        now=time.time(),
    )


def protocol(players):
    """The protocol's CSV (comma-separated, as oTree writes every export); one row per judge and log."""
    yield list(PROTOCOL_COLUMNS)
    for row in verdict_rows(players):
        yield [export_cell(column, row[column]) for column in PROTOCOL_COLUMNS]


def protocol_with_ids(players):
    """The protocol's 12 columns plus who judged, in which session and study, and when (ISO-8601 UTC)."""
    from . import Assignment

    yield [*PROTOCOL_COLUMNS, *task.IDENTITY_COLUMNS]
    finished = {
        (row["session_code"], row["participant_code"], row["item_id"]): row["finished_at"]
        for row in assignments.log_rows(Assignment, players)
        if row["status"] == "done"
    }
    for player in players:
        if not player.field_maybe_none("con_mat"):
            continue
        [row] = verdict_rows([player])
        participant, code = player.participant, player.session.code
        ids = study_flow.identifiers(participant)
        yield [export_cell(column, row[column]) for column in PROTOCOL_COLUMNS] + [
            participant.code,
            ids["prolific_pid"],
            ids["study_id"],
            code,
            finished.get((code, participant.code, player.log_file), ""),
        ]


# The assignment log's columns: export name <- the row's column (study_flow.assignments.log_rows).
ASSIGNMENT_COLUMNS = {
    "session_code": "session_code",
    "file": "item_id",
    "participant_code": "participant_code",
    "status": "status",
    "reserved_at": "reserved_at",
    "finished_at": "finished_at",
    "prolific_pid": "prolific_pid",
    "study_id": "study_id",
}


def assignment_log(players):
    """Who judged which log and when (reservations included; ISO-8601 UTC times), for auditing the assignment."""
    from . import Assignment

    return assignments.export(Assignment, players, ASSIGNMENT_COLUMNS)
