"""Screenshots of every page of the four apps, on a desktop (1280×800) and a phone (390×844) screen, and the record
that says what each picture shows.

    .venv/bin/python docs/screenshots.py                          # every set the docs hold (SETS)
    .venv/bin/python docs/screenshots.py --apps dond --language de

It starts a devserver (in-memory database) whose model is our offline demo (``backend.core.llm.fake_server``'s
demo responder, which plays real DoND games), walks a participant through each app as a person would, and saves
``<app>-<NN>-<page>-<desktop|phone>[-<language>].png`` per page, then the researcher's pages, reached by the links a
researcher follows from the session's Monitor (Study status, the Report tab, the app's own page such as DoND's
transcripts, Launch check, Pay and review): a page that moves is photographed where it moved to.

No page is photographed that answered an error status, oTree's "Not Found" or error page, or a blank page
(`page_problem`): the walk stops there and that app's old pictures stay. An app's pictures in one language are
replaced together, so no picture of an older walk is left beside them. ``docs/screenshots/pages.json`` records, per
picture, the page's URL (codes replaced by ``{session}`` and ``{participant}``), its status, title and opening text,
and the picture's SHA-256; ``tests/backend/test_docs_screenshots.py`` reads it (every picture the docs name exists,
none is blank or an error, none changed outside this script) and ``tests/system/test_screenshot_pages.py`` asks a
live server for every URL it records. Tests never write into ``docs/``: this script is the one thing that does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "docs" / "screenshots"
RECORD = OUT / "pages.json"  # picture name -> what the page was (`record_entry`)
SCREENS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
PID = "60a1b2c3d4e5f6a7b8c9d0e1"
HIDE_DEBUG_PANEL = """document.addEventListener('DOMContentLoaded', () => {
    document.querySelectorAll('.debug-info').forEach(panel => panel.closest('.container').remove()); });"""
# The bodies of error pages with no words of their own: Starlette's (oTree's router) and a proxy's.
ERROR_BODIES = frozenset({"not found", "internal server error", "method not allowed", "bad request", "forbidden"})
ERROR_TITLES = ("application error",)  # oTree's error page (otree/errorpage.py): "Application error (500)"
FEWEST_WORDS = 3  # a page with fewer words than this is blank (a "Thank you!" page has more)
EMOJI_FONT = "/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf"
OPENING_CHARS = 120  # of a page's text, kept in the record


def page_problem(status: int | None, title: str, text: str) -> str | None:
    """Why a page must not be photographed (an error status, an error page, a blank page), or None when it may.

    >>> page_problem(200, "Consent | Research study", "Research study  Consent  Please read this before you start.")
    >>> page_problem(404, "", "Not Found")
    'it answered status 404'
    >>> page_problem(200, "", "Not Found")
    "it is an error page: 'Not Found'"
    >>> page_problem(200, "Application error (500)", "Application error (500) Traceback ...")
    "it is oTree's error page: 'Application error (500)'"
    >>> page_problem(200, "", "  ")
    'it is blank (0 words)'
    >>> page_problem(None, "Study status", "Study status of 3 people")
    'no status: the page was not loaded from the server'
    """
    if status is None:
        return "no status: the page was not loaded from the server"
    if status >= 400:
        return f"it answered status {status}"
    words = text.split()
    if " ".join(words).lower() in ERROR_BODIES:
        return f"it is an error page: {' '.join(words)!r}"
    if title.strip().lower().startswith(ERROR_TITLES):
        return f"it is oTree's error page: {title.strip()!r}"
    if len(words) < FEWEST_WORDS:
        return f"it is blank ({len(words)} words)"
    return None


def url_template(url: str, session_code: str) -> str:
    """``url`` without the server, its participant code as ``{participant}`` and the session's as ``{session}``.

    >>> url_template("http://127.0.0.1:8001/p/ab12cd/dond/Bargain/3", "xy34")
    '/p/{participant}/dond/Bargain/3'
    >>> url_template("http://127.0.0.1:8001/AdminReport/xy34?", "xy34")
    '/AdminReport/{session}'
    """
    path = re.sub(r"^[a-z]+://[^/]+", "", url).rstrip("?")
    path = re.sub(r"^/p/[^/]+/", "/p/{participant}/", path)
    return path.replace(f"/{session_code}", "/{session}")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pictures_of(app: str, language: str, folder: Path | None = None) -> list[Path]:
    """The pictures of one app's walk in one language (``dond-03-bargain-phone-de.png``; English has no suffix), in
    ``folder`` (default `OUT`)."""
    folder = folder or OUT
    suffix = "" if language == "en" else f"-{language}"
    pattern = re.compile(rf"{re.escape(app)}-\d\d-.+-(desktop|phone){re.escape(suffix)}\.png")
    return sorted(path for path in folder.glob("*.png") if pattern.fullmatch(path.name))


class PageRefused(RuntimeError):
    """A page the walk reached must not be photographed (`page_problem`)."""


class Camera:
    """Numbered screenshots of one app's pages, each at both screen sizes, into ``folder``; each page is checked
    (`page_problem`) before it is photographed and recorded (``entries``)."""

    def __init__(self, page, app: str, language: str, folder: Path):
        self.page, self.app, self.number, self.folder = page, app, 0, folder
        self.suffix = "" if language == "en" else f"-{language}"
        self.saved: list[Path] = []
        self.entries: dict[str, dict] = {}
        self.session_code = self.participant_code = ""
        self.session_config: dict = {}  # the session's config name and the fields the walk set (`start`)
        self.status: int | None = None  # of the last document the page loaded (redirects followed)
        page.on("response", self._response)

    def anonymous(self, text: str) -> str:
        """``text`` with this walk's codes as ``{session}`` and ``{participant}``: a record that differs only by a
        session's random code is the same record."""
        for code, name in ((self.session_code, "{session}"), (self.participant_code, "{participant}")):
            text = text.replace(code, name) if code else text
        return text

    def _response(self, response) -> None:
        request = response.request
        if request.is_navigation_request() and request.frame == self.page.main_frame:
            self.status = response.status

    def shoot(self, name: str) -> None:
        self.number += 1
        self.page.wait_for_load_state("load")
        title, text = self.page.title(), self.page.locator("body").inner_text()
        problem = page_problem(self.status, title, text)
        if problem:
            raise PageRefused(f"{name} ({self.page.url}) is not photographed: {problem}")
        url = url_template(self.page.url, self.session_code)
        found = re.match(r"[a-z]+://[^/]+/p/([^/]+)/", self.page.url)
        self.participant_code = found.group(1) if found else self.participant_code
        headings = self.page.locator("h1, h2, h3").all_inner_texts()[:3]
        title = re.sub(r"^\[[^\]]*\]\s*|\s*\[debug\]$", "", title)  # the devserver's [code/P1] ... [debug]
        entry = dict(
            url=url,
            status=self.status,
            title=self.anonymous(title),
            headings=[self.anonymous(" ".join(heading.split())) for heading in headings],
            text=self.anonymous(" ".join(text.split()))[:OPENING_CHARS],
            session=self.session_config,
        )
        for screen, size in SCREENS.items():
            self.page.set_viewport_size(size)
            self.page.wait_for_timeout(250)  # let the layout and its scripts settle at this width
            path = self.folder / f"{self.app}-{self.number:02d}-{name}-{screen}{self.suffix}.png"
            self.page.screenshot(path=str(path))
            self.saved.append(path)
            self.entries[path.name] = entry
        self.page.set_viewport_size(SCREENS["desktop"])


def read_record(path: Path | None = None) -> dict[str, dict]:
    """Picture name -> what its page was (`Camera.shoot`), from ``path`` (default `RECORD`)."""
    path = path or RECORD
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def write_record(record: dict[str, dict], path: Path | None = None) -> None:
    path = path or RECORD
    path.write_text(json.dumps(dict(sorted(record.items())), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def replace_pictures(app: str, language: str, camera: Camera, record: dict[str, dict]) -> None:
    """Put one walk's pictures in place of the app's old ones in that language, and their entries in ``record``."""
    for old in pictures_of(app, language):
        old.unlink()
        record.pop(old.name, None)
    for path in camera.saved:
        target = OUT / path.name
        shutil.move(path, target)
        record[path.name] = dict(camera.entries[path.name], sha256=sha256(target))


def submit(page, selector: str = ".otree-btn-next") -> None:
    with page.expect_navigation(wait_until="load"):
        page.locator(selector).first.click()


def consent(page, camera: Camera) -> None:
    camera.shoot("consent")
    page.locator("input[name=consent_given][value=True]").check()
    submit(page)


def start(server_url: str, camera: Camera, config_name: str, **config) -> dict:
    from harness.servers import create_session, session_start_links

    session = create_session(server_url, config_name, 1, **config)
    camera.session_code, camera.session_config = session["code"], dict(name=config_name, **config)
    link = session_start_links(server_url, session["code"])[0]
    camera.page.goto(f"{link}?participant_label={PID}")
    return session


def walk_dond(server_url: str, page, camera: Camera, language: str) -> dict:
    session = start(
        server_url,
        camera,
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
        camera,
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
    session = start(server_url, camera, "payoff_reasoning_eval", language=language, judges_per_log=1, logs_per_judge=1)
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
    session = start(server_url, camera, "bias_tests", language=language, order_seed=7)
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


# The researcher's pages, each by the link a researcher follows: (picture name, page that shows the link, selector).
# The app's own pages (DoND's transcripts) are the Study status page's other "link-<view>" buttons, in between.
RESEARCHER_LINKS = (
    ("admin-status", "monitor", "#nav-study-status"),
    ("admin-report", "monitor", "a.nav-link.AdminReport"),
    ("admin-launch-check", "status", "#link-launch-check"),
    ("admin-pay-review", "status", "#link-pay-review"),
)
APP_PAGE_NAMES = {"DondTranscripts": "admin-transcripts"}  # the name its pictures had before the links were read


def researcher_links(server_url: str, page, code: str) -> list[tuple[str, str]]:
    """(picture name, URL) of each researcher page of session ``code``, read from the links of oTree's Monitor page
    and of Study status: the pages' current addresses, wherever they move."""

    def href(selector: str) -> str:
        found = page.locator(selector)
        if not found.count():
            raise PageRefused(f"{page.url} has no link {selector}")
        return server_url + found.first.get_attribute("href")

    page.goto(f"{server_url}/SessionMonitor/{code}")
    from_monitor = {name: href(selector) for name, source, selector in RESEARCHER_LINKS if source == "monitor"}
    page.goto(from_monitor["admin-status"])
    from_status = {name: href(selector) for name, source, selector in RESEARCHER_LINKS if source == "status"}
    shared = {"link-launch-check", "link-pay-review"}
    app_pages = []
    for link in page.locator("a[id^=link-]").all():
        view = (link.get_attribute("id") or "").removeprefix("link-")
        if f"link-{view}" not in shared:
            name = APP_PAGE_NAMES.get(view, "admin-" + re.sub(r"(?<!^)(?=[A-Z])", "-", view).lower())
            app_pages.append((name, server_url + link.get_attribute("href")))
    return [*from_monitor.items(), *app_pages, *from_status.items()]


def researcher_pages(server_url: str, page, camera: Camera, session: dict) -> None:
    for name, url in researcher_links(server_url, page, session["code"]):
        page.goto(url)
        camera.shoot(name)


WALKS: dict[str, Callable] = {
    "dond": walk_dond,
    "social_eval": walk_social_eval,
    "payoff_reasoning_eval": walk_payoff,
    "bias_tests": walk_bias,
}


# The sets docs/screenshots/ holds: every app in English, the two with most text also in German.
SETS = {"en": tuple(WALKS), "de": ("dond", "social_eval")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", help="comma-separated apps (default: every app of the language's set, SETS)")
    parser.add_argument("--language", choices=("en", "de", "it"), help="one language (default: every set, SETS)")
    args = parser.parse_args(argv)
    languages = [args.language] if args.language else list(SETS)
    chosen = [app.strip() for app in args.apps.split(",") if app.strip()] if args.apps else None
    unknown = sorted(set(chosen or ()) - set(WALKS))
    if unknown:
        parser.error(f"unknown apps {', '.join(unknown)}; choose from {', '.join(WALKS)}")
    walks = [(app, language) for language in languages for app in (chosen or SETS.get(language, WALKS))]

    from backend.core.llm.fake_server import FakeOpenAIServer
    from backend.dond.demo_responder import demo as demo_responder
    from harness.servers import CHROMIUM, CHROMIUM_ARGS, base_env, ensure_debian_package, running_server

    OUT.mkdir(parents=True, exist_ok=True)
    ensure_debian_package(CHROMIUM, "chromium")
    ensure_debian_package(EMOJI_FONT, "fonts-noto-color-emoji")  # oTree's admin tabs ("✏ Edit") are emoji
    from playwright.sync_api import sync_playwright

    failed: list[str] = []
    record = read_record()
    with FakeOpenAIServer(responder=demo_responder) as model:
        env = base_env(OPENAI_BASE_URL=model.base_url, OPENAI_API_KEY="sk-demo-not-a-real-key")
        with running_server(env=env) as server, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            for app, language in walks:
                context = browser.new_context(viewport=SCREENS["desktop"])
                # The devserver's debug panel is for developers, not part of any page a participant sees.
                context.add_init_script(HIDE_DEBUG_PANEL)
                page = context.new_page()
                page.set_default_timeout(30_000)
                page.route("https://app.prolific.com/**", lambda route: route.fulfill(status=200, body="ok"))
                with tempfile.TemporaryDirectory(prefix="screenshots-") as folder:
                    camera = Camera(page, app, language, Path(folder))
                    try:
                        session = WALKS[app](server.url, page, camera, language)
                        researcher_pages(server.url, page, camera, session)
                    except Exception as error:  # keep the old pictures of this walk and the other walks' new ones
                        failed.append(f"{app} ({language}): stopped at {page.url}: {error}".splitlines()[0])
                    else:
                        replace_pictures(app, language, camera, record)
                        write_record(record)
                context.close()
                print(json.dumps({"app": app, "language": language, "screenshots": len(camera.saved)}))
            browser.close()
    for line in failed:
        print(line, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
