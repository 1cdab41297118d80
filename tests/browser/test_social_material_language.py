"""A German and an Italian social_eval session created with nothing but ``language`` set: our bundled rubric (title,
instructions, dimensions, definitions, annotation examples, worked example) and sample episodes come in the session's
language, so the Instructions page and every step of the Rate page show no English word, material included (the
English-word check in its ``material`` mode, tests/support/language_check.py)."""

from __future__ import annotations

import pytest

from backend.social.rubrics import load_rubric
from harness.servers import create_session, session_start_links
from tests.support.language_check import assert_no_english

pytestmark = pytest.mark.browser

STEPS = 2 * len(load_rubric().dimensions)
OPEN_ALL = "() => document.querySelectorAll('details').forEach((d) => { d.open = true; })"


def submit(page) -> None:
    with page.expect_navigation(wait_until="load"):
        page.locator(".otree-btn-next:visible").click()


@pytest.mark.parametrize("language", ["de", "it"])
def test_a_session_with_only_its_language_set_shows_no_english_word_material_included(otree_server, browser, language):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.set_default_timeout(20_000)
        session = create_session(otree_server.url, "social_eval", 1, language=language)
        page.goto(session_start_links(otree_server.url, session["code"])[0])
        page.locator("input[name=consent_given][value=True]").check()
        submit(page)
        page.evaluate(OPEN_ALL)  # the annotation examples and the worked example, folded by default
        assert_no_english(page, language, where="Instructions", material=True)
        submit(page)
        episodes = 0
        while page.locator("#se-step-text").count():
            episodes += 1
            page.evaluate(OPEN_ALL)
            for step in range(1, STEPS + 1):  # each step shows one dimension's definition, scale and examples
                assert_no_english(page, language, where=f"Rate, episode {episodes}, step {step}", material=True)
                row = page.locator(".se-row.se-current")
                row.locator("textarea").fill(
                    "Eine ausreichend lange Begründung." if language == "de" else "Una motivazione abbastanza lunga."
                )
                row.locator(f"input[value='{row.locator('.se-scale').get_attribute('data-min')}']").check()
                if step < STEPS:
                    page.locator("#se-next").click()
                    page.locator(".se-row.se-current").nth(0).wait_for()
            submit(page)
        assert episodes == 4  # three sample episodes and one gold episode (the config's attention check)
    finally:
        context.close()
