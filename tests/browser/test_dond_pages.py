"""The dond pages as a person uses them, in Chromium at 1280×800 and 390×844 (issues #17 and #18): rules that reopen,
a proposal previewed and confirmed in the page, errors that say what to fix, results that explain the outcome, the
other side's values only where the visibility condition shows them, German and Italian pages without English."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from backend.core.llm.fake_server import Reply
from backend.dond.demo_responder import demo as demo_responder
from dond.texts import TEXTS
from tests.support import dond_pages
from tests.support.accessibility import assert_accessible
from tests.support.dond_pages import DESKTOP, PHONE, body_text, game_row, live_keys, start, submit, to_bargain
from tests.support.language_check import assert_no_english

pytestmark = pytest.mark.browser


@pytest.fixture
def desktop(browser):
    page = dond_pages.open_page(browser, DESKTOP)
    yield page
    page.context.close()


@pytest.fixture
def phone(browser):
    page = dond_pages.open_page(browser, PHONE)
    yield page
    page.context.close()


def test_rules_reopen_a_proposal_is_previewed_and_confirmed_in_the_page_and_no_deal_is_explained(
    otree_server, llm_server, desktop
):
    page = desktop
    llm_server.responder = demo_responder  # proposes the items it values: a person who takes all gets no deal
    session = start(otree_server.url, page, max_message_chars=40)
    rules = page.locator(".dond-rules").inner_text()
    assert_accessible(page, "en", where="Instructions")
    to_bargain(page)
    assert_accessible(page, "en", where="Bargain")

    # The rules reopen in the page, the same text as on the Instructions page.
    panel = page.locator("#dond-rules-panel")
    assert not panel.locator(".dond-rules").is_visible()
    panel.locator("summary").click()
    assert panel.locator(".dond-rules").inner_text() == rules

    # An empty message is refused with a reason; a counter shows the limit before it bites.
    chars = page.locator("#dond-chars")
    assert chars.inner_text() == "0 / 40 characters" and "over" not in (chars.get_attribute("class") or "")
    page.locator("#dond-send").click()
    assert page.locator("#dond-error").inner_text() == "Please write a message first."
    # A paste over the limit is kept whole: the counter turns into an error and sending is refused.
    pasted = "I would like all of the items, please, thank you!"  # 49 characters
    page.locator("#dond-input").fill(pasted)
    assert page.locator("#dond-input").input_value() == pasted
    assert chars.inner_text().startswith("Your message is 9 characters too long (at most 40)")
    page.locator("#dond-input").press("Enter")
    assert "9 characters too long" in page.locator("#dond-error").inner_text()
    assert page.locator("#dond-input").input_value() == pasted and page.locator(".dond-msg.me").count() == 0
    assert not llm_server.requests
    assert_accessible(page, "en", where="Bargain: message refused, counter over the limit")

    # The proposal previews its points from the person's own values; a bad count says which item and what to enter.
    items = page.evaluate("js_vars.items")
    boxes = page.locator("#dond-proposal-fields input")
    boxes.nth(0).fill(str(items[0]["count"] + 1))
    expect(page.locator("#dond-preview")).to_contain_text(f"{items[0]['word']}: please enter a whole number from 0")
    page.locator("#dond-propose").click()
    assert f"from 0 to {items[0]['count']}" in page.locator("#dond-error").inner_text()
    assert page.locator("#dond-confirm").is_hidden()
    assert_accessible(page, "en", where="Bargain: proposal refused")
    for index, item in enumerate(items):
        boxes.nth(index).fill(str(item["count"]))  # everything
    total = sum(item["count"] * item["own_points"] for item in items)
    assert page.locator("#dond-preview").inner_text() == f"This proposal is worth {total} points to you."

    # Confirmed in the page with a summary (no browser dialog); "Change it" goes back to the form.
    page.locator("#dond-propose").click()
    summary = page.locator("#dond-confirm-text").inner_text()
    first = f"{items[0]['count']} {items[0]['one' if items[0]['count'] == 1 else 'word']}"
    assert f"This is worth {total} points to you." in summary and first in summary
    assert_accessible(page, "en", where="Bargain: confirmation")
    page.locator("#dond-confirm-no").click()
    assert page.locator("#dond-confirm").is_hidden() and page.locator("#dond-propose").is_visible()
    page.locator("#dond-propose").click()
    page.locator("#dond-confirm-yes").click()
    page.wait_for_url("**/Results/**", timeout=30_000)
    assert page.dialogs == []

    # No deal, explained: both proposals, what each would earn, the item asked for too often, the bonus rule.
    row = game_row(otree_server.url, session["code"])
    assert row["outcome"] == "lose"
    outcome = page.locator("#dond-outcome").inner_text()
    assert outcome.startswith("No deal: together the two proposals asked for more than there is of:")
    assert re.search(r"\((\d+) asked for, (\d+) available\)", outcome)
    table = page.locator("#dond-proposals")
    assert table.locator("tbody tr").count() == len(items) + 1
    assert page.locator("#worth-mine").inner_text() == str(total)
    assert page.locator("#worth-theirs").inner_text().isdigit()
    assert page.locator("#my-points").inner_text() == "0"
    assert page.locator("#dond-paid").inner_text() == "Bonus rule applied: without a deal there is no bonus."
    page.wait_for_function("window.dondChart && window.dondChart.data.datasets.length === 3")
    assert_accessible(page, "en", where="Results (no deal)")


def test_a_game_the_model_breaks_shows_why_the_pay_rule_and_no_blank_points_or_chart(otree_server, llm_server, phone):
    page = phone
    llm_server.responder = lambda request: Reply(status=500)
    start(otree_server.url, page, llm_max_retries=0, llm_reprompts=0)
    assert_accessible(page, "en", where="Instructions")
    to_bargain(page)
    assert_accessible(page, "en", where="Bargain")
    page.locator("#dond-input").fill("Hello, what matters to you?")
    page.locator("#dond-send").click()
    page.wait_for_url("**/Results/**", timeout=30_000)
    assert page.locator("#dond-outcome").inner_text().startswith("The game ended early: the AI model could not")
    assert page.locator("#my-points").count() == 0 and page.locator("#dond-splits").count() == 0
    assert page.locator("#dond-proposals").count() == 0  # nobody proposed
    paid = page.locator("#dond-paid").inner_text()
    assert "half the total value of all items" in paid  # the session's model_failure_pay (half_total)
    points = int(re.search(r"\((\d+) points\)", paid).group(1))
    assert points > 0 and page.locator("#bonus").inner_text().strip() not in ("", "0", "$0.00")
    assert page.evaluate("js_vars") == {}
    assert_accessible(page, "en", where="Results (broken game)")


DRAFT_KEYS = {"draft_key", "draft_prefix"}  # the unsent message's draft: participant code and game, no values
CONDITIONS = [  # visibility, what the person's page shows of the other's values, viewport
    ("own", False, PHONE),
    ("llm_sees_other", False, DESKTOP),
    ("person_sees_llm", True, PHONE),
    ("both", True, DESKTOP),
]


@pytest.mark.parametrize(("visibility", "shown", "viewport"), CONDITIONS, ids=[c[0] for c in CONDITIONS])
def test_the_other_sides_values_reach_the_persons_pages_only_where_the_condition_shows_them(
    otree_server, llm_server, browser, visibility, shown, viewport
):
    page = dond_pages.open_page(browser, viewport)
    try:
        session = start(otree_server.url, page, value_visibility=visibility)
        own, other = dond_pages.values_of(game_row(otree_server.url, session["code"]))
        rules = page.locator(".dond-rules").inner_text()
        other_cells = page.locator("#dond-items td.dond-other-values")
        own_cells = page.locator("#dond-items tbody tr td:nth-child(3)")
        assert [int(v) for v in own_cells.all_inner_texts()] == own
        if shown:
            assert [int(v) for v in other_cells.all_inner_texts()] == other
            assert "also the AI model's points per item" in rules
        else:
            assert other_cells.count() == 0 and "dond-other-values" not in page.content()
            assert "you do not see them" in rules
        sees_mine = visibility in ("llm_sees_other", "both")
        assert ("The AI model also sees your points" in rules) == sees_mine
        assert ("The AI model does not see your points" in rules) == (not sees_mine)
        assert_accessible(page, "en", where=f"Instructions ({visibility})")

        to_bargain(page)
        assert (other_cells.count() == len(other)) == shown and (other_cells.count() == 0) == (not shown)
        js_vars = page.evaluate("js_vars")
        assert [item["own_points"] for item in js_vars["items"]] == own  # the preview's own values only
        assert set(js_vars) == {"view", "items", "text", "max_chars", "opponent", "timer_shows_at_s"} | DRAFT_KEYS
        assert js_vars["draft_key"].startswith(js_vars["draft_prefix"]) and js_vars["draft_prefix"].startswith("dond:")
        assert all(set(item) == {"id", "word", "one", "count", "own_points"} for item in js_vars["items"])
        page.locator("#dond-input").fill("Which items matter to you?")
        page.locator("#dond-send").click()
        page.locator(".dond-msg.other:not(.typing)").first.wait_for()
        assert_accessible(page, "en", where=f"Bargain ({visibility}), the model's reply")
        assert page.live_payloads  # the live answers were seen, and none carries values
        assert not any("value" in key or key == "instance_json" for key in live_keys(page))
    finally:
        page.context.close()


def test_opponent_introduced_as_the_session_says_and_the_description_disclosed(otree_server, llm_server, desktop):
    page = desktop
    start(otree_server.url, page, opponent_intro="neutral", agent_description="expert", disclose_description=True)
    assert "You will negotiate with another negotiator" in page.locator(".otree-body").inner_text()
    assert "The other negotiator has been described as an expert negotiator." in page.content()
    to_bargain(page)
    page.locator("#dond-input").fill("Hello there.")
    page.locator("#dond-send").click()
    reply = page.locator(".dond-msg.other:not(.typing)").first
    reply.wait_for()
    assert reply.locator(".dond-who").inner_text() == "Other negotiator"
    assert " AI" not in body_text(page)


def test_an_unsent_chat_message_survives_a_reload_and_goes_once_sent(otree_server, llm_server, desktop):
    page = desktop
    llm_server.responder = demo_responder
    start(otree_server.url, page)
    to_bargain(page)
    typed = "Hello, I would like the books.\nWhat do you value most?"
    page.locator("#dond-input").fill(typed)
    page.reload()
    page.wait_for_function("document.querySelector('#dond-status').textContent.length > 0")
    assert page.locator("#dond-input").input_value() == typed  # typed, not sent, reloaded: still there
    page.locator("#dond-send").click()
    page.locator(".dond-msg.me").first.wait_for()  # the server stored it
    page.locator(".dond-msg.other:not(.typing)").first.wait_for()
    page.reload()
    page.wait_for_function("document.querySelector('#dond-status').textContent.length > 0")
    assert page.locator(".dond-msg.me .dond-text").first.inner_text() == typed
    assert page.locator("#dond-input").input_value() == ""  # sent: the draft is gone


@pytest.mark.parametrize("language", ["de", "it"])
def test_a_german_or_italian_game_shows_no_english_word_and_the_phone_layout_keeps_the_form_in_reach(
    otree_server, llm_server, phone, language
):
    page = phone
    text = TEXTS[language]
    start(otree_server.url, page, language=language, game_timeout_s=30, max_message_chars=10)
    assert_no_english(page, language, where="Instructions")
    assert_accessible(page, language, where="Instructions")
    to_bargain(page)
    page.locator("#dond-rules-panel summary").click()
    page.locator("#dond-send").click()  # empty: the error
    assert page.locator("#dond-error").inner_text() == text["error_empty_message"]
    page.locator("#dond-input").fill("x" * 25)  # over the limit: the counter's error
    page.locator("#dond-proposal-fields input").first.fill("1")
    assert_no_english(page, language, where="Bargain: error, counter and preview")
    assert_accessible(page, language, where="Bargain: error, counter and preview")
    page.locator("#dond-propose").click()  # the confirmation
    assert_no_english(page, language, where="Bargain: confirmation")
    assert_accessible(page, language, where="Bargain: confirmation")
    assert page.locator("#dond-confirm-yes").inner_text() == text["confirm_yes"]

    # On the phone the chat has a bounded height; the input and the proposal form follow it on the same screen.
    chat = page.locator("#dond-chat").bounding_box()
    proposal = page.locator("#dond-proposal").bounding_box()
    assert chat["height"] <= 0.4 * PHONE["height"]
    compose = page.locator("#dond-compose").bounding_box()
    assert compose["y"] + compose["height"] - chat["y"] <= 0.75 * PHONE["height"]  # chat and input on one screen
    assert proposal["y"] - chat["y"] <= 0.75 * PHONE["height"]  # and the proposal form begins on it too

    # The countdown is hidden until its last seconds (20% of 30 s here), then shown in the page's language.
    timer = page.locator(".otree-timer")
    assert timer.is_hidden()
    expect(timer).to_be_visible(timeout=30_000)
    assert text["timer_bargain"] in timer.inner_text()
    assert_no_english(page, language, where="Bargain: countdown")
    assert_accessible(page, language, where="Bargain: countdown")
    page.wait_for_url("**/Results/**", timeout=30_000)  # the time limit ends the game
    assert page.locator("#dond-splits").count() == 0 and page.locator("#my-points").count() == 0
    assert_no_english(page, language, where="Results")
    assert_accessible(page, language, where="Results")


@pytest.mark.parametrize("language", ["de", "it", "en"])
def test_the_pairing_countdown_shows_the_true_timeout(otree_server, desktop, language):
    page = desktop
    session = dond_pages.create_session(otree_server.url, "dond_human", 2, pairing_timeout_s=600, language=language)
    page.goto(dond_pages.session_start_links(otree_server.url, session["code"])[0])
    page.locator("input[name=consent_given][value=True]").check()
    submit(page)
    page.wait_for_url("**/Pairing/**")
    timer = page.locator(".otree-timer")
    expect(page.locator(".otree-timer__time-left")).to_have_text(re.compile(r"^(10:00|9:5\d)$"))
    assert TEXTS[language]["timer_pairing"] in timer.inner_text() and "complete" not in timer.inner_text()
    if language == "de":
        assert "Verbleibende Zeit für die Suche:" in timer.inner_text()
        assert (
            "bis Sie einer anderen teilnehmenden Person zugeordnet sind" in page.locator("#pairing-status").inner_text()
        )
    assert_no_english(page, language, where="Pairing")
    assert_accessible(page, language, where="Pairing")


RESULTS_IN_LANGUAGE = [
    ("de", "no_deal", DESKTOP),
    ("it", "no_deal", PHONE),
    ("de", "llm", PHONE),
    ("it", "llm", DESKTOP),
]


@pytest.mark.parametrize(
    ("language", "ending", "viewport"), RESULTS_IN_LANGUAGE, ids=[f"{c[0]}-{c[1]}" for c in RESULTS_IN_LANGUAGE]
)
def test_the_results_of_a_no_deal_or_a_broken_game_show_no_english_word(
    otree_server, llm_server, browser, language, ending, viewport
):
    """Results that explain a no-deal (both proposals, the bonus rule) or a game the model broke (the model-failure
    pay rule), in German and Italian, at both sizes."""
    page = dond_pages.open_page(browser, viewport)
    try:
        if ending == "llm":
            llm_server.responder = lambda request: Reply(status=500)
            start(otree_server.url, page, language=language, llm_max_retries=0, llm_reprompts=0)
            to_bargain(page)
            page.locator("#dond-input").fill("Hallo")
            page.locator("#dond-send").click()
        else:
            llm_server.responder = demo_responder  # proposes the items it values: taking all is no deal
            start(otree_server.url, page, language=language)
            to_bargain(page)
            for index, item in enumerate(page.evaluate("js_vars.items")):
                page.locator("#dond-proposal-fields input").nth(index).fill(str(item["count"]))
            page.locator("#dond-propose").click()
            page.locator("#dond-confirm-yes").click()
        page.wait_for_url("**/Results/**", timeout=30_000)
        if ending == "llm":
            assert page.locator("#dond-paid").inner_text().strip()  # the model-failure pay rule is stated
        else:
            assert page.locator("#dond-proposals").count() == 1
        assert_no_english(page, language, where=f"Results ({ending})")
        assert_accessible(page, language, where=f"Results ({ending})")
    finally:
        page.context.close()
