"""The LLM layer: one way for every app and runner to ask a model, with a stored record of every call.

- ``LLMSettings.from_config(session_config)`` reads ``llm_model``, ``llm_temperature``, ``llm_timeout_s``,
  ``llm_max_retries`` (and the environment: ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``LLM_MAX_CONCURRENCY``).
- ``await complete(messages, settings, scripted=policy)`` returns a ``CallRecord``; it never raises for model
  failures (timeout, 429, 5xx, garbage, empty reply): the record's ``error`` says what happened.
- ``async for event in stream(...)`` yields ``TextDelta`` chunks as they arrive and finally one ``CallRecord``;
  ``start_stream(...)`` is the same call with its request sent at once, before the first item is asked for.
- The model name ``scripted`` runs the caller's deterministic policy (a function of the messages) with no network;
  its records say ``model='scripted'``, so scripted data is never passed off as an LLM's.
"""

from backend.llm.client import (
    CallRecord,
    LLMSettings,
    StartedStream,
    TextDelta,
    complete,
    start_stream,
    stream,
)

__all__ = ["CallRecord", "LLMSettings", "StartedStream", "TextDelta", "complete", "start_stream", "stream"]
