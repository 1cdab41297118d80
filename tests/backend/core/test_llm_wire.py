"""The client's side of the wire (`backend.core.llm.wire`): what a streamed call costs the server, through the real
`openai` client against the local OpenAI-compatible server."""

from __future__ import annotations

import asyncio

import openai

from backend.core.llm import stream
from backend.core.llm.fake_server import Reply
from backend.core.llm.wire import CALLS_PER_POOL
from harness.servers import run_async
from tests.backend.core.test_llm_client import MESSAGES, collect, settings_for


def test_a_streamed_reply_is_read_without_the_clients_typed_chunks(llm_server, monkeypatch):
    # The client's stream builds its typed objects for every chunk (a sixth of a DoND exchange's server time).
    def refused(*args, **kwargs):
        raise AssertionError("the client's typed stream was built")

    monkeypatch.setattr(openai.AsyncStream, "__init__", refused)
    llm_server.script(Reply(text="Deal or no deal.", chunk_delay_s=0.0))
    record = collect(stream(MESSAGES, settings_for(llm_server)))[-1]
    assert record.ok and record.reply == "Deal or no deal." and record.finish_reason == "stop"


def test_calls_beyond_a_pools_share_at_once_open_another_client(llm_server, monkeypatch):
    # One pool scans all its connections whenever a request starts or ends: 100 calls on one pool cost O(100) each.
    made = []

    class Counted(openai.AsyncOpenAI):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(openai, "AsyncOpenAI", Counted)
    llm_server.default_delay_s = 0.5
    try:

        async def run():
            settings = settings_for(llm_server)
            calls = [collect_async(stream(MESSAGES, settings)) for _ in range(CALLS_PER_POOL + 4)]
            return await asyncio.gather(*calls)

        records = run_async(run())
    finally:
        llm_server.default_delay_s = 0.0
    assert all(items[-1].ok for items in records)
    assert llm_server.max_in_flight > CALLS_PER_POOL and len(made) == 2


async def collect_async(agen):
    return [item async for item in agen]
