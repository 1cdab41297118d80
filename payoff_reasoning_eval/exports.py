"""The app's downloads (oTree's ``custom_export*``) and its admin report."""

import time

import study_flow
from backend import codebook
from backend.core import annotator_quality
from backend.core.figures import page_figures
from backend.core.jsonable import jsonable
from backend.core.script_json import script_json
from backend.reasoning import task
from backend.reasoning.protocol import PROTOCOL_COLUMNS, export_cell
from lab_server import outputs
from study_flow import assignments, test_data

from .study import checked_verdict, log_files, session_players, settings_of, verdict_rows
from .tasks import assignment_rows


def vars_for_admin_report(subsession):
    from study_flow import test_data

    everyone = session_players(subsession.session)  # the downloads keep this session's tests, marked
    # Test participants (test links) are left out of the verdicts, figures and quality (study_flow.test_data).
    players, _ = test_data.report_rows(subsession.session, everyone, lambda player: (player.participant.code,))
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
        n_tests_left_out=len({p.participant.code for p in everyone} - {p.participant.code for p in players}),
        downloads_json=script_json(
            outputs.session_downloads(
                "payoff_reasoning_eval", "payoff_reasoning", SESSION_DOWNLOADS, everyone, subsession.session.code
            )
        ),
    )


def figures_of(verdicts, *, rule):
    """The figures of `python -m backend report --figures` for this session's verdicts (the confusion matrix)."""
    if not verdicts:
        return []
    # The report's modules load pandas and matplotlib: imported when the report is shown, not at start-up.
    from backend.reasoning import figures as reasoning_figures
    from backend.reasoning import report as reasoning_report

    groups = reasoning_report.summarise(reasoning_report.prepare_verdict_rows(list(verdicts)), rule=rule)
    return reasoning_figures.report_figures({"rule": rule, "groups": jsonable(groups)})


def quality_view(players):
    """The quality table's rows: one per judge with a finished verdict. Time per log: from its reservation to the
    verdict (the assignment log); agreement over the verdicts (first and, where asked, last response: 1 correct, 0
    not) of logs someone else judged too. The app has no gold logs, so the gold column stays empty."""
    from . import Assignment

    done = [p for p in players if p.field_maybe_none("con_mat") and not checked_verdict(p)[1]]
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


PROTOCOL = codebook.names("payoff_reasoning_eval", "custom_export")
PROTOCOL_WITH_IDS = codebook.names("payoff_reasoning_eval", "custom_export_protocol_with_ids")


def _protocol_rows(players):
    """Per finished verdict of the exported players: the protocol cells, the judge, session and time, integrity."""
    from . import Assignment

    finished = {
        (row["session_code"], row["participant_code"], row["item_id"]): row["finished_at"]
        for row in assignments.log_rows(Assignment, players)
        if row["status"] == "done"
    }
    for player in test_data.exported(players):
        if not player.field_maybe_none("con_mat"):
            continue
        cells, problems = checked_verdict(player)
        participant, code = player.participant, player.session.code
        row = {column: export_cell(column, cells[column]) for column in PROTOCOL_COLUMNS}
        row.update(test_data.session_cells(player.session, participant), **study_flow.identifiers(participant))
        row["judged_at"] = finished.get((code, participant.code, cells["file"]), "")
        row["integrity"] = "; ".join(problems)
        yield row


def protocol(players):
    """The protocol: the published 12 columns, then (beside them) the judge's code, the session and the time."""
    yield list(PROTOCOL)
    for row in _protocol_rows(players):
        yield [row[column] for column in PROTOCOL]


def protocol_with_ids(players):
    """The protocol's 12 columns, then who judged (with Prolific IDs), in which session and study, and when."""
    yield list(PROTOCOL_WITH_IDS)
    for row in _protocol_rows(players):
        yield [row[column] for column in PROTOCOL_WITH_IDS]


def assignment_log(players):
    """Who judged which log and when (reservations included; ISO-8601 UTC times), for auditing the assignment."""
    from . import Assignment

    columns = codebook.names("payoff_reasoning_eval", "custom_export_assignments")
    sources = {"file": "item_id"}
    return assignments.export(Assignment, players, {name: sources.get(name, name) for name in columns})


# The exports the admin report offers for its own session (oTree's custom exports hold every session's rows).
SESSION_DOWNLOADS = (
    ("Protocol with judges and times", protocol_with_ids, "protocol_with_ids"),
    ("Assignment log", assignment_log, "assignments"),
)


codebook_export = codebook.export_function("payoff_reasoning_eval")  # the Data page's download of this app's codebook
