import html
import time
from pathlib import Path

from otree.api import *

import lab_server  # noqa: F401  (guards oTree's own pages, exports and session creation)
import study_flow
from backend.core.csvio import iso_utc
from backend.reasoning import task
from backend.reasoning.logs import failed_queries_field, format_log, parse_log
from backend.reasoning.protocol import PROTOCOL_COLUMNS, export_cell

doc = """
payoff_reasoning_eval: people judge whether a language model reasoned correctly about the payoffs of a 2x2 game
(Prisoner's Dilemma, Stag Hunt, Hawk-Dove), following the LELMA evaluation protocol. Each log is judged by
judges_per_log people; the export is the protocol's CSV, the admin report compares the automated check with people.
"""

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DRAFT_KEY = "payoff_reasoning_draft"


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
    consent_given = models.BooleanField(label="", widget=widgets.RadioSelect)
    log_file = models.StringField(blank=True)
    game = models.StringField(blank=True)
    attempts = models.IntegerField(blank=True)
    orig_choice = models.StringField(blank=True)
    final_choice = models.StringField(blank=True)
    failed_queries = models.LongStringField(blank=True)
    orig_cor = models.IntegerField(
        label="Is the reasoning of the first response correct?", choices=C.VERDICT_CHOICES, widget=widgets.RadioSelect
    )
    fin_cor = models.IntegerField(
        label="Is the reasoning of the last response correct?", choices=C.VERDICT_CHOICES, widget=widgets.RadioSelect
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


class Assignment(ExtraModel):
    """Who judges which log (see backend/core/assignment.py): reserved, then done."""

    subsession = models.Link(Subsession)
    item_id = models.StringField()
    participant_code = models.StringField()
    status = models.StringField()
    reserved_at = models.FloatField()
    finished_at = models.FloatField(blank=True)


# FUNCTIONS
def consent_given_choices(player: Player):
    return study_flow.consent_choices(player.session.config.get("language"))


_SETTINGS = {}  # session code -> TaskSettings, built once per process (its keys were checked at creation)


def settings_of(session) -> task.TaskSettings:
    # Called by several hooks of every page: the keys are not checked and extra_games not parsed again each time.
    # The logs live in LogItem rows from creation on; an uploaded JSON of them (up to 25 MB) is not parsed here.
    if session.code not in _SETTINGS:
        _SETTINGS[session.code] = task.task_settings(
            {**session.config, "logs_upload": ""}, max_logs_per_judge=C.NUM_ROUNDS
        )
    return _SETTINGS[session.code]


def validate_session_config(config: dict) -> None:
    """Check every key and every log before oTree creates a row (lab_server.creation); store typed values."""
    settings = task.task_settings(config, max_logs_per_judge=C.NUM_ROUNDS)
    task.load_logs(settings, project_root=PROJECT_ROOT)  # raises with every file and line at fault
    config.update(task.normalised_config(settings))


def creating_session(subsession: Subsession):
    if subsession.round_number != 1:
        return
    settings = task.task_settings(subsession.session.config, max_logs_per_judge=C.NUM_ROUNDS)
    # Each log's text is copied into the session here: later edits or moves of the files change no running session.
    for log in task.load_logs(settings, project_root=PROJECT_ROOT):
        LogItem.create(subsession=subsession, file=log.filename, game=log.game, text=format_log(log))


def first_subsession(player_or_subsession):
    subsession = getattr(player_or_subsession, "subsession", player_or_subsession)
    return subsession.in_round(1)


def assignment_rows(subsession):
    return [
        dict(item_id=row.item_id, participant=row.participant_code, status=row.status, reserved_at=row.reserved_at)
        for row in Assignment.filter(subsession=first_subsession(subsession))
    ]


def load_player_log(player: Player):
    [item] = LogItem.filter(subsession=first_subsession(player), file=player.log_file)
    return parse_log(item.text, item.file, game=item.game)


def judge_total(player: Player) -> int:
    settings = settings_of(player.session)
    return min(settings.logs_per_judge, len(LogItem.filter(subsession=first_subsession(player))))


def judged_count(player: Player) -> int:
    code = player.participant.code
    return sum(row["participant"] == code and row["status"] == "done" for row in assignment_rows(player.subsession))


def assign_log(player: Player) -> bool:
    """Give the player a log for this round (least covered first); False when none is left for them."""
    if player.field_maybe_none("log_file"):
        return True
    first, code, now = first_subsession(player), player.participant.code, time.time()
    files = [item.file for item in LogItem.filter(subsession=first)]
    file, reserve = task.next_log(
        files, assignment_rows(first), participant=code, settings=settings_of(player.session), now=now
    )
    if file is None:
        return False
    if reserve:
        Assignment.create(subsession=first, item_id=file, participant_code=code, status="reserved", reserved_at=now)
    player.log_file = file
    log = load_player_log(player)
    player.game, player.attempts = log.game, len(log.attempts)
    player.orig_choice, player.final_choice = log.orig_choice or "", log.final_choice or ""
    player.failed_queries = failed_queries_field(log)
    return True


def tasks_over(player: Player) -> bool:
    """No log left for this judge after this round (study_flow shows the completion page)."""
    return not player.field_maybe_none("log_file") or player.round_number >= judge_total(player)


def verdict_rows(players):
    """Protocol rows of the finished verdicts among ``players``."""
    done = [player for player in players if player.field_maybe_none("con_mat")]
    return [{"file": p.log_file, **{c: p.field_maybe_none(c) for c in PROTOCOL_COLUMNS[1:]}} for p in done]


def session_players(session) -> list[Player]:
    """Every player of this app in the session, all rounds (one round = one log per judge)."""
    return [
        player
        for round_subsession in session.get_subsessions()
        if isinstance(round_subsession, Subsession)
        for player in round_subsession.get_players()
    ]


def vars_for_admin_report(subsession: Subsession):
    first = first_subsession(subsession)
    players = session_players(subsession.session)
    return task.admin_report(
        [item.file for item in LogItem.filter(subsession=first)],
        assignment_rows(first),
        verdict_rows(players),
        settings=settings_of(subsession.session),
        session_code=subsession.session.code,
        now=time.time(),
    )


def custom_export(players):
    """The protocol's CSV (comma-separated, as oTree writes every export); one row per judge and log."""
    yield list(PROTOCOL_COLUMNS)
    for row in verdict_rows(players):
        yield [export_cell(column, row[column]) for column in PROTOCOL_COLUMNS]


def _finished_times(players) -> dict[tuple[str, str, str], float]:
    """(session code, participant code, file) -> when that judgement was saved, from the assignment log."""
    roots = {player.session.code: first_subsession(player) for player in players if player.round_number == 1}
    return {
        (code, row.participant_code, row.item_id): row.finished_at
        for code, root in roots.items()
        for row in Assignment.filter(subsession=root)
        if row.status == "done"
    }


def _prolific_ids(participant) -> tuple[str, str]:
    """(Prolific PID, study id) as the welcome page stored them (study_flow.record_arrival)."""
    ids = study_flow.identifiers(participant)
    return ids["prolific_pid"], ids["study_id"]


def custom_export_protocol_with_ids(players):
    """The protocol's 12 columns plus who judged, in which session and study, and when (ISO-8601 UTC)."""
    yield [*PROTOCOL_COLUMNS, *task.IDENTITY_COLUMNS]
    finished = _finished_times(players)
    for player in players:
        if not player.field_maybe_none("con_mat"):
            continue
        [row] = verdict_rows([player])
        participant, code = player.participant, player.session.code
        yield [export_cell(column, row[column]) for column in PROTOCOL_COLUMNS] + [
            participant.code,
            *_prolific_ids(participant),
            code,
            iso_utc(finished.get((code, participant.code, player.log_file))),
        ]


def custom_export_assignments(players):
    """Who judged which log and when (reservations included; ISO-8601 UTC times), for auditing the assignment."""
    yield [
        "session_code",
        "file",
        "participant_code",
        "status",
        "reserved_at",
        "finished_at",
        "prolific_pid",
        "study_id",
    ]
    sessions = {player.session.code: player.subsession for player in players if player.round_number == 1}
    ids = {player.participant.code: _prolific_ids(player.participant) for player in players if player.round_number == 1}
    for code, subsession in sessions.items():
        for row in Assignment.filter(subsession=subsession):
            yield [
                code,
                row.item_id,
                row.participant_code,
                row.status,
                iso_utc(row.reserved_at),
                iso_utc(row.finished_at),  # an ExtraModel field is None until set
                *ids.get(row.participant_code, ("", "")),
            ]


# PAGES
class Consent(study_flow.ConsentPage, Page):
    pass


class Instructions(Page):
    @staticmethod
    def is_displayed(player: Player):
        return player.round_number == 1 and study_flow.is_active(player)

    @staticmethod
    def vars_for_template(player: Player):
        settings = settings_of(player.session)
        games = sorted({item.game for item in LogItem.filter(subsession=first_subsession(player))})
        return dict(
            games=[{"name": settings.games[code].name, "table": settings.games[code].table()} for code in games],
            error_types=task.error_type_help(),
            logs_per_judge=judge_total(player),
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
        log = load_player_log(player)
        settings = settings_of(player.session)
        return dict(
            sample=task.judging_view(log, settings.games[log.game]),
            error_types=task.error_type_help(),
            progress=study_flow.progress(player),
            submitted={
                "err_type": "",
                "marked_sentences": "",
                **player.participant.vars.get(DRAFT_KEY, {}).get(player.log_file, {}),
            },
        )

    @staticmethod
    def error_message(player: Player, values):
        # Kept so that a rejected page shows the judge's marks and ticks again.
        player.participant.vars[DRAFT_KEY] = {
            player.log_file: {key: values.get(key) or "" for key in ("err_type", "marked_sentences")}
        }
        problems = task.check_verdict(
            load_player_log(player),
            orig_cor=values.get("orig_cor"),
            fin_cor=values.get("fin_cor"),
            err_type=values.get("err_type"),
            marked=values.get("marked_sentences"),
            remarks=values.get("remarks"),
        )
        return html.escape(" ".join(problems)) or None  # oTree prints the message unescaped

    @staticmethod
    def before_next_page(player: Player, timeout_happened):
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
        for record in Assignment.filter(
            subsession=first_subsession(player), item_id=player.log_file, participant_code=player.participant.code
        ):
            if record.status == "reserved":
                record.status, record.finished_at = "done", time.time()
        study_flow.set_progress(player, done=judged_count(player), total=judge_total(player))
        player.participant.vars.pop(DRAFT_KEY, None)


class ScreenOut(study_flow.ScreenOutPage, Page):
    pass


class Completion(study_flow.CompletionPage, Page):
    """Shown as soon as tasks_over(player) says the participant has no task left (study_flow)."""


page_sequence = [Consent, Instructions, Judge, ScreenOut, Completion]
