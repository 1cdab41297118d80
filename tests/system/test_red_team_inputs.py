"""Strange input to this round's guards (red team): a flood's Accept-Language, broken or marked-up translations,
tickets passed from one PID to another, keys that never fill up again.

Each test fails without the guard it names (checked by undoing it once).
"""

from __future__ import annotations

import time

import pytest

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


# -- a lab's own catalogue -----------------------------------------------------------------------------------------


def _lab_catalogue(tmp_path, old: str, new: str) -> list[str]:
    """The check's problems for German's DoND catalogue with ``old`` written as ``new`` (a lab's own edit)."""
    from backend.core import catalogues

    text = catalogues.po_path("dond", "de").read_text(encoding="utf-8")
    assert old in text
    edited = tmp_path / "dond.po"
    edited.write_text(text.replace(old, new, 1), encoding="utf-8")
    return catalogues.problems("dond", "de", po=edited)


def game_over(german: str) -> str:
    return f'msgctxt "error_game_over"\nmsgid "The game is over."\nmsgstr "{german}"'


GAME_OVER = game_over("Das Spiel ist vorbei.")


@pytest.mark.parametrize(
    "old, new, expected",
    [
        # formatted by the live method's refusal (.format(limit=...)): a lone brace was a ValueError on every refusal
        (GAME_OVER, game_over("Das Spiel ist vorbei :-}"), "error_game_over: a brace"),
        (GAME_OVER, game_over("Das Spiel {ist} vorbei."), "error_game_over: placeholders"),
        # the placeholder's name kept, but a format of its own: the results page's .format raised
        ("({score} Punkte)", "({score:d} Punkte)", "paid_success: {score:d}"),
        ("({score} Punkte)", "({score!x} Punkte)", "paid_success: {score!x}"),
        ("({score} Punkte)", "({score.__class__} Punkte)", "paid_success: {score.__class__}"),
        # markup: DoND's and social_eval's pages print their texts as they are (no escaping)
        (GAME_OVER, game_over("Das Spiel ist <b>vorbei</b>."), "error_game_over: markup"),
        (GAME_OVER, game_over("<script>alert(1)</script>"), "error_game_over: markup"),
    ],
)
def test_a_translation_that_would_break_or_inject_into_a_page_is_refused_by_the_check(tmp_path, old, new, expected):
    found = _lab_catalogue(tmp_path, old, new)
    assert any(expected in problem for problem in found), found


def test_plain_punctuation_in_a_translation_passes_the_check(tmp_path):
    assert _lab_catalogue(tmp_path, GAME_OVER, game_over("Das Spiel ist vorbei (2 < 3 & 4 > 1).")) == []


# -- the admission gate --------------------------------------------------------------------------------------------


def test_a_waiting_ticket_passed_on_to_another_pid_does_not_jump_the_line():
    """A retry URL's ticket is the place in line of one PID through one link (as the admission cookie is): once its
    holder is in, the same ticket with another ``participant_label`` (a forum post of the retry URL) is a fresh
    arrival, behind everyone waiting, not in at once ahead of them."""
    from lab_server.admission import Gate, waiting_for

    gate = Gate(max_in_flight=1, max_wait_s=60, arrivals_per_s=1, key=b"k")
    first, honest, other = (waiting_for("/room/study", pid) for pid in ("aa01", "bb02", "cc03"))
    gate.in_flight = 1  # saturated: everyone waits
    _, ticket = gate.decide(None, now=0.0, purpose=first)
    _, honest_ticket = gate.decide(None, now=1.0, purpose=honest)
    gate.in_flight = 0
    assert gate.decide(ticket, now=10.0, purpose=first)[0]  # the first in line comes in
    passed_on, _ = gate.decide(ticket, now=12.0, purpose=other)  # its URL, another PID
    assert not passed_on
    assert gate.decide(honest_ticket, now=12.0, purpose=honest)[0]  # the one who waited is next
    assert gate.decide(ticket, now=14.0, purpose=first)[0]  # its own holder reloading still passes


def test_the_gate_remembers_only_labels_otree_would_take():
    """Labels let in are remembered (up to MAX_INSIDE): a label of 60 KB (the URL's limit) each was 6 GB at the
    bound; oTree refuses any label but 1-100 letters, digits, - and _ anyway."""
    from lab_server.admission import Gate

    gate = Gate(max_in_flight=1, max_wait_s=60, key=b"k")
    gate.let_in("/room/r", "x" * 60_000)
    gate.let_in("/room/r", "<b>")
    gate.let_in("/room/r", "5f00aa-b_c")
    assert gate.inside("/room/r", "5f00aa-b_c") and len(gate._inside) == 1


# -- the one limiter -----------------------------------------------------------------------------------------------


def test_a_flood_of_new_keys_past_max_tracked_does_not_make_every_take_look_at_every_key():
    """Past ``MAX_TRACKED`` keys, each take looked at every key for full buckets to forget; while none was full (a
    flood of new keys, e.g. one per IPv6 address, within one refill) that was 38 ms a take. Now the next look comes
    once the keys kept have doubled, and full buckets are still forgotten."""
    from backend.core.rate_limit import MAX_TRACKED, TokenBuckets

    buckets = TokenBuckets(per_minute=60, capacity=10)
    for n in range(MAX_TRACKED + 1):
        buckets.take(f"k{n}", now=0.0)
    started = time.perf_counter()
    assert all(buckets.take(f"new{n}", now=0.5) for n in range(300))
    assert time.perf_counter() - started < 1.0  # 11 s without
    for n in range(MAX_TRACKED + 300):  # ten seconds on: every bucket is full again, and the next look forgets them
        buckets.take(f"later{n}", now=10.0)
    assert len(buckets._buckets) <= 2 * MAX_TRACKED + 2


def test_what_the_docs_say_of_new_places_per_address_is_what_the_bucket_does():
    """New places per address became a token bucket: N at once, then one every window / N, so one address may take
    up to 2N within one window. The manual's tables and the variable's own words had still said N per window (ten
    minutes): a lab sizing a class behind one NAT address, or judging how many places a script may take, read half."""
    from pathlib import Path

    from backend.core.environment import VARIABLES
    from backend.core.rate_limit import TokenBuckets

    number, window = 60, 600.0
    bucket = TokenBuckets(per_minute=number * 60 / window, capacity=number)
    taken = 0  # as places.py does: a visitor is refused while the bucket has no token, and a place given is taken
    for tenth in range(int(window * 10)):
        if bucket.wait_s("address room", now=tenth / 10) == 0:
            taken += bucket.take("address room", now=tenth / 10)
    assert taken == 2 * number - 1
    root = Path(__file__).resolve().parents[2]
    words = {
        "environment": VARIABLES["LAB_NEW_PARTICIPANTS_PER_ADDRESS"].meaning,
        "busy-launch": next(
            line
            for line in (root / "docs/running/busy-launch.md").read_text().splitlines()
            if "PER_ADDRESS` | 60" in line
        ),
        "security": next(
            line for line in (root / "docs/security.md").read_text().splitlines() if "PER_ADDRESS` | 60" in line
        ),
    }
    for where, text in words.items():
        assert "at once" in text and "in ten minutes" not in text and "in the window" not in text, where


# -- one study on several servers: nginx's front door ---------------------------------------------------------------


def _front_door(tmp_path):
    """nginx with study_servers' configuration for two servers on free ports (only its redirector is asked)."""
    import socket
    import subprocess

    from backend.core.study_servers import NGINX, nginx_config, servers_of
    from harness.servers import ensure_debian_package, free_port

    ensure_debian_package(NGINX, "nginx")
    for _ in range(20):
        port = free_port()
        if port + 2 < 65536 and all(_free(port + i) for i in (1, 2)):
            break
    (tmp_path / "nginx").mkdir()
    config = tmp_path / "nginx.conf"
    config.write_text(nginx_config(servers_of(2, port), port=port, folder=tmp_path, listen="127.0.0.1"))
    process = subprocess.Popen([NGINX, "-c", str(config), "-p", str(tmp_path)], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, port
        except OSError:
            time.sleep(0.05)
    process.terminate()
    raise AssertionError(process.stderr.read().decode())


def _free(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_one_prolific_id_is_sent_to_one_server_however_its_link_is_written(tmp_path):
    """The front door hashes the Prolific ID to a server; oTree reads the ID itself. nginx's $arg_participant_label
    also takes PARTICIPANT_LABEL (first), and hashes 5f%33... as written where oTree decodes it: with either, one
    person chose the server and took a place on each (each server checks its own places only), the bonus file then
    paying the sum. Now the ID is read in oTree's case and an encoded query is refused at the door."""
    import http.client

    process, port = _front_door(tmp_path)
    try:
        pid = "5f3c2a1b9d8e7f6a5b4c3d2e"

        def server(query: str) -> str:  # sent as written (requests would decode %35 to 5 first)
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", f"/room/study?{query}")
            answer = connection.getresponse()
            connection.close()
            return answer.getheader("Location", "").split("/room/")[0] if answer.status == 302 else "refused"

        home = server(f"participant_label={pid}&STUDY_ID=s1&SESSION_ID=x1")
        assert home.endswith((str(port + 1), str(port + 2)))
        chosen = {server(f"PARTICIPANT_LABEL={other}&participant_label={pid}") for other in "abcdefghijklmnop"}
        assert chosen == {home}
        assert server(f"participant_label=%35{pid[1:]}") == "refused"
        assert server(f"participant%5Flabel={pid}") == "refused"
        assert server(f"PROLIFIC_PID={pid}") == home
    finally:
        process.terminate()
        process.wait(10)


def test_new_places_per_address_refill_on_the_servers_clock_not_the_wall_clock(monkeypatch):
    """The new-place bucket was counted on the wall clock: set back an hour (NTP stepping a drifted clock, a VM
    resumed), no address refilled for that hour, and a lab behind one address was refused after its first burst."""
    from types import SimpleNamespace

    import lab_server.places as places

    monkeypatch.setenv("LAB_NEW_PARTICIPANTS_PER_ADDRESS", "2")
    monkeypatch.setenv("LAB_NEW_PARTICIPANTS_WINDOW_S", "20")  # one more place every 10 s
    monkeypatch.setattr(places, "_budget", None)
    wall, steady = [1_000_000.0], [50.0]
    monkeypatch.setattr(places.time, "time", lambda: wall[0])
    monkeypatch.setattr(places.time, "monotonic", lambda: steady[0])
    request = SimpleNamespace(client=SimpleNamespace(host="203.0.113.7"), query_params={})
    session = SimpleNamespace(code="s1", config={})
    for _ in range(2):
        assert places.new_place_refusal(request, session, "lab") is None
        places.place_taken(request, session, "lab", SimpleNamespace(vars={}))
    wall[0] -= 3600  # the wall clock set back an hour
    steady[0] += 11  # 11 s later
    assert places.new_place_refusal(request, session, "lab") is None


def test_the_same_server_and_session_given_twice_is_refused_not_paid_twice(monkeypatch, capsys):
    """``python -m backend bonus`` over several servers sums what each pair pays a Prolific ID (a person on two
    servers): the same ``--server``/``--session`` pair given twice (a line copied in a shell script, a slash or a
    capital more) paid everyone twice, every person merely flagged. Such a pair is refused before anything is
    fetched; two sessions of one server are still summed."""
    import backend.__main__ as cli
    from backend.core import admin_client

    fetched = []

    def fetch(self, command, session):
        fetched.append(session)
        return "a" * 24 + ",0.50\n"

    monkeypatch.setattr(admin_client.AdminClient, "__init__", lambda self, server, **_: None)
    monkeypatch.setattr(admin_client.AdminClient, "fetch", fetch)
    pairs = ["--server", "https://lab.example.org", "--session", "abc123"]
    with pytest.raises(SystemExit) as refused:
        cli.main(["bonus", *pairs, "--server", "HTTPS://Lab.Example.org/", "--session", "abc123"])
    assert refused.value.code == 2 and not fetched
    assert "https://lab.example.org (session abc123) is given twice" in capsys.readouterr().err
    assert cli.main(["bonus", *pairs, "--server", "https://lab.example.org", "--session", "def456"]) == 0
    assert capsys.readouterr().out == "a" * 24 + ",1.00\n"


def test_a_refused_socket_leaves_nothing_behind_in_the_socket_counts():
    """The socket caps read their counts from a defaultdict: each handshake refused (a made-up participant code, one
    over a cap) left an entry of 0 for its code and its address, never removed; 100 made-up codes a second from one
    address (what its live budget lets through) grew the server by about 50 MB an hour."""
    import asyncio

    limits_ = limits.Limits()

    async def nobody(key):
        return False

    limits_._participant_exists = nobody

    async def handshake(code: str) -> list:
        sent = []

        async def receive():
            return {"type": "websocket.connect"}

        async def send(message):
            sent.append(message)

        scope = {
            "type": "websocket",
            "path": "/live",
            "query_string": f"participant_code={code}".encode(),
            "client": ("203.0.113.9", 5000),
        }
        await limits_.websocket(None, scope, receive, send)
        return sent

    for n in range(50):
        assert asyncio.run(handshake(f"made{n}"))[0]["code"] == 1008
    assert dict(limits_.open_sockets) == {}


def _lab_language(folder, *, broken: tuple[str, str] | None = None):
    """German's catalogues copied as the lab's language ``fr`` into ``folder`` (``broken``: a line of dond.po
    replaced, ``(old, new)``)."""
    import shutil

    from backend.core import catalogues

    target = folder / "fr" / "LC_MESSAGES"
    target.mkdir(parents=True)
    for domain in catalogues.DOMAINS:
        shutil.copy(catalogues.po_path(domain, "de"), target / f"{domain}.po")
    if broken:
        po = target / "dond.po"
        text = po.read_bytes()
        assert broken[0].encode() in text
        po.write_bytes(
            text.replace(broken[0].encode(), broken[1].encode() if isinstance(broken[1], str) else broken[1], 1)
        )
    return folder


@pytest.mark.parametrize(
    "broken, expected",
    [
        (('msgstr "Das Spiel ist vorbei."', b'msgstr "Das Spiel \xff vorbei."'), "unreadable"),  # not UTF-8
        (("plural=(n != 1);", "plural=(n != 1;"), "unreadable"),  # gettext cannot read the plural rule
    ],
)
def test_an_unreadable_lab_catalogue_is_not_offered_and_stops_nothing(tmp_path, monkeypatch, broken, expected):
    """A lab's .po with a byte that is not UTF-8, or a Plural-Forms rule gettext cannot read, raised out of the check
    (UnicodeDecodeError) or out of the first page drawn in it (ValueError: unbalanced parenthesis), and since the
    languages are read when the apps are imported, the server did not start: a traceback, no sentence. Now such a
    catalogue is a problem like a missing message: the language is not offered, the check names the file."""
    from backend.core import catalogues

    monkeypatch.setenv(catalogues.LOCALE_DIRS_VARIABLE, str(_lab_language(tmp_path / "whole")))
    assert "fr" in catalogues.languages()
    monkeypatch.setenv(catalogues.LOCALE_DIRS_VARIABLE, str(_lab_language(tmp_path / "broken", broken=broken)))
    assert "fr" not in catalogues.languages()
    assert any(expected in problem for problem in catalogues.problems("dond", "fr")), catalogues.problems("dond", "fr")


def test_a_po_replaced_by_an_older_file_is_compiled_again(tmp_path):
    """A .po replaced by a file whose time is older than its .mo (unzipped from a translator's archive, copied with
    cp -p or rsync -t) kept the old .mo: the pages read the old translations (missing messages in English, a fixed
    placeholder still broken) while the check, reading the .po, said complete."""
    import gettext
    import os
    import shutil

    from backend.core import catalogues

    po = tmp_path / "de" / "LC_MESSAGES" / "dond.po"
    po.parent.mkdir(parents=True)
    shutil.copy(catalogues.po_path("dond", "de"), po)
    mo = catalogues.compile_po(po)
    compiled = mo.stat().st_mtime_ns
    po.write_text(po.read_text(encoding="utf-8").replace("Das Spiel ist vorbei.", "Schluss."), encoding="utf-8")
    os.utime(po, ns=(compiled - 10**10, compiled - 10**10))  # the translator's file: ten seconds older
    with catalogues.compile_po(po).open("rb") as handle:
        assert gettext.GNUTranslations(handle).pgettext("error_game_over", "The game is over.") == "Schluss."
