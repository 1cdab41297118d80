"""An LLM's turns in a DoND game: ask the model, stream its reply, check it, store every step, re-prompt or abort.

Storage is the caller's (the oTree app writes database rows, a runner keeps lists): ``load_events()`` returns the
game's events so far and ``store_event(event)`` persists one event dict **before** it is reported. ``llm_turns``
is an async generator of progress items for the caller to show:

- ``{"type": "typing"}`` when a model call starts;
- ``{"type": "delta", "text": ...}`` for each streamed piece of a reply, cut at the first ``[`` so that a secret
  proposal never appears in the preview (the stored event decides what is finally shown);
- ``{"type": "event", "event": ...}`` after each stored state-changing event (message, proposal, violation,
  reprompt, abort).

A reply that breaks a rule (bad bracket, unknown item, over-asking, chat when a proposal is due, empty, too long)
is stored as a ``violation``; the model gets a ``reprompt`` saying what was wrong, up to ``llm_reprompts`` times in
a row, then the game is aborted (``llm_invalid: <kind>``). A failed call (after the client's own retries) counts
the same way, without a re-prompt text, and aborts as ``llm_error: <kind>``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from backend.dond import Instance, MoveError, parse_reply, proposal_vector
from backend.dond_game import (
    GameConfig,
    apply_event,
    llm_messages,
    replay,
    reprompt_text,
    scripted_policy,
)
from backend.llm import CallRecord, LLMSettings, TextDelta, complete, stream


async def blocking_stream(messages, settings, *, scripted=None, stream_reply=True, **options):
    """Benchmark only: the same model call made synchronously, so it blocks the event loop for its whole duration,
    as a synchronous live method would. It yields the ``CallRecord`` only (no streamed pieces)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        record = pool.submit(asyncio.run, complete(messages, settings, scripted=scripted, **options)).result()
    yield record


def call_event(role: str, record: CallRecord) -> dict[str, Any]:
    """The ``llm_call`` event of one model call (prompt, raw reply, latency, tokens, error)."""
    return {
        "kind": "llm_call",
        "role": role,
        "actor": "llm",
        "created_at": time.time(),
        "model": record.model,
        "llm_messages": json.dumps(record.messages, ensure_ascii=False),
        "llm_reply": record.reply,
        "latency_s": round(record.latency_s, 4),
        "prompt_tokens": record.prompt_tokens,
        "completion_tokens": record.completion_tokens,
        "attempts": record.attempts,
        "finish_reason": record.finish_reason,
        "llm_error_kind": record.error_kind,
        "error": record.error,
    }


def judge_reply(reply: str, events: list, role: str, instance: Instance, config: GameConfig) -> dict[str, Any]:
    """The event an LLM reply becomes: a ``message``, a ``proposal`` or a ``violation`` (with kind and reason)."""
    state = replay(events, config, counts=instance.counts)
    base = {"role": role, "actor": "llm", "created_at": time.time(), "text": reply}
    try:
        move = parse_reply(reply, instance, config.language, must_propose=state.must_propose(role))
        if move.kind == "proposal":
            event = {**base, "kind": "proposal", "proposal": list(proposal_vector(move.proposal, instance))}
        else:
            event = {**base, "kind": "message"}
        apply_event(state, event)  # turn rules and the length limit
    except MoveError as error:
        return {**base, "kind": "violation", "error_kind": error.kind, "error": str(error), "_error": error}
    return event


async def llm_turns(
    *,
    load_events: Callable[[], list],
    store_event: Callable[[dict[str, Any]], None],
    instance: Instance,
    config: GameConfig,
    role: str,
    settings: LLMSettings,
    stream_reply: bool = True,
    call_model: Callable[..., AsyncIterator[TextDelta | CallRecord]] = stream,
    **options: Any,
) -> AsyncIterator[dict[str, Any]]:
    """Let the LLM playing ``role`` act until it is not its turn any more or the game is over (see module doc).

    ``call_model`` is ``backend.llm.stream`` (or ``blocking_stream`` to measure what a blocking call costs).
    """
    while True:
        events = list(load_events())
        state = replay(events, config, counts=instance.counts)
        if state.finished or role not in state.to_act:
            return
        messages = llm_messages(events, role, instance, config)
        yield {"type": "typing"}
        record: CallRecord | None = None
        hidden = False
        async for item in call_model(
            messages,
            settings,
            scripted=scripted_policy(instance, role, state),
            stream_reply=stream_reply,
            **options,
        ):
            if isinstance(item, TextDelta):
                if hidden:
                    continue
                piece = item.text
                if "[" in piece:
                    piece, hidden = piece[: piece.index("[")], True
                if piece:
                    yield {"type": "delta", "text": piece}
            else:
                record = item
        store_event(call_event(role, record))
        if record.ok:
            event = judge_reply(record.reply, events, role, instance, config)
        else:
            event = {
                "kind": "violation",
                "role": role,
                "actor": "llm",
                "created_at": time.time(),
                "text": "",
                "error_kind": "llm_error",
                "error": f"{record.error_kind}: {record.error}",
            }
        error = event.pop("_error", None)
        store_event(event)
        yield {"type": "event", "event": event}
        if event["kind"] != "violation":
            continue
        after = replay([*events, event], config, counts=instance.counts)
        if after.reprompts_exhausted(role):
            reason = "llm_error" if error is None else "llm_invalid"
            abort = {
                "kind": "abort",
                "role": role,
                "actor": "system",
                "created_at": time.time(),
                "text": f"{reason}: {event['error_kind'] if error is not None else record.error_kind}",
            }
            store_event(abort)
            yield {"type": "event", "event": abort}
            return
        if error is not None:
            reprompt = {
                "kind": "reprompt",
                "role": role,
                "actor": "system",
                "created_at": time.time(),
                "text": reprompt_text(error, instance, config),
            }
            store_event(reprompt)
            yield {"type": "event", "event": reprompt}
