"""bias_tests: the admin report (admin_report.html), the figures of ``python -m backend report`` for this session."""

from backend.bias import report as bias_report

from .exports import export_rows


def admin_report_vars(subsession, *, num_rounds: int) -> dict:
    players = [p for s in subsession.in_rounds(1, num_rounds) for p in s.get_players()]
    return bias_report.admin_view(export_rows(players))
