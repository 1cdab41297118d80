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
from backend.dond.demo_responder import demo as demo_responder
from harness.servers import (
    SHARED_SERVER_ENV,
    apps_server,
    create_session,
    export_rows,
    next_page,
    rest_headers,
    session_start_links,
)
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


# -- DoND in the new language: the pages follow the catalogues, the model its prompts (llm_prompt_language) -------

TYPED = (
    "Ħȧŀŀǿ, ƀīŧŧḗ"  # what a person types: their own words, not the page's (marked data-own-text, as every chat text)
)


def dond_page(browser, link: str):
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(link)
    page.locator("input[name=consent_given][value=True]").check()
    return page


def on_bargain(page) -> None:
    page.wait_for_url("**/Bargain/**")
    page.wait_for_function("document.querySelector('#dond-status').textContent.length > 0")


def propose(page, where: str, seen: list[str]) -> None:
    """Ask for one of the first item, check the page with its confirmation open, confirm."""
    page.locator("#dond-proposal-fields input").first.fill("1")
    page.locator("#dond-propose").click()
    page.locator("#dond-confirm-text").wait_for()
    checked(page, where, seen)
    page.locator("#dond-confirm-yes").click()


def finish(page, who: str, seen: list[str]) -> None:
    """Results (both proposals in the table, item words from the catalogue), then the completion page."""
    page.wait_for_url("**/Results/**", timeout=30_000)
    assert page.locator("#dond-proposals tbody tr").count() >= 3
    checked(page, f"{who}: Results", seen)
    next_page_by(page, ".otree-btn-next")
    page.locator("#completion-code").wait_for()
    checked(page, f"{who}: completion", seen)


def arrive_at(page, pattern: str, *, timeout_ms: int = 30_000) -> None:
    """Wait until ``page`` shows ``pattern``'s page. A navigation cut short by the next one (net::ERR_ABORTED) is not
    an arrival: wait again."""
    from playwright.sync_api import Error as PlaywrightError

    for _ in range(5):
        try:
            page.wait_for_url(pattern, timeout=timeout_ms)
            return
        except PlaywrightError as error:
            if "ERR_ABORTED" not in str(error):
                raise
    page.wait_for_url(pattern, timeout=timeout_ms)


def next_page_by(page, selector: str) -> None:
    with page.expect_navigation(wait_until="load"):
        page.locator(selector).first.click()


def test_a_dond_game_of_two_people_in_the_new_language_has_no_english_word(new_language_server, browser):
    """Person vs person needs no prompts: consent, pairing, instructions, a message each way, both secret proposals,
    Results with the proposal table and completion, for both people, all in ``xx``."""
    server, seen = new_language_server, []
    session = create_session(
        server.url, "dond_human", 2, language=LANGUAGE, max_messages=1, completion_code="DONE2", pairing_timeout_s=600
    )
    links = session_start_links(server.url, session["code"])
    first = dond_page(browser, links[0])
    checked(first, "A: consent", seen)
    next_page_by(first, ".otree-btn-next")
    first.wait_for_url("**/Pairing/**")
    checked(first, "A: pairing", seen)
    second = dond_page(browser, links[1])
    next_page_by(second, ".otree-btn-next")
    pages = {"A": first, "B": second}
    for who, page in pages.items():
        arrive_at(page, "**/Instructions/**")
        assert page.locator("#dond-items tbody tr").count() >= 3  # the items, named by the catalogue
        checked(page, f"{who}: instructions", seen)
        next_page_by(page, ".otree-btn-next")
        on_bargain(page)
    opener = next(who for who, page in pages.items() if page.locator("#dond-input").is_enabled())
    order = [opener, "B" if opener == "A" else "A"]
    for who in order:  # a message each way
        page = pages[who]
        page.wait_for_function("!document.querySelector('#dond-input').disabled")
        page.locator("#dond-input").fill(TYPED)
        page.locator("#dond-send").click()
        page.locator(".dond-msg.me .dond-text").first.wait_for()
    for who in order:
        pages[who].locator(".dond-msg.other:not(.typing) .dond-text").first.wait_for()
        checked(pages[who], f"{who}: bargain, a message each way", seen)
    for who in order:  # the opener proposes first, then the other
        pages[who].locator("#dond-propose").wait_for(state="visible", timeout=20_000)
        pages[who].wait_for_function("!document.querySelector('#dond-propose').disabled")
        propose(pages[who], f"{who}: bargain, proposal confirmed", seen)
    for who, page in pages.items():
        finish(page, who, seen)
        page.context.close()
    assert len(seen) >= 12, seen
    # The record says which language the people read and which the game's words were kept in.
    (row,) = export_rows(server.url, "dond", "custom_export_dond_games", session_code=session["code"])
    assert (row["language"], row["prompt_language"]) == (LANGUAGE, "en")


def test_a_dond_game_against_a_model_in_the_new_language_has_no_english_word_on_the_page(
    new_language_server, llm_server, browser
):
    """Person vs model in ``xx``: the model reads its English prompts (``llm_prompt_language=en``) and writes English,
    the person reads ``xx``. The model's chat bubbles (and their copy for screen readers) are the model's words, not
    the page's: like a person's typed text they are marked ``data-own-text`` and left out of the check; every other
    word of the pages, the item names included, is checked."""
    server, seen = new_language_server, []
    llm_server.responder = demo_responder  # bargains in the prompts' language, then proposes
    session = create_session(
        server.url,
        "dond_llm",
        1,
        language=LANGUAGE,
        llm_prompt_language="en",
        llm_model="test-model",
        first_mover="human",
        completion_code="DONE3",
    )
    page = dond_page(browser, session_start_links(server.url, session["code"])[0])
    checked(page, "consent", seen)
    next_page_by(page, ".otree-btn-next")
    page.wait_for_url("**/Instructions/**")
    checked(page, "instructions", seen)
    next_page_by(page, ".otree-btn-next")
    on_bargain(page)
    page.locator("#dond-input").fill(TYPED)
    page.locator("#dond-send").click()
    reply = page.locator(".dond-msg.other:not(.typing) .dond-text").first
    reply.wait_for(timeout=30_000)
    assert english_text(reply.inner_text())  # the model bargains in English: its words are left out, not absent
    page.wait_for_function("!document.querySelector('#dond-propose').disabled")
    checked(page, "bargain, a message each way", seen)
    propose(page, "bargain, proposal confirmed", seen)
    finish(page, "person", seen)
    assert [request["messages"][0]["content"] for request in llm_server.requests][0].count("Proposal:") >= 1
    assert len(seen) >= 6, seen
    page.context.close()


def english_text(text: str) -> bool:
    return bool({"the", "and", "you", "for", "items", "would", "like"} & set(re.findall(r"[a-z]+", text.lower())))


def test_a_dond_session_with_a_model_in_a_language_without_prompts_is_refused_naming_the_key(new_language_server):
    """No prompts for ``xx``: creating a person-vs-model session is refused at creation with a sentence that names
    llm_prompt_language and the prompt folder a lab would add; with the key it is created (the walk above)."""
    response = requests.post(
        new_language_server.url + "/api/sessions",
        json=dict(
            session_config_name="dond_llm",
            num_participants=1,
            modified_session_config_fields={"language": LANGUAGE, "llm_model": "test-model"},
        ),
        headers=rest_headers(),
        timeout=30,
    )
    assert response.status_code >= 400
    assert "llm_prompt_language" in response.text and f"dond_prompts/{LANGUAGE}/" in response.text
