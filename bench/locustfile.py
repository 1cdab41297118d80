"""A Prolific launch of a social_eval study, as Locust drives it: each Locust user is one person who arrives once.

Each person opens the study's Prolific URL (``/room/<room>?PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=...``), does
what the room's welcome page does in a browser (keep the Prolific ids in the ``study_ids`` cookie and open the room
link with the PID as ``participant_label``), and then walks the study at human pace (``bench/pace.py``): consent,
instructions, every rating page, to the completion page. A person shown the waiting page of a busy server
(``lab_server/admission.py``) does what it says: waits the ``Refresh`` delay and reloads the URL it names, until let
in. Behind a front door (``--host`` the redirector of ``python -m backend.core.study_servers``) the person follows
its redirect to one server and stays there, as a browser does. A rating page is filled as a person would from what
the page shows: one of its choices for every rating, and a reason of at least the length its field asks for.

``bench/admission.py`` runs this file (it starts the server, creates the session, reads the server's CPU time and
prints the figures), in Locust's own environment (``backend/core/tool_envs.py``); Locust's user count and spawn
rate are the number of people and the arrivals per second. Settings, as environment variables:

| variable | what it is | default |
|---|---|---|
| ``LAB_LAUNCH_ROOM`` | the room of the study | ``social_eval_study`` |
| ``LAB_LAUNCH_STUDY_ID`` | the ``STUDY_ID`` Prolific appends | ``launch-bench`` |
| ``LAB_LAUNCH_PACE`` | scales every stay on a page (0.2: five times quicker) | 1 |
| ``LAB_LAUNCH_ARRIVALS`` | the run ends when this many people have finished (0: at ``--run-time``) | 0 |
| ``LAB_LAUNCH_OUT`` | a JSON file for every page step's time, the waits and the errors | none |

A lab can point it at its own server before a launch (a test session in the room, people it may create)::

    locust -f bench/locustfile.py --headless --host https://lab.example.org --users 300 --spawn-rate 1
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import random
import re
import secrets
import sys
import time
import urllib.parse
from pathlib import Path

import gevent
from locust import FastHttpUser, events, task

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.pace import stay_seconds  # noqa: E402

ROOM = os.environ.get("LAB_LAUNCH_ROOM", "social_eval_study")
STUDY_ID = os.environ.get("LAB_LAUNCH_STUDY_ID", "launch-bench")
PACE = float(os.environ.get("LAB_LAUNCH_PACE", "1"))
ARRIVALS = int(os.environ.get("LAB_LAUNCH_ARRIVALS", "0"))
OUT = os.environ.get("LAB_LAUNCH_OUT", "")
STUDY_PAGES = ("Consent", "Instructions", "Rate")

# What this process saw: page steps of people let in (seconds) and when each began (Unix time), waits at the door
# (seconds) and when each person was let in, waiting pages, errors, walks ended (or cut short by the run's end) and
# walks that reached the completion page.
# Through a front door (nginx's redirector, ``bench/admission.py --servers N``), ``servers`` names the server
# (``host:port``) each person was let in on, in the order of ``waits``.
RESULTS = dict(
    latencies=[],
    steps_at=[],
    admitted_at=[],
    waits=[],
    servers=[],
    waiting_pages=0,
    errors=[],
    finished=0,
    completed=0,
    arrived=0,
)


def csrf_token(page: str) -> str | None:
    """oTree's form token on a page, if it has one.

    >>> csrf_token('<input type="hidden" name="csrftoken" value="abc123">'), csrf_token("<p>no form</p>")
    ('abc123', None)
    """
    found = re.search(r'name="csrftoken" value="([^"]+)"', page)
    return found.group(1) if found else None


def page_name(url: str) -> str:
    """The oTree page a URL shows (``/p/<code>/<app>/<Page>/<index>``), else "".

    >>> page_name("http://h/p/ab12/social_eval/Rate/4"), page_name("http://h/room/x")
    ('Rate', '')
    """
    parts = urllib.parse.urlsplit(url).path.rstrip("/").split("/")
    return parts[-2] if len(parts) >= 6 and parts[1] == "p" else ""


def rating_form(page: str, rng: random.Random) -> dict[str, str]:
    """What a person enters on a rating page: one shown choice per rating, a reason as long as each field asks.

    >>> page = ('<textarea name="reason_1_1" id="r" rows="3" required minlength="20"></textarea>'
    ...         '<input type="radio" name="rating_1_1" id="a" value="-1" required>'
    ...         '<input type="radio" name="rating_1_1" id="b" value="2" required>')
    >>> form = rating_form(page, random.Random(1))
    >>> form["rating_1_1"] in ("-1", "2"), len(form["reason_1_1"]) >= 20
    (True, True)
    """
    choices: dict[str, list[str]] = {}
    for name, value in re.findall(r'<input type="radio" name="(rating_\d+_\d+)"[^>]*\svalue="(-?\d+)"', page):
        choices.setdefault(name, []).append(value)
    form = {name: rng.choice(values) for name, values in choices.items()}
    for name, length in re.findall(r'<textarea[^>]*\sname="(reason_\d+_\d+)"[^>]*\sminlength="(\d+)"', page):
        reason = f"The agent's turn {rng.randint(1, 9)} shows it, as the conversation goes on. "
        form[name] = (reason * (int(length) // len(reason) + 1)).strip()
    return form


def refusal(page: str) -> str:
    """What a page shown again after its form says is wrong (oTree's error texts), for the failure's record.

    >>> refusal('<div class="otree-form-errors alert alert-danger">Please fix the errors.</div><p>x</p>')
    'Please fix the errors.'
    """
    found = re.findall(r'<(?:div|span|li|p)[^>]*class="[^"]*(?:alert|error|invalid)[^"]*"[^>]*>([^<]+)<', page)
    return " | ".join(text.strip() for text in found if text.strip())[:300] or "no error text on the page"


class Person(FastHttpUser):
    """One Prolific participant: arrives once, walks the study, then stays idle until the run ends."""

    network_timeout = 120.0
    connection_timeout = 120.0

    def _cookie(self, name: str, value: str) -> None:
        host = urllib.parse.urlsplit(self.host).hostname or "localhost"
        domain = host if "." in host else host + ".local"  # how Python's cookie jar names a host without a dot
        self.client.cookiejar.set_cookie(
            http.cookiejar.Cookie(
                0, name, value, None, False, domain, False, False, "/", True, False, None, True, None, None, {}
            )  # fmt: skip
        )

    def _open(self, method: str, url: str, *, name: str, data: dict | None = None):
        """``method`` ``url`` and the redirects it answers with, as a browser follows them; the last answer and its
        absolute URL (Locust's fast client would report the first URL as the answer's)."""
        url = urllib.parse.urljoin(self.host, url)
        response = self.client.request(method, url, data=data, name=name, allow_redirects=False)
        for _ in range(10):
            if response.status_code == 0 or response.text is None:  # no answer: a reset or closed connection
                raise RuntimeError(f"{name}: no answer from the server ({response.error!r})")
            if response.status_code not in (301, 302, 303, 307, 308):
                return response, url
            url = urllib.parse.urljoin(url, response.headers["location"])
            response = self.client.request("GET", url, name=f"{name} (redirect)", allow_redirects=False)
        raise RuntimeError(f"more than 10 redirects from {url}")

    def _get(self, url: str, name: str):
        """GET ``url``; on the waiting page, wait and reload as it says. The answer, its URL and the seconds waited."""
        began, waited = time.perf_counter(), 0.0
        response, url = self._open("GET", url, name=name)
        while response.status_code == 200 and response.headers.get("refresh"):
            RESULTS["waiting_pages"] += 1
            delay, _, retry = response.headers["refresh"].partition("; url=")
            gevent.sleep(float(delay))
            waited = time.perf_counter() - began
            response, url = self._open("GET", urllib.parse.urljoin(url, retry), name="waiting page (reload)")
        return response, url, waited

    def _fail(self, message: str) -> None:
        RESULTS["errors"].append(message[:200])
        events.request.fire(
            request_type="STUDY", name="walk", response_time=0, response_length=0, exception=RuntimeError(message)
        )

    @task
    def take_part(self) -> None:
        rng = random.Random()
        pid = secrets.token_hex(12)
        ids = dict(PROLIFIC_PID=pid, STUDY_ID=STUDY_ID, SESSION_ID=f"launch-{pid[:8]}")
        RESULTS["arrived"] += 1
        try:
            self._walk(rng, pid, ids)
        except Exception as error:  # a reset connection, a page out of place: counted, and this person stops
            self._fail(f"{type(error).__name__}: {error}")
        finally:
            RESULTS["finished"] += 1
            if ARRIVALS and RESULTS["finished"] >= ARRIVALS:
                gevent.spawn_later(0.5, self.environment.runner.quit)
        gevent.sleep(10**6)  # one arrival per person: idle (no requests) until the run ends

    def _walk(self, rng: random.Random, pid: str, ids: dict) -> None:
        room = f"/room/{ROOM}?" + urllib.parse.urlencode(ids)
        began = time.perf_counter()
        welcome, at, waited_welcome = self._get(room, "room link (Prolific URL)")
        if welcome.status_code != 200:
            raise RuntimeError(f"the room link answered {welcome.status_code}")
        # what the welcome page's script does: the ids in a cookie, then the room link with the PID as label
        self._cookie(
            "study_ids", urllib.parse.quote(json.dumps(dict(pid=pid, study_id=STUDY_ID, session_id=ids["SESSION_ID"])))
        )
        # on the server that showed the welcome page (behind a front door, the one it redirected to), as a browser
        label_link = (
            urllib.parse.urljoin(at, f"/room/{ROOM}")
            + "?"
            + urllib.parse.urlencode(
                dict(participant_label=pid, STUDY_ID=STUDY_ID, SESSION_ID=ids["SESSION_ID"], welcome_page_ok=1)
            )
        )
        response, url, waited = self._get(label_link, "room link (welcome page forward)")
        waited += waited_welcome
        RESULTS["waits"].append(waited)
        RESULTS["admitted_at"].append(time.time())
        RESULTS["servers"].append(urllib.parse.urlsplit(url).netloc)
        if not waited:  # let in at once: the entry was a page step (two requests)
            _step(began)
        page = page_name(url)
        while page in STUDY_PAGES:
            gevent.sleep(stay_seconds(rng.uniform, page, scale=PACE))
            data = {"consent_given": "True"} if page == "Consent" else {}
            data = rating_form(response.text, rng) if page == "Rate" else data
            token = csrf_token(response.text)
            data.update({"csrftoken": token} if token else {})
            shown = url
            began = time.perf_counter()
            response, url = self._open("POST", shown, data=data, name=f"{page} submit")
            _step(began)
            if response.status_code >= 400:
                raise RuntimeError(f"{page} answered {response.status_code}")
            if url == shown:
                raise RuntimeError(f"the {page} form was refused: {refusal(response.text)}")
            page = page_name(url)
        if page != "Completion":
            raise RuntimeError(f"ended on {url} instead of the completion page")
        RESULTS["completed"] += 1


def _step(began: float) -> None:
    """Record a page step that began at ``began`` (``time.perf_counter()``): its time, and when it began."""
    took = time.perf_counter() - began
    RESULTS["latencies"].append(took)
    RESULTS["steps_at"].append(time.time() - took)


@events.quitting.add_listener
def _write_results(environment, **_) -> None:
    if OUT:
        Path(OUT).write_text(json.dumps(RESULTS), encoding="utf-8")
