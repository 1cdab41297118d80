"""An LLM's turns in a DoND game: ask the model, stream its reply, check it, store every step, re-prompt or abort.

Storage is the caller's (the oTree app writes database rows, a runner keeps lists): ``load_events()`` returns the
game's events so far and ``store_event(event)`` persists one event dict **before** it is reported. ``llm_turns``
is an async generator of progress items for the caller to show:

- ``{"type": "typing"}`` when a model turn starts (with a ``call_model`` such as ``start_stream``, its request is
  already on its way);
- ``{"type": "delta", "text": ...}`` for each streamed piece of a reply, cut at the first ``[`` so that a secret
  proposal never appears in the preview (the stored event decides what is finally shown);
- ``{"type": "event", "event": ...}`` after each stored state-changing event (message, proposal, violation, llm_error,
  reprompt, abort).

Who is asked is decided by ``GameState.to_act`` alone (clembench's order: when the messages run out, the opener is
asked first; a role that may not act now is not asked, even if it owes a proposal). The departures from clembench
below (re-prompts, retries of failed calls, the length limit, empty replies, the request budget) are those of
``backend.dond.departures``; a clembench-exact game (``GameConfig.clembench_exact``) has none of them.

A reply that breaks a rule (bad bracket, unknown item, over-asking, chat when a proposal is due, empty, too long)
is stored as a ``violation``; the model gets a ``reprompt`` saying what was wrong, up to ``llm_reprompts`` times in
a row, then the game is aborted (``llm_invalid: <kind>``). A failed call (after the client's own retries) is no
violation: the model never answered. It is stored as an ``llm_error`` event and the call is made again, without a
re-prompt, up to ``llm_reprompts`` times in a row; then the game aborts as ``llm_error: <kind>``. The client
counts an empty reply as a failed call (after its retries), so it is an ``llm_error`` too. With ``max_requests`` set, a player
whose model requests in this game reach it makes no further call: the game aborts as ``llm_budget``.

With ``protocol`` (``backend.dond.protocol.Protocol``) set to ``notes``, each turn of the model starts with a
private note call (stored as a ``note`` event with the turn number, never shown to the other player) whose text is
put into the prompt of the public reply; a re-prompt within the same turn keeps that note. With
``probe_external``, the external-belief probe of the turn is started at the same moment as a background task and
only awaited after the turn's public events were reported, so it never delays the person. Every ``llm_call`` event
carries its ``purpose`` (``note``, ``message``, ``probe``) and ``turn``.

Each purpose has its token budget from the game's own limits (``backend.core.llm.reply_budget``): a message
``max_message_chars``, a note ``backend.dond.protocol.note_chars``, a probe ``split_chars``. A reasoning model's
thinking is stored on the ``llm_call`` event (``llm_reasoning``), never judged as its move and never shown.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from backend.core.llm import CallRecord, LLMSettings, TextDelta, complete, reply_budget, stream
from backend.core.rate_limit import requests_used
from backend.dond.errors import EmptyMessageError, MoveError
from backend.dond.game import GameConfig, check_move, replay
from backend.dond.instances import Instance
from backend.dond.prompts import llm_messages, reprompt_text, scripted_policy
from backend.dond.proposals import Move, parse_reply, proposal_vector
from backend.dond.protocol import (
    PLAIN,
    Protocol,
    note_chars,
    note_messages,
    probe_messages,
    public_moves,
    reply_messages,
    scripted_note,
    scripted_probe,
    split_chars,
)
from backend.dond.treatments import NEUTRAL_VIEW, LLMView


async def blocking_stream(messages, settings, *, scripted=None, stream_reply=True, **options):
    """Benchmark only: the same model call made synchronously, so it blocks the event loop for its whole duration,
    as a synchronous live method would. It yields the ``CallRecord`` only (no streamed pieces)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        record = pool.submit(asyncio.run, complete(messages, settings, scripted=scripted, **options)).result()
    yield record


def call_event(role: str, record: CallRecord, *, purpose: str = "message", turn: int | None = None) -> dict[str, Any]:
    """The ``llm_call`` event of one model call (prompt, raw reply, latency, tokens, error, purpose, turn)."""
    return {
        "kind": "llm_call",
        "role": role,
        "actor": "llm",
        "created_at": time.time(),
        "purpose": purpose,
        "turn": turn,
        "model": record.model,
        "llm_messages": json.dumps(record.messages, ensure_ascii=False),
        "llm_reply": record.reply,
        "llm_reasoning": record.reasoning,
        # the reply began inside a thinking block its template opened, and was previewed before that could be told
        "reasoning_shown": bool(record.extra.get("reasoning_shown_while_streaming")),
        "max_tokens": record.max_tokens,
        "latency_s": round(record.latency_s, 4),
        "prompt_tokens": record.prompt_tokens,
        "completion_tokens": record.completion_tokens,
        "attempts": record.attempts,
        "finish_reason": record.finish_reason,
        "llm_error_kind": record.error_kind,
        "error": record.error,
        # answered by a runner's response cache (--cache): only then, as a live study never caches (its Event rows
        # have no such column)
        **({"llm_cached": True} if record.cached else {}),
    }


def system_event(kind: str, role: str, text: str) -> dict[str, Any]:
    """An event the game itself stores about ``role`` (an ``abort`` with its reason, a ``reprompt`` with its text).

    >>> event = system_event("abort", "B", "llm_invalid: format")
    >>> event["actor"], event["text"]
    ('system', 'llm_invalid: format')
    """
    return {"kind": kind, "role": role, "actor": "system", "created_at": time.time(), "text": text}


def judge_reply(reply: str, events: list, role: str, instance: Instance, config: GameConfig) -> dict[str, Any]:
    """The event an LLM reply becomes: a ``message``, a ``proposal`` or a ``violation`` (with kind and reason)."""
    state = replay(events, config, counts=instance.counts)
    base = {"role": role, "actor": "llm", "created_at": time.time(), "text": reply}
    try:
        try:
            move = parse_reply(reply, instance, config.language, must_propose=state.must_propose(role))
        except EmptyMessageError:
            if config.departs("empty_message"):
                raise
            move = Move("message", reply)  # clembench passes an empty message on
        if move.kind == "proposal":
            event = {**base, "kind": "proposal", "proposal": list(proposal_vector(move.proposal, instance))}
        else:
            event = {**base, "kind": "message"}
        check_move(state, event)  # turn rules, the order of the proposals and the length limit
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
    protocol: Protocol = PLAIN,
    max_requests: int | None = None,
    view: LLMView = NEUTRAL_VIEW,
    spend: Any = None,
    **options: Any,
) -> AsyncIterator[dict[str, Any]]:
    """Let the LLM playing ``role`` act until it is not its turn any more or the game is over (see module doc).

    ``call_model`` is ``backend.core.llm.stream``, ``backend.core.llm.start_stream`` (the request leaves at once) or
    ``blocking_stream`` (to measure what a blocking call costs).
    ``max_requests`` caps the model requests of ``role`` in this game (the attempts of its stored calls): when it is
    reached, no further call starts and the game is aborted (``llm_budget``). A call already started may still use
    its retries. ``view`` (``backend.dond.treatments.llm_view``) is the game's treatment as the model's prompt states it.
    ``spend`` is the study's spending cap (``backend.core.llm.costs.SpendingCap``; else the context's): a reply call
    it refuses is never sent, and the game ends as ``llm_cost_cap`` (paid as a model failure).
    """
    if max_requests is not None and (isinstance(max_requests, bool) or max_requests < 1):
        raise ValueError(f"max_requests must be a whole number of at least 1 (or None), got {max_requests!r}.")
    if not config.departs("request_budget"):
        max_requests = None
    probes: list[asyncio.Task] = []
    try:
        probed: set[int] = set()
        while True:
            events = list(load_events())
            state = replay(events, config, counts=instance.counts)
            if state.finished or role not in state.to_act:
                return
            # The budget is checked before every call this turn may make (probe, note, reply).
            if abort := _budget_abort(load_events, role, max_requests):
                store_event(abort)
                yield {"type": "event", "event": abort}
                return
            chat = llm_messages(events, role, instance, config, view)
            turn = public_moves(events, role)
            if protocol.probe_external and turn not in probed and _has(events, "probe", role, turn) is None:
                probed.add(turn)
                probes.append(
                    asyncio.create_task(_probe(chat, instance, config, role, turn, settings, store_event, spend))
                )
            if protocol.notes:
                yield {"type": "typing"}  # before the note call: the reply's prompt needs the note
            messages = chat
            if protocol.notes:
                note = _has(events, "note", role, turn)
                if note is None:
                    if abort := _budget_abort(load_events, role, max_requests):
                        store_event(abort)
                        yield {"type": "event", "event": abort}
                        return
                    note_record = await complete(
                        note_messages(chat, instance, config, protocol),
                        settings,
                        scripted=scripted_note(instance, role, config.language),
                        max_tokens=reply_budget(note_chars(instance, protocol)),
                        spend=spend,
                    )
                    store_event(call_event(role, note_record, purpose="note", turn=turn))
                    note = _aside_event("note", role, turn, note_record)
                    store_event(note)
                messages = reply_messages(
                    chat, _value(note, "text") or "", instance, config, protocol, must_propose=state.must_propose(role)
                )
            if protocol.notes and (abort := _budget_abort(load_events, role, max_requests)):
                store_event(abort)
                yield {"type": "event", "event": abort}
                return
            record: CallRecord | None = None
            hidden = False
            # Made before the typing item is reported, so that a call_model which sends its request at once
            # (``start_stream``) has it on its way while the caller shows that the model is typing.
            call = call_model(
                messages,
                settings,
                scripted=scripted_policy(instance, role, state),
                stream_reply=stream_reply,
                max_tokens=reply_budget(config.max_message_chars),
                **({"spend": spend} if spend is not None else {}),
                **options,
            )
            try:
                if not protocol.notes:
                    yield {"type": "typing"}
                async for item in call:
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
            finally:
                await call.aclose()
            store_event(call_event(role, record, purpose="message", turn=turn))
            if record.error_kind == "cost_cap":  # never sent: the study's money for model calls is spent
                abort = system_event("abort", role, "llm_cost_cap: the spending cap on model calls is reached")
                store_event(abort)
                yield {"type": "event", "event": abort}
                return
            empty_move = record.error_kind == "empty_reply" and not config.departs("empty_message")
            if not record.ok and not empty_move:
                failure = {
                    "kind": "llm_error",
                    "role": role,
                    "actor": "llm",
                    "created_at": time.time(),
                    "text": "",
                    "error_kind": record.error_kind,
                    "error": f"{record.error_kind}: {record.error}",
                }
                store_event(failure)
                yield {"type": "event", "event": failure}
                if replay([*events, failure], config, counts=instance.counts).failures_exhausted(role):
                    abort = system_event("abort", role, f"llm_error: {record.error_kind}")
                    store_event(abort)
                    yield {"type": "event", "event": abort}
                    return
                continue  # the same turn again: the model gets the same prompt, nothing was wrong with its answer
            event = judge_reply(record.reply or "", events, role, instance, config)
            error = event.pop("_error", None)
            store_event(event)
            yield {"type": "event", "event": event}
            if event["kind"] != "violation":
                continue
            after = replay([*events, event], config, counts=instance.counts)
            if after.reprompts_exhausted(role):
                abort = system_event("abort", role, f"llm_invalid: {event['error_kind']}")
                store_event(abort)
                yield {"type": "event", "event": abort}
                return
            if error is not None:
                reprompt = system_event("reprompt", role, reprompt_text(error, instance, config))
                store_event(reprompt)
                yield {"type": "event", "event": reprompt}
    finally:
        # The probes were started with their turns; they are awaited only now, after the person saw the reply.
        if probes:
            await asyncio.gather(*probes, return_exceptions=True)


def _aside_event(kind: str, role: str, turn: int, record: CallRecord) -> dict[str, Any]:
    """The ``note`` or ``probe`` event of one call: the raw reply, or the error when the call failed."""
    event = {"kind": kind, "role": role, "actor": "llm", "created_at": time.time(), "turn": turn, "text": record.reply}
    if not record.ok:
        event.update(text="", error_kind="llm_error", error=f"{record.error_kind}: {record.error}")
    return event


async def _probe(chat, instance, config, role, turn, settings, store_event, spend=None) -> None:
    record = await complete(
        probe_messages(chat, instance, config),
        settings,
        scripted=scripted_probe(instance, role, config.language),
        max_tokens=reply_budget(split_chars(instance)),
        spend=spend,
    )
    store_event(call_event(role, record, purpose="probe", turn=turn))
    store_event(_aside_event("probe", role, turn, record))


def _has(events, kind: str, role: str, turn: int):
    """The ``kind`` event (note or probe) of ``role`` for ``turn``, or None."""
    for event in events:
        if (
            _value(event, "kind") == kind
            and _value(event, "role") == role
            and _value(event, "turn") not in (None, "")
            and int(float(_value(event, "turn"))) == turn
        ):
            return event
    return None


def _value(event, key):
    return event.get(key) if isinstance(event, dict) else getattr(event, key, None)


def _budget_abort(load_events, role: str, max_requests: int | None) -> dict[str, Any] | None:
    """The ``llm_budget`` abort event once ``role`` has used ``max_requests`` model requests, else None."""
    if max_requests is None:
        return None
    used = requests_used(load_events(), role)
    if used < max_requests:
        return None
    text = f"llm_budget: {used} model requests used, the limit per game is {max_requests}"
    return system_event("abort", role, text)
