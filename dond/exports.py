"""The dond app's custom exports (one row per game, one per event; columns in ``backend/dond/export.py``) and the
game row that the Results page and the admin report read too."""

import contextlib
import json
import logging

import study_flow
from backend import codebook
from backend.dond import export as dond_export
from backend.dond import scoring
from study_flow import test_data

from . import takeover
from .storage import config_of, instance_of, llm_role, page_language_of, protocol_of, stored_events, treatment_of

logger = logging.getLogger("dond")


def game_meta(game):
    """What a game row states about ``game`` beyond its events: ids, opponent, model, cell, roles' people."""
    return dict(
        session_code=game.subsession.session.code,
        game_id=f"{game.subsession.session.code}-{game.number + 1}",
        opponent=game.opponent,
        model=game.model,
        cell=game.cell,
        focal_role=game.focal_role,
        participant_a=game.participant_a,
        participant_b=game.participant_b,
        llm_models={llm_role(game): game.model} if game.opponent == "llm" else {},
        protocol=protocol_of(game),
        treatment=treatment_of(game),
        partner_left_pay=takeover.partner_left_pay(game),
        prices=_prices(game.subsession.session.config),
        page_language=page_language_of(game),
    )


def _prices(config):
    """The session's price table (``study_flow.spending``); a table gone or broken since creation: every price unknown
    (the game's cost is then empty, never free), so an export never fails on it."""
    from study_flow import spending

    try:
        return spending.price_table(config)
    except ValueError:
        logger.warning("the price table of a session cannot be read: costs are exported as unknown")
        return spending.costs.EMPTY_TABLE


def game_row(game, events, *, people=None):
    """The ``dond_games`` row of ``game`` with ``events`` (``people`` as `people_of` gives them, for the export)."""
    return dond_export.game_row(events, instance_of(game), config_of(game), **game_meta(game), people=people)


def bonus_of(game, row, role):
    """The bonus points of the player in ``role`` (A or B) of ``game``, whose ``dond_games`` row is ``row``: the
    mode's goal on success, or the session's ``model_failure_pay`` when the person's LLM opponent broke the game
    (``row["pay_rule"]``; ``backend.dond.scoring.person_bonus``), or a partner rule when a person-vs-person partner
    left (``takeover.role_pay_rule``). What the Results page pays."""
    mine, other = role.lower(), "b" if role == "A" else "a"
    instance = instance_of(game)
    return scoring.person_bonus(
        game.mode,
        row[f"points_{mine}"],
        row[f"points_{other}"],
        outcome=row["outcome"],
        rule=takeover.role_pay_rule(game, row, role),
        counts=instance.counts,
        own_values=instance.values(role),
    )


def failure_pay_statement(game, role):
    """The sentence stating what a person facing an LLM is paid if the model breaks the game ("" otherwise)."""
    if game.opponent != "llm":
        return ""
    instance = instance_of(game)
    pay = treatment_of(game).model_failure_pay
    language = page_language_of(game)
    return scoring.model_failure_pay_statement(pay, language, instance.counts, instance.values(role))


def games_rows(subsessions):
    """(game, events as stored) of every game of ``subsessions``."""
    from . import Game

    for subsession in subsessions:
        for game in Game.filter(subsession=subsession):
            yield game, stored_events(game)


def people_of(game, participants):
    """Role -> participant code, Prolific PID and study id of each person in ``game`` (``participants`` by code)."""
    people = {}
    for role, code in (("A", game.participant_a), ("B", game.participant_b)):
        if not code:
            continue
        participant = participants.get(code)
        ids = study_flow.identifiers(participant) if participant is not None else {}
        people[role] = dict(
            participant_code=code, prolific_pid=ids.get("prolific_pid", ""), study_id=ids.get("study_id", "")
        )
    return people


def export_games(players):
    """(game, events, people, study cells) of every game of the players' sessions, for the custom exports; a test game
    (a demo session, or where everyone came by a test link) is left out of an export of all sessions; a game of a real
    person with a test-link partner stays, marked ``is_test``."""
    subsessions = {player.subsession.id: player.subsession for player in players}.values()
    participants = {player.participant.code: player.participant for player in players}
    for game, events in games_rows(subsessions):
        session = game.subsession.session
        people = [participants[code] for code in (game.participant_a, game.participant_b) if code in participants]
        tests = [test_data.is_test(person) for person in people]
        is_test = test_data.is_test_session(session) or any(tests)  # the row is marked when anyone in it is a test
        if (test_data.is_test_session(session) or (tests and all(tests))) and not test_data.keeps_tests():
            continue  # left out only when nobody in it is real: a real person's game is never dropped
        cells = dict(test_data.session_cells(session), is_test=int(is_test))
        yield game, events, people_of(game, participants), cells


GAMES = codebook.names("dond", "custom_export_dond_games")
EVENTS = codebook.names("dond", "custom_export_dond_events")
LATE_CALLS = codebook.names("dond", "custom_export_dond_late_calls")


def unreadable_row(game, columns, error):
    """The row of a game that could not be read at all (a broken game row, not only broken events): its ids and the
    ``integrity`` cell ``unreadable_game:<error type>``, so one game never fails the export of the others."""
    logger.exception("dond export: game %s could not be read", getattr(game, "id", "?"))
    row = dict.fromkeys(columns, "")
    with contextlib.suppress(Exception):  # the ids are a courtesy; the row is written without them too
        code = game.subsession.session.code
        row.update(session_code=code, game_id=f"{code}-{game.number + 1}")
    row["integrity"] = f"unreadable_game:{type(error).__name__}"
    return [row[name] for name in columns]


def custom_export_dond_games(players):
    yield list(GAMES)
    for game, events, people, cells in export_games(players):
        try:
            row = dict(game_row(game, events, people=people), **cells)
        except Exception as error:  # noqa: BLE001  (the events are read tolerantly; this is the last defence)
            yield unreadable_row(game, GAMES, error)
            continue
        yield [row.get(name, "") for name in GAMES]


def custom_export_dond_events(players):
    yield list(EVENTS)
    for game, events, people, cells in export_games(players):
        try:
            meta = game_meta(game)
            rows = dond_export.event_rows(
                events,
                instance_of(game),
                config_of(game),
                session_code=meta["session_code"],
                game_id=meta["game_id"],
                people=people,
                focal_role=game.focal_role,
                prices=_prices(game.subsession.session.config),
            )
        except Exception as error:  # noqa: BLE001  (the events are read tolerantly; this is the last defence)
            yield unreadable_row(game, EVENTS, error)
            continue
        for row in rows:
            row.update(cells)
            yield [row.get(name, "") for name in EVENTS]


def custom_export_dond_late_calls(players):
    """One row per late call: an event an LLM turn prepared that the game as stored refused (docs/integrity.md)."""
    from . import LateCall

    yield list(LATE_CALLS)
    for game, _events, people, cells in export_games(players):
        code = cells["session_code"]
        for late in LateCall.objects_filter(game_id=game.id).order_by(LateCall.id):
            try:
                event = json.loads(late.event_json or "{}")
                event = event if isinstance(event, dict) else {"text": str(event)}
            except ValueError:
                event = {"text": late.event_json}
            event.setdefault("kind", late.kind)
            person = people.get(event.get("role")) or people.get(game.focal_role)
            row = dond_export.late_call_row(
                event,
                session_code=code,
                game_id=f"{code}-{game.number + 1}",
                arrived_at=late.arrived_at,
                late_reason=late.late_reason or "",
                person=person,
            )
            row.update(cells)
            yield [row.get(name, "") for name in LATE_CALLS]


custom_export_codebook = codebook.export_function("dond")  # the Data page's download of this app's codebook
