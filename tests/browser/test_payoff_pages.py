"""payoff_reasoning_eval's Judge page in a real browser, on a desktop (1280×800) and a phone (390×844), in German and
Italian (and English on a desktop, for axe-core): a reload keeps every mark, verdict, tick and remark; a refusal
keeps them all and names what to fix beside the field; the remarks counter shows the limit before it bites and
over-long remarks are refused, never cut; no English word of the app's texts is on the Instructions or Judge page
(logs, games and error types, marked data-material, stay as written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

import study_flow
from backend.reasoning.task import MAX_REMARKS_CHARS
from harness.servers import create_session, export_rows, next_page, session_start_links
from payoff_reasoning_eval.texts import TEXTS
from tests.support.accessibility import assert_accessible
from tests.support.language_check import assert_no_english

pytestmark = pytest.mark.browser

LOGS = Path(__file__).resolve().parents[2] / "payoff_reasoning_eval" / "logs"
TWO_ATTEMPTS = "demo-reasoner_pd_p1_1_5_0_3_0_1001.txt"
VIEWS = [
    pytest.param((1280, 800), "it", id="desktop-it"),
    pytest.param((390, 844), "de", id="phone-de"),
    pytest.param((1280, 800), "en", id="desktop-en"),  # English: axe-core at the other size than bias's English walk
]


@pytest.mark.parametrize(("sized_page", "language"), VIEWS, indirect=["sized_page"])
def test_the_judge_draft_survives_a_reload_and_a_refusal(otree_server, sized_page, language):
    page, text, shared = sized_page, TEXTS[language], study_flow.messages(language)
    name = f"browser-draft-{language}_pd_p1_1_5_0_3_0_{len(language)}77.txt"  # a name no other session uses
    session = create_session(
        otree_server.url,
        "payoff_reasoning_eval",
        1,
        logs_upload=json.dumps({name: (LOGS / TWO_ATTEMPTS).read_text(encoding="utf-8")}),
        judges_per_log=1,
        logs_per_judge=1,
        language=language,
    )
    page.goto(session_start_links(otree_server.url, session["code"])[0])
    page.get_by_label(shared["consent_yes"]).check()
    next_page(page, shared["next"])
    expect(page.locator("#_otree-title")).to_have_text(text["instructions_title"])
    assert_no_english(page, language)
    assert_accessible(page, language)
    next_page(page, shared["next"])

    # Judge: the limit is visible before anything is typed.
    expect(page.locator("#_otree-title")).to_have_text(text["judge_title"])
    expect(page.locator("#remarks-counter")).to_have_text(text["chars"].format(n=0, max=MAX_REMARKS_CHARS))
    assert_no_english(page, language)
    assert_accessible(page, language)
    first = page.locator("#first-response .sentence").nth(1)
    first_text = first.inner_text()
    first.click()
    page.locator("#id_orig_cor-1").check()  # incorrect
    page.locator("#id_fin_cor-0").check()  # correct
    page.locator("#err-pa").check()
    page.locator("#id_remarks").fill("Die Zelle R/B ist falsch gelesen.")

    # The log has two attempts: the marked sentence says which response it came from.
    expect(page.locator("#marked-list li .marked-from")).to_contain_text(text["first_response"])
    page.reload()
    expect(page.locator("#first-response .sentence.marked")).to_have_text([first_text])
    expect(page.locator("#marked-list li .marked-text")).to_have_text([first_text])
    expect(page.locator("#id_orig_cor-1")).to_be_checked()
    expect(page.locator("#id_fin_cor-0")).to_be_checked()
    expect(page.locator("#err-pa")).to_be_checked()
    expect(page.locator("#id_remarks")).to_have_value("Die Zelle R/B ist falsch gelesen.")

    # Over-long remarks: the counter says so, the server refuses, and nothing is cut or lost.
    long_remarks = "x" * (MAX_REMARKS_CHARS + 3)
    page.locator("#id_remarks").fill(long_remarks)
    expect(page.locator("#remarks-counter")).to_have_text(
        text["chars_over"].format(n=MAX_REMARKS_CHARS + 3, max=MAX_REMARKS_CHARS, over=3)
    )
    page.locator("#err-pa").uncheck()
    next_page(page, shared["next"])
    expect(page.locator("#error-types")).to_contain_text(text["error_types_missing"])
    expect(page.locator("#id_remarks").locator("..")).to_contain_text(
        text["error_remarks_long"].format(max=MAX_REMARKS_CHARS, n=MAX_REMARKS_CHARS + 3)
    )
    expect(page.locator("#id_remarks")).to_have_value(long_remarks)
    expect(page.locator("#marked-list li .marked-text")).to_have_text([first_text])
    expect(page.locator("#id_orig_cor-1")).to_be_checked()
    expect(page.locator("#id_fin_cor-0")).to_be_checked()
    assert_no_english(page, language)
    assert_accessible(page, language)
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]

    # Each error goes as soon as its cause is fixed, and the banner above the form with the last of them.
    banner = page.locator(".otree-form-errors")
    expect(banner).to_be_visible()
    page.locator("#id_remarks").fill("Kurz.")
    expect(page.locator("#id_remarks").locator("..").locator(".form-control-errors")).to_be_hidden()
    expect(page.locator("#error-types .form-control-errors")).to_be_visible()
    expect(banner).to_be_visible()
    page.locator("#err-pa").check()
    expect(page.locator("#error-types .form-control-errors")).to_be_hidden()
    expect(banner).to_be_hidden()
    next_page(page, shared["next"])
    expect(page.locator("#_otree-title")).not_to_have_text(text["judge_title"])
    [row] = [
        row
        for row in export_rows(otree_server.url, "payoff_reasoning_eval", "custom_export", session_code=session["code"])
        if row["file"] == name
    ]
    assert (row["orig_cor"], row["fin_cor"], row["err_type"], row["sentence"]) == ("0", "1", "pa", first_text)
