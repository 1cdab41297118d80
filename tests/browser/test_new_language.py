"""A language added by its catalogues alone (issue 38), on a server and in Chromium.

``xx`` is made at test time from the English templates (tests/support/pseudo_language.py: every letter a look-alike,
placeholders kept) in a temporary folder that the server is given as ``LAB_LOCALE_DIRS``; nothing else changes. A
session in ``xx`` is accepted (the session key ``language`` takes its values from the catalogues), and every page a
participant of social_eval, payoff_reasoning_eval and bias_tests sees, from the room's welcome page through consent,
every task page (each reached by the session monitor's "Advance slowest participants") to completion, plus the
screen-out page and the refused entry links, shows no English word (tests/support/language_check.py: the words of the English templates and of
oTree's own) and has ``<html lang="xx">``. The researcher's material (marked ``data-material``) stays as written.
"""

from __future__ import annotations

import re
import secrets

import pytest
import requests

import study_flow.texts as shared_texts
from backend.core import catalogues
from backend.core.material_language import MISMATCH_KEY
from tests.support.harness import SHARED_SERVER_ENV, apps_server, create_session, next_page, rest_headers
from tests.support.language_check import assert_no_english, english_words
from tests.support.pseudo_language import LANGUAGE, write_pseudo_language

pytestmark = pytest.mark.browser

APPS = [
    ("social_eval", "social_eval_study"),
    ("payoff_reasoning_eval", "payoff_reasoning_study"),
    ("bias_tests", "bias_study"),
]


@pytest.fixture(scope="module")
def new_language_server(_llm_server_instance, tmp_path_factory):
    folder = write_pseudo_language(tmp_path_factory.mktemp("locale"))
    with apps_server(_llm_server_instance.base_url, LAB_LOCALE_DIRS=str(folder), **SHARED_SERVER_ENV) as server:
        server.locale_folder = folder
        yield server


@pytest.fixture
def words(new_language_server, monkeypatch):
    """The shared pages' words in ``xx``, read here from the same folder the server reads."""
    monkeypatch.setenv(catalogues.LOCALE_DIRS_VARIABLE, str(new_language_server.locale_folder))
    return catalogues.translated(shared_texts.SOURCE, LANGUAGE)


def room_url(server, room: str, pid: str | None) -> str:
    return f"{server.url}/room/{room}?welcome_page_ok=1" + (f"&participant_label={pid}" if pid else "")


def checked(page, where: str, seen: list[str]) -> None:
    assert page.locator("html").get_attribute("lang") == LANGUAGE, where
    assert_no_english(page, LANGUAGE, where=where)
    seen.append(where)


def test_a_language_only_the_catalogues_know_is_refused_by_a_server_without_them(new_language_server):
    """Without the folder, ``xx`` is no language: the server that has it accepts it (the walks below), and a session
    key naming a language with no catalogue is refused."""
    response = requests.post(
        new_language_server.url + "/api/sessions",
        json=dict(
            session_config_name="bias_tests", num_participants=1, modified_session_config_fields={"language": "yy"}
        ),
        headers=rest_headers(),
        timeout=30,
    )
    assert response.status_code >= 400 and "language" in response.text


@pytest.mark.parametrize(("config_name", "room"), APPS)
def test_every_participant_page_of_a_session_in_the_new_language_has_no_english_word(
    new_language_server, words, browser, page, config_name, room
):
    server, seen = new_language_server, []
    session = create_session(
        server.url,
        config_name,
        2,
        room=room,
        language=LANGUAGE,
        completion_code="DONE1",
        screenout_code="OUT1",
        **{MISMATCH_KEY: True},
    )

    # The room's welcome page, as a browser without JavaScript sees it (with JavaScript it forwards at once).
    no_script = browser.new_context(java_script_enabled=False)
    welcome = no_script.new_page()
    welcome.goto(f"{server.url}/room/{room}?participant_label={secrets.token_hex(12)}")
    checked(welcome, "room welcome", seen)
    no_script.close()

    for pid, reason in [(None, "missing"), ("not-a-prolific-id", "malformed")]:
        page.goto(room_url(server, room, pid))
        assert page.locator("#entry-text").get_attribute("data-reason") == reason
        checked(page, f"entry refused ({reason})", seen)

    page.goto(room_url(server, room, secrets.token_hex(12)))
    page.wait_for_url("**/p/**")
    checked(page, "consent", seen)
    page.get_by_label(words["consent_yes"]).check()
    next_page(page, words["next"])

    monitor = page.context.new_page()
    monitor.goto(f"{server.url}/SessionMonitor/{session['code']}")
    monitor.wait_for_function("typeof advanceUsers === 'function'")
    for _ in range(60):
        page.wait_for_load_state()
        checked(page, re.sub(r".*/p/[^/]+/", "", page.url), seen)
        if page.locator("#completion-code").count():
            break
        before = page.url
        monitor.evaluate(
            "document.querySelector('[name=advance_participants_mode]').value = 'visited_only'; advanceUsers()"
        )
        page.wait_for_url(lambda url, before=before: url != before, timeout=15_000)
    monitor.close()
    assert page.locator("#completion-code").count(), seen

    # The second participant declines: the screen-out page.
    page.goto(room_url(server, room, secrets.token_hex(12)))
    page.wait_for_url("**/p/**")
    page.get_by_label(words["consent_no"]).check()
    next_page(page, words["next"])
    page.locator("#screenout-code").wait_for()
    checked(page, "screen-out", seen)
    assert len(seen) >= 8, seen


def test_the_check_reads_english_on_an_english_page_as_english(new_language_server, words, page):
    """Not vacuous: the English consent page, read as an ``xx`` page, has English words."""
    create_session(new_language_server.url, "bias_tests", 1, room="bias_study", language="en")
    page.goto(room_url(new_language_server, "bias_study", secrets.token_hex(12)))
    page.wait_for_url("**/p/**")
    assert {"consent", "agree", "study"} <= set(english_words(page, LANGUAGE))
