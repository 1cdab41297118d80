"""Pages used by keyboard alone and read by a screen reader (docs/accessibility.md): a whole DoND game on a phone
against the test-server model, with a visible focus at every step, every control named in Playwright's accessibility
tree, the other side's messages read out by a live region, the typing bubble saying that the model writes, the
proposal form kept in place while it writes and the points table in view while proposing; the bias slider shows its
focus before it is touched."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

import study_flow
from backend.core.llm.fake_server import Reply
from dond.texts import texts as dond_texts
from tests.support import dond_pages
from tests.support.accessibility import assert_accessible
from tests.support.dond_pages import PHONE, start
from tests.support.harness import create_session, next_page, session_start_links

pytestmark = pytest.mark.browser

LLM_CHAT = "Hallo! Die Äpfel sind mir wenig wert, die anderen Dinge hätte ich gern."

# The focused element and whether a focus ring is drawn around it (an outline, or Bootstrap's box-shadow ring).
_FOCUS_JS = """
() => {
  const element = document.activeElement;
  const style = window.getComputedStyle(element);
  const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== 'none';
  return {id: element.id, tag: element.tagName, ring: ring};
}
"""


def responder(request):
    if "secret proposal" in request["messages"][-1]["content"]:
        return Reply(text="Einverstanden. [Proposal:]", chunk_delay_s=0.02)
    return Reply(text=LLM_CHAT, chunk_delay_s=0.15)


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


def in_view(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"] + 1


def test_a_whole_dond_game_by_keyboard_on_a_phone_with_a_screen_reader(otree_server, llm_server, browser):
    llm_server.responder = responder
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
        assert focused(page)["id"] == "dond-confirm-yes"
        assert_accessible(page, "de", where="Bargain: confirmation")
        page.keyboard.press("Enter")
        page.wait_for_url("**/Results/**", timeout=30_000)
        assert_accessible(page, "de", where="Results")
    finally:
        page.context.close()


def test_the_bias_slider_shows_its_focus_before_it_is_touched(otree_server, page):
    shared = study_flow.messages("en")
    session = create_session(otree_server.url, "bias_tests", 1, order_seed=7)
    page.goto(session_start_links(otree_server.url, session["code"])[0])
    page.get_by_label(shared["consent_yes"]).check()
    next_page(page)
    next_page(page)
    for _ in range(20):  # to a test that asks for a confidence
        if page.locator("#confidence-slider").count():
            break
        page.locator(".bias-argument").first.check()
        next_page(page)
    slider = page.locator("#confidence-slider")
    assert "untouched" in slider.get_attribute("class")
    page.locator("input[name=choice]").last.focus()
    tab_to(page, "confidence-slider")
    assert "untouched" in slider.get_attribute("class")  # focused, not answered, and the focus shows
    page.keyboard.press("ArrowRight")
    expect(page.locator("#confidence-value")).to_have_text("51")
    assert_accessible(page, "en", where="bias choice, slider focused")
