"""bias_tests: the admin report (admin_report.html), the figures of ``python -m backend report`` for this session."""

from .exports import export_rows


def admin_report_vars(subsession, *, num_rounds: int) -> dict:
    # The report's modules load pandas and matplotlib: imported when the report is shown, not at start-up.
    from backend.bias import figures as bias_figures
    from backend.bias import report as bias_report
    from backend.core.figures import page_figures
    from study_flow import test_data

    everyone = [p for s in subsession.in_rounds(1, num_rounds) for p in s.get_players()]
    # Test participants (test links) are left out of every count and figure (study_flow.test_data, the one rule); a
    # demo session's report shows its answers and says they are test data.
    players, _ = test_data.report_rows(subsession.session, everyone, lambda player: (player.participant.code,))
    view = bias_report.admin_view(export_rows(players))
    summary = view.get("summary")
    return dict(
        view,
        figures=page_figures(bias_figures.report_figures(summary)) if summary else [],
        n_tests_left_out=len({p.participant.code for p in everyone} - {p.participant.code for p in players}),
        demo=test_data.is_test_session(subsession.session),
    )
