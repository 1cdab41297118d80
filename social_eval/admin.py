"""The admin report's variables: coverage, live reservations, figures per dimension, qualification, and the quality
view per annotator (time per episode, gold accuracy, agreement with the others: backend/core/annotator_quality.py)."""

import study_flow
from backend.core import annotator_quality, assignment, clock
from backend.core.jsonable import jsonable
from backend.core.script_json import script_json
from backend.social import forms as social_forms
from lab_server import outputs
from study_flow import assignments

from . import exports
from .exports import qualification, record
from .study import all_players, episode, finished_players, root, rubric, settings_of, study


def report_data(records, session_rubric, settings):
    """This session's report data, as ``python -m backend report --json`` gives it for the session's long export:
    ``summary`` (regular episodes, the rubric's dimensions) and ``quality`` per annotator
    (``backend.social.quality.annotator_qualities``); also the ratings frame, for the charts."""
    if not records:
        return {"summary": [], "quality": [], "quality_floor_s": settings.quality_floor_s}, None
    import pandas as pd

    from backend.social import quality as social_quality
    from backend.social import report as social_report

    table = pd.DataFrame(records)
    ratings = social_report.ratings_from_export(table)
    regular = ratings[~ratings["is_gold"]]
    summary = []
    if not regular.empty:
        # Without the bootstrap: this page is drawn under oTree's lock, which every participant's page waits for
        # (the intervals took about 6 s of a 15 s draw at 21,000 ratings); the report and paper tables carry them.
        summary = social_report.summarise(regular, dimensions=session_rubric.keys, pooled_group=None, intervals=False)
        summary = [jsonable(row) for row in summary.to_dict("records")]
    qualities = social_quality.annotator_qualities(
        social_quality.annotation_table(table), ratings, floor_s=settings.quality_floor_s
    )
    data = {
        "summary": summary,
        "quality": social_quality.quality_records(qualities),
        "quality_floor_s": settings.quality_floor_s,
    }
    return data, regular


def summary_rows(data):
    """The summary table's rows: both agents' rows, figures to two decimals, "-" where there is none."""
    return [
        {
            key: "-" if value is None else (round(value, 2) if isinstance(value, float) else value)
            for key, value in row.items()
        }
        for row in data["summary"]
        if row["scope"] == "both"
    ]


def rating_charts(regular, session_rubric):
    """Per dimension, how many regular ratings each choice got (the Chart.js bars)."""
    if regular is None or regular.empty:
        return []
    charts = []
    for dimension in session_rubric.dimensions:
        values = regular.loc[regular["dimension"] == dimension.key, "rating"]
        charts.append(
            dict(
                key=dimension.key,
                label=dimension.label,
                values=dimension.choices,
                human=[int((values == v).sum()) for v in dimension.choices],
            )
        )
    return charts


def quality_labels(players):
    """The label (code and Prolific ID) the quality table shows for each annotator who finished an episode."""
    labels = {}
    for p in finished_players(players):
        pid = study_flow.identifiers(p.participant)["prolific_pid"]
        labels[p.participant.code] = f"{p.participant.code} ({pid})" if pid else p.participant.code
    return labels


def quality_table(data, players):
    """The quality table's rows, from the report data's ``quality`` records."""
    from backend.social import quality as social_quality

    qualities = [
        annotator_quality.AnnotatorQuality(**social_quality.quality_fields(record)) for record in data["quality"]
    ]
    return annotator_quality.quality_rows(qualities, labels=quality_labels(players))


def vars_for_admin_report(subsession):
    # The report's modules load pandas, scipy and matplotlib: imported when the report is shown, not at start-up.
    from backend.core.figures import page_figures
    from backend.social import figures as social_figures
    from backend.social import report as social_report
    from study_flow import test_data

    from . import Assignment

    root_subsession, session = root(subsession), subsession.session
    session_rubric, ids, settings = rubric(session), study(session), settings_of(session)
    everyone = all_players(root_subsession)  # the downloads keep this session's tests, marked
    # Test participants (test links) are left out of every figure and count (study_flow.test_data, the one rule).
    players, _ = test_data.report_rows(session, everyone, lambda player: (player.participant.code,))
    k = settings.annotators_per_episode
    counts = assignment.coverage(
        ids["regular_ids"],
        assignments.policy_rows(Assignment, root_subsession.id),
        now=clock.now(),
        timeout_s=settings.reservation_timeout_s,
    )
    coverage = social_report.coverage_counts({item: done for item, (done, _) in counts.items()}, per_item=k)
    records = []
    for player in finished_players(players):
        rated = episode(session.code, root_subsession.id, player.episode_id)
        records += social_forms.long_rows(record(player), rated, session_rubric)
    data, regular = report_data(records, session_rubric, settings)
    qualified = qualification(players, session)
    return dict(
        k=k,
        n_regular=len(ids["regular_ids"]),
        n_gold=len(ids["gold_ids"]),
        coverage=[dict(ratings=n, episodes=count) for n, count in coverage.items()],
        complete=coverage.get(k, 0),
        live_reservations=sum(live for _, live in counts.values()),
        n_annotators=len({p.participant.code for p in finished_players(players)}),
        summary=summary_rows(data),
        chart_json=script_json(rating_charts(regular, session_rubric)),
        n_attention=len(qualified),
        n_qualified=sum(entry["qualified"] for entry in qualified.values()),
        qualification_mode=settings.qualification_mode,
        pilot_overlap=settings.pilot_overlap,
        n_pilot=len(settings.handed_out(ids["regular_ids"])),
        quality=quality_table(data, players),
        figures=page_figures(social_figures.report_figures(data)),  # the figures of `report --figures`
        quality_columns=annotator_quality.QUALITY_COLUMNS,
        quality_floor_s=f"{settings.quality_floor_s:g}",
        n_tests_left_out=len({p.participant.code for p in everyone} - {p.participant.code for p in players}),
        downloads_json=script_json(session_downloads(everyone, session.code)),
    )


# The exports the report offers for its own session: (what, export function, file name part).
SESSION_DOWNLOADS = (
    ("Ratings, one row per rating (long)", exports.ratings_long, "ratings_long"),
    ("Ratings, one row per annotation (wide, Sotopia's columns)", exports.ratings_wide, "ratings_wide"),
    ("Gold results per annotator (qualified)", exports.qualified, "qualified"),
    ("Assignment log", exports.assignment_log, "assignments"),
)


def session_downloads(players, session_code):
    """This session's rows of each custom export, as CSV text for the report's download buttons (oTree's own
    custom exports hold every session's rows), and the codebook."""
    return outputs.session_downloads("social_eval", "social_eval", SESSION_DOWNLOADS, players, session_code)
