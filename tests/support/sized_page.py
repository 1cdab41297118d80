"""A Playwright page of a given viewport size, closed with its context."""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def page_of_size(browser, width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        yield page
    finally:
        context.close()
