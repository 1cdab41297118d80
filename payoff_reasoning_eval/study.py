"""The session's logs and settings as the pages read them (the models are imported from the app when needed)."""

from pathlib import Path

from backend.reasoning import task
from backend.reasoning.logs import format_log, parse_log
from backend.reasoning.protocol import PROTOCOL_COLUMNS
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


def verdict_rows(players):
    """Protocol rows of the finished verdicts among ``players``."""
    done = [player for player in players if player.field_maybe_none("con_mat")]
    return [{"file": p.log_file, **{c: p.field_maybe_none(c) for c in PROTOCOL_COLUMNS[1:]}} for p in done]


def session_players(session):
    """Every player of this app in the session, all rounds (one round = one log per judge)."""
    from . import Subsession

    return [
        player
        for round_subsession in session.get_subsessions()
        if isinstance(round_subsession, Subsession)
        for player in round_subsession.get_players()
    ]
