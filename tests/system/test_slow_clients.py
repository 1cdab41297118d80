"""200 slow connections against a production server (issue 23, "the untried cases"): 100 that send their headers a
byte at a time and 100 that send complete headers and then their body a byte at a time (to a participant's form, the
login, a room link). A neighbour's page and form keep working while they hang on.

oTree reads a request body under its global page lock, which every page needs; one slow body had stopped the whole
server (a neighbour's page timed out after 15 s). lab_server/limits.py reads bodies before that lock.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest
import requests

from harness.participants import Person
from harness.servers import (
    create_session,
    session_start_links,
)

pytestmark = pytest.mark.slow

SLOW_HEADERS = 100
SLOW_BODIES = 100


@pytest.fixture(scope="module")
def server(production_server):
    """The production-mode server the suite shares (tests/conftest.py): these tests use only their own sessions."""
    return production_server


class SlowClients:
    """Connections that trickle one byte per second until ``stop``."""

    def __init__(self, port: int) -> None:
        self.port, self.sockets, self.stopped = port, [], threading.Event()

    def open(self, first: bytes, trickle: bytes) -> None:
        connection = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        connection.sendall(first)
        self.sockets.append((connection, trickle))

    def run(self) -> None:
        while not self.stopped.wait(1.0):
            for connection, trickle in self.sockets:
                with contextlib.suppress(OSError):  # the server may have answered 408 and closed it
                    connection.send(trickle)

    def close(self) -> None:
        self.stopped.set()
        for connection, _ in self.sockets:
            connection.close()


def test_slow_headers_and_slow_bodies_do_not_stop_a_neighbours_page(server):
    session = create_session(server.url, "bias_tests", 2)
    victim_link, neighbour_link = session_start_links(server.url, session["code"])
    victim_page = requests.get(victim_link, timeout=30).url.split(server.url)[1]
    neighbour = Person(neighbour_link, session["code"])
    port = int(server.url.rsplit(":", 1)[1])

    clients = SlowClients(port)
    for number in range(SLOW_HEADERS):
        clients.open(f"GET /login?n={number} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".encode(), b"a")
    for number in range(SLOW_BODIES):
        path = (victim_page, "/login", "/room/bias_study")[number % 3]
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nx="
        )
        clients.open(head.encode(), b"a")
    trickling = threading.Thread(target=clients.run, daemon=True)
    trickling.start()
    try:
        time.sleep(2)
        began = time.monotonic()
        neighbour.reload()
        neighbour.submit(dict(consent_given="True"))
        took = time.monotonic() - began
        assert neighbour.page != "Consent", neighbour.url
        # Generous: without the guard the neighbour's request waited for the slow body, that is for ever.
        assert took < 10, f"the neighbour's page and form took {took:.1f} s"
    finally:
        clients.close()
