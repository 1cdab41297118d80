from otree.api import *

import lab_server
import study_flow
from backend.reasoning import task
from study_flow import (
    assignments,
    consent_given_choices,  # noqa: F401  (oTree finds the consent field's choices here)
)

from . import exports, judging, study, tasks
from .study import load_player_log, settings_of
from .tasks import assign_log, finish_judgement, judge_total, judged_count

lab_server.install()  # guards oTree's own pages, exports and session creation (once per process)

doc = """
payoff_reasoning_eval: people judge whether a language model reasoned correctly about the payoffs of a 2x2 game
(Prisoner's Dilemma, Stag Hunt, Hawk-Dove), following the LELMA evaluation protocol. Each log is judged by
judges_per_log people; the export is the protocol's CSV, the admin report compares the automated check with people.
"""
# Where things are: session keys and defaults in backend/reasoning/task.py (TaskSettings); the session's logs and
# settings in study.py; who judges which log in tasks.py (over study_flow/assignments.py); downloads and the admin
# report in exports.py.


class C(BaseConstants):
    NAME_IN_URL = "payoff_reasoning_eval"
    PLAYERS_PER_GROUP = None
    NUM_ROUNDS = 30  # one log per round: the upper bound of logs_per_judge
    VERDICT_CHOICES = [[1, "Correct: no error in reasoning about payoffs"], [0, "Incorrect: at least one payoff error"]]


class Subsession(BaseSubsession):
    pass


class Group(BaseGroup):
    pass


class Player(BasePlayer):
    consent_given = study_flow.consent_field()
    log_file = models.StringField(blank=True)
    game = models.StringField(blank=True)
    attempts = models.IntegerField(blank=True)
    orig_choice = models.StringField(blank=True)
    final_choice = models.StringField(blank=True)
    failed_queries = models.LongStringField(blank=True)
    # blank=True: a missing verdict is refused by Judge.error_message, in the session's language (judging.py).
    orig_cor = models.IntegerField(
        label="Is the reasoning of the first response correct?",
        choices=C.VERDICT_CHOICES,
        widget=widgets.RadioSelect,
        blank=True,
    )
    fin_cor = models.IntegerField(
        label="Is the reasoning of the last response correct?",
        choices=C.VERDICT_CHOICES,
        widget=widgets.RadioSelect,
        blank=True,
    )
    err_type = models.StringField(blank=True)
    marked_sentences = models.LongStringField(blank=True, doc="ids of the clicked sentences, e.g. f0#l2")
    sentence = models.LongStringField(blank=True)
    remarks = models.LongStringField(blank=True, label="Remarks (optional)")
    con_mat = models.StringField(blank=True)


class LogItem(ExtraModel):
    """One log of the session (stored as text; parsed again when needed)."""

    subsession = models.Link(Subsession)
    file = models.StringField()
    game = models.StringField()
    text = models.LongStringField()


Assignment = assignments.model(Subsession)  # who judges which log (columns: study_flow/assignments.py)


# FUNCTIONS
def creating_session(subsession: Subsession):
    if subsession.round_number == 1:
        study.create(subsession)


validate_session_config = study.validate_session_config
tasks_over = tasks.tasks_over
vars_for_admin_report = exports.vars_for_admin_report
custom_export = exports.protocol
custom_export_protocol_with_ids = exports.protocol_with_ids
custom_export_assignments = exports.assignment_log
custom_export_codebook = exports.codebook_export


# PAGES
class Consent(study_flow.ConsentPage, Page):
    pass


class Instructions(Page):
    @staticmethod
    def is_displayed(player: Player):
        return player.round_number == 1 and study_flow.is_active(player)

    @staticmethod
    def vars_for_template(player: Player):
        settings, text = settings_of(player.session), judging.text_of(player)
        games = sorted({item.game for item in LogItem.filter(subsession=assignments.root(player))})
        return dict(
            games=[{"name": settings.games[code].name, "table": settings.games[code].table()} for code in games],
            error_types=task.error_type_help(),
            text=text,
            intro_2=text["intro_2"].format(n=judge_total(player)),
            workload=study_flow.workload_text(player, units=judge_total(player)),
        )


class Judge(Page):
    form_model = "player"

    @staticmethod
    def is_displayed(player: Player):
        return study_flow.is_active(player) and assign_log(player)

    @staticmethod
    def get_form_fields(player: Player):
        fields = ["orig_cor", "fin_cor", "err_type", "marked_sentences", "remarks"]
        return fields if player.attempts > 1 else [field for field in fields if field != "fin_cor"]

    @staticmethod
    def vars_for_template(player: Player):
        study_flow.set_progress(player, done=judged_count(player), total=judge_total(player))
        return dict(judging.page_vars(player), progress=study_flow.progress(player))

    js_vars = staticmethod(judging.js_vars)
    # A timeout or the admin's advance saves these (oTree's default would be 0: an answer nobody gave).
    timeout_submission = property(lambda page: dict.fromkeys(judging.FIELDS))

    @staticmethod
    def error_message(player: Player, values):
        found = judging.problems(player, values)
        if found:
            judging.keep_draft(player, values)  # the page shows the refused verdict again, all of it
        return found or None

    @staticmethod
    def before_next_page(player: Player, timeout_happened):
        if timeout_happened and not judging.complete_verdict(player):
            # Advanced by the admin or by a timeout before a valid verdict: nothing is recorded, the log goes back.
            judging.release_log(player)
            judging.drop_draft(player)
            return
        log = load_player_log(player)
        row = task.verdict_row(
            log,
            orig_cor=player.orig_cor,
            fin_cor=player.field_maybe_none("fin_cor"),
            err_type=player.err_type,
            marked=player.marked_sentences,
            remarks=player.field_maybe_none("remarks") or "",
        )
        for column in ("fin_cor", "err_type", "sentence", "con_mat"):
            setattr(player, column, row[column])
        finish_judgement(player)
        study_flow.set_progress(player, done=judged_count(player), total=judge_total(player))
        judging.drop_draft(player)


class ScreenOut(study_flow.ScreenOutPage, Page):
    pass


class Completion(study_flow.CompletionPage, Page):
    """Shown as soon as tasks_over(player) says the participant has no task left (study_flow)."""

    hooks = study_flow.AppHooks(num_rounds=C.NUM_ROUNDS, tasks_over=tasks_over)


page_sequence = [Consent, Instructions, Judge, ScreenOut, Completion]
