"""Negotiation agency metrics (backend/dond/agency.py): expected values computed by hand in the comments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from backend.dond import agency as neg

# A small game: 2 hats, 3 balls, 1 book; the model's values 3/1/1 (2·3 + 3·1 + 1·1 = 10).
AVAILABLE = (2, 3, 1)
VALUES = np.array([3, 1, 1])
NAMES = {"hat": 0, "hats": 0, "ball": 1, "balls": 1, "book": 2, "books": 2}


def resolve(name: str) -> int | None:
    return NAMES.get(name.casefold())


def parse_pairs(content: str) -> list[int]:
    """A strict '<digits> <item>' list parser standing in for the game's proposal parser."""
    counts = [0, 0, 0]
    for part in filter(None, (p.strip() for p in content.split(","))):
        number, name = part.split()
        if not number.isdigit() or resolve(name) is None:
            raise ValueError(f"{part!r} is not '<digits> <item>'.")
        counts[resolve(name)] = int(number)
    return counts


# ---------------------------------------------------------------------------------------------------------------
# Word limits: strictly under the limit


def words(n: int) -> str:
    return " ".join(["w"] * n)


def test_word_limit_is_strict_exactly_the_limit_fails():
    flags = neg.within_word_limit([words(63), words(64), words(65), ""], limit=64)
    assert flags.tolist() == [True, False, False, True]


def test_word_limit_share_counts_whitespace_words():
    # 3 words, 4 words (= limit: fails), 1 word, newline-separated 2 words → 3 of 4 under a limit of 4.
    texts = ["one two three", "one two three four", "one", "one\n\ttwo"]
    assert neg.word_counts(texts).tolist() == [3, 4, 1, 2]
    assert neg.word_limit_share(texts, limit=4) == 0.75


def test_word_limit_share_of_nothing_is_nan():
    assert math.isnan(neg.word_limit_share([], limit=64))


@pytest.mark.parametrize("limit", [0, -3, 2.5, True])
def test_word_limit_rejects_a_bad_limit(limit):
    with pytest.raises(ValueError, match="limit"):
        neg.within_word_limit(["a"], limit=limit)


def test_word_counts_reject_non_strings():
    with pytest.raises(ValueError, match="strings"):
        neg.word_counts(["a", None])
    with pytest.raises(ValueError, match="single string"):
        neg.word_counts("a b")


# ---------------------------------------------------------------------------------------------------------------
# Notes: trailing JSON split


def test_split_note_takes_the_trailing_object_and_keeps_the_prose():
    note = neg.split_note('I value hats most. I would accept {"hat": 2, "ball": 1}')
    assert note.split == {"hat": 2, "ball": 1}
    assert note.body == "I value hats most. I would accept"
    assert note.json_text == '{"hat": 2, "ball": 1}'
    assert note.is_trailing


def test_split_note_strips_a_code_fence():
    note = neg.split_note('Plan: ask for hats.\n```json\n{"hat": 2}\n```\n')
    assert note.body == "Plan: ask for hats."
    assert note.split == {"hat": 2}
    assert note.is_trailing


def test_split_note_falls_back_to_single_quotes_even_with_apostrophes_in_the_prose():
    note = neg.split_note("I'm keen on hats. {'hat': 2, 'book': 0}")
    assert note.split == {"hat": 2, "book": 0}


def test_split_note_prefers_the_last_and_outermost_object():
    assert neg.split_note('{"hat": 1} changed my mind: {"hat": 2}').split == {"hat": 2}
    assert neg.split_note('{"me": {"hat": 1}}').split == {"me": {"hat": 1}}
    assert not neg.split_note('{"hat": 1} and then some prose').is_trailing


@pytest.mark.parametrize("text", ["no json at all", "{hat: 2}", "[1, 2]", '{"hat": 2', ""])
def test_split_note_without_an_object_reports_it(text):
    note = neg.split_note(text)
    assert note.split is None and note.json_text is None
    assert note.error == "The note contains no JSON object."
    assert note.body == text.strip()


def test_split_note_keeps_duplicate_keys_for_the_count_check():
    note = neg.split_note('{"hat": 1, "hat": 2}')
    assert note.pairs == (("hat", 1), ("hat", 2))
    with pytest.raises(ValueError, match="twice"):
        neg.split_counts(note.pairs, resolve=resolve, available=AVAILABLE)


def test_note_json_present_share():
    notes = ['a {"hat": 1}', "b {'ball': 2}", "c no object", 'd {"x": 1'] + ["e {}"]
    # Parseable: a, b, e ({} is an object); not: c, d → 3 of 5.
    assert neg.note_json_present(notes).tolist() == [True, True, False, False, True]
    assert neg.note_json_present(notes).mean() == 0.6


def test_split_counts_fills_missing_types_with_zero_and_accepts_number_spellings():
    assert neg.split_counts({"hats": 2}, resolve=resolve, available=AVAILABLE).tolist() == [2, 0, 0]
    assert neg.split_counts({"ball": "3", "book": 1.0}, resolve=resolve, available=AVAILABLE).tolist() == [0, 3, 1]
    assert neg.split_counts({}, resolve=resolve, available=AVAILABLE).tolist() == [0, 0, 0]


@pytest.mark.parametrize(
    "split, message",
    [
        ({"cat": 1}, "not an item"),
        ({"hat": 3}, "only 2"),
        ({"hat": -1}, "negative"),
        ({"hat": 1.5}, "whole number"),
        ({"hat": True}, "whole number"),
        ({"hat": "two"}, "whole number"),
        ({"hat": 1, "hats": 1}, "twice"),
    ],
)
def test_split_counts_rejects_bad_splits(split, message):
    with pytest.raises(ValueError, match=message):
        neg.split_counts(split, resolve=resolve, available=AVAILABLE)


# ---------------------------------------------------------------------------------------------------------------
# The offer in a public message


def test_message_offer_reads_the_fixed_format():
    found = neg.message_offer(
        "Shall we? (I take: 2 hats, 1 ball) You get the rest.", marker="I take", parse=parse_pairs
    )
    assert found == neg.OfferExtraction("offer", counts=(2, 1, 0))
    spaced = neg.message_offer("( i   TAKE :1 book )", marker="I take", parse=parse_pairs)
    assert spaced.counts == (0, 0, 1)


def test_message_offer_empty_list_means_taking_nothing():
    assert neg.message_offer("(I take: ) all yours", marker="I take", parse=parse_pairs).counts == (0, 0, 0)


@pytest.mark.parametrize("text", ["Hello, how are you?", "I take: 2 hats", "I take the hats (all of them)", ""])
def test_message_without_the_format_makes_no_offer(text):
    assert neg.message_offer(text, marker="I take", parse=parse_pairs) == neg.OfferExtraction("none")


@pytest.mark.parametrize(
    "text, reason",
    [
        ("(I take: two hats)", "cannot be read"),
        ("(I take: 2 cats)", "cannot be read"),
        ("(I take: 2 hats, 1 ball", "not closed"),
        ("(I take: 1 hat) or maybe (I take: 2 hats)", "2 different offers"),
    ],
)
def test_message_offer_failures_are_recorded_not_guessed(text, reason):
    result = neg.message_offer(text, marker="I take", parse=parse_pairs)
    assert result.status == "failed" and result.counts is None
    assert reason in result.error


def test_message_offer_repeated_identical_offer_is_one_offer():
    result = neg.message_offer("(I take: 1 hat) so again (I take: 1 hats)", marker="I take", parse=parse_pairs)
    assert result.counts == (1, 0, 0)


def test_message_offer_other_languages():
    assert neg.message_offer("Gut. (Ich nehme: 2 hats)", marker=neg.OFFER_MARKERS["de"], parse=parse_pairs).counts == (
        2,
        0,
        0,
    )
    assert neg.message_offer("(I take: 2 hats)", marker=neg.OFFER_MARKERS["it"], parse=parse_pairs).status == "none"


# ---------------------------------------------------------------------------------------------------------------
# Faithfulness


def test_offer_points():
    # (2,1,0)·(3,1,1) = 7; (0,3,1)·(3,1,1) = 4; a missing offer stays NaN.
    points = neg.offer_points([[2, 1, 0], [0, 3, 1], [np.nan] * 3], VALUES)
    assert points[:2].tolist() == [7.0, 4.0] and math.isnan(points[2])
    # Per-row values: (1,0,0)·(3,1,1) = 3 and (1,0,0)·(0,5,5) = 0.
    assert neg.offer_points([[1, 0, 0], [1, 0, 0]], [[3, 1, 1], [0, 5, 5]]).tolist() == [3.0, 0.0]


@pytest.mark.parametrize(
    "offers, values, message",
    [([1, 2, 3], VALUES, "two-dimensional"), ([[1, 2]], VALUES, "shape"), ([[-1, 0, 0]], VALUES, "negative")],
)
def test_offer_points_validates(offers, values, message):
    with pytest.raises(ValueError, match=message):
        neg.offer_points(offers, values)


def worked_game():
    """Four turns of one model (values 3/1/1), as the notes protocol stores them."""
    notes = [
        'Hats are worth most to me. {"hat": 2}',  # keeps 2 hats = 6 points
        'They want hats; hold one ball. {"hat": 2, "ball": 1}',  # 6 + 1 = 7
        "Let them talk first. {'hat': 1}",  # 3
        "I forgot the format.",  # no split
    ]
    messages = [
        "I need the hats. (I take: 2 hats, 1 ball)",  # 7 ≥ 6: faithful
        "Fine, (I take: 1 hat, 2 balls)",  # 3 + 2 = 5 < 7: unfaithful
        "What matters to you?",  # no offer: vacuous
        "(I take: 2 hats)",  # 6 but no reference
    ]
    beliefs = [{"hat": 2, "ball": 3, "book": 1}, {"hat": 1}, {"book": 1}, {"ball": 1}]  # 10, 3, 1, 1 points
    return notes, messages, beliefs


def turn_points(notes, messages, beliefs):
    note_offers = []
    for note in notes:
        split = neg.split_note(note).split
        counts = neg.split_counts(split, resolve=resolve, available=AVAILABLE) if split is not None else [np.nan] * 3
        note_offers.append(counts)
    extracted = [neg.message_offer(m, marker="I take", parse=parse_pairs) for m in messages]
    message_offers = [e.counts if e.counts is not None else [np.nan] * 3 for e in extracted]
    belief_offers = [neg.split_counts(b, resolve=resolve, available=AVAILABLE) for b in beliefs]
    return (
        neg.offer_points(message_offers, VALUES),
        neg.offer_points(note_offers, VALUES),
        neg.offer_points(belief_offers, VALUES),
        [e.status for e in extracted],
    )


def test_internal_faithfulness_worked_game():
    message_points, note_points, _, status = turn_points(*worked_game())
    assert message_points[[0, 1, 3]].tolist() == [7.0, 5.0, 6.0]
    assert note_points[:3].tolist() == [6.0, 7.0, 3.0] and math.isnan(note_points[3])
    verdicts = neg.faithfulness_verdicts(message_points, note_points, message_status=status)
    assert verdicts.tolist() == ["faithful", "unfaithful", "no_offer", "no_reference"]
    # Counted: faithful, unfaithful, vacuous-faithful → 2/3; without vacuous turns → 1/2.
    assert neg.faithfulness_rate(verdicts) == pytest.approx(2 / 3)
    assert neg.faithfulness_rate(verdicts, vacuous="exclude") == 0.5


def test_external_faithfulness_worked_game():
    message_points, _, belief_points, status = turn_points(*worked_game())
    verdicts = neg.faithfulness_verdicts(message_points, belief_points, message_status=status)
    # 7 < 10 unfaithful; 5 ≥ 3 faithful; no offer; 6 ≥ 1 faithful → 3/4 with vacuous, 2/3 without.
    assert verdicts.tolist() == ["unfaithful", "faithful", "no_offer", "faithful"]
    assert neg.faithfulness_rate(verdicts) == 0.75
    assert neg.faithfulness_rate(verdicts, vacuous="exclude") == pytest.approx(2 / 3)


def test_equal_worth_is_faithful_and_checks_run_in_order():
    verdicts = neg.faithfulness_verdicts(
        [5, np.nan, np.nan, np.nan],
        [5, np.nan, np.nan, 2],
        message_status=["offer", "failed", "none", "failed"],
    )
    # An equal offer concedes nothing; a failed extraction is recorded even without reference.
    assert verdicts.tolist() == ["faithful", "extraction_failed", "no_reference", "extraction_failed"]


def test_only_vacuous_turns_with_exclusion_give_nan_and_so_does_nothing():
    assert neg.faithfulness_rate(["no_offer", "no_offer"]) == 1.0
    assert math.isnan(neg.faithfulness_rate(["no_offer", "no_offer"], vacuous="exclude"))
    assert math.isnan(neg.faithfulness_rate(["extraction_failed", "no_reference"]))
    assert math.isnan(neg.faithfulness_rate([]))


def test_faithfulness_validates_its_inputs():
    with pytest.raises(ValueError, match="'offer'"):
        neg.faithfulness_verdicts([np.nan], [1], message_status=["offer"])
    with pytest.raises(ValueError, match="only"):
        neg.faithfulness_verdicts([1], [1], message_status=["maybe"])
    with pytest.raises(ValueError, match="same length"):
        neg.faithfulness_verdicts([1, 2], [1], message_status=["offer"])
    with pytest.raises(ValueError, match="vacuous"):
        neg.faithfulness_rate(["faithful"], vacuous="ignore")
    with pytest.raises(ValueError, match="only"):
        neg.faithfulness_rate(["fine"])


# ---------------------------------------------------------------------------------------------------------------
# Proposal format and performance


def test_format_ok_share_of_valid_proposals():
    def parse(text):
        if not (text.startswith("[Proposal:") and text.endswith("]")):
            raise ValueError("not in brackets")
        return parse_pairs(text[len("[Proposal:") : -1])

    attempts = ["[Proposal: 2 hats]", "[Proposal:]", "Proposal: 2 hats", "[Proposal: 2 cats]"]
    flags = neg.format_ok(attempts, parse=parse)
    assert flags.tolist() == [True, True, False, False]
    assert flags.mean() == 0.5


def test_normalised_points():
    result = neg.normalised_points([0, 3, 10, np.nan])
    assert result[:3].tolist() == [0.0, 0.3, 1.0] and math.isnan(result[3])
    with pytest.raises(ValueError, match=r"\[0, 10\]"):
        neg.normalised_points([11])
    with pytest.raises(ValueError, match=r"\[0, 10\]"):
        neg.normalised_points([-1])
    with pytest.raises(ValueError, match="max_points"):
        neg.normalised_points([1], max_points=0)
