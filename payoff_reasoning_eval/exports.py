"""The app's downloads (oTree's ``custom_export*``) and its admin report."""

import time

import study_flow
from backend.core import annotator_quality
from backend.core.figures import page_figures
from backend.core.jsonable import jsonable
from backend.core.script_json import script_json
from backend.reasoning import figures as reasoning_figures
from backend.reasoning import report as reasoning_report
from backend.reasoning import task
from backend.reasoning.protocol import PROTOCOL_COLUMNS, export_cell
from lab_server.outputs import export_csv_text
from study_flow import assignments

from .study import log_files, session_players, settings_of, verdict_rows
from .tasks import assignment_rows


def vars_for_admin_report(subsession):
    players = session_players(subsession.session)
    settings = settings_of(subsession.session)
    verdicts = verdict_rows(players)
    report = task.admin_report(
        log_files(subsession),
        assignment_rows(subsession),
        verdicts,
        settings=settings,
        session_code=subsession.session.code,
        now=time.time(),
    )
    return dict(
        report,
        pilot_overlap=settings.pilot_overlap,
        figures=page_figures(figures_of(verdicts, rule=settings.aggregation_rule)),
        quality=quality_view(players),
        quality_columns=annotator_quality.QUALITY_COLUMNS,
        quality_floor_s=f"{settings.quality_floor_s:g}",
        downloads_json=script_json(
            [
                dict(
                    label=label,
                    file=f"payoff_reasoning_{name}_{subsession.session.code}.csv",
                    csv=export_csv_text(function(players)),
                )
                for label, function, name in SESSION_DOWNLOADS
            ]
        ),
    )


def figures_of(verdicts, *, rule):
    """The figures of `python -m backend report --figures` for this session's verdicts (the confusion matrix)."""
    if not verdicts:
        return []
    groups = reasoning_report.summarise(reasoning_report.prepare_verdict_rows(list(verdicts)), rule=rule)
    return reasoning_figures.report_figures({"rule": rule, "groups": jsonable(groups)})


def quality_view(players):
    """The quality table's rows: one per judge with a finished verdict. Time per log: from its reservation to the
    verdict (the assignment log); agreement over the verdicts (first and, where asked, last response: 1 correct, 0
    not) of logs someone else judged too. The app has no gold logs, so the gold column stays empty."""
    from . import Assignment

    done = [p for p in players if p.field_maybe_none("con_mat")]
    times = {}
    for p in done:
        for row in Assignment.filter(subsession=assignments.root(p), participant_code=p.participant.code):
            if row.item_id == p.log_file and row.status == "done":
                times[(p.participant.code, p.log_file)] = row.finished_at - row.reserved_at
    items = [(p.participant.code, times.get((p.participant.code, p.log_file)), None) for p in done]
    ratings = [
        (p.participant.code, (p.log_file, column), p.field_maybe_none(column))
        for p in done
        for column in ("orig_cor", "fin_cor")
    ]
    labels = {}
    for p in done:
        pid = study_flow.identifiers(p.participant)["prolific_pid"]
        labels[p.participant.code] = f"{p.participant.code} ({pid})" if pid else p.participant.code
    floor_s = settings_of(done[0].session).quality_floor_s if done else 0
    qualities = annotator_quality.annotator_quality(items, ratings, floor_s=floor_s)
    return annotator_quality.quality_rows(qualities, labels=labels)


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


# The exports the admin report offers for its own session (oTree's custom exports hold every session's rows).
SESSION_DOWNLOADS = (
    ("Protocol with judges and times", protocol_with_ids, "protocol_with_ids"),
    ("Assignment log", assignment_log, "assignments"),
)
