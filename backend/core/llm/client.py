"""The only module that talks to a model provider (any OpenAI-compatible chat-completions endpoint).

Retries are ours, not the client's (``max_retries=0`` on ``AsyncOpenAI``) so that every attempt, its latency and its
error are recorded. A retry happens for timeouts, connection errors, HTTP 429 (waiting ``Retry-After`` when the
server sends it) and HTTP 5xx, with exponential backoff; other HTTP errors (400, 401, 404, ...) are final.

Every request carries a token limit: the researcher's ``llm_max_tokens`` when set, else the caller's budget for
its purpose (``max_tokens=``, see ``reply_budget``), else ``DEFAULT_MAX_TOKENS``; ``llm_reasoning_tokens`` is added
for reasoning models, whose thinking counts against the limit. An endpoint that wants ``max_completion_tokens``
instead (OpenAI's reasoning models) is asked again with it.

Reasoning is kept apart from the reply (``CallRecord.reasoning``): a ``reasoning_content`` or ``reasoning`` field
of the message or of the stream's deltas, and ``<think>…</think>`` or ``[THINK]…[/THINK]`` blocks in the content,
in any letter case (also a closing tag with no opening one, when the chat template opened the block). A streamed
reply never yields a block's text. A reply that starts inside a block the template opened can only be told at its
closing tag: with ``llm_reasoning_tokens`` set (a declared reasoning model), and for an endpoint once seen doing it,
nothing is streamed before the reply is complete; the first such reply of an undeclared endpoint may have been
shown as it came, and its record says so (``extra["reasoning_shown_while_streaming"]``).

``response_schema=`` asks for structured output: ``response_format`` of type ``json_schema`` (OpenAI's shape), then,
if the endpoint refuses it, ``json_object`` with a ``schema`` (llama-cpp-python's shape), then none. A refusal is
an error whose message names ``response_format``, ``json_schema`` or ``schema`` (any other failure is a failure,
and a 400 about the context length never switches the schema off); the call is made again at once in the next shape,
and later calls to that endpoint and model start there. ``CallRecord.structured`` says whether a schema went out,
``extra["response_format"]`` in which shape.
"""

from __future__ import annotations

import asyncio
import os
import time
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import backend.core.environment as environment
import backend.core.llm.cache as cache
import backend.core.llm.costs as costs
import backend.core.llm.wire as wire
from backend.core.llm.context import fitted_limit, forget_contexts
from backend.core.llm.reasoning import (
    ReasoningSplitter,
    reasoning_field,
    split_reasoning,
)
from backend.core.llm.records import CallRecord, TextDelta, fill_rerun_fields, note_served
from backend.core.llm.settings import (
    LLMSettings,
    ScriptedPolicy,
    endpoint_host,
)
from backend.core.llm.started import StartedStream
from backend.core.stored_text import storable

MAX_RETRY_AFTER_S = 30.0


class RetryableError(Exception):
    def __init__(
        self, kind: str, message: str, retry_after_s: float | None = None, status: int | None = None, detail: str = ""
    ):
        super().__init__(message)
        self.kind = kind
        self.retry_after_s = retry_after_s
        self.status = status
        self.detail = detail


class FinalError(Exception):
    def __init__(self, kind: str, message: str, status: int | None = None, detail: str = ""):
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.detail = detail  # the endpoint's own words, to tell a refused option from other refusals


# The shapes of structured output, tried in this order: the OpenAI shape (OpenAI, vLLM, Ollama, llama.cpp's own
# server), llama-cpp-python's shape (json_object with a schema), none.
SCHEMA_SHAPES = ("json_schema", "json_object")
# Per (base_url, model): how many schema shapes the endpoint refused, and whether it wants max_completion_tokens.
_refused_shapes: dict[tuple[str | None, str], int] = {}
_wants_completion_tokens: set[tuple[str | None, str]] = set()
# Endpoints whose replies start inside a thinking block the chat template opened: their text is never streamed.
_thinks_unopened: set[tuple[str | None, str]] = set()


def forget_endpoint_quirks() -> None:
    """Forget what endpoints refused or how they think (a test's server changes)."""
    _refused_shapes.clear()
    _wants_completion_tokens.clear()
    _thinks_unopened.clear()
    forget_contexts()


# Clients and one concurrency cap per event loop: httpx connection pools are bound to the loop that made them.
_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_caps: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def max_concurrency() -> int:
    """The global cap on concurrent model calls in this process (``LLM_MAX_CONCURRENCY``, `backend.core.environment`)."""
    return environment.variable("LLM_MAX_CONCURRENCY")


def _concurrency_cap() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    cap = _caps.get(loop)
    if cap is None:
        cap = _caps[loop] = asyncio.Semaphore(max_concurrency())
    return cap


def _client(settings: LLMSettings):
    from openai import AsyncOpenAI

    loop = asyncio.get_running_loop()
    per_loop = _clients.setdefault(loop, {})
    key = settings.base_url
    if key not in per_loop:
        # A local OpenAI-compatible server needs no key, but the client insists on one.
        api_key = os.environ.get("OPENAI_API_KEY") or ("no-key" if settings.base_url else None)
        if api_key is None:
            raise FinalError("configuration", "OPENAI_API_KEY is not set and no OPENAI_BASE_URL is configured.")
        per_loop[key] = wire.Clients(lambda: AsyncOpenAI(api_key=api_key, base_url=settings.base_url, max_retries=0))
    return per_loop[key].take()


def _classify(error: Exception) -> Exception:
    """Map an openai/httpx exception to a retryable or final error with a short kind."""
    import openai

    if isinstance(error, (RetryableError, FinalError)):
        return error
    if isinstance(error, (openai.APITimeoutError, asyncio.TimeoutError, TimeoutError)):
        return RetryableError("timeout", "The model did not answer in time.")
    if isinstance(error, openai.APIConnectionError):
        return RetryableError("connection", f"Could not reach the model endpoint: {type(error).__name__}.")
    if isinstance(error, openai.RateLimitError):
        return RetryableError("rate_limit", "The model endpoint is rate limiting (HTTP 429).", _retry_after(error))
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        if status >= 500:
            detail = str(getattr(error, "message", "") or error)[:500]
            return RetryableError(
                "server_error", f"The model endpoint failed (HTTP {status}).", _retry_after(error), status, detail
            )
        detail = str(getattr(error, "message", "") or error)[:500]
        return FinalError("http_error", f"The model endpoint refused the request (HTTP {status}).", status, detail)
    malformed = (openai.APIResponseValidationError, ValueError, KeyError, TypeError, AttributeError, IndexError)
    if isinstance(error, malformed):
        return RetryableError(
            "bad_response", f"The model endpoint sent a response we cannot read ({type(error).__name__})."
        )
    if isinstance(error, openai.APIError):
        return RetryableError("api_error", f"The model endpoint reported an error: {type(error).__name__}.")
    return FinalError("unexpected", f"{type(error).__name__}: {error}")


def _retry_after(error) -> float | None:
    try:
        value = error.response.headers.get("retry-after")
        return min(float(value), MAX_RETRY_AFTER_S) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def _request(
    messages: Sequence[Mapping[str, str]],
    settings: LLMSettings,
    options: Mapping[str, Any],
    *,
    limit: int,
    response_schema: Mapping[str, Any] | None,
) -> dict:
    request = dict(model=settings.model, messages=list(messages), temperature=settings.temperature)
    if settings.seed is not None:
        request["seed"] = settings.seed
    endpoint = (settings.base_url, settings.model)
    limit_key = "max_completion_tokens" if endpoint in _wants_completion_tokens else "max_tokens"
    request[limit_key] = limit
    refused = _refused_shapes.get(endpoint, 0)
    if response_schema is not None and refused < len(SCHEMA_SHAPES):
        if SCHEMA_SHAPES[refused] == "json_schema":
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": dict(response_schema), "strict": True},
            }
        else:
            request["response_format"] = {"type": "json_object", "schema": dict(response_schema)}
    request.update(options)
    return request


def refused_option(error: Exception, request: dict) -> str | None:
    """Which option of ``request`` a refusal is about (``response_format`` or ``max_tokens``), or None.

    An error whose message names ``response_format``, ``json_schema`` or ``schema`` on a request with a schema refuses
    the schema, whatever its status (llama-cpp-python reports its validation error as a 500)."""
    status, detail = getattr(error, "status", None), getattr(error, "detail", "").lower()
    if status is None:
        return None
    if "max_tokens" in request and "max_completion_tokens" in detail:
        return "max_tokens"
    names_schema = any(word in detail for word in ("response_format", "json_schema", "schema"))
    if "response_format" in request and names_schema:  # a 400 about the context or the model is no refusal
        return "response_format"
    return None


def _scripted_call(record: CallRecord, scripted: ScriptedPolicy | None, stream_reply: bool):
    """The scripted model's answer (no network): its pieces; ``record`` filled."""
    record.attempts = 1
    if scripted is None:
        record.error, record.error_kind = "No scripted policy was given for the scripted model.", "configuration"
        return
    try:
        reply = scripted(record.messages)
    except Exception as error:  # a policy bug must not strand the participant
        record.error, record.error_kind = f"{type(error).__name__}: {error}", "scripted_error"
        return
    for piece in _scripted_chunks(reply) if stream_reply else [reply]:
        yield TextDelta(piece)
    record.reply, record.finish_reason = reply, "stop"


def _scripted_chunks(text: str) -> list[str]:
    words = text.split(" ")
    return [word + (" " if index < len(words) - 1 else "") for index, word in enumerate(words)]


async def _attempt_stream(
    client, request: dict, settings: LLMSettings, record: CallRecord, splitter: ReasoningSplitter
) -> AsyncIterator[str]:
    """One streamed attempt: yields the visible text pieces (``splitter`` keeps the whole visible reply); fills
    usage, finish reason and reasoning on ``record``."""
    # asyncio.timeout, not wait_for: on Python 3.11 wait_for runs every awaited chunk in a task of its own, which
    # costs each piece extra turns of an event loop that, in oTree, every participant shares.
    async with asyncio.timeout(settings.timeout_s):
        response = await wire.open_stream(client, request)
    separate_reasoning: list[str] = []
    try:
        deadline = time.monotonic() + settings.timeout_s
        record.finish_reason = None
        chunks = 0
        iterator = wire.read_chunks(client, response)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RetryableError("timeout", "The model stopped sending before the reply was complete.")
            try:
                async with asyncio.timeout(remaining):
                    chunk = await iterator.__anext__()
            except StopAsyncIteration:
                break
            chunks += 1
            # A chunk is the endpoint's JSON: a field it leaves out is None, as on the client's objects, and a
            # chunk or choice that is no JSON object fails as there (AttributeError: bad_response).
            usage = chunk.get("usage")
            has_usage = isinstance(usage, dict) or bool(usage)  # the client made an object of any dict, even {}
            if chunks == 1 or has_usage:
                note_served(record, chunk)
            if has_usage:
                record.prompt_tokens = usage.get("prompt_tokens")
                record.completion_tokens = usage.get("completion_tokens")
            for choice in chunk.get("choices") or []:
                if finish_reason := choice.get("finish_reason"):
                    record.finish_reason = finish_reason
                delta = choice.get("delta")
                if thought := reasoning_field(delta):
                    separate_reasoning.append(storable(thought))
                piece = delta.get("content") if isinstance(delta, dict) else getattr(delta, "content", None)
                if piece and (visible := splitter.feed(storable(piece))):
                    yield visible
        if rest := splitter.finish():
            yield rest
        if not chunks:
            raise RetryableError("bad_response", "The model endpoint answered without a readable event stream.")
        if record.finish_reason is None:
            # The client treats a closed connection as the end of the stream; only a finish reason proves it.
            raise RetryableError("interrupted", "The stream ended before the model finished its reply.")
    finally:
        record.reasoning = ("".join(separate_reasoning) + splitter.reasoning).strip()
        if splitter.retracted:  # the template opened the block: from now on this endpoint's text is held
            _thinks_unopened.add((settings.base_url, settings.model))
            if not splitter.hold:  # text shown as it came turned out to be thinking: the record says so
                record.extra["reasoning_shown_while_streaming"] = True
        await iterator.aclose()
        await response.close()  # a stalled or abandoned stream frees its connection now, not when collected


async def _attempt_complete(client, request: dict, settings: LLMSettings, record: CallRecord) -> str:
    async with asyncio.timeout(settings.timeout_s):
        response = await wire.create(client, request)
    if not getattr(response, "choices", None):
        raise RetryableError("bad_response", "The model endpoint sent a response without choices.")
    choice = response.choices[0]
    record.finish_reason = choice.finish_reason
    note_served(record, response)
    if getattr(response, "usage", None):
        record.prompt_tokens = response.usage.prompt_tokens
        record.completion_tokens = response.usage.completion_tokens
    if getattr(choice, "logprobs", None) is not None:
        record.extra["logprobs"] = choice.logprobs.model_dump() if hasattr(choice.logprobs, "model_dump") else None
    visible, thought = split_reasoning(storable(choice.message.content or ""))
    record.reasoning = "\n\n".join(
        part for part in (storable(reasoning_field(choice.message)).strip(), thought) if part
    )
    return visible


async def stream(
    messages: Sequence[Mapping[str, str]],
    settings: LLMSettings,
    *,
    scripted: ScriptedPolicy | None = None,
    stream_reply: bool = True,
    max_tokens: int | None = None,
    response_schema: Mapping[str, Any] | None = None,
    spend: costs.SpendingCap | None = None,
    **options,
) -> AsyncIterator[TextDelta | CallRecord]:
    """Ask the model; yield ``TextDelta`` pieces as they arrive, then exactly one ``CallRecord`` (last item).

    ``max_tokens`` is the caller's budget for this purpose (``reply_budget``); ``response_schema`` a JSON schema
    the reply should follow where the endpoint accepts one (see the module doc for both).

    Failures never raise: the final record carries ``error`` and ``error_kind`` (``timeout``, ``rate_limit``,
    ``server_error``, ``connection``, ``bad_response``, ``empty_reply``, ``interrupted``, ``http_error``,
    ``configuration``, ``scripted_error``). A stream that breaks after text was shown is not retried (the person
    has seen it); its record has the partial reply and ``error_kind='interrupted'``. A reply that holds only
    reasoning is an ``empty_reply``.

    ``spend`` (else ``costs.SPENDING``) is a spending cap (``backend.core.llm.costs``): a call reserves before it is
    sent and settles when it ends; one it refuses is never sent (``error_kind='cost_cap'``), nor under
    ``costs.DRY_RUN`` (``dry_run``). The scripted model makes no paid call.
    """
    record = CallRecord(model=settings.model, messages=[dict(message) for message in messages], streamed=stream_reply)
    started = time.monotonic()
    if settings.is_scripted:
        for item in _scripted_call(record, scripted, stream_reply):
            yield item
        record.latency_s = time.monotonic() - started
        yield record
        return
    if costs.dry_run(record, settings.token_limit(max_tokens)):
        yield record
        return
    kept = cache.CACHE.get()
    if kept is not None:
        asked = _asked(messages, settings, options, settings.token_limit(max_tokens), response_schema)
        key = cache.request_key(asked)
        if kept.answer(key, record):  # nothing is sent, nothing reserved: it costs 0
            if record.reply:
                yield TextDelta(record.reply)
            record.streamed, record.latency_s = stream_reply, time.monotonic() - started
            yield record
            return
    limit = await fitted_limit(settings, messages, settings.token_limit(max_tokens))
    cap, held = costs.hold(record, limit, spend)
    if cap is not None and held is None:  # refused: nothing is sent
        record.latency_s = time.monotonic() - started
        yield record
        return
    try:
        async for item in _paid_call(record, messages, settings, options, limit, response_schema, stream_reply):
            yield item
    finally:
        if held is not None:
            cap.settle(held, record)
    if kept is not None:
        kept.keep(key, asked, record)  # a success only
    record.latency_s = time.monotonic() - started
    yield record


def _asked(messages, settings: LLMSettings, options, limit: int, response_schema) -> dict:
    """The request as the caller asks it, for the response cache's key (``cache.full_request``)."""
    return cache.full_request(
        settings.model,
        messages,
        temperature=settings.temperature,
        seed=settings.seed,
        max_tokens=limit,
        response_schema=response_schema,
        options=options,
        endpoint=endpoint_host(settings.base_url),
    )


async def _paid_call(record, messages, settings, options, limit, response_schema, stream_reply):
    """The attempts of one call to the endpoint (see ``stream``); yields the visible pieces, fills ``record``."""
    async with _concurrency_cap():
        while True:
            request = _request(messages, settings, options, limit=limit, response_schema=response_schema)
            record.max_tokens = request.get("max_tokens", request.get("max_completion_tokens"))
            fill_rerun_fields(record, request, endpoint_host(settings.base_url))
            if response_schema is not None:
                record.structured = "response_format" in request
                record.extra["response_format"] = request.get("response_format", {}).get("type", "none")
            record.attempts += 1
            pieces: list[str] = []
            try:
                with _client(settings) as client:
                    if stream_reply:
                        endpoint = (settings.base_url, settings.model)
                        hold = settings.reasoning_tokens > 0 or endpoint in _thinks_unopened
                        splitter = ReasoningSplitter(hold=hold)
                        async for piece in _attempt_stream(client, request, settings, record, splitter):
                            pieces.append(piece)
                            yield TextDelta(piece)
                        reply = splitter.visible.strip()
                    else:
                        reply = await _attempt_complete(client, request, settings, record)
                if not reply.strip():
                    raise RetryableError("empty_reply", "The model sent an empty reply.")
                record.reply, record.error, record.error_kind = reply, None, None
                break
            except Exception as raw_error:
                error = _classify(raw_error)
                record.error, record.error_kind = str(error), error.kind
                record.reply = "".join(pieces)
                refused = None if pieces else refused_option(error, request)
                if refused == "response_format":
                    # By the shape refused, not by counting: calls in flight at once refuse the same shape.
                    endpoint, sent = (settings.base_url, settings.model), request["response_format"]["type"]
                    _refused_shapes[endpoint] = max(_refused_shapes.get(endpoint, 0), SCHEMA_SHAPES.index(sent) + 1)
                    continue  # asked again at once, without the schema; not a retry of a failure
                if refused == "max_tokens" and (settings.base_url, settings.model) not in _wants_completion_tokens:
                    _wants_completion_tokens.add((settings.base_url, settings.model))
                    continue
                if pieces:
                    record.error_kind = "interrupted"
                    record.error = f"The reply broke off after {len(record.reply)} characters: {error}"
                    break
                if isinstance(error, FinalError) or record.attempts > settings.max_retries:
                    break
                wait = error.retry_after_s
                if wait is None:
                    wait = settings.backoff_s * 2 ** (record.attempts - 1)
                await asyncio.sleep(wait)


async def complete(
    messages: Sequence[Mapping[str, str]],
    settings: LLMSettings,
    *,
    scripted: ScriptedPolicy | None = None,
    max_tokens: int | None = None,
    response_schema: Mapping[str, Any] | None = None,
    spend: costs.SpendingCap | None = None,
    **options,
) -> CallRecord:
    """Ask the model without streaming and return the call's record (see ``stream``)."""
    record = None
    async for item in stream(
        messages,
        settings,
        scripted=scripted,
        stream_reply=False,
        max_tokens=max_tokens,
        response_schema=response_schema,
        spend=spend,
        **options,
    ):
        if isinstance(item, CallRecord):
            record = item
    return record


def start_stream(
    messages: Sequence[Mapping[str, str]],
    settings: LLMSettings,
    *,
    scripted: ScriptedPolicy | None = None,
    stream_reply: bool = True,
    max_tokens: int | None = None,
    **options,
) -> StartedStream:
    """``stream(...)`` set going at once: the request leaves in a task of the running loop, before the caller first
    asks for an item. Iterate it like ``stream``; ``aclose()`` cancels a call not yet finished.

    In a web server whose event loop every participant shares, the model's latency so overlaps the caller's own next
    step (showing the person's message, say) instead of adding to it.
    """
    return StartedStream(
        stream(messages, settings, scripted=scripted, stream_reply=stream_reply, max_tokens=max_tokens, **options)
    )
