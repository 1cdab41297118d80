"""Researcher mistakes in the DoND treatment keys (hostile review of #18): odd spellings are refused with a sentence
naming the key, and a key only a model reads is refused in a person-vs-person session instead of labelling its games
with a treatment nobody received (the export's columns and the effects table would report a "description effect"
between people)."""

from __future__ import annotations

import pytest

from backend.dond.selfplay import conditions
from backend.dond.settings import dond_settings
from backend.dond.treatments import SELFPLAY_VISIBILITIES


@pytest.mark.parametrize("value", ["Both", " both ", "BOTH", 1, True, None, "own,both"])
def test_odd_visibility_values_are_refused_by_name(value):
    with pytest.raises(ValueError, match="value_visibility"):
        dond_settings({"value_visibility": value})


@pytest.mark.parametrize("value, expected", [("TRUE", True), ("yes", True), (1, True), ("0", False), ("false", False)])
def test_flag_spellings_read_as_meant(value, expected):
    assert dond_settings({"disclose_description": value}).disclose_description is expected


@pytest.mark.parametrize("value", ["maybe", 2, None, ""])
def test_other_flag_values_are_refused(value):
    with pytest.raises(ValueError, match="disclose_description"):
        dond_settings({"disclose_description": value})


@pytest.mark.parametrize(
    "key, value",
    [("agent_description", "expert"), ("disclose_description", True), ("model_failure_pay", "zero")],
)
def test_model_only_treatments_are_refused_against_a_person(key, value):
    with pytest.raises(ValueError, match=f"'{key}' applies only when opponent is llm"):
        dond_settings({"opponent": "human", key: value})
    assert getattr(dond_settings({"opponent": "llm", key: value}).treatment, key) == value


def test_defaults_of_model_only_keys_stay_accepted_against_a_person():
    config = {"opponent": "human", "agent_description": "none", "disclose_description": False}
    assert dond_settings({**config, "model_failure_pay": "half_total"}).opponent == "human"


@pytest.mark.parametrize("text", ["own,,both", "own,own", "Both", "", ",", "own;both"])
def test_selfplay_visibility_lists_are_refused(text):
    with pytest.raises(ValueError, match="--visibility"):
        conditions(text, option="--visibility", allowed=SELFPLAY_VISIBILITIES)


def test_selfplay_visibility_list_tolerates_spaces():
    assert conditions(" own , both ", option="--visibility", allowed=SELFPLAY_VISIBILITIES) == ("own", "both")
