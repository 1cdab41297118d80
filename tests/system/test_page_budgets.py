"""Page-request budgets (lab_server/budgets.py ``PageBudgets``), tried as issue 35's red team did, from outside
against a production-mode server.

Found (finding 7): a participant inside reloading their own page over two connections (about 80 requests a second)
kept the server busy, and new arrivals waited on the admission page for the whole ``LAB_ADMIT_MAX_WAIT_S``. Here the
same flood meets a budget of 60 page requests a minute (bursts of 60): past its burst the flooder gets HTTP 429 at
once, with ``Retry-After``, a ``Refresh`` back to its page and a short page in the study's language; a neighbour's
page works; and a new arrival comes in instead of waiting, because the refused requests never reach oTree's lock.

The admission gate here decides by the busy share alone (more than 20 % of the last 20 s or so), as on a real server
where the busy share is what the flood drives up: a few seconds of flood without the budget hold new arrivals.
"""

from __future__ import annotations

import threading
import time
from urllib.parse import urlencode

import pytest
import requests

import study_flow
from tests.support.harness import base_env, create_session, deployment_mode, own_database, running_server

pytestmark = pytest.mark.slow

PER_MINUTE = 60  # the budget here: a burst of 60, then one a second
FLOOD_REQUESTS = 600  # what the two connections ask in all before the new arrival comes (7-12 s without the budget)
FLOODER, NEIGHBOUR, ARRIVAL = "a1" * 12, "b2" * 12, "c3" * 12


@pytest.fixture(scope="module")
def server():
    env = deployment_mode(
        base_env(
            LAB_PAGE_REQUESTS_PER_MINUTE=str(PER_MINUTE),
            LAB_ADMIT_MAX_BUSY_PERCENT="20",
            LAB_ADMIT_MAX_IN_FLIGHT="1000",
            LAB_ADMIT_TARGET_MS="600000",
        )
    )
    with own_database(env) as env, running_server(kind="prodserver", env=env) as running:
        yield running


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
