"""The documentation site's navigation answers a new user's first questions by its titles alone, and points only
at pages that exist (``mkdocs build --strict`` in .ci/run also fails on a page left out of it)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
NAV = dict(re.findall(r"^\s+- \"?(.+?)\"?: (\S+\.md)$", MKDOCS.split("\nnav:\n", 1)[1], flags=re.MULTILINE))


def test_the_navigation_names_a_room_link_test_bonuses_and_the_dond_games_columns():
    def page_titled(words):
        return next(page for title, page in NAV.items() if words in title.lower())

    assert page_titled("testing a room link") == "running/prolific.md"
    assert page_titled("paying bonuses") == "running/paying.md"
    assert page_titled("dond_games") == "reference/exports.md"
    assert "## `dond_games`" in (ROOT / "docs" / "reference" / "exports.md").read_text(encoding="utf-8")


def test_every_navigation_entry_is_a_page():
    assert len(NAV) > 25
    assert [page for page in NAV.values() if not (ROOT / "docs" / page).exists()] == []
