"""bias_tests: the export, one row per person x test x version (the columns of the LLM runner's files)."""

import study_flow
from backend.bias.export import EXPORT_COLUMNS, export_row
from backend.core.csvio import iso_utc

from .loading import item_set, presented


def export_rows(players) -> list[dict]:
    """The export rows of the players who answered (``backend.bias.export.export_row``, as the LLM runner's)."""
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
            export_row(
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


# The LLM runner's columns that are empty for every person (a model's run, reply and how it answered).
MODEL_ONLY_COLUMNS = (
    "model",
    "run",
    "option_probabilities",
    "attempts",
    "raw_reply",
    "answer_mode",
    "answer_source",
    "problem",
    "reasoning",
)
# The app's export: session_code first, then the runner's columns without the model-only ones.
PERSON_COLUMNS = ("session_code",) + tuple(
    column for column in EXPORT_COLUMNS if column not in MODEL_ONLY_COLUMNS and column != "session_code"
)


def custom_export(players):
    """One row per person x test x version: backend.bias.export.EXPORT_COLUMNS without the model-only columns,
    session_code first (``python -m backend report`` reads it with the runner's files; the missing ones read empty)."""
    yield list(PERSON_COLUMNS)
    for row in export_rows(players):
        yield [row[column] for column in PERSON_COLUMNS]
