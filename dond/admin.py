"""The dond admin report (``admin_report.html``): summaries per mode × language × model, the LLM agency table, the
treatments (figures per condition and each condition minus the default) and every game's row, numbers as text."""

from backend.core.script_json import script_json
from backend.dond import export as dond_export
from lab_server import admin_pages, study_pages

from .exports import game_row, games_rows
from .pairing import INSTRUCTIONS_HEARTBEAT_S
from .views import BARGAIN_PING_S

OUTCOMES = ("success", "lose", "aborted", "unfinished")


def vars_for_admin_report(subsession):
    # The report's modules load pandas, scipy and matplotlib: imported when the report is shown, not at start-up.
    import pandas as pd

    from backend.core.figures import page_figures
    from backend.dond import effects
    from backend.dond import figures as dond_figures
    from backend.dond import report as dond_report
    from study_flow import test_data

    # Games of a test participant (a test link) are left out of every figure and count, as every other view leaves
    # testers out; a demo session's report shows its games (all tests) and says so.
    games, n_test_games = test_data.report_rows(
        subsession.session, games_rows([subsession]), lambda found: (found[0].participant_a, found[0].participant_b)
    )
    rows = [game_row(game, events) for game, events in games]

    frame = pd.DataFrame(rows, columns=dond_export.DOND_GAMES_COLUMNS).astype(str)
    summary = [summary_row(row) for row in dond_report.summarise(frame)] if rows else []
    agency = [agency_row(row) for row in (dond_report.summarise_agency(frame) or [])] if rows else []
    treated = bool(rows) and effects.has_conditions(frame)
    conditions = [condition_row(row) for row in effects.condition_summaries(frame)] if treated else []
    gains = [effect_row(row) for row in effects.treatment_effects(frame)] if treated else []
    outcomes = {name: sum(row["outcome"] == name for row in rows) for name in OUTCOMES}
    data = dond_report.report_data(frame) if rows else []
    return dict(
        summary=summary,
        agency=agency,
        conditions=conditions,
        effects=gains,
        dropped=sum(row["dropped"] for row in gains),
        games=rows,
        outcomes_json=script_json(outcomes),
        n_games=len(rows),
        n_test_games=n_test_games,
        demo=test_data.is_test_session(subsession.session),
        figures=page_figures(dond_figures.report_figures(data)),  # the figures of `report --figures`
    )


def number(value, digits=1):
    return "–" if value != value else f"{value:.{digits}f}"  # NaN is the only value unequal to itself


def summary_row(row):
    """One row of the summary table (``dond_report.summarise``), numbers as text."""
    low, high = row["main_score_ci"]
    rates = ("aborted_rate", "llm_error_rate", "llm_invalid_rate", "lose_rate", "success_rate", "pareto_optimal_rate")
    formatted = {name: number(row[name], 2) for name in rates}
    scores = ("main_score", "main_score_debiased", "benchmark_score")
    formatted.update({name: number(row[name]) for name in scores})
    return dict(row, **formatted, ci=f"{number(low)} – {number(high)}")


def agency_row(row):
    """One row of the "LLM agency" table (``dond_report.summarise_agency``), numbers as text."""
    formatted = {name: number(row[name], 3) for name in ("mean", "debiased_mean", "se")}
    return dict(row, **formatted, ci=f"{number(row['ci_low'], 3)} – {number(row['ci_high'], 3)}")


def condition_row(row):
    """One row of the "figures per condition" table (``effects.condition_summaries``), numbers as text."""
    formatted = {name: number(row[name], 3) for name in ("mean", "debiased_mean")}
    return dict(row, **formatted, ci=f"{number(row['ci_low'], 3)} – {number(row['ci_high'], 3)}")


def effect_row(row):
    """One row of the "treatment effects" table (``effects.treatment_effects``), numbers as text."""
    return dict(
        row,
        difference=number(row["difference"], 3),
        ci=f"{number(row['ci_low'], 3)} – {number(row['ci_high'], 3)}",
    )


def transcripts_context(session):
    """The transcripts page's variables: every game of the session (``transcripts``, loaded when the page is shown)."""
    from . import transcripts

    games = transcripts.session_transcripts(session)
    return dict(games=games, n_games=len(games))


def participant_status(player):
    """What Study status says about a dond player (``transcripts.participant_status``)."""
    from . import transcripts

    return transcripts.participant_status(player)


admin_pages.register_app_page(
    "dond",
    admin_pages.AppPage(
        view="DondTranscripts",
        title="DoND transcripts",
        template="dond/admin_transcripts.html",
        context=transcripts_context,
        participant_status=participant_status,
    ),
)


def launch_facts(session, facts) -> None:
    """The launch check's facts of a dond session: how often each page where a partner can be judged gone tells the
    server its person is there (``launch_check.partner_limit_findings`` holds disconnect_timeout_s against it)."""
    facts["heartbeats_s"] = {"Instructions": INSTRUCTIONS_HEARTBEAT_S, "Bargain": BARGAIN_PING_S}


study_pages.register_launch_facts("dond", launch_facts)
