"""The one cell-mean estimator and bootstrap (backend/core/stats.py) against loop-based oracles with the same draws."""

from __future__ import annotations

import math

import numpy as np
import pytest

from backend.core import stats


def naive_debiased_mean(values, cells):
    groups = {}
    for value, cell in zip(values, cells, strict=True):
        if not math.isnan(value):
            groups.setdefault(str(cell), []).append(value)
    return sum(sum(g) / len(g) for g in groups.values()) / len(groups) if groups else math.nan


def naive_replicates(values, cells, clusters, *, n_boot, seed):
    """One resample at a time, with the draws made in the documented order."""
    rows = [
        (v, str(c), None if clusters is None else str(g))
        for v, c, g in zip(values, cells, clusters or cells, strict=True)
    ]
    rows = [row for row in rows if not math.isnan(row[0])]
    rng = np.random.default_rng(seed)
    names = sorted({c for _, c, _ in rows})
    if clusters is None:
        per_cell = {name: [v for v, c, _ in rows if c == name] for name in names}
        table = [[0.0] * len(names) for _ in range(n_boot)]
        for j, name in enumerate(names):
            members = per_cell[name]
            picks = rng.integers(0, len(members), size=(n_boot, len(members)))
            for b in range(n_boot):
                table[b][j] = sum(members[i] for i in picks[b]) / len(members)
        return [sum(row) / len(row) for row in table]
    cluster_names = sorted({g for _, _, g in rows})
    picks = rng.integers(0, len(cluster_names), size=(n_boot, len(cluster_names)))
    out = []
    for b in range(n_boot):
        chosen = [(v, c) for pick in picks[b] for v, c, g in rows if g == cluster_names[pick]]
        out.append(naive_debiased_mean([v for v, _ in chosen], [c for _, c in chosen]))
    return out


@pytest.mark.parametrize("use_clusters", [False, True])
def test_replicates_match_the_oracle_draw_for_draw(use_clusters):
    rng = np.random.default_rng(7)
    values = rng.random(60).tolist()
    values[5] = math.nan
    cells = rng.choice(["A|first", "A|second", "B|first", "B|second"], 60).tolist()
    clusters = rng.integers(0, 9, 60).tolist() if use_clusters else None
    fast = stats.bootstrap_replicates(values, cells=cells, clusters=clusters, n_boot=40, seed=11)
    slow = naive_replicates(values, cells, clusters, n_boot=40, seed=11)
    np.testing.assert_allclose(fast, slow, rtol=1e-12)


def test_chunked_draws_equal_one_block(monkeypatch):
    values = np.random.default_rng(3).random(50)
    whole = stats.bootstrap_replicates(values, cells=[1, 2] * 25, clusters=list(range(50)), n_boot=30, seed=2)
    monkeypatch.setattr(stats, "CHUNK_ELEMENTS", 60)  # one replicate per block
    chunked = stats.bootstrap_replicates(values, cells=[1, 2] * 25, clusters=list(range(50)), n_boot=30, seed=2)
    np.testing.assert_allclose(whole, chunked, rtol=1e-12)


def test_debiased_mean_weighs_cells_equally_and_skips_missing_values():
    values = [10.0, 20.0, 30.0, math.nan, 100.0]
    cells = ["x", "x", "x", "y", "y"]
    assert stats.debiased_mean(values, cells=cells) == pytest.approx((20.0 + 100.0) / 2)
    assert stats.debiased_mean(values, cells=cells) == pytest.approx(naive_debiased_mean(values, cells))
    assert math.isnan(stats.debiased_mean([math.nan], cells=["x"]))


def test_statistic_bootstrap_counts_unscorable_resamples_as_missing():
    data = np.array([0.0, 0.0, 0.0, 1.0])

    def needs_a_one(index):
        if data[index].max() == 0:
            raise ValueError("nothing to score")
        return float(data[index].mean())

    replicates = stats.bootstrap_statistic(needs_a_one, 4, n_boot=400, seed=0)
    missing = np.isnan(replicates).mean()
    assert 0.2 < missing < 0.45  # (3/4)^4 ≈ 0.32 of resamples draw no 1
    low, high = stats.percentile_interval(replicates)
    assert 0.25 <= low <= high <= 1.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: stats.bootstrap_replicates([1.0], n_boot=0), "n_boot"),
        (lambda: stats.bootstrap_replicates([1.0, 2.0], cells=[1]), "same length"),
        (lambda: stats.percentile_interval([1.0], confidence=1.0), "confidence"),
        (lambda: stats.bootstrap_statistic(lambda i: 0.0, 0), "at least one row"),
    ],
)
def test_bad_options_are_refused_with_a_sentence(call, message):
    with pytest.raises(ValueError, match=message):
        call()
