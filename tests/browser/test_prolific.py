"""The Prolific entry and exit flow in a real browser against a real oTree server."""

from __future__ import annotations

import csv
import io

import pytest
import requests

from harness.servers import create_session, next_page

pytestmark = pytest.mark.browser

PID = "5f3c2a1b9d8e7f6a5b4c3d2e"


def prolific_url(server, room, pid, study="STUDY123", session="SESS456"):
    return f"{server.url}/room/{room}?participant_label={pid}&STUDY_ID={study}&SESSION_ID={session}"


def wide_export_rows(server, session_code):
    response = requests.get(f"{server.url}/api/export_wide", params={"session_code": session_code}, timeout=30)
    response.raise_for_status()
    return list(csv.DictReader(io.StringIO(response.text)))


def test_prolific_link_lands_on_first_page_stores_ids_and_resumes(otree_server, page):
    session = create_session(otree_server.url, "social_eval", 3, room="social_eval_study", completion_code="CODE77")
    page.goto(prolific_url(otree_server, "social_eval_study", PID))
    page.wait_for_url("**/p/**")
    assert page.locator("#_otree-title").inner_text().strip() == "Consent"
    first_url = page.url

    rows = [row for row in wide_export_rows(otree_server, session["code"]) if row["participant.label"] == PID]
    assert len(rows) == 1
    assert rows[0]["participant.prolific_pid"] == PID
    assert rows[0]["participant.study_id"] == "STUDY123"
    assert rows[0]["participant.prolific_session_id"] == "SESS456"

    # The same PID again (new tab, same link) resumes the same participant instead of taking a new one.
    second = page.context.new_page()
    second.goto(prolific_url(otree_server, "social_eval_study", PID))
    second.wait_for_url("**/p/**")
    assert second.url == first_url
    labelled = [row for row in wide_export_rows(otree_server, session["code"]) if row["participant.label"]]
    assert [row["participant.label"] for row in labelled] == [PID]


def test_declined_consent_gets_the_screenout_code(otree_server, page):
    create_session(otree_server.url, "bias_tests", 2, room="bias_study", screenout_code="NOCONSENT1")
    page.goto(prolific_url(otree_server, "bias_study", "aaaaaaaaaaaaaaaaaaaaaaaa"))
    page.wait_for_url("**/p/**")
    page.get_by_label("I do not agree to take part.").check()
    next_page(page)
    assert page.locator("#screenout-code").inner_text() == "NOCONSENT1"
    assert page.locator("#return-link").get_attribute("href").endswith("/submissions/complete?cc=NOCONSENT1")


def test_missing_consent_answer_is_refused_with_a_message(otree_server, page):
    create_session(otree_server.url, "bias_tests", 2, room="bias_study")
    page.goto(prolific_url(otree_server, "bias_study", "bbbbbbbbbbbbbbbbbbbbbbbb"))
    page.wait_for_url("**/p/**")
    page.get_by_role("button", name="Next").click()  # no navigation follows
    # The browser refuses to submit the form (required radio); the server refuses too (bots' SubmissionMustFail).
    assert page.locator("input[name=consent_given]").first.evaluate("el => el.validity.valueMissing")
    assert page.locator("#_otree-title").inner_text().strip() == "Consent"


def test_completion_page_shows_code_and_redirects_to_prolific(otree_server, page):
    session = create_session(
        otree_server.url,
        "social_eval",
        2,
        room="social_eval_study",
        completion_code="DONE42",
        completion_redirect_seconds=2,
    )
    # No network here: answer Prolific's completion URL locally and record that the browser went there.
    page.route("https://app.prolific.com/**", lambda route: route.fulfill(status=200, body="completed"))
    page.goto(prolific_url(otree_server, "social_eval_study", "cccccccccccccccccccccccc"))
    page.wait_for_url("**/p/**")
    page.get_by_label("I have read the information above and agree to take part.").check()
    next_page(page)
    _advance_to_completion_page(otree_server, session["code"], page)
    assert page.locator("#completion-code").inner_text() == "DONE42"
    page.wait_for_url("https://app.prolific.com/submissions/complete?cc=DONE42", timeout=20_000)


def _advance_to_completion_page(server, session_code, participant_page, *, max_pages=40):
    """Skip the app's task pages the way a researcher would: "Advance slowest participants" on the monitor."""
    monitor = participant_page.context.new_page()
    monitor.goto(f"{server.url}/SessionMonitor/{session_code}")
    monitor.wait_for_function("typeof advanceUsers === 'function'")
    for _ in range(max_pages):
        if participant_page.locator("#completion-code").count():
            break
        with participant_page.expect_navigation():
            monitor.evaluate(
                "document.querySelector('[name=advance_participants_mode]').value = 'visited_only'; advanceUsers()"
            )
        participant_page.wait_for_load_state()
    monitor.close()
    participant_page.locator("#completion-code").wait_for()
