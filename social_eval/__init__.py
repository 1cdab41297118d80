from otree.api import *

import lab_server
import study_flow
from backend.social import forms as social_forms
from study_flow import (
    assignments,
    consent_given_choices,  # noqa: F401  (oTree finds the consent field's choices here)
    lookups,
)

from . import admin, exports, study, tasks, texts, views
from .form import *  # the form's hooks oTree looks up by name: rating_*_min/_max, reason_*_error_message, quiz_*_choices
from .form import QUIZ_FIELDS, RATING_FIELDS, complete_rating, failed_comprehension, wrong_answers

lab_server.install()  # guards oTree's own pages, exports and session creation (once per process)

doc = """
Sotopia-style annotation of conversations: every annotator rates both agents of an episode on the seven dimensions
of the session's rubric (reasoning + rating each). Episodes are handed out from the database: k annotators each,
least-covered first, with expiring reservations. Gold episodes serve as attention checks, or, in qualification
mode, as the whole pilot. See docs/apps/social_eval.md.
"""
# Where things are: session keys and their defaults in backend/social/settings.py; the study material (settings,
# rubric, episodes) in study.py; who rates what in tasks.py (over study_flow/assignments.py); the form's hooks in
# form.py; page data in views.py (markup in the .html files); downloads in exports.py; the admin report in admin.py.


class C(BaseConstants):
    NAME_IN_URL = "social_eval"
    PLAYERS_PER_GROUP = None
    NUM_ROUNDS = 15  # one round per task: the most episodes (regular + gold) one annotator can get
    MAX_QUESTIONS = 6  # comprehension questions a rubric may have


class Subsession(BaseSubsession):
    pass


class Group(BaseGroup):
    pass


class Player(BasePlayer):
    consent_given = study_flow.consent_field()
    episode_id = models.StringField(initial="", blank=True)
    is_gold = models.BooleanField(initial=False)
    shown_at = models.FloatField(blank=True)
    submitted_at = models.FloatField(blank=True)
    seconds_spent = models.FloatField(blank=True)
    # The Rate page's time per rating step, posted by its script and judged in tasks.finish_task
    # (backend/social/step_times.py): JSON {rating field: seconds} when plausible, else empty; step_times_ok says which.
    step_seconds = models.LongStringField(blank=True)
    step_times_ok = models.BooleanField(blank=True)
    attention_passed = models.BooleanField(blank=True)
    gold_max_difference = models.FloatField(blank=True)
    comprehension_attempts = models.IntegerField(initial=0)
    # The rating form, one slot per (agent, dimension number) up to backend/social/forms.py MAX_DIMENSIONS; the rubric
    # decides which slots a session uses. Bounds and checks: the hooks in form.py. blank=True: a missing answer is
    # refused by those hooks, in the session's language (oTree's own "This field is required." is English only).
    rating_1_1 = models.IntegerField(blank=True)
    reason_1_1 = models.LongStringField(blank=True)
    rating_1_2 = models.IntegerField(blank=True)
    reason_1_2 = models.LongStringField(blank=True)
    rating_1_3 = models.IntegerField(blank=True)
    reason_1_3 = models.LongStringField(blank=True)
    rating_1_4 = models.IntegerField(blank=True)
    reason_1_4 = models.LongStringField(blank=True)
    rating_1_5 = models.IntegerField(blank=True)
    reason_1_5 = models.LongStringField(blank=True)
    rating_1_6 = models.IntegerField(blank=True)
    reason_1_6 = models.LongStringField(blank=True)
    rating_1_7 = models.IntegerField(blank=True)
    reason_1_7 = models.LongStringField(blank=True)
    rating_1_8 = models.IntegerField(blank=True)
    reason_1_8 = models.LongStringField(blank=True)
    rating_1_9 = models.IntegerField(blank=True)
    reason_1_9 = models.LongStringField(blank=True)
    rating_1_10 = models.IntegerField(blank=True)
    reason_1_10 = models.LongStringField(blank=True)
    rating_2_1 = models.IntegerField(blank=True)
    reason_2_1 = models.LongStringField(blank=True)
    rating_2_2 = models.IntegerField(blank=True)
    reason_2_2 = models.LongStringField(blank=True)
    rating_2_3 = models.IntegerField(blank=True)
    reason_2_3 = models.LongStringField(blank=True)
    rating_2_4 = models.IntegerField(blank=True)
    reason_2_4 = models.LongStringField(blank=True)
    rating_2_5 = models.IntegerField(blank=True)
    reason_2_5 = models.LongStringField(blank=True)
    rating_2_6 = models.IntegerField(blank=True)
    reason_2_6 = models.LongStringField(blank=True)
    rating_2_7 = models.IntegerField(blank=True)
    reason_2_7 = models.LongStringField(blank=True)
    rating_2_8 = models.IntegerField(blank=True)
    reason_2_8 = models.LongStringField(blank=True)
    rating_2_9 = models.IntegerField(blank=True)
    reason_2_9 = models.LongStringField(blank=True)
    rating_2_10 = models.IntegerField(blank=True)
    reason_2_10 = models.LongStringField(blank=True)
    # The comprehension questions (at most C.MAX_QUESTIONS); choices: quiz_<n>_choices in form.py; a missing answer:
    # Comprehension.error_message.
    quiz_1 = models.IntegerField(blank=True)
    quiz_2 = models.IntegerField(blank=True)
    quiz_3 = models.IntegerField(blank=True)
    quiz_4 = models.IntegerField(blank=True)
    quiz_5 = models.IntegerField(blank=True)
    quiz_6 = models.IntegerField(blank=True)


Assignment = assignments.model(Subsession)  # who holds or finished which episode (columns: study_flow/assignments.py)


class StoredEpisode(ExtraModel):
    """The episodes of the session, validated at session creation (our JSON format)."""

    subsession = models.Link(Subsession)
    episode_id = models.StringField()
    position = models.IntegerField()
    is_gold = models.BooleanField()
    data = models.LongStringField()


lookups.index(StoredEpisode, "subsession_id", "episode_id")  # study.episode finds the one to show by its id


# FUNCTIONS
# lab_server/creation.py calls validate_session_config (oTree's start-up check counts the name's uses here)
def validate_session_config(config):
    """Refuse a session config before oTree creates anything (called by lab_server/creation.py); types the keys."""
    study.checked(config)


def creating_session(subsession):
    if subsession.round_number == 1:
        study.create(subsession)


tasks_over = tasks.tasks_over
vars_for_admin_report = admin.vars_for_admin_report
custom_export_ratings_long = exports.ratings_long
custom_export_ratings_wide = exports.ratings_wide
custom_export_qualified = exports.qualified
custom_export_assignments = exports.assignment_log
custom_export_codebook = exports.codebook_export


# PAGES
class Consent(study_flow.ConsentPage, Page):
    pass


class Instructions(Page):
    @staticmethod
    def is_displayed(player):
        return player.round_number == 1 and study_flow.is_active(player)

    vars_for_template = staticmethod(views.instructions_vars)


class Comprehension(Page):
    form_model = "player"
    vars_for_template = staticmethod(views.comprehension_vars)
    # A timeout or the admin's advance saves these (oTree's default would be 0: an answer nobody gave).
    timeout_submission = property(lambda page: dict.fromkeys(QUIZ_FIELDS))

    @staticmethod
    def is_displayed(player):
        settings = study.settings_of(player.session)
        return player.round_number == 1 and study_flow.is_active(player) and settings.comprehension_check

    @staticmethod
    def get_form_fields(player):
        return [f"quiz_{n}" for n in range(1, len(study.rubric(player.session).comprehension) + 1)]

    @staticmethod
    def error_message(player, values):
        language = player.session.config.get("language")
        unanswered = [n for n in range(1, len(values) + 1) if values.get(f"quiz_{n}") is None]
        wrong = [] if unanswered else wrong_answers(player, values)
        # The page shown again keeps every answer and marks the wrong ones (views.comprehension_vars).
        player.participant.vars[views.QUIZ_STATE] = dict(answers=dict(values), wrong=wrong)
        if unanswered:  # not an attempt: nothing was answered wrongly yet
            return social_forms.message(
                "quiz_unanswered", language=language, questions=social_forms.joined(unanswered, language)
            )
        if not wrong:
            return None
        player.comprehension_attempts += 1
        attempts = study.settings_of(player.session).comprehension_attempts
        if player.comprehension_attempts >= attempts:
            return None  # out of attempts: before_next_page screens out
        return social_forms.quiz_retry_message(wrong, attempts - player.comprehension_attempts, language=language)

    @staticmethod
    def before_next_page(player, timeout_happened):
        count = len(study.rubric(player.session).comprehension)
        if timeout_happened and any(player.field_maybe_none(f"quiz_{n}") is None for n in range(1, count + 1)):
            # Moved on by a timeout or the admin's advance, unanswered: not a failed check, but no rating without it.
            for n in range(1, count + 1):
                setattr(player, f"quiz_{n}", None)
            player.participant.vars.pop(views.QUIZ_STATE, None)
            study_flow.screen_out(player, "comprehension_not_answered")
            return
        if failed_comprehension(player):
            study_flow.screen_out(player, "failed_comprehension")


class Rate(Page):
    form_model = "player"
    js_vars = staticmethod(views.rate_js_vars)
    timeout_submission = property(lambda page: dict.fromkeys(RATING_FIELDS))  # see Comprehension

    @staticmethod
    def is_displayed(player):
        return tasks.ensure_task(player)

    @staticmethod
    def get_form_fields(player):
        return [*social_forms.form_fields(study.rubric(player.session)), "step_seconds"] if player.episode_id else []

    @staticmethod
    def vars_for_template(player):
        tasks.refresh_reservation(player)
        return views.rate_vars(player, task_total=len(tasks.plan(player)))

    @staticmethod
    def error_message(player, values):
        return tasks.reservation_lost_message(player)

    @staticmethod
    def before_next_page(player, timeout_happened):
        if timeout_happened and player.episode_id and not complete_rating(player):
            # Moved on by a timeout or the admin's advance before a full rating: nothing is recorded, the episode
            # goes back to the pool for someone else (study_flow/assignments) and the person gets the next one.
            assignments.release(tasks.my_row(player))
            return
        tasks.finish_task(player)


class NothingLeft(Page):
    """Terminal page when every episode already has enough annotators before this person rated any."""

    @staticmethod
    def is_displayed(player):
        return study_flow.is_active(player) and bool(player.participant.vars.get("social_eval_nothing_left"))

    @staticmethod
    def vars_for_template(player):
        code = player.session.config.get("screenout_code") or ""
        words = texts.page_texts(texts.language_of(player.session))
        return dict(t=words, code=code, url=study_flow.completion_url(code) if code else "")


class ScreenOut(study_flow.ScreenOutPage, Page):
    pass


class Completion(study_flow.CompletionPage, Page):
    """Shown as soon as tasks_over(player) says the participant has no task left (study_flow)."""

    hooks = study_flow.AppHooks(num_rounds=C.NUM_ROUNDS, tasks_over=tasks_over)


page_sequence = [Consent, Instructions, Comprehension, Rate, NothingLeft, ScreenOut, Completion]
