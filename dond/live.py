"""The Bargain page's live method: the person's move checked and stored, the LLM's turns streamed back, and the
partner checks of person-vs-person games. Live messages per participant are limited before oTree, by the server's
one budget (lab_server/budgets.py, session key live_messages_per_minute)."""

import logging
import time
import types

from backend import dond
from backend.core import clock
from backend.core.llm import LLMSettings, costs, start_stream
from backend.core.stored_text import storable
from backend.dond import game as dond_game
from backend.dond import integrity as dond_integrity
from backend.dond import partner as dond_partner
from backend.dond import play as dond_play
from lab_server import otree_internals
from study_flow import spending

from . import takeover
from .storage import (
    config_of,
    events_of,
    instance_of,
    llm_role,
    llm_view_of,
    partner_of,
    protocol_of,
    settings_of,
    snapshot_for,
    store_event,
    write_judged,
)
from .texts import texts
from .views import page_text, payloads

logger = logging.getLogger("dond")
DELTA_INTERVAL_S = 0.05
STORED_ERROR_CHARS = 1000  # longest error text stored for a refused input


def rejected(player, game, error):
    text = page_text(game)
    kind = error.kind if isinstance(error, dond.MoveError) else "bad_request"
    message = text.get(f"error_{kind}", text["error_bad_request"]).format(limit=game.max_message_chars)
    # Clipped: the error can quote the forged input, which must not grow the game's rows (re-read every live call).
    detail = storable(str(error)[:STORED_ERROR_CHARS])
    store_event(game, dict(kind="input_rejected", role=player.game_role, actor="human", error_kind=kind, error=detail))
    return {player.id_in_group: {"type": "rejected", "message": message}}


def human_move(player, game, data, events):
    """Validate and store a person's message or proposal (appended to ``events``); returns the error payload or None."""
    instance = instance_of(game)
    state, _ = dond_integrity.replay_checked(events, config_of(game), counts=instance.counts)  # the readable part
    base = dict(role=player.game_role, actor="human", created_at=clock.now())
    try:
        if data.get("type") == "message":
            if not isinstance(data.get("text"), str):
                raise ValueError("A message must be text.")  # a bad request, not a badly written proposal
            if storable(data["text"]) != data["text"]:  # NUL or a lone surrogate: no keyboard types them
                raise ValueError("A message must not contain NUL or unpaired surrogate characters.")
            event = dict(base, kind="message", text=data["text"])
        else:
            counts = dond.check_proposal(data.get("counts"), instance)
            event = dict(base, kind="proposal", proposal=list(dond.proposal_vector(counts, instance)))
        dond_game.check_move(state, event)  # also: the opener proposes first when the messages run out
    except (dond.MoveError, ValueError) as error:
        return rejected(player, game, error)
    store_event(game, event)
    events.append(event)
    return None


def check_partner(player, game):
    """Person vs person: end the game when the partner left (no heartbeat) or let their turn time out."""
    partner = partner_of(player, game)
    events = events_of(game)
    state, _ = dond_integrity.replay_checked(events, config_of(game), counts=instance_of(game).counts)
    if partner is None or state.finished:
        return
    settings = settings_of(player.session)
    moves = [e["created_at"] or 0 for e in events if e["kind"] in dond_game.STATE_EVENTS]
    reason = dond_partner.gone_reason(
        now=clock.now(),
        partner_owes=partner.game_role in state.to_act and player.game_role not in state.to_act,
        partner_seen=partner.last_seen or game.created_at,
        partner_could_act=partner.live_since or None,
        last_move=max(moves, default=None),
        disconnect_timeout_s=settings.disconnect_timeout_s,
        turn_timeout_s=settings.turn_timeout_s,
    )
    if reason is None:
        return
    takeover.partner_gone(player, game, partner, reason)  # ends the game, or a model takes over (partner_leaves)


async def live_bargain(player, data):
    """Messages and proposals of the person; the LLM's turns stream back (async: other people are never blocked)."""
    try:
        async for payload in bargain_steps(player, data):
            yield payload
    except Exception:  # an answer must reach the browser, never a silent failure
        logger.exception("dond live method failed")
        message = texts(settings_of(player.session).language)["error_server"]
        yield {player.id_in_group: {"type": "rejected", "message": message}}


def first_step(player, data):
    """The synchronous part of a live message: the person's move checked and stored, the answer to send back, and
    the (game, seat, events) with which the LLM may act next (None when it may not)."""
    game = snapshot_for(player)
    if game is None:
        return None, None
    # This participant's lock serialises its live calls, so this list stays in step with the stored rows.
    events = events_of(game)
    seat = types.SimpleNamespace(id_in_group=player.id_in_group, game_role=player.game_role)
    kind = data.get("type") if isinstance(data, dict) else None
    if kind in ("message", "proposal"):
        if refused := takeover.taken_over_refusal(seat, events, data):
            return rejected(seat, game, refused), None
        error = human_move(seat, game, data, events)
        if error:
            return error, None
    elif kind not in ("load", "ping"):
        return rejected(seat, game, ValueError(f"unknown message type {kind!r}")), None
    if not player.live_since:  # the page connected: from now on this person can act (and the model is asked)
        player.live_since = clock.now()
        otree_internals.db.commit()
    if game.opponent == "human":
        player.last_seen = clock.now()
        otree_internals.db.commit()
        check_partner(player, game)
        events = events_of(game)
        if takeover.model_role(events) in (None, player.game_role):  # no model plays the other seat
            return payloads(player, game, events, both=True), None
    kept, problems = dond_integrity.checked_events(events, config_of(game), counts=instance_of(game).counts)
    # A history that should not exist (dond_games' integrity column): the model, whose rules are strict, plays on
    # its readable part, so the person is never stuck on a server error.
    # One tolerant reading of the game per message: the answer's view and the model's turn both use it.
    return payloads(seat, game, events, readable=kept), (game, seat, list(kept) if problems else events)


async def bargain_steps(player, data):
    # oTree serves each page request in a worker thread, under its page lock, on the same database connection as
    # this live method. Every database step here holds that lock too, so neither side commits or rolls back the
    # other's half-done writes (under load, SQLite otherwise failed with "cannot start a transaction within a
    # transaction").
    page_lock = otree_internals.page_lock
    async with page_lock:
        answer, llm_may_act = first_step(player, data)
        llm_settings = LLMSettings.from_config(player.session.config)
        settings = settings_of(player.session)
        cap = spending.cap_of(player.session) if llm_may_act is not None else None  # from stored calls, first use
    if llm_may_act is None:
        if answer:
            yield answer
        return
    game, seat, events = llm_may_act
    unsaved = []

    def keep(event):
        unsaved.append(event)
        events.append(event)

    async def save():
        # Judged against the game as stored, under the lock: the page's time limit, the admin's advance or the
        # person's last proposal may have ended it while the model was answering. What it refused is kept apart as
        # late calls; this turn then goes on from the stored events, sees the end, and stops.
        if unsaved:
            async with page_lock:
                late = write_judged(game, unsaved)
                if late:
                    events[:] = events_of(game)
            unsaved.clear()

    turns = dond_play.llm_turns(
        load_events=lambda: events,
        store_event=keep,
        instance=instance_of(game),
        config=config_of(game),
        role=takeover.model_role(events) or llm_role(game),
        settings=llm_settings,
        call_model=dond_play.blocking_stream if settings.llm_blocking else start_stream,
        protocol=protocol_of(game),
        max_requests=settings.llm_requests_per_game,
        view=llm_view_of(game),
        spend=cap,  # the study's spending cap (llm_cost_cap): at it, no call is sent and the game ends
    )
    try:
        async for item in llm_steps(seat, game, events, turns, save, answer):
            yield item
    finally:
        await save()


async def llm_steps(seat, game, events, turns, save, answer):
    """The LLM's progress as payloads; each item's events are saved before it is shown.

    ``answer`` (the state after the person's move, which shows the LLM typing) is sent when the LLM's turn has
    started, so the model's request is already on its way while it travels. Every send is a turn of the event
    loop that all participants share; the pieces of a reply go out at most every DELTA_INTERVAL_S, and those still
    held back when the reply is stored are not sent at all: the state that follows holds the whole message.
    """
    pending, flushed = "", 0.0
    async for item in turns:
        await save()
        if item["type"] == "typing":
            if answer:
                yield answer
                answer = None
            continue
        if item["type"] == "delta":
            pending += item["text"]
            if time.monotonic() - flushed >= DELTA_INTERVAL_S:
                yield {seat.id_in_group: {"type": "delta", "text": pending}}
                pending, flushed = "", time.monotonic()
            continue
        pending, answer = "", None  # the state below shows the stored event and supersedes both
        yield payloads(seat, game, events)
    if answer:  # the LLM did not act (not its turn, or the game is over)
        yield answer


def stored_calls(session):
    """The session's stored model calls (its games' ``llm_call`` events), for its spending cap and Study status."""
    from . import Subsession
    from .exports import games_rows

    subsessions = [subsession for subsession in session.get_subsessions() if isinstance(subsession, Subsession)]
    for _, events in games_rows(subsessions):
        for event in events:
            if event.get("kind") == "llm_call" and event.get("llm_error_kind") not in costs.NOT_SENT:
                yield event.get("model"), event.get("prompt_tokens"), event.get("completion_tokens")


def planned_calls(config):
    """The launch check's stated defaults for one place of a dond session with a model opponent."""
    from backend.core.llm import reply_budget
    from backend.dond.settings import dond_settings

    settings = dond_settings(config)
    if settings.opponent != "llm":
        return 0, 0, 0, "two people play: the model is called only when it takes over a seat"
    calls = settings.max_messages + 1 + (settings.max_messages + 1) * settings.llm_probe_external
    calls += (settings.max_messages + 1) * (settings.llm_protocol == "notes")
    why = (
        "the model's messages and its proposal, with a note and a probe per turn where asked; prompts of about "
        f"{PROMPT_TOKENS_STATED} tokens, replies at their max_tokens budget (an upper bound)"
    )
    return calls, PROMPT_TOKENS_STATED, reply_budget(settings.max_message_chars), why


PROMPT_TOKENS_STATED = 1500  # the opening prompt's rules, items and values, and the chat so far (a round figure)
spending.register_stored_calls("dond", stored_calls, planned_calls)
