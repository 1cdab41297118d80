"""The session's logs and settings as the pages read them (the models are imported from the app when needed)."""

from pathlib import Path

from backend.reasoning import task
from backend.reasoning.logs import format_log, parse_log
from backend.reasoning.protocol import PROTOCOL_COLUMNS
from lab_server import study_pages
from study_flow.assignments import root  # the round-1 subsession, which holds the session-wide rows

PROJECT_ROOT = Path(__file__).resolve().parent.parent

_SETTINGS = {}  # session code -> TaskSettings, built once per process (its keys were checked at creation)


def max_logs_per_judge():
    from . import C

    return C.NUM_ROUNDS


def settings_of(session) -> task.TaskSettings:
    # Called by several hooks of every page: the keys are not checked and extra_games not parsed again each time.
    # The logs live in LogItem rows from creation on; an uploaded JSON of them (up to 25 MB) is not parsed here.
    if session.code not in _SETTINGS:
        _SETTINGS[session.code] = task.task_settings(
            {**session.config, "logs_upload": ""}, max_logs_per_judge=max_logs_per_judge()
        )
    return _SETTINGS[session.code]


def validate_session_config(config: dict) -> None:
    """Check every key and every log before oTree creates a row (lab_server.creation); store typed values."""
    settings = task.task_settings(config, max_logs_per_judge=max_logs_per_judge())
    task.load_logs(settings, project_root=PROJECT_ROOT)  # raises with every file and line at fault
    task.check_log_language(settings, config, project_root=PROJECT_ROOT)  # declared in another language: refused
    config.update(task.normalised_config(settings))


def create(subsession) -> None:
    """Copy each log's text into the session: later edits or moves of the files change no running session."""
    from . import LogItem

    settings = task.task_settings(subsession.session.config, max_logs_per_judge=max_logs_per_judge())
    for log in task.load_logs(settings, project_root=PROJECT_ROOT):
        LogItem.create(subsession=subsession, file=log.filename, game=log.game, text=format_log(log))


def log_files(player_or_subsession) -> list[str]:
    from . import LogItem

    return [item.file for item in LogItem.filter(subsession=root(player_or_subsession))]


def load_player_log(player):
    from . import LogItem

    [item] = LogItem.filter(subsession=root(player), file=player.log_file)
    return parse_log(item.text, item.file, game=item.game)


CONFUSION_LABELS = ("TP", "FP", "TN", "FN")


def checked_verdict(player) -> tuple[dict, list[str]]:
    """A judge's protocol cells as stored, with each cell that cannot be a verdict's left empty, and what was wrong
    (an empty list for a sound verdict). Readers use it so one corrupted row never fails a page or an export."""
    problems = []
    cells = {"file": player.field_maybe_none("log_file")}
    for column in PROTOCOL_COLUMNS[1:]:
        cells[column] = player.field_maybe_none(column)

    def refuse(column, why):
        problems.append(f"{column}: {str(cells[column])[:40]!r} {why}")
        cells[column] = None

    for column in ("orig_cor", "fin_cor"):
        if cells[column] is not None and cells[column] not in (0, 1):
            refuse(column, "is not 0 or 1")
    if cells["con_mat"] not in CONFUSION_LABELS:
        refuse("con_mat", f"is not one of {', '.join(CONFUSION_LABELS)}")
    attempts = cells["attempts"]
    if attempts is not None and (isinstance(attempts, bool) or not isinstance(attempts, int) or not 1 <= attempts <= 5):
        refuse("attempts", "is not a whole number from 1 to 5")
    for column in ("file", "game", "orig_choice", "final_choice", "err_type", "sentence", "remarks", "failed_queries"):
        if cells[column] is not None and not isinstance(cells[column], str):
            refuse(column, "is not text")
    return cells, problems


def verdict_rows(players):
    """Protocol rows of the finished, readable verdicts among ``players`` (a corrupted one is flagged in the export)."""
    rows = []
    for player in players:
        if player.field_maybe_none("con_mat"):
            cells, problems = checked_verdict(player)
            if not problems:
                rows.append(cells)
    return rows


def session_players(session):
    """Every player of this app in the session, all rounds (one round = one log per judge)."""
    from . import Subsession

    return [
        player
        for round_subsession in session.get_subsessions()
        if isinstance(round_subsession, Subsession)
        for player in round_subsession.get_players()
    ]


def launch_facts(session, facts) -> None:
    """The launch check's facts of a payoff_reasoning_eval session: how its logs are covered (none in a pilot
    overlap)."""
    config = session.config
    if config.get("pilot_overlap"):
        return
    first = next(sub for sub in session.get_subsessions() if sub.round_number == 1)
    facts["coverage"] = dict(
        items=len(log_files(first)),
        per_item=int(config.get("judges_per_log", 3)),
        per_person=int(config.get("logs_per_judge", 6)),
        unit="log",
    )


study_pages.register_launch_facts("payoff_reasoning_eval", launch_facts)
