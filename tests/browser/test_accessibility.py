"""Pages used by keyboard alone and read by a screen reader (docs/accessibility.md): a whole DoND game on a phone
against the test-server model, with a visible focus at every step, every control named in Playwright's accessibility
tree, the other side's messages read out by a live region, the typing bubble saying that the model writes, the
proposal form kept in place while it writes and the points table in view while proposing; a German social_eval
episode (1280×800) and an Italian bias test (touch phone) by keyboard alone, each refusal read out as an alert and
gone once fixed; the bias slider shows its focus before it is touched; a touch phone reads "tap" and never "click"
(instructions, hints, error messages)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

import study_flow
from backend.core.llm.fake_server import Reply
from backend.social.rubrics import load_rubric
from bias_tests.texts import TEXTS as BIAS_TEXTS
from dond.texts import texts as dond_texts
from harness.servers import create_session, next_page, session_start_links
from payoff_reasoning_eval.texts import TEXTS as PAYOFF_TEXTS
from social_eval import texts as social_texts
from tests.support import dond_pages
from tests.support.accessibility import assert_accessible
from tests.support.dond_pages import PHONE, start
from tests.support.language_check import all_strings, assert_no_english, language_tables, visible_text

pytestmark = pytest.mark.browser

SOCIAL_RUBRIC = load_rubric()
LLM_CHAT = "Hallo! Die Äpfel sind mir wenig wert, die anderen Dinge hätte ich gern."

# The focused element and whether a focus ring is drawn around it (an outline, or Bootstrap's box-shadow ring). A
# control drawn by its neighbour (social_eval's scale: an invisible radio button over its drawn box) shows its focus
# on that neighbour.
_FOCUS_JS = """
() => {
  const element = document.activeElement;
  const own = window.getComputedStyle(element);
  const drawn = own.opacity === '0' && element.nextElementSibling ? element.nextElementSibling : element;
  const style = window.getComputedStyle(drawn);
  const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== 'none';
  return {id: element.id, tag: element.tagName, name: element.name || '', value: element.value || '',
          classes: element.className || '', ring: ring};
}
"""
# Roles a person operates; each needs a name in the accessibility tree (Playwright's aria snapshot writes a named
# one as `- role "name"`).
CONTROL_ROLES = (
    "button",
    "link",
    "textbox",
    "searchbox",
    "radio",
    "radiogroup",
    "checkbox",
    "slider",
    "spinbutton",
    "combobox",
    "listbox",
    "switch",
    "tab",
)
_UNNAMED = re.compile(r"^\s*- (" + "|".join(CONTROL_ROLES) + r')(?! ")\b')


def scripted_model():
    """The model's first answer is a chat message (streamed slowly); every later one, after the person's proposal,
    its own proposal of nothing, which fits any proposal of the person's: a deal."""
    calls = []

    def responder(request):
        calls.append(request)
        if len(calls) > 1:
            return Reply(text="Einverstanden. [Vorschlag:]", chunk_delay_s=0.02)
        # A second before the first word: the typing bubble lasts long enough to be seen on a busy machine.
        return Reply(text=LLM_CHAT, delay_s=1.0, chunk_delay_s=0.15)

    return responder


def focused(page) -> dict:
    found = page.evaluate(_FOCUS_JS)
    assert found["ring"], f"no visible focus on {found}"
    return found


def tab_to(page, element_id: str, *, limit: int = 40) -> None:
    """Press Tab until the element ``element_id`` has the focus; each stop shows a focus ring."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if focused(page)["id"] == element_id:
            return
    raise AssertionError(f"#{element_id} not reached by Tab")


def tab_to_field(page, name: str, *, limit: int = 40) -> None:
    """Press Tab until a control of the form field ``name`` has the focus; each stop shows a focus ring."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if focused(page)["name"] == name:
            return
    raise AssertionError(f"no control of {name!r} reached by Tab")


def tab_to_next_button(page, *, limit: int = 60) -> None:
    for _ in range(limit):
        page.keyboard.press("Tab")
        if "otree-btn-next" in focused(page)["classes"]:
            return
    raise AssertionError("the page's Next button is not reached by Tab")


def choose_by_keyboard(page, name: str, value: str) -> None:
    """Choose ``value`` of the radio group ``name`` as a keyboard user does: Tab into the group, Space, arrows."""
    tab_to_field(page, name)
    page.keyboard.press("Space")
    for _ in range(20):
        if focused(page)["value"] == value:
            break
        page.keyboard.press("ArrowDown")
    assert page.locator(f"input[name='{name}'][value='{value}']").is_checked()


def press_next(page) -> None:
    """Tab to the page's Next button and press Enter: the next page loads."""
    tab_to_next_button(page)
    with page.expect_navigation(wait_until="load"):
        page.keyboard.press("Enter")


def assert_controls_named(page, where: str) -> str:
    """Every control shown on ``page`` has a name in Playwright's accessibility tree; returns the tree."""
    tree = page.locator("body").aria_snapshot()
    unnamed = [line.strip() for line in tree.splitlines() if _UNNAMED.match(line)]
    assert not unnamed, f"controls without a name on {where}: {unnamed}\n{tree}"
    return tree


def in_view(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"] + 1


def test_a_whole_dond_game_by_keyboard_on_a_phone_with_a_screen_reader(otree_server, llm_server, browser):
    llm_server.responder = scripted_model()
    text = dond_texts("de", "ai")
    page = dond_pages.open_page(browser, PHONE)
    page.emulate_media(reduced_motion="reduce")  # no smooth scrolling: the geometry is read at once
    try:
        start(otree_server.url, page, language="de")
        page.locator(".otree-btn-next").focus()
        with page.expect_navigation(wait_until="load"):
            page.keyboard.press("Enter")
        page.wait_for_function("document.querySelector('#dond-status').textContent.length > 0")
        assert_accessible(page, "de", where="Bargain")

        # Every control has a name in the accessibility tree.
        expect(page.get_by_role("textbox", name=text["placeholder"])).to_be_visible()
        expect(page.get_by_role("button", name=text["send"])).to_be_visible()
        expect(page.get_by_role("region", name=text["chat_label"])).to_be_attached()
        for item in page.evaluate("js_vars.items"):
            expect(page.get_by_role("spinbutton", name=item["word"])).to_be_attached()

        # A message written and sent by keyboard; the typing bubble says that the model writes, the proposal form
        # stays where it was, and the reply is read out once by the live region.
        tab_to(page, "dond-input")
        page.keyboard.type("Ich hätte gern die Äpfel.")
        proposal_before = page.locator("#dond-proposal").bounding_box()
        page.keyboard.press("Enter")
        typing = page.locator(".dond-msg.typing")
        expect(typing.locator(".dond-dots span")).to_have_count(3)
        expect(typing.locator(".visually-hidden")).to_have_text(text["typing"])
        expect(page.locator("#dond-status")).to_have_attribute("role", "status")
        proposal_while = page.locator("#dond-proposal").bounding_box()
        assert proposal_while is not None and abs(proposal_while["y"] - proposal_before["y"]) < 40
        expect(page.locator("#dond-announce")).to_contain_text(LLM_CHAT, timeout=30_000)
        assert page.locator("#dond-announce p").count() == 1  # once, not again on each redraw
        expect(page.locator("#dond-announce")).to_have_attribute("aria-live", "polite")

        # Proposing by keyboard: the points table stays in view at every box; the confirmation takes the focus.
        tab_to(page, page.locator("#dond-proposal-fields input").first.get_attribute("id"))
        page.keyboard.type("1")
        for index in range(1, page.locator("#dond-proposal-fields input").count()):
            page.keyboard.press("Tab")
            assert focused(page)["id"] == page.locator("#dond-proposal-fields input").nth(index).get_attribute("id")
            assert in_view(page, "#dond-items"), "the points table left the screen while proposing"
            assert in_view(page, "#dond-proposal-fields input >> nth=" + str(index))
        tab_to(page, "dond-propose")
        page.keyboard.press("Enter")
        page.wait_for_function("document.activeElement && document.activeElement.id === 'dond-confirm-yes'")
        assert focused(page)["id"] == "dond-confirm-yes"  # and its focus ring shows
        assert_accessible(page, "de", where="Bargain: confirmation")
        page.keyboard.press("Enter")
        page.wait_for_url("**/Results/**", timeout=30_000)
        assert_accessible(page, "de", where="Results")
        page.wait_for_function("window.dondChart")
        chart = page.locator("#dond-splits").bounding_box()
        assert chart["height"] >= 250 and chart["x"] + chart["width"] <= PHONE["width"]  # readable on the phone
    finally:
        page.context.close()


def _to_bias_choice(page, server_url: str, language: str = "en", *, on_instructions=None) -> None:
    """A new bias_tests participant, walked to the first test that asks for a confidence (``on_instructions(page)`` is
    called on the instructions page)."""
    shared = study_flow.messages(language)
    session = create_session(server_url, "bias_tests", 1, order_seed=7, language=language)
    page.goto(session_start_links(server_url, session["code"])[0])
    page.get_by_label(shared["consent_yes"]).check()
    next_page(page, shared["next"])
    if on_instructions is not None:
        on_instructions(page)
    next_page(page, shared["next"])
    for _ in range(20):
        if page.locator("#confidence-slider").count():
            return
        page.locator(".bias-argument").first.check()
        next_page(page, shared["next"])
    raise AssertionError("no test with a confidence slider")


def test_the_bias_slider_shows_its_focus_before_it_is_touched(otree_server, page):
    _to_bias_choice(page, otree_server.url)
    slider = page.locator("#confidence-slider")
    assert "untouched" in slider.get_attribute("class")
    page.locator("input[name=choice]").last.focus()
    tab_to(page, "confidence-slider")
    assert "untouched" in slider.get_attribute("class")  # focused, not answered, and the focus shows
    page.keyboard.press("ArrowRight")
    expect(page.locator("#confidence-value")).to_have_text("51")
    expect(page.locator("label[for=confidence-slider]")).to_contain_text(BIAS_TEXTS["en"]["confidence_label"])
    assert "tap" not in page.locator(".bias-confidence").inner_text()  # a mouse clicks
    assert_accessible(page, "en", where="bias choice, slider focused")


# "click" in English, German ("Klick", "klicken") and Italian ("clic", "cliccare", "clicchi").
CLICK = re.compile(r"clic|klick", re.IGNORECASE)


def assert_no_click(page, where: str) -> str:
    """What the person sees on ``page`` (``language_check.visible_text``), which must not say "click"."""
    shown = visible_text(page)
    found = [shown[max(0, m.start() - 60) : m.end() + 60] for m in CLICK.finditer(shown)]
    assert not found, f"a touch screen reads 'click' on {where}: {found}"
    return shown


@pytest.mark.parametrize("language", ["en", "de", "it"])
def test_a_touch_screen_reads_tap_instead_of_click(otree_server, llm_server, browser, language):
    """On a touch phone no instructions, hint or error message says "click": bias_tests' instructions, slider and
    its error, payoff's instructions, judging page and its error, DoND's instructions and the results of a game the
    model broke ("press Continue")."""
    context = browser.new_context(viewport=PHONE, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(20_000)
    shared = study_flow.messages(language)
    try:
        text = BIAS_TEXTS[language]

        def instructions(page):
            assert text["confidence_intro_touch"] in assert_no_click(page, "bias instructions")

        _to_bias_choice(page, otree_server.url, language, on_instructions=instructions)
        shown = page.locator(".bias-confidence").inner_text()
        assert text["confidence_label_touch"] in shown and text["confidence_hint_touch"] in shown
        assert text["confidence_label"] not in shown and text["confidence_hint"] not in shown
        if language != "en":
            assert_no_english(page, language, where="bias choice on a touch screen")
        assert_no_click(page, "bias choice")
        page.locator("input[name=choice]").first.check()
        next_page(page, shared["next"])  # the slider not touched: refused
        assert text["error_confidence"] in assert_no_click(page, "bias choice refused")

        payoff = PAYOFF_TEXTS[language]
        session = create_session(
            otree_server.url, "payoff_reasoning_eval", 1, judges_per_log=1, logs_per_judge=1, language=language
        )
        page.goto(session_start_links(otree_server.url, session["code"])[0])
        page.get_by_label(shared["consent_yes"]).check()
        next_page(page, shared["next"])
        assert_no_click(page, "payoff instructions")
        next_page(page, shared["next"])
        assert payoff["click_hint_touch"] in assert_no_click(page, "payoff judging page")
        page.locator("#id_orig_cor-1").check()  # incorrect, and no sentence marked
        next_page(page, shared["next"])
        assert payoff["error_sentences_missing"] in assert_no_click(page, "payoff judging page refused")

        llm_server.responder = lambda request: Reply(status=500)
        start(otree_server.url, page, language=language, llm_max_retries=0, llm_reprompts=0)
        assert_no_click(page, "DoND instructions")
        dond_pages.to_bargain(page)
        page.locator("#dond-input").fill("Hello")
        page.locator("#dond-send").click()
        page.wait_for_url("**/Results/**", timeout=30_000)
        reason = dond_texts(language)["reason_llm_error"].rsplit(". ", 1)[-1]  # "Please press Continue ..."
        assert reason in assert_no_click(page, "DoND results of a game the model broke")
    finally:
        context.close()


def test_every_text_that_says_click_has_a_touch_version():
    """A text of ours that says "click" is shown only to a mouse: its key has a ``<key>_touch`` twin that says "tap"
    (the page shows one by CSS, ``.on-pointer`` / ``.on-touch``). Messages the server sends fit both."""

    def says_click(value) -> bool:
        return any(CLICK.search(line) for line in all_strings(value))

    found = []
    for language in ("en", "de", "it"):
        for where, table in language_tables(language):
            entries = table.items() if isinstance(table, dict) else [("", table)]
            found += [
                f"{where}[{language}][{key}]"
                for key, value in entries
                if says_click(value) and (f"{key}_touch" not in table or says_click(table[f"{key}_touch"]))
            ]
    assert not found, f"texts that tell a touch screen to click: {found}"


def _to_rate_page(page, server_url: str) -> None:
    session = create_session(server_url, "social_eval", 1, episodes_per_annotator=1, attention_checks=0)
    page.goto(session_start_links(server_url, session["code"])[0])
    page.locator("input[name=consent_given][value=True]").check()
    next_page(page)
    next_page(page)
    page.locator("#se-step-text").wait_for()


def _to_the_secret_rating(page) -> None:
    """Rate the first character's ratings up to its secret one (the rubric's fourth dimension)."""
    while page.locator(".se-row.se-current").get_attribute("data-dimension") != "secret":
        row = page.locator(".se-row.se-current")
        row.locator("textarea").fill("A reason that is long enough to count.")
        row.locator(f"input[value='{row.locator('.se-scale').get_attribute('data-max')}']").check()
        page.locator("#se-next").click()


# Every element of the material box that scrolls on its own (overflow auto/scroll and more content than room).
_NESTED_SCROLL_JS = """
() => Array.from(document.querySelectorAll('#se-material, #se-material *')).filter((element) => {
  const overflow = window.getComputedStyle(element).overflowY;
  return (overflow === 'auto' || overflow === 'scroll') && element.scrollHeight > element.clientHeight + 1;
}).map((element) => element.id || element.className)
"""


def test_social_eval_on_a_phone_reads_the_conversation_in_the_page_and_shows_the_secrets_where_rated(
    otree_server, browser
):
    context = browser.new_context(viewport=PHONE, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        _to_rate_page(page, otree_server.url)
        assert page.evaluate(_NESTED_SCROLL_JS) == []  # one scroll: the page's
        cards = page.locator("details.se-agent")
        assert cards.count() == 2 and not cards.first.evaluate("card => card.open")  # folded at first
        # The conversation begins within the first screen and a half, not 877 px down a box in a box.
        first_turn = page.locator(".se-turn").first.bounding_box()
        assert first_turn["y"] < 1.5 * PHONE["height"]
        cards.first.locator("summary").tap()
        expect(cards.first.locator("dd").first).to_be_visible()  # a tap opens the card
        assert_accessible(page, "en", where="Rate on a phone")
        _to_the_secret_rating(page)
        for card in range(2):
            expect(cards.nth(card).locator("dt.se-secret + dd")).to_be_visible()
    finally:
        context.close()


def test_social_eval_on_a_desktop_shows_both_secrets_in_view_when_the_secret_is_rated(otree_server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.emulate_media(reduced_motion="reduce")
    try:
        _to_rate_page(page, otree_server.url)
        _to_the_secret_rating(page)
        box = page.locator("#se-context").bounding_box()
        for card in range(2):
            secret = page.locator("details.se-agent").nth(card).locator("dt.se-secret + dd").bounding_box()
            assert secret is not None and secret["y"] >= box["y"] - 1, (secret, box)
            assert secret["y"] + secret["height"] <= min(box["y"] + box["height"], 800) + 1, (secret, box)
    finally:
        context.close()


def test_a_rating_message_follows_what_the_annotator_types_and_goes_once_fixed(otree_server, page):
    _to_rate_page(page, otree_server.url)
    page.locator("#se-next").click()  # nothing written, nothing chosen
    message = page.locator(".se-row.se-current .se-step-error")
    expect(message).to_be_visible()
    expect(message).to_contain_text("(you wrote 0)")
    page.locator(".se-row.se-current textarea").fill("A reason that is long enough to count.")
    expect(message).not_to_contain_text("you wrote")  # the reason is fixed: what is still missing is the rating
    page.locator(".se-row.se-current input[type=radio]").first.check()
    expect(message).to_be_hidden()


GERMAN_REASON = "Die Begründung ist lang genug, um zu zählen."


def test_a_german_social_eval_episode_by_keyboard_alone_on_a_desktop(otree_server, browser):
    """Start link, consent, instructions, a comprehension check refused once, and a whole Rate page (seven dimensions
    for each of two characters: explanation and rating) with one refused step, to the next page: Tab, Space, arrows,
    typing and Enter only; a focus ring at every stop; every control named; every refusal read out as an alert."""
    words = social_texts.page_texts("de")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        session = create_session(
            otree_server.url,
            "social_eval",
            1,
            episodes_per_annotator=1,
            attention_checks=0,
            language="de",
            comprehension_check=True,
            comprehension_attempts=3,
        )
        page.goto(session_start_links(otree_server.url, session["code"])[0])
        assert_controls_named(page, "Consent")
        choose_by_keyboard(page, "consent_given", "True")
        press_next(page)
        assert_controls_named(page, "Instructions")
        press_next(page)

        # The comprehension check, answered wrongly once: the refusal is an alert, and the answers are kept.
        assert_controls_named(page, "Comprehension")
        questions = SOCIAL_RUBRIC.comprehension
        for number, question in enumerate(questions, start=1):
            choose_by_keyboard(page, f"quiz_{number}", str((question.answer + 1) % len(question.options)))
        press_next(page)
        banner = page.locator(".otree-form-errors")
        expect(banner).to_contain_text("1")  # filled in just after the load, so that it is read out
        expect(page.get_by_role("alert").filter(has_text=banner.inner_text().strip())).to_be_visible()
        assert_controls_named(page, "Comprehension retry")
        assert_accessible(page, "de", where="Comprehension retry by keyboard")
        for number, question in enumerate(questions, start=1):
            choose_by_keyboard(page, f"quiz_{number}", str(question.answer))
        press_next(page)

        # Rate: the first explanation by Tab; a too short one is refused by an alert that goes once fixed.
        page.locator("#se-step-text").wait_for()
        assert_controls_named(page, "Rate")
        tab_to(page, "id_reason_1_1")
        page.keyboard.type("Zu kurz")
        page.keyboard.press("Control+Enter")
        error = page.get_by_role("alert").filter(has_text=words["need_reason"].format(minimum=20, count=7))
        expect(error).to_be_visible()
        assert focused(page)["id"] == "id_reason_1_1"  # the focus stays where the fix is
        page.keyboard.type(" ist nun lang genug.")
        expect(error).to_be_hidden()  # what is still missing is the rating, which the alert now says
        missing_rating = page.get_by_role("alert").filter(has_text=words["need_rating"])
        expect(missing_rating).to_be_visible()
        steps = page.locator(".se-row").count()
        assert steps == 2 * len(SOCIAL_RUBRIC.dimensions)
        for step in range(steps):
            row = page.locator(".se-row.se-current")
            reason = row.locator("textarea").get_attribute("id")
            assert focused(page)["id"] == reason, f"step {step + 1}: the focus is not in the explanation"
            if step:
                page.keyboard.type(GERMAN_REASON)
            page.keyboard.press("Tab")
            scale = focused(page)
            assert scale["name"] == reason.replace("id_reason", "rating"), scale
            group = page.get_by_role("radiogroup", name=row.locator(".se-scale").get_attribute("aria-label"))
            expect(group).to_be_visible()  # the scale is named by its dimension and character
            page.keyboard.press("Space")
            page.keyboard.press("ArrowRight")
            assert focused(page)["name"] == scale["name"]
            assert row.locator("input[type=radio]").nth(1).is_checked()
            expect(missing_rating).to_be_hidden()  # fixed: the message is gone
            assert_controls_named(page, f"Rate, step {step + 1}")
            if step == steps - 1:
                with page.expect_navigation(wait_until="load"):
                    page.keyboard.press("Enter")  # the last rating sends the page
            else:
                page.keyboard.press("Enter")
                expect(page.locator("#se-step-text")).to_contain_text(f"{step + 2} ")
        assert page.locator("#se-step-text").count() == 0 and "/Rate/" not in page.url
        assert_controls_named(page, "after Rate")
    finally:
        context.close()


def test_an_italian_bias_test_by_keyboard_alone_on_a_touch_phone(otree_server, browser):
    """Start link, consent, instructions and the tests up to one with a confidence slider, which is then done whole:
    refused when sent empty (both messages read out as alerts), an option chosen by arrow keys, the slider focused
    (with its ring, untouched) and moved by arrow keys, each message gone once its cause is fixed, and sent."""
    text = BIAS_TEXTS["it"]
    context = browser.new_context(viewport=PHONE, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        session = create_session(otree_server.url, "bias_tests", 1, order_seed=7, language="it")
        page.goto(session_start_links(otree_server.url, session["code"])[0])
        choose_by_keyboard(page, "consent_given", "True")
        press_next(page)
        assert_controls_named(page, "Instructions")
        press_next(page)
        for _ in range(20):
            assert_controls_named(page, page.url)
            if page.locator("#confidence-slider").count():
                break
            if page.locator(".bias-argument").count():  # a test of arguments: one ticked by Space
                tab_to(page, page.locator(".bias-argument").first.get_attribute("id"))
                page.keyboard.press("Space")
            else:
                choose_by_keyboard(page, "choice", "0")
            press_next(page)
        else:
            raise AssertionError("no test with a confidence slider")
        test_id = page.locator(".bias-test").get_attribute("data-test")

        press_next(page)  # nothing chosen: refused, and each message is read out
        for message in (text["error_choice"], text["error_confidence"]):
            expect(page.get_by_role("alert").filter(has_text=message)).to_be_visible()
        assert_accessible(page, "it", where="bias choice refused, by keyboard")
        slider = page.locator("#confidence-slider")
        expect(slider).to_have_accessible_description(re.compile(re.escape(text["error_confidence"])))
        choose_by_keyboard(page, "choice", "1")
        expect(page.get_by_role("alert").filter(has_text=text["error_choice"])).to_be_hidden()
        expect(page.locator("#choice-1")).not_to_have_accessible_description(
            re.compile(re.escape(text["error_choice"]))
        )
        page.keyboard.press("Tab")
        assert focused(page)["id"] == "confidence-slider"  # the ring shows, before the slider is touched
        assert "untouched" in slider.get_attribute("class")
        expect(page.get_by_role("slider", name=text["confidence_label_touch"])).to_be_focused()
        for _ in range(5):
            page.keyboard.press("ArrowRight")
        expect(page.locator("#confidence-value")).to_have_text("55")
        expect(page.get_by_role("alert").filter(has_text=text["error_confidence"])).to_be_hidden()
        expect(page.locator(".otree-form-errors")).to_be_hidden()
        expect(slider).not_to_have_accessible_description(re.compile(re.escape(text["error_confidence"])))
        expect(slider).to_have_accessible_description(re.compile(re.escape(text["scale_low"])))  # its own stays
        press_next(page)
        assert (
            page.locator(".bias-test").count() == 0 or page.locator(".bias-test").get_attribute("data-test") != test_id
        )
    finally:
        context.close()
