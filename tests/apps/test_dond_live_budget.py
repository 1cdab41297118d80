"""DoND keeps no live-message limit of its own (issue 36: one rule for each limit): the server's budget
(lab_server/budgets.py) is the only one, and a DoND config that sets live_messages_per_minute is checked as the
shared key it now is (tests/system/test_live_budgets.py: the budget it sets, and its polite refusal)."""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets

from harness.dond_live_client import advance_all
from harness.servers import create_session, run_async

pytestmark = pytest.mark.slow


def test_the_dond_page_answers_every_message_the_servers_budget_lets_through(otree_server, llm_server):
    # The apps' test server allows 100,000 live messages a minute; DoND used to refuse more than 30 on its own.
    session = create_session(otree_server.url, "dond_llm", 1, llm_model="test-model", first_mover="human")
    [person] = advance_all(otree_server.url, session["code"])

    async def pings(count: int) -> list[str]:
        answers = []
        async with websockets.connect(person.live_url, open_timeout=60) as socket:
            for _ in range(count):
                await socket.send(json.dumps({"type": "ping"}))
            while len(answers) < count:
                payload = json.loads(await asyncio.wait_for(socket.recv(), 60)).get("live_method_payload") or {}
                if payload.get("type") in ("state", "rejected"):
                    answers.append(payload["type"])
        return answers

    assert run_async(pings(40)) == ["state"] * 40
