"""Limits, tried as an attacker would, against a production-mode server (lab_server/limits.py).

- one participant's code opens many ``/live`` sockets at once: six are served, the rest are refused at the handshake,
  a neighbour's page and socket still work, and closing sockets frees their slots; sockets naming made-up
  participants are refused, and so is the same participant's id written with leading zeros; a frame over 512 KiB
  closes its socket before the app parses it; a room's waiting page
  holds six sockets per label, a bounded number per client address and a bounded number in all;
- 20 wrong admin passwords in a row: the login answers HTTP 429, refuses the right password during the lockout and
  lets it in once the lockout is over, also when the method is written ``post``; wrong REST keys the same way, on
  every path that checks one;
- a multi-megabyte form post to a participant's page is refused (HTTP 413) and the participant carries on; so is a
  large body sent to a room link or the login.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import time
import urllib.parse

import pytest
import requests
import websockets

from harness.dond_live_client import advance_to_bargain
from harness.servers import base_env, create_session, deployment_mode, own_database, run_async, running_server

pytestmark = pytest.mark.slow

SOCKETS_PER_PARTICIPANT = 6  # lab_server/limits.py default
WAITING_SOCKETS = 40  # lower than the default (500) to keep the test quick
WAITING_SOCKETS_PER_ADDRESS = 20  # lab_server/limits.py
LOCKOUT_S = 8  # long enough for the 20 attempts below on a busy machine


@pytest.fixture(scope="module")
def server():
    env = deployment_mode(
        base_env(
            LAB_LOGIN_LOCKOUT_S=str(LOCKOUT_S),
            LAB_MAX_WAITING_SOCKETS=str(WAITING_SOCKETS),
            LAB_LIVE_MESSAGES_PER_MINUTE="1000000",  # the socket caps alone; message budgets: test_live_budgets.py
        )
    )
    with own_database(env) as env, running_server(kind="prodserver", env=env) as running:
        running.admin_password = env["OTREE_ADMIN_PASSWORD"]
        running.rest_key = env["OTREE_REST_KEY"]
        yield running


async def open_sockets(url: str, count: int, *, address: str = "127.0.0.1") -> tuple[list, int]:
    """Open ``count`` sockets at once from the loopback ``address``; return the open ones and how many the server
    refused at the handshake."""

    async def one():
        try:
            return await websockets.connect(url, open_timeout=60, local_addr=(address, 0))
        except websockets.exceptions.InvalidStatusCode as refusal:
            assert refusal.status_code == 403
            return None

    sockets = await asyncio.gather(*(one() for _ in range(count)))
    opened = [socket for socket in sockets if socket is not None]
    return opened, count - len(opened)


async def close_all(sockets) -> None:
    await asyncio.gather(*(socket.close() for socket in sockets))


async def assert_slots_freed(url: str) -> None:
    """Closed sockets free their slots: a full set opens again (the server notices each close a moment later)."""
    deadline = time.monotonic() + 30
    while True:
        again, _ = await open_sockets(url, SOCKETS_PER_PARTICIPANT)
        await close_all(again)
        if len(again) == SOCKETS_PER_PARTICIPANT:
            return
        assert time.monotonic() < deadline, f"only {len(again)} of {SOCKETS_PER_PARTICIPANT} slots were freed"
        await asyncio.sleep(0.2)


def after_the_lockout(attempt):
    """``attempt()`` repeated while it answers HTTP 429; its first other answer (the lockout must end in time)."""
    deadline = time.monotonic() + LOCKOUT_S + 30
    while True:
        answer = attempt()
        if (answer if isinstance(answer, int) else answer.status_code) != 429:
            return answer
        assert time.monotonic() < deadline, "the lockout did not end"
        time.sleep(0.3)


def test_one_participant_cannot_open_hundreds_of_sockets_and_a_neighbour_is_not_slowed(server):
    session = create_session(server.url, "dond_llm", 2)
    attacker, neighbour = (advance_to_bargain(link) for link in _links(server, session["code"]))

    async def scenario():
        opened, refused = await open_sockets(attacker.live_url, 200)
        try:
            assert len(opened) == SOCKETS_PER_PARTICIPANT and refused == 200 - SOCKETS_PER_PARTICIPANT
            # The neighbour's page and live socket are served while the attacker's sockets stay open.
            began = time.monotonic()
            page = await asyncio.to_thread(requests.get, neighbour.page_url, timeout=30)
            page_s = time.monotonic() - began
            assert page.status_code == 200 and "/Bargain/" in page.url
            assert page_s < 5, f"the neighbour's page took {page_s:.1f} s"
            async with websockets.connect(neighbour.live_url, open_timeout=30):
                pass
            # Still full: one more is refused.
            more, refused_more = await open_sockets(attacker.live_url, 1)
            assert (more, refused_more) == ([], 1)
        finally:
            await close_all(opened)
        await assert_slots_freed(attacker.live_url)

    run_async(scenario())


def test_sockets_for_made_up_participants_are_refused(server):
    session = create_session(server.url, "dond_llm", 1)
    [person] = (advance_to_bargain(link) for link in _links(server, session["code"]))
    real_code = re.search(r"participant_code=(\w+)", person.live_url).group(1)

    async def scenario():
        made_up = [person.live_url.replace(real_code, f"madeup{number:04d}") for number in range(50)]
        opened = []
        try:
            for url in made_up:
                sockets, _ = await open_sockets(url, 1)
                opened += sockets
            assert opened == [], f"{len(opened)} sockets for made-up participants were accepted"
            async with websockets.connect(person.live_url, open_timeout=30):
                pass  # the real participant is still served
        finally:
            await close_all(opened)

    run_async(scenario())


def test_an_oversized_live_frame_closes_the_socket_before_the_app_reads_it(server):
    session = create_session(server.url, "dond_llm", 1)
    [person] = (advance_to_bargain(link) for link in _links(server, session["code"]))
    frame = json.dumps({"type": "message", "text": "x" * (600 * 1024)})  # under the server's own 1 MiB ceiling

    async def scenario():
        async with websockets.connect(person.live_url, open_timeout=30, max_size=None) as socket:
            await socket.send(frame)
            with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
                await asyncio.wait_for(socket.recv(), timeout=30)
            assert closed.value.code == 1009
        async with websockets.connect(person.live_url, open_timeout=30) as socket:  # served again afterwards
            await socket.send(json.dumps({"type": "load"}))
            assert json.loads(await asyncio.wait_for(socket.recv(), timeout=30))

    run_async(scenario())


def test_the_same_participant_under_leading_zeros_is_one_participant(server):
    create_session(server.url, "bias_tests", 1)  # participant id 1 exists in this server's fresh database
    base = server.url.replace("http", "ws", 1) + "/wait_page?session_pk=1&page_index=1&group_id=1&participant_id="

    async def scenario():
        urls = [base + "0" * zeros + "1" for zeros in range(40)]
        results = await asyncio.gather(*(open_sockets(url, 1) for url in urls))
        opened = [socket for sockets, _ in results for socket in sockets]
        try:
            assert len(opened) <= SOCKETS_PER_PARTICIPANT, f"{len(opened)} sockets for participant 1"
            assert await open_sockets(base + "%D9%A1", 1) == ([], 1)  # an Arabic-Indic one is no id
        finally:
            await close_all(opened)

    run_async(scenario())


def test_room_waiting_sockets_are_capped_per_label_per_address_and_together(server):
    def room_socket(room: str, label: str, tab: int) -> str:
        query = f"room_name={room}&participant_label={label}&tab_unique_id=t{tab}"
        return server.url.replace("http", "ws", 1) + "/wait_for_session_in_room?" + query

    async def scenario():
        one_label, refused = await open_sockets(room_socket("dond_study", "visitor1", 0), 10)
        assert (len(one_label), refused) == (SOCKETS_PER_PARTICIPANT, 10 - SOCKETS_PER_PARTICIPANT)
        assert await open_sockets(room_socket("no_such_room", "visitor2", 0), 1) == ([], 1)
        many = {address: [] for address in ("127.0.0.1", "127.0.0.2", "127.0.0.3")}
        try:
            for address, sockets in many.items():
                for number in range(WAITING_SOCKETS_PER_ADDRESS + 5):
                    url = room_socket("dond_study", f"made-up-{address}-{number}", number)
                    sockets += (await open_sockets(url, 1, address=address))[0]
            # One address cannot fill the waiting room; several together stop at the overall cap.
            assert len(one_label) + len(many["127.0.0.1"]) == WAITING_SOCKETS_PER_ADDRESS
            assert len(many["127.0.0.2"]) == WAITING_SOCKETS_PER_ADDRESS
            assert sum(map(len, many.values())) + len(one_label) == WAITING_SOCKETS
        finally:
            await close_all(one_label + [socket for sockets in many.values() for socket in sockets])
        await assert_slots_freed(room_socket("dond_study", "visitor3", 0))

    run_async(scenario())


def _links(server, session_code: str) -> list[str]:
    from harness.servers import session_start_links

    return session_start_links(server.url, session_code)


def _login_form_token(http: requests.Session, url: str) -> str:
    form = http.get(url + "/login", timeout=30)
    return re.search(r'name="csrftoken" value="([^"]+)"', form.text).group(1)


def _login(http: requests.Session, url: str, password: str, token: str) -> requests.Response:
    data = dict(username="admin", password=password, csrftoken=token)
    return http.post(url + "/login", data=data, allow_redirects=False, timeout=30)


def test_password_guessing_is_locked_out_and_the_right_password_waits_for_the_lockout(server):
    http = requests.Session()
    token = _login_form_token(http, server.url)
    answers = [_login(http, server.url, f"guess-{number}", token).status_code for number in range(20)]
    assert answers[:5] == [200] * 5  # oTree's own "Login failed" form
    assert answers[5:] == [429] * 15, answers
    right = _login(http, server.url, server.admin_password, token)
    assert right.status_code == 429 and "Too many failed login attempts" in right.text
    wait_s = int(right.headers["Retry-After"])
    assert 0 < wait_s <= LOCKOUT_S
    assert not _logged_in(http, server.url)
    # Once the lockout is over, the right password works.
    right = after_the_lockout(lambda: _login(http, server.url, server.admin_password, token))
    assert right.status_code == 302 and _logged_in(http, server.url)


def test_a_guess_sent_the_moment_the_last_answer_arrives_already_meets_the_count(monkeypatch):
    """The fifth wrong password's answer reaches the client before oTree's view returns; a sixth guess sent at once
    must be refused. (Counting the failure only after the view returned let it through on a busy machine.)"""
    from lab_server.limits import Limits

    monkeypatch.setenv("LAB_LOGIN_FREE_ATTEMPTS", "5")
    limits = Limits()
    scope = {"type": "http", "path": "/login", "method": "POST", "client": ("203.0.113.9", 5000), "headers": []}
    statuses: list[int] = []

    async def client_send(message):
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def receive():
        return {"type": "http.request", "body": b"password=wrong", "more_body": False}

    async def login_view(scope, receive, send, *, then=None):
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})  # "Login failed" form
        await send({"type": "http.response.body", "body": b"Login failed"})
        if then is not None:  # the client's next guess arrives while this view is still finishing
            await then()

    async def guess(then=None):
        await limits.http(lambda *args: login_view(*args, then=then), scope, receive, client_send)

    async def scenario():
        for _ in range(4):
            await guess()
        await guess(then=guess)

    asyncio.run(scenario())
    assert statuses == [200] * 5 + [429]


def _raw_post(url: str, path: str, form: dict, *, method: str = "post", cookies: dict | None = None, headers=None):
    """A request with the method spelt exactly as given (``requests`` upper-cases it): (status, body text)."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    body = urllib.parse.urlencode(form)
    all_headers = {"Content-Type": "application/x-www-form-urlencoded", **(headers or {})}
    if cookies:
        all_headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in cookies.items())
    try:
        connection.request(method, path, body=body, headers=all_headers)
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def test_a_lower_case_method_is_counted_and_locked_out_too(server):
    http = requests.Session()
    token = _login_form_token(http, server.url)
    cookies = http.cookies.get_dict()

    def login(password: str) -> int:
        form = dict(username="admin", password=password, csrftoken=token)
        return _raw_post(server.url, "/login", form, cookies=cookies)[0]

    answers = [login(f"guess-{number}") for number in range(8)]
    assert answers[:5] == [200] * 5 and answers[5:] == [429] * 3, answers
    assert login(server.admin_password) == 429
    assert after_the_lockout(lambda: login(server.admin_password)) == 302


def test_wrong_rest_keys_are_locked_out_on_every_path_that_checks_one(server):
    def close_bots(key: str) -> int:
        return _raw_post(server.url, "/close_browser_bots_session", {}, method="POST", headers={"otree-rest-key": key})[
            0
        ]

    answers = [close_bots(f"wrong-{number}") for number in range(8)]
    assert answers[:5] == [403] * 5 and answers[5:] == [429] * 3, answers
    assert close_bots(server.rest_key) == 429  # no key oracle during the lockout
    assert after_the_lockout(lambda: close_bots(server.rest_key)) == 200


def test_large_bodies_are_refused_where_no_login_is_needed(server):
    two_megabytes = {"padding": "x" * (2 * 1024 * 1024)}
    assert _raw_post(server.url, "/room/bias_study", two_megabytes, method="POST")[0] == 413
    assert _raw_post(server.url, "/login", two_megabytes, method="POST")[0] == 413
    assert requests.get(server.url + "/login", timeout=30).status_code == 200


def test_a_large_rest_body_needs_the_rest_key(server):
    """Bodies are read before oTree checks the REST key: only a request with the right key may send more than 1 MiB."""
    two_megabytes = {"padding": "x" * (2 * 1024 * 1024)}
    wrong = _raw_post(server.url, "/api/sessions", two_megabytes, method="POST", headers={"otree-rest-key": "nope"})
    assert wrong[0] == 413, wrong
    assert _raw_post(server.url, "/api/sessions", two_megabytes, method="POST")[0] == 413
    right = _raw_post(
        server.url, "/api/sessions", two_megabytes, method="POST", headers={"otree-rest-key": server.rest_key}
    )
    assert right[0] != 413, right  # read whole and handed to oTree, which judges what it says


def _logged_in(http: requests.Session, url: str) -> bool:
    return http.get(url + "/sessions", allow_redirects=False, timeout=30).status_code == 200


def test_wrong_rest_keys_are_locked_out_too(server):
    def export(key: str) -> requests.Response:
        return requests.get(server.url + "/api/session_configs", headers={"otree-rest-key": key}, timeout=30)

    answers = [export(f"wrong-{number}").status_code for number in range(12)]
    assert answers[:5] == [403] * 5 and answers[5:] == [429] * 7, answers
    assert export(server.rest_key).status_code == 429
    assert after_the_lockout(lambda: export(server.rest_key)).status_code == 200


def test_a_multi_megabyte_form_post_is_refused_and_the_participant_carries_on(server):
    session = create_session(server.url, "bias_tests", 1)
    http = requests.Session()
    page = http.get(_links(server, session["code"])[0], timeout=30)
    huge = {"consent_given": "True", "padding": "x" * (3 * 1024 * 1024)}
    began = time.monotonic()
    refused = http.post(page.url, data=huge, timeout=60)
    assert refused.status_code == 413 and "too large" in refused.text, refused.status_code
    assert time.monotonic() - began < 10
    # Chunked (no Content-Length) is cut off too.
    chunks = (b"padding=" + b"x" * 65536 for _ in range(50))
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    assert http.post(page.url, data=chunks, headers=headers, timeout=60).status_code == 413
    # In the participant's language.
    german = http.post(page.url, data=huge, headers={"Accept-Language": "de-DE,de;q=0.9"}, timeout=60)
    assert german.status_code == 413 and "zu groß" in german.text
    # Nothing was lost: the same page is still there and an ordinary answer moves on.
    assert http.get(page.url, timeout=30).url == page.url
    moved = http.post(page.url, data={"consent_given": "True"}, timeout=30)
    assert moved.status_code == 200 and moved.url != page.url


def test_the_worked_examples_of_the_guards_hold():
    """lab_server is outside the doctest paths (it patches oTree when imported); its examples run here."""
    import doctest

    import lab_server.limits
    import lab_server.outputs

    for module in (lab_server.limits, lab_server.outputs):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0, module.__name__
