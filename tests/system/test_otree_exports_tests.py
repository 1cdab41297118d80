"""oTree's own exports keep test data apart as our custom exports do (issue 35, finding 5), and every view counts the
same people (``study_flow.test_data.is_test``, the one rule):

- the wide export ("All apps") and each app's export carry ``participant.is_test`` beside ``participant.code``; asked
  for all sessions they leave out the demo session and the test-link participant, asked for one session they keep
  them, marked; page times (all sessions only) leave them out; chat carries ``is_test``;
- the study status page lists a tester, marked, without counting them, and a person who declined consent reads
  "declined", not "returned".

If oTree renames the column we read the participant's code from, these tests fail (the rows would pass unmarked).
"""

from __future__ import annotations

import csv
import io
import re

import pytest
import requests

from harness.participants import Person, answer_one_bias_question
from harness.servers import create_session, rest, rest_headers, session_start_links
from tests.system.test_export_codebook import create_demo_session


@pytest.fixture(scope="module")
def otree_server(own_otree_server):
    return own_otree_server  # the exports of all sessions are read whole


@pytest.fixture(scope="module")
def study(otree_server):
    """A bias_tests session of three: a real person who consents, a tester (test link) who consents, a real person who
    declines; and a demo session whose first participant consents."""
    url = otree_server.url
    code = create_session(url, "bias_tests", 4)["code"]
    real, tester, declined = (Person(link, code) for link in session_start_links(url, code)[:3])
    rest(url, "POST", f"/api/participant_vars/{tester.code}", json={"vars": {"is_test": True}}).raise_for_status()
    real.submit(dict(consent_given="True"))
    tester.submit(dict(consent_given="True"))
    declined.submit(dict(consent_given="False"))
    demo = create_demo_session(url, "bias_tests")
    demo_person = Person(session_start_links(url, demo)[0], demo)
    demo_person.submit(dict(consent_given="True"))
    return dict(url=url, code=code, demo=demo, real=real.code, tester=tester.code, declined=declined.code)


MARK = "participant.is_test"


def download(url: str, path: str, **params) -> list[list[str]]:
    response = requests.get(url + path, params=params, headers=rest_headers(), timeout=120)
    assert response.status_code == 200, response.text[-2000:]
    return list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))


def marks(rows: list[list[str]], code_column: str, mark_column: str) -> dict[str, str]:
    """Participant code -> its test mark, the mark right after the code column."""
    header = rows[0]
    assert header.index(mark_column) == header.index(code_column) + 1, header[:12]
    at = header.index(code_column)
    return {row[at]: row[at + 1] for row in rows[1:]}


@pytest.mark.parametrize(
    ("path", "params"), [("/api/export_wide", {}), ("/api/export_app", {"app": "bias_tests"})], ids=["wide", "app"]
)
def test_otrees_exports_mark_tests_and_leave_them_out_of_all_sessions(study, path, params):
    everyone = marks(download(study["url"], path, **params), "participant.code", MARK)
    assert everyone[study["real"]] == "0" and everyone[study["declined"]] == "0"
    assert study["tester"] not in everyone
    assert set(everyone.values()) == {"0"}
    own = marks(download(study["url"], path, session_code=study["code"], **params), "participant.code", MARK)
    assert own[study["tester"]] == "1" and own[study["real"]] == "0"
    demo = marks(download(study["url"], path, session_code=study["demo"], **params), "participant.code", MARK)
    assert demo and set(demo.values()) == {"1"}
    assert not set(demo) & set(everyone)  # the demo session is left out of all sessions


def test_page_times_leave_tests_out_and_chat_marks_them(study):
    rows = download(study["url"], "/api/export_page_times")
    at = rows[0].index("participant_code")
    codes = {row[at] for row in rows[1:]}
    assert study["real"] in codes and study["declined"] in codes
    assert study["tester"] not in codes
    wide = download(study["url"], "/api/export_wide", session_code=study["demo"])
    demo_codes = {row[wide[0].index("participant.code")] for row in wide[1:]}
    assert not demo_codes & codes
    chat = download(study["url"], "/api/export_chat")
    assert chat[0][chat[0].index("participant_code") + 1] == "is_test"


def test_the_status_page_lists_a_tester_without_counting_them_and_a_decline_as_declined(study):
    page = requests.get(f"{study['url']}/StudyStatus/{study['code']}", timeout=30).text
    found = {
        code: status
        for status, code in re.findall(r'<tr class="status-(\w+)(?: test)?">.*?<code>(\w+)</code>', page, re.S)
    }
    assert found == {study["real"]: "working", study["tester"]: "working", study["declined"]: "declined"}, found
    assert "working (test)" in page
    assert "working: 1" in page and "declined consent (screened out): 1" in page and "returned: 0" in page
    assert "not started: 1" in page and "tests, not counted: 1" in page


def test_the_dond_report_leaves_a_testers_game_out_and_a_demo_report_says_it_is_test_data(otree_server):
    url = otree_server.url
    code = create_session(url, "dond_llm", 2, llm_model="scripted")["code"]
    real, tester = (Person(link, code) for link in session_start_links(url, code))
    rest(url, "POST", f"/api/participant_vars/{tester.code}", json={"vars": {"is_test": True}}).raise_for_status()
    real.advance_to("Bargain")
    tester.advance_to("Bargain")
    report = requests.get(f"{url}/AdminReport/{code}", timeout=60).text
    assert "1 game(s). " in report, report[-3000:]
    assert re.search(r'id="test-games-left-out">1 game\(s\) of test participants', report)
    assert tester.code not in report and real.code in report  # the games table lists only the counted game

    demo = create_demo_session(url, "dond_llm")
    Person(session_start_links(url, demo)[0], demo).advance_to("Bargain")
    report = requests.get(f"{url}/AdminReport/{demo}", timeout=60).text
    assert "1 game(s). " in report and 'id="demo-session"' in report and "test-games-left-out" not in report


@pytest.mark.parametrize("config", ["social_eval", "payoff_reasoning_eval"])
def test_the_annotation_reports_leave_a_tester_out_and_say_so(otree_server, config):
    url = otree_server.url
    code = create_session(url, config, 2)["code"]
    real, tester = (Person(link, code) for link in session_start_links(url, code))
    rest(url, "POST", f"/api/participant_vars/{tester.code}", json={"vars": {"is_test": True}}).raise_for_status()
    report = requests.get(f"{url}/AdminReport/{code}", timeout=60).text
    assert re.search(r'id="tests-left-out">1 test participant\(s\)', report), report[-3000:]


def respondents(report: str) -> list[str]:
    """The bias report's respondents per group (its counts table)."""
    found = re.search(r"<tr><td>respondents</td>((?:<td>[^<]*</td>)+)</tr>", report)
    assert found, report[-3000:]
    return re.findall(r"<td>([^<]*)</td>", found.group(1))


def test_the_bias_report_leaves_a_tester_out_and_says_so_and_a_demo_report_says_it_is_test_data(otree_server):
    url = otree_server.url
    code = create_session(url, "bias_tests", 2)["code"]
    real, tester = (Person(link, code) for link in session_start_links(url, code))
    rest(url, "POST", f"/api/participant_vars/{tester.code}", json={"vars": {"is_test": True}}).raise_for_status()
    answer_one_bias_question(real)
    answer_one_bias_question(tester)
    report = requests.get(f"{url}/AdminReport/{code}", timeout=60).text
    assert respondents(report) == ["1"], respondents(report)
    assert re.search(r'id="tests-left-out">1 test participant\(s\)', report) and 'id="demo-session"' not in report

    demo = create_demo_session(url, "bias_tests")
    answer_one_bias_question(Person(session_start_links(url, demo)[0], demo))
    report = requests.get(f"{url}/AdminReport/{demo}", timeout=60).text
    assert respondents(report) == ["1"] and 'id="demo-session"' in report and "tests-left-out" not in report
