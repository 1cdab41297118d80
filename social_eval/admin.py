"""The admin report's variables: coverage, live reservations, figures per dimension, qualification."""

import time

from backend.core import assignment
from backend.core.script_json import script_json
from backend.social import forms as social_forms
from backend.social import report as social_report
from study_flow import assignments

from .exports import qualification, record
from .study import all_players, episode, finished_players, root, rubric, settings_of, study


def _summary_and_charts(records, session_rubric):
    if not records:
        return [], []
    import pandas as pd

    ratings = social_report.ratings_from_export(pd.DataFrame(records))
    regular = ratings[~ratings["is_gold"]]
    if regular.empty:
        return [], []
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
    return summary, charts


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
    summary, charts = _summary_and_charts(records, session_rubric)
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
    )
