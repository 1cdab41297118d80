"""backend/core/annotator_quality.py: per-annotator time, gold accuracy and agreement, against a hand-computed
example and a naive oracle on random data."""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest

from backend.core.annotator_quality import annotator_quality, quality_rows

# a and b rated four units, c two of them; a's times and gold results below.
RATINGS = [
    ("a", "u1", 1),
    ("a", "u2", 2),
    ("a", "u3", 3),
    ("a", "u4", 4),
    ("b", "u1", 2),
    ("b", "u2", 2),
    ("b", "u3", 4),
    ("b", "u4", 6),
    ("c", "u1", 3),
    ("c", "u2", 2),
    ("a", "u1", 9),  # a second value of the same unit: the first one counts
]
ITEMS = [("a", 10.0, None), ("a", 50.0, True), ("a", 70.0, False), ("b", 30.0, None), ("c", None, None)]


def by_name(qualities):
    return {q.annotator: q for q in qualities}


def test_hand_computed_example():
    q = by_name(annotator_quality(ITEMS, RATINGS, floor_s=20))
    a, b, c = q["a"], q["b"], q["c"]
    # time: median of 10, 50, 70; one item under the 20 s floor
    assert (a.items, a.median_seconds, a.fast_items) == (3, 50.0, 1)
    assert (a.gold_rated, a.gold_passed, a.gold_accuracy) == (2, 1, 0.5)
    # others' means for a: u1 (2+3)/2 = 2.5, u2 2, u3 4, u4 6 -> |1-2.5| + 0 + 1 + 2 = 4.5 over 4 units
    assert a.shared_units == 4 and a.mean_abs_diff == pytest.approx(1.125)
    # Pearson of (1, 2, 3, 4) with (2.5, 2, 4, 6): sxy 6.25, sxx 5, syy 9.6875
    assert a.correlation == pytest.approx(6.25 / math.sqrt(5 * 9.6875))
    # c shares two units: u1 others (1+2)/2 = 1.5, u2 2 -> (1.5 + 0) / 2; too few units for a correlation
    assert c.shared_units == 2 and c.mean_abs_diff == pytest.approx(0.75) and math.isnan(c.correlation)
    assert math.isnan(c.median_seconds) and c.fast_items == 0  # no time recorded
    assert math.isnan(b.gold_accuracy) and b.gold_rated == 0
    rows = {row["annotator"]: row for row in quality_rows([a, b, c])}
    assert rows["a"]["gold"] == "1 of 2 (50%)" and rows["a"]["flagged"]
    assert rows["b"]["gold"] == "–" and not rows["b"]["flagged"]
    assert rows["c"]["correlation"] == "–" and rows["c"]["median_seconds"] == "–"


def test_a_negative_floor_is_refused():
    with pytest.raises(ValueError, match="plausible floor"):
        annotator_quality([], [], floor_s=-1)


def naive(items, ratings, floor_s):
    """Straight from the definitions: per annotator, loop over every unit and every other annotator."""
    first = {}
    for who, unit, value in ratings:
        first.setdefault((who, unit), float(value))
    people = sorted({who for who, _, _ in items} | {who for who, _ in first})
    result = {}
    for who in people:
        times = [s for w, s, _ in items if w == who and s is not None]
        gold = [g for w, _, g in items if w == who and g is not None]
        own, others = [], []
        for (w, unit), value in first.items():
            if w != who:
                continue
            rest = [v for (w2, u2), v in first.items() if u2 == unit and w2 != who]
            if rest:
                own.append(value)
                others.append(statistics.fmean(rest))
        if len(own) >= 3 and np.std(own) > 0 and np.std(others) > 0:
            r = float(np.corrcoef(own, others)[0, 1])
        else:
            r = math.nan
        result[who] = (
            len([1 for w, _, _ in items if w == who]),
            statistics.median(times) if times else math.nan,
            sum(1 for s in times if s < floor_s),
            statistics.fmean(gold) if gold else math.nan,
            len(own),
            statistics.fmean(abs(x - y) for x, y in zip(own, others, strict=True)) if own else math.nan,
            r,
        )
    return result


@pytest.mark.parametrize("seed", range(25))
def test_matches_the_naive_oracle(seed):
    rng = random.Random(seed)
    people = [f"p{n}" for n in range(rng.randint(1, 6))]
    units = [f"u{n}" for n in range(rng.randint(1, 12))]
    ratings = [(who, unit, rng.randint(-10, 10)) for who in people for unit in units if rng.random() < 0.7]
    items = [
        (who, rng.choice([None, rng.uniform(0, 120)]), rng.choice([None, True, False]))
        for who in people
        for _ in range(rng.randint(0, 5))
    ]
    got = {
        q.annotator: (
            q.items,
            q.median_seconds,
            q.fast_items,
            q.gold_accuracy,
            q.shared_units,
            q.mean_abs_diff,
            q.correlation,
        )
        for q in annotator_quality(items, ratings, floor_s=30)
    }
    expected = naive(items, ratings, 30)
    assert got.keys() == expected.keys()
    for who, values in expected.items():
        for mine, theirs in zip(got[who], values, strict=True):
            assert (math.isnan(mine) and math.isnan(theirs)) or mine == pytest.approx(theirs), who
