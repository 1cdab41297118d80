"""The researcher pages (lab_server/admin_pages.py, dond/transcripts.py) and the offline demo model, on a server set
up as a lab deploys it (production mode, admin password) whose LLM is the README's demo command
(``python -m backend.core.llm.fake_server``) run as its own process:

- a person's game against the demo model ends in a deal or a clean no-deal, never an abort, in English and German
  (the model's German messages say "Sie"/"Ihnen");
- the study status page shows every participant's PID, status and progress as a meaning, the transcript page every
  game; hostile PIDs and model text are shown as text; a logged-out request is sent to the login page."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import subprocess
import sys
import time

import pytest
import requests
import websockets

from harness import PROJECT_ROOT
from harness.participants import Annotator, Person
from harness.servers import (
    base_env,
    create_session,
    deployment_mode,
    free_port,
    own_database,
    rest,
    run_async,
    running_server,
    session_start_links,
    uses_server_database,
)
from tests.support.admin import logged_in
from tests.support.live import payload_of

HOSTILE_PID = "<img src=x onerror=alert(1)>"
HOSTILE_TEXT = "<script>alert('model')</script><b onmouseover=alert(2)>bold</b>"


@pytest.fixture(scope="module")
def demo_model():
    """The README's offline model server, started by its command line."""
    port = free_port()
    command = [sys.executable, "-m", "backend.core.llm.fake_server", "--port", str(port), "--latency", "0.05"]
    process = subprocess.Popen(command, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True)
    assert "Fake OpenAI-compatible server" in process.stdout.readline()
    yield f"http://127.0.0.1:{port}/v1"
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def lab(demo_model):
    env = deployment_mode(base_env(OPENAI_BASE_URL=demo_model, OPENAI_API_KEY="sk-test-not-a-real-key"))
    with own_database(env) as env:
        kind = "prodserver" if uses_server_database(env) else "devserver"
        with running_server(kind=kind, env=env) as server:
            server.password = env["OTREE_ADMIN_PASSWORD"]
            yield server


def games_export(server, session_code: str, function: str = "custom_export_dond_games") -> list[dict]:
    params = dict(app="dond", function_name=function, session_code=session_code)
    response = rest(server.url, "GET", "/api/export_app_custom", params=params)
    response.raise_for_status()
    return list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))


async def play(live_url: str, counts: dict, *, deadline_s: float = 60) -> dict:
    """Two messages when it is the person's turn, then a proposal of ``counts``; the last state (game over)."""
    sent, began = 0, time.monotonic()
    async with websockets.connect(live_url, max_size=None, open_timeout=30) as socket:
        await socket.send(json.dumps({"type": "load"}))
        while time.monotonic() - began < deadline_s:
            payload = payload_of(json.loads(await asyncio.wait_for(socket.recv(), timeout=deadline_s)))
            assert payload.get("type") != "rejected", payload
            if payload.get("type") != "state":
                continue
            if payload.get("finished"):
                return payload
            mine = sum(1 for m in payload.get("chat", []) if m.get("who") == "me" or m.get("notice") == "you_proposed")
            if payload.get("waiting_for_other") or mine != sent:
                continue
            if payload.get("can_message") and not payload.get("must_propose") and sent < 2:
                move = {"type": "message", "text": f"Message {sent + 1}: which items matter to you?"}
            else:
                move = {"type": "proposal", "counts": counts}
            await socket.send(json.dumps(move))
            sent += 1
    raise AssertionError("the game did not end before the deadline")


def bargaining_people(server, count: int, **config) -> tuple[str, list[Person]]:
    session = create_session(server.url, "dond_llm", count, llm_model="demo-model", **config)
    people = [
        Person(link, session["code"]).advance_to("Bargain") for link in session_start_links(server.url, session["code"])
    ]
    return session["code"], people


@pytest.mark.parametrize("language", ["en", "de"])
def test_a_persons_games_against_the_demo_model_end_in_a_deal_or_a_no_deal(lab, language):
    code, (modest, greedy) = bargaining_people(lab, 2, language=language)
    everything = {item["id"]: item["count"] for item in greedy.js_vars()["items"]}
    run_async(play(modest.live_url(), {}))  # asks for nothing: fits any proposal of the model
    run_async(play(greedy.live_url(), everything))  # asks for everything: the model's proposal cannot fit

    games = {row["participant_code"]: row for row in games_export(lab, code)}
    assert games[modest.code]["outcome"] == "success"
    assert games[greedy.code]["outcome"] == "lose"
    for row in games.values():
        assert row["aborted"] in ("0", "False") and not row["abort_reason"]
        assert row["violations_a"] == row["violations_b"] == "0"  # the model never broke the format
    model_messages = [
        row["text"]
        for row in games_export(lab, code, "custom_export_dond_events")
        if row["kind"] == "message" and row["actor"] == "llm"
    ]
    assert len(model_messages) >= 2
    if language == "de":
        assert any("Ihnen" in text for text in model_messages)
        assert not any(re.search(r"\b(du|dir|dich|dein\w*)\b", text, re.I) for text in model_messages)

    transcripts = logged_in(lab.url, lab.password).get(f"{lab.url}/DondTranscripts/{code}", timeout=30)
    assert transcripts.status_code == 200
    assert "deal: the proposals fit together" in transcripts.text
    assert "no deal: the proposals ask for more than there is" in transcripts.text
    assert "model demo-model" in transcripts.text and "secret proposal: " in transcripts.text
    assert '<th>pay rule</th><td colspan="2">mode_goal</td>' in transcripts.text


def test_logged_out_requests_are_refused_when_a_password_is_set(lab):
    code, (person,) = bargaining_people(lab, 1)
    rest(lab.url, "POST", f"/api/participant_vars/{person.code}", json={"vars": {"prolific_pid": "PID-SECRET-1"}})
    for path in (f"/StudyStatus/{code}", f"/DondTranscripts/{code}"):
        answer = requests.get(lab.url + path, allow_redirects=False, timeout=30)
        assert answer.status_code in (302, 303, 307), f"{path} answered {answer.status_code} without login"
        assert "/login" in answer.headers["location"].lower()
        assert "PID-SECRET-1" not in answer.text
        assert logged_in(lab.url, lab.password).get(lab.url + path, timeout=30).status_code == 200


def test_the_status_page_shows_pid_status_and_progress_and_escapes_what_it_shows(lab, demo_model):
    session = create_session(lab.url, "dond_llm", 5, llm_model="demo-model")
    code = session["code"]
    links = session_start_links(lab.url, code)
    finished, working, declined, screened = (Person(link, code) for link in links[:4])  # the fifth never comes
    pids = {finished: "pid-finished", working: HOSTILE_PID, declined: "pid-declined", screened: "pid-screened"}
    for person, pid in pids.items():
        rest(lab.url, "POST", f"/api/participant_vars/{person.code}", json={"vars": {"prolific_pid": pid}})
    declined.submit(dict(consent_given="False"))
    finished.advance_to("Bargain")
    requests.post(demo_model + "/_script", json={"replies": [HOSTILE_TEXT]}, timeout=10)  # its first message
    run_async(play(finished.live_url(), {}))
    finished.submit().advance_to("Completion")
    working.advance_to("Bargain")
    screened.advance_to("Instructions")
    reason = {"screened_out": True, "screenout_reason": "failed_<i>comprehension</i>"}
    rest(lab.url, "POST", f"/api/participant_vars/{screened.code}", json={"vars": reason})

    admin = logged_in(lab.url, lab.password)
    page = admin.get(f"{lab.url}/StudyStatus/{code}", timeout=30).text
    rows = {
        match.group(2): match.group(1)
        for match in re.finditer(r'<tr class="status-(\w+)">\s*<td class="pid">(.*?)</td>', page, re.S)
    }
    assert rows == {
        "pid-finished": "finished",
        "&lt;img src=x onerror=alert(1)&gt;": "working",
        "pid-declined": "declined",
        "pid-screened": "screened_out",
    }
    assert HOSTILE_PID not in page and "<i>comprehension" not in page
    assert "failed &lt;i&gt;comprehension&lt;/i&gt;" in page  # the reason, as text
    assert "declined consent" in page
    assert "not started: 1" in page and "finished: 1" in page and "working: 1" in page
    assert "page Bargain (dond)" in page  # progress as a meaning, not 28/105
    assert re.search(r"game \d running: 0 of 5 messages sent, 0 of 2 proposals in", page)
    assert f'href="/DondTranscripts/{code}"' in page

    transcripts = admin.get(f"{lab.url}/DondTranscripts/{code}", timeout=30).text
    assert HOSTILE_TEXT not in transcripts and "<script>alert" not in transcripts
    assert "&lt;script&gt;alert(&#x27;model&#x27;)&lt;/script&gt;" in transcripts
    monitor = admin.get(f"{lab.url}/SessionMonitor/{code}", timeout=30).text
    assert f'href="/StudyStatus/{code}"' in monitor  # the top bar of every session page links to it


def test_a_person_left_without_a_partner_shows_as_timed_out(lab):
    session = create_session(lab.url, "dond_human", 2, pairing_timeout_s=10)
    alone = Person(session_start_links(lab.url, session["code"])[0], session["code"]).advance_to("Pairing")

    async def wait_for_a_partner():
        async with websockets.connect(alone.live_url(), open_timeout=30) as socket:
            for _ in range(30):
                await socket.send(json.dumps({"type": "wait"}))
                answer = payload_of(json.loads(await asyncio.wait_for(socket.recv(), timeout=15)))
                if answer.get("paired") is False:
                    return
                await asyncio.sleep(1)
        raise AssertionError("the pairing never timed out")

    run_async(wait_for_a_partner())
    page = logged_in(lab.url, lab.password).get(f"{lab.url}/StudyStatus/{session['code']}", timeout=30).text
    assert '<tr class="status-timed_out">' in page
    assert "no partner found within the pairing time" in page
    assert "timed out: 1" in page and "not started: 1" in page


def test_an_annotator_shows_item_progress_and_times_out_when_the_reservation_expires(lab):
    session = create_session(lab.url, "social_eval", 2, reservation_timeout_s=6)
    Annotator(session_start_links(lab.url, session["code"])[0], session["code"]).to_rating_page()
    admin = logged_in(lab.url, lab.password)
    page = admin.get(f"{lab.url}/StudyStatus/{session['code']}", timeout=30).text
    assert '<tr class="status-working">' in page
    assert re.search(r'<td class="progress-text">item 1 of \d+</td>', page)  # the app's items, not pages
    time.sleep(7)  # the reservation expires; the annotator has not come back
    page = admin.get(f"{lab.url}/StudyStatus/{session['code']}", timeout=30).text
    assert '<tr class="status-timed_out">' in page
    assert re.search(r'<td class="detail">reservation of [^<]+ expired \d+ s ago</td>', page)
