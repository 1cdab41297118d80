"""The LLM layer: one way for every app and runner to ask a model, with a stored record of every call.

Modules: ``settings`` (LLMSettings, token budgets, runner options), ``client`` (the calls: retries, structured
output, endpoint quirks), ``reasoning`` (thinking kept apart from replies), ``records`` (CallRecord, TextDelta),
``replies`` (JSON objects in replies), ``fake_server`` (a scriptable OpenAI-compatible server for faults), ``costs``
(prices, estimates, spending caps), ``cache`` (a runner's opt-in response cache keyed by the full request).

- ``LLMSettings.from_config(session_config)`` reads ``llm_model``, ``llm_temperature``, ``llm_timeout_s``,
  ``llm_max_retries`` (and the environment: ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``LLM_MAX_CONCURRENCY``).
- Every request carries ``max_tokens``: pass the purpose's budget (``max_tokens=reply_budget(max_chars)``); the
  researcher's ``llm_max_tokens`` overrides it and ``llm_reasoning_tokens`` adds room for a reasoning model.
- ``response_schema=`` asks for JSON-schema structured output where the endpoint accepts it (``record.structured``).
- A reasoning model's thinking (``<think>`` blocks, ``reasoning_content``) lands in ``record.reasoning``, never in
  ``record.reply`` nor in streamed text.
- ``await complete(messages, settings, scripted=policy)`` returns a ``CallRecord``; it never raises for model
  failures (timeout, 429, 5xx, garbage, empty reply): the record's ``error`` says what happened.
- ``async for event in stream(...)`` yields ``TextDelta`` chunks as they arrive and finally one ``CallRecord``;
  ``start_stream(...)`` is the same call with its request sent at once, before the first item is asked for.
- The model name ``scripted`` runs the caller's deterministic policy (a function of the messages) with no network;
  its records say ``model='scripted'``, so scripted data is never passed off as an LLM's.
"""

from backend.core.llm.client import StartedStream, complete, forget_endpoint_quirks, start_stream, stream
from backend.core.llm.reasoning import split_reasoning
from backend.core.llm.records import CallRecord, TextDelta
from backend.core.llm.settings import LLMSettings, add_endpoint_options, reply_budget, settings_from_args

__all__ = [
    "CallRecord",
    "LLMSettings",
    "StartedStream",
    "TextDelta",
    "add_endpoint_options",
    "complete",
    "forget_endpoint_quirks",
    "reply_budget",
    "settings_from_args",
    "split_reasoning",
    "start_stream",
    "stream",
]
