"""The static spreading page of docs/multi-server.md (``docs/files/spread.html``) in Debian's chromium: the Prolific
study URL opens it, and it sends each participant to one server chosen by their Prolific ID, the same server every
time, with the room and the query string unchanged, and the arrivals spread over all servers."""

from __future__ import annotations

from collections import Counter

from harness import PROJECT_ROOT

PAGE = (PROJECT_ROOT / "docs" / "files" / "spread.html").as_uri()
SERVERS = ["https://lab1.example.org", "https://lab2.example.org", "https://lab3.example.org"]
QUERY = "?participant_label={pid}&STUDY_ID=study1&SESSION_ID=s{n}"


def fnv1a(text: str) -> int:
    """The oracle: 32-bit FNV-1a of the UTF-8 bytes (offset basis 2166136261, prime 16777619)."""
    value = 2166136261
    for byte in text.encode():
        value = ((value ^ byte) * 16777619) % 2**32
    return value


def _arrive(page, pid: str, n: int) -> str:
    """Where the page sends an arrival (the servers are stubbed: the redirect is recorded, nothing leaves)."""
    page.route("https://*.example.org/**", lambda route: route.fulfill(status=200, body="arrived"))
    page.goto(PAGE + QUERY.format(pid=pid, n=n))
    page.wait_for_url("https://*.example.org/**")
    return page.url


def test_a_participant_lands_on_the_same_server_every_time_with_the_query_unchanged(page):
    first = _arrive(page, "5f1a2b3c4d5e6f7a8b9c0d1e", 1)
    again = _arrive(page, "5f1a2b3c4d5e6f7a8b9c0d1e", 2)
    server = SERVERS[fnv1a("5f1a2b3c4d5e6f7a8b9c0d1e") % len(SERVERS)]
    assert first.split("/room/")[0] == again.split("/room/")[0] == server
    assert first == f"{server}/room/social_eval_study" + QUERY.format(pid="5f1a2b3c4d5e6f7a8b9c0d1e", n=1)


def test_arrivals_spread_over_every_server(page):
    """The page's own choice (its script up to the redirect) for 3,000 Prolific-like IDs: each server gets a third,
    within 3 points."""
    script = (PROJECT_ROOT / "docs" / "files" / "spread.html").read_text(encoding="utf-8")
    choice = script.split("<script>")[1].split("const query")[0]
    pids = [f"{n * 7919:024x}" for n in range(3000)]
    answers = page.evaluate(f"(pids) => {{ {choice}; return pids.map(serverFor); }}", pids)
    assert answers == [SERVERS[fnv1a(pid) % len(SERVERS)] for pid in pids]
    chosen = Counter(answers)
    assert set(chosen) == set(SERVERS)
    assert all(abs(count / len(pids) - 1 / 3) < 0.03 for count in chosen.values()), chosen
