"""Which log a judge gets in each round, and finishing a judgement. The rows and the policy are shared with
social_eval (``study_flow/assignments.py`` over ``backend/core/assignment.py``)."""

from backend.core import clock
from backend.reasoning import task
from backend.reasoning.logs import failed_queries_field
from study_flow import assignments

from .study import load_player_log, log_files, settings_of


def assignment_rows(player_or_subsession):
    """The session's rows as the policy reads them."""
    from . import Assignment

    return assignments.policy_rows(Assignment, assignments.root(player_or_subsession).id)


def judge_total(player) -> int:
    return min(settings_of(player.session).logs_per_judge, len(log_files(player)))


def judged_count(player) -> int:
    code = player.participant.code
    return sum(row["participant"] == code and row["status"] == "done" for row in assignment_rows(player))


def assign_log(player) -> bool:
    """Give the player a log for this round (least covered first); False when none is left for them."""
    from . import Assignment

    if player.field_maybe_none("log_file"):
        return True
    code, now = player.participant.code, clock.now()
    file, reserve = task.next_log(
        log_files(player), assignment_rows(player), participant=code, settings=settings_of(player.session), now=now
    )
    if file is None:
        return False
    if reserve:
        assignments.reserve(
            Assignment,
            assignments.root(player).id,
            item_id=file,
            participant_code=code,
            round_number=player.round_number,
            now=now,
        )
    player.log_file = file
    log = load_player_log(player)
    player.game, player.attempts = log.game, len(log.attempts)
    player.orig_choice, player.final_choice = log.orig_choice or "", log.final_choice or ""
    player.failed_queries = failed_queries_field(log)
    return True


def tasks_over(player) -> bool:
    """No log left for this judge after this round (study_flow shows the completion page)."""
    return not player.field_maybe_none("log_file") or player.round_number >= judge_total(player)


def finish_judgement(player) -> None:
    """The judge's reservation of the log is done."""
    from . import Assignment

    held = assignments.held_rows(
        Assignment, assignments.root(player).id, participant_code=player.participant.code, item_id=player.log_file
    )
    assignments.finish(held, now=clock.now())
