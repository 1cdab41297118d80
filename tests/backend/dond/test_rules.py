"""DoND backend: item words, instance generation, the proposal parser and the game's rules."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from backend.dond import errors, instances, items, proposals, rules, scoring
from tests.backend.dond import oracles

# ---------------------------------------------------------------------------------------------------------------
# Item words


def test_item_file_has_100_aligned_single_word_nouns_per_language():
    data = json.loads(items.ITEMS_FILE.read_text(encoding="utf-8"))
    assert data["languages"] == list(rules.LANGUAGES)
    assert len(data["items"]) == 100
    for entry in data["items"]:
        for language in rules.LANGUAGES:
            singular, plural = entry[language]
            assert singular and plural and " " not in singular + plural and "," not in singular + plural, entry
        assert all(word[0].isupper() for word in entry["de"]), entry  # German nouns are capitalised


@pytest.mark.parametrize("language", rules.LANGUAGES)
def test_item_words_and_stems_identify_one_item_each(language):
    """No word or Snowball stem is shared by two items, so every name the parser accepts is unambiguous."""
    word_owner, stem_owner = {}, {}
    for item in items.item_ids():
        for plural in (False, True):
            word = items.item_word(item, language, plural=plural)
            assert word_owner.setdefault(word.casefold(), item) == item, (word, item)
            stem = items.stem(word, language)
            assert stem_owner.setdefault(stem, item) == item, (word, stem, item)
    number_words = set(items.NUMBER_WORDS[language])
    assert not number_words & set(word_owner), "an item word must not read as a number"


def test_item_word_rejects_unknown_ids_and_languages():
    with pytest.raises(ValueError, match="item_id"):
        items.item_word("unicorn", "en")
    with pytest.raises(ValueError, match="language"):
        items.item_word("apple", "fr")


# ---------------------------------------------------------------------------------------------------------------
# Instances


def test_ten_thousand_seeded_instances_satisfy_every_constraint():
    sizes = Counter()
    for seed in range(10_000):
        instance = instances.generate_instance(seed)
        counts, a, b = (np.array(x) for x in (instance.counts, instance.values_a, instance.values_b))
        assert 3 <= counts.size <= 5 and 5 <= counts.sum() <= 8 and counts.min() >= 1, instance
        assert a.min() >= 0 and b.min() >= 0 and a.max() <= 10 and b.max() <= 10, instance
        assert counts @ a == 10 and counts @ b == 10, instance
        assert not ((a == 0) & (b == 0)).any(), instance
        assert ((a > 0) & (b > 0)).any(), instance
        assert len(set(instance.item_types)) == counts.size
        assert set(instance.item_types) <= set(items.item_ids())
        sizes[counts.size] += 1
    assert set(sizes) == {3, 4, 5}  # every size occurs


def test_generation_is_deterministic_and_seeds_differ():
    assert instances.generate_instance(42) == instances.generate_instance(42)
    assert len({instances.generate_instance(seed) for seed in range(50)}) > 45


@pytest.mark.parametrize("n_types", [3, 4, 5])
def test_n_types_fixes_the_number_of_types(n_types):
    for seed in range(200):
        instance = instances.generate_instance(seed, n_types=n_types)
        assert len(instance.item_types) == n_types and instances.satisfies_constraints(instance)


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True, None])
def test_generate_instance_rejects_bad_seeds(bad):
    with pytest.raises(ValueError, match="seed"):
        instances.generate_instance(bad)


@pytest.mark.parametrize("bad", [2, 6, 0])
def test_generate_instance_rejects_bad_n_types(bad):
    with pytest.raises(ValueError, match="n_types"):
        instances.generate_instance(1, n_types=bad)


def test_one_instance_serves_every_language_with_aligned_words():
    instance = instances.generate_instance(5)
    for language in rules.LANGUAGES:
        for item, singular, plural in zip(
            instance.item_types, instance.singular(language), instance.plural(language), strict=True
        ):
            assert singular == items.item_word(item, language) and plural == items.item_word(
                item, language, plural=True
            )
    assert instances.Instance.from_dict(json.loads(json.dumps(instance.to_dict()))) == instance


def _acceptance_naive(counts):
    """P(values pass the constraints | counts), by looping over every pair of value vectors."""
    solutions = [
        v
        for v in itertools.product(range(11), repeat=len(counts))
        if sum(c * x for c, x in zip(counts, v, strict=True)) == 10
    ]
    valid = sum(
        1
        for a in solutions
        for b in solutions
        if not any(x == 0 and y == 0 for x, y in zip(a, b, strict=True))
        and any(x > 0 and y > 0 for x, y in zip(a, b, strict=True))
    )
    return valid / 11 ** (2 * len(counts))


def test_sampling_weights_equal_the_rejection_samplers_for_three_types():
    """For k = 3 the weight of each counts vector = P(k) P(N) P(counts | k, N) P(accept | counts), by brute force."""
    options = [o for o in instances.counts_options() if len(o.counts) == 3]
    assert len(options) == 6 + 10 + 15 + 21  # compositions of 5..8 into 3 positive parts
    for option in options:
        n_items, extra = sum(option.counts), [c - 1 for c in option.counts]
        p_counts = instances.comb_multinomial(extra) / 3 ** (n_items - 3)
        assert option.weight == pytest.approx(p_counts * _acceptance_naive(option.counts) / 12), option.counts


@pytest.mark.slow
def test_generator_distribution_matches_the_naive_rejection_sampler():
    naive = [oracles.generate_instance_naive(seed) for seed in range(60)]
    assert all(instances.satisfies_constraints(instance) for instance in naive)
    fast = [instances.generate_instance(seed) for seed in range(5000)]
    for size in (lambda i: len(i.counts), lambda i: sum(i.counts)):
        keys = sorted({size(i) for i in fast} | {size(i) for i in naive})
        expected = np.array([sum(size(i) == k for i in fast) for k in keys]) / len(fast) * len(naive)
        observed = np.array([sum(size(i) == k for i in naive) for k in keys])
        assert stats.chisquare(observed, expected).pvalue > 0.001, (keys, observed, expected)


def test_generated_value_pairs_are_uniform_over_valid_pairs():
    """For the most common counts, value pairs must be (close to) equally likely, as under rejection sampling."""
    target = Counter(instances.generate_instance(seed).counts for seed in range(3000)).most_common(1)[0][0]
    pairs = Counter()
    seed = 0
    while sum(pairs.values()) < 3000:
        instance = instances.generate_instance(seed, n_types=len(target))
        if instance.counts == target:
            pairs[instance.values_a + instance.values_b] += 1
        seed += 1
    option = next(o for o in instances.counts_options() if o.counts == target)
    n_valid = int(instances.valid_pair_mask(option.solutions).sum())
    observed = np.array(list(pairs.values()) + [0] * (n_valid - len(pairs)))
    assert len(pairs) <= n_valid
    assert stats.chisquare(observed).pvalue > 0.001


# ---------------------------------------------------------------------------------------------------------------
# Parsing

INSTANCE = instances.Instance(("apple", "knife", "egg"), (3, 2, 1), (2, 2, 0), (0, 3, 4))


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


@settings(max_examples=300, deadline=None)
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


def test_must_propose_after_the_last_message_or_the_others_proposal():
    assert not rules.must_propose(4, other_has_proposed=False, max_messages=5)
    assert rules.must_propose(5, other_has_proposed=False, max_messages=5)
    assert rules.must_propose(0, other_has_proposed=True, max_messages=5)
    with pytest.raises(ValueError):
        rules.must_propose(-1, other_has_proposed=False, max_messages=5)


# ---------------------------------------------------------------------------------------------------------------
# Rules


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


def test_complementary_proposals_allow_leftovers_but_not_overlap():
    counts = (3, 2, 1)
    assert scoring.is_complementary((1, 0, 0), (1, 2, 1), counts)  # one apple left over
    assert scoring.is_complementary((3, 2, 1), (0, 0, 0), counts)
    assert not scoring.is_complementary((2, 0, 0), (2, 0, 0), counts)
    with pytest.raises(ValueError):
        scoring.is_complementary((1, 0), (1, 0, 0), counts)


def test_points_and_goal_per_mode():
    assert scoring.points((3, 0, 1), INSTANCE.values_a) == 6
    assert scoring.points((0, 2, 1), INSTANCE.values_b) == 10
    assert [scoring.goal_score(mode, 6, 10) for mode in rules.MODES] == [6, 16, -4]
    assert [scoring.bonus(mode, 6, 10, outcome="success") for mode in rules.MODES] == [6, 16, 0]
    assert [scoring.bonus(mode, 6, 10, outcome=outcome) for mode in rules.MODES for outcome in ("lose", "aborted")] == [
        0
    ] * 6
    with pytest.raises(ValueError, match="mode"):
        scoring.goal_score("chaos", 1, 1)


def test_rendering_uses_singular_for_one_and_plural_otherwise():
    assert instances.format_items(INSTANCE, "en") == "3 apples, 2 knives, 1 egg"
    assert instances.format_items(INSTANCE, "de") == "3 Äpfel, 2 Messer, 1 Ei"
    assert instances.format_items(INSTANCE, "it") == "3 mele, 2 coltelli, 1 uovo"
    assert instances.format_values(INSTANCE.values_b, INSTANCE, "it") == "mela: 0, coltello: 3, uovo: 4"
