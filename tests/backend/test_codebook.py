"""The codebook (backend/codebook): every export's columns described once, and tidy (one PID column, no pk).

That the files the server writes have exactly these columns is checked against a running server in
tests/system/test_export_codebook.py.
"""

from __future__ import annotations

import pytest

from backend import codebook
from backend.codebook.columns import TYPES, Column, pick
from backend.reasoning.protocol import PROTOCOL_COLUMNS

EXPORTS = sorted(codebook.EXPORTS)


@pytest.mark.parametrize("key", EXPORTS, ids=[".".join(key) for key in EXPORTS])
def test_every_column_of_every_export_is_described(key):
    export = codebook.EXPORTS[key]
    assert export.row.strip()
    names = [column.name for column in export.columns]
    assert len(names) == len(set(names)), "a column is listed twice"
    for column in export.columns:
        assert column.meaning != codebook.UNDESCRIBED, f"{key}: {column.name} has no meaning in the codebook"
        assert column.type in TYPES


@pytest.mark.parametrize("key", EXPORTS, ids=[".".join(key) for key in EXPORTS])
def test_every_export_says_session_config_language_and_test_and_has_one_pid_column(key):
    names = codebook.names(*key)
    if key == ("payoff_reasoning_eval", "custom_export") or key[1] == "custom_export_protocol_with_ids":
        assert names[:12] == list(PROTOCOL_COLUMNS)  # the published columns first, ours beside them, never inside
        assert set(codebook.STUDY_NAMES) <= set(names[12:])
    else:
        assert names[:4] == list(codebook.STUDY_NAMES)
    assert "pk" not in names and "prolific_id" not in names
    assert names.count("prolific_pid") <= 1
    # one person's oTree code once: social_eval names it annotator (Sotopia's name), never beside participant_code
    assert not {"annotator", "participant_code"} <= set(names), "the participant code twice (annotator)"


def test_an_export_and_the_codebook_read_the_same_list():
    """The codebook's table holds each export's columns in file order; a header the codebook lacks is named."""
    table = codebook.codebook_rows()
    for (app, function), export in codebook.EXPORTS.items():
        listed = [row[3] for row in table[1:] if row[0] == app and row[1] == function]
        assert listed == [column.name for column in export.columns]
    header = [*codebook.names("social_eval", "custom_export_ratings_wide"), "goal_1", "goal_reasoning_2", "extra"]
    assert codebook.unmatched("social_eval", "custom_export_ratings_wide", header) == (["extra"], [])
    header = codebook.names("bias_tests", "custom_export")[:-1]
    assert codebook.unmatched("bias_tests", "custom_export", header) == ([], ["integrity"])
    assert codebook.codebook()["bias_tests.custom_export"][-1][0] == "integrity"


def test_a_column_without_a_definition_is_marked_not_raised():
    """An export must never fail over its codebook (a column added to backend/dond/export.py by someone else): the
    column is marked undescribed, and the test above fails on it."""
    [found] = pick({}, ["late_calls"])
    assert found.meaning == codebook.UNDESCRIBED
    with pytest.raises(ValueError, match="type"):
        Column("x", "string", "", "X.")
    with pytest.raises(ValueError, match="meaning"):
        Column("x", "text", "", " ")


def test_the_bias_export_gives_confidence_on_the_slider_scale_and_the_option_apart():
    columns = {name: (kind, unit) for name, kind, unit, _ in codebook.codebook()["bias_tests.custom_export"]}
    assert columns["confidence"] == ("number", "percent (0-100)")
    assert "option_index" in columns and "answer" in columns and "confidence_max" in columns
