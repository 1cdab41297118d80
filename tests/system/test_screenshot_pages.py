"""The pages the documentation's pictures show are still there: for each walk ``docs/screenshots.py`` recorded
(``docs/screenshots/pages.json``), a fresh session of the same config, and every URL the record holds asked of a live
server. A page that moved (the admin reports were once photographed at an address that answered "Not Found"), is
gone, answers an error or is blank fails here; so does a walk that no longer starts on the page its first picture
shows. Plain HTTP, no browser: the pictures themselves are checked by tests/backend/test_docs_screenshots.py, and
remade by the script.
"""

from __future__ import annotations

import html
import re

import requests

from harness.servers import create_session, session_start_links
from tests.support.screenshots import shots


def walks() -> dict[str, dict]:
    """First picture's name -> the walk's session config and the recorded URLs of its pages, in order."""
    found: dict[str, dict] = {}
    for language, apps in shots.SETS.items():
        for app in apps:
            pictures = shots.pictures_of(app, language)
            record = shots.read_record()
            entries = [record[path.name] for path in pictures]
            found[pictures[0].name] = dict(
                session=entries[0]["session"], urls=list(dict.fromkeys(entry["url"] for entry in entries))
            )
    return found


def title_and_text(page: str) -> tuple[str, str]:
    """A page's title and its words, as `shots.page_problem` reads them."""
    title = re.search(r"<title>(.*?)</title>", page, re.S | re.I)
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S | re.I)
    text = html.unescape(re.sub(r"<[^>]+>", " ", body))
    return html.unescape(title.group(1)) if title else "", " ".join(text.split())


def problems_of(server_url: str, walk: dict) -> list[str]:
    """What is wrong with the walk's pages on the server now (nothing: an empty list)."""
    config = dict(walk["session"])
    session = create_session(server_url, config.pop("name"), 1, **config)
    code = session["code"]
    browser = requests.Session()
    start = browser.get(f"{session_start_links(server_url, code)[0]}?participant_label={shots.PID}", timeout=30)
    participant = start.url.split("/p/")[1].split("/")[0] if "/p/" in start.url else ""
    problems = []
    if shots.url_template(start.url, code).replace(participant, "{participant}") != walk["urls"][0]:
        problems.append(f"the walk starts on {start.url}, its first picture shows {walk['urls'][0]}")
    for url in walk["urls"]:
        address = server_url + url.replace("{session}", code).replace("{participant}", participant)
        try:
            response = browser.get(address, timeout=60)
        except requests.RequestException as error:  # the server dropped the connection (an error while rendering)
            problems.append(f"{url}: no answer ({type(error).__name__})")
            continue
        problem = shots.page_problem(response.status_code, *title_and_text(response.text))
        if problem:
            problems.append(f"{url}: {problem}")
    return problems


def test_every_recorded_page_answers_on_a_live_server(otree_server, llm_server):
    found = walks()
    assert len(found) == sum(len(apps) for apps in shots.SETS.values())
    problems = {first: problems_of(otree_server.url, walk) for first, walk in found.items()}
    assert not any(problems.values()), problems


def test_a_page_that_moved_is_found(otree_server):
    """The old address of the admin reports, and a participant page that is gone, are both reported."""
    walk = dict(
        session=dict(name="payoff_reasoning_eval", judges_per_log=1, logs_per_judge=1),
        urls=[
            "/p/{participant}/payoff_reasoning_eval/Consent/1",
            "/SessionReport/{session}",
            "/p/{participant}/payoff_reasoning_eval/Gone/2",
            "/AdminReport/{session}",
        ],
    )
    problems = problems_of(otree_server.url, walk)
    assert [problem.split(":")[0] for problem in problems] == [
        "/SessionReport/{session}",
        "/p/{participant}/payoff_reasoning_eval/Gone/2",
    ], problems
