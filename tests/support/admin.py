"""The researcher's side of oTree's admin, driven over HTTP as a browser does: logging in, and the Monitor's
"Advance slowest participants" button. One definition for every test that needs them."""

from __future__ import annotations

import re
from collections.abc import Callable

import requests

CSRF_TOKEN = re.compile(r'name="csrftoken" value="([^"]+)"')


def logged_in(server_url: str, password: str) -> requests.Session:
    """A browser session logged in to oTree's admin with ``password`` (production mode)."""
    http = requests.Session()
    login = http.get(server_url + "/login", timeout=30)
    token = CSRF_TOKEN.search(login.text).group(1)
    answer = http.post(
        server_url + "/login", data=dict(username="admin", password=password, csrftoken=token), timeout=30
    )
    assert "/login" not in answer.url, "the admin login failed"
    return http


def advance_slowest(
    server_url: str, admin: requests.Session | None, session_code: str, *, log: Callable[[], str] | None = None
) -> None:
    """The Monitor's "Advance slowest participants" button, as its page sends it (with the page's CSRF token).

    ``admin`` is a logged-in session (``logged_in``), or None on a devserver, whose admin needs no login; ``log``
    gives the server's log for the message when the advance fails."""
    admin = admin if admin is not None else requests.Session()
    monitor = admin.get(f"{server_url}/SessionMonitor/{session_code}", timeout=60)
    token = CSRF_TOKEN.search(monitor.text)
    assert token, monitor.text[-2000:]
    response = admin.post(
        f"{server_url}/AdvanceSession/{session_code}",
        data={"advancemode": "all", "csrftoken": token.group(1)},
        timeout=60,
    )
    assert response.status_code == 200, (response.status_code, log()[-3000:] if log is not None else "")
