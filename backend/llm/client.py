"""The only module that talks to a model provider (any OpenAI-compatible chat-completions endpoint).

Retries are ours, not the client's (``max_retries=0`` on ``AsyncOpenAI``) so that every attempt, its latency and its
error are recorded. A retry happens for timeouts, connection errors, HTTP 429 (waiting ``Retry-After`` when the
server sends it) and HTTP 5xx, with exponential backoff; other HTTP errors (400, 401, 404, ...) are final.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import weakref
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from backend.stored_text import storable

SCRIPTED_MODEL = "scripted"
DEFAULT_MAX_CONCURRENCY = 32
MAX_RETRY_AFTER_S = 30.0

ScriptedPolicy = Callable[[list[dict[str, str]]], str]


@dataclass(frozen=True)
class LLMSettings:
    """How to call the model. Build it with ``from_config`` from a session config (or a runner's arguments).

    >>> settings = LLMSettings.from_config({"llm_model": "gpt-x", "llm_timeout_s": 5, "llm_max_retries": 1})
    >>> settings.model, settings.timeout_s, settings.max_retries, settings.is_scripted
    ('gpt-x', 5.0, 1, False)
    """

    model: str = SCRIPTED_MODEL
    temperature: float = 0.7
    timeout_s: float = 30.0
    max_retries: int = 2
    max_tokens: int | None = None
    backoff_s: float = 0.5
    base_url: str | None = None

    def __post_init__(self):
        if not self.model:
            raise ValueError("The model name (llm_model) must not be empty.")
        if self.timeout_s <= 0:
            raise ValueError(f"The timeout (llm_timeout_s) must be positive, got {self.timeout_s}.")
        if self.max_retries < 0:
            raise ValueError(f"The retry budget (llm_max_retries) must be 0 or more, got {self.max_retries}.")
        if not 0 <= self.temperature <= 2:
            raise ValueError(f"The temperature (llm_temperature) must be in [0, 2], got {self.temperature}.")

    @property
    def is_scripted(self) -> bool:
        return self.model == SCRIPTED_MODEL

    @classmethod
    def from_config(cls, config: Mapping[str, Any], **overrides) -> LLMSettings:
        values = dict(
            model=str(config.get("llm_model") or SCRIPTED_MODEL),
            temperature=float(config.get("llm_temperature", 0.7)),
            timeout_s=float(config.get("llm_timeout_s", 30.0)),
            max_retries=int(config.get("llm_max_retries", 2)),
            base_url=config.get("llm_base_url") or os.environ.get("OPENAI_BASE_URL") or None,
        )
        if config.get("llm_max_tokens"):
            values["max_tokens"] = int(config["llm_max_tokens"])
        values.update(overrides)
        return cls(**values)


@dataclass
class TextDelta:
    """A piece of a streamed reply, as it arrived."""

    text: str


@dataclass
class CallRecord:
    """Everything about one model call, for storage: what was asked, what came back, how long, what failed."""

    model: str
    messages: list[dict[str, str]]
    reply: str = ""
    latency_s: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None
    error_kind: str | None = None
    attempts: int = 0
    finish_reason: str | None = None
    streamed: bool = False
    started_at: float = field(default_factory=time.time)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_row(self) -> dict[str, Any]:
        """A flat dict for an ExtraModel or CSV row (messages and extra as JSON text)."""
        row = asdict(self)
        row["messages"] = json.dumps(self.messages, ensure_ascii=False)
        row["extra"] = json.dumps(self.extra, ensure_ascii=False)
        return row


class _RetryableError(Exception):
    def __init__(self, kind: str, message: str, retry_after_s: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.retry_after_s = retry_after_s


class _FinalError(Exception):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


# One client and one concurrency cap per event loop: httpx connection pools are bound to the loop that made them.
_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_caps: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def max_concurrency() -> int:
    """The global cap on concurrent model calls in this process (env ``LLM_MAX_CONCURRENCY``, default 32)."""
    raw = os.environ.get("LLM_MAX_CONCURRENCY", "")
    try:
        value = int(raw) if raw else DEFAULT_MAX_CONCURRENCY
    except ValueError as error:
        raise ValueError(f"LLM_MAX_CONCURRENCY must be a whole number, got {raw!r}.") from error
    if value < 1:
        raise ValueError(f"LLM_MAX_CONCURRENCY must be at least 1, got {value}.")
    return value


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
            raise _FinalError("configuration", "OPENAI_API_KEY is not set and no OPENAI_BASE_URL is configured.")
        per_loop[key] = AsyncOpenAI(api_key=api_key, base_url=settings.base_url, max_retries=0)
    return per_loop[key]


def _classify(error: Exception) -> Exception:
    """Map an openai/httpx exception to a retryable or final error with a short kind."""
    import openai

    if isinstance(error, (_RetryableError, _FinalError)):
        return error
    if isinstance(error, (openai.APITimeoutError, asyncio.TimeoutError, TimeoutError)):
        return _RetryableError("timeout", "The model did not answer in time.")
    if isinstance(error, openai.APIConnectionError):
        return _RetryableError("connection", f"Could not reach the model endpoint: {type(error).__name__}.")
    if isinstance(error, openai.RateLimitError):
        return _RetryableError("rate_limit", "The model endpoint is rate limiting (HTTP 429).", _retry_after(error))
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        if status >= 500:
            return _RetryableError("server_error", f"The model endpoint failed (HTTP {status}).", _retry_after(error))
        return _FinalError("http_error", f"The model endpoint refused the request (HTTP {status}).")
    malformed = (openai.APIResponseValidationError, ValueError, KeyError, TypeError, AttributeError, IndexError)
    if isinstance(error, malformed):
        return _RetryableError(
            "bad_response", f"The model endpoint sent a response we cannot read ({type(error).__name__})."
        )
    if isinstance(error, openai.APIError):
        return _RetryableError("api_error", f"The model endpoint reported an error: {type(error).__name__}.")
    return _FinalError("unexpected", f"{type(error).__name__}: {error}")


def _retry_after(error) -> float | None:
    try:
        value = error.response.headers.get("retry-after")
        return min(float(value), MAX_RETRY_AFTER_S) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def _request(messages: Sequence[Mapping[str, str]], settings: LLMSettings, options: Mapping[str, Any]) -> dict:
    request = dict(model=settings.model, messages=list(messages), temperature=settings.temperature)
    if settings.max_tokens:
        request["max_tokens"] = settings.max_tokens
    request.update(options)
    return request


def _scripted_chunks(text: str) -> list[str]:
    words = text.split(" ")
    return [word + (" " if index < len(words) - 1 else "") for index, word in enumerate(words)]


def _create(client, request: dict, **extra):
    """``chat.completions.create`` with the messages passed as ``extra_body``, which the client sends unchanged.

    Why: as a typed parameter, the client walks every message as a TypedDict before sending it, which cost about
    4 ms of CPU per call with a ten-message chat (measured with cProfile); our messages are plain JSON already.
    """
    options = {key: value for key, value in request.items() if key != "messages"}
    return client.chat.completions.create(**options, **extra, messages=[], extra_body={"messages": request["messages"]})


async def _attempt_stream(client, request: dict, settings: LLMSettings, record: CallRecord) -> AsyncIterator[str]:
    """One streamed attempt: yields text pieces; fills usage and finish reason on ``record``."""
    # asyncio.timeout, not wait_for: on Python 3.11 wait_for runs every awaited chunk in a task of its own, which
    # costs each piece extra turns of an event loop that, in oTree, every participant shares.
    async with asyncio.timeout(settings.timeout_s):
        response = await _create(client, request, stream=True, stream_options={"include_usage": True})
    try:
        deadline = time.monotonic() + settings.timeout_s
        record.finish_reason = None
        chunks = 0
        iterator = response.__aiter__()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _RetryableError("timeout", "The model stopped sending before the reply was complete.")
            try:
                async with asyncio.timeout(remaining):
                    chunk = await iterator.__anext__()
            except StopAsyncIteration:
                break
            chunks += 1
            if getattr(chunk, "usage", None):
                record.prompt_tokens = chunk.usage.prompt_tokens
                record.completion_tokens = chunk.usage.completion_tokens
            for choice in chunk.choices or []:
                if choice.finish_reason:
                    record.finish_reason = choice.finish_reason
                piece = getattr(choice.delta, "content", None)
                if piece:
                    yield storable(piece)
        if not chunks:
            raise _RetryableError("bad_response", "The model endpoint answered without a readable event stream.")
        if record.finish_reason is None:
            # The client treats a closed connection as the end of the stream; only a finish reason proves it.
            raise _RetryableError("interrupted", "The stream ended before the model finished its reply.")
    finally:
        await response.close()  # a stalled or abandoned stream frees its connection now, not when collected


async def _attempt_complete(client, request: dict, settings: LLMSettings, record: CallRecord) -> str:
    async with asyncio.timeout(settings.timeout_s):
        response = await _create(client, request)
    if not getattr(response, "choices", None):
        raise _RetryableError("bad_response", "The model endpoint sent a response without choices.")
    choice = response.choices[0]
    record.finish_reason = choice.finish_reason
    if getattr(response, "usage", None):
        record.prompt_tokens = response.usage.prompt_tokens
        record.completion_tokens = response.usage.completion_tokens
    if getattr(choice, "logprobs", None) is not None:
        record.extra["logprobs"] = choice.logprobs.model_dump() if hasattr(choice.logprobs, "model_dump") else None
    return storable(choice.message.content or "")


async def stream(
    messages: Sequence[Mapping[str, str]],
    settings: LLMSettings,
    *,
    scripted: ScriptedPolicy | None = None,
    stream_reply: bool = True,
    **options,
) -> AsyncIterator[TextDelta | CallRecord]:
    """Ask the model; yield ``TextDelta`` pieces as they arrive, then exactly one ``CallRecord`` (last item).

    Failures never raise: the final record carries ``error`` and ``error_kind`` (``timeout``, ``rate_limit``,
    ``server_error``, ``connection``, ``bad_response``, ``empty_reply``, ``interrupted``, ``http_error``,
    ``configuration``, ``scripted_error``). A stream that breaks after text was shown is not retried (the person
    has seen it); its record has the partial reply and ``error_kind='interrupted'``.
    """
    record = CallRecord(model=settings.model, messages=[dict(message) for message in messages], streamed=stream_reply)
    started = time.monotonic()
    if settings.is_scripted:
        record.attempts = 1
        if scripted is None:
            record.error, record.error_kind = "No scripted policy was given for the scripted model.", "configuration"
        else:
            try:
                reply = scripted(record.messages)
            except Exception as error:  # a policy bug must not strand the participant
                record.error, record.error_kind = f"{type(error).__name__}: {error}", "scripted_error"
            else:
                for piece in _scripted_chunks(reply) if stream_reply else [reply]:
                    yield TextDelta(piece)
                record.reply, record.finish_reason = reply, "stop"
        record.latency_s = time.monotonic() - started
        yield record
        return

    request = _request(messages, settings, options)
    async with _concurrency_cap():
        while True:
            record.attempts += 1
            pieces: list[str] = []
            try:
                client = _client(settings)
                if stream_reply:
                    async for piece in _attempt_stream(client, request, settings, record):
                        pieces.append(piece)
                        yield TextDelta(piece)
                    reply = "".join(pieces)
                else:
                    reply = await _attempt_complete(client, request, settings, record)
                if not reply.strip():
                    raise _RetryableError("empty_reply", "The model sent an empty reply.")
                record.reply, record.error, record.error_kind = reply, None, None
                break
            except Exception as raw_error:
                error = _classify(raw_error)
                record.error, record.error_kind = str(error), error.kind
                record.reply = "".join(pieces)
                if pieces:
                    record.error_kind = "interrupted"
                    record.error = f"The reply broke off after {len(record.reply)} characters: {error}"
                    break
                if isinstance(error, _FinalError) or record.attempts > settings.max_retries:
                    break
                wait = error.retry_after_s
                if wait is None:
                    wait = settings.backoff_s * 2 ** (record.attempts - 1)
                await asyncio.sleep(wait)
    record.latency_s = time.monotonic() - started
    yield record


async def complete(
    messages: Sequence[Mapping[str, str]],
    settings: LLMSettings,
    *,
    scripted: ScriptedPolicy | None = None,
    **options,
) -> CallRecord:
    """Ask the model without streaming and return the call's record (see ``stream`` for the error kinds)."""
    record = None
    async for item in stream(messages, settings, scripted=scripted, stream_reply=False, **options):
        if isinstance(item, CallRecord):
            record = item
    return record


def start_stream(
    messages: Sequence[Mapping[str, str]],
    settings: LLMSettings,
    *,
    scripted: ScriptedPolicy | None = None,
    stream_reply: bool = True,
    **options,
) -> StartedStream:
    """``stream(...)`` set going at once: the request leaves in a task of the running loop, before the caller first
    asks for an item. Iterate it like ``stream``; ``aclose()`` cancels a call not yet finished.

    Why: in a web server whose event loop every participant shares, an async generator that is only started after
    the caller's own next step (showing the person's message, say) waits for that step behind everybody else's
    work before its request even leaves; the model's latency then adds to that wait instead of overlapping it.
    """
    return StartedStream(stream(messages, settings, scripted=scripted, stream_reply=stream_reply, **options))


_STREAM_END = object()


class StartedStream:
    """An async iterator over the items of an async iterable that a task of the running loop consumes meanwhile."""

    def __init__(self, source: AsyncIterator[Any]):
        self._items: asyncio.Queue = asyncio.Queue()
        self._task = asyncio.ensure_future(self._pump(source))

    async def _pump(self, source: AsyncIterator[Any]) -> None:
        try:
            async for item in source:
                self._items.put_nowait(item)
        except Exception as error:  # handed to the reader, raised where it iterates
            self._items.put_nowait(_Raised(error))
        finally:
            self._items.put_nowait(_STREAM_END)

    def __aiter__(self) -> StartedStream:
        return self

    async def __anext__(self) -> Any:
        item = await self._items.get()
        if item is _STREAM_END:
            self._items.put_nowait(_STREAM_END)  # any later call ends too
            raise StopAsyncIteration
        if isinstance(item, _Raised):
            raise item.error
        return item

    async def aclose(self) -> None:
        """Cancel the call if it is still running and wait until it has stopped."""
        if not self._task.done():
            self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            if not self._task.cancelled():  # the caller itself is being cancelled
                raise


@dataclass
class _Raised:
    error: Exception
