"""DoND proposals (backend/dond/proposals.py): the bracket parser, replies, forms' counts, and their typed errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.dond import errors, instances, items, proposals, rules
from tests.support import examples
from tests.support.dond_events import INSTANCE

# ---------------------------------------------------------------------------------------------------------------
# Parsing


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        ("en", "[Proposal: 2 apples, 1 knife]", (2, 1, 0)),
        ("en", "I'd say [proposal: 3 apples, 2 knives, 1 egg] thanks", (3, 2, 1)),
        ("en", "[PROPOSAL: 1 apples]", (1, 0, 0)),  # plural where singular is expected
        ("en", "[Proposal: 2 apple]", (2, 0, 0)),  # singular where plural is expected
        ("en", "[Proposal: 1 egg, 2 apples,]", (2, 0, 1)),  # any order, one trailing comma
        ("en", "[Proposal: 2 knive]", (0, 2, 0)),  # stem: 'knive' is the stem of 'knives'
        ("en", "[Proposal:]", (0, 0, 0)),
        ("en", "[ Proposal:   ]", (0, 0, 0)),
        ("de", "[Vorschlag: 2 Äpfel, 1 Messer]", (2, 1, 0)),
        ("de", "[vorschlag: 1 ei, 2 äpfeln]", (2, 0, 1)),  # lower case; 'äpfeln' by stem
        ("de", "[Vorschlag: 1 Eier]", (0, 0, 1)),
        ("de", "[Vorschlag:]", (0, 0, 0)),
        ("it", "[Proposta: 3 mele, 1 coltello]", (3, 1, 0)),
        ("it", "[proposta: 1 uova]", (0, 0, 1)),
        ("it", "[Proposta: 2 coltell]", (0, 2, 0)),  # stem
        ("it", "[Proposta:]", (0, 0, 0)),
    ],
)
def test_parse_proposal_accepts_valid_proposals(language, text, expected):
    result = proposals.parse_proposal(text, INSTANCE, language)
    assert list(result) == list(INSTANCE.item_types)
    assert tuple(result.values()) == expected


@pytest.mark.parametrize(
    ("language", "text", "error", "reason"),
    [
        ("en", "I take two apples", errors.ProposalFormatError, "no_brackets"),
        ("en", "[Vorschlag: 1 apple]", errors.ProposalFormatError, "prefix"),
        (
            "en",
            "[2 apples] [Proposal: 2 apples]",
            errors.ProposalFormatError,
            "prefix",
        ),  # only the first bracket counts
        ("de", "[Proposal: 1 Ei]", errors.ProposalFormatError, "prefix"),
        ("it", "[Proposal: 1 uovo]", errors.ProposalFormatError, "prefix"),
        ("en", "[Proposal: 2 apples 1 egg]", errors.ProposalFormatError, "pairs"),  # missing comma
        ("en", "[Proposal: 2 red apples]", errors.ProposalFormatError, "pairs"),
        ("en", "[Proposal: 2x apples]", errors.ProposalFormatError, "pairs"),
        ("en", "[Proposal: apples]", errors.ProposalFormatError, "pairs"),
        ("de", "[Vorschlag: 1,5 Äpfel]", errors.ProposalFormatError, "pairs"),
        ("en", "[Proposal: two apples]", errors.ProposalFormatError, "number_word"),
        ("de", "[Vorschlag: zwei Äpfel]", errors.ProposalFormatError, "number_word"),
        ("it", "[Proposta: due mele]", errors.ProposalFormatError, "number_word"),
        ("en", "[Proposal: two red apples]", errors.ProposalFormatError, "number_word"),
        ("en", "[Proposal: 1 pear]", errors.UnknownItemError, None),
        ("de", "[Vorschlag: 1 Birne]", errors.UnknownItemError, None),
        ("it", "[Proposta: 1 apple]", errors.UnknownItemError, None),  # English word in an Italian game
        ("en", "[Proposal: 1 apple, 1 apples]", errors.DuplicateItemError, None),
        ("de", "[Vorschlag: 1 Ei, 1 Eier]", errors.DuplicateItemError, None),
        ("it", "[Proposta: 1 mela, 2 mele]", errors.DuplicateItemError, None),
        ("en", "[Proposal: 4 apples]", errors.OverAskError, None),
        ("de", "[Vorschlag: 2 Eier]", errors.OverAskError, None),
        ("it", "[Proposta: 3 coltelli]", errors.OverAskError, None),
    ],
)
def test_parse_proposal_raises_typed_errors(language, text, error, reason):
    with pytest.raises(error) as caught:
        proposals.parse_proposal(text, INSTANCE, language)
    assert isinstance(caught.value, errors.MoveError) and isinstance(caught.value, ValueError)
    assert str(caught.value)  # says what was wrong
    if reason:
        assert caught.value.details["reason"] == reason


def test_error_messages_name_the_problem():
    with pytest.raises(errors.UnknownItemError, match="'pear'"):
        proposals.parse_proposal("[Proposal: 1 pear]", INSTANCE, "en")
    with pytest.raises(errors.OverAskError, match="only 3") as caught:
        proposals.parse_proposal("[Proposal: 4 apples]", INSTANCE, "en")
    assert caught.value.details == {"item": "apple", "asked": 4, "available": 3}
    with pytest.raises(errors.ProposalFormatError, match="Vorschlag:"):
        proposals.parse_proposal("[Angebot: 1 Ei]", INSTANCE, "de")
    with pytest.raises(errors.ProposalFormatError, match="digits"):
        proposals.parse_proposal("[Proposta: due mele]", INSTANCE, "it")


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        ("en", "[Proposal: two apples, one egg]", (2, 0, 1)),
        ("en", "[Proposal: an egg]", (0, 0, 1)),
        ("de", "[Vorschlag: zwei Äpfel, ein Ei]", (2, 0, 1)),
        ("it", "[Proposta: tre mele, un uovo]", (3, 0, 1)),
    ],
)
def test_number_words_are_accepted_on_request(language, text, expected):
    assert tuple(proposals.parse_proposal(text, INSTANCE, language, number_words=True).values()) == expected


def test_parse_proposal_validates_arguments():
    with pytest.raises(ValueError, match="language"):
        proposals.parse_proposal("[Proposal:]", INSTANCE, "fr")
    with pytest.raises(ValueError, match="text"):
        proposals.parse_proposal(None, INSTANCE, "en")


def test_ambiguous_stem_matches_no_item():
    """When a stem fits two types the name is unknown, as in the reference game."""
    instance = instances.Instance(
        ("a", "b"), (1, 1), (5, 5), (5, 5), {"en": (("running", "runner"), ("runnings", "runners"))}
    )
    stem = items.stem("running", "en")
    assert stem == items.stem("runs", "en")
    assert items.stem("runner", "en") != stem  # only 'running' shares the stem of 'runs'
    assert proposals.parse_proposal("[Proposal: 1 runs]", instance, "en") == {"a": 1, "b": 0}
    twins = instances.Instance(("a", "b"), (1, 1), (5, 5), (5, 5), {"en": (("run", "running"), ("runs", "runnings"))})
    with pytest.raises(errors.UnknownItemError):
        proposals.parse_proposal("[Proposal: 1 runned]", twins, "en")


@settings(max_examples=examples(300), deadline=None)
@given(seed=st.integers(0, 10_000), language=st.sampled_from(rules.LANGUAGES), data=st.data())
def test_format_then_parse_round_trips(seed, language, data):
    instance = instances.generate_instance(seed)
    taken = {
        item: data.draw(st.integers(0, count)) for item, count in zip(instance.item_types, instance.counts, strict=True)
    }
    text = proposals.format_proposal(taken, instance, language)
    casing = data.draw(st.sampled_from([str, str.lower, str.upper]))
    assert proposals.parse_proposal(casing(text), instance, language) == taken


def test_parse_reply_separates_messages_proposals_and_violations():
    assert proposals.parse_reply("Hi, I like eggs.", INSTANCE, "en") == proposals.Move("message", "Hi, I like eggs.")
    assert proposals.parse_reply("<script>x</script>", INSTANCE, "en").text == "<script>x</script>"
    assert proposals.parse_reply("ok [Proposal: 1 egg]", INSTANCE, "en").proposal == {"apple": 0, "knife": 0, "egg": 1}
    with pytest.raises(errors.ProposalRequiredError, match=r"\[Vorschlag:"):
        proposals.parse_reply("Proposal: 1 egg", INSTANCE, "de", must_propose=True)
    with pytest.raises(errors.EmptyMessageError):
        proposals.parse_reply("  \n", INSTANCE, "en")
    with pytest.raises(errors.UnknownItemError):
        proposals.parse_reply("[Proposal: 1 pear]", INSTANCE, "en")


# ---------------------------------------------------------------------------------------------------------------
# Counts from a form or a live message


@pytest.mark.parametrize(
    ("proposal", "expected"),
    [
        ({"apple": 3, "knife": "2"}, {"apple": 3, "knife": 2, "egg": 0}),
        ({}, {"apple": 0, "knife": 0, "egg": 0}),
        ({"egg": np.int64(1)}, {"apple": 0, "knife": 0, "egg": 1}),
    ],
)
def test_check_proposal_accepts_counts_in_range(proposal, expected):
    assert proposals.check_proposal(proposal, INSTANCE) == expected


@pytest.mark.parametrize(
    ("proposal", "error"),
    [
        ({"apple": -1}, errors.ProposalFormatError),
        ({"apple": 1.5}, errors.ProposalFormatError),
        ({"apple": "two"}, errors.ProposalFormatError),
        ({"apple": True}, errors.ProposalFormatError),
        ({"apple": None}, errors.ProposalFormatError),
        ({"apple": 4}, errors.OverAskError),
        ({"apple": "99999999999999999999"}, errors.OverAskError),
        ({"pear": 1}, errors.UnknownItemError),
        ([1, 2, 3], errors.ProposalFormatError),
    ],
)
def test_check_proposal_rejects_forged_counts(proposal, error):
    with pytest.raises(error):
        proposals.check_proposal(proposal, INSTANCE)
