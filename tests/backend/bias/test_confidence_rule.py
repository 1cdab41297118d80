"""One rule reads stated confidences, whatever the answer mode: the scale comes from the values, never their sum."""

from __future__ import annotations

import json

import pytest

from backend.bias.replies import ReplyParseError, parse_choice, read_confidences

LABELS = ["150 loaves", "250 loaves", "350 loaves", "450 loaves"]


def reply(probabilities) -> str:
    return json.dumps({"answer": "B", "probabilities": probabilities})


@pytest.mark.parametrize(
    ("probabilities", "expected"),
    [
        ([20, 30, 40, 10], (0.2, 0.3, 0.4, 0.1)),
        ({"A": "20%", "B": "30 %", "C": "40%", "D": "10%"}, (0.2, 0.3, 0.4, 0.1)),
        ({"A": 0.2, "B": 1}, (1 / 6, 5 / 6, 0, 0)),  # probabilities adding up to 1.2: within the tolerance
        (0.7, (0.1, 0.7, 0.1, 0.1)),  # a single confidence in the chosen option
        (70, (0.1, 0.7, 0.1, 0.1)),  # the same as a percentage
    ],
)
def test_stated_probabilities_are_read_on_the_scale_their_values_show(probabilities, expected):
    assert parse_choice(reply(probabilities), LABELS).probabilities == pytest.approx(expected)


@pytest.mark.parametrize(
    ("probabilities", "message"),
    [
        # SmolLM2 under a schema: read as percentages (values above 1), adding up to 11 %, not as "0.11"
        ([0.2, 1.4, 3.6, 5.8], "add up to 11 % (read as percentages"),
        ({"A": 0.25, "B": 1}, "add up to 1.25, not 1"),
        ([1.1, 0, 0, 0], "add up to 1.1 % (read as percentages"),  # a value above 1 is no probability
        ({"A": "30%", "B": 0.7}, "add up to 30.7 %"),
    ],
)
def test_probabilities_that_do_not_add_up_on_their_scale_are_refused_with_the_scale_named(probabilities, message):
    with pytest.raises(ReplyParseError, match=message.replace("(", r"\(")):
        parse_choice(reply(probabilities), LABELS)
    with pytest.raises(ReplyParseError, match=message.replace("(", r"\(")):
        read_confidences(list(probabilities.values()) if isinstance(probabilities, dict) else probabilities)
