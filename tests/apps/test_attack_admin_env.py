"""LAB_INACTIVE_AFTER_S (lab_server/admin_pages.py) is checked when the server starts: a value the status page cannot
use stops the start with a sentence, instead of passing and making every study status page a server error
("inf" passed float() and then failed in the page's duration text)."""

from __future__ import annotations

import pytest

from backend.core.participant_status import duration
from lab_server import admin_pages


@pytest.mark.parametrize("raw", ["inf", "-inf", "nan", "1e400", "ten", "10s"])
def test_unusable_values_stop_the_start_with_a_sentence(monkeypatch, raw):
    monkeypatch.setenv("LAB_INACTIVE_AFTER_S", raw)
    with pytest.raises(SystemExit, match="LAB_INACTIVE_AFTER_S must be a finite number of seconds"):
        admin_pages.inactive_after_s()


@pytest.mark.parametrize("raw, expected", [("", 3600), ("90", 90), ("0", 3600), ("-5", 3600)])
def test_usable_values_are_shown_on_the_page(monkeypatch, raw, expected):
    monkeypatch.setenv("LAB_INACTIVE_AFTER_S", raw)
    value = admin_pages.inactive_after_s()
    assert value == expected
    assert duration(value)  # the page's "no page opened for ..." text
