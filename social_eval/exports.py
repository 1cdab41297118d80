"""The app's data downloads (oTree's ``custom_export_*``): ratings long and wide, qualification, assignment log.

Columns: ``backend/codebook/social.py`` (one definition, read by the codebook too). Tests are left out of an export
of all sessions (``study_flow.test_data``). A stored annotation that cannot be read in part (a rating out of its scale,
a missing explanation, an episode no longer stored) is exported with what is readable and an ``integrity`` note; it
never fails the export of the others.
"""

import json

import study_flow
from backend import codebook
from backend.core.csvio import iso_utc
from backend.social import forms as social_forms
from backend.social.rubrics import load_rubric
from study_flow import assignments, test_data

from .study import episode, finished_players, maybe, root, rubric, settings_of, study

LONG = codebook.names("social_eval", "custom_export_ratings_long")
WIDE = codebook.names("social_eval", "custom_export_ratings_wide")


def _number(player, name, digits=1):
    value = maybe(player, name)
    return round(value, digits) if isinstance(value, (int, float)) and not isinstance(value, bool) else ""


def record(player, *, problems=None):
    """One finished annotation: its ratings (None where a stored rating is unreadable) and who, when, how long.
    What could not be read is appended to ``problems`` when given."""
    participant = player.participant
    session_rubric = rubric(player.session)
    values = {name: maybe(player, name) for name in social_forms.form_fields(session_rubric)}
    ratings, found = social_forms.readable_ratings(values, session_rubric)
    if problems is not None:
        problems += found
    return dict(
        ratings=ratings,
        session_code=player.session.code,
        annotator=participant.code,
        **study_flow.identifiers(participant),
        round=player.round_number,
        seconds_spent=_number(player, "seconds_spent"),
        attention_passed="" if maybe(player, "attention_passed") is None else int(bool(player.attention_passed)),
        shown_at=_time(player, "shown_at"),
        submitted_at=_time(player, "submitted_at"),
        step_times_ok="" if maybe(player, "step_times_ok") is None else int(bool(player.step_times_ok)),
        step_times=_step_times(player, problems),
    )


def _step_times(player, problems):
    """Rating field -> seconds on its step, as stored (judged when stored; a stored text that is not is flagged)."""
    stored = maybe(player, "step_seconds")
    if not stored:
        return {}
    try:
        times = json.loads(stored)
        if isinstance(times, dict) and all(isinstance(v, (int, float)) for v in times.values()):
            return times
    except (TypeError, ValueError):
        pass
    if problems is not None:
        problems.append("step_seconds: unreadable")
    return {}


def _time(player, name):
    value = maybe(player, name)
    return iso_utc(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else ""


def qualification(players, session):
    """Per participant of a qualification (or attention) session: gold episodes rated, passed, largest deviation."""
    results = {}
    for player in finished_players(players):
        if not player.is_gold:
            continue
        entry = results.setdefault(
            player.participant.code, dict(player=player, rated=0, passed=0, worst=0.0, last_submitted_at=0.0)
        )
        entry["rated"] += 1
        entry["last_submitted_at"] = max(entry["last_submitted_at"], player.submitted_at)
        entry["passed"] += int(bool(maybe(player, "attention_passed")))
        entry["worst"] = max(entry["worst"], maybe(player, "gold_max_difference") or 0.0)
    required = len(study(session)["gold_ids"]) if settings_of(session).qualification_mode else None
    for entry in results.values():
        complete = entry["rated"] == required if required else entry["rated"] > 0
        entry["qualified"] = complete and entry["passed"] == entry["rated"]
    return results


def _annotations(players):
    """(player, record, episode or None, rubric, problems) of every finished annotation the export writes."""
    for player in finished_players(test_data.exported(players)):
        session = player.session
        problems = []
        rated = None
        try:
            rated = episode(session.code, root(player).id, player.episode_id)
        except Exception as error:  # noqa: BLE001  (an episode that is no longer stored, or stored broken)
            problems.append(f"episode {player.episode_id!r}: {type(error).__name__}")
        yield player, record(player, problems=problems), rated, rubric(session), problems


def _cells(player, problems):
    return dict(test_data.session_cells(player.session, player.participant), integrity="; ".join(problems)[:500])


def ratings_long(players):
    """One row per rating: episode, agent, dimension, rating, reasoning (escaped), annotator, Prolific IDs, time."""
    yield list(LONG)
    for player, annotation, rated, session_rubric, problems in _annotations(players):
        if rated is None:
            row = dict(dict.fromkeys(LONG, ""), **annotation, episode_id=player.episode_id)
            row.update(_cells(player, problems))
            yield [row.get(column, "") for column in LONG]
            continue
        slots = {dimension.key: slot for slot, dimension in enumerate(session_rubric.dimensions, start=1)}
        for row in social_forms.long_rows(annotation, rated, session_rubric):
            field = social_forms.rating_field(row["agent_index"], slots[row["dimension"]])
            row.update(_cells(player, problems), step_seconds=annotation["step_times"].get(field, ""))
            row["step_times_ok"] = annotation["step_times_ok"]
            yield [row.get(column, "") for column in LONG]


def ratings_wide(players):
    """One row per annotation with Sotopia's rating columns (goal_1, goal_reasoning_1, ...). One header for the whole
    file: sessions with different rubrics share it, each row filling its own dimensions' columns."""
    rows, header = [], list(WIDE)
    for player, annotation, rated, session_rubric, problems in _annotations(players):
        header += [column for column in social_forms.dimension_columns(session_rubric) if column not in header]
        values = social_forms.wide_values(annotation, rated) if rated is not None else dict(annotation)
        values.setdefault("episode_id", player.episode_id)
        values["step_times_ok"] = annotation["step_times_ok"]
        for agent in social_forms.AGENTS:
            for slot, dimension in enumerate(session_rubric.dimensions, start=1):
                seconds = annotation["step_times"].get(social_forms.rating_field(agent, slot), "")
                values[f"{dimension.key}_seconds_{agent}"] = seconds
        values.update(_cells(player, problems))
        rows.append(values)
    yield header if rows else header + social_forms.dimension_columns(load_rubric())
    for values in rows:
        yield [values.get(column, "") for column in header]


QUALIFIED = codebook.names("social_eval", "custom_export_qualified")


def qualified(players):
    """Gold-episode results per annotator; `qualified` = every gold rating within gold_tolerance."""
    yield list(QUALIFIED)
    sessions = {}
    for player in test_data.exported(players):
        sessions.setdefault(player.session.code, (player.session, []))[1].append(player)
    for session, session_players in sessions.values():
        try:
            results = qualification(session_players, session)
        except Exception as error:  # noqa: BLE001  (a broken stored annotation: flag the session's annotators)
            results = {
                p.participant.code: dict(player=p, broken=f"{type(error).__name__}: {error}"[:300])
                for p in finished_players(session_players)
            }
        for entry in results.values():
            participant = entry["player"].participant
            row = dict(test_data.session_cells(session, participant), **study_flow.identifiers(participant))
            if "broken" in entry:
                row["integrity"] = "gold results unreadable: " + entry["broken"]
            else:
                row.update(
                    gold_rated=entry["rated"],
                    gold_passed=entry["passed"],
                    max_difference=entry["worst"] if entry["worst"] != float("inf") else "",
                    qualified=int(entry["qualified"]),
                    last_submitted_at=iso_utc(entry["last_submitted_at"]),
                )
            yield [row.get(column, "") for column in QUALIFIED]


# The assignment log's columns: export name <- the row's column (study_flow.assignments.log_rows).
ASSIGNMENT_SOURCES = {"episode_id": "item_id", "annotator": "participant_code", "done_at": "finished_at"}
ASSIGNMENT_SOURCES.update(round="round_number")


def assignment_log(players):
    """The assignment log: which annotator held or finished which episode, and when (ISO-8601 UTC)."""
    from . import Assignment

    columns = codebook.names("social_eval", "custom_export_assignments")
    return assignments.export(Assignment, players, {name: ASSIGNMENT_SOURCES.get(name, name) for name in columns})


codebook_export = codebook.export_function("social_eval")  # the Data page's download of this app's codebook
