"""Response headers (lab_server/headers.py) on a real production server, read as an attacker's script would.

- admin pages (login, sessions, Create session, Monitor, StudyStatus) and participant pages refuse framing
  (``X-Frame-Options: DENY``, CSP ``frame-ancestors 'none'``), never sniff and send no referrer;
- the admin's session cookie is ``Secure`` in production;
- with ``LAB_FRAME_ANCESTORS`` a participant page may be framed by the named origin only (admin pages still not), and
  with ``LAB_NO_TLS=1`` the cookie is sent without ``Secure``;
- a bad ``LAB_FRAME_ANCESTORS`` (a header injection) stops the server at start.
"""

from __future__ import annotations

import re
import subprocess

import pytest
import requests

from harness.servers import (
    OTREE,
    base_env,
    create_session,
    deployment_mode,
    own_database,
    running_server,
    scratch_project,
    session_start_links,
)

pytestmark = pytest.mark.slow

SURVEY = "https://survey.example.org"


def _logged_in(server_url: str, password: str) -> tuple[requests.Session, requests.Response]:
    http = requests.Session()
    login = http.get(server_url + "/login", timeout=30)
    token = re.search(r'name="csrftoken" value="([^"]+)"', login.text).group(1)
    answer = http.post(
        server_url + "/login",
        data=dict(username="admin", password=password, csrftoken=token),
        allow_redirects=False,
        timeout=30,
    )
    assert answer.status_code in (302, 303), answer.status_code
    return http, answer


def _pages(server, http: requests.Session) -> dict[str, requests.Response]:
    session = create_session(server.url, "bias_tests", 1)
    participant = requests.get(session_start_links(server.url, session["code"])[0], timeout=30)
    assert "/p/" in participant.url
    admin = {
        path: http.get(server.url + path, timeout=30)
        for path in ("/login", "/sessions", "/create_session", f"/SessionMonitor/{session['code']}")
    }
    admin["/StudyStatus"] = http.get(f"{server.url}/StudyStatus/{session['code']}", timeout=30)
    for path, page in admin.items():
        assert page.status_code == 200 and "/login" not in page.url or path == "/login", path
    return dict(admin, participant=participant)


def _cookie_headers(answer: requests.Response) -> list[str]:
    return [value for name, value in answer.raw.headers.items() if name.lower() == "set-cookie"]


def test_production_pages_refuse_framing_and_the_cookie_is_secure():
    env = deployment_mode(base_env())
    with own_database(env) as env, running_server(kind="prodserver", env=env) as server:
        http, login = _logged_in(server.url, env["OTREE_ADMIN_PASSWORD"])
        cookies = _cookie_headers(login)
        assert cookies and all(re.search(r";\s*secure\b", cookie, re.I) for cookie in cookies), cookies
        for name, page in _pages(server, http).items():
            assert page.headers.get("X-Frame-Options") == "DENY", name
            assert page.headers.get("Content-Security-Policy") == "frame-ancestors 'none'", name
            assert page.headers.get("X-Content-Type-Options") == "nosniff", name
            assert page.headers.get("Referrer-Policy") == "no-referrer", name


def test_named_ancestors_may_frame_participant_pages_only_and_a_lab_without_tls_gets_plain_cookies():
    env = deployment_mode(base_env(LAB_FRAME_ANCESTORS=SURVEY, LAB_NO_TLS="1"))
    with own_database(env) as env, running_server(kind="prodserver", env=env) as server:
        http, login = _logged_in(server.url, env["OTREE_ADMIN_PASSWORD"])
        cookies = _cookie_headers(login)
        assert cookies and not any(re.search(r";\s*secure\b", cookie, re.I) for cookie in cookies), cookies
        pages = _pages(server, http)
        participant = pages.pop("participant")
        assert participant.headers.get("Content-Security-Policy") == f"frame-ancestors {SURVEY}"
        assert "X-Frame-Options" not in participant.headers
        for name, page in pages.items():
            assert page.headers.get("X-Frame-Options") == "DENY", name
            assert page.headers.get("Content-Security-Policy") == "frame-ancestors 'none'", name


def test_a_header_injection_in_the_frame_ancestors_stops_the_server():
    folder = scratch_project()
    env = deployment_mode(base_env(LAB_FRAME_ANCESTORS=f"{SURVEY}; script-src *"))
    result = subprocess.run(
        [OTREE, "prodserver", "127.0.0.1:1"], cwd=folder, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "LAB_FRAME_ANCESTORS must list origins" in result.stdout + result.stderr
