"""The dond app's custom exports (one row per game, one per event; columns in ``backend/dond/export.py``) and the
game row that the Results page and the admin report read too."""

import study_flow
from backend.dond import export as dond_export
from backend.dond import scoring

from . import takeover
from .storage import config_of, instance_of, llm_role, protocol_of, stored_events, treatment_of


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
    )


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
    return scoring.model_failure_pay_statement(pay, game.language, instance.counts, instance.values(role))


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
    """(game, events, people) of every game of the players' sessions, for the custom exports."""
    subsessions = {player.subsession.id: player.subsession for player in players}.values()
    participants = {player.participant.code: player.participant for player in players}
    for game, events in games_rows(subsessions):
        yield game, events, people_of(game, participants)


def custom_export_dond_games(players):
    yield dond_export.DOND_GAMES_COLUMNS
    for game, events, people in export_games(players):
        row = game_row(game, events, people=people)
        yield [row[name] for name in dond_export.DOND_GAMES_COLUMNS]


def custom_export_dond_events(players):
    yield dond_export.DOND_EVENTS_COLUMNS
    for game, events, people in export_games(players):
        meta = game_meta(game)
        rows = dond_export.event_rows(
            events,
            instance_of(game),
            config_of(game),
            session_code=meta["session_code"],
            game_id=meta["game_id"],
            people=people,
            focal_role=game.focal_role,
        )
        for row in rows:
            yield [row[name] for name in dond_export.DOND_EVENTS_COLUMNS]
