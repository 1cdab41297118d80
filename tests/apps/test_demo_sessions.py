"""Every session config on the demo page starts on the embedded SQLite database with no API key."""

from __future__ import annotations

import pytest
import requests

from harness.servers import create_session, session_start_links
from tests.support.session_configs import SESSION_CONFIGS


def test_demo_page_lists_every_session_config(otree_server):
    html = requests.get(otree_server.url + "/demo", timeout=30).text
    for config in SESSION_CONFIGS:
        assert config["display_name"] in html


@pytest.mark.parametrize("config_name", [config["name"] for config in SESSION_CONFIGS])
def test_every_session_config_starts_and_shows_its_first_page(otree_server, config_name):
    config = next(c for c in SESSION_CONFIGS if c["name"] == config_name)
    session = create_session(otree_server.url, config_name, config["num_demo_participants"])
    for link in session_start_links(otree_server.url, session["code"]):
        response = requests.get(link, timeout=30)
        assert response.status_code == 200, response.text[-2000:]
        assert "/p/" in response.url
        assert "Traceback" not in response.text and "Server Error" not in response.text
