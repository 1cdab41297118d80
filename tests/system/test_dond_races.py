"""Races, tested as races (issue 23): a hypothesis state machine interleaves, on one real prodserver in production
mode, for both protocols (plain; notes with the belief probe), the model's replies (with delays, failed calls the
client retries, garbage), the person's messages and proposals (each on its own socket, answered in the background,
so replies land while later steps run), reloads, a forged early timeout post and the admin's advance.

After every step: every page and export of the session answers 200 and the game's stored history replays without
a problem (``integrity`` empty: the writers never store a bad history); at the end, once every reply has landed,
every message the person was shown is stored as an event, and what arrived after the end is only in the late calls.
Bounded for CI (examples × steps below; about a minute).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import threading

import pytest
import websockets
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from backend.core.csvio import unescape_text
from backend.core.llm.fake_server import Reply
from backend.dond import demo_responder
from harness.participants import people
from harness.servers import base_env, deployment_mode, own_database, start_server
from tests.support import examples
from tests.support.admin import advance_slowest, logged_in
from tests.support.dond_integrity import dond_export, everything_loads
from tests.support.live import payload_of

DELAYS_S = (0.0, 1.0, 2.5)
UNPLANNED_DELAY_S = 0.5  # a call nobody planned (a note, a probe, a retry) still takes a moment
FAULTS = (None, None, "server_error", "garbage")
REPLY_WAIT_S = 20  # the longest a background conversation waits for the model (retries included)


class Model:
    """The fake server's responder: the demo player's answer, with the delay or fault the machine planned next."""

    def __init__(self):
        self.plans: collections.deque = collections.deque()
        self.lock = threading.Lock()

    def __call__(self, request: dict) -> Reply:
        with self.lock:
            delay_s, fault = self.plans.popleft() if self.plans else (UNPLANNED_DELAY_S, None)
        if fault == "server_error":
            return Reply(status=500, delay_s=delay_s)
        if fault == "garbage":
            return Reply(garbage='{"choices": [{"delta": ', delay_s=delay_s)
        return Reply(text=demo_responder.respond(request) or "Hello.", delay_s=delay_s, chunk_delay_s=0.01)


@pytest.fixture(scope="module")
def lab(_llm_server_instance):
    env = deployment_mode(
        base_env(OPENAI_BASE_URL=_llm_server_instance.base_url, OPENAI_API_KEY="sk-test-not-a-real-key")
    )
    with own_database(env) as env:
        server = start_server(kind="prodserver", env=env)
        server.admin = logged_in(server.url, env["OTREE_ADMIN_PASSWORD"])
        yield server
        server.stop()


class Races(RuleBasedStateMachine):
    lab = None
    model: Model = None

    @initialize(protocol=st.sampled_from(["plain", "notes"]), first_mover=st.sampled_from(["human", "llm"]))
    def start(self, protocol, first_mover):
        config = dict(llm_model="race-model", first_mover=first_mover, llm_protocol=protocol, llm_max_retries=1)
        if protocol == "notes":
            config["llm_probe_external"] = True
        [self.person] = people(self.lab.url, "dond_llm", 1, **config)
        self.person.advance_to("Bargain")
        self.live_url = self.person.live_url()
        self.seen: list[dict] = []  # every payload the person's sockets received
        self.talks: list[threading.Thread] = []
        self.sent = 0

    def talk(self, message: dict) -> None:
        """Send one live message on a socket of its own and keep listening in the background (a reply may come
        long after the steps that follow)."""

        async def conversation():
            async with websockets.connect(self.live_url, max_size=None, open_timeout=30) as socket:
                await socket.send(json.dumps(message))
                while True:
                    frame = json.loads(await asyncio.wait_for(socket.recv(), timeout=REPLY_WAIT_S))
                    payload = payload_of(frame)
                    self.seen.append(payload)
                    if payload.get("type") == "rejected" or (payload.get("type") == "state" and not payload["typing"]):
                        return

        def run():
            with contextlib.suppress(TimeoutError, websockets.ConnectionClosed):
                asyncio.run(conversation())

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        self.talks.append(thread)

    def plan(self, delay_s, fault):
        """How the model's next call goes (the calls after it: ``UNPLANNED_DELAY_S``, no fault)."""
        with self.model.lock:
            self.model.plans.append((delay_s, fault))

    @rule(delay_s=st.sampled_from(DELAYS_S), fault=st.sampled_from(FAULTS))
    def send_a_message(self, delay_s, fault):
        self.plan(delay_s, fault)
        self.sent += 1
        self.talk({"type": "message", "text": f"Message {self.sent}: which items matter most to you?"})

    @rule(counts=st.lists(st.integers(0, 4), min_size=3, max_size=3), delay_s=st.sampled_from(DELAYS_S))
    def propose(self, counts, delay_s):
        self.plan(delay_s, None)
        items = [item["id"] for item in self.person.js_vars()["items"]] if "/Bargain/" in self.person.url else []
        self.talk({"type": "proposal", "counts": dict(zip(items, counts, strict=False))})

    @rule(delay_s=st.sampled_from(DELAYS_S), fault=st.sampled_from(FAULTS))
    def load_the_page_state(self, delay_s, fault):  # the page's first message: the model opens when it is its turn
        self.plan(delay_s, fault)
        self.talk({"type": "load"})

    @rule()
    def reload(self):
        self.person.reload()

    @rule()
    def post_an_early_timeout(self):  # the worst participant: the timer's post before the timer ran out
        if "/Bargain/" in self.person.url:
            self.person.submit({"timeout_happened": "True"})

    @rule()
    def advance(self):  # the admin's "Advance slowest participants", whatever the model is doing
        advance_slowest(self.lab.url, self.lab.admin, self.person.session_code)

    @rule(delay_s=st.sampled_from(DELAYS_S[1:]), fault=st.sampled_from(FAULTS), pause_s=st.sampled_from((0.1, 0.6)))
    def advance_while_the_model_answers(self, delay_s, fault, pause_s):
        """The reported race, offered at every step: a move, then the admin's advance before the model answers."""
        self.send_a_message(delay_s, fault)
        threading.Event().wait(pause_s)
        self.advance()

    @rule(seconds=st.sampled_from((0.1, 0.5, 1.5)))
    def wait(self, seconds):
        threading.Event().wait(seconds)

    @invariant()
    def every_page_and_export_loads_and_the_game_replays(self):
        if not hasattr(self, "person"):
            return
        exports = everything_loads(self.lab.url, self.lab.admin, self.person.session_code, [self.person])
        [game] = exports["custom_export_dond_games"]
        assert game["integrity"] == "", game

    def teardown(self):
        if not hasattr(self, "person"):
            return
        for thread in self.talks:
            thread.join(REPLY_WAIT_S + 5)
        code = self.person.session_code
        exports = everything_loads(self.lab.url, self.lab.admin, code, [self.person])
        [game] = exports["custom_export_dond_games"]
        assert game["integrity"] == "", game
        stored = {unescape_text(e["text"]) for e in exports["custom_export_dond_events"] if e["kind"] == "message"}
        shown = {
            item["text"]
            for payload in self.seen
            if payload.get("type") == "state"
            for item in payload["chat"]
            if item.get("who") in ("me", "other")
        }
        assert shown <= stored, shown - stored  # nothing the person saw is missing from the game's events
        for late in exports["custom_export_dond_late_calls"]:
            assert late["late_reason"].startswith("after_"), late
            assert unescape_text(late["text"]) not in shown or late["kind"] != "message", late
        with self.model.lock:
            self.model.plans.clear()


def test_replies_timeouts_advances_and_reloads_interleaved_never_break_a_game(lab, _llm_server_instance):
    model = Model()
    _llm_server_instance.responder = model
    Races.lab, Races.model = lab, model
    run_state_machine_as_test(
        Races,
        settings=settings(
            max_examples=examples(6),
            stateful_step_count=8,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
    everyone = dond_export(lab.url, "custom_export_dond_games")  # all sessions at once, as admin → Data serves
    assert everyone and all(row["integrity"] == "" for row in everyone)
