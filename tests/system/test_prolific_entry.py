"""Prolific entry (lab_server/entry.py), tried the way a hostile visitor and a returning participant would, in
production mode: who gets a slot, what a refused link shows, and what the researcher's admin pages then run.

Slots are counted from oTree's own wide export (``participant.visited`` and ``participant.label``), the admin pages are
read in Chromium logged in as the researcher.
"""

from __future__ import annotations

import csv
import io
import secrets
import shutil
from urllib.parse import quote

import pytest
import requests

import study_flow
from harness.servers import (
    app_source,
    base_env,
    create_session,
    deployment_mode,
    own_database,
    project_with_app,
    rest,
    rest_headers,
    start_server,
)

pytestmark = pytest.mark.slow

# Each payload sets a flag or the title when it runs; the last is the 45-character one of the issue.
HOSTILE_PIDS = [
    "<img src=x onerror=window.__pwned=1>",
    '"><script>window.__pwned=1</script>',
    "a" * 101,  # oTree's own limit is 100: it answered 404 but had already used the slot
    "<img src=x onerror=document.title='pwned123'>",
]


def new_pid() -> str:
    """A fresh Prolific-shaped PID: the server is shared by the module, and a PID enters a room's study only once."""
    return secrets.token_hex(12)


@pytest.fixture(scope="module")
def server(production_server):
    """The production-mode server the suite shares (tests/conftest.py): these tests use only their own sessions."""
    return production_server


def _participants(server, session_code: str) -> list[dict]:
    """oTree's wide export of one session: one row per participant."""
    response = rest(server.url, "GET", "/api/export_wide", params={"session_code": session_code})
    response.raise_for_status()
    return list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))


def _visited(server, session_code: str) -> list[str]:
    """The labels of the session's participants that hold a slot ('' for a slot taken without a label)."""
    return [
        row["participant.label"] for row in _participants(server, session_code) if row["participant.visited"] == "1"
    ]


def _entry_links(server, session: dict, label: str) -> dict[str, str]:
    """The three ways into a session with ``label``: the room link (after its welcome page), /join, /InitializeParticipant."""
    detail = rest(server.url, "POST", f"/api/get_session/{session['code']}", json={})
    detail.raise_for_status()
    detail = detail.json()
    label_param = f"participant_label={quote(label, safe='')}"
    return {
        "room": f"{detail['room_url']}?welcome_page_ok=1&{label_param}",
        "join": f"{detail['session_wide_url']}?{label_param}",
        "initialize": f"{server.url}/InitializeParticipant/{detail['participants'][0]['code']}?{label_param}",
    }


def _enter(url: str) -> requests.Response:
    return requests.get(url, allow_redirects=False, timeout=30)


def _login(server, page) -> None:
    page.goto(server.url + "/login")
    page.fill("input[name=username]", "admin")
    page.fill("input[name=password]", server.admin_password)
    page.locator("form").locator("button, input[type=submit]").first.click()
    page.wait_for_url(lambda url: "/login" not in url)


def test_hostile_and_missing_pids_are_refused_on_every_path_and_take_no_slot(server):
    session = create_session(server.url, "bias_tests", 2, room="bias_study")
    english = study_flow.messages("en")

    for label in HOSTILE_PIDS + ["", "5F3C2A1B9D8E7F6A5B4C3D2E", "5f3c2a1b9d8e7f6a5b4c3d2"]:
        for path, url in _entry_links(server, session, label).items():
            if not label and path == "initialize":
                continue  # /InitializeParticipant without a label is the admin's per-participant link and the bots'
            if not label and path == "join":
                url = url.partition("?")[0]  # the session-wide link as the admin page shows it
            response = _enter(url)
            assert response.status_code == 400, (path, label, response.status_code)
            reason = "entry_missing_id" if not label else "entry_malformed_id"
            assert english[reason] in response.text, (path, label)
            assert english["entry_researcher"] in response.text.replace("&#x27;", "'"), (path, label)  # how to test
            assert label not in response.text or not label

    for path, url in _entry_links(server, session, new_pid()).items():  # a PID given twice: oTree reads the last
        response = _enter(f"{url}&participant_label={new_pid()}")
        assert response.status_code == 400 and english["entry_malformed_id"] in response.text, (path, response)

    assert _visited(server, session["code"]) == []
    assert all(row["participant.label"] == "" for row in _participants(server, session["code"]))
    # The two places are still free for the real participants.
    pids = [new_pid(), new_pid()]
    for pid in pids:
        assert _enter(_entry_links(server, session, pid)["room"]).status_code == 302
    assert sorted(_visited(server, session["code"])) == sorted(pids)


@pytest.mark.browser
def test_admin_monitor_payments_and_data_pages_run_no_script_from_a_pid(server, page):
    session = create_session(server.url, "bias_tests", 3, room="bias_study")
    for label in HOSTILE_PIDS:
        for url in _entry_links(server, session, label).values():
            _enter(url)
    # The attacker's way in a browser: Prolific's parameter through the welcome page's forwarding script.
    page.goto(f"{server.url}/room/bias_study?PROLIFIC_PID={quote(HOSTILE_PIDS[0], safe='')}&STUDY_ID=S1")
    page.locator("#entry-title").wait_for()
    assert page.locator("#entry-title").inner_text() == study_flow.messages("en")["entry_title"]
    pid = new_pid()
    assert _enter(_entry_links(server, session, pid)["room"]).status_code == 302

    _login(server, page)
    for admin_page in ("SessionMonitor", "SessionPayments", "SessionData"):
        page.goto(f"{server.url}/{admin_page}/{session['code']}")
        if admin_page != "SessionData":  # the data page lists player fields, not labels
            page.get_by_text(pid).first.wait_for()
        else:
            page.locator("table").first.wait_for()
        content = page.content()
        assert page.evaluate("window.__pwned") is None, admin_page
        assert "pwned" not in page.title(), admin_page
        for label in HOSTILE_PIDS:
            assert label not in content and quote(label) not in content, (admin_page, label)
        assert "onerror" not in content and "<script>window" not in content, admin_page


def test_two_visits_without_a_pid_no_longer_fill_a_two_place_session(server):
    session = create_session(server.url, "bias_tests", 2, room="bias_study")
    room_link = f"{server.url}/room/bias_study?welcome_page_ok=1"
    assert [_enter(room_link).status_code for _ in range(2)] == [400, 400]
    pids = [new_pid(), new_pid()]
    assert [_enter(_entry_links(server, session, pid)["room"]).status_code for pid in pids] == [302, 302]
    assert sorted(_visited(server, session["code"])) == sorted(pids)


def test_a_returning_pid_in_a_new_session_of_the_room_resumes_its_first_participation(server):
    pid = new_pid()
    first = create_session(server.url, "bias_tests", 2, room="bias_study")
    landed = requests.get(_entry_links(server, first, pid)["room"], timeout=30)
    assert "/p/" in landed.url
    first_code = next(
        row["participant.code"] for row in _participants(server, first["code"]) if row["participant.label"] == pid
    )

    second = create_session(server.url, "bias_tests", 2, room="bias_study")  # the researcher opens a new session
    returning = _enter(_entry_links(server, second, pid)["room"])
    assert returning.status_code == 302
    assert returning.headers["location"].endswith(f"/InitializeParticipant/{first_code}")
    assert requests.get(_entry_links(server, second, pid)["room"], timeout=30).url == landed.url
    # The same through the session-wide link of the new session.
    assert _enter(_entry_links(server, second, pid)["join"]).headers["location"].endswith(first_code)
    assert _visited(server, second["code"]) == []
    assert _visited(server, first["code"]) == [pid]

    # Another room is another study: there the PID takes a place of its own.
    other = create_session(server.url, "payoff_reasoning_eval", 2, room="payoff_reasoning_study")
    assert _enter(_entry_links(server, other, pid)["room"]).status_code == 302
    assert _visited(server, other["code"]) == [pid]


@pytest.mark.browser
@pytest.mark.parametrize("language", ["it", "de"])
def test_a_full_session_and_a_missing_pid_get_a_page_in_the_study_language(server, page, language):
    session = create_session(server.url, "dond_llm", 1, room="dond_study", language=language)
    text = study_flow.messages(language)
    first, late = new_pid(), new_pid()
    assert _enter(_entry_links(server, session, first)["room"]).status_code == 302

    full = _enter(_entry_links(server, session, late)["room"])
    assert full.status_code == 404
    assert _visited(server, session["code"]) == [first]

    # As the participant meets it: Prolific's link through the welcome page.
    page.goto(f"{server.url}/room/dond_study?PROLIFIC_PID={late}&STUDY_ID=S1&SESSION_ID=X1")
    page.locator("#entry-title").wait_for()
    assert page.locator("#entry-title").inner_text() == text["full_title"]
    shown = page.locator("#entry-text").inner_text()
    assert text["full_return"] in shown and text["full_contact"] in shown
    assert page.locator("html").get_attribute("lang") == language

    page.goto(f"{server.url}/room/dond_study?STUDY_ID=S1&SESSION_ID=X1")  # Prolific's PID left off the link
    page.locator("#entry-title").wait_for()
    assert page.locator("#entry-title").inner_text() == text["entry_title"]
    assert text["entry_missing_id"] in page.locator("#entry-text").inner_text()
    assert _visited(server, session["code"]) == [first]


def test_participant_id_format_any_admits_pilot_labels_and_an_unknown_format_is_refused(server):
    session = create_session(server.url, "bias_tests", 2, room="bias_study", participant_id_format="any")
    assert _enter(_entry_links(server, session, "pilot_07")["room"]).status_code == 302
    assert _enter(_entry_links(server, session, "pilot 08")["room"]).status_code == 400
    assert _visited(server, session["code"]) == ["pilot_07"]

    refused = requests.post(
        server.url + "/api/sessions",
        json=dict(
            session_config_name="bias_tests",
            num_participants=2,
            modified_session_config_fields={"participant_id_format": "hex"},
        ),
        headers=rest_headers(),
        timeout=60,
    )
    assert refused.status_code == 400
    assert "'participant_id_format'" in refused.text and "prolific, any" in refused.text


UNGUARDED_ROOM_APP = app_source(
    "unguarded_room",
    doc="A throwaway app that takes the room link's guard away again, so a label reaches oTree's own room view unchecked.",
    preamble="""
from lab_server.otree_internals import replace

replace("otree.views.participant:AssignVisitorToRoom.get", lambda guarded: guarded.__wrapped__)
""",
)


def test_a_label_that_reaches_otree_unchecked_is_still_refused_and_takes_no_slot():
    """The backstop behind the entry views (Participant.set_label), for any path that would hand oTree a label."""
    folder = project_with_app("unguarded_room", {"__init__.py": UNGUARDED_ROOM_APP}, prefix="otree-label-")
    env = deployment_mode(base_env())
    with own_database(env) as env:
        running = start_server(kind="prodserver", env=env, folder=folder)
        try:
            session = create_session(running.url, "bias_tests", 2, room="bias_study")
            for label in HOSTILE_PIDS:
                response = _enter(_entry_links(running, session, label)["room"])
                assert response.status_code == 400, (label, response.status_code)
            assert _visited(running, session["code"]) == []  # oTree had marked a slot visited: rolled back
            pid = new_pid()
            assert _enter(_entry_links(running, session, pid)["room"]).status_code == 302
            assert _visited(running, session["code"]) == [pid]
        finally:
            running.stop()
            shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("language", study_flow.SHARED_LANGUAGES)
def test_every_entry_page_has_its_own_text_in_every_language(language):
    english = {
        reason: study_flow.entry_page_texts(reason, language="en") for reason in ("missing", "malformed", "full")
    }
    for reason, english_page in english.items():
        shown = study_flow.entry_page_texts(reason, language=language)  # KeyError: a text missing in this language
        assert shown["language"] == language and shown["title"] and all(shown["paragraphs"])
        if language != "en":
            assert shown["title"] != english_page["title"]
            assert set(shown["paragraphs"]).isdisjoint(english_page["paragraphs"])
