"""DoND instances (backend/dond/instances.py): the generator's constraints and distribution, words per language, rendering."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from backend.dond import instances, items, rules
from tests.backend.dond import oracles
from tests.support.dond_events import INSTANCE

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


# Rendering


def test_rendering_uses_singular_for_one_and_plural_otherwise():
    assert instances.format_items(INSTANCE, "en") == "3 apples, 2 knives, 1 egg"
    assert instances.format_items(INSTANCE, "de") == "3 Äpfel, 2 Messer, 1 Ei"
    assert instances.format_items(INSTANCE, "it") == "3 mele, 2 coltelli, 1 uovo"
    assert instances.format_values(INSTANCE.values_b, INSTANCE, "it") == "mela: 0, coltello: 3, uovo: 4"
