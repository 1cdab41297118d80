"""Token limits that fit the endpoint's context window.

A request's ``max_tokens`` (its purpose's budget, ``LLMSettings.token_limit``) must leave room for the prompt in the
model's context: the social annotator's default budget of 17,740 tokens alone exceeds an 8k context, and llama.cpp
then cuts the reply or refuses the call. The context size comes from, in this order:

1. the researcher: ``--context-tokens`` of every runner (``LLMSettings.context_tokens``);
2. the endpoint's own figure, asked once per endpoint (``endpoint_context``): llama.cpp's ``GET /props``
   (``default_generation_settings.n_ctx``, or ``n_ctx``), vLLM's ``GET /v1/models`` (``max_model_len``), or a
   ``/v1/models`` entry's ``meta.n_ctx`` / ``context_length``; llama.cpp's ``meta.n_ctx_train`` is the model's
   training context, not the server's, and is not used;
3. none: the budget is sent as it is (OpenAI and similar services refuse an oversized limit themselves).

The endpoint is asked only for a limit above ``PROBE_ABOVE_TOKENS`` (1,024; an annotator's or judge's budget), so
a short call (a chat turn, a letter) stays one request; once known, its figure applies to every call.

With a context of C tokens, the limit is ``min(budget, C - P - CONTEXT_MARGIN_TOKENS)``, never below
``MIN_REPLY_TOKENS``, where P estimates the prompt's tokens generously: ceil(characters / CHARS_PER_TOKEN) plus
``MESSAGE_OVERHEAD_TOKENS`` per message (the chat template's markers). Example: C = 8,192, a 6,000-character
prompt in two messages (P = 3,000 + 16 = 3,016) and the annotator's 17,740-token budget give
8,192 - 3,016 - 64 = 5,112 tokens.
"""

from __future__ import annotations

import asyncio
import json
import math
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from backend.core.llm.settings import CHARS_PER_TOKEN, LLMSettings

CONTEXT_MARGIN_TOKENS = 64  # room for the template's generation prompt and tokenizer differences
MESSAGE_OVERHEAD_TOKENS = 8  # role markers around each message
MIN_REPLY_TOKENS = 64  # a limit below this cannot hold an answer; the endpoint's own refusal says why
PROBE_TIMEOUT_S = 5.0
# A limit up to this many tokens is sent without asking the endpoint first (a chat turn, a letter, a JSON answer):
# it fits any context of 2,048 tokens or more beside a prompt of up to ~900 tokens, and the call stays one request.
PROBE_ABOVE_TOKENS = 1024

_known: dict[str, int | None] = {}  # endpoint base URL -> its context size (None: it reports none)


def forget_contexts() -> None:
    """Forget the endpoints' context sizes (a test's server changes)."""
    _known.clear()


def prompt_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """A generous estimate of a prompt's tokens (see the module doc).

    >>> prompt_tokens([{"role": "system", "content": "x" * 1000}, {"role": "user", "content": "y" * 5000}])
    3016
    """
    chars = sum(len(str(message.get("content") or "")) for message in messages)
    return math.ceil(chars / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS * len(messages)


def fit_limit(limit: int, messages: Sequence[Mapping[str, Any]], *, context_tokens: int | None) -> int:
    """``limit`` reduced to what the context leaves after the prompt (the module's rule).

    >>> prompt = [{"role": "system", "content": "x" * 1000}, {"role": "user", "content": "y" * 5000}]
    >>> fit_limit(17740, prompt, context_tokens=8192), fit_limit(300, prompt, context_tokens=8192)
    (5112, 300)
    >>> fit_limit(17740, prompt, context_tokens=None), fit_limit(17740, prompt, context_tokens=2048)
    (17740, 64)
    """
    if context_tokens is None:
        return limit
    room = context_tokens - prompt_tokens(messages) - CONTEXT_MARGIN_TOKENS
    return max(min(limit, room), MIN_REPLY_TOKENS)


def _root(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=PROBE_TIMEOUT_S) as response:  # noqa: S310 (the researcher's endpoint)
        return json.loads(response.read().decode("utf-8"))


def context_from_props(data: Any) -> int | None:
    """The context size in llama.cpp's ``/props`` answer.

    >>> context_from_props({"default_generation_settings": {"n_ctx": 8192}}), context_from_props({"n_ctx": 4096})
    (8192, 4096)
    """
    if not isinstance(data, Mapping):
        return None
    settings = data.get("default_generation_settings")
    for value in ((settings or {}).get("n_ctx") if isinstance(settings, Mapping) else None, data.get("n_ctx")):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def context_from_models(data: Any, model: str) -> int | None:
    """The context size in a ``/v1/models`` answer for ``model`` (or its only entry).

    >>> context_from_models({"data": [{"id": "m", "max_model_len": 32768}]}, "m")
    32768
    >>> context_from_models({"data": [{"id": "m", "meta": {"n_ctx_train": 8192}}]}, "m") is None
    True
    """
    entries = data.get("data") if isinstance(data, Mapping) else None
    if not isinstance(entries, list):
        return None
    entries = [entry for entry in entries if isinstance(entry, Mapping)]
    chosen = [entry for entry in entries if entry.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen:
        meta = entry.get("meta") if isinstance(entry.get("meta"), Mapping) else {}
        for value in (entry.get("max_model_len"), entry.get("context_length"), meta.get("n_ctx")):
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def _probe(base_url: str, model: str) -> int | None:
    for url, read in ((_root(base_url) + "/props", context_from_props), (base_url.rstrip("/") + "/models", None)):
        try:
            data = _get_json(url)
        except (OSError, ValueError):
            continue
        found = read(data) if read is not None else context_from_models(data, model)
        if found is not None:
            return found
    return None


async def context_tokens(settings: LLMSettings) -> int | None:
    """The context size for ``settings``: the researcher's ``context_tokens``, else the endpoint's own figure (asked
    once per endpoint, in a thread), else None."""
    if settings.context_tokens is not None:
        return settings.context_tokens
    if settings.is_scripted or not settings.base_url:
        return None
    if settings.base_url not in _known:
        _known[settings.base_url] = await asyncio.to_thread(_probe, settings.base_url, settings.model)
    return _known[settings.base_url]


async def fitted_limit(settings: LLMSettings, messages: Sequence[Mapping[str, Any]], limit: int) -> int:
    """The token limit of one request: ``limit`` cut to the context (``fit_limit``), the context known from the
    researcher, from an earlier answer of the endpoint, or asked now when ``limit`` exceeds ``PROBE_ABOVE_TOKENS``."""
    known = settings.context_tokens or _known.get(settings.base_url or "")
    if known is None and limit > PROBE_ABOVE_TOKENS:
        known = await context_tokens(settings)
    return fit_limit(limit, messages, context_tokens=known)
