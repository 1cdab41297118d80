"""An annotator in a real browser: Prolific link, instructions with an opened example, a rating page that survives a
reload, keyboard rating, escaping of episode text, and the completion redirect."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from backend.social import forms as social_forms
from backend.social.rubrics import load_rubric
from harness.servers import create_session, next_page

pytestmark = pytest.mark.browser

RUBRIC = load_rubric()
HOSTILE = {
    "id": "browser-hostile",
    "scenario": 'Two friends <script>window.pwned = 1</script> meet <img src=x onerror="window.pwned=2">.',
    "agents": [
        {"name": "Ana <b>Bold</b>", "background": "A nurse.", "goal": "Say hi.", "secret": ""},
        {"name": "Ben Cole", "background": "A chef.", "goal": "Leave early.", "secret": "He is tired."},
    ],
    "turns": [
        {"speaker": "Ana <b>Bold</b>", "text": "Hello!\n</textarea><script>window.pwned = 3</script>"},
        {"speaker": "Ben Cole", "text": "Bye.", "kind": "speech"},
    ],
}


def rate_through(page, *, start: int):
    """From rating ``start`` (1-based) on, write a reason and choose the top of each scale, one rating at a time;
    the last rating is sent with Ctrl+Enter."""
    steps = len(social_forms.AGENTS) * len(RUBRIC.dimensions)
    for number in range(start, steps + 1):
        row = page.locator(".se-row.se-current")
        expect(page.locator("#se-step-text")).to_contain_text(f"Rating {number} of {steps}")
        dimension = RUBRIC.dimensions[(number - 1) % len(RUBRIC.dimensions)]
        if not row.locator("textarea").input_value():
            row.locator("textarea").fill(f"Reason for {dimension.label}, typed in the browser.")
        if not row.locator("input:checked").count():
            row.locator(f"input[value='{dimension.max}']").check()
        if number < steps:
            page.locator("#se-next").click()
    with page.expect_navigation(wait_until="load"):
        page.locator(".se-row.se-current textarea").press("Control+Enter")


def test_annotator_from_prolific_reads_rates_reloads_and_completes(otree_server, page):
    create_session(
        otree_server.url,
        "social_eval",
        2,
        room="social_eval_study",
        completion_code="SOCIAL77",
        completion_redirect_seconds=1,
        episodes="",
        episodes_json=json.dumps(HOSTILE),
        episodes_per_annotator=1,
        attention_checks=0,
        comprehension_check=True,
    )
    page.route("https://app.prolific.com/**", lambda route: route.fulfill(status=200, body="completed"))
    pid = "60a1b2c3d4e5f6a7b8c9d0e1"
    page.goto(f"{otree_server.url}/room/social_eval_study?participant_label={pid}&STUDY_ID=S1&SESSION_ID=X1")
    page.get_by_label("I have read the information above and agree to take part.").check()
    next_page(page)

    # Instructions: open the examples of one dimension.
    examples = page.locator("details.se-examples", has_text="Annotation examples for Secret")
    assert not examples.locator("table").is_visible()
    examples.locator("summary").click()
    assert examples.locator("table").is_visible()
    assert "Bad example." in examples.inner_text()
    next_page(page)

    # Comprehension: a wrong answer is refused with attempts left, the right ones pass.
    questions = RUBRIC.comprehension
    for number, question in enumerate(questions, start=1):
        page.locator(f"#id_quiz_{number}_{(question.answer + 1) % len(question.options)}").check()
    next_page(page)
    assert "not right yet" in page.locator(".otree-form-errors").inner_text()
    for number, question in enumerate(questions, start=1):
        page.locator(f"#id_quiz_{number}_{question.answer}").check()
    next_page(page)

    # The rating page: episode text shown as text, never run.
    assert page.locator("#scenario").inner_text().startswith("Two friends <script>")
    assert "Ana <b>Bold</b>" in page.locator(".se-agent-1 h4").inner_text()
    assert page.evaluate("window.pwned") is None
    assert page.locator(".se-progress, .study-progress").first.is_visible()

    # Rating 1, then rating 2: its guideline opens next to it; a typed "-3" chooses on its negative scale.
    page.locator("#id_reason_1_1").fill("Mostly natural,\nbut Ana repeats herself once.")
    page.locator("input[name=rating_1_1][value='8']").check()
    page.locator("#se-next").click()
    guide = page.locator("#row-rating_1_2 details.se-guide")
    guide.locator("summary").click()
    assert "+5 means the relationship was transformed" in guide.inner_text()
    page.locator("input[name=rating_1_2][value='0']").focus()
    page.keyboard.type("-3")
    assert page.locator("input[name=rating_1_2][value='-3']").is_checked()

    # A reload: nothing typed or chosen is lost, and the page is back at rating 2.
    page.reload()
    # Waiting assertions: the page's script puts the kept input back once it has run, not when the field exists.
    expect(page.locator("#se-step-text")).to_contain_text("Rating 2 of 14")
    expect(page.locator("#id_reason_1_1")).to_have_value("Mostly natural,\nbut Ana repeats herself once.")
    expect(page.locator("input[name=rating_1_1][value='8']")).to_be_checked()
    expect(page.locator("input[name=rating_1_2][value='-3']")).to_be_checked()
    rate_through(page, start=2)

    page.locator("#completion-code").wait_for()
    assert page.locator("#completion-code").inner_text() == "SOCIAL77"
    page.wait_for_url("https://app.prolific.com/submissions/complete?cc=SOCIAL77", timeout=20_000)
