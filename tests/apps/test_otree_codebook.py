"""oTree's own exports have a codebook (backend/codebook/otree.py, issue 35): every field oTree exports of every app's
models, of the participant and of the session, read here from oTree itself, has an entry of the right type, and no
entry names a field that is gone. A new model field fails this test until it is described.

That a real wide export of every app has no column without an entry: tests/system/test_exports_columns.py.
"""

from __future__ import annotations

import importlib

import pytest

from backend.codebook import otree as otree_codebook
from lab_server.otree_internals import Participant, Session, get_fields_for_csv

# The stored type of a field (SQLAlchemy's) -> the codebook types it may have.
TYPES = {
    "Integer": {"integer"},
    "Boolean": {"0/1"},
    "Float": {"number"},
    "CurrencyType": {"number"},
    "String": {"text", "JSON"},
    "Text": {"text", "JSON"},
}


def exported_fields(app: str) -> dict[str, str]:
    """``"<model>.<field>"`` -> its stored type's name, for every field oTree's exports write of the app's models."""
    module = importlib.import_module(app)
    found = {}
    for model in ("Player", "Group", "Subsession"):
        Model = getattr(module, model)
        stored = {column.name.lstrip("_"): type(column.type).__name__ for column in Model.__table__.columns}
        for field in get_fields_for_csv(Model):
            found[f"{model.lower()}.{field}"] = stored[field]
    return found


@pytest.mark.parametrize("app", otree_codebook.APPS)
def test_every_model_field_of_every_app_has_a_codebook_entry_of_its_type(app):
    fields = exported_fields(app)
    entries = otree_codebook.model_columns(app)
    for name, stored in fields.items():
        matching = [entry for entry in entries if entry.matches(name)]
        assert matching, f"{app}: {name} has no entry in backend/codebook/otree.py MODEL_FIELDS"
        assert matching[0].type in TYPES[stored], (app, name, stored, matching[0].type)
    for entry in entries:  # no entry for a field that is gone
        assert any(entry.matches(name) for name in fields), f"{app}: {entry.name} is no exported field"


def test_the_participant_and_session_columns_have_entries():
    import settings

    names = {column.name for column in otree_codebook.PARTICIPANT + otree_codebook.PARTICIPANT_VARS}
    otree_fields = [f"participant.{field}" for field in get_fields_for_csv(Participant)]
    assert not [name for name in otree_fields if name not in names]
    assert not [f for f in settings.PARTICIPANT_FIELDS if f"participant.{f}" not in names]
    session_names = {column.name for column in otree_codebook.SESSION}
    assert not [f for f in get_fields_for_csv(Session) if f"session.{f}" not in session_names]
    assert {column.meaning for column in otree_codebook.PARTICIPANT_VARS if column.name.endswith("progress_done")}
    assert "Empty in dond" in otree_codebook.wide_entry("participant.progress_done").meaning
