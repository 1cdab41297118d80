"""bias_tests in a real browser, on a desktop (1280×800) and a phone (390×844), in German and Italian (and English on a
phone, for axe-core): a refused
answer keeps the chosen option, a reload keeps it too, a click on the slider at its starting 50 counts as an
answer, ticked arguments survive a refusal and a reload, and no English word of the app's texts is on any page
(the items, marked data-material, stay as the researcher wrote them)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

import study_flow
from bias_tests.texts import TEXTS
from harness.servers import create_session, next_page, session_start_links
from tests.support.accessibility import assert_accessible
from tests.support.language_check import assert_no_english

pytestmark = pytest.mark.browser

VIEWS = [
    pytest.param((1280, 800), "de", id="desktop-de"),
    pytest.param((390, 844), "it", id="phone-it"),
    pytest.param((390, 844), "en", id="phone-en"),  # English: axe-core at the other size than payoff's English walk
]


@pytest.mark.parametrize(("sized_page", "language"), VIEWS, indirect=["sized_page"])
def test_answers_survive_refusals_and_reloads_and_the_slider_counts_at_50(otree_server, sized_page, language):
    page, text, shared = sized_page, TEXTS[language], study_flow.messages(language)
    session = create_session(otree_server.url, "bias_tests", 1, order_seed=7, language=language)
    page.goto(session_start_links(otree_server.url, session["code"])[0])
    page.get_by_label(shared["consent_yes"]).check()
    next_page(page, shared["next"])
    expect(page.locator("#_otree-title")).to_have_text(text["instructions_title"])
    assert_no_english(page, language)
    assert_accessible(page, language)
    next_page(page, shared["next"])

    seen = set()
    while seen != {"choice", "arguments"}:
        page.locator(".bias-test").wait_for()
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
        if page.locator("#argument-list").count() and "arguments" in seen:
            page.locator(".bias-argument").first.check()
        elif page.locator("#argument-list").count():
            seen.add("arguments")
            boxes = page.locator(".bias-argument")
            next_page(page, shared["next"])  # nothing ticked: refused, saying what to do
            expect(page.locator("#argument-list")).to_contain_text(text["error_arguments"])
            assert_no_english(page, language)
            assert_accessible(page, language)
            boxes.nth(2).check()
            page.reload()
            expect(boxes.nth(2)).to_be_checked()  # the browser's draft
            expect(page.locator("#arguments-count")).to_have_text(text["arguments_count"].format(n=1))
        elif "choice" in seen:
            page.locator("input[name=choice]").first.check()
            page.locator("#confidence-slider").fill("70")
        else:
            seen.add("choice")
            assert page.locator(".bias-question[data-material]").count() == 1
            expect(page.locator("label[for=confidence-slider]")).to_contain_text(text["confidence_label"])
            expect(page.locator("#confidence-value")).to_have_text(text["confidence_unset"])
            assert_no_english(page, language)
            assert_accessible(page, language)
            next_page(page, shared["next"])  # nothing chosen: both questions are named
            expect(page.locator(".bias-options")).to_contain_text(text["error_choice"])
            expect(page.locator(".bias-confidence")).to_contain_text(text["error_confidence"])
            page.locator("input[name=choice]").nth(1).check()  # the choice's error goes at once, the slider's stays
            expect(page.locator(".bias-options .form-control-errors")).to_be_hidden()
            expect(page.locator(".bias-confidence .form-control-errors")).to_be_visible()
            next_page(page, shared["next"])  # the answer without the slider: refused, and the answer is kept
            expect(page.locator(".bias-confidence")).to_contain_text(text["error_confidence"])
            expect(page.locator("input[name=choice]").nth(1)).to_be_checked()
            assert_no_english(page, language)
            assert_accessible(page, language)
            page.reload()
            expect(page.locator("input[name=choice]").nth(1)).to_be_checked()
            # A click on the slider's middle, where it starts: the value does not change, and it still counts.
            slider = page.locator("#confidence-slider")
            assert slider.input_value() == "50"
            slider.click()
            expect(page.locator("#confidence-value")).to_have_text(slider.input_value())
            expect(page.locator(".bias-confidence .form-control-errors")).to_be_hidden()  # answered: its error goes
            expect(page.locator(".otree-form-errors")).to_be_hidden()
            assert page.locator("#id_confidence").input_value() == slider.input_value()
            assert slider.input_value() == "50"
        before = page.locator(".study-progress-text").inner_text()
        next_page(page, shared["next"])
        expect(page.locator(".study-progress-text")).not_to_have_text(before)  # accepted: the next test is shown
