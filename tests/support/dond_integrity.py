"""What "every page and export of a DoND session loads" means, checked from outside on a real server (issue 23):
the people's own pages, the researcher's pages (study status, transcripts, the admin report) and the three dond
exports, for one session and for all sessions, as admin → Data and the REST API serve them."""

from __future__ import annotations

import csv
import io

import requests

from harness.servers import rest

DOND_EXPORTS = ("custom_export_dond_games", "custom_export_dond_events", "custom_export_dond_late_calls")


def dond_export(server_url: str, function: str, session_code: str | None = None) -> list[dict]:
    """One dond custom export (all sessions when ``session_code`` is None); fails on anything but HTTP 200."""
    params = dict(app="dond", function_name=function, **({"session_code": session_code} if session_code else {}))
    response = rest(server_url, "GET", "/api/export_app_custom", params=params)
    assert response.status_code == 200, (function, session_code, response.status_code, response.text[-2000:])
    return list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))


def everything_loads(server_url: str, admin: requests.Session, session_code: str, people=()) -> dict[str, list]:
    """Load every page and export of the session (each must answer 200); returns its exports by function name.

    ``people`` (``harness.participants.Person``) reload the page they are on (Results, Bargain, ...).
    """
    for person in people:
        person.reload()  # raises on anything but 2xx
    for path in (f"/StudyStatus/{session_code}", f"/DondTranscripts/{session_code}", f"/AdminReport/{session_code}"):
        response = admin.get(server_url + path, timeout=60)
        assert response.status_code == 200 and "/login" not in response.url, (path, response.status_code)
    exports = {}
    for function in DOND_EXPORTS:
        dond_export(server_url, function)  # every session's: what admin → Data serves
        exports[function] = dond_export(server_url, function, session_code)
    return exports
