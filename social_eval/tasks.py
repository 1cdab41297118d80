"""Which episode an annotator rates in each round: the plan (regular and gold slots), reserving, renewing or
swapping an expired reservation, finishing. The rows and the policy are shared with payoff_reasoning_eval
(``study_flow/assignments.py`` over ``backend/core/assignment.py``).
"""

import json

from sqlalchemy.orm import object_session

import study_flow
from backend.core import assignment, clock
from backend.social import forms as social_forms
from backend.social import step_times
from study_flow import assignments, tallies

from .study import maybe, player_episode, root_id, rubric, settings_of, study


def plan(player):
    """The participant's task slots (episode ids or ``gold:<id>``), drawn once."""
    participant_vars = player.participant.vars
    if "social_eval_plan" not in participant_vars:
        settings = settings_of(player.session)
        participant_vars["social_eval_plan"] = social_forms.task_plan(
            regular=settings.episodes_per_annotator,
            gold_ids=study(player.session)["gold_ids"],
            attention_checks=settings.attention_checks,
            rotation=player.participant.id_in_session - 1,
            qualification=settings.qualification_mode,
        )
        participant_vars["social_eval_done"] = 0
        study_flow.set_progress(player, done=0, total=len(participant_vars["social_eval_plan"]))
    return participant_vars["social_eval_plan"]


def _regular_done(player):
    return sum(1 for p in player.in_previous_rounds() if maybe(p, "submitted_at") is not None and not p.is_gold)


def _pick_regular(player, now):
    """Reserve the next regular episode for this annotator (least covered first), or None when none is left."""
    from . import Assignment

    settings = settings_of(player.session)
    item = tallies.choose(
        object_session(player),
        Assignment,
        root_id(player),
        settings.handed_out(study(player.session)["regular_ids"]),  # a pilot (pilot_overlap): the shared episodes
        owner=player.session.code,
        participant=player.participant.code,
        per_item=settings.per_episode,
        now=now,
        timeout_s=settings.reservation_timeout_s,
    )
    if item is None:
        return None
    return _reserve(player, item, now, is_gold=False)


def _reserve(player, item_id, now, *, is_gold):
    from . import Assignment

    return assignments.reserve(
        Assignment,
        root_id(player),
        item_id=item_id,
        participant_code=player.participant.code,
        round_number=player.round_number,
        now=now,
        is_gold=is_gold,
    )


def _give(player, row, now):
    player.episode_id = row.item_id
    player.is_gold = row.is_gold
    player.shown_at = now


def end_tasks(player):
    participant_vars = player.participant.vars
    participant_vars["social_eval_over"] = True
    if _regular_done(player) == 0 and not settings_of(player.session).qualification_mode:
        participant_vars["social_eval_nothing_left"] = True


def ensure_task(player):
    """Give the player this round's episode if it has none yet; False when there is no task this round."""
    if not study_flow.is_active(player) or player.participant.vars.get("social_eval_over"):
        return False
    slots = plan(player)
    if player.round_number > len(slots):
        return False
    if player.episode_id:
        return True
    now, slot = clock.now(), slots[player.round_number - 1]
    if slot.startswith("gold:"):
        row = _reserve(player, slot[len("gold:") :], now, is_gold=True)
    else:
        row = _pick_regular(player, now)
        if row is None:
            end_tasks(player)
            return False
    _give(player, row, now)
    return True


def tasks_over(player):
    """No episode left for this annotator after this round (study_flow shows the completion page)."""
    participant_vars = player.participant.vars
    if participant_vars.get("social_eval_over"):
        return True
    slots = participant_vars.get("social_eval_plan")
    return slots is not None and player.round_number >= len(slots)


def my_row(player):
    """The player's current assignment row (rows of released reservations stay in the log)."""
    from . import Assignment

    (row,) = assignments.held_rows(
        Assignment,
        root_id(player),
        participant_code=player.participant.code,
        item_id=player.episode_id,
        round_number=player.round_number,
    )
    return row


def _lost(player, row, now):
    """An expired reservation whose episode has its annotators without this person."""
    from . import Assignment

    settings = settings_of(player.session)
    timeout_s = settings.reservation_timeout_s
    return assignments.is_expired(row, now=now, timeout_s=timeout_s) and not assignments.still_needed(
        Assignment, root_id(player), row, now=now, timeout_s=timeout_s, per_item=settings.per_episode
    )


def refresh_reservation(player):
    """On (re)loading the rating page: renew an expired reservation if the episode is still needed, else swap it."""
    if not player.episode_id or player.is_gold:
        return
    now, row = clock.now(), my_row(player)
    if not assignments.is_expired(row, now=now, timeout_s=settings_of(player.session).reservation_timeout_s):
        return
    if not _lost(player, row, now):
        row.reserved_at = now
        return
    assignments.release(row)
    player.episode_id = ""
    new_row = _pick_regular(player, now)
    if new_row is None:
        end_tasks(player)
    else:
        _give(player, new_row, now)


def reservation_lost_message(player):
    """The rating page's refusal when the person's reservation expired and the episode went to others."""
    if not player.episode_id or player.is_gold or not _lost(player, my_row(player), clock.now()):
        return None
    minutes = assignment.minutes_shown(settings_of(player.session).reservation_timeout_s)
    return social_forms.reservation_lost_message(minutes, language=player.session.config.get("language"))


def record_step_times(player):
    """Keep the browser's time per rating step only when it is plausible (``backend.social.step_times``)."""
    fields = [name for name in social_forms.form_fields(rubric(player.session)) if name.startswith("rating_")]
    times, _ = step_times.judged_step_seconds(
        player.field_maybe_none("step_seconds"), fields=fields, seconds_spent=player.seconds_spent
    )
    player.step_seconds = json.dumps(times) if times else ""
    player.step_times_ok = times is not None


def finish_task(player):
    """The rating page was submitted: the row is done, the time and (for a gold episode) the check recorded."""
    if not player.episode_id:
        end_tasks(player)
        return
    from .form import submitted_ratings

    now = clock.now()
    assignments.finish([my_row(player)], now=now)
    player.submitted_at = now
    player.seconds_spent = now - player.shown_at
    record_step_times(player)
    if player.is_gold:
        ratings = {key: rating for key, (rating, _) in submitted_ratings(player).items()}
        passed, worst = social_forms.gold_check(
            ratings, player_episode(player), tolerance=settings_of(player.session).gold_tolerance
        )
        player.attention_passed = bool(passed)
        player.gold_max_difference = float(min(worst, 1e9))
    participant_vars = player.participant.vars
    participant_vars["social_eval_done"] = participant_vars.get("social_eval_done", 0) + 1
    study_flow.set_progress(
        player, done=participant_vars["social_eval_done"], total=len(participant_vars["social_eval_plan"])
    )
