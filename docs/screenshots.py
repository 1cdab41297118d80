"""Screenshots of every page of the four apps, on a desktop (1280×800) and a phone (390×844) screen.

    .venv/bin/python docs/screenshots.py                 # all apps, English, into docs/screenshots/
    .venv/bin/python docs/screenshots.py --apps dond --language de

It starts a devserver (in-memory database) whose model is our offline demo (``backend.core.llm.fake_server``'s
demo responder, which plays real DoND games), walks a participant through each app as a person would, and saves
``<app>-<NN>-<page>-<desktop|phone>.png`` per page, then the researcher's pages (Monitor-side study status, DoND
transcripts, each app's Report tab). Tests never write into ``docs/``: this script is the one thing that does.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend.core.llm.fake_server import FakeOpenAIServer  # noqa: E402
from backend.dond.demo_responder import demo as demo_responder  # noqa: E402
from tests.support.harness import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    base_env,
    create_session,
    ensure_debian_package,
    running_server,
    session_start_links,
)

OUT = ROOT / "docs" / "screenshots"
SCREENS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
PID = "60a1b2c3d4e5f6a7b8c9d0e1"
HIDE_DEBUG_PANEL = """document.addEventListener('DOMContentLoaded', () => {
    document.querySelectorAll('.debug-info').forEach(panel => panel.closest('.container').remove()); });"""


class Camera:
    """Numbered screenshots of one app's pages, each at both screen sizes."""

    def __init__(self, page, app: str, language: str):
        self.page, self.app, self.number = page, app, 0
        self.suffix = "" if language == "en" else f"-{language}"
        self.saved: list[Path] = []

    def shoot(self, name: str) -> None:
        self.number += 1
        for screen, size in SCREENS.items():
            self.page.set_viewport_size(size)
            self.page.wait_for_timeout(250)  # let the layout and its scripts settle at this width
            path = OUT / f"{self.app}-{self.number:02d}-{name}-{screen}{self.suffix}.png"
            self.page.screenshot(path=str(path))
            self.saved.append(path)
        self.page.set_viewport_size(SCREENS["desktop"])


def submit(page, selector: str = ".otree-btn-next") -> None:
    with page.expect_navigation(wait_until="load"):
        page.locator(selector).first.click()


def consent(page, camera: Camera) -> None:
    camera.shoot("consent")
    page.locator("input[name=consent_given][value=True]").check()
    submit(page)


def start(server_url: str, page, config_name: str, **config) -> dict:
    session = create_session(server_url, config_name, 1, **config)
    link = session_start_links(server_url, session["code"])[0]
    page.goto(f"{link}?participant_label={PID}")
    return session


def walk_dond(server_url: str, page, camera: Camera, language: str) -> dict:
    session = start(
        server_url,
        page,
        "dond_llm",
        llm_model="demo-model",
        first_mover="human",
        language=language,
        value_visibility="person_sees_llm",
    )
    consent(page, camera)
    page.wait_for_url("**/Instructions/**")
    camera.shoot("instructions")
    submit(page)
    page.wait_for_url("**/Bargain/**")
    page.wait_for_function("document.querySelector('#dond-status').textContent.length > 0")
    camera.shoot("bargain")
    page.locator("#dond-input").fill(
        {
            "en": "Hello! Which items matter most to you?",
            "de": "Hallo! Welche Gegenstände sind Ihnen am wichtigsten?",
            "it": "Buongiorno! Quali oggetti sono più importanti per Lei?",
        }[language]
    )
    page.locator("#dond-send").click()
    page.locator(".dond-msg.other:not(.typing)").first.wait_for(timeout=60_000)
    page.locator("#dond-rules-panel summary").click()
    camera.shoot("bargain-rules")
    page.locator("#dond-rules-panel summary").click()
    boxes = page.locator("#dond-proposal-fields input")
    for index in range(boxes.count()):
        boxes.nth(index).fill("1")
    page.locator("#dond-propose").click()
    page.locator("#dond-confirm-yes").wait_for()
    camera.shoot("bargain-confirm")
    with page.expect_navigation(wait_until="load", timeout=60_000):
        page.locator("#dond-confirm-yes").click()
    page.wait_for_url("**/Results/**", timeout=60_000)
    camera.shoot("results")
    submit(page)
    camera.shoot("completion")
    return session


def walk_social_eval(server_url: str, page, camera: Camera, language: str) -> dict:
    from backend.social import forms as social_forms
    from backend.social.rubrics import load_rubric

    rubric = load_rubric()
    session = start(
        server_url,
        page,
        "social_eval",
        language=language,
        episodes_per_annotator=1,
        attention_checks=0,
        comprehension_check=True,
    )
    consent(page, camera)
    camera.shoot("instructions")
    submit(page)
    camera.shoot("comprehension")
    questions = rubric.comprehension
    for number, question in enumerate(questions, start=1):  # every answer wrong first: the retry page shows
        page.locator(f"#id_quiz_{number}_{(question.answer + 1) % len(question.options)}").check()
    submit(page)
    camera.shoot("comprehension-retry")
    for number, question in enumerate(questions, start=1):
        page.locator(f"#id_quiz_{number}_{question.answer}").check()
    submit(page)
    page.wait_for_url("**/Rate/**")
    camera.shoot("rate")
    steps = len(social_forms.AGENTS) * len(rubric.dimensions)
    for number in range(1, steps + 1):
        row = page.locator(".se-row.se-current")
        dimension = rubric.dimensions[(number - 1) % len(rubric.dimensions)]
        row.locator("textarea").fill("A short reason, typed for the screenshot, long enough to count.")
        row.locator(f"input[value='{dimension.max}']").check()
        if number == 3:
            camera.shoot("rate-step")
        if number < steps:
            page.locator("#se-next").click()
    with page.expect_navigation(wait_until="load"):
        page.locator(".se-row.se-current textarea").press("Control+Enter")
    camera.shoot("completion")
    return session


def walk_payoff(server_url: str, page, camera: Camera, language: str) -> dict:
    session = start(server_url, page, "payoff_reasoning_eval", language=language, judges_per_log=1, logs_per_judge=1)
    consent(page, camera)
    camera.shoot("instructions")
    submit(page)
    camera.shoot("judge")
    page.locator("#first-response .sentence").nth(1).click()
    page.locator("#id_orig_cor-1").check()  # incorrect, with a marked sentence but no error type: refused
    page.locator("#id_fin_cor-0").check()
    submit(page)
    camera.shoot("judge-refused")
    page.locator("#err-pa").check()
    submit(page)
    camera.shoot("completion")
    return session


def walk_bias(server_url: str, page, camera: Camera, language: str) -> dict:
    session = start(server_url, page, "bias_tests", language=language, order_seed=7)
    consent(page, camera)
    camera.shoot("instructions")
    submit(page)
    for number in range(1, 40):
        if "Completion" in page.url or not page.locator(".bias-test").count():
            break
        arguments = page.locator("#argument-list").count() > 0
        name = "arguments" if arguments else "choice"
        if number <= 2 or arguments:
            camera.shoot(f"{name}-{number}")
        if number == 1:
            submit(page)  # nothing chosen: the page says what is missing
            camera.shoot(f"{name}-{number}-refused")
        if arguments:
            for box in page.locator(".bias-argument").all()[:2]:
                box.check()
        else:
            page.locator("input[name=choice]").first.check()
            if page.locator("#confidence-slider").count():
                page.locator("#confidence-slider").click()
        submit(page)
    camera.shoot("completion")
    return session


def researcher_pages(server_url: str, page, camera: Camera, session: dict, app: str) -> None:
    code = session["code"]
    for name, path in (("admin-status", f"/StudyStatus/{code}"), ("admin-report", f"/SessionReport/{code}")):
        page.goto(server_url + path)
        camera.shoot(name)
    if app == "dond":
        page.goto(f"{server_url}/DondTranscripts/{code}")
        camera.shoot("admin-transcripts")


WALKS: dict[str, Callable] = {
    "dond": walk_dond,
    "social_eval": walk_social_eval,
    "payoff_reasoning_eval": walk_payoff,
    "bias_tests": walk_bias,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", default=",".join(WALKS), help="comma-separated apps (default: all)")
    parser.add_argument("--language", default="en", choices=("en", "de", "it"))
    args = parser.parse_args(argv)
    apps = [app.strip() for app in args.apps.split(",") if app.strip()]
    unknown = sorted(set(apps) - set(WALKS))
    if unknown:
        parser.error(f"unknown apps {', '.join(unknown)}; choose from {', '.join(WALKS)}")
    OUT.mkdir(parents=True, exist_ok=True)
    ensure_debian_package(CHROMIUM, "chromium")
    from playwright.sync_api import sync_playwright

    failed: list[str] = []
    with FakeOpenAIServer(responder=demo_responder) as model:
        env = base_env(OPENAI_BASE_URL=model.base_url, OPENAI_API_KEY="sk-demo-not-a-real-key")
        with running_server(env=env) as server, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            for app in apps:
                context = browser.new_context(viewport=SCREENS["desktop"])
                # The devserver's debug panel is for developers, not part of any page a participant sees.
                context.add_init_script(HIDE_DEBUG_PANEL)
                page = context.new_page()
                page.set_default_timeout(30_000)
                page.route("https://app.prolific.com/**", lambda route: route.fulfill(status=200, body="ok"))
                camera = Camera(page, app, args.language)
                try:
                    session = WALKS[app](server.url, page, camera, args.language)
                    researcher_pages(server.url, page, camera, session, app)
                except Exception as error:  # keep the other apps' pictures; say where this walk stopped
                    failed.append(f"{app}: stopped at {page.url}: {error}".splitlines()[0])
                context.close()
                print(json.dumps({"app": app, "screenshots": len(camera.saved)}))
            browser.close()
    for line in failed:
        print(line, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
