"""One whole DoND study run the way a lab runs it, on a production server (prodserver, admin password, a database
file or PostgreSQL that outlives the process), with its figures checked against what the participants did:

1. a pilot in the study's room: the researcher's own test run (a test participant) and three pilot participants;
   the pilot's launch check uses their median time;
2. the launch in the same room: simulated Prolific participants arrive by the room's study URL; one declines consent, one
   never comes back (returned), the model fails during one game (the failure pay rule), the server is restarted
   mid-study, and the others finish;
3. then the review list (everyone's status and the code they were shown), the bonus file (exactly what each Results
   page said, one line per paid PID, tests left out) and the launch check's view of the finished study."""

from __future__ import annotations

import csv
import io
import re

import pytest

from backend.core.llm.fake_server import Reply
from backend.dond.demo_responder import demo as demo_responder
from harness.participants import Person
from harness.servers import (
    base_env,
    create_session,
    deployment_mode,
    own_database,
    run_async,
    scratch_project,
    start_server,
)
from tests.support.admin import logged_in
from tests.system.test_admin_pages import play
from tests.system.test_study_ops import findings_of


def stated_bonus(person) -> str:
    cell = re.search(r'<td id="bonus">\s*(.*?)\s*</td>', person.html, re.S).group(1)
    return re.search(r"\d+\.\d\d", cell.replace(",", ".")).group(0)


def arrive(server, session_code: str, pid: str) -> Person:
    """A Prolific participant on the room's study URL (past the welcome page, which a browser leaves at once)."""
    query = dict(participant_label=pid, STUDY_ID="5f0000000000000000000001", SESSION_ID=pid[::-1], welcome_page_ok=1)
    return Person(f"{server.url}/room/dond_study", session_code, params=query)


def finish_game(person, asked: dict | None = None) -> str:
    """Play the person's game (asking for ``asked``, default nothing), reach Results; the bonus it states."""
    person.advance_to("Bargain")
    run_async(play(person.live_url(), asked or {}))
    person.submit().advance_to("Results")
    bonus = stated_bonus(person)
    person.advance_to("Completion")
    return bonus


@pytest.mark.slow
def test_a_whole_study_from_pilot_to_payment(llm_server):
    llm_server.responder = demo_responder  # the README's offline model: plays DoND in the game's format
    folder = scratch_project("otree-whole-study-")
    env = deployment_mode(base_env(OPENAI_BASE_URL=llm_server.base_url, OPENAI_API_KEY="sk-test-not-a-real-key"))
    if not env.get("DATABASE_URL"):
        env["DATABASE_URL"] = f"sqlite:///{folder}/study.sqlite3"  # the data must outlive the server process
    keys = dict(llm_model="demo-model", completion_code="DONE7", screenout_code="OUT7", participation_fee=1.5)
    with own_database(env) as env:
        server = start_server(kind="prodserver", env=env, folder=folder)
        server.password = env["OTREE_ADMIN_PASSWORD"]
        try:
            port = int(server.url.rsplit(":", 1)[1])
            admin = logged_in(server.url, server.password)

            # 1. The pilot: the researcher's own run first, then three pilot participants.
            pilot = create_session(server.url, "dond_llm", 5, room="dond_study", **keys)["code"]
            token = re.search(r'name="csrftoken" value="([^"]+)"', admin.get(f"{server.url}/StudyLinks/{pilot}").text)
            sent = admin.post(
                f"{server.url}/TestParticipant/{pilot}", data={"csrftoken": token.group(1)}, allow_redirects=False
            )
            finish_game(Person(server.url + sent.headers["location"] + "&welcome_page_ok=1", pilot))
            for pid in ("a1" * 12, "a2" * 12, "a3" * 12):
                finish_game(arrive(server, pilot, pid))
            pilot_check = " ".join(w for _, w in findings_of(admin.get(f"{server.url}/LaunchCheck/{pilot}").text))
            assert "the median of 3 finished participants" in pilot_check  # the tester is not counted
            assert admin.get(f"{server.url}/BonusFile/{pilot}").text.count("\n") <= 3  # the tester is never paid

            # 2. The launch, in the same room.
            study = create_session(server.url, "dond_llm", 8, room="dond_study", **keys)["code"]
            pids = {name: f"{index:x}" * 24 for index, name in enumerate(("b", "c", "d", "e", "f"), start=11)}
            declined = arrive(server, study, pids["b"])
            declined.submit(dict(consent_given="False"))
            arrive(server, study, pids["c"]).advance_to("Bargain")  # opens the game, then leaves
            stated = {"d": finish_game(arrive(server, study, pids["d"]))}

            outage = arrive(server, study, pids["e"]).advance_to("Bargain")
            llm_server.responder = lambda request: Reply(status=503)  # the model endpoint fails during this game
            run_async(play(outage.live_url(), {}))
            llm_server.responder = demo_responder
            outage.submit().advance_to("Results")
            stated["e"] = stated_bonus(outage)
            outage.advance_to("Completion")
            assert float(stated["e"]) > 0  # asking for nothing pays 0 in a deal: this is the failure rule's half

            server.stop()  # a restart mid-study, on the same database
            server = start_server(kind="prodserver", env=env, folder=folder, port=port)
            server.password = env["OTREE_ADMIN_PASSWORD"]
            admin = logged_in(server.url, server.password)
            stated["f"] = finish_game(arrive(server, study, pids["f"]))

            # 3. Review, bonus file, and the finished study's launch check.
            review = {
                row["prolific_pid"]: row
                for row in csv.DictReader(io.StringIO(admin.get(f"{server.url}/ReviewList/{study}").text))
            }
            assert set(review) == set(pids.values())
            assert review[pids["b"]]["status"] == "declined" and review[pids["b"]]["completion_code"] == "OUT7"
            assert review[pids["c"]]["status"] == "working" and review[pids["c"]]["completion_code"] == ""
            for name in ("d", "e", "f"):
                assert review[pids[name]]["status"] == "finished", review[pids[name]]
                assert review[pids[name]]["completion_code"] == "DONE7"
                assert review[pids[name]]["bonus"] == stated[name]
            lines = admin.get(f"{server.url}/BonusFile/{study}").text.splitlines()
            assert sorted(lines) == sorted(f"{pids[n]},{stated[n]}" for n in ("d", "e", "f") if float(stated[n]) > 0)
            assert len({line.split(",")[0] for line in lines}) == len(lines)  # one line per PID
            check = findings_of(admin.get(f"{server.url}/LaunchCheck/{study}").text)
            assert not any(severity == "problem" and "code" in what for severity, what in check)
            assert any("the median of 3 finished participants" in what for _, what in check)
        finally:
            server.stop()
