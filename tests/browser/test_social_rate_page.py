"""The social_eval pages in Chromium at 1280×800 and on a 390×844 phone: the conversation stays beside the form while
rating, one rating at a time with progress and Back, scales on one line with named ends, the keyboard flow the hint
describes, counters, drafts of every field and the step, refused input kept, the comprehension retry, and German and
Italian pages without an English word of ours, every page state checked by axe-core in en/de/it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from backend.social import forms as social_forms
from backend.social.rubrics import load_rubric
from harness.servers import create_session, export_rows, session_start_links
from social_eval import texts as social_texts
from tests.support.accessibility import assert_accessible
from tests.support.language_check import assert_no_english

pytestmark = pytest.mark.browser

RUBRIC = load_rubric()
STEPS = 2 * len(RUBRIC.dimensions)
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
REASON = "A reason that is long enough to count."


@pytest.fixture
def open_page(browser):
    contexts = []

    def opened(viewport):
        context = browser.new_context(viewport=viewport)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(20_000)
        return page

    yield opened
    for context in contexts:
        context.close()


def submit(page) -> None:
    """Press the page's Next button (in any language) and wait for the answer to load."""
    with page.expect_navigation(wait_until="load"):
        page.locator(".otree-btn-next:visible").click()


def to_page(page, server_url: str, wanted: str, *, language: str = "en", **config) -> None:
    """A fresh participant of a new session, taken through consent (and instructions) to the page ``wanted``."""
    config = dict(episodes_per_annotator=1, attention_checks=0, language=language, **config)
    session = create_session(server_url, "social_eval", 1, **config)
    page.goto(session_start_links(server_url, session["code"])[0])
    page.locator("input[name=consent_given][value=True]").check()
    submit(page)
    if wanted != "Instructions":
        submit(page)
    if wanted == "Rate":
        page.locator("#se-step-text").wait_for()


def step_text(page) -> str:
    return page.locator("#se-step-text").inner_text()


def rate_current(page, slot_rating: int | None = None) -> None:
    """Fill the shown rating: a reason and the scale's top value (or ``slot_rating``), then Next rating."""
    row = page.locator(".se-row.se-current")
    row.locator("textarea").fill(REASON)
    value = slot_rating if slot_rating is not None else row.locator(".se-scale").get_attribute("data-max")
    row.locator(f"input[value='{value}']").check()
    page.locator("#se-next").click()


def visible_height(box, height: int) -> float:
    """How many pixels of ``box`` lie inside a viewport ``height`` pixels tall."""
    return max(0.0, min(box["y"] + box["height"], height) - max(box["y"], 0))


def in_viewport(box, height: int) -> bool:
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height + 1


def test_desktop_keeps_the_conversation_beside_the_form_while_rating(otree_server, open_page):
    page = open_page(DESKTOP)
    to_page(page, otree_server.url, "Rate")
    material, form = page.locator("#se-material"), page.locator(".se-form")
    assert material.bounding_box()["x"] + material.bounding_box()["width"] <= form.bounding_box()["x"]
    assert step_text(page).startswith(f"Rating 1 of {STEPS}")
    for number in range(1, 9):
        rate_current(page)
        expect(page.locator("#se-step-text")).to_contain_text(f"Rating {number + 1} of {STEPS}")
        assert in_viewport(page.locator(".se-row.se-current textarea").bounding_box(), DESKTOP["height"]), number
        assert visible_height(page.locator("#se-conversation").bounding_box(), DESKTOP["height"]) >= 250, number
        page.mouse.wheel(0, 400)  # the person scrolls the page while rating: the conversation stays in view
        page.wait_for_timeout(100)
        assert visible_height(page.locator("#se-conversation").bounding_box(), DESKTOP["height"]) >= 250, number
        page.mouse.wheel(0, -400)
    # Agent 2's ratings come after agent 1's seven; Back returns to a rating with its input.
    assert "Ratings for" in page.locator(".se-block.se-current legend").inner_text()
    page.locator("#se-back").click()
    expect(page.locator("#se-step-text")).to_contain_text(f"Rating 8 of {STEPS}")
    assert page.locator(".se-row.se-current textarea").input_value() == REASON
    # Every scale names its two ends (the rubric's meaning in our words).
    first = page.locator("#row-rating_1_1")
    assert first.locator(".se-end-low").inner_text() == "0 = not believable at all"
    assert first.locator(".se-end-high").inner_text() == "10 = completely natural"
    assert page.locator("#row-rating_1_4 .se-end-low").inner_text() == "−10 = critical secret revealed"


def test_phone_scales_stay_on_one_line_with_big_targets_and_the_button_in_reach(otree_server, open_page):
    page = open_page(PHONE)
    to_page(page, otree_server.url, "Rate")
    # The conversation is read in the page's own scroll first (tests/browser/test_accessibility.py); once the person
    # reaches the rating, its button is in thumb reach.
    page.locator(".se-row.se-current textarea").scroll_into_view_if_needed()
    next_box = page.locator("#se-next").bounding_box()
    assert next_box["y"] + next_box["height"] <= PHONE["height"] and next_box["height"] >= 44
    page.evaluate("document.getElementById('se-rate').classList.remove('se-stepwise')")  # every scale laid out
    tops = page.evaluate(
        """() => Array.from(document.querySelectorAll('.se-choices')).map(scale =>
             Array.from(scale.querySelectorAll('.se-choice')).map(c => {
               const r = c.getBoundingClientRect(); return [Math.round(r.top), r.right, r.height, r.width]; }))"""
    )
    assert len(tops) == STEPS
    for scale in tops:
        assert len({top for top, *_ in scale}) == 1, scale  # one line
        assert max(right for _, right, *_ in scale) <= PHONE["width"], scale
        assert min(height for *_, height, _ in scale) >= 44 and min(width for *_, width in scale) >= 26
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert page.locator(".se-end-low").count() == STEPS and page.locator(".se-end-high").count() == STEPS


def test_keyboard_flow_is_what_the_hint_says(otree_server, open_page):
    page = open_page(DESKTOP)
    to_page(page, otree_server.url, "Rate")
    hint = page.locator("#se-hint .se-keys").inner_text()
    assert "Tab moves from the explanation to the scale" in hint and "Enter on the scale" in hint
    page.locator("#id_reason_1_1").click()
    page.keyboard.type("Talks like a real person throughout.")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "rating_1_1"
    page.keyboard.type("7")
    assert page.locator("#id_rating_1_1_7").is_checked()
    page.keyboard.press("Enter")  # on the scale: the next rating, its explanation focused
    expect(page.locator("#se-step-text")).to_contain_text(f"Rating 2 of {STEPS}")
    page.keyboard.type("The relationship did not change.")
    assert page.locator("#id_reason_1_2").input_value() == "The relationship did not change."
    assert page.locator("#id_reason_1_1").input_value() == "Talks like a real person throughout."
    page.keyboard.press("Tab")
    page.keyboard.type("-2")
    assert page.locator("input[name=rating_1_2][value='-2']").is_checked()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Control+Enter")  # from the text box too
    expect(page.locator("#se-step-text")).to_contain_text(f"Rating 3 of {STEPS}")
    # An incomplete rating is not left: the message says what is missing, and the focus goes there.
    page.keyboard.type("Too short")
    page.keyboard.press("Control+Enter")
    error = page.locator(".se-row.se-current .se-step-error")
    expect(error).to_have_text("Please explain your rating in at least 20 characters (you wrote 9).")
    assert step_text(page).startswith(f"Rating 3 of {STEPS}")


def test_counter_says_what_is_missing_and_nothing_is_cut(otree_server, open_page):
    page = open_page(DESKTOP)
    to_page(page, otree_server.url, "Rate")
    counter = page.locator("#counter-reason_1_1")
    assert counter.inner_text() == "at least 20 characters"
    red = "rgb(155, 28, 28)"
    assert counter.evaluate("e => getComputedStyle(e).color") != red  # not red before anyone types
    page.locator("#id_reason_1_1").fill("Twelve chars")
    assert counter.inner_text() == "12 characters — at least 20"
    page.locator("#id_reason_1_1").fill(REASON)
    assert counter.inner_text() == f"✓ {len(REASON)} characters"
    pasted = "x" * (social_forms.MAX_REASONING_CHARS + 7)
    page.locator("#id_reason_1_1").fill(pasted)
    assert page.locator("#id_reason_1_1").input_value() == pasted  # never cut silently
    assert counter.inner_text() == "5007 characters — at most 5000"
    assert counter.evaluate("e => getComputedStyle(e).color") == red
    page.locator("#row-rating_1_1 input[value='5']").check()
    page.locator("#se-next").click()
    expect(page.locator("#row-rating_1_1 .se-step-error")).to_contain_text("at most 5000 characters (you wrote 5007)")


def test_draft_keeps_every_field_and_the_step_across_a_reload_and_a_refusal(otree_server, open_page):
    page = open_page(DESKTOP)
    to_page(page, otree_server.url, "Rate")
    rate_current(page, slot_rating=4)
    rate_current(page, slot_rating=-3)
    page.locator("#id_reason_1_3").fill("Half written")
    page.reload()
    expect(page.locator("#se-step-text")).to_contain_text(f"Rating 3 of {STEPS}")
    expect(page.locator("#id_reason_1_3")).to_have_value("Half written")
    page.locator("#se-back").click()
    expect(page.locator("#id_reason_1_2")).to_have_value(REASON)
    assert page.locator("input[name=rating_1_2][value='-3']").is_checked()
    assert page.locator("input[name=rating_1_1][value='4']").is_checked()

    # The server refuses a reason that is too short (the page's own check bypassed): the page comes back at that
    # rating, says what to fix, and keeps everything typed.
    page.evaluate(
        """(reason) => {
             for (const area of document.querySelectorAll('textarea.se-reason')) area.value = reason;
             for (const scale of document.querySelectorAll('.se-scale')) scale.querySelector('input').checked = true;
             document.getElementById('id_reason_2_5').value = 'Too short';
             document.getElementById('id_reason_2_5').dispatchEvent(new Event('input', {bubbles: true}));
             HTMLFormElement.prototype.submit.call(document.getElementById('form'));
           }""",
        REASON,
    )
    page.wait_for_load_state("load")
    expect(page.locator("#row-rating_2_5.se-current")).to_contain_text("at least 20 characters (you wrote 9)")
    expect(page.locator("#id_reason_2_5")).to_have_value("Too short")
    expect(page.locator("#id_reason_1_1")).to_have_value(REASON)
    expect(page.locator("#se-step-text")).to_contain_text(f"Rating {len(RUBRIC.dimensions) + 5} of {STEPS}")


def test_comprehension_retry_names_the_wrong_answers_and_shows_the_guideline(otree_server, open_page):
    page = open_page(DESKTOP)
    to_page(page, otree_server.url, "Comprehension", comprehension_check=True, comprehension_attempts=3)
    assert "you have 3 attempts" in page.locator("#se-quiz-intro").inner_text()
    assert page.locator("#se-guideline").get_attribute("open") is None
    questions = RUBRIC.comprehension
    wrong = (questions[0].answer + 1) % len(questions[0].options)
    page.locator(f"#id_quiz_1_{wrong}").check()
    page.reload()  # an answer chosen but not sent survives a reload
    expect(page.locator(f"#id_quiz_1_{wrong}")).to_be_checked()
    for number, question in enumerate(questions[1:], start=2):
        page.locator(f"#id_quiz_{number}_{question.answer}").check()
    submit(page)
    error = page.locator(".otree-form-errors").inner_text()
    assert "Question 1 is not right yet." in error and "(2 attempts left)" in error and "(s)" not in error
    assert "at the top of this page" in error
    assert page.locator("#se-guideline").get_attribute("open") is not None  # the guideline is there, open
    assert page.locator("#se-guideline #dimension-believability").is_visible()
    assert "se-wrong" in page.locator("#question-1").get_attribute("class")
    assert "se-wrong" not in page.locator("#question-2").get_attribute("class")
    assert page.locator(f"#id_quiz_1_{wrong}").is_checked()  # every answer kept
    assert page.locator(f"#id_quiz_2_{questions[1].answer}").is_checked()
    assert "you have 2 attempts" in page.locator("#se-quiz-intro").inner_text()


# German and Italian at 1280×800 (no English word of ours, axe-core); English at both sizes (axe-core).
LANGUAGE_VIEWS = [
    pytest.param("de", DESKTOP, id="de"),
    pytest.param("it", DESKTOP, id="it"),
    pytest.param("en", DESKTOP, id="en-desktop"),
    pytest.param("en", PHONE, id="en-phone"),
]


@pytest.mark.parametrize(("language", "viewport"), LANGUAGE_VIEWS)
def test_each_languages_pages_have_no_english_word_of_ours_and_pass_axe(otree_server, open_page, language, viewport):
    page = open_page(viewport)
    seen = []

    def check(where):
        seen.append(where)
        assert_no_english(page, language, where=where, material=True)  # our bundled material is in the language
        assert_accessible(page, language, where=where)

    to_page(page, otree_server.url, "Instructions", language=language, comprehension_check=True)
    page.locator("#worked-example summary").click()
    page.locator("details.se-examples summary").first.click()
    check("Instructions")
    submit(page)
    check("Comprehension")
    questions = RUBRIC.comprehension
    for number, question in enumerate(questions, start=1):
        page.locator(f"#id_quiz_{number}_{(question.answer + 1) % len(question.options)}").check()
    submit(page)
    check("Comprehension retry")
    for number, question in enumerate(questions, start=1):
        page.locator(f"#id_quiz_{number}_{question.answer}").check()
    submit(page)
    page.locator("#se-step-text").wait_for()
    check("Rate")
    page.locator("#id_reason_1_1").fill("kurz")
    page.locator("#se-next").click()  # a refusal and a counter in their states
    page.locator("#row-rating_1_1 summary").click()
    check("Rate, refused step")
    assert len(seen) == 5


@pytest.mark.parametrize(
    ("language", "screenout_code", "viewport"), [("de", "OUT7", DESKTOP), ("it", "", DESKTOP), ("en", "OUT9", PHONE)]
)
def test_nothing_left_to_rate_is_in_the_sessions_language(otree_server, open_page, language, screenout_code, viewport):
    """One episode rated by one annotator: the first person holds it, the second is told there is nothing left (with
    the screen-out code, or asked to return the submission) in German or Italian, without an English word (and in
    English on a phone, checked by axe-core)."""
    words = social_texts.page_texts(language)
    session = create_session(
        otree_server.url,
        "social_eval",
        2,
        # ours, in the session's language
        episodes=f"backend/social/data/{'' if language == 'en' else language + '/'}episodes/book_collection.json",
        episodes_per_annotator=1,
        annotators_per_episode=1,
        attention_checks=0,
        language=language,
        screenout_code=screenout_code,
    )
    first, second = (open_page(viewport) for _ in range(2))
    for page, link in zip((first, second), session_start_links(otree_server.url, session["code"]), strict=True):
        page.goto(link)
        page.locator("input[name=consent_given][value=True]").check()
        submit(page)
        submit(page)
    first.locator("#se-step-text").wait_for()  # the first holds the only episode
    expect(second.locator("#_otree-title")).to_have_text(words["nothing_left_title"])
    expect(second.locator("#nothing-left")).to_have_text(words["nothing_left"])
    if screenout_code:
        expect(second.locator("#screenout-code")).to_have_text(screenout_code)
    else:
        expect(second.locator("#content, body").first).to_contain_text(words["return_submission"])
    assert_no_english(second, language, where="NothingLeft")
    assert_accessible(second, language, where="NothingLeft")


def test_each_rating_step_is_timed_and_the_times_are_stored_when_plausible(otree_server, open_page):
    """The page posts the time each step was on screen; the server judges it (backend/social/step_times.py) and the
    long export gives every rating its step's time, the wide export one column per step."""
    page = open_page(DESKTOP)
    to_page(page, otree_server.url, "Rate")
    code = page.url.split("/p/")[1].split("/")[0]
    page.wait_for_timeout(1500)  # the first step stays on screen for 1.5 s
    for _ in range(STEPS - 1):
        rate_current(page)
    row = page.locator(".se-row.se-current")
    row.locator("textarea").fill(REASON)
    row.locator(f"input[value='{row.locator('.se-scale').get_attribute('data-max')}']").check()
    submit(page)
    rows = [
        row
        for row in export_rows(otree_server.url, "social_eval", "custom_export_ratings_long")
        if row["annotator"] == code
    ]
    assert len(rows) == STEPS and {row["step_times_ok"] for row in rows} == {"1"}
    seconds = {(row["agent_index"], row["dimension"]): float(row["step_seconds"]) for row in rows}
    first = RUBRIC.dimensions[0].key
    assert seconds[("1", first)] >= 1.5
    assert sum(seconds.values()) <= float(rows[0]["seconds_spent"]) + 2
    [wide] = [
        row
        for row in export_rows(otree_server.url, "social_eval", "custom_export_ratings_wide")
        if row["annotator"] == code
    ]
    assert float(wide[f"{first}_seconds_1"]) == seconds[("1", first)] and wide["step_times_ok"] == "1"
