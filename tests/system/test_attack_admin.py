"""Hostile review of the researcher pages (lab_server/admin_pages.py, dond/transcripts.py) on a production-mode server:

- the DoND transcripts of a session of another app show no game, never another session's games: oTree numbers each
  app's subsessions on their own, so a bias_tests session's subsession 1 is not the dond session's subsession 1;
- an unknown session code is a 404, not a server error.
"""

from __future__ import annotations

from harness.servers import create_session, run_async
from tests.support.admin import logged_in
from tests.system.test_admin_pages import bargaining_people, demo_model, lab, play  # noqa: F401, F811 (fixtures)


def test_dond_transcripts_of_another_apps_session_show_no_other_sessions_games(lab):  # noqa: F811
    code, (person,) = bargaining_people(lab, 1)
    run_async(play(person.live_url(), {}))
    admin = logged_in(lab.url, lab.password)
    own = admin.get(f"{lab.url}/DondTranscripts/{code}", timeout=30)
    assert own.status_code == 200 and f"Game {code}-" in own.text  # the dond session's game is there

    other = create_session(lab.url, "bias_tests", 1)["code"]
    answer = admin.get(f"{lab.url}/DondTranscripts/{other}", timeout=30)
    assert answer.status_code == 200, answer.text[:500]
    assert code not in answer.text, "a bias_tests session's transcript page shows the dond session's games"
    assert ">Game " not in answer.text and "model demo-model" not in answer.text
    status = admin.get(f"{lab.url}/StudyStatus/{other}", timeout=30)
    assert status.status_code == 200 and "DondTranscripts" not in status.text


def test_unknown_session_codes_are_not_server_errors(lab):  # noqa: F811
    admin = logged_in(lab.url, lab.password)
    for path in ("/StudyStatus/nosuchcode", "/DondTranscripts/nosuchcode", "/DondTranscripts/%3Cscript%3E"):
        answer = admin.get(lab.url + path, timeout=30)
        assert answer.status_code in (404, 400), f"{path} answered {answer.status_code}"
        assert answer.headers["content-type"].startswith("text/plain")  # oTree's 404 names the code as plain text
