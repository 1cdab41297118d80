"""How a model is called: ``LLMSettings`` from a session config or a runner's options, and token budgets.

A budget is never a constant out of nowhere: ``reply_budget(max_chars)`` = ceil(max_chars / CHARS_PER_TOKEN) + an
overhead, from the purpose's own character limit.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

SCRIPTED_MODEL = "scripted"
DEFAULT_MAX_TOKENS = 1024  # for a call whose caller states no budget of its own
CHARS_PER_TOKEN = 2  # a low bound for prose in en/de/it (about 4 in English): budgets never cut a reply short

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
    max_tokens: int | None = None  # overrides every purpose's budget
    reasoning_tokens: int = 0  # added to every budget: room for a reasoning model's thinking
    backoff_s: float = 0.5
    base_url: str | None = None
    context_tokens: int | None = None  # the model's context window; None: asked of the endpoint (llm.context)
    seed: int | None = None  # sent as the request's seed where set (providers may ignore it: the record says what came)

    def __post_init__(self):
        if not self.model:
            raise ValueError("The model name (llm_model) must not be empty.")
        if self.timeout_s <= 0:
            raise ValueError(f"The timeout (llm_timeout_s) must be positive, got {self.timeout_s}.")
        if self.max_retries < 0:
            raise ValueError(f"The retry budget (llm_max_retries) must be 0 or more, got {self.max_retries}.")
        if not 0 <= self.temperature <= 2:
            raise ValueError(f"The temperature (llm_temperature) must be in [0, 2], got {self.temperature}.")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"The token limit (llm_max_tokens) must be at least 1, got {self.max_tokens}.")
        if self.context_tokens is not None and self.context_tokens < 256:
            raise ValueError(f"The context size (llm_context_tokens) must be at least 256, got {self.context_tokens}.")
        if self.reasoning_tokens < 0:
            raise ValueError(
                f"The reasoning budget (llm_reasoning_tokens) must be 0 or more, got {self.reasoning_tokens}."
            )

    def token_limit(self, budget: int | None = None) -> int:
        """The ``max_tokens`` of a request whose purpose needs ``budget`` tokens (see the module doc).

        >>> LLMSettings().token_limit(300), LLMSettings(max_tokens=50, reasoning_tokens=1000).token_limit(300)
        (300, 1050)
        >>> LLMSettings().token_limit()
        1024
        """
        return (self.max_tokens or budget or DEFAULT_MAX_TOKENS) + self.reasoning_tokens

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
        if config.get("llm_reasoning_tokens"):
            values["reasoning_tokens"] = int(config["llm_reasoning_tokens"])
        if config.get("llm_context_tokens"):
            values["context_tokens"] = int(config["llm_context_tokens"])
        if config.get("llm_seed") not in (None, ""):
            values["seed"] = int(config["llm_seed"])
        values.update(overrides)
        return cls(**values)


def add_endpoint_options(parser, *, temperature: float = 0.7, timeout_s: float = 60.0) -> None:
    """The runners' options of every model call (argparse), one definition for all of them: ``--base-url``,
    ``--temperature``, ``--timeout``, ``--max-retries``, ``--max-tokens``, ``--reasoning-tokens``, ``--llm-seed`` and
    ``--context-tokens`` (``backend.core.llm.context``)."""
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL)")
    parser.add_argument("--temperature", type=float, default=temperature)
    parser.add_argument("--timeout", type=float, default=timeout_s, help="seconds per call")
    parser.add_argument("--max-retries", type=int, default=3, help="retries per call for timeouts, 429 and 5xx")

    def whole_number(minimum: int):
        def read(text: str) -> int:
            try:
                value = int(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
            if value < minimum:
                raise argparse.ArgumentTypeError(f"{value} is below {minimum}")
            return value

        return read

    parser.add_argument(
        "--max-tokens", type=whole_number(1), default=None, help="token limit of every call (overrides)"
    )
    parser.add_argument(
        "--reasoning-tokens", type=whole_number(0), default=0, help="extra tokens for a reasoning model's thinking"
    )
    parser.add_argument(
        "--llm-seed", type=int, default=None, help="sent as every request's seed (recorded; some providers ignore it)"
    )
    parser.add_argument(
        "--context-tokens",
        type=whole_number(256),
        default=None,
        help="the model's context window; token limits are cut to fit it (default: the endpoint's own figure, "
        "llama.cpp /props or /v1/models, where it reports one)",
    )


def settings_from_args(args, *, model: str) -> LLMSettings:
    """The ``LLMSettings`` of a runner's command line (``add_endpoint_options``), read as a session config is."""
    return LLMSettings.from_config(
        {
            "llm_model": model,
            "llm_temperature": args.temperature,
            "llm_timeout_s": args.timeout,
            "llm_max_retries": args.max_retries,
            "llm_base_url": args.base_url,
            "llm_max_tokens": args.max_tokens,
            "llm_reasoning_tokens": args.reasoning_tokens,
            "llm_context_tokens": getattr(args, "context_tokens", None),
            "llm_seed": getattr(args, "llm_seed", None),
        }
    )


def reply_budget(max_chars: int, *, overhead_tokens: int = 16) -> int:
    """The token budget of a reply of at most ``max_chars`` characters: ceil(max_chars / CHARS_PER_TOKEN) +
    ``overhead_tokens`` (markers, JSON punctuation). Generous by design: the budget stops a rambling model, the
    task's own rules judge the length.

    >>> reply_budget(500), reply_budget(0, overhead_tokens=40)
    (266, 40)
    """
    if max_chars < 0 or overhead_tokens < 0:
        raise ValueError(f"A reply budget needs non-negative sizes, got {max_chars} characters and {overhead_tokens}.")
    return -(-max_chars // CHARS_PER_TOKEN) + overhead_tokens


def endpoint_host(base_url: str | None) -> str:
    """Where calls go, as a record keeps it: scheme, host and port of ``base_url`` (never a key, user or path), or
    OpenAI's own endpoint when none is set.

    >>> endpoint_host("http://user:secret@127.0.0.1:8080/v1"), endpoint_host(None)
    ('http://127.0.0.1:8080', 'https://api.openai.com')
    """
    from urllib.parse import urlsplit

    if not base_url:
        return "https://api.openai.com"
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")


def who_plays(model: str, base_url: str | None) -> str:
    """The sentence the demo page shows of the model that plays the LLM roles: the offline scripted agent, or the
    model named by ``LLM_MODEL`` at ``OPENAI_BASE_URL`` (only its scheme, host and port: no credentials or path).

    >>> who_plays("scripted", None)
    'The model roles are played by the offline scripted agent (set LLM_MODEL and OPENAI_BASE_URL for a real model).'
    >>> who_plays("SmolLM2-360M", "http://user:secret@127.0.0.1:8080/v1")
    'The model roles are played by SmolLM2-360M at http://127.0.0.1:8080.'
    >>> who_plays("gpt-4o", "")
    "The model roles are played by gpt-4o at OpenAI's own endpoint."
    """
    from urllib.parse import urlsplit

    if model == SCRIPTED_MODEL:
        return (
            "The model roles are played by the offline scripted agent "
            "(set LLM_MODEL and OPENAI_BASE_URL for a real model)."
        )
    if not base_url:
        return f"The model roles are played by {model} at OpenAI's own endpoint."
    parts = urlsplit(base_url)
    where = f"{parts.scheme}://{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return f"The model roles are played by {model} at {where}."
