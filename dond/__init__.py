import openai  # noqa: F401  (imported at start-up: a first import inside a live call would block every page ~0.5 s)
from otree.api import *

import lab_server
import study_flow
from backend.core import clock
from backend.dond.settings import DondSettings, validated_settings
from lab_server import otree_internals
from study_flow import consent_given_choices  # noqa: F401  (oTree finds the consent field's choices here)

from . import storage, views
from .admin import vars_for_admin_report  # noqa: F401  (oTree's hook)
from .exports import (  # noqa: F401  (oTree's hooks)
    custom_export_codebook,
    custom_export_dond_events,
    custom_export_dond_games,
    custom_export_dond_late_calls,
)
from .live import check_partner, live_bargain
from .pairing import INSTRUCTIONS_HEARTBEAT_S, live_heartbeat, live_pairing
from .storage import game_of, settings_of

lab_server.install()  # guards oTree's own pages, exports and session creation (once per process)

doc = """
Deal or No Deal: a person splits items with a language model (or another person) by chat and secret proposals.
Every message and proposal is stored before it is shown. See docs/apps/dond.md.
"""
# Where things are: every message, proposal, violation, re-prompt and LLM call is an Event row written before it is
# shown; the game state is derived from these rows. Session keys: backend/dond/settings.py. Sibling modules: storage
# (settings, games, events and their caches), live (the Bargain page's live method), pairing, views (what pages show,
# payoff), exports, admin (the admin report).
DEFAULTS = DondSettings()


class C(BaseConstants):
    NAME_IN_URL = "dond"
    PLAYERS_PER_GROUP = None
    NUM_ROUNDS = 1


class Subsession(BaseSubsession):
    pass


class Group(BaseGroup):
    pass


class Player(BasePlayer):
    consent_given = study_flow.consent_field()
    game_id = models.IntegerField(initial=0)  # id of the Game row; 0 = none yet
    game_role = models.StringField(initial="")  # A or B
    is_unpaired = models.BooleanField(initial=False)
    pairing_started_at = models.FloatField(initial=0)
    last_seen = models.FloatField(initial=0)
    live_since = models.FloatField(initial=0)  # the Bargain page's first live message: when this person could act
    outcome = models.StringField(initial="")
    points = models.IntegerField(initial=0)
    bonus_points = models.FloatField(initial=0)


class Game(ExtraModel):
    subsession = models.Link(Subsession)
    number = models.IntegerField()  # 0-based order in the session: sets the cell and the instance
    opponent = models.StringField()
    model = models.StringField()
    mode = models.StringField()
    language = models.StringField()  # the game's: the model's prompts, its proposals' words (prompt_language)
    page_language = models.StringField(initial="")  # the person's pages (the session's language; "" = language)
    cell = models.IntegerField()
    focal_role = models.StringField()
    opener = models.StringField()
    max_messages = models.IntegerField()
    llm_reprompts = models.IntegerField()
    max_message_chars = models.IntegerField()
    clembench_exact = models.BooleanField(initial=False)  # backend.dond.departures all off
    llm_protocol = models.StringField(initial=DEFAULTS.llm_protocol)
    llm_word_limit = models.IntegerField(initial=DEFAULTS.llm_word_limit)
    llm_probe_external = models.BooleanField(initial=DEFAULTS.llm_probe_external)
    instance_json = models.LongStringField()
    treatment_json = models.LongStringField(initial="")  # the treatment keys as created (backend.dond.treatments)
    participant_a = models.StringField()
    participant_b = models.StringField()
    created_at = models.FloatField()


class Event(ExtraModel):
    game = models.Link(Game)
    created_at = models.FloatField()
    kind = models.StringField()
    role = models.StringField()
    actor = models.StringField()
    text = models.LongStringField()
    proposal = models.StringField()
    error_kind = models.StringField()
    error = models.LongStringField()
    model = models.StringField()
    llm_messages = models.LongStringField()
    llm_reply = models.LongStringField()
    llm_reasoning = models.LongStringField()  # a reasoning model's thinking: exported, never shown, never parsed
    reasoning_shown = models.BooleanField()  # previewed before it could be told to be thinking (see backend.core.llm)
    max_tokens = models.IntegerField()  # the token limit the request carried
    latency_s = models.FloatField()
    prompt_tokens = models.IntegerField()
    completion_tokens = models.IntegerField()
    attempts = models.IntegerField()
    finish_reason = models.StringField()
    llm_error_kind = models.StringField()
    purpose = models.StringField()  # of an llm_call: note, message or probe
    turn = models.IntegerField()  # of note, probe and llm_call events (notes protocol)


class LateCall(ExtraModel):
    """An event an LLM turn prepared that the game as stored refused: it ended before the reply arrived (the page's
    time limit, the admin's advance). Kept apart from the game's events (``storage.write_judged``; docs/integrity.md)."""

    game = models.Link(Game)
    arrived_at = models.FloatField()
    late_reason = (
        models.StringField()
    )  # backend.dond.integrity.late_reason: after_abort:<code>, after_end, refused:<kind>
    kind = models.StringField()  # what it would have been: llm_call, message, proposal, violation, llm_error, ...
    role = models.StringField()
    event_json = models.LongStringField()  # the whole event, as the game's events would have held it


# FUNCTIONS
# lab_server/creation.py calls validate_session_config (oTree's start-up check counts the name's uses here)
def validate_session_config(config: dict) -> None:
    """Check every dond key and the instances file before the session exists (``lab_server/creation.py``); each
    key is stored back in its proper type, absent keys get their defaults. Raises one ValueError naming them all."""
    for key, value in validated_settings(config, project_root=storage.PROJECT_ROOT).as_config().items():
        config.pop(key, None)  # every key in the same order, whichever settings.py sets: the wide export's columns
        config[key] = value


def creating_session(subsession: Subsession):
    storage.keep_instances(subsession.session)
    if settings_of(subsession.session).opponent == "llm":  # one group per person: the bots drive each game separately
        subsession.set_group_matrix([[player] for player in subsession.get_players()])


# PAGES
class Consent(study_flow.ConsentPage, Page):
    pass


class Pairing(Page):
    live_method = live_pairing

    @staticmethod
    def is_displayed(player: Player):
        return study_flow.is_active(player) and settings_of(player.session).opponent == "human"

    @property
    def timer_text(self):  # oTree's countdown line, in the session's language
        return views.timer_text(self.player, "timer_pairing")

    @staticmethod
    def get_timeout_seconds(player: Player):
        # The pairing's own limit: the countdown shows the true wait (no margin: 600 s reads 10:00).
        # When it runs out the page is submitted and before_next_page marks the person unpaired.
        return settings_of(player.session).pairing_timeout_s

    @staticmethod
    def vars_for_template(player: Player):
        return dict(text=views.session_text(player.session), rule=views.pairing_rule(player.session))

    @staticmethod
    def before_next_page(player: Player, timeout_happened):
        if not player.game_id:
            player.is_unpaired = True


class Instructions(Page):
    live_method = live_heartbeat

    @staticmethod
    def is_displayed(player: Player):
        return study_flow.is_active(player) and not player.is_unpaired

    @staticmethod
    def vars_for_template(player: Player):
        player.last_seen = clock.now()  # reading the instructions counts as being there
        game = views.game_of(player)
        return dict(
            views.game_vars(player),
            workload=study_flow.workload_text(player, messages=game.max_messages),
            heartbeat_ms=INSTRUCTIONS_HEARTBEAT_S * 1000,
        )


class Bargain(Page):
    live_method = live_bargain

    @property
    def timer_text(self):  # oTree's countdown line, in the session's language (shown in the last minutes only)
        return views.timer_text(self.player, "timer_bargain")

    @staticmethod
    def is_displayed(player: Player):
        return study_flow.is_active(player) and not player.is_unpaired

    @staticmethod
    def get_timeout_seconds(player: Player):
        return settings_of(player.session).game_timeout_s

    @staticmethod
    def vars_for_template(player: Player):
        return views.game_vars(player)

    @staticmethod
    def js_vars(player: Player):
        return views.bargain_js_vars(player)

    @staticmethod
    def error_message(player: Player, values):
        game = game_of(player)
        if not views.replayed(game).finished:
            return views.page_text(game)["error_not_finished"]

    @staticmethod
    def before_next_page(player: Player, timeout_happened):
        game = game_of(player)
        if game.opponent == "human":  # a partner gone by now is named first, whoever moves this page on
            check_partner(player, game)
        if not views.replayed(game).finished:  # the page's time limit or the admin's advance: the game ends for both
            reason = views.end_reason(
                game, player, timer_ran_out=otree_internals.page_timer_ran_out(player.participant)
            )
            storage.store_event(game, dict(kind="abort", role=player.game_role, actor="system", text=reason))


class Results(Page):
    @staticmethod
    def is_displayed(player: Player):
        return study_flow.is_active(player)

    @staticmethod
    def vars_for_template(player: Player):
        return views.results_vars(player)

    @staticmethod
    def js_vars(player: Player):
        return views.results_js_vars(player)


class ScreenOut(study_flow.ScreenOutPage, Page):
    pass


class Completion(study_flow.CompletionPage, Page):
    hooks = study_flow.AppHooks(num_rounds=C.NUM_ROUNDS)


page_sequence = [Consent, Pairing, Instructions, Bargain, Results, ScreenOut, Completion]
