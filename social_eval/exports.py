"""The app's data downloads (oTree's ``custom_export_*``): ratings long and wide, qualification, assignment log."""

import study_flow
from backend.core.csvio import iso_utc
from backend.social import forms as social_forms
from backend.social import report as social_report
from backend.social.rubrics import load_rubric
from study_flow import assignments

from .form import submitted_ratings
from .study import episode, finished_players, maybe, root, rubric, settings_of, study


def record(player):
    """One finished annotation: its ratings and who, when, how long."""
    participant = player.participant
    return dict(
        ratings=submitted_ratings(player),
        session_code=player.session.code,
        annotator=participant.code,
        **study_flow.identifiers(participant),
        round=player.round_number,
        seconds_spent=round(player.seconds_spent, 1) if maybe(player, "seconds_spent") is not None else "",
        attention_passed="" if maybe(player, "attention_passed") is None else int(player.attention_passed),
        shown_at=iso_utc(maybe(player, "shown_at")),
        submitted_at=iso_utc(player.submitted_at),
    )


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


def _export_groups(players):
    by_session = {}
    for player in finished_players(players):
        by_session.setdefault(player.session.code, []).append(player)
    for session_players in by_session.values():
        session = session_players[0].session
        yield session, root(session_players[0]), rubric(session), session_players


def ratings_long(players):
    """One row per rating: episode, agent, dimension, rating, reasoning (escaped), annotator, Prolific IDs, time."""
    yield social_report.EXPORT_COLUMNS
    for session, root_subsession, session_rubric, session_players in _export_groups(players):
        for player in session_players:
            rated = episode(session.code, root_subsession.id, player.episode_id)
            for row in social_forms.long_rows(record(player), rated, session_rubric):
                yield [row[column] for column in social_report.EXPORT_COLUMNS]


def ratings_wide(players):
    """One row per annotation with Sotopia's column names (goal_1, goal_reasoning_1, ...). One header for the whole
    file: sessions with different rubrics share it, each row filling its own dimensions' columns."""
    rows, header = [], list(social_forms.WIDE_HEAD)
    for session, root_subsession, session_rubric, session_players in _export_groups(players):
        header += [column for column in social_forms.wide_columns(session_rubric) if column not in header]
        for player in session_players:
            rated = episode(session.code, root_subsession.id, player.episode_id)
            rows.append(social_forms.wide_values(record(player), rated))
    yield header if rows else social_forms.wide_columns(load_rubric())
    for values in rows:
        yield [values.get(column, "") for column in header]


QUALIFIED_COLUMNS = [
    "session_code",
    "participant_code",
    "prolific_pid",
    "study_id",
    "prolific_session_id",
    "gold_rated",
    "gold_passed",
    "max_difference",
    "qualified",
    "last_submitted_at",
]


def qualified(players):
    """Gold-episode results per annotator; `qualified` = every gold rating within gold_tolerance."""
    yield QUALIFIED_COLUMNS
    sessions = {}
    for player in players:
        sessions.setdefault(player.session.code, (player.session, []))[1].append(player)
    for code, (session, session_players) in sessions.items():
        for participant_code, entry in qualification(session_players, session).items():
            identity = study_flow.identifiers(entry["player"].participant)
            worst = entry["worst"] if entry["worst"] != float("inf") else ""
            yield [
                code,
                participant_code,
                identity["prolific_pid"],
                identity["study_id"],
                identity["prolific_session_id"],
                entry["rated"],
                entry["passed"],
                worst,
                int(entry["qualified"]),
                iso_utc(entry["last_submitted_at"]),
            ]


# The assignment log's columns: export name <- the row's column (study_flow.assignments.log_rows).
ASSIGNMENT_COLUMNS = {
    "session_code": "session_code",
    "episode_id": "item_id",
    "annotator": "participant_code",
    "participant_code": "participant_code",
    "prolific_pid": "prolific_pid",
    "study_id": "study_id",
    "prolific_session_id": "prolific_session_id",
    "status": "status",
    "reserved_at": "reserved_at",
    "done_at": "finished_at",
    "round": "round_number",
    "is_gold": "is_gold",
}


def assignment_log(players):
    """The assignment log: which annotator held or finished which episode, and when (ISO-8601 UTC)."""
    from . import Assignment

    return assignments.export(Assignment, players, ASSIGNMENT_COLUMNS)
