"""The admin report's variables: coverage, live reservations, figures per dimension, qualification, and the quality
view per annotator (time per episode, gold accuracy, agreement with the others: backend/core/annotator_quality.py)."""

import time

import study_flow
from backend.core import annotator_quality, assignment
from backend.core.figures import page_figures
from backend.core.jsonable import jsonable
from backend.core.script_json import script_json
from backend.social import figures as social_figures
from backend.social import forms as social_forms
from backend.social import report as social_report
from lab_server import outputs
from study_flow import assignments

from . import exports
from .exports import qualification, record
from .study import all_players, episode, finished_players, maybe, root, rubric, settings_of, study


def _summary_and_charts(records, session_rubric):
    if not records:
        return [], [], []
    import pandas as pd

    ratings = social_report.ratings_from_export(pd.DataFrame(records))
    regular = ratings[~ratings["is_gold"]]
    if regular.empty:
        return [], [], []
    table = social_report.summarise(regular, dimensions=session_rubric.keys, pooled_group=None)
    summary = [
        {
            key: ("-" if isinstance(v, float) and v != v else (round(v, 2) if isinstance(v, float) else v))
            for key, v in row.items()
        }
        for row in table[table["scope"] == "both"].to_dict("records")
    ]
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
    figures = social_figures.report_figures({"summary": [jsonable(row) for row in table.to_dict("records")]})
    return summary, charts, figures


def quality_view(players, records, settings):
    """The quality table's rows and the quality figure (``backend.social.figures.quality_figure``)."""
    qualities, labels = annotator_qualities(players, records, settings)
    figure = [social_figures.quality_figure(qualities)] if qualities else []
    return annotator_quality.quality_rows(qualities, labels=labels), figure


def annotator_qualities(players, records, settings):
    """Per annotator who finished an episode: ``AnnotatorQuality``, and the label (code and PID) the table shows.
    Agreement is over regular episodes, one unit per (episode, agent, dimension); time is the Rate page's seconds;
    gold = attention or qualification checks."""
    finished = finished_players(players)
    items = [
        (p.participant.code, maybe(p, "seconds_spent"), bool(maybe(p, "attention_passed")) if p.is_gold else None)
        for p in finished
    ]
    ratings = [
        (row["annotator"], (row["episode_id"], row["agent_index"], row["dimension"]), row["rating"])
        for row in records
        if not int(row["is_gold"] or 0)
    ]
    labels = {}
    for p in finished:
        pid = study_flow.identifiers(p.participant)["prolific_pid"]
        labels[p.participant.code] = f"{p.participant.code} ({pid})" if pid else p.participant.code
    return annotator_quality.annotator_quality(items, ratings, floor_s=settings.quality_floor_s), labels


def vars_for_admin_report(subsession):
    from . import Assignment

    root_subsession, session = root(subsession), subsession.session
    session_rubric, ids, settings = rubric(session), study(session), settings_of(session)
    players = all_players(root_subsession)
    k = settings.annotators_per_episode
    counts = assignment.coverage(
        ids["regular_ids"],
        assignments.policy_rows(Assignment, root_subsession.id),
        now=time.time(),
        timeout_s=settings.reservation_timeout_s,
    )
    coverage = social_report.coverage_counts({item: done for item, (done, _) in counts.items()}, per_item=k)
    records = []
    for player in finished_players(players):
        rated = episode(session.code, root_subsession.id, player.episode_id)
        records += social_forms.long_rows(record(player), rated, session_rubric)
    summary, charts, figures = _summary_and_charts(records, session_rubric)
    quality, quality_figures = quality_view(players, records, settings)
    qualified = qualification(players, session)
    return dict(
        k=k,
        n_regular=len(ids["regular_ids"]),
        n_gold=len(ids["gold_ids"]),
        coverage=[dict(ratings=n, episodes=count) for n, count in coverage.items()],
        complete=coverage.get(k, 0),
        live_reservations=sum(live for _, live in counts.values()),
        n_annotators=len({p.participant.code for p in finished_players(players)}),
        summary=summary,
        chart_json=script_json(charts),
        n_attention=len(qualified),
        n_qualified=sum(entry["qualified"] for entry in qualified.values()),
        qualification_mode=settings.qualification_mode,
        pilot_overlap=settings.pilot_overlap,
        n_pilot=len(settings.handed_out(ids["regular_ids"])),
        quality=quality,
        figures=page_figures(figures + quality_figures),  # the figures of `report --figures`, and quality
        quality_columns=annotator_quality.QUALITY_COLUMNS,
        quality_floor_s=f"{settings.quality_floor_s:g}",
        downloads_json=script_json(session_downloads(players, session.code)),
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
