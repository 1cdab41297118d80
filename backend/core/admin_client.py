"""The researcher's pages of a running server from the command line: ``python -m backend launch-check|bonus|review
--server URL --session CODE``.

The server computes everything (``lab_server/study_pages.py``: the same rules and the same participants' statuses as
its pages); this client logs in to oTree's admin with the password from ``OTREE_ADMIN_PASSWORD`` (when the server
asks for one) and fetches the launch check (JSON), the bulk-bonus lines or the review list (CSV). Standard library
only; the password is never printed.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request

PATHS = {
    "launch-check": "/LaunchCheck/{code}?format=json",
    "bonus": "/BonusFile/{code}",
    "review": "/ReviewList/{code}",
}


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


class _LoopbackIsSecure(http.cookiejar.DefaultCookiePolicy):
    """Send ``Secure`` cookies (the server's default in production) back to a loopback address over plain http too,
    as browsers do: a server on this machine is reached without TLS, and its login cookie is still ours."""

    def return_ok_secure(self, cookie, request):
        host = urllib.parse.urlsplit(request.full_url).hostname or ""
        return host in LOOPBACK_HOSTS or super().return_ok_secure(cookie, request)


class AdminClient:
    """A logged-in admin browser session on ``server`` (``http://host:port``)."""

    def __init__(self, server: str, *, password: str | None = None, timeout_s: float = 60.0):
        if not re.fullmatch(r"https?://[^\s/?#]+/?", server or ""):
            raise ValueError(f"The server must be a URL like https://lab.example.org, not {server!r}.")
        self.server, self.timeout_s = server.rstrip("/"), timeout_s
        self.password = os.environ.get("OTREE_ADMIN_PASSWORD", "") if password is None else password
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar(policy=_LoopbackIsSecure()))
        )
        self.logged_in = False

    def _open(self, path: str, data: dict | None = None):
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        return self.opener.open(self.server + path, data=body, timeout=self.timeout_s)

    def login(self) -> None:
        page = self._open("/login").read().decode("utf-8", "replace")
        token = re.search(r'name="csrftoken" value="([^"]+)"', page)
        if token is None:
            return  # no login form: the server asks for no password
        if not self.password:
            raise ValueError("The server asks for the admin password: set OTREE_ADMIN_PASSWORD.")
        answer = self._open("/login", dict(username="admin", password=self.password, csrftoken=token.group(1)))
        if "/login" in answer.url:
            raise ValueError("The admin login failed: check OTREE_ADMIN_PASSWORD.")
        self.logged_in = True

    def fetch(self, what: str, session_code: str) -> str:
        """The text of ``what`` (a key of ``PATHS``) for a session."""
        if what not in PATHS:
            raise ValueError(f"Unknown page {what!r}; one of {', '.join(PATHS)}.")
        if not re.fullmatch(r"[a-z0-9]{1,64}", session_code or ""):
            raise ValueError(f"{session_code!r} is not a session code (lowercase letters and digits).")
        if not self.logged_in:
            self.login()
        try:
            answer = self._open(PATHS[what].format(code=session_code))
        except urllib.error.HTTPError as error:
            raise ValueError(
                f"The server answered {error.code} for session {session_code}: is the code right?"
            ) from None
        if "/login" in answer.url:
            raise ValueError("The server sent the login page: set OTREE_ADMIN_PASSWORD.")
        return answer.read().decode("utf-8")


def launch_check_table(payload: str) -> tuple[str, int]:
    """The launch check's findings as lines of text, and the exit status (1 when there is a problem).

    >>> text, status = launch_check_table('{"findings": [{"severity": "problem", "what": "No code.", "fix": "Add it."}]}')
    >>> print(text); status
    PROBLEM  No code.
             fix: Add it.
    1
    """
    findings = json.loads(payload)["findings"]
    lines = []
    for item in findings:
        lines.append(f"{item['severity'].upper():<8} {item['what']}")
        if item.get("fix"):
            lines.append(f"{'':<8} fix: {item['fix']}")
    return "\n".join(lines), int(any(item["severity"] == "problem" for item in findings))
