"""Places go to real participants (lab_server/places.py), tried as issue 23's squatter on a production server.

- a session naming its Prolific study id: eight random PIDs without ``STUDY_ID`` and one with another study's id are
  refused with a page in the session's language (German here) and take no place; the genuine link takes one;
- one client address takes at most ``LAB_NEW_PARTICIPANTS_PER_ADDRESS`` new places in a room (4 here); the next gets a
  page saying so, a returning PID still resumes and another address still gets a place;
- places whose visitor never answered the consent page within ``consent_within_s`` are handed back to the next
  visitor (their old links no longer open them); one who answered keeps the place; the study status page counts
  them.

Each client address is a loopback address of its own (127.0.0.x), as the server sees them.
"""

from __future__ import annotations

import csv
import http.client
import io
import re
import secrets
import time
from urllib.parse import urlencode, urlparse

import pytest
import requests

import study_flow
from harness.participants import Person
from harness.servers import (
    base_env,
    create_session,
    deployment_mode,
    own_database,
    rest,
    running_server,
)

pytestmark = pytest.mark.slow

PER_ADDRESS = 4
STUDY = "64f1a2b3c4d5e6f7a8b9c0d1"


@pytest.fixture(scope="module")
def server():
    env = deployment_mode(base_env(LAB_NEW_PARTICIPANTS_PER_ADDRESS=str(PER_ADDRESS)))
    with own_database(env) as env, running_server(kind="prodserver", env=env) as running:
        running.admin_password = env["OTREE_ADMIN_PASSWORD"]
        yield running


def _visited(server, session_code: str) -> list[str]:
    """The labels of the session's participants that hold a place (oTree's own ``participant.visited``)."""
    answer = rest(server.url, "GET", "/api/export_app", params=dict(app="bias_tests", session_code=session_code))
    answer.raise_for_status()
    rows = csv.DictReader(io.StringIO(answer.content.decode("utf-8-sig")))
    return sorted({row["participant.label"] for row in rows if row["participant.visited"] in ("1", "True")})


def new_pid() -> str:
    return secrets.token_hex(12)


def enter(
    server, *, pid: str, address: str = "127.0.0.1", room: str = "bias_study", **extra
) -> http.client.HTTPResponse:
    """Open the room link as Prolific's participant ``pid`` would, from ``address``; the answer (not followed)."""
    url = urlparse(server.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30, source_address=(address, 0))
    query = urlencode(dict(welcome_page_ok=1, participant_label=pid, **extra))
    connection.request("GET", f"/room/{room}?{query}")
    answer = connection.getresponse()
    answer.text = answer.read().decode()
    connection.close()
    return answer


def test_a_study_naming_its_prolific_id_gives_no_place_to_links_without_it(server):
    session = create_session(server.url, "bias_tests", 3, room="bias_study", prolific_study_id=STUDY, language="de")
    german = study_flow.messages("de")
    for _ in range(8):
        refused = enter(server, pid=new_pid())
        assert refused.status == 403 and german["entry_wrong_study"] in refused.text
    refused = enter(server, pid=new_pid(), STUDY_ID="5f0000000000000000000000", SESSION_ID="x1")
    assert refused.status == 403 and german["entry_wrong_study"] in refused.text
    assert _visited(server, session["code"]) == []

    genuine = new_pid()
    assert enter(server, pid=genuine, STUDY_ID=STUDY, SESSION_ID="x2").status == 302
    assert _visited(server, session["code"]) == [genuine]


def test_one_address_takes_a_bounded_number_of_new_places(server):
    session = create_session(server.url, "bias_tests", 8, room="bias_study")
    english = study_flow.messages("en")
    pids = [new_pid() for _ in range(PER_ADDRESS)]
    for pid in pids:
        assert enter(server, pid=pid, address="127.0.0.2").status == 302
    refused = enter(server, pid=new_pid(), address="127.0.0.2")
    assert refused.status == 429 and english["busy_body"] in refused.text
    # A returning PID resumes; another address is not affected.
    assert enter(server, pid=pids[0], address="127.0.0.2").status == 302
    other = new_pid()
    assert enter(server, pid=other, address="127.0.0.3").status == 302
    assert sorted(_visited(server, session["code"])) == sorted([*pids, other])


def _study_status(server, session_code: str) -> str:
    http_session = requests.Session()
    login = http_session.get(server.url + "/login", timeout=30)
    token = re.search(r'name="csrftoken" value="([^"]+)"', login.text).group(1)
    http_session.post(
        server.url + "/login",
        data=dict(username="admin", password=server.admin_password, csrftoken=token),
        timeout=30,
    )
    return http_session.get(f"{server.url}/StudyStatus/{session_code}", timeout=30).text


def test_places_without_a_consent_answer_are_handed_back(server):
    session = create_session(server.url, "bias_tests", 3, room="bias_study", consent_within_s=2)
    squatters = [new_pid() for _ in range(2)]
    starts = []
    for pid in squatters:
        answer = enter(server, pid=pid, address="127.0.0.4")
        assert answer.status == 302
        starts.append(server.url + answer.getheader("location"))
    for start in starts:  # they open their first page and go no further
        assert requests.get(start, timeout=30).status_code == 200
    consenting = new_pid()
    answer = enter(server, pid=consenting, address="127.0.0.4")
    person = Person(server.url + answer.getheader("location"), session["code"])
    person.submit(dict(consent_given="True"))
    assert person.page != "Consent"
    full = enter(server, pid=new_pid(), address="127.0.0.5")
    assert full.status == 404  # every place is held

    time.sleep(3)  # longer than consent_within_s
    late = new_pid()
    assert enter(server, pid=late, address="127.0.0.5").status == 302
    assert sorted(_visited(server, session["code"])) == sorted([consenting, late])
    for start in starts:  # the squatters' links no longer open a place
        assert requests.get(start, timeout=30).status_code == 404
    person.reload()  # the participant who answered keeps going
    assert person.page != "Consent"

    status = _study_status(server, session["code"])
    handed_back = re.search(r'id="places-handed-back">.*?<span class="n">(\d+)</span>', status, re.S)
    assert handed_back and handed_back.group(1) == "2", status[:2000]
