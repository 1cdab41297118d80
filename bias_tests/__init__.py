import json
import time
from pathlib import Path

from otree.api import *

import lab_server  # noqa: F401  (guards oTree's own pages, exports and session creation)
import study_flow
from backend.bias import items as items_module
from backend.bias import report as bias_report
from backend.core import researcher_files, session_keys
from backend.core.csvio import iso_utc

doc = """
bias_tests: cognitive-bias tests (anchoring, halo effect, loss aversion, confirmation bias) within subject: every
control version first, then the treatment versions, in a seeded random order that never shows a test's two versions
back to back; optional confidence slider; an attention check. One round per test. Export: one row per person x test
x version (the same columns as python -m backend.bias.runner writes for models), with the participant code, Prolific
PID, study id, session code and the answer's ISO-8601 UTC time.

The item file is read and checked in full before a session exists (validate_session_config) and its text is kept in
session.vars, so editing or moving the file later changes no session.
"""

PROJECT_ROOT = Path(__file__).resolve().parent.parent
_ITEM_SETS = {}  # session code -> ItemSet, parsed once per process from the copy stored in session.vars


class C(BaseConstants):
    NAME_IN_URL = "bias_tests"
    PLAYERS_PER_GROUP = None
    NUM_ROUNDS = 40  # one test version per round: the largest item file a session may use


class Subsession(BaseSubsession):
    pass


class Group(BaseGroup):
    pass


class Player(BasePlayer):
    consent_given = models.BooleanField(label="", widget=widgets.RadioSelect)
    item_id = models.StringField(blank=True)
    bias = models.StringField(blank=True)
    version = models.StringField(blank=True)
    arguments_shown = models.LongStringField(blank=True, doc="argument ids in display order, comma-separated")
    choice = models.IntegerField(label="Your answer", doc="index of the chosen option as listed in the item file")
    answer = models.FloatField(blank=True, doc="value of the chosen option (1/0 for accept or agree)")
    confidence = models.IntegerField(min=0, max=100, blank=True, doc="slider, 0 = pure guess, 100 = certain")
    selected_arguments = models.LongStringField(blank=True, doc="selected argument ids, comma-separated")
    pro_selected = models.IntegerField(blank=True)
    con_selected = models.IntegerField(blank=True)
    is_correct = models.BooleanField(blank=True, doc="attention check answered as instructed")
    seconds = models.FloatField(blank=True)
    answered_at = models.FloatField(blank=True, doc="Unix time of the answer (exported as ISO-8601 UTC)")


# FUNCTIONS
def consent_given_choices(player: Player):
    return study_flow.consent_choices(player.session.config.get("language"))


def item_set(session):
    if session.code not in _ITEM_SETS:
        _ITEM_SETS[session.code] = items_module.parse_items(json.loads(session.vars["bias_items"]), source="session")
    return _ITEM_SETS[session.code]


def _item_file(config) -> tuple[Path, str, str]:
    """The item file a session config names (the bundled sample for ""), its name as the researcher wrote it, and
    how messages about reading it name it."""
    configured = session_keys.text(config, "item_file", max_chars=1000, pattern=r"[^\x00-\x1f]*", default="")
    configured = configured.strip()
    if not configured:
        path = items_module.DEFAULT_ITEMS_PATH
        return path, path.name, f"The bundled item file {path.name!r}"
    path = Path(configured)
    what = f"The item file {configured!r} (session key 'item_file')"
    return (path if path.is_absolute() else PROJECT_ROOT / path), configured, what


def _read_item_file(config) -> tuple[str, items_module.ItemSet]:
    """The item file's text and its validated items; ValueError names the key, the file, the item and the field."""
    path, source, what = _item_file(config)
    text = researcher_files.read_text(path, what=what)
    items = items_module.parse_items_text(text, source=source, what=what)
    versions = sum(len(item.versions) for item in items.items)
    if versions > C.NUM_ROUNDS:
        raise ValueError(f"{what} holds {versions} test versions; this app shows at most {C.NUM_ROUNDS}.")
    items_module.build_sequence(items.items, seed=0)  # a set that cannot be ordered is refused now
    return text, items


def validate_session_config(config: dict) -> None:
    """Check this app's session keys and its item file before the session exists (lab_server/creation.py).

    Normalises ``ask_confidence`` to a bool and ``order_seed`` to an int in place.
    """
    problems = []
    for key, read in (
        ("ask_confidence", lambda: session_keys.flag(config, "ask_confidence", default=True)),
        (
            "order_seed",
            lambda: session_keys.whole_number(config, "order_seed", minimum=0, maximum=1_000_000_000, default=1),
        ),
    ):
        try:
            config[key] = read()
        except ValueError as error:
            problems.append(str(error))
    try:
        _read_item_file(config)
    except ValueError as error:
        problems.append(str(error))
    if problems:
        raise ValueError(" ".join(problems))


def creating_session(subsession: Subsession):
    session = subsession.session
    if subsession.round_number == 1:
        # The text kept here is the one checked now: later edits or moves of the file change nothing in this session.
        text, items = _read_item_file(session.config)
        session.vars["bias_items"] = text
        seed = session.config.get("order_seed", 1)
        for participant in session.get_participants():
            participant.vars["bias_plan"] = items_module.build_sequence(
                items.items, seed=f"{seed}:{participant.id_in_session}"
            )
    items = item_set(session)
    seed = session.config.get("order_seed", 1)
    for player in subsession.get_players():
        plan = player.participant.vars["bias_plan"]
        if player.round_number > len(plan):
            continue
        item_id, version = plan[player.round_number - 1]
        item = items.item(item_id)
        player.item_id, player.bias, player.version = item_id, item.bias, version
        if item.arguments and version == items_module.TREATMENT:
            order = items_module.argument_order(item, seed=f"{seed}:{player.participant.id_in_session}")
            player.arguments_shown = ",".join(order)


def tasks_over(player: Player) -> bool:
    """No test left for this participant after this round (study_flow shows the completion page)."""
    return player.round_number >= len(player.participant.vars.get("bias_plan", ()))


def presented(player: Player):
    item = item_set(player.session).item(player.item_id)
    order = player.arguments_shown.split(",") if player.field_maybe_none("arguments_shown") else None
    return item, items_module.present(item, player.version, argument_order=order)


def has_test(player: Player, kind: str) -> bool:
    return (
        study_flow.is_active(player) and bool(player.field_maybe_none("item_id")) and presented(player)[1].kind == kind
    )


def choice_choices(player: Player):
    return [[index, option.label] for index, option in enumerate(presented(player)[1].options)]


def test_vars(player: Player):
    plan_length = len(player.participant.vars["bias_plan"])
    study_flow.set_progress(player, done=player.round_number - 1, total=plan_length)
    player.participant.vars.setdefault("bias_shown_at", {}).setdefault(str(player.round_number), time.time())
    item, view = presented(player)
    return dict(
        shown=view,
        ask_confidence=player.session.config.get("ask_confidence", True),
        progress=study_flow.progress(player),
    )


def finish_test(player: Player):
    shown_at = player.participant.vars.get("bias_shown_at", {}).get(str(player.round_number))
    player.answered_at = time.time()
    player.seconds = round(player.answered_at - shown_at, 3) if shown_at else None
    study_flow.set_progress(player, done=player.round_number, total=len(player.participant.vars["bias_plan"]))


def export_rows(players):
    rows = []
    for player in players:
        if not player.field_maybe_none("item_id") or (
            player.field_maybe_none("answer") is None and not player.field_maybe_none("selected_arguments")
        ):
            continue
        item, view = presented(player)
        confidence = player.field_maybe_none("confidence")
        selected = player.field_maybe_none("selected_arguments")
        ids = study_flow.identifiers(player.participant)
        rows.append(
            items_module.export_row(
                item,
                view,
                respondent_kind="person",
                respondent_id=player.participant.code,
                item_set=item_set(player.session).name,
                position=player.round_number,
                answer=_option_value(view, player.field_maybe_none("choice")),
                selected=selected.split(",") if selected else None,
                confidence=confidence / 100 if confidence is not None else None,
                confidence_source="slider" if confidence is not None else "",
                session_code=player.session.code,
                participant_code=ids["participant_code"],
                prolific_pid=ids["prolific_pid"],
                study_id=ids["study_id"],
                seconds=player.field_maybe_none("seconds"),
                answered_at=iso_utc(player.field_maybe_none("answered_at")),
            )
        )
    return rows


def _option_value(view, choice):
    return view.options[choice].value if choice is not None and view.kind == "choice" else None


def custom_export(players):
    """One row per person x test x version, columns backend.bias.items.EXPORT_COLUMNS (as the LLM runner's)."""
    yield list(items_module.EXPORT_COLUMNS)
    for row in export_rows(players):
        yield [row[column] for column in items_module.EXPORT_COLUMNS]


def vars_for_admin_report(subsession: Subsession):
    players = [p for s in subsession.in_rounds(1, C.NUM_ROUNDS) for p in s.get_players()]
    return bias_report.admin_view(export_rows(players))


# PAGES
class Consent(study_flow.ConsentPage, Page):
    pass


class Instructions(Page):
    @staticmethod
    def is_displayed(player: Player):
        return player.round_number == 1 and study_flow.is_active(player)

    @staticmethod
    def vars_for_template(player: Player):
        return dict(
            n_tests=len(player.participant.vars["bias_plan"]),
            ask_confidence=player.session.config.get("ask_confidence", True),
        )


class Choice(Page):
    form_model = "player"

    @staticmethod
    def is_displayed(player: Player):
        return has_test(player, "choice")

    @staticmethod
    def get_form_fields(player: Player):
        return ["choice", "confidence"] if player.session.config.get("ask_confidence", True) else ["choice"]

    vars_for_template = staticmethod(test_vars)

    @staticmethod
    def error_message(player: Player, values):
        if player.session.config.get("ask_confidence", True) and values.get("confidence") is None:
            return {"confidence": "Please move the slider to say how sure you are."}

    @staticmethod
    def before_next_page(player: Player, timeout_happened):
        item, view = presented(player)
        option = view.options[player.choice]
        player.answer = float(option.value)
        if item.bias == items_module.ATTENTION_CHECK:
            player.is_correct = option.label == item.correct
        finish_test(player)


class Arguments(Page):
    form_model = "player"
    form_fields = ["selected_arguments"]
    vars_for_template = staticmethod(test_vars)

    @staticmethod
    def is_displayed(player: Player):
        return has_test(player, "arguments")

    @staticmethod
    def error_message(player: Player, values):
        raw = values.get("selected_arguments") or ""
        try:
            items_module.check_selection(presented(player)[1], [part for part in raw.split(",") if part])
        except ValueError:
            return {"selected_arguments": "Please tick at least one of the arguments listed."}

    @staticmethod
    def before_next_page(player: Player, timeout_happened):
        item, _ = presented(player)
        stances = [item.argument(argument_id).stance for argument_id in player.selected_arguments.split(",")]
        player.pro_selected, player.con_selected = stances.count("pro"), stances.count("con")
        finish_test(player)


class ScreenOut(study_flow.ScreenOutPage, Page):
    pass


class Completion(study_flow.CompletionPage, Page):
    """Shown as soon as tasks_over(player) says the participant has no task left (study_flow)."""


page_sequence = [Consent, Instructions, Choice, Arguments, ScreenOut, Completion]
