"""Person vs person: what happens when a partner leaves (session key ``partner_leaves``, ``backend.dond.partner``).

`partner_gone` is called by ``live.check_partner`` (under oTree's page lock) once the partner has left or stopped
answering: it reads the game's events as stored, and only if the game is still open and nobody took over yet does
it store either the abort (``end``) or the ``takeover`` event (``model``). From then on the model plays the seat,
through the same ``llm_turns`` as a model game, driven by the live calls of the person left behind (``model_role``).
A person whose seat was taken over and who comes back can watch but not move (`taken_over_refusal`).
"""

from backend.core import clock, csvio
from backend.core.llm import LLMSettings
from backend.dond import game as dond_game
from backend.dond import integrity as dond_integrity
from backend.dond import partner as dond_partner
from backend.dond.errors import MoveError
from backend.dond.scoring import person_bonus

from .storage import config_of, events_of, instance_of, settings_of, store_event

model_role = dond_partner.model_role  # the role a model plays since a takeover, else None
TAKEOVER_COLUMNS = dond_partner.TAKEOVER_COLUMNS  # the dond_games columns of the switch


class TakenOverError(MoveError):
    """A move from a person whose seat a model has taken over (they left, then came back)."""

    kind = "taken_over"


def partner_gone(player, game, partner, reason):
    """End the game, or give the partner's seat to the session's model, as ``partner_leaves`` says: judged against
    the events as stored (call it under the page lock), so a game already over or taken over is left as it is."""
    events = events_of(game)
    state, _ = dond_integrity.replay_checked(events, config_of(game), counts=instance_of(game).counts)  # readable part
    if state.finished or model_role(events) is not None:
        return
    if settings_of(player.session).partner_leaves == "model":
        model = LLMSettings.from_config(player.session.config).model
        event = dond_partner.takeover_event(role=partner.game_role, reason=reason, model=model, at=clock.now())
    else:
        event = dict(kind="abort", role=partner.game_role, actor="system", text=reason)
    store_event(game, event)


def taken_over_refusal(player, events, data):
    """The error for a move of a person whose seat the model plays now, else None."""
    if data.get("type") in ("message", "proposal") and model_role(events) == player.game_role:
        return TakenOverError("A model plays this seat since its person left.")
    return None


def role_pay_rule(game, row, role):
    """The rule that pays the person in ``role`` of ``game`` (its ``dond_games`` row ``row``): a partner rule
    (``backend.dond.partner.partner_rule``) in a person-vs-person game, else the row's rule for an LLM game, else
    ``mode_goal``."""
    if game.opponent == "human":
        rule = dond_partner.partner_rule(
            outcome=row["outcome"],
            abort_code=dond_game.abort_reason_code(csvio.unescape_text(row["abort_reason"])),
            aborted_by=row["aborted_by"],
            takeover_role=row.get("takeover_role", ""),
            role=role,
            partner_left_pay=partner_left_pay(game),
        )
        return rule or "mode_goal"
    return row["pay_rule"] if row.get("pay_rule") else "mode_goal"


def partner_left_pay(game):
    """The session's ``partner_left_pay`` (its config never changes after creation)."""
    return settings_of(game.subsession.session).partner_left_pay


def paid_statement(text, game, role, rule):
    """The Results page's sentence for a partner rule (``left_game``, ``partner_left_<pay>``), else None."""
    if rule not in dond_partner.PARTNER_PAY_RULES:
        return None
    instance = instance_of(game)
    points = person_bonus(
        game.mode, None, None, outcome="aborted", rule=rule, counts=instance.counts, own_values=instance.values(role)
    )
    return text[f"paid_{rule}"].format(points=points)


def rule_statement(text, game, role):
    """The Instructions' sentence on what happens, and what is paid, if the partner leaves ("" unless two people
    play)."""
    if game.opponent != "human":
        return ""
    settings = settings_of(game.subsession.session)
    if settings.partner_leaves == "model":
        return text["rule_partner_model"]
    instance = instance_of(game)
    rule = f"partner_left_{settings.partner_left_pay}"
    points = person_bonus(
        game.mode, None, None, outcome="aborted", rule=rule, counts=instance.counts, own_values=instance.values(role)
    )
    return text[f"rule_partner_end_{settings.partner_left_pay}"].format(points=points)
