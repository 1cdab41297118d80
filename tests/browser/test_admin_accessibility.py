"""The researcher's pages meet the participants' bar (docs/accessibility.md): a researcher logs in to a server set up
as a lab deploys it (production mode, admin password) and axe-core finds no critical, serious or unlisted moderate
violation, at 1280×800 and at 390×844, on the study status, the DoND transcripts, the study links, the launch check,
pay and review, and the admin report of each app, each session with data in it (tables and figures filled). Beyond
axe: every figure (inline svg, Chart.js canvas) is an image with a name, no table header is empty, the tab shown is
marked ``aria-current``, and on a phone the top bar's menu button opens the menu. The bonus file and the review list
are downloads (text and CSV), not pages."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from harness.servers import (
    base_env,
    deployment_mode,
    own_database,
    running_server,
    session_codes,
    uses_server_database,
)
from tests.support.accessibility import assert_accessible
from tests.system.test_csv_neutralisation import (
    judge_in_payoff_reasoning,
    play_dond_person_vs_person,
    rate_in_social_eval,
    visitors,
)

pytestmark = pytest.mark.browser

# The session pages of lab_server/admin_pages.py and lab_server/study_pages.py, shown for the DoND session.
STUDY_PAGES = ("StudyStatus", "DondTranscripts", "StudyLinks", "LaunchCheck", "PayAndReview")


# Inline svg figures and chart canvases that are no named image, and table headers without text.
UNNAMED_JS = """
() => [
  ...[...document.querySelectorAll('svg, canvas')]
    .filter((figure) => figure.getAttribute('role') !== 'img' || !(figure.getAttribute('aria-label') || '').trim())
    .map((figure) => figure.tagName + '#' + (figure.id || figure.closest('[data-figure]')?.dataset.figure || '?')),
  ...[...document.querySelectorAll('th')].filter((cell) => !cell.innerText.trim()).map(() => 'th (empty)'),
]
"""


def new_session(server_url: str, fill) -> str:
    """The code of the session ``fill`` creates and fills with data."""
    before = session_codes(server_url)
    fill(server_url)
    (code,) = session_codes(server_url) - before
    return code


def answer_every_bias_question(server_url: str) -> None:
    """Two people answer every test (a choice and the slider, or two arguments), so the report's metrics are numbers."""
    for person in visitors(server_url, "bias_tests", 2, "A"):
        person.submit(dict(consent_given="True")).submit({})
        for _ in range(60):
            if person.page not in ("Choice", "Arguments"):
                break
            offered = re.findall(r'class="form-check-input bias-argument"[^>]*value="([^"]+)"', person.html)
            person.submit(dict(selected_arguments=",".join(offered[:2])) if offered else dict(choice=1, confidence=70))
        assert person.page == "Completion", person.url


@pytest.fixture(scope="module")
def lab(_llm_server_instance):
    """A production-mode server with one session of each app, each with data: a finished DoND deal, a social_eval
    rating, a payoff judgement and two people's bias answers."""
    env = deployment_mode(
        base_env(OPENAI_BASE_URL=_llm_server_instance.base_url, OPENAI_API_KEY="sk-test-not-a-real-key")
    )
    with own_database(env) as env:
        kind = "prodserver" if uses_server_database(env) else "devserver"
        with running_server(kind=kind, env=env) as server:
            server.password = env["OTREE_ADMIN_PASSWORD"]
            server.sessions = {
                "dond": new_session(server.url, play_dond_person_vs_person),
                "social_eval": new_session(server.url, rate_in_social_eval),
                "payoff_reasoning_eval": new_session(server.url, judge_in_payoff_reasoning),
                "bias_tests": new_session(server.url, answer_every_bias_question),
            }
            yield server


def log_in(page, server) -> None:
    """oTree's admin login, as a researcher types it."""
    page.goto(f"{server.url}/login")
    page.locator("#id_username").fill("admin")
    page.locator("#id_password").fill(server.password)
    page.locator("#btn-login").click()
    page.wait_for_url(lambda url: "/login" not in url)


@pytest.mark.parametrize("viewport", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_the_researcher_pages_pass_axe(lab, browser, viewport):
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    page = context.new_page()
    page.set_default_timeout(30_000)
    found = []

    def check(where: str) -> None:
        try:
            assert_accessible(page, "en", where=where)
        except AssertionError as failure:  # every page's findings at once
            found.append(str(failure))
        # What axe leaves to a person: a figure (an inline svg, a Chart.js canvas) without role="img" is skipped by
        # a screen reader, and an empty table header is only a minor finding.
        unnamed = page.evaluate(UNNAMED_JS)
        if unnamed:
            found.append(f"on {where}: figures without a text alternative or empty table headers: {unnamed}")

    try:
        log_in(page, lab)
        dond = lab.sessions["dond"]
        for view in STUDY_PAGES:
            page.goto(f"{lab.url}/{view}/{dond}")
            assert "/login" not in page.url, f"{view} asked for the login again"
            check(view)
        for app, code in lab.sessions.items():
            page.goto(f"{lab.url}/AdminReport/{code}")
            assert page.locator("table tr").count() > 1, f"the {app} report shows no table rows"
            assert page.locator("[data-figure] svg").count() > 0, f"the {app} report shows no figure"
            current = page.locator(".nav-tabs [aria-current=page]")  # the tab shown, named (not only by a colour)
            if current.count() != 1 or current.inner_text().strip() != "Report":
                found.append(f"on the {app} admin report: the Report tab is not marked aria-current")
            check(f"the {app} admin report")
        if viewport[0] < 576:  # below Bootstrap's sm the top bar is folded: its menu button opens it
            page.locator(".navbar-toggler").click()
            try:
                page.locator("#nav-study-status").wait_for(state="visible", timeout=5_000)
            except PlaywrightTimeout:
                found.append("the phone's menu button does not open the top bar's menu")
        assert not found, "\n".join(found)
    finally:
        context.close()
