"""The study status page's rules (backend/core/participant_status.py): which status wins, and progress as a meaning."""

from __future__ import annotations

import pytest

from backend.core.participant_status import classify, progress

WORKING = dict(
    visited=True,
    completed=False,
    page="Rate",
    screened_out=False,
    screenout_reason="",
    app_status=None,
    app_detail="",
    last_active=1_000.0,
)


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (dict(visited=False), ("not_started", "")),
        (dict(completed=True, app_status="timed_out", app_detail="no partner"), ("finished", "no partner")),
        (dict(page="Completion"), ("finished", "")),
        # Declined consent: shown the screen-out code, a screened-out submission on Prolific, not a return (issue 35).
        (dict(screened_out=True, screenout_reason="declined_consent"), ("declined", "declined consent")),
        (
            dict(screened_out=True, screenout_reason="failed_comprehension", app_status="timed_out"),
            ("screened_out", "failed the comprehension check"),
        ),
        (
            dict(app_status="timed_out", app_detail="reservation expired", last_active=1.0),
            ("timed_out", "reservation expired"),
        ),
        (dict(last_active=1_000.0 - 3_601), ("returned", "left: no page opened for 1 h 00 min")),
        (dict(last_active=None), ("working", "")),
        # The page's own time limit ran out and nothing was opened since (a tab closed mid-game): not "working".
        (
            dict(deadline=1_000.0 - 120, last_active=1_000.0 - 600),
            ("timed_out", "the page's time limit ran out 2 min ago; no page opened since"),
        ),
        (
            dict(deadline=1_000.0 - 120, last_active=None),
            ("timed_out", "the page's time limit ran out 2 min ago; no page opened since"),
        ),
        (dict(deadline=1_000.0 + 60), ("working", "")),  # still within the limit
        (dict(deadline=1_000.0 - 120, last_active=1_000.0 - 60), ("working", "")),  # a page opened after it
        ({}, ("working", "")),
    ],
)
def test_the_first_matching_status_wins(facts, expected):
    assert classify(dict(WORKING, **facts), now=1_000.0, inactive_after=3_600) == expected


def test_progress_reads_as_a_meaning_not_a_page_count():
    assert progress(
        {"progress_done": 9, "progress_total": 10}, status="working", page="Rate", app="a", index=0, pages=0
    ) == (
        "item 10 of 10",
        90,
    )
    assert progress(
        {"progress_done": 12, "progress_total": 10}, status="working", page="", app="", index=0, pages=0
    ) == (
        "item 10 of 10",
        100,
    )
    assert progress({}, status="working", page="Bargain", app="dond", index=28, pages=105) == (
        "page Bargain (dond)",
        27,
    )
    assert progress({}, status="returned", page="", app="", index=0, pages=0) == ("page ?", 0)
    assert progress({}, status="not_started", page="", app="", index=0, pages=0) == ("not started", 0)
