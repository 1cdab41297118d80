"""Participants driven over plain HTTP, as a browser without JavaScript would: oTree pages are forms.

``Person`` is the one client: it follows the links, posts the forms (with oTree's CSRF token when the page has one),
keeps every page it was shown (``seen``) and knows the page's live socket. The others are Persons who arrive or
move in a particular way:

- ``Annotator``: a social_eval participant, who walks to the rating page and tells which episode it shows;
- ``Visitor``: a participant arriving by the session-wide link with a Prolific ID and the welcome page's cookie.
"""

from __future__ import annotations

import functools
import html
import json
import re
import urllib.parse

import requests

from backend.social.bundled import bundled_episodes_path
from backend.social.episodes import load_episodes
from harness.servers import create_session, rest_headers, session_start_links


class Person:
    """One participant driven over plain HTTP; keeps every page it was shown (``keeps_pages``)."""

    keeps_pages = True

    def __init__(self, link: str, session_code: str = "", *, cookies: dict | None = None, params: dict | None = None):
        self.session_code = session_code
        self.http = requests.Session()
        for name, value in (cookies or {}).items():
            self.http.cookies.set(name, value)
        self.seen: list[str] = []
        self.keep(self.http.get(link, params=params, timeout=30))

    def keep(self, response) -> None:
        """Make ``response`` the page the person is on."""
        response.raise_for_status()
        self.url, self.html = response.url, response.text
        if self.keeps_pages:
            self.seen.append(response.text)

    @property
    def server(self) -> str:
        return self.url.split("/p/")[0]

    @property
    def code(self) -> str:
        return self.url.split("/p/")[1].split("/")[0]

    @property
    def page(self) -> str:
        return self.url.rstrip("/").split("/")[-2]

    @property
    def index(self) -> int:
        return int(self.url.rstrip("/").split("/")[-1])

    def submit(self, data=None) -> Person:
        """Post the page's form with ``data`` (and the page's CSRF token, if it has one)."""
        token = re.search(r'name="csrftoken" value="([^"]+)"', self.html)
        payload = dict(data or {}, **({"csrftoken": token.group(1)} if token else {}))
        self.keep(self.http.post(self.url, data=payload, timeout=30))
        return self

    def reload(self) -> Person:
        self.keep(self.http.get(self.url, timeout=30))
        return self

    def advance_to(self, page: str) -> Person:
        for _ in range(5):
            if self.page == page:
                return self
            self.submit(dict(consent_given="True") if self.page == "Consent" else {})
        raise AssertionError(f"{self.code} is on {self.url}, not on {page}")

    def url_of(self, page: str, index: int, *, code: str | None = None) -> str:
        app = self.url.split("/p/")[1].split("/")[1]
        return f"{self.server}/p/{code or self.code}/{app}/{page}/{index}"

    def live_url(self, **forged) -> str:
        """The live socket of the current page, as the page's ``liveSend`` opens it, with ``forged`` query values."""
        query = dict(
            participant_code=self.code, page_name=self.page, page_index=self.index, session_code=self.session_code
        )
        query.update(forged)
        return self.server.replace("http", "ws", 1) + "/live?" + urllib.parse.urlencode(query)

    def js_vars(self) -> dict:
        return json.loads(re.search(r"var js_vars = (.*?);</script>", self.html, re.S).group(1))


def people(server_url: str, config: str, count: int, **config_fields) -> list[Person]:
    """A new session of ``config`` with ``count`` participants, each a Person on its start link."""
    session = create_session(server_url, config, count, **config_fields)
    return [Person(link, session["code"]) for link in session_start_links(server_url, session["code"])]


class Annotator(Person):
    """A social_eval participant (pages not kept: benchmarks run hundreds)."""

    keeps_pages = False

    def to_rating_page(self) -> Annotator:
        while self.page in ("Consent", "Instructions"):
            self.submit(dict(consent_given="True") if self.page == "Consent" else {})
        assert self.page == "Rate", self.url
        return self

    @property
    def episode_id(self) -> str:
        scenario = html.unescape(re.search(r'<p id="scenario">(.*?)</p>', self.html, re.S).group(1))
        (found,) = [e.id for e in _english_samples() if e.scenario == scenario]
        return found


@functools.cache
def _english_samples() -> list:
    """The bundled English sample episodes (``social_eval``'s ``episodes = "samples"``), read once."""
    return load_episodes(bundled_episodes_path("en"))


class Visitor(Person):
    """A participant arriving by the session-wide link with a PID and the welcome page's study-id cookie."""

    def __init__(self, server_url: str, session_code: str, pid: str, *, study_id: str = "S1"):
        ids = {"pid": pid, "study_id": study_id, "session_id": "-S1"}
        info = requests.post(
            f"{server_url}/api/get_session/{session_code}", json={}, headers=rest_headers(), timeout=30
        )
        link = info.json()["session_wide_url"]
        link = link if link.startswith("http") else server_url + link
        super().__init__(
            link,
            session_code,
            cookies={"study_ids": urllib.parse.quote(json.dumps(ids))},
            params={"participant_label": pid},
        )


def answer_one_bias_question(person: Person) -> None:
    """A bias_tests participant on the consent page consents, reads the instructions and answers until one answer is
    stored."""
    person.submit(dict(consent_given="True")).submit({})
    for _ in range(3):
        if person.page == "Choice":
            person.submit(dict(choice=0, confidence=60))
            return
        offered = re.findall(
            r'class="form-check-input bias-argument" type="checkbox" id="[^"]+" value="([^"]+)"', person.html
        )
        person.submit(dict(selected_arguments=",".join(offered[:2])))
    raise AssertionError(person.url)
