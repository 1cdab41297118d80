"""Grace beyond capacity (lab_server/admission.py), on a production server saturated on purpose.

The server is saturated the way a real one is: a page holds oTree's page lock (a throwaway app whose page waits while
a file exists, as a slow page step would) and the gate's threshold is one request in flight. Then:

- a new arrival from a German browser, entering the room of an Italian study with its Prolific PID, gets the waiting
  page at once, while the lock is still held (it costs no lock and no database): in Italian, ``lang="it"``, HTTP
  200, a ``Refresh`` to the same link with every parameter kept and a signed ticket; the page passes axe-core; a
  link nobody has entered by yet gets the page in the browser's language;
- a participant already inside asks for their page at the same moment: the gate does not hold them, they get their
  own page (not the waiting page) as soon as the slow page is done;
- when the load has dropped, the waiting arrival's retry comes in: one place, with its PID, and a reload of the
  same link resumes that place instead of taking a second one; the insider is still on the page they were on; the
  study status page counts the arrival let in after waiting.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urljoin, urlparse

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
    running_server,
    session_start_links,
)
from tests.support.accessibility import assert_accessible
from tests.support.admin import logged_in

pytestmark = pytest.mark.slow

STUDY = "64f1a2b3c4d5e6f7a8b9c0d1"
INSIDE, WAITING = "a1" * 12, "b2" * 12

SLOW_APP = app_source(
    "slow_page",
    doc="A page that holds oTree's page lock while the file ``hold`` exists (at most a minute): a saturated server.",
    preamble="import pathlib\nimport time\n",
    body="""
class Slow(Page):
    @staticmethod
    def vars_for_template(player):
        pathlib.Path("holding").write_text("1")
        deadline = time.monotonic() + 60
        while pathlib.Path("hold").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return {}


page_sequence = [Slow]
""",
)
SLOW_TEMPLATE = "{{ block content }}<p id='slow-done'>done</p>{{ endblock }}\n"


@pytest.fixture(scope="module")
def server():
    folder = project_with_app("slow_page", {"__init__.py": SLOW_APP, "Slow.html": SLOW_TEMPLATE}, prefix="otree-adm-")
    # The count of requests in flight alone decides here (the page-time average is tried in admission.py's doctests,
    # the busy share in the test below): the insider's page waits behind the slow page, and that slow average (or the
    # seconds the slow page kept the server busy) would hold the arrival after the release.
    env = deployment_mode(
        base_env(LAB_ADMIT_MAX_IN_FLIGHT="1", LAB_ADMIT_TARGET_MS="600000", LAB_ADMIT_MAX_BUSY_PERCENT="100")
    )
    with own_database(env) as env, running_server(kind="prodserver", env=env, folder=folder) as running:
        running.admin_password = env["OTREE_ADMIN_PASSWORD"]
        yield running


@pytest.fixture
def busy_server():
    """Only the busy share decides: the server busy more than a tenth of the time lately. For one test (its REST key
    is the module server's: one per test process, ``harness.servers.PROCESS_REST_KEY``)."""
    folder = project_with_app("slow_page", {"__init__.py": SLOW_APP, "Slow.html": SLOW_TEMPLATE}, prefix="otree-adm-")
    env = deployment_mode(
        base_env(LAB_ADMIT_MAX_IN_FLIGHT="1000", LAB_ADMIT_TARGET_MS="600000", LAB_ADMIT_MAX_BUSY_PERCENT="10")
    )
    with own_database(env) as env, running_server(kind="prodserver", env=env, folder=folder) as running:
        running.admin_password = env["OTREE_ADMIN_PASSWORD"]
        yield running


@pytest.fixture
def fresh_server():
    """As ``server`` (the count of requests in flight decides, from one), started for one test: nobody waits in its
    line yet (the module server's line holds the arrivals other tests left waiting for about 40 s)."""
    folder = project_with_app("slow_page", {"__init__.py": SLOW_APP, "Slow.html": SLOW_TEMPLATE}, prefix="otree-adm-")
    env = deployment_mode(
        base_env(LAB_ADMIT_MAX_IN_FLIGHT="1", LAB_ADMIT_TARGET_MS="600000", LAB_ADMIT_MAX_BUSY_PERCENT="100")
    )
    with own_database(env) as env, running_server(kind="prodserver", env=env, folder=folder) as running:
        yield running


def room_link(server, pid: str) -> str:
    query = urlencode(dict(participant_label=pid, STUDY_ID=STUDY, SESSION_ID="s" + pid[:6], welcome_page_ok=1))
    return f"{server.url}/room/bias_study?{query}"


def visited_labels(server, session_code: str) -> list[str]:
    """The labels of the session's participants that hold a place, once per place."""
    answer = rest(server.url, "GET", "/api/sessions/" + session_code)
    answer.raise_for_status()
    return sorted(p["label"] for p in answer.json()["participants"] if p.get("label"))


class Fetch(threading.Thread):
    """A GET in the background (it may wait for oTree's page lock)."""

    def __init__(self, url: str, **options) -> None:
        super().__init__(daemon=True)
        self.url, self.options, self.response = url, options, None

    def run(self) -> None:
        self.response = requests.get(self.url, timeout=120, **self.options)


def hold_the_page_lock(server, slow_code: str) -> Fetch:
    """Start a page step of the ``slow_page`` session ``slow_code`` that holds oTree's page lock until the file
    ``hold`` in the server's folder is removed; return once it holds the lock (the request runs in the thread)."""
    folder = Path(server.folder)
    (folder / "holding").unlink(missing_ok=True)
    (folder / "hold").write_text("1")
    holder = Fetch(session_start_links(server.url, slow_code)[0])
    holder.start()
    deadline = time.monotonic() + 60
    while not (folder / "holding").exists():
        assert time.monotonic() < deadline, "the slow page never started"
        time.sleep(0.05)
    return holder


def test_new_arrivals_wait_on_a_light_page_while_those_inside_go_on(server, page):
    session = create_session(server.url, "bias_tests", 3, room="bias_study", prolific_study_id=STUDY, language="it")
    slow = create_session(server.url, "slow_page", 1)
    italian = study_flow.messages("it")

    info = rest(server.url, "POST", f"/api/get_session/{session['code']}", json={})
    join_link = urljoin(server.url, info.json()["session_wide_url"])

    # Someone enters while the server is idle: they are inside.
    inside = requests.get(room_link(server, INSIDE), timeout=30)
    assert inside.status_code == 200 and italian["admission_title"] not in inside.text
    inside_url = inside.url
    assert "/p/" in inside_url

    # Saturate: a page step holds oTree's page lock (one request in flight, the threshold).
    folder = Path(server.folder)
    holder = hold_the_page_lock(server, slow["code"])
    try:
        insider = Fetch(inside_url)  # the insider's next request, at the same moment
        insider.start()
        returning = Fetch(room_link(server, INSIDE))  # the insider opens the study link again (no cookie): not held
        returning.start()
        # A new arrival: answered while the lock is still held, in the study's language, not the browser's.
        arrival = requests.get(
            room_link(server, WAITING), headers={"Accept-Language": "de-DE,de;q=0.9"}, timeout=20, allow_redirects=False
        )
        assert arrival.status_code == 200, arrival.status_code
        assert italian["admission_title"] in arrival.text and '<html lang="it">' in arrival.text
        assert arrival.headers["Cache-Control"] == "no-store" and arrival.headers["Connection"] == "close"
        delay, _, retry = arrival.headers["Refresh"].partition("; url=")
        assert 3 <= float(delay) <= 6  # first in line: its turn comes soon, it asks again soon
        assert italian["admission_expected_soon"] in arrival.text
        retry_query = parse_qs(urlparse(retry).query)
        assert retry_query["participant_label"] == [WAITING] and retry_query["STUDY_ID"] == [STUDY]
        assert retry_query["SESSION_ID"] == ["s" + WAITING[:6]] and retry_query["lab_wait"]
        # A link nobody has entered by yet (the study's language unknown to the gate): the browser's language.
        german = requests.get(
            join_link, params=dict(participant_label="c3" * 12), headers={"Accept-Language": "de"}, timeout=20
        )
        assert german.status_code == 200 and '<html lang="de">' in german.text
        assert study_flow.messages("de")["admission_title"] in german.text
        assert (folder / "hold").exists() and holder.is_alive()  # all this while the page lock was held

        # The same page in a browser: accessible, in Italian (still saturated, so it stays the waiting page).
        page.goto(urljoin(server.url, retry))
        assert page.locator("#admission-title").inner_text() == italian["admission_title"]
        assert_accessible(page, "it", where="the waiting page")
        assert holder.is_alive()
        page.goto("about:blank")  # its own retries would be in flight beside the ones below (the threshold is 1)
    finally:
        (folder / "hold").unlink(missing_ok=True)
    holder.join(90)
    insider.join(90)
    returning.join(90)
    assert returning.response.status_code == 200 and returning.response.url == inside_url
    assert italian["admission_title"] not in returning.response.text

    # The insider was not held: their own page, where they were.
    assert insider.response.status_code == 200 and insider.response.url == inside_url
    assert italian["admission_title"] not in insider.response.text
    assert holder.response.status_code == 200 and "slow-done" in holder.response.text

    # Load has dropped: the waiting arrival's retry comes in and takes one place with its PID.
    admitted = requests.get(urljoin(server.url, retry), timeout=30)
    assert admitted.status_code == 200 and "/p/" in admitted.url
    assert italian["admission_title"] not in admitted.text
    assert "lab_wait" not in admitted.url
    again = requests.get(urljoin(server.url, retry), timeout=30)  # a reload of the same link: the same place
    assert again.url == admitted.url
    assert visited_labels(server, session["code"]) == sorted([INSIDE, WAITING])
    assert requests.get(inside_url, timeout=30).url == inside_url  # nothing was reset

    # The researcher sees it on the study status page.
    status = logged_in(server.url, server.admin_password).get(f"{server.url}/StudyStatus/{session['code']}", timeout=30)
    admitted_after_waiting = re.search(r'<span class="n-admitted">(\d+)</span>', status.text)
    assert admitted_after_waiting and int(admitted_after_waiting.group(1)) >= 1


def test_a_server_busy_most_of_the_time_holds_new_arrivals_until_its_load_falls(busy_server):
    """Page times and requests in flight show a saturated server only once its queue is there; the share of time the
    server was busy shows it before. A server that was busy for seconds (one slow page step, nothing in flight any
    more) holds a new arrival on the waiting page; the status page says why; once the busy share has fallen back,
    the arrival's retry comes in."""
    server = busy_server
    session = create_session(server.url, "bias_tests", 1, room="bias_study", prolific_study_id=STUDY, language="it")
    slow = create_session(server.url, "slow_page", 1)
    folder = Path(server.folder)
    holder = hold_the_page_lock(server, slow["code"])
    time.sleep(5)  # busy for five seconds: a share of about 0.2 (1 - exp(-5 / 20))
    (folder / "hold").unlink()
    holder.join(90)
    assert holder.response.status_code == 200
    arrival = requests.get(room_link(server, "f6" * 12), timeout=20, allow_redirects=False)
    assert "Refresh" in arrival.headers, "a server busy most of the last seconds let a new arrival in"
    status = logged_in(server.url, server.admin_password).get(f"{server.url}/StudyStatus/{session['code']}", timeout=30)
    assert "LAB_ADMIT_MAX_BUSY_PERCENT" in status.text
    busy = re.search(r"lately\s+(\d+)%", status.text)
    assert busy and int(busy.group(1)) > 10, status.text[:2000]
    retry = urljoin(server.url, arrival.headers["Refresh"].partition("; url=")[2])
    deadline = time.monotonic() + 60
    while True:  # the window of about 20 s moves past the busy seconds: the arrival's retry comes in
        answer = requests.get(retry, timeout=20)
        if "Refresh" not in answer.headers:
            break
        assert time.monotonic() < deadline, "the arrival never came in after the load fell"
        retry = urljoin(server.url, answer.headers["Refresh"].partition("; url=")[2])
        time.sleep(2)
    assert answer.status_code == 200 and "/p/" in answer.url
    assert visited_labels(server, session["code"]) == ["f6" * 12]


def test_a_ticket_or_cookie_that_is_not_ascii_is_a_fresh_arrival_not_a_server_error(server):
    """A mangled cookie or ticket (a byte beyond ASCII, as a broken proxy or extension may send) counts as none: the
    link answers (the room's page or the waiting page), it does not fail with a server error."""
    create_session(server.url, "bias_tests", 1, room="bias_study", prolific_study_id=STUDY, language="it")
    link = room_link(server, "d4" * 12)
    for headers in ({"Cookie": "lab_admitted=1.ab.\xe9"}, {"Cookie": "lab_wait=1.ab.\xe9"}):
        answer = requests.get(link + "&lab_wait=1.ab.%C3%A9", headers=headers, timeout=30)
        assert answer.status_code == 200, (headers, answer.status_code)
    raw = requests.get(link + "&lab_wait=1.ab.\xe9", timeout=30)  # sent as the byte itself (requests keeps it)
    assert raw.status_code in (200, 400), raw.status_code


def test_an_admission_cookie_lets_in_only_the_link_and_pid_it_admitted(fresh_server):
    """Issue 35 (finding 6): the ``lab_admitted`` cookie of one arrival let in while the server was quiet later brought
    five new PIDs in at once on a saturated server, each taking a place, while an honest arrival waited. The cookie
    names the link and the PID it admitted: with another PID, or the same PID through another link, the arrival is new
    and waits in line; the PID it admitted still passes."""
    server = fresh_server
    session = create_session(server.url, "bias_tests", 8, room="bias_study", prolific_study_id=STUDY, language="it")
    info = rest(server.url, "POST", f"/api/get_session/{session['code']}", json={})
    join_link = urljoin(server.url, info.json()["session_wide_url"])
    admitted_pid, honest = "a7" * 12, "b8" * 12
    first = requests.Session()
    inside = first.get(room_link(server, admitted_pid), timeout=30)  # the server is quiet: let in, with the cookie
    assert inside.status_code == 200 and "/p/" in inside.url, "the first arrival waited: someone was still in line"
    cookie = first.cookies.get("lab_admitted")
    assert cookie, [answer.headers.get("Set-Cookie") for answer in inside.history]
    with_cookie = {"Cookie": f"lab_admitted={cookie}"}
    folder = Path(server.folder)
    slow = create_session(server.url, "slow_page", 1)
    holder = hold_the_page_lock(server, slow["code"])
    try:
        waiting = requests.get(room_link(server, honest), timeout=20, allow_redirects=False)
        assert "Refresh" in waiting.headers  # the honest arrival waits in line
        new_pids = [f"{n:02x}" * 12 for n in range(0xC1, 0xC6)]
        others = [Fetch(room_link(server, pid), headers=with_cookie, allow_redirects=False) for pid in new_pids]
        others.append(
            Fetch(f"{join_link}?participant_label={admitted_pid}", headers=with_cookie, allow_redirects=False)
        )
        # The red team's next try: no cookie, the PID let in first and then a new one (oTree reads the last).
        doubled = [room_link(server, admitted_pid) + f"&participant_label={f'{n:02x}' * 12}" for n in (0xD1, 0xD2)]
        others += [Fetch(link, allow_redirects=False) for link in doubled]
        for other in others:
            other.start()
        for other in others:
            other.join(15)  # a waiting page comes at once; an arrival let in would wait for the held page lock
        answers = [
            other.response and (other.response.status_code, "Refresh" in other.response.headers) for other in others
        ]
        assert answers == [(200, True)] * len(others), f"(status, waiting page) per arrival with the cookie: {answers}"
        assert holder.is_alive()
    finally:
        (folder / "hold").unlink(missing_ok=True)
    holder.join(90)
    for other in others:
        other.join(90)
    assert visited_labels(server, session["code"]) == [admitted_pid]  # none of them took a place
    again = requests.get(room_link(server, admitted_pid), headers=with_cookie, timeout=30)  # the PID it admitted
    assert again.url == inside.url
    twice = requests.get(doubled[0], headers=with_cookie, timeout=30)  # the cookie is for the first PID, not the last
    assert "/p/" not in twice.url and (twice.status_code == 400 or "Refresh" in twice.headers), twice.status_code
    assert visited_labels(server, session["code"]) == [admitted_pid]


def test_a_ticket_past_the_longest_wait_is_not_a_pass_for_ever():
    """A ticket let in after the longest wait, replayed later (a link shared or bookmarked), is a fresh arrival on a
    saturated server: it does not pass whatever the load, and whoever really waits comes first."""
    from lab_server.admission import Gate

    gate = Gate(max_in_flight=1, max_wait_s=60, key=b"k")
    gate.in_flight = 1
    _, ticket = gate.decide(None, now=0.0)
    for second in range(4, 64, 4):  # it polls while the server stays saturated
        admitted, _ = gate.decide(ticket, now=float(second))
    assert admitted  # past the longest wait: in, whatever the load
    gate.decide(None, now=500.0)  # someone else waits now
    for second in range(501, 600, 4):  # the old link, replayed while the server stays saturated
        admitted, retry = gate.decide(ticket, now=float(second))
        assert not admitted and retry != ticket  # held, with a fresh ticket: it queues behind those waiting


def test_a_waiting_ticket_put_in_the_admission_cookie_lets_nobody_in(server):
    """The ticket in the waiting page's retry link, copied into the ``lab_admitted`` cookie, is no admission: on a
    saturated server the arrival still waits (a client that did so skipped the queue at once)."""
    create_session(server.url, "bias_tests", 1, room="bias_study", prolific_study_id=STUDY, language="it")
    folder = Path(server.folder)
    slow = create_session(server.url, "slow_page", 1)
    holder = hold_the_page_lock(server, slow["code"])
    try:
        link = room_link(server, "e5" * 12)
        first = requests.get(link, timeout=20, allow_redirects=False)
        ticket = parse_qs(urlparse(first.headers["Refresh"].partition("; url=")[2]).query)["lab_wait"][0]
        forged = requests.get(link, headers={"Cookie": f"lab_admitted={ticket}"}, timeout=5, allow_redirects=False)
        assert "Refresh" in forged.headers and "lab_wait" in forged.headers["Refresh"]
    finally:
        (folder / "hold").unlink(missing_ok=True)
    holder.join(90)


def test_a_flood_of_fresh_arrivals_costs_each_arrival_a_constant_look_at_the_queue():
    """Each arrival looks at the queue's open head, not the whole queue: 5,000 fresh arrivals a second kept 50,000
    tickets, and copying them all for every arrival froze the server's event loop (over 10 minutes of CPU for 10 s
    of flood; 0.3 s now)."""
    from lab_server.admission import Gate

    class Counted(dict):
        visited = 0

        def items(self):
            for item in super().items():
                Counted.visited += 1
                yield item

    gate = Gate(max_in_flight=1, max_wait_s=300, key=b"k")
    gate.in_flight = 5
    gate._waiting, gate._next_sweep = Counted(), 1.0  # the whole flood falls between two sweeps
    for n in range(2000):
        gate.decide(None, now=n / 5000)
    assert len(gate._waiting) == 2000 and Counted.visited < 3 * 2000


def test_thousands_waiting_reload_as_their_turn_comes_not_every_few_seconds():
    """3,000 people in line reload after half their expected wait: a few dozen reloads a second in all, where a
    reload every 3-6 s each was 670 a second (the first launch of 3,000 served 363,908 waiting pages)."""
    from lab_server.admission import RETRY_MAX_S, RETRY_S, Gate

    gate = Gate(max_in_flight=1, max_wait_s=1800, arrivals_per_s=5, key=b"k")
    gate.in_flight = 1
    tickets = [gate.decide(None, now=n / 100)[1] for n in range(3000)]
    delays = [gate.retry_after(ticket, now=30.0) for ticket in tickets]
    assert RETRY_S[0] <= min(delays) and max(delays) <= RETRY_MAX_S
    assert delays[0] <= RETRY_S[1] and delays[-1] > 20  # the head asks often, the back of the line seldom
    reloads_per_s = sum(1 / delay for delay in delays)
    assert reloads_per_s < 160, reloads_per_s
    minutes = [gate.expected_wait(tickets[n], now=30.0) / 60 for n in (0, 299, 2999)]
    assert minutes == [0.0, 299 / 5 / 60, 2999 / 5 / 60]  # those ahead, at LAB_ADMIT_ARRIVALS_PER_S


def test_people_past_the_longest_wait_come_in_within_the_arrival_rate_and_trickle_while_saturated():
    """Thousands who reached the longest wait together came in at once, whatever the load: everyone inside then
    waited a minute for each page. Past the longest wait they come in within the arrival rate when there is room,
    and one every PAST_MAX_EVERY_S on a saturated server (a load figure stuck too high keeps nobody out for good)."""
    from lab_server.admission import PAST_MAX_EVERY_S, Gate

    gate = Gate(max_in_flight=1, max_wait_s=300, arrivals_per_s=5, key=b"k")
    gate.in_flight = 1  # saturated
    tickets = [gate.decide(None, now=0.0)[1] for _ in range(200)]
    for second in range(30, 300, 30):  # everyone keeps the waiting page open (it reloads)
        assert not any(gate.decide(ticket, now=float(second))[0] for ticket in tickets)

    def come_in(now: float) -> int:
        nonlocal tickets
        came = [gate.decide(ticket, now=now)[0] for ticket in tickets]
        tickets = [ticket for ticket, admitted in zip(tickets, came, strict=True) if not admitted]
        return sum(came)

    assert come_in(300.0) == 1  # saturated: one, not all 200
    assert come_in(300.0 + PAST_MAX_EVERY_S / 2) == 0
    assert come_in(300.0 + PAST_MAX_EVERY_S) == 1
    gate.in_flight = 0  # room: within the rate, one second's worth at a time
    assert come_in(310.0) == 5
    assert come_in(311.0) == 5


def test_someone_reloading_past_the_longest_wait_keeps_their_place_and_the_oldest_come_in_first():
    """Past LAB_ADMIT_MAX_WAIT_S people come in within the arrival rate, the longest waiting first; a ticket older than
    the longest wait was treated as a replayed link even while its holder reloaded all along, and sent to the back."""
    from lab_server.admission import FORGET_AFTER_S, Gate

    gate = Gate(max_in_flight=1, max_wait_s=300, arrivals_per_s=1, key=b"k")
    gate.in_flight = 1  # saturated all along
    early, late = gate.decide(None, now=0.0)[1], gate.decide(None, now=100.0)[1]
    while gate._take_token(100.0):  # the rate's budget spent by others
        pass
    for second in range(1, 301 + int(FORGET_AFTER_S) + 20, 5):  # both reload every 5 s, for longer than the bound
        for ticket in (late, early):  # the later one always asks first
            admitted, retry = gate.decide(ticket, now=float(second))
            assert admitted or retry == ticket  # never sent to the back with a new ticket
            if admitted:
                assert ticket == early, second  # the longest waiting comes in first
                break
        else:
            while gate._take_token(float(second)):
                pass
            continue
        break
    else:
        raise AssertionError("nobody came in")


def test_one_client_cannot_hold_the_line_and_the_expected_wait_is_fresh_for_a_new_wave():
    from lab_server.admission import Gate

    gate = Gate(max_in_flight=1, max_wait_s=300, arrivals_per_s=2, max_waiting_per_address=3, key=b"k")
    gate.in_flight = 1
    tickets = [gate.decide(None, now=0.0, address="203.0.113.7") for _ in range(5)]
    assert [bool(ticket) for _, ticket in tickets] == [True, True, True, False, False]  # the fourth: a 429 page
    assert gate.decide(None, now=0.0, address="198.51.100.2")[1]  # another client still gets in line
    assert gate.decide(tickets[0][1], now=1.0, address="203.0.113.7") == (False, tickets[0][1])  # its own reload
    # a first wave comes in slowly (one every 20 s), the line empties; an hour later a new wave's wait is at the
    # configured rate, not at the first wave's (it was 23 minutes for 20 people ahead)
    wave = [ticket for _, ticket in tickets[:3]] + [gate.decide(None, now=0.0, address=f"a{n}")[1] for n in range(8)]
    wave.append(gate.decide(None, now=0.0, address="198.51.100.2")[1])
    for n, ticket in enumerate(wave):
        gate.in_flight = 0
        assert gate.decide(ticket, now=20.0 * (n + 1), address="")[0]
        gate.in_flight = 1
        for later in wave[n + 1 :]:
            gate.decide(later, now=20.0 * (n + 1) + 1, address="")  # the others keep reloading
    assert gate.summary(now=300.0)["waiting"] == 0
    wave = [gate.decide(None, now=4000.0, address=f"192.0.2.{n}")[1] for n in range(21)]
    assert gate.expected_wait(wave[-1], now=4000.0) == 20 / 2  # 20 ahead at LAB_ADMIT_ARRIVALS_PER_S


def test_one_address_gets_the_busy_page_beyond_its_places_in_line(server):
    """One client holding many places in line would keep everyone else out: beyond LAB_NEW_PARTICIPANTS_PER_ADDRESS
    (what one address may bring in ten minutes) it gets the "too many from your connection" page, HTTP 429. Kept last:
    its tickets stay in line for a while (the tests after it use no server)."""
    import http.client

    from backend.core.environment import VARIABLES

    per_address = int(VARIABLES["LAB_NEW_PARTICIPANTS_PER_ADDRESS"].default)
    url, italian = urlparse(server.url), study_flow.messages("it")
    folder = Path(server.folder)
    holder = hold_the_page_lock(server, create_session(server.url, "slow_page", 1)["code"])
    answers = []
    try:
        for n in range(per_address + 1):
            link = urlparse(room_link(server, f"{n:024x}"))
            connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30, source_address=("127.0.0.9", 0))
            connection.request("GET", f"{link.path}?{link.query}")
            answer = connection.getresponse()
            answers.append((answer.status, answer.read().decode()))
            connection.close()
    finally:
        (folder / "hold").unlink(missing_ok=True)
    holder.join(90)
    seen = [
        (status, next((k for k in ("admission_title", "busy_title") if italian[k] in text), text[:300]))
        for status, text in answers
    ]
    assert all(status == 200 and italian["admission_title"] in text for status, text in answers[:-1]), seen
    status, text = answers[-1]
    assert status == 429 and italian["busy_title"] in text and '<html lang="it">' in text
    other = requests.get(room_link(server, "ee" * 12), timeout=30)  # another address: in line, not refused
    assert other.status_code == 200 and italian["busy_title"] not in other.text


def test_a_forged_tampered_foreign_or_expired_ticket_or_cookie_admits_nobody():
    """Tickets and admission cookies are signed (itsdangerous, a key of this process, salted with their purpose):
    one whose payload was changed (an earlier first wait, to jump the line), whose signature was made up, signed by
    another process (before a restart), signed for another purpose, or an admission older than ``ADMITTED_FOR_S``
    is none."""
    import base64
    import json

    from lab_server.admission import ADMITTED_FOR_S, Gate, admitted_for

    gate, restarted = Gate(max_in_flight=1, max_wait_s=60, key=b"k"), Gate(max_in_flight=1, max_wait_s=60, key=b"o")
    ticket = gate.ticket(now=500.0)
    assert gate.issued(ticket) == 500.0
    payload, _, signature = ticket.rpartition(".")
    earlier = base64.urlsafe_b64encode(json.dumps([1000, "00000000"]).encode()).decode().rstrip("=")
    for bad in (f"{earlier}.{signature}", f"{payload}.{changed(signature)}", f"{payload}.", "500000.ab.forged", "x"):
        assert gate.issued(bad) is None, bad
    assert restarted.issued(ticket) is None and restarted.issued(restarted.ticket(now=5.0)) == 5.0

    cookie = gate.ticket(now=500.0, purpose=admitted_for("/room/r", "aa01"))
    assert gate.admits(cookie, "/room/r", "aa01", now=500.0 + ADMITTED_FOR_S)
    assert not gate.admits(cookie, "/room/r", "aa01", now=501.0 + ADMITTED_FOR_S)  # expired
    assert not gate.admits(ticket, "/room/r", "aa01", now=501.0)  # a waiting ticket is no admission
    assert not restarted.admits(cookie, "/room/r", "aa01", now=501.0)
    payload, _, signature = cookie.rpartition(".")
    assert not gate.admits(f"{payload}.{changed(signature)}", "/room/r", "aa01", now=501.0)


def changed(signature: str) -> str:
    """``signature`` with its first character changed (the last one's lowest bits are base64's padding)."""
    return ("B" if signature[0] == "A" else "A") + signature[1:]
