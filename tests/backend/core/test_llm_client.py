"""The LLM layer against a local OpenAI-compatible server, through the real `openai` client over loopback."""

from __future__ import annotations

import asyncio
import time

import pytest

from backend.core.llm import CallRecord, LLMSettings, StartedStream, TextDelta, complete, start_stream, stream
from backend.core.llm.fake_server import Reply
from harness.servers import run_async

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]


def settings_for(server, **overrides) -> LLMSettings:
    values = dict(model="test-model", base_url=server.base_url, timeout_s=2.0, max_retries=2, backoff_s=0.01)
    values.update(overrides)
    return LLMSettings(**values)


def collect(agen):
    async def run():
        return [item async for item in agen]

    return run_async(run())


def test_streamed_reply_arrives_in_pieces_and_is_recorded(llm_server):
    llm_server.script(Reply(text="Hello there, nice to meet you.", chunk_delay_s=0.02))
    items = collect(stream(MESSAGES, settings_for(llm_server)))
    deltas = [item.text for item in items if isinstance(item, TextDelta)]
    record = items[-1]
    assert isinstance(record, CallRecord) and record.ok
    assert len(deltas) == 6 and "".join(deltas) == "Hello there, nice to meet you."
    assert record.reply == "Hello there, nice to meet you."
    assert record.streamed and record.attempts == 1 and record.finish_reason == "stop"
    assert record.completion_tokens == 6 and record.prompt_tokens == 10
    assert llm_server.requests[-1]["messages"] == MESSAGES and llm_server.requests[-1]["model"] == "test-model"


def test_non_streamed_reply(llm_server):
    llm_server.script("Plain answer.")
    record = run_async(complete(MESSAGES, settings_for(llm_server)))
    assert record.ok and record.reply == "Plain answer." and not record.streamed
    assert record.latency_s > 0


def test_a_reply_with_unstorable_characters_comes_back_storable(llm_server):
    # PostgreSQL cannot store NUL, no driver a lone surrogate: a strange model's reply must not break its game.
    llm_server.script(Reply(text="Deal\x00 or\ud800 not.", chunk_delay_s=0.0), "Plain\x00.")
    streamed = collect(stream(MESSAGES, settings_for(llm_server)))[-1]
    plain = run_async(complete(MESSAGES, settings_for(llm_server)))
    assert streamed.reply == "Deal\ufffd or\ufffd not." and plain.reply == "Plain\ufffd."


def test_timeout_is_retried_then_recorded(llm_server):
    llm_server.script(*[Reply(text="late", delay_s=1.5)] * 2)
    started = time.monotonic()
    record = run_async(complete(MESSAGES, settings_for(llm_server, timeout_s=0.3, max_retries=1)))
    assert not record.ok and record.error_kind == "timeout" and record.attempts == 2
    assert record.reply == ""
    assert time.monotonic() - started < 1.5  # gave up by itself, did not wait for the server


def test_429_then_success_waits_retry_after(llm_server):
    llm_server.script(Reply(status=429, retry_after=0.3), "Finally.")
    started = time.monotonic()
    record = run_async(complete(MESSAGES, settings_for(llm_server)))
    assert record.ok and record.reply == "Finally." and record.attempts == 2
    assert time.monotonic() - started >= 0.3


def test_500_until_retry_budget_spent(llm_server):
    llm_server.script(*[Reply(status=500)] * 5)
    record = run_async(complete(MESSAGES, settings_for(llm_server, max_retries=2)))
    assert not record.ok and record.error_kind == "server_error" and record.attempts == 3
    assert "500" in record.error
    assert llm_server.pending == 2  # exactly 3 calls were made


def test_400_is_not_retried(llm_server):
    llm_server.script(Reply(status=400), "never asked")
    record = run_async(complete(MESSAGES, settings_for(llm_server)))
    assert record.error_kind == "http_error" and record.attempts == 1 and llm_server.pending == 1


@pytest.mark.parametrize("streamed", [True, False])
def test_empty_reply_is_an_error_after_retries(llm_server, streamed):
    llm_server.script(*[Reply(text="")] * 3)
    items = collect(stream(MESSAGES, settings_for(llm_server, max_retries=2), stream_reply=streamed))
    record = items[-1]
    assert record.error_kind == "empty_reply" and record.attempts == 3


def test_garbage_body_is_an_error_not_a_crash(llm_server):
    llm_server.script(*[Reply(garbage="<html>oops</html>")] * 3)
    record = run_async(complete(MESSAGES, settings_for(llm_server, max_retries=2)))
    assert not record.ok and record.error_kind == "bad_response" and record.attempts == 3


def test_garbage_then_good_reply_recovers(llm_server):
    llm_server.script(Reply(garbage='{"choices": "nope"}'), "Recovered.")
    record = run_async(complete(MESSAGES, settings_for(llm_server)))
    assert record.ok and record.reply == "Recovered." and record.attempts == 2


def test_stream_dropped_midway_keeps_the_partial_reply(llm_server):
    llm_server.script(Reply(text="one two three four five", drop_after_chunks=2))
    items = collect(stream(MESSAGES, settings_for(llm_server)))
    record = items[-1]
    assert [i.text for i in items[:-1]] == ["one ", "two "]
    assert record.error_kind == "interrupted" and record.reply == "one two " and record.attempts == 1


def test_stream_dropped_before_any_text_is_retried(llm_server):
    llm_server.script(Reply(text="lost", drop_after_chunks=0), "Second time lucky.")
    items = collect(stream(MESSAGES, settings_for(llm_server)))
    assert items[-1].ok and items[-1].reply == "Second time lucky." and items[-1].attempts == 2


def test_unreachable_endpoint_is_a_connection_error():
    settings = LLMSettings(model="m", base_url="http://127.0.0.1:9/v1", timeout_s=1, max_retries=1, backoff_s=0.01)
    record = run_async(complete(MESSAGES, settings))
    assert record.error_kind in {"connection", "timeout"} and record.attempts == 2


def test_missing_key_without_base_url_is_a_configuration_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    record = run_async(complete(MESSAGES, LLMSettings(model="gpt-x")))
    assert record.error_kind == "configuration" and "OPENAI_API_KEY" in record.error


def test_scripted_model_needs_no_network_and_is_labelled():
    items = collect(stream(MESSAGES, LLMSettings(), scripted=lambda messages: f"{len(messages)} messages seen"))
    record = items[-1]
    assert record.model == "scripted" and record.reply == "2 messages seen"
    assert "".join(i.text for i in items[:-1]) == "2 messages seen"


def test_scripted_policy_failure_is_recorded():
    def broken(messages):
        raise RuntimeError("bug in policy")

    record = run_async(complete(MESSAGES, LLMSettings(), scripted=broken))
    assert record.error_kind == "scripted_error" and "bug in policy" in record.error


def test_stream_that_stalls_midway_times_out_and_keeps_the_partial_reply(llm_server):
    llm_server.script(Reply(text="one two three", chunk_delay_s=2.0))
    started = time.monotonic()
    record = collect(stream(MESSAGES, settings_for(llm_server, timeout_s=0.4)))[-1]
    assert time.monotonic() - started < 1.8  # cut at the reply's deadline, not after the 4 s the pieces take
    assert record.error_kind == "interrupted" and "timeout" not in record.reply
    assert record.reply == "one " and record.attempts == 1


def test_started_stream_sends_its_request_before_it_is_iterated(llm_server):
    try:

        async def run():
            settings = settings_for(llm_server)
            # A first call in a fresh process (its client, its connection) takes longer than the wait below.
            assert (await complete(MESSAGES, settings)).ok
            llm_server.clear()
            llm_server.default_delay_s = 1.0
            lazy, started = stream(MESSAGES, settings), start_stream(MESSAGES, settings)
            await asyncio.sleep(0.8)  # the caller busy with something else
            arrived = len(llm_server.requests)
            began = time.monotonic()
            items = [item async for item in started]
            waited = time.monotonic() - began
            await lazy.aclose()
            return arrived, waited, items

        arrived, waited, items = run_async(run())
    finally:
        llm_server.default_delay_s = 0.0
    assert arrived == 1  # the started call's request only: the plain generator has sent nothing
    assert waited < 0.8  # its latency overlapped the caller's 0.8 s: a request sent only now would wait the whole 1 s
    assert items[-1].ok and "".join(item.text for item in items[:-1]) == items[-1].reply


def test_closing_a_started_stream_cancels_the_call(llm_server):
    llm_server.script(Reply(text="never read", delay_s=5.0))

    async def run():
        started = start_stream(MESSAGES, settings_for(llm_server, timeout_s=10.0))
        await asyncio.sleep(0.2)
        began = time.monotonic()
        await started.aclose()
        closing = time.monotonic() - began
        deadline = time.monotonic() + 2.0
        while llm_server.in_flight and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return closing, llm_server.in_flight, [item async for item in started]

    closing, in_flight, rest = run_async(run())
    assert closing < 1.0 and rest == []
    assert in_flight == 0  # the connection was closed: the endpoint stopped working on the call


def test_started_stream_raises_its_source_error_where_it_is_iterated():
    async def source():
        yield "first"
        raise ValueError("the source broke")

    async def run():
        received = []
        with pytest.raises(ValueError, match="the source broke"):
            async for item in StartedStream(source()):
                received.append(item)
        return received

    assert run_async(run()) == ["first"]


def test_concurrent_streams_overlap(llm_server):
    llm_server.default_delay_s = 0.5
    try:

        async def run():
            settings = settings_for(llm_server)
            return await asyncio.gather(*(complete(MESSAGES, settings) for _ in range(8)))

        started = time.monotonic()
        records = run_async(run())
        elapsed = time.monotonic() - started
    finally:
        llm_server.default_delay_s = 0.0
    assert all(record.ok for record in records)
    assert elapsed < 2.0, f"8 calls of 0.5 s took {elapsed:.2f} s: they did not run concurrently"
    assert llm_server.max_in_flight >= 4


def test_concurrency_cap_limits_calls_in_flight(llm_server, monkeypatch):
    monkeypatch.setenv("LLM_MAX_CONCURRENCY", "2")
    llm_server.default_delay_s = 0.2
    try:

        async def run():
            settings = settings_for(llm_server)
            return await asyncio.gather(*(complete(MESSAGES, settings) for _ in range(6)))

        records = run_async(run())
    finally:
        llm_server.default_delay_s = 0.0
    assert all(record.ok for record in records)
    assert llm_server.max_in_flight == 2


def test_settings_validation():
    with pytest.raises(ValueError, match="timeout"):
        LLMSettings(timeout_s=0)
    with pytest.raises(ValueError, match="retry budget"):
        LLMSettings(max_retries=-1)
    with pytest.raises(ValueError, match="temperature"):
        LLMSettings.from_config({"llm_temperature": 3})


def test_record_row_is_flat_and_holds_no_key(monkeypatch, llm_server):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-123")
    llm_server.script("ok")
    record = run_async(complete(MESSAGES, settings_for(llm_server)))
    row = record.as_row()
    assert isinstance(row["messages"], str) and "Say hello." in row["messages"]
    assert "sk-test-secret-123" not in repr(row)


# --- limits, reasoning models, structured output -------------------------------------------------------------------
def test_every_request_carries_a_token_limit(llm_server):
    llm_server.script("One.", "Two.", "Three.")
    run_async(complete(MESSAGES, settings_for(llm_server)))
    run_async(complete(MESSAGES, settings_for(llm_server), max_tokens=77))
    run_async(complete(MESSAGES, settings_for(llm_server, max_tokens=12, reasoning_tokens=500), max_tokens=77))
    assert [request["max_tokens"] for request in llm_server.requests] == [1024, 77, 512]


def test_an_endpoint_that_wants_max_completion_tokens_is_asked_with_it(llm_server):
    llm_server.require_max_completion_tokens = True
    llm_server.script("Fine.", "Again.")
    first = run_async(complete(MESSAGES, settings_for(llm_server), max_tokens=40))
    second = run_async(complete(MESSAGES, settings_for(llm_server), max_tokens=40))
    assert first.ok and first.reply == "Fine." and first.attempts == 2 and second.attempts == 1
    assert ["max_tokens" in r for r in llm_server.requests] == [True, False, False]
    assert [r.get("max_completion_tokens") for r in llm_server.requests] == [None, 40, 40]


@pytest.mark.parametrize("streamed", [True, False])
@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_separate_reasoning_is_kept_apart_from_the_reply(llm_server, streamed, field):
    llm_server.script(Reply(text="B", reasoning="Option A looks tempting. Answer: A", reasoning_field=field))
    items = collect(stream(MESSAGES, settings_for(llm_server), stream_reply=streamed))
    record = items[-1]
    assert record.ok and record.reply == "B" and record.reasoning == "Option A looks tempting. Answer: A"
    assert "".join(item.text for item in items if isinstance(item, TextDelta)) == ("B" if streamed else "")


@pytest.mark.parametrize("streamed", [True, False])
def test_think_blocks_in_the_content_never_reach_the_reply_or_the_stream(llm_server, streamed):
    llm_server.script(Reply(text="<think>They value hats. Say: [Proposal: 3 hats]</think>\n\nI would like the books."))
    items = collect(stream(MESSAGES, settings_for(llm_server), stream_reply=streamed))
    shown = "".join(item.text for item in items if isinstance(item, TextDelta))
    record = items[-1]
    assert record.reply == "I would like the books." and shown == (record.reply if streamed else "")
    assert record.reasoning == "They value hats. Say: [Proposal: 3 hats]"


def test_a_reply_cut_off_while_thinking_is_an_empty_reply_not_an_answer(llm_server):
    llm_server.script(*[Reply(text="<think>Let me weigh the options carefully and")] * 3)
    record = run_async(complete(MESSAGES, settings_for(llm_server, max_retries=2)))
    assert not record.ok and record.error_kind == "empty_reply" and record.reply == ""


def test_think_tag_split_across_stream_pieces():
    from backend.core.llm.reasoning import ReasoningSplitter

    text = "<think>plan: offer 2 balls</think>Hello, shall we split?"
    for size in range(1, 9):
        splitter = ReasoningSplitter()
        shown = "".join(splitter.feed(text[i : i + size]) for i in range(0, len(text), size)) + splitter.finish()
        assert (shown, splitter.reasoning) == ("Hello, shall we split?", "plan: offer 2 balls"), size


def test_a_closing_tag_without_opening_makes_what_came_before_reasoning(llm_server):
    llm_server.script(Reply(text="Hats are worth most to me. </think> Deal."))
    record = run_async(complete(MESSAGES, settings_for(llm_server)))
    assert record.reply == "Deal." and record.reasoning == "Hats are worth most to me."


SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def test_structured_output_sends_the_schema(llm_server):
    llm_server.script('{"answer": "A"}')
    record = run_async(complete(MESSAGES, settings_for(llm_server), response_schema=SCHEMA))
    sent = llm_server.requests[-1]["response_format"]
    assert record.structured is True and sent["type"] == "json_schema" and sent["json_schema"]["schema"] == SCHEMA


def test_a_refused_schema_is_dropped_and_remembered_for_that_endpoint(llm_server):
    llm_server.refuse_response_format = True
    llm_server.script('{"answer": "A"}', '{"answer": "B"}')
    first = run_async(complete(MESSAGES, settings_for(llm_server), response_schema=SCHEMA))
    second = run_async(complete(MESSAGES, settings_for(llm_server), response_schema=SCHEMA))
    assert first.ok and first.reply == '{"answer": "A"}' and first.structured is False
    assert second.ok and second.structured is False and second.attempts == 1
    shapes = [r.get("response_format", {}).get("type") for r in llm_server.requests]
    assert shapes == ["json_schema", "json_object", None, None]


def test_calls_in_flight_that_all_refuse_the_schema_move_on_one_shape_only(llm_server):
    def openai_shape_refused(request):
        if request.get("response_format", {}).get("type") == "json_schema":
            return Reply(status=400, delay_s=0.05, error_message="response_format json_schema is not supported")
        return '{"answer": "A"}'

    llm_server.responder = openai_shape_refused

    async def together():
        return await asyncio.gather(
            *(complete(MESSAGES, settings_for(llm_server), response_schema=SCHEMA) for _ in range(4))
        )

    records = run_async(together())
    assert all(record.ok and record.extra["response_format"] == "json_object" for record in records)
    later = run_async(complete(MESSAGES, settings_for(llm_server), response_schema=SCHEMA))
    assert later.extra["response_format"] == "json_object"  # not "none": four refusals of one shape are one


def test_a_server_error_naming_response_format_is_a_refusal_not_a_retry(llm_server):
    # llama-cpp-python answers an unknown response_format type with HTTP 500 naming it.
    def responder(request):
        if request.get("response_format", {}).get("type") == "json_schema":
            return Reply(status=500, text="")
        return '{"answer": "B"}'

    llm_server.responder = responder
    record = run_async(complete(MESSAGES, settings_for(llm_server, max_retries=0), response_schema=SCHEMA))
    assert not record.ok  # a bare 500 says nothing about the schema: a failure, as before

    from backend.core.llm.client import RetryableError, refused_option

    named = RetryableError("server_error", "failed", status=500, detail="'loc': ('body', 'response_format', 'type')")
    assert refused_option(named, {"response_format": {}}) == "response_format"
    assert refused_option(named, {}) is None
