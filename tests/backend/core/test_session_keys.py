"""The session keys' models (backend/core/session_keys.py): pydantic validates, and one place words each refusal as the
sentence a researcher reads, naming the key, what it takes and what it got."""

from __future__ import annotations

import decimal
from typing import Literal

import pytest

from backend.core import session_keys
from backend.core.session_keys import Flag, Keys, Number, Text, Whole, checked, key
from study_flow.config import SharedKeys, app_keys


class Example(Keys):
    count: Whole = key(5, "Count", ge=1, le=50)
    """How many."""
    share: Number = key(0.5, "Share", ge=0, le=2)
    """How much."""
    ticked: Flag = key(False, "Ticked")
    """Whether."""
    kind: Literal["a", "b"] = key("a", "Kind")
    """Which."""
    code: Text = key("", "Code", max_chars=8, pattern=r"[A-Z0-9]*", describe="capitals or digits")
    """A code."""
    rounds: Whole = key(3, "Rounds", ge=1, le="max_rounds")
    """Up to the app's rounds."""


@pytest.mark.parametrize(
    ("given", "typed"),
    [
        ({"count": "7"}, 7),  # the admin form's text
        ({"count": 7.0}, 7),
        ({"count": decimal.Decimal("7")}, 7),  # oTree's currencies
        ({"count": " 7 "}, 7),
    ],
)
def test_numeric_text_and_whole_floats_are_read_as_whole_numbers(given, typed):
    assert checked(Example, given).count == typed


@pytest.mark.parametrize("value", [0, 51, 2.5, "abc", True, None, float("nan"), [1]])
def test_a_bad_whole_number_is_refused_in_our_words(value):
    with pytest.raises(ValueError) as refused:
        checked(Example, {"count": value})
    assert str(refused.value) == f"The session key 'count' must be a whole number from 1 to 50, not {value!r}."


def test_each_kind_of_key_is_refused_in_its_own_words_and_every_key_at_once():
    with pytest.raises(ValueError) as refused:
        checked(Example, {"share": "inf", "ticked": "perhaps", "kind": "c", "code": "<b>", "other": object()})
    assert str(refused.value) == (
        "The session key 'share' must be a number from 0 to 2, not 'inf'. "
        "The session key 'ticked' must be true or false, not 'perhaps'. "
        "The session key 'kind' must be one of a, b, not 'c'. "
        "The session key 'code' must be text of capitals or digits (at most 8 characters), not '<b>'."
    )


def test_flags_and_text_read_as_before():
    assert checked(Example, {"ticked": "yes"}).ticked is True and checked(Example, {"ticked": 0}).ticked is False
    assert checked(Example, {"code": None}).code == ""
    with pytest.raises(ValueError, match=r"not 'AAAAAAAAAA"):
        checked(Example, {"code": "A" * 100})  # too long, and the sentence shows only its start
    assert str(pytest.raises(ValueError, checked, Example, {"code": "A" * 100}).value).endswith("...'.")


def test_a_bound_the_caller_names_is_checked_and_worded():
    assert checked(Example, {"rounds": 4}, max_rounds=4).rounds == 4
    with pytest.raises(ValueError, match=r"^The session key 'rounds' must be a whole number from 1 to 4, not 5\.$"):
        checked(Example, {"rounds": 5}, max_rounds=4)
    with pytest.raises(ValueError, match=r"^The session key 'rounds' must be a whole number from 1 to 2, not 3\.$"):
        checked(Example, {}, max_rounds=2)  # the default is over an app's bound: refused, not a KeyError


def test_the_label_is_the_fields_and_the_help_its_docstring():
    assert session_keys.words(Example)["count"] == ("Count", "How many.")


def test_every_key_of_every_model_says_what_it_takes():
    for model in [*app_keys().values(), SharedKeys]:
        for name in model.model_fields:
            said = session_keys.allowed(model, name, max_tasks=9, max_logs_per_judge=9)
            assert said and "None" not in said, (model.__name__, name)
