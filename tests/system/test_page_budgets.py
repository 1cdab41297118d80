"""Page-request budgets (lab_server/budgets.py ``PageBudgets``), tried as issue 35's red team did, from outside
against a production-mode server.

Found (finding 7): a participant inside reloading their own page over two connections (about 80 requests a second)
kept the server busy, and new arrivals waited on the admission page for the whole ``LAB_ADMIT_MAX_WAIT_S``. Here the
same flood meets a budget of 30 page requests a minute (bursts of 30): past its burst the flooder gets HTTP 429 at
once, with ``Retry-After``, a ``Refresh`` back to its page and a short page in the study's language; a neighbour's
page works; and a new arrival comes in instead of waiting, because the refused requests never reach oTree's lock.

The admission gate here decides by the busy share alone (more than 40 % of the last 20 s or so), as on a real server
where the busy share is what the flood drives up: the 2,000 requests of the flood without the budget hold new arrivals
(checked by lifting the budget). The burst the budget lets through is load too (30 pages of 10-300 ms each, depending
on how busy the machine is: a CI machine running two suites at once passed a limit of 20 % with bursts of 60), so the
gate's limit sits well above what a burst leaves and below what the unbudgeted flood leaves.
"""

from __future__ import annotations

import random
import string
import threading
import time
from urllib.parse import urlencode

import pytest
import requests

import study_flow
from harness.servers import (
    base_env,
    create_session,
    deployment_mode,
    own_database,
    running_server,
    session_start_links,
)

pytestmark = pytest.mark.slow

PER_MINUTE = 30  # the budget here: a burst of 30, then one every two seconds; made-up codes per address likewise
FLOOD_REQUESTS = 2000  # what the two connections ask in all before the new arrival comes (the budget refuses ~98 %)
FLOODER, NEIGHBOUR, ARRIVAL = "a1" * 12, "b2" * 12, "c3" * 12


def budgeted_server():
    env = deployment_mode(
        base_env(
            LAB_PAGE_REQUESTS_PER_MINUTE=str(PER_MINUTE),
            LAB_NEW_PARTICIPANTS_PER_ADDRESS=str(PER_MINUTE),
            LAB_ADMIT_MAX_BUSY_PERCENT="40",
            LAB_ADMIT_MAX_IN_FLIGHT="1000",
            LAB_ADMIT_TARGET_MS="600000",
        )
    )
    with own_database(env) as env, running_server(kind="prodserver", env=env) as running:
        yield running


# Each flood has a server of its own: the busy share a flood leaves behind (about the last 20 s) would hold the next
# test's arrival on the waiting page, whichever test floods first.
server = pytest.fixture(budgeted_server)


def room_link(server, pid: str) -> str:
    return f"{server.url}/room/bias_study?" + urlencode(dict(participant_label=pid, welcome_page_ok=1))


class Flood(threading.Thread):
    """One connection asking for ``url`` again and again until ``stop`` is set; keeps each answer's status and the
    first refused answer."""

    def __init__(self, url: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.url, self.stop, self.statuses, self.refused = url, stop, [], None

    def run(self) -> None:
        http = requests.Session()
        http.headers["Accept-Language"] = "it"  # the browser's language; the study's is German
        while not self.stop.is_set():
            answer = http.get(self.url, timeout=60, allow_redirects=False)
            self.statuses.append(answer.status_code)
            if answer.status_code == 429 and self.refused is None:
                self.refused = answer


def test_a_participant_reloading_in_a_loop_is_refused_quickly_and_new_arrivals_still_come_in(server):
    create_session(server.url, "bias_tests", 3, room="bias_study", language="de")
    flooder = requests.get(room_link(server, FLOODER), timeout=30)
    neighbour = requests.get(room_link(server, NEIGHBOUR), timeout=30)
    assert "/p/" in flooder.url and "/p/" in neighbour.url
    german = study_flow.messages("de")

    stop = threading.Event()
    floods = [Flood(flooder.url, stop) for _ in range(2)]
    began = time.monotonic()
    for flood in floods:
        flood.start()
    try:
        deadline = began + 120
        while sum(len(flood.statuses) for flood in floods) < FLOOD_REQUESTS:
            assert time.monotonic() < deadline, "the flood never reached its count"
            time.sleep(0.05)
        # The study goes on for the others: a neighbour's page, and a new arrival let in, not held on the waiting page.
        page = requests.get(neighbour.url, timeout=30)
        assert page.status_code == 200 and page.url == neighbour.url
        arrival = requests.get(room_link(server, ARRIVAL), timeout=30)
        assert "Refresh" not in arrival.headers and "/p/" in arrival.url, (
            "a participant's flood of page requests kept a new arrival on the waiting page"
        )
    finally:
        stop.set()
        for flood in floods:
            flood.join(60)
    flooded_s = time.monotonic() - began
    statuses = [status for flood in floods for status in flood.statuses]
    served = sum(status == 200 for status in statuses)
    assert served <= PER_MINUTE + PER_MINUTE / 60 * flooded_s + 5, (
        f"{served} of {len(statuses)} requests in {flooded_s:.1f} s were served: the budget is {PER_MINUTE} a minute"
    )
    assert set(statuses) <= {200, 429}, sorted(set(statuses))

    refused = next(flood.refused for flood in floods if flood.refused is not None)
    assert int(refused.headers["Retry-After"]) >= 1
    delay, _, again = refused.headers["Refresh"].partition("; url=")
    assert delay == refused.headers["Retry-After"] and flooder.url.endswith(again)
    assert '<html lang="de">' in refused.text and german["requests_title"] in refused.text
    assert refused.headers["Cache-Control"] == "no-store"


class FloodOf(Flood):
    """One connection asking for ``urls(i)`` (a new URL each time, ``i`` = 1, 2, ...) until ``stop`` is set."""

    def __init__(self, urls, stop: threading.Event) -> None:
        super().__init__("", stop)
        self.urls = urls

    def run(self) -> None:
        http, i = requests.Session(), 0
        while not self.stop.is_set():
            i += 1
            answer = http.get(self.urls(i), timeout=60, allow_redirects=False)
            self.statuses.append(answer.status_code)
            if answer.status_code == 429 and self.refused is None:
                self.refused = answer


def flooded(urls, count: int, during) -> tuple[list[int], float, list[FloodOf]]:
    """Two connections asking for ``urls(i)`` until they asked ``count`` in all, then ``during()`` while they go on:
    (every status, seconds, floods)."""
    stop = threading.Event()
    floods = [FloodOf(urls, stop) for _ in range(2)]
    began = time.monotonic()
    for flood in floods:
        flood.start()
    try:
        while sum(len(flood.statuses) for flood in floods) < count:
            assert time.monotonic() < began + 120, "the flood never reached its count"
            time.sleep(0.05)
        during()
    finally:
        stop.set()
        for flood in floods:
            flood.join(60)
    return [status for flood in floods for status in flood.statuses], time.monotonic() - began, floods


def upper_cased(code: str, i: int) -> str:
    """``code`` with the letters the bits of ``i`` choose upper-cased (a new spelling for each ``i``)."""
    return "".join(char.upper() if (i >> k) & 1 else char for k, char in enumerate(code))


def test_the_out_of_range_page_and_upper_cased_codes_count_against_the_participant(server):
    """Finding F5: ``/OutOfRangeNotification/<code>`` was not budgeted (5,638 requests in 12 s held a new arrival on
    the waiting page), and the flooder's own code with letters upper-cased was a new key each time (oTree answered
    404 under its lock). Both now count against the participant's one budget."""
    create_session(server.url, "bias_tests", 3, room="bias_study", language="de")
    flooder = requests.get(room_link(server, "d4" * 12), timeout=30)
    neighbour = requests.get(room_link(server, "e5" * 12), timeout=30)
    assert "/p/" in flooder.url and "/p/" in neighbour.url
    code = flooder.url.split("/p/")[1].split("/")[0]

    def urls(i: int) -> str:
        if i % 2:
            return f"{server.url}/OutOfRangeNotification/{code}"
        return flooder.url.replace(f"/p/{code}/", f"/p/{upper_cased(code, i // 2)}/")

    def meanwhile() -> None:  # the study goes on for the others
        page = requests.get(neighbour.url, timeout=30)
        assert page.status_code == 200 and page.url == neighbour.url
        arrival = requests.get(room_link(server, "f6" * 12), timeout=30)
        assert "Refresh" not in arrival.headers and "/p/" in arrival.url

    statuses, flooded_s, _ = flooded(urls, FLOOD_REQUESTS, meanwhile)
    served = sum(status != 429 for status in statuses)  # answered by oTree (200, or 404 for a spelling it lacks)
    assert served <= PER_MINUTE + PER_MINUTE / 60 * flooded_s + 5, (
        f"{served} of {len(statuses)} requests in {flooded_s:.1f} s reached oTree: the budget is {PER_MINUTE} a minute"
    )
    assert set(statuses) <= {200, 404, 429}, sorted(set(statuses))


def test_made_up_codes_share_one_budget_per_address_and_a_new_arrival_from_it_still_comes_in(server):
    """Finding F5: each made-up participant code was a participant with a burst of its own. Codes that name nobody
    now share their client address's budget (``LAB_NEW_PARTICIPANTS_PER_ADDRESS`` a minute, default 60, bursts of as
    many); the people of a session the server knows, and a new arrival through the room link from the same
    address, are not charged to it."""
    # A session entered by its start links (the admin's per-participant links): the first one the server has not
    # seen is looked up once, which learns every code of its session.
    direct = session_start_links(server.url, create_session(server.url, "bias_tests", 2, language="de")["code"])
    inside = requests.get(direct[0], timeout=30)
    assert "/p/" in inside.url
    # A room's session nobody entered yet: its first arrival's code is learned from the room link's redirect.
    create_session(server.url, "bias_tests", 3, room="bias_study", language="de")
    per_address = PER_MINUTE  # LAB_NEW_PARTICIPANTS_PER_ADDRESS of this server
    made_up = random.Random(7)

    def urls(i: int) -> str:
        code = "".join(made_up.choice(string.ascii_lowercase + string.digits) for _ in range(8))
        if i % 2:
            return f"{server.url}/OutOfRangeNotification/{code}"
        return f"{server.url}/p/{code}/bias_tests/Choice/1"

    def meanwhile() -> None:  # from the same address: someone inside, a new arrival, the other of inside's session
        page = requests.get(inside.url, timeout=30)
        assert page.status_code == 200 and page.url == inside.url
        arrival = requests.get(room_link(server, "b8" * 12), timeout=30)
        assert "Refresh" not in arrival.headers and "/p/" in arrival.url and arrival.status_code == 200
        second = requests.get(direct[1], timeout=30)  # direct[0]'s session: known, costs the address nothing
        assert second.status_code == 200 and "/p/" in second.url, second.status_code

    statuses, flooded_s, floods = flooded(urls, FLOOD_REQUESTS, meanwhile)
    served = sum(status != 429 for status in statuses)
    assert served <= per_address + per_address / 60 * flooded_s + 5, (
        f"{served} of {len(statuses)} requests for made-up codes in {flooded_s:.1f} s reached oTree: "
        f"the address's budget is {per_address} a minute"
    )
    assert set(statuses) <= {404, 429}, sorted(set(statuses))
    refused = next(flood.refused for flood in floods if flood.refused is not None)
    assert int(refused.headers["Retry-After"]) >= 1 and "Refresh" in refused.headers
