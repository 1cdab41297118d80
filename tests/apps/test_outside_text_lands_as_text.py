"""A researcher's words holding markup land on the participant's pages as text, shown once (oTree 6 does not
autoescape ``{{ x }}``; tests/apps/test_template_escaping.py checks that every template escapes what it prints).

A social_eval session whose session keys (``study_title``, ``researcher_contact``), episodes file and rubric file
(title, instructions, labels, definitions, examples, the reasoning hint, the quiz, the worked example) hold
``<img src=x onerror=...>`` and ``</script><script>...``: every page a participant walks through (consent, instructions,
quiz, rating) is read by an HTML parser (Python's ``html.parser``). No ``img`` and no injected ``script`` element exists, the
words are there as text, and text with ``&`` and apostrophes (Italian "l'offerta") shows once, not ``&amp;`` or
``&#x27;`` (escaped twice).
"""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

from backend.social.bundled import bundled_episodes_path
from backend.social.episodes import load_episodes
from backend.social.rubrics import DEFAULT_RUBRIC_PATH
from harness.participants import Annotator
from harness.servers import create_session, session_start_links

ATTACK = "<img src=x onerror=alert(1)></script><script>alert(2)</script>"
EPISODE = load_episodes(bundled_episodes_path("en"))[0]
ONCE = "l'offerta & co"  # an apostrophe and an ampersand: escaped twice, they would read &#x27; and &amp;


class Page(HTMLParser):
    """The elements and the text of a page, as an HTML parser builds them."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in = None
        self.feed(html)
        self.close()
        self.body = " ".join(self.text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in ("script", "style") else None
        if tag == "script":
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts[-1] += data
        elif self._in is None:
            self.text.append(data)


def hostile(text: str) -> str:
    return f"{text} {ONCE} {ATTACK}"


def _rubric(tmp_path) -> str:
    data = json.loads(DEFAULT_RUBRIC_PATH.read_text(encoding="utf-8"))
    data["title"] = hostile(data["title"])
    data["instructions"][0] = hostile(data["instructions"][0])
    data["reasoning_hint"] = hostile(data["reasoning_hint"])
    first = data["dimensions"][0]
    first.update(label=hostile(first["label"]), definition=hostile(first["definition"]))
    first["examples"][0].update(rationale=hostile(first["examples"][0]["rationale"]), why=hostile("Why"))
    data["comprehension"][0].update(question=hostile(data["comprehension"][0]["question"]))
    data["comprehension"][0]["options"][0] = hostile(data["comprehension"][0]["options"][0])
    worked = data["worked_example"]
    worked["scenario"] = hostile(worked["scenario"])
    worked["turns"][0]["text"] = hostile(worked["turns"][0]["text"])
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def _episodes(tmp_path) -> str:
    episode = EPISODE.as_dict()
    episode.update(id="hostile-1", scenario=hostile(episode["scenario"]))
    episode["agents"][0].update(background=hostile(episode["agents"][0]["background"]), secret=hostile("Secret"))
    episode["turns"][0]["text"] = hostile(episode["turns"][0]["text"])
    path = tmp_path / "episodes.json"
    path.write_text(json.dumps([episode]), encoding="utf-8")
    return str(path)


def assert_shown_as_text(html: str, where: str, *, expected: int) -> None:
    page = Page(html)
    assert [tag for tag, _ in page.tags if tag == "img"] == [], where
    assert [attrs for _, attrs in page.tags if any(name.startswith("on") for name in attrs)] == [], where
    assert not [script for script in page.scripts if "alert(" in script], where
    assert page.body.count(ATTACK) >= expected, (where, page.body.count(ATTACK))
    assert page.body.count(ONCE) >= expected, where
    assert "&amp;" not in page.body and "&#x27;" not in page.body and "&lt;" not in page.body, where


@pytest.fixture(scope="module")
def server(production_server):
    """The production-mode server the suite shares (tests/conftest.py): this test uses only its own session."""
    return production_server


def test_a_researchers_markup_is_shown_as_text_once_on_every_social_eval_page(server, tmp_path):
    session = create_session(
        server.url,
        "social_eval",
        1,
        rubric_file=_rubric(tmp_path),
        episodes=_episodes(tmp_path),
        study_title=hostile("Study"),
        researcher_contact=hostile("lab@uni.example"),
        comprehension_check=True,
        episodes_per_annotator=1,
        attention_checks=0,
    )
    (link,) = session_start_links(server.url, session["code"])
    person = Annotator(link)
    assert person.page == "Consent"
    assert_shown_as_text(person.html, "Consent", expected=2)  # the study's title, the contact
    person.submit(dict(consent_given="True"))
    assert person.page == "Instructions"
    # title (twice: heading, page title), instructions, label, definition, rationale, why, worked example
    assert_shown_as_text(person.html, "Instructions", expected=8)
    person.submit()
    assert person.page == "Comprehension"
    assert_shown_as_text(person.html, "Comprehension", expected=3)  # the question, its first option, the label
    answers = json.loads(DEFAULT_RUBRIC_PATH.read_text(encoding="utf-8"))["comprehension"]
    person.submit({f"quiz_{n}": question["answer"] for n, question in enumerate(answers, start=1)})
    assert person.page == "Rate", person.url
    # scenario, background, secret, a turn; per agent the label, the definition, the rationale and why
    assert_shown_as_text(person.html, "Rate", expected=12)
    assert hostile(EPISODE.scenario) in Page(person.html).body  # the researcher's episode


def test_a_session_label_a_researcher_typed_is_shown_as_text_on_the_sessions_list(server):
    """oTree's Sessions list prints ``{{ s.label }}`` raw; a label given in the REST call (or the Edit page) holding
    markup is shown as text, once (lab_server/outputs.py)."""
    from harness.servers import rest
    from tests.support.admin import logged_in

    answer = rest(
        server.url,
        "POST",
        "/api/sessions",
        json=dict(session_config_name="social_eval", num_participants=1, label=hostile("Pilot")),
    )
    answer.raise_for_status()
    admin = logged_in(server.url, server.admin_password)
    page = Page(admin.get(server.url + "/sessions", timeout=60).text)
    assert [attrs for tag, attrs in page.tags if tag == "img" and attrs.get("src") == "x"] == []
    assert [attrs for _, attrs in page.tags if any(name.startswith("on") for name in attrs)] == []
    assert not [script for script in page.scripts if "alert(" in script]
    assert hostile("Pilot") in page.body and "&lt;" not in page.body and "&amp;" not in page.body
