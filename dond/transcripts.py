"""DoND for researchers: every game of a session as a readable transcript (the admin page ``/DondTranscripts/<session
code>``, served by ``lab_server/admin_pages.py``, template ``admin_transcripts.html``), and what the study status page
says about a dond participant (``participant_status``).

A transcript lists the game's events in order: who said what (role, person with PID or the model by name), the
secret proposals, every refused LLM reply, re-prompt, failed or retried model call, private note and belief probe
(marked as such), the end with both proposals, outcome, points and bonus, and the game's treatment keys when the
game row has them. Everything is plain text here; the template escapes all of it (PIDs and model text are
outside text).
"""

import dataclasses
import logging
import time

from backend.core.figures import inline_svg
from backend.dond import treatments
from backend.dond.figures import pareto_figure
from backend.dond.game import abort_reason_code
from backend.dond.integrity import replay_checked

from . import exports, storage, takeover

OUTCOME_TEXT = {
    "success": "deal: the proposals fit together",
    "lose": "no deal: the proposals ask for more than there is, both earn 0",
    "aborted": "aborted",
    "unfinished": "still running",
}
ABORT_TEXT = {
    "partner_left": "{by} left the game (their page sent nothing for the disconnect time)",
    "partner_timeout": "{by} stopped answering on their turn",
    "time_limit": "the game's time limit was reached",
    "llm_time_limit": "the game's time limit was reached while the model owed a move",
    "no_connection": "the game's time limit was reached and the person's page never connected (the model was never asked)",
    "llm_invalid": "the model broke the rules more often than the re-prompts allow",
    "llm_error": "the model could not be reached more often than the re-prompts allow",
    "llm_budget": "the model used up its call budget",
    "llm_cost_cap": "the study's spending cap on model calls was reached",
    "other": "ended by the system",
}
LEFT_TEXT = {  # the status page's words for the seat that left, and for the one left behind
    "partner_left": ("left the game: their page sent nothing for the disconnect time", "the other person left"),
    "partner_timeout": ("left the game: stopped answering on their turn", "the other person stopped answering"),
}
TIMED_OUT = ("time_limit", "llm_time_limit", "no_connection")
GAME_COLUMNS = ("mode", "language", "opponent", "model", "cell", "focal_role", "opener", "max_messages")
LLM_COLUMNS = ("llm_reprompts", "clembench_exact", "llm_protocol", "llm_word_limit")


def abort_text(code, *, by=""):
    """The transcript's words for an abort reason code; ``by`` names the seat that left (``A``, ``B``) for the
    partner reasons, so a reader sees who abandoned the game."""
    return ABORT_TEXT[code].format(by=f"player {by}" if by else "a player")


def treatment_keys():
    """The DoND treatment keys (``backend.dond.treatments.Treatment``'s fields)."""
    return tuple(field.name for field in dataclasses.fields(treatments.Treatment))


def items_text(vector, instance, language):
    """``2 belts, 1 drum`` for a proposal vector (``nothing`` when it asks for nothing)."""
    singulars, plurals = instance.singular(language), instance.plural(language)
    parts = [f"{n} {singulars[i] if n == 1 else plurals[i]}" for i, n in enumerate(vector) if n]
    return ", ".join(parts) or "nothing"


def _games_of(session):
    """The session's DoND games. Only dond's own subsessions are asked: oTree numbers each app's subsessions on its
    own, so ``Game.filter`` with another app's subsession would match the dond games of whichever session has that
    id."""
    from . import Game, Subsession

    subsessions = [subsession for subsession in session.get_subsessions() if isinstance(subsession, Subsession)]
    return [game for subsession in subsessions for game in Game.filter(subsession=subsession)]


def _participants_of(session):
    return {participant.code: participant for participant in session.get_participants()}


def who(game, role, people):
    """``A · person 5f3c…`` or ``B · model gpt-x`` (plain text)."""
    code = game.participant_a if role == "A" else game.participant_b
    if code:
        pid = people.get(role, {}).get("prolific_pid") or code
        return f"{role} · person {pid}"
    return f"{role} · model {game.model}"


def event_line(event, game, instance, people, started_at):
    """One event as the transcript shows it: ``at`` (seconds into the game), ``who``, ``kind`` (a CSS class), a
    ``label`` and the ``text``; None for events a reader need not see."""
    kind, role = str(event.get("kind") or ""), str(event.get("role") or "")  # a broken row shows as it is
    text = str(event.get("text") or "")
    created_at = event.get("created_at")
    at = f"+{max(0.0, created_at - started_at):.1f} s" if isinstance(created_at, (int, float)) else ""
    line = dict(at=at, who=who(game, role, people) if role else "system", kind=kind, label="", text=text)
    if event.get("actor") == "llm" and game.opponent == "human":  # a model plays this seat since a takeover
        line["who"] = f"{role} · model (took over)"
    if kind == "takeover":
        line["who"] = "system"
        line["label"] = (
            f"a model ({event.get('model') or ''}) takes over {role}: {abort_text(abort_reason_code(text), by=role)}"
        )
    elif kind == "message":
        line["label"] = "message"
    elif kind == "proposal":
        vector = event.get("proposal") or []
        readable = isinstance(vector, list) and len(vector) == len(instance.counts)
        line["label"] = "secret proposal: " + (
            items_text(vector, instance, game.language) if readable else "unreadable"
        )
    elif kind == "violation":
        line["label"] = f"refused reply ({event.get('error_kind') or 'rule'}): {event.get('error') or ''}".strip()
    elif kind == "reprompt":
        line["label"] = "re-prompt sent to the model"
    elif kind == "llm_error":
        line["label"] = f"model call failed ({event.get('llm_error_kind') or event.get('error_kind') or 'error'})"
        line["text"] = event.get("error") or text
    elif kind == "abort":
        code = abort_reason_code(text)
        line["label"] = f"game ended: {abort_text(code, by=role)}"
    elif kind == "note":
        line["label"] = "private note (never shown to the other player)"
    elif kind == "probe":
        line["label"] = "belief probe (never shown to the other player)"
    elif kind == "input_rejected":
        line["label"] = f"input refused ({event.get('error_kind') or ''}): {event.get('error') or ''}"
    elif kind == "llm_call":
        attempts = int(event.get("attempts") or 1)
        latency = float(event.get("latency_s") or 0)
        retried = f", retried: {attempts} attempts" if attempts > 1 else ""
        failed = f", failed: {event.get('llm_error_kind')}" if event.get("llm_error_kind") else ""
        line["label"] = f"model call ({event.get('purpose') or 'message'}): {latency:.2f} s{retried}{failed}"
        line["text"] = ""
        line["kind"] = "llm_call retried" if attempts > 1 or failed else "llm_call"
    else:
        line["label"] = kind or "event"
    return line


def transcript(game, events, participants):
    """One game for the transcripts page (plain text values)."""
    instance = storage.instance_of(game)
    config = storage.config_of(game)
    people = exports.people_of(game, participants)
    row = exports.game_row(game, events, people=people)
    state, _ = replay_checked(events, config, counts=instance.counts)
    language = game.language
    items = [
        dict(name=word, count=count, value_a=a, value_b=b)
        for word, count, a, b in zip(
            instance.singular(language), instance.counts, instance.values_a, instance.values_b, strict=True
        )
    ]
    proposals = {
        role: items_text(state.proposals[role], instance, language) if state.proposals[role] is not None else "none"
        for role in ("A", "B")
    }
    outcome = str(row.get("outcome") or "unfinished")
    outcome_text = OUTCOME_TEXT.get(outcome, outcome)
    if state.aborted:
        by = f" ({state.aborted_by})" if state.aborted_by else ""
        outcome_text = f"aborted{by}: {abort_text(abort_reason_code(state.abort_reason), by=state.aborted_by)}"
    columns = GAME_COLUMNS + (LLM_COLUMNS if game.opponent == "llm" else takeover.TAKEOVER_COLUMNS)
    settings = [dict(name=name, value=str(row.get(name, ""))) for name in columns]
    treatments = [dict(name=name, value=str(row[name])) for name in treatment_keys() if name in row]
    lines = [event_line(event, game, instance, people, game.created_at) for event in events]
    return dict(
        game_id=str(row["game_id"]),
        anchor=f"game-{game.number + 1}",
        players=[
            dict(
                role=role,
                who=who(game, role, people),
                proposal=proposals[role],
                points=str(row.get(f"points_{role.lower()}", "")),
            )
            for role in ("A", "B")
        ],
        settings=settings,
        treatments=treatments,
        item_rows=items,
        lines=[line for line in lines if line is not None],
        outcome=outcome,
        outcome_text=outcome_text,
        bonus_points=str(row.get("bonus_points", "")),
        pay_rule=str(row.get("pay_rule", "")),
        integrity=str(row.get("integrity", "")),
        started=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(game.created_at)),
        pareto_svg=inline_svg(pareto_figure(row)),  # the figure `report --figures --game` writes for this game
    )


def session_transcripts(session):
    """Every game of the session, in order."""
    participants = _participants_of(session)
    games = sorted(_games_of(session), key=lambda game: game.number)
    return [readable_transcript(game, participants) for game in games]


def readable_transcript(game, participants):
    """The game's transcript; if its events cannot be shown at all (what the tolerant reading does not foresee), the
    game without them, flagged ``unreadable_events:<error>``: one game never fails the page."""
    try:
        return transcript(game, storage.stored_events(game), participants)
    except Exception as error:  # noqa: BLE001  (the last defence; logged)
        logging.getLogger("dond").exception("dond transcripts: game %s could not be shown", game.id)
        return dict(transcript(game, [], participants), integrity=f"unreadable_events:{type(error).__name__}")


def participant_status(player):
    """What the study status page says about a dond player: ``status`` (``timed_out`` or None: the shared flow
    decides), ``detail`` (plain text) and ``last_active`` (epoch seconds of the person's last move, or None)."""
    from . import Game

    if player.is_unpaired:
        return dict(status="timed_out", detail="no partner found within the pairing time", last_active=None)
    if not player.game_id:
        waiting = "waiting for a partner" if player.pairing_started_at else ""
        return dict(status=None, detail=waiting, last_active=player.last_seen or None)
    found = Game.filter(subsession=player.subsession, id=player.game_id)
    if not found:
        return dict(status=None, detail="", last_active=None)
    game = found[0]
    events = storage.stored_events(game)
    instance = storage.instance_of(game)
    state, _ = replay_checked(events, storage.config_of(game), counts=instance.counts)
    own = [e.get("created_at") for e in events if e.get("role") == player.game_role and e.get("actor") == "human"]
    last_active = max((t for t in own if t), default=None)
    link = f"game {game.number + 1}"
    taken_over = takeover.model_role(events)
    if taken_over is not None or (state.aborted and abort_reason_code(state.abort_reason) in LEFT_TEXT):
        # Person vs person: each seat's own record: who left (stored as the abort's or takeover's role), and who
        # was left behind.
        code = next(
            (abort_reason_code(e.get("text")) for e in events if e.get("kind") in ("abort", "takeover")), "other"
        )
        left, behind = LEFT_TEXT.get(code, ("left the game", "the other person left"))
        if (taken_over or state.aborted_by) == player.game_role:
            return dict(status="timed_out", detail=f"{link}: {left}", last_active=last_active)
        if state.aborted:
            return dict(status=None, detail=f"{link} aborted: {behind}", last_active=last_active)
        if not state.finished:
            return dict(
                status=None, detail=f"{link} running: {behind}, a model plays their seat", last_active=last_active
            )
        return dict(status=None, detail=f"{link}: {OUTCOME_TEXT[state.outcome]}; {behind}", last_active=last_active)
    if state.aborted:
        code = abort_reason_code(state.abort_reason)
        status = "timed_out" if code in TIMED_OUT else None
        return dict(status=status, detail=f"{link} aborted: {abort_text(code)}", last_active=last_active)
    if state.finished:
        return dict(status=None, detail=f"{link}: {OUTCOME_TEXT[state.outcome]}", last_active=last_active)
    sent = state.messages_sent[player.game_role]
    proposals = sum(p is not None for p in state.proposals.values())
    detail = f"{link} running: {sent} of {game.max_messages} messages sent, {proposals} of 2 proposals in"
    return dict(status=None, detail=detail, last_active=last_active)
