"""Strange input to this round's guards (red team): a flood's Accept-Language, broken or marked-up translations,
tickets passed from one PID to another, keys that never fill up again.

Each test fails without the guard it names (checked by undoing it once).
"""

from __future__ import annotations

import time

import lab_server.limits as limits
import study_flow


def asking(header: str) -> dict:
    return {"headers": [(b"accept-language", header.encode("latin-1"))]}


def test_a_huge_accept_language_is_read_only_as_far_as_a_browser_sends(monkeypatch):
    """A 16 KB Accept-Language of 8,000 made-up languages cost 65 ms per refusal page (werkzeug weighs each against
    each available language): the pages a flood gets. Only the first ``MAX_ACCEPT_LANGUAGE_CHARS`` are read."""
    seen = []
    parse = limits.parse_accept_header
    monkeypatch.setattr(limits, "parse_accept_header", lambda header, cls: seen.append(header) or parse(header, cls))
    flood = "x," * 8000 + "de"
    started = time.perf_counter()
    for _ in range(20):
        assert limits.accepted_language(asking(flood), study_flow.SHARED_LANGUAGES) == "en"
    assert max(len(header) for header in seen) <= limits.MAX_ACCEPT_LANGUAGE_CHARS
    assert time.perf_counter() - started < 0.2  # 20 pages; 1.3 s without the bound
    # an honest browser's header is read whole, q-values and all
    browser = "fr-FR,fr;q=0.9,en-US;q=0.8,en;q=0.7,it;q=0.95"
    assert limits.accepted_language(asking(browser), study_flow.SHARED_LANGUAGES) == "it"
