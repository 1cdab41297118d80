"""An annotator in a real browser: Prolific link, instructions with an opened example, a rating page that survives a
reload, keyboard rating, escaping of episode text, and the completion redirect."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from backend.social import forms as social_forms
from backend.social.rubrics import load_rubric
from tests.support.harness import create_session, next_page

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


def fill_rest(page, *, skip: set[str]):
    """Choose the top of every scale and write a reason everywhere except the fields in ``skip``."""
    for agent in social_forms.AGENTS:
        for slot, dimension in enumerate(RUBRIC.dimensions, start=1):
            reason = social_forms.reason_field(agent, slot)
            rating = social_forms.rating_field(agent, slot)
            if reason not in skip:
                page.locator(f"#id_{reason}").fill(f"Reason for {dimension.label}, typed in the browser.")
            if rating not in skip:
                page.locator(f"input[name={rating}][value='{dimension.max}']").check()


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
    assert "Ana <b>Bold</b>" in page.locator(".se-agent-1 h5").inner_text()
    assert page.evaluate("window.pwned") is None
    assert page.locator(".se-progress, .study-progress").first.is_visible()

    # The guideline of a dimension opens next to its rating.
    guide = page.locator("#row-rating_1_2 details.se-guide")
    guide.locator("summary").click()
    assert "+5 means the relationship was transformed" in guide.inner_text()

    # Keyboard: focus a negative scale and type "-3".
    page.locator("input[name=rating_1_2][value='0']").focus()
    page.keyboard.type("-3")
    assert page.locator("input[name=rating_1_2][value='-3']").is_checked()

    # Half the form, then a reload: nothing typed is lost.
    page.locator("#id_reason_1_1").fill("Mostly natural,\nbut Ana repeats herself once.")
    page.locator("input[name=rating_1_1][value='8']").check()
    page.reload()
    # Waiting assertions: the page's script puts the kept input back once it has run, not when the field exists.
    expect(page.locator("#id_reason_1_1")).to_have_value("Mostly natural,\nbut Ana repeats herself once.")
    expect(page.locator("input[name=rating_1_1][value='8']")).to_be_checked()
    expect(page.locator("input[name=rating_1_2][value='-3']")).to_be_checked()

    # A reason below the minimum is refused by the server, with the field named.
    fill_rest(page, skip={"rating_1_1", "reason_1_1", "rating_1_2"})
    page.evaluate("document.getElementById('id_reason_2_7').removeAttribute('minlength')")
    page.locator("#id_reason_2_7").fill("Too short")
    page.locator("#id_reason_1_1").press("Control+Enter")
    expect(page.locator("#row-rating_2_7")).to_contain_text("at least 20 characters")
    expect(page.locator("#id_reason_1_1")).to_have_value(re.compile(r"^Mostly natural"))  # kept after the refusal
    page.locator("#id_reason_2_7").fill("Ben leaves politely, which fits his goal.")
    next_page(page)

    page.locator("#completion-code").wait_for()
    assert page.locator("#completion-code").inner_text() == "SOCIAL77"
    page.wait_for_url("https://app.prolific.com/submissions/complete?cc=SOCIAL77", timeout=20_000)
