"""bias_tests: the export, one row per person x test x version. Its columns: ``backend/codebook/bias.py`` (the LLM
runner's, without the model-only ones, the study columns first); a stored answer that cannot be read is exported
with its readable cells and an ``integrity`` note, never failing the export of the others."""

import study_flow
from backend import codebook
from backend.bias.export import export_row
from backend.codebook.bias import MODEL_ONLY_COLUMNS  # noqa: F401  (the runner's columns a person leaves empty)
from backend.core.csvio import iso_utc
from study_flow import test_data

from .loading import item_set, presented

PERSON_COLUMNS = codebook.names("bias_tests", "custom_export")


def answered(player) -> bool:
    """Whether the player stored an answer (a choice or a selection of arguments) to a test."""
    return bool(player.field_maybe_none("item_id")) and (
        player.field_maybe_none("choice") is not None
        or player.field_maybe_none("answer") is not None
        or bool(player.field_maybe_none("selected_arguments"))
    )


def _row(player) -> dict:
    """The runner's row of one answer (``backend.bias.export.export_row``: confidence as a fraction, as a model's)."""
    item, view = presented(player)
    confidence = player.field_maybe_none("confidence")
    selected = player.field_maybe_none("selected_arguments")
    ids = study_flow.identifiers(player.participant)
    return export_row(
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


def export_rows(players) -> list[dict]:
    """The runner's rows of the players who answered and whose answer can be read (the admin report's figures)."""
    rows = []
    for player in players:
        if answered(player):
            try:
                rows.append(_row(player))
            except Exception:  # noqa: BLE001  (a broken stored answer: the export flags it, the figures skip it)
                continue
    return rows


def _option_value(view, choice):
    if choice is None or view.kind != "choice":
        return None
    if not 0 <= choice < len(view.options):
        raise ValueError(f"choice: option {choice} of {len(view.options)}")
    return view.options[choice].value


def _readable(player, name):
    try:
        return player.field_maybe_none(name)
    except Exception:  # noqa: BLE001
        return None


def person_row(player) -> dict:
    """One answer's export row (``PERSON_COLUMNS``): the runner's row with the slider's own scale (0-100) and the chosen
    option's position; for a stored answer that cannot be read, its readable cells and what was wrong."""
    participant = player.participant
    row = dict.fromkeys(PERSON_COLUMNS, "")
    row.update(test_data.session_cells(player.session, participant), **study_flow.identifiers(participant))
    try:
        found = _row(player)
    except Exception as error:  # noqa: BLE001  (whatever is stored, the other rows are exported)
        row.update(
            respondent_kind="person",
            respondent_id=participant.code,
            item_id=_readable(player, "item_id") or "",
            bias=_readable(player, "bias") or "",
            version=_readable(player, "version") or "",
            position=player.round_number,
            integrity=f"unreadable answer: {type(error).__name__}: {error}"[:300],
        )
        return row
    row.update({key: value for key, value in found.items() if key in row})
    if found["confidence"] != "":
        row["confidence"], row["confidence_max"] = player.field_maybe_none("confidence"), 100
    choice = player.field_maybe_none("choice")
    row["option_index"] = "" if choice is None or found["answer"] == "" else choice
    return row


def custom_export(players):
    """One row per person x test x version (columns: ``backend/codebook/bias.py``); tests left out of an export of
    all sessions (``study_flow.test_data``)."""
    yield list(PERSON_COLUMNS)
    for player in test_data.exported(players):
        if answered(player):
            row = person_row(player)
            yield [row[column] for column in PERSON_COLUMNS]


codebook_export = codebook.export_function("bias_tests")  # the Data page's download of this app's codebook
