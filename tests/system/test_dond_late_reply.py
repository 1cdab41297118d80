"""Issue 23, finding 1, from outside: a model reply that arrives after the game ended never breaks the game, a page or
an export, on ``otree prodserver`` in production mode.

- The reported attack: ``dond_llm`` with ``game_timeout_s=30``; the person writes 4 s before the time limit; the
  model (the fake server) answers 12 s later; the page is submitted as a timeout, as the browser's timer does. The
  reply becomes a late call (``dond_late_calls``), never an event after the abort; the abort stays the model's
  failure (``llm_time_limit``, commit 3128365); every page and export answers 200.
- The admin's advance while a failing model call is in flight: the ``llm_error`` is a late call too.
- Rows corrupted by hand in the database (a move after the abort, an unknown kind, a proposal of invalid JSON, a row
  without a kind, a late call whose JSON is broken), read after a restart: every page and export of that session
  and of all sessions answers 200, the game is flagged in ``integrity``, the clean session's game is not.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import sqlalchemy
import websockets

from backend.core.llm.fake_server import Reply
from harness.participants import people
from harness.servers import (
    production_lab,
    run_async,
    start_server,
    uses_server_database,
)
from tests.support.admin import advance_slowest, logged_in
from tests.support.dond_integrity import dond_export, everything_loads
from tests.support.live import payload_of, receive

TIME_LIMIT_S = 30  # the smallest game_timeout_s allowed
WRITE_BEFORE_END_S = 4
REPLY_DELAY_S = 12


@pytest.fixture(scope="module")
def lab(_llm_server_instance):
    with production_lab(_llm_server_instance.base_url) as server:
        yield server


def test_a_reply_after_the_time_limit_is_a_late_call_and_every_page_and_export_works(lab, llm_server):
    llm_server.responder = lambda request: Reply(text="Let us share: I would like the books.", delay_s=REPLY_DELAY_S)
    config = dict(llm_model="slow-model", first_mover="human", game_timeout_s=TIME_LIMIT_S, llm_timeout_s=60)
    [person] = people(lab.url, "dond_llm", 1, **config)
    person.advance_to("Bargain")
    shown = time.monotonic()
    frames = []

    async def attack():
        async with websockets.connect(person.live_url(), max_size=None, open_timeout=30) as socket:
            await asyncio.sleep(TIME_LIMIT_S - WRITE_BEFORE_END_S - (time.monotonic() - shown))
            await socket.send(json.dumps({"type": "message", "text": "Which items matter most to you?"}))
            frames.append(await receive(socket))  # my message, stored; the model is typing
            await asyncio.sleep(TIME_LIMIT_S + 0.5 - (time.monotonic() - shown))
            await asyncio.to_thread(person.submit, {"timeout_happened": "True"})  # the page's timer posts the form
            assert person.page == "Results", person.url
            while True:  # the model's reply arrives on the old page's socket, after the end
                frames.append(await receive(socket, timeout_s=REPLY_DELAY_S + 10))
                if payload_of(frames[-1]).get("type") == "state":
                    return

    run_async(attack())
    assert all(payload_of(frame).get("type") != "rejected" for frame in frames), frames  # nothing wrong, to the page
    last = payload_of(frames[-1])
    assert last["finished"] and not any(item.get("who") == "other" for item in last["chat"]), last

    code = person.session_code
    exports = everything_loads(lab.url, logged_in(lab.url, lab.password), code, [person])
    [game] = exports["custom_export_dond_games"]
    assert game["outcome"] == "aborted" and game["abort_reason"] == "llm_time_limit", game  # the model owed the move
    assert game["integrity"] == "" and game["messages_b"] == "0", game
    events = exports["custom_export_dond_events"]
    assert [e["kind"] for e in events if e["role"] == "B" and e["kind"] != "llm_call"] == [], events
    assert events[-1]["kind"] == "abort", events[-1]
    late = exports["custom_export_dond_late_calls"]
    assert [(row["kind"], row["late_reason"]) for row in late] == [
        ("llm_call", "after_abort:llm_time_limit"),
        ("message", "after_abort:llm_time_limit"),
    ], late
    assert float(late[0]["latency_s"]) >= REPLY_DELAY_S and "books" in late[0]["llm_reply"], late[0]
    assert late[1]["text"] == "Let us share: I would like the books." and late[1]["participant_code"] == person.code
    assert "while the AI model was still to answer" in person.html  # the Results page as without the late reply


def test_a_failed_call_in_flight_at_the_admins_advance_is_a_late_call(lab, llm_server):
    """The Monitor's advance while the model's call is failing: the llm_error it ends in is late, never stored."""
    llm_server.responder = lambda request: Reply(status=500, delay_s=3)
    config = dict(llm_model="failing-model", first_mover="human", llm_max_retries=0)
    [person] = people(lab.url, "dond_llm", 1, **config)
    person.advance_to("Bargain")
    admin = logged_in(lab.url, lab.password)

    async def attack():
        async with websockets.connect(person.live_url(), max_size=None, open_timeout=30) as socket:
            await socket.send(json.dumps({"type": "message", "text": "Hello, shall we share?"}))
            await receive(socket)  # my message, stored; the model's call is on its way
            await asyncio.to_thread(advance_slowest, lab.url, admin, person.session_code)
            while payload_of(await receive(socket, timeout_s=20)).get("type") != "state":
                pass

    run_async(attack())
    exports = everything_loads(lab.url, admin, person.session_code, [person])
    [game] = exports["custom_export_dond_games"]
    assert game["abort_reason"] == "advanced_by_admin" and game["integrity"] == "" and game["llm_errors_b"] == "0"
    late = exports["custom_export_dond_late_calls"]
    assert [(row["kind"], row["late_reason"]) for row in late] == [
        ("llm_call", "after_abort:other"),
        ("llm_error", "after_abort:other"),
    ], late
    assert late[0]["llm_error_kind"] == "server_error" and float(late[0]["latency_s"]) >= 3, late[0]


def corrupt(url: str, game_id: int) -> None:
    """Insert, after the game's abort, the rows no writer makes any more, straight into the database."""
    rows = [
        dict(kind="message", role="B", actor="llm", text="a reply stored after the abort", proposal=None),
        dict(kind="shout", role="B", actor="llm", text="an unknown kind", proposal=None),
        dict(kind="proposal", role="A", actor="human", text="", proposal="[1, 0"),
        dict(kind=None, role=None, actor=None, text=None, proposal=None),
    ]
    engine = sqlalchemy.create_engine(url)
    with engine.begin() as connection:
        for row in rows:
            connection.execute(
                sqlalchemy.text(
                    "INSERT INTO dond_event (game_id, created_at, kind, role, actor, text, proposal)"
                    " VALUES (:game_id, :created_at, :kind, :role, :actor, :text, :proposal)"
                ),
                dict(row, game_id=game_id, created_at=time.time()),
            )
        connection.execute(
            sqlalchemy.text(
                "INSERT INTO dond_latecall (game_id, arrived_at, late_reason, kind, role, event_json)"
                " VALUES (:game_id, 1.5, 'after_abort:other', 'message', 'B', '{not json')"
            ),
            dict(game_id=game_id),
        )
    engine.dispose()


def game_id_of(url: str, session_code: str) -> int:
    engine = sqlalchemy.create_engine(url)
    with engine.connect() as connection:
        found = connection.execute(
            sqlalchemy.text(
                "SELECT g.id FROM dond_game g JOIN dond_subsession s ON g.subsession_id = s.id"
                " JOIN otree_session x ON s.session_id = x.id WHERE x.code = :code"
            ),
            dict(code=session_code),
        ).scalar()
    engine.dispose()
    return found


def test_rows_corrupted_by_hand_are_flagged_and_fail_no_page_and_no_export(lab, llm_server):
    broken, clean = (people(lab.url, "dond_llm", 1, llm_model="m", first_mover="human")[0] for _ in range(2))
    admin = logged_in(lab.url, lab.password)
    for person in (broken, clean):
        person.advance_to("Bargain")
        advance_slowest(lab.url, admin, person.session_code)  # the game ends early: the admin's advance
        assert person.reload().page == "Results", person.url
    database = lab.env["DATABASE_URL"] if uses_server_database(lab.env) else f"sqlite:///{lab.folder}/db.sqlite3"
    lab.stop()  # the server's caches hold the stored events; a restart reads the corrupted rows
    corrupt(database, game_id_of(database, broken.session_code))
    restarted = start_server(kind="prodserver", env=lab.env, folder=lab.folder)
    lab.url, lab.process, lab.log_path = restarted.url, restarted.process, restarted.log_path
    admin = logged_in(lab.url, lab.password)
    for person in (broken, clean):
        person.url = person.url.replace(person.server, lab.url)
        exports = everything_loads(lab.url, admin, person.session_code, [person])
        [game] = exports["custom_export_dond_games"]
        assert game["outcome"] == "aborted" and game["abort_reason"] == "advanced_by_admin", game
        if person is clean:
            assert game["integrity"] == "" and exports["custom_export_dond_late_calls"] == []
            continue
        problems = game["integrity"].split("; ")
        assert [p.split("@")[0] for p in problems] == [
            "event_after_end:message",
            "unknown_kind:shout",
            "event_after_end:proposal",
            "broken_row:None",
        ], problems
        flagged = [(e["kind"], e["integrity"]) for e in exports["custom_export_dond_events"] if e["integrity"]]
        assert flagged == [
            ("message", "event_after_end:message"),
            ("shout", "unknown_kind:shout"),
            ("proposal", "event_after_end:proposal"),
            ("", "broken_row:None"),
        ], flagged
        assert game["messages_b"] == "0"  # the late message counts nowhere
        [late] = exports["custom_export_dond_late_calls"]
        assert late["kind"] == "message" and late["text"] == "{not json", late
        transcripts = admin.get(f"{lab.url}/DondTranscripts/{person.session_code}", timeout=60).text
        assert "event_after_end:message" in transcripts
    everyone = dond_export(lab.url, "custom_export_dond_games")
    assert {broken.session_code, clean.session_code} <= {row["session_code"] for row in everyone}


def test_an_open_game_with_a_row_corrupted_by_hand_goes_on_where_the_model_plays(lab, llm_server):
    """The model's turn replays the stored history by strict rules; on a history with a broken row it plays on the
    readable part instead of failing every live message with a server error (the person would be stuck)."""
    llm_server.responder = lambda request: Reply(text="Fine: which items matter most to you?")
    [person] = people(lab.url, "dond_llm", 1, llm_model="m", first_mover="human")
    person.advance_to("Bargain")
    database = lab.env["DATABASE_URL"] if uses_server_database(lab.env) else f"sqlite:///{lab.folder}/db.sqlite3"
    lab.stop()
    engine = sqlalchemy.create_engine(database)
    with engine.begin() as connection:
        connection.execute(
            sqlalchemy.text(
                "INSERT INTO dond_event (game_id, created_at, kind, role, actor, text, proposal)"
                " VALUES (:game_id, :created_at, 'proposal', 'A', 'human', '', NULL)"  # a proposal without counts
            ),
            dict(game_id=game_id_of(database, person.session_code), created_at=time.time()),
        )
    engine.dispose()
    restarted = start_server(kind="prodserver", env=lab.env, folder=lab.folder)
    lab.url, lab.process, lab.log_path = restarted.url, restarted.process, restarted.log_path
    person.url = person.url.replace(person.server, lab.url)

    def model_wrote(frame) -> bool:
        return any(item.get("who") == "other" for item in payload_of(frame).get("chat") or [])

    async def chat():
        async with websockets.connect(person.live_url(), max_size=None, open_timeout=30) as socket:
            await socket.send(json.dumps({"type": "message", "text": "Hello, what do you need?"}))
            frames = [await receive(socket, timeout_s=30)]
            while not model_wrote(frames[-1]):
                assert payload_of(frames[-1]).get("type") != "rejected", frames[-1]  # never a server error
                frames.append(await receive(socket, timeout_s=30))
            return frames

    frames = run_async(chat())
    assert model_wrote(frames[-1]), frames[-1]  # the model played on
    [game] = dond_export(lab.url, "custom_export_dond_games", person.session_code)
    assert game["integrity"].startswith("broken_row:proposal"), game
