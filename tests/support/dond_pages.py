"""A person on the dond pages in Chromium: a session against the test-server LLM, walked to a page, with every live
payload the page receives recorded, and the game's row read back from the export."""

from __future__ import annotations

import json
import re

from harness.servers import create_session, export_rows, session_start_links

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def open_page(browser, viewport: dict):
    """A fresh page of ``viewport`` size; also its list of live payloads received (``page.live_payloads``)."""
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.live_payloads = []

    def record(socket):
        if "/live?" in socket.url:
            socket.on("framereceived", lambda frame: page.live_payloads.append(frame))

    page.on("websocket", record)
    page.dialogs = []
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    return page


def start(server_url: str, page, **config) -> dict:
    """A one-person session against the test-server LLM (the person writes first); the page at Instructions."""
    config = {"llm_model": "test-model", "first_mover": "human", **config}
    session = create_session(server_url, "dond_llm", 1, **config)
    page.goto(session_start_links(server_url, session["code"])[0])
    page.locator("input[name=consent_given][value=True]").check()
    submit(page)
    page.wait_for_url("**/Instructions/**")
    return session


def submit(page, selector: str = ".otree-btn-next") -> None:
    with page.expect_navigation(wait_until="load"):
        page.locator(selector).first.click()


def to_bargain(page) -> None:
    """From Instructions to a loaded Bargain page (its first state rendered)."""
    submit(page)
    page.wait_for_url("**/Bargain/**")
    page.wait_for_function("document.querySelector('#dond-status').textContent.length > 0")


def game_row(server_url: str, session_code: str) -> dict:
    (row,) = export_rows(server_url, "dond", "custom_export_dond_games", session_code=session_code)
    return row


def numbers(cell: str) -> list[int]:
    """A values or counts cell of the export as a list of whole numbers."""
    try:
        return [int(n) for n in json.loads(cell)]
    except (ValueError, TypeError):
        return [int(n) for n in re.findall(r"\d+", cell)]


def values_of(row: dict) -> tuple[list[int], list[int]]:
    """(the person's values, the model's values) of a game row."""
    person = row["focal_role"].lower()
    other = "b" if person == "a" else "a"
    return numbers(row[f"values_{person}"]), numbers(row[f"values_{other}"])


def keys_of(value) -> set[str]:
    """Every key of a JSON value, at any depth."""
    if isinstance(value, dict):
        return set(value) | {key for item in value.values() for key in keys_of(item)}
    if isinstance(value, list):
        return {key for item in value for key in keys_of(item)}
    return set()


def live_keys(page) -> set[str]:
    """Every key of every live payload the page has received."""
    keys: set[str] = set()
    for frame in page.live_payloads:
        try:
            keys |= keys_of(json.loads(frame))
        except (ValueError, TypeError):
            continue
    return keys


def body_text(page) -> str:
    """The page's own text (title, countdown, content), without oTree's "Powered by" line and debug panel."""
    return page.evaluate(
        """() => { const body = document.querySelector('.otree-body').cloneNode(true);
                   body.querySelectorAll('.powered-by-otree').forEach(e => e.remove());
                   return body.innerText; }"""
    )
