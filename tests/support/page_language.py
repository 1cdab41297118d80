"""Browser-test helpers for the session's language: no English word of an app's texts on a German or Italian page,
and a Playwright page of a given size.

The researcher's material on a page (items, logs, games, rubrics) is marked ``data-material`` and stays as written,
so it is left out, as are scripts, hidden elements and the devserver's debug panel (researchers only).
"""

from __future__ import annotations

import re
from contextlib import contextmanager

WORD = re.compile(r"[^\W\d_]{3,}")


def words_of(table: dict) -> set[str]:
    """The words (three letters or more, lower case) of a texts table; placeholders such as ``{n}`` left out."""
    found = set()
    for value in table.values():
        for line in value if isinstance(value, list) else [value]:
            found |= {word.lower() for word in WORD.findall(re.sub(r"\{\w+\}", " ", line))}
    return found


def english_words(texts: dict[str, dict]) -> set[str]:
    """Words of ``texts["en"]`` that no other language's table uses ("Nash" is no English leftover)."""
    others = set().union(*(words_of(table) for language, table in texts.items() if language != "en"))
    return words_of(texts["en"]) - others


def shown_text(page) -> str:
    """What the page shows a person besides the researcher's material, with the page's title."""
    return page.evaluate(
        """() => {
          const copy = document.body.cloneNode(true);
          copy.querySelectorAll('[data-material], script, style, [hidden], .debug-info').forEach(el => el.remove());
          return copy.textContent + ' ' + document.title;
        }"""
    )


def assert_no_english(page, texts: dict[str, dict]) -> None:
    shown = {word.lower() for word in WORD.findall(shown_text(page))}
    left = sorted(english_words(texts) & shown)
    assert not left, f"English words on {page.url}: {left}"


@contextmanager
def page_of_size(browser, width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        yield page
    finally:
        context.close()
