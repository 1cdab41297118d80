"""The shared pages of every app in German and Italian, read in Chromium by the English-word check
(tests/support/language_check.py): room welcome, consent, screen-out, completion and the entry refusals (no PID, a
malformed PID, every place taken), each also checked by axe-core (tests/support/accessibility.py); the same walk in
English is checked by axe-core at 1280×800 and 390×844 (two apps at each size). Each app's own pages are added to the
same check by its engineer.
"""

from __future__ import annotations

import re
import secrets

import pytest

import study_flow
from harness.servers import create_session, next_page
from tests.support.accessibility import assert_accessible
from tests.support.language_check import assert_no_english, english_words

pytestmark = pytest.mark.browser

# One config per app, with its room.
APPS = [
    ("dond_llm", "dond_study"),
    ("social_eval", "social_eval_study"),
    ("payoff_reasoning_eval", "payoff_reasoning_study"),
    ("bias_tests", "bias_study"),
]
# The apps whose task pages the monitor's "Advance slowest participants" moves a participant past, to the completion
# page (the same shared page in every app): all four, since an advanced Judge or bias test records nothing
# (tests/apps/test_admin_advance.py).
COMPLETION_BY_MONITOR = {"dond_llm", "social_eval", "payoff_reasoning_eval", "bias_tests"}
# The English walk's viewport per app: the shared pages are checked at both sizes, each app at one of them (the German
# and Italian walks run at the page fixture's 1200×900).
ENGLISH_VIEWPORT = {
    "dond_llm": {"width": 1280, "height": 800},
    "social_eval": {"width": 390, "height": 844},
    "payoff_reasoning_eval": {"width": 390, "height": 844},
    "bias_tests": {"width": 1280, "height": 800},
}


def new_pid() -> str:
    return secrets.token_hex(12)


def room_url(server, room: str, pid: str | None, *, welcome_page_ok: bool = False) -> str:
    query = [f"participant_label={pid}"] if pid is not None else []
    if welcome_page_ok:
        query.append("welcome_page_ok=1")
    return f"{server.url}/room/{room}?" + "&".join(query)


def advance_to_completion(server, session_code: str, page, *, max_advances: int = 60) -> None:
    """Move ``page``'s participant past the app's task pages with the monitor's "Advance slowest participants" (an
    advance over a page not shown to the participant does not reload it, so each wait is short and may time out; two
    advances close together can abort the first reload with the second, net::ERR_ABORTED, which is as good)."""
    from playwright.sync_api import Error as PlaywrightError

    monitor = page.context.new_page()
    monitor.goto(f"{server.url}/SessionMonitor/{session_code}")
    monitor.wait_for_function("typeof advanceUsers === 'function'")
    for _ in range(max_advances):
        if page.locator("#completion-code").count():
            break
        before = page.url
        monitor.evaluate(
            "document.querySelector('[name=advance_participants_mode]').value = 'visited_only'; advanceUsers()"
        )
        try:
            page.wait_for_url(lambda url, before=before: url != before, timeout=5_000)
            page.wait_for_load_state()
        except PlaywrightError:  # a timeout, or a reload aborted by the next one
            pass
    monitor.close()
    page.locator("#completion-code").wait_for()


@pytest.mark.parametrize("language", ["de", "it", "en"])
@pytest.mark.parametrize(("config_name", "room"), APPS)
def test_the_shared_pages_show_no_english_word(otree_server, browser, page, config_name, room, language):
    text = study_flow.messages(language)
    viewport = ENGLISH_VIEWPORT[config_name] if language == "en" else None
    if viewport:
        page.set_viewport_size(viewport)
    session = create_session(
        otree_server.url,
        config_name,
        2,
        room=room,
        language=language,
        completion_code="DONE1",
        screenout_code="OUT1",
        completion_redirect_seconds=600,
    )

    # The room's welcome page, as a browser without JavaScript sees it (with JavaScript it forwards at once).
    no_script = browser.new_context(java_script_enabled=False)
    welcome = no_script.new_page()
    welcome.goto(room_url(otree_server, room, new_pid()))
    assert_no_english(welcome, language, where="room welcome")
    assert welcome.locator("html").get_attribute("lang") == language
    # axe-core needs scripts: the same HTML, without the page's forwarding script, in a page that runs them.
    without_script = re.sub(r"<script>.*?</script>", "", welcome.content(), flags=re.S)
    no_script.close()
    checked = page.context.new_page()
    if viewport:
        checked.set_viewport_size(viewport)
    checked.route(
        room_url(otree_server, room, "x"), lambda route: route.fulfill(body=without_script, content_type="text/html")
    )
    checked.goto(room_url(otree_server, room, "x"))
    assert_accessible(checked, language, where="room welcome")
    checked.close()

    # One participant agrees and is moved on to the completion page (the monitor advances the slowest one).
    other = page.context.new_page()
    if viewport:
        other.set_viewport_size(viewport)
    other.goto(room_url(otree_server, room, new_pid()))
    other.wait_for_url("**/p/**")
    other.get_by_label(text["consent_yes"]).check()
    next_page(other, text["next"])
    if config_name in COMPLETION_BY_MONITOR:
        advance_to_completion(otree_server, session["code"], other)
        assert other.locator("#return-link").inner_text().strip() == text["completion_button"]
        assert_no_english(other, language, where="completion")
        assert_accessible(other, language, where="completion")

    # The other sees consent with its button in the language; declining leads to the screen-out page.
    page.goto(room_url(otree_server, room, new_pid()))
    page.wait_for_url("**/p/**")
    assert page.locator("#_otree-title").inner_text().strip() == text["consent_title"]
    assert page.locator(".otree-btn-next").inner_text().strip() == text["next"]
    assert_no_english(page, language, where="consent")
    assert_accessible(page, language, where="consent")
    page.get_by_label(text["consent_no"]).check()
    next_page(page, text["next"])
    assert page.locator("#screenout-code").inner_text() == "OUT1"
    assert_no_english(page, language, where="screen-out")
    assert_accessible(page, language, where="screen-out")

    # Links that cannot start the study: no PID, a malformed PID, and a PID when every place is taken.
    for url, reason in [
        (room_url(otree_server, room, None, welcome_page_ok=True), "missing"),
        (room_url(otree_server, room, "not-a-prolific-id", welcome_page_ok=True), "malformed"),
        (room_url(otree_server, room, new_pid(), welcome_page_ok=True), "full"),
    ]:
        page.goto(url)
        assert page.locator("#entry-text").get_attribute("data-reason") == reason
        assert_no_english(page, language, where=f"entry refused ({reason})")
        assert_accessible(page, language, where=f"entry refused ({reason})")


def test_the_check_finds_english_on_an_english_page(otree_server, page):
    """The check is not vacuous: an English session's consent page, read as a German one, fails it."""
    create_session(otree_server.url, "bias_tests", 1, room="bias_study", language="en")
    page.goto(room_url(otree_server, "bias_study", new_pid()))
    page.wait_for_url("**/p/**")
    found = english_words(page, "de")
    assert {"consent", "next", "agree", "study"} <= set(found)
    with pytest.raises(AssertionError, match="English words on a de page consent"):
        assert_no_english(page, "de", where="consent")


def test_the_researchers_own_title_and_consent_text_stay_as_written(otree_server, page):
    """A session's study_title and consent_text are the researcher's material: shown as written, not checked."""
    create_session(
        otree_server.url,
        "social_eval",
        1,
        room="social_eval_study",
        language="de",
        study_title="Our English title",
        consent_text="Please read this English information sheet.",
    )
    page.goto(room_url(otree_server, "social_eval_study", new_pid()))
    page.wait_for_url("**/p/**")
    assert page.locator(".study-title[data-material]").inner_text() == "Our English title"
    assert page.locator(".consent-text[data-material]").inner_text().strip() == (
        "Please read this English information sheet."
    )
    assert_no_english(page, "de", where="consent with the researcher's own texts")


@pytest.mark.parametrize("language", ["it", "en"])
def test_a_refused_form_says_what_to_fix_in_the_language(otree_server, page, language):
    """oTree's own messages for a refused field ("This field is required.", "Please fix the errors.") follow the
    session's language: the consent form is sent empty, past the browser's own check, and the server refuses it (in
    English on a phone, checked by axe-core)."""
    text = study_flow.messages(language)
    if language == "en":
        page.set_viewport_size({"width": 390, "height": 844})
    create_session(otree_server.url, "payoff_reasoning_eval", 2, room="payoff_reasoning_study", language=language)
    page.goto(room_url(otree_server, "payoff_reasoning_study", new_pid()))
    page.wait_for_url("**/p/**")
    page.evaluate("document.getElementById('form').noValidate = true")
    next_page(page, text["next"])
    assert page.locator(".otree-form-errors").inner_text().strip() == text["form_errors"]
    assert text["field_required"] in page.locator("#form").inner_text()
    assert_no_english(page, language, where="consent refused")
    assert_accessible(page, language, where="consent refused")
