import time

from otree.api import *

import lab_server
import study_flow
from backend.bias import items as bias_items
from backend.bias.export import check_selection
from lab_server.languages import session_language
from study_flow import consent_given_choices  # noqa: F401  (oTree finds the consent field's choices here)

from . import admin, exports, loading
from .loading import presented, settings_of
from .texts import texts

lab_server.install()  # guards oTree's own pages, exports and session creation (once per process)

doc = """
bias_tests: cognitive-bias tests (anchoring, halo effect, loss aversion, confirmation bias) within subject: every
control version first, then the treatment versions, in a seeded random order that never shows a test's two versions
back to back; optional confidence slider; an attention check. One round per test. Export: one row per person x test
x version (the same columns as the model runner writes), with the participant code, Prolific PID, study id,
session code and the answer's time. The tests file is checked before the session exists and kept with the session.
"""
# Where things are: session keys in backend/bias/settings.py (BiasSettings). The item file is read and checked in
# full before a session exists and its text is kept in session.vars, so editing or moving the file later changes no
# session (loading.py). Export: exports.py; admin report: admin.py.


class C(BaseConstants):
    NAME_IN_URL = "bias_tests"
    PLAYERS_PER_GROUP = None
    NUM_ROUNDS = 40  # one test version per round: the largest item file a session may use


class Subsession(BaseSubsession):
    pass


class Group(BaseGroup):
    pass


class Player(BasePlayer):
    consent_given = study_flow.consent_field()
    item_id = models.StringField(blank=True)
    bias = models.StringField(blank=True)
    version = models.StringField(blank=True)
    arguments_shown = models.LongStringField(blank=True, doc="argument ids in display order, comma-separated")
    # blank=True: a missing answer is refused by Choice.error_message, in the session's language.
    choice = models.IntegerField(
        label="Your answer", blank=True, doc="index of the chosen option as listed in the item file"
    )
    answer = models.FloatField(blank=True, doc="value of the chosen option (1/0 for accept or agree)")
    confidence = models.IntegerField(min=0, max=100, blank=True, doc="slider, 0 = pure guess, 100 = certain")
    selected_arguments = models.LongStringField(blank=True, doc="selected argument ids, comma-separated")
    pro_selected = models.IntegerField(blank=True)
    con_selected = models.IntegerField(blank=True)
    is_correct = models.BooleanField(blank=True, doc="attention check answered as instructed")
    seconds = models.FloatField(blank=True)
    answered_at = models.FloatField(blank=True, doc="Unix time of the answer (exported as ISO-8601 UTC)")


# FUNCTIONS
def validate_session_config(config: dict) -> None:
    """Check this app's keys and its item file before the session exists (lab_server/creation.py)."""
    loading.validate_session_config(config, max_versions=C.NUM_ROUNDS)


def creating_session(subsession: Subsession):
    if subsession.round_number == 1:
        loading.plan_session(subsession.session, max_versions=C.NUM_ROUNDS)
    loading.assign_round(subsession)


def tasks_over(player: Player) -> bool:
    """No test left for this participant after this round (study_flow shows the completion page)."""
    return player.round_number >= len(player.participant.vars.get("bias_plan", ()))


def has_test(player: Player, kind: str) -> bool:
    return (
        study_flow.is_active(player) and bool(player.field_maybe_none("item_id")) and presented(player)[1].kind == kind
    )


def choice_choices(player: Player):
    return [[index, option.label] for index, option in enumerate(presented(player)[1].options)]


def text_of(player: Player) -> dict[str, str]:
    """The pages' words in the session's language (texts.py)."""
    return texts(session_language(player.session))


DRAFT_KEY = "bias_draft"  # participant.vars: what a refused submission of this round held, shown again


def keep_draft(player: Player, values: dict, fields: tuple[str, ...]) -> None:
    """Keep a refused submission's input, so the page shows it again (a reload keeps it in the browser: drafts.js)."""
    kept = {field: "" if values.get(field) is None else str(values[field]) for field in fields}
    player.participant.vars[DRAFT_KEY] = {"round": player.round_number, **kept}


def draft_of(player: Player) -> dict:
    draft = player.participant.vars.get(DRAFT_KEY) or {}
    return draft if draft.get("round") == player.round_number else {}


def test_vars(player: Player):
    plan_length = len(player.participant.vars["bias_plan"])
    study_flow.set_progress(player, done=player.round_number - 1, total=plan_length)
    player.participant.vars.setdefault("bias_shown_at", {}).setdefault(str(player.round_number), time.time())
    shown, draft = presented(player)[1], {"choice": "", "confidence": "", "selected_arguments": "", **draft_of(player)}
    return dict(
        shown=shown,
        options=[
            {"index": index, "label": option.label, "checked": str(index) == draft["choice"]}
            for index, option in enumerate(shown.options)
        ],
        ask_confidence=settings_of(player.session).ask_confidence,
        progress=study_flow.progress(player),
        text=text_of(player),
        draft=draft,
    )


def test_js_vars(player: Player):
    """The browser's draft of this round (drafts.js) and the counter's words."""
    prefix = f"bias_tests:{player.participant.code}:"
    return dict(
        draft_key=f"{prefix}{player.round_number}",
        draft_prefix=prefix,
        unset=text_of(player)["confidence_unset"],
        ticked=text_of(player)["arguments_count"],
    )


def finish_test(player: Player):
    player.participant.vars.pop(DRAFT_KEY, None)
    shown_at = player.participant.vars.get("bias_shown_at", {}).get(str(player.round_number))
    player.answered_at = time.time()
    player.seconds = round(player.answered_at - shown_at, 3) if shown_at else None
    study_flow.set_progress(player, done=player.round_number, total=len(player.participant.vars["bias_plan"]))


def skip_test(player: Player, fields: tuple[str, ...]) -> None:
    """The page was moved on by a timeout or the admin's advance before an answer was complete: the test stays
    unanswered (its fields empty, no answer time; the export leaves it out) and the person goes on to the next one."""
    for field in fields:
        setattr(player, field, None)
    player.participant.vars.pop(DRAFT_KEY, None)
    study_flow.set_progress(player, done=player.round_number, total=len(player.participant.vars["bias_plan"]))


def choice_complete(player: Player) -> bool:
    """A saved choice (and confidence, when asked) that the page's error_message would accept."""
    chosen = player.field_maybe_none("choice")
    if chosen is None or not 0 <= chosen < len(presented(player)[1].options):
        return False
    return not settings_of(player.session).ask_confidence or player.field_maybe_none("confidence") is not None


def arguments_complete(player: Player) -> bool:
    """A saved argument selection that the page's error_message would accept."""
    raw = player.field_maybe_none("selected_arguments") or ""
    try:
        check_selection(presented(player)[1], [part for part in raw.split(",") if part])
    except ValueError:
        return False
    return True


def custom_export(players):
    """One row per person x test x version, the LLM runner's columns (exports.py)."""
    return exports.custom_export(players)


custom_export_codebook = exports.codebook_export


def vars_for_admin_report(subsession: Subsession):
    return admin.admin_report_vars(subsession, num_rounds=C.NUM_ROUNDS)


# PAGES
class Consent(study_flow.ConsentPage, Page):
    pass


class Instructions(Page):
    @staticmethod
    def is_displayed(player: Player):
        return player.round_number == 1 and study_flow.is_active(player)

    @staticmethod
    def vars_for_template(player: Player):
        text = text_of(player)
        return dict(
            intro=text["intro"].format(n=len(player.participant.vars["bias_plan"])),
            ask_confidence=settings_of(player.session).ask_confidence,
            text=text,
            workload=study_flow.workload_text(player),
        )


class Choice(Page):
    form_model = "player"

    @staticmethod
    def is_displayed(player: Player):
        return has_test(player, "choice")

    @staticmethod
    def get_form_fields(player: Player):
        return ["choice", "confidence"] if settings_of(player.session).ask_confidence else ["choice"]

    vars_for_template = staticmethod(test_vars)
    js_vars = staticmethod(test_js_vars)
    # A timeout or the admin's advance saves these (oTree's default would be 0: an answer nobody gave).
    timeout_submission = property(lambda page: dict.fromkeys(("choice", "confidence")))

    @staticmethod
    def error_message(player: Player, values):
        text, problems = text_of(player), {}
        if values.get("choice") is None:
            problems["choice"] = text["error_choice"]
        if settings_of(player.session).ask_confidence and values.get("confidence") is None:
            problems["confidence"] = text["error_confidence"]
        if problems:
            keep_draft(player, values, ("choice", "confidence"))
        return problems or None

    @staticmethod
    def before_next_page(player: Player, timeout_happened):
        if timeout_happened and not choice_complete(player):
            skip_test(player, ("choice", "confidence", "answer", "is_correct"))
            return
        item, view = presented(player)
        option = view.options[player.choice]
        player.answer = float(option.value)
        if item.bias == bias_items.ATTENTION_CHECK:
            player.is_correct = option.label == item.correct
        finish_test(player)


class Arguments(Page):
    form_model = "player"
    form_fields = ["selected_arguments"]
    vars_for_template = staticmethod(test_vars)
    js_vars = staticmethod(test_js_vars)
    timeout_submission = property(lambda page: {"selected_arguments": None})  # see Choice

    @staticmethod
    def is_displayed(player: Player):
        return has_test(player, "arguments")

    @staticmethod
    def error_message(player: Player, values):
        raw = values.get("selected_arguments") or ""
        try:
            check_selection(presented(player)[1], [part for part in raw.split(",") if part])
        except ValueError:
            keep_draft(player, values, ("selected_arguments",))
            return {"selected_arguments": text_of(player)["error_arguments"]}

    @staticmethod
    def before_next_page(player: Player, timeout_happened):
        if timeout_happened and not arguments_complete(player):
            skip_test(player, ("selected_arguments", "pro_selected", "con_selected"))
            return
        item, _ = presented(player)
        stances = [item.argument(argument_id).stance for argument_id in player.selected_arguments.split(",")]
        player.pro_selected, player.con_selected = stances.count("pro"), stances.count("con")
        finish_test(player)


class ScreenOut(study_flow.ScreenOutPage, Page):
    pass


class Completion(study_flow.CompletionPage, Page):
    """Shown as soon as tasks_over(player) says the participant has no task left (study_flow)."""

    hooks = study_flow.AppHooks(num_rounds=C.NUM_ROUNDS, tasks_over=tasks_over)


page_sequence = [Consent, Instructions, Choice, Arguments, ScreenOut, Completion]
