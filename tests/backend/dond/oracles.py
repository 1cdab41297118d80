"""Slow reference implementations of the DoND backend, used only by the tests as oracles.

Each is the plain loop over what the production code computes at once with numpy: ``generate_instance_naive``
(clembench's rejection sampler, step by step), the split functions of ``backend.dond.scoring`` over
``itertools.product``, and the debiased mean and its bootstrap of ``backend.dond.debiasing`` (the same random draws).
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np

from backend.dond.instances import Instance, satisfies_constraints
from backend.dond.items import item_ids
from backend.dond.rules import MAX_VALUE, N_ITEMS_RANGE, N_TYPES_RANGE, TOTAL_POINTS


def generate_instance_naive(seed: int) -> Instance:
    """The reference's rejection sampler, step by step (test oracle for ``generate_instance``; ~0.1 s a call).

    Draw k types, N items (each type once, the rest at random), values uniform 0..10 for both players; start
    again until the constraints hold. B's values are drawn only when A's already sum to 10 (same distribution).
    """
    rng = random.Random(seed)
    while True:
        k = rng.randint(*N_TYPES_RANGE)
        n_items = rng.randint(*N_ITEMS_RANGE)
        counts = [1] * k
        for _ in range(n_items - k):
            counts[rng.randrange(k)] += 1
        values_a = [rng.randint(0, MAX_VALUE) for _ in range(k)]
        if sum(c * v for c, v in zip(counts, values_a, strict=True)) != TOTAL_POINTS:
            continue
        values_b = [rng.randint(0, MAX_VALUE) for _ in range(k)]
        instance = Instance(rng.sample(item_ids(), k), counts, values_a, values_b, seed=seed)
        if satisfies_constraints(instance):
            return instance


def max_pareto_improvement_naive(counts, values_a, values_b, points_a, points_b) -> int:
    """Brute-force twin of ``backend.dond.scoring.max_pareto_improvement`` (test oracle)."""
    best = 0
    for share in itertools.product(*(range(c + 1) for c in counts)):
        pa = sum(s * v for s, v in zip(share, values_a, strict=True))
        pb = sum((c - s) * v for c, s, v in zip(counts, share, values_b, strict=True))
        if pa >= points_a and pb >= points_b:
            best = max(best, pa - points_a, pb - points_b)
    return int(best)


def pareto_frontier_naive(counts, values_a, values_b) -> list[tuple[int, int]]:
    """Brute-force twin of ``backend.dond.scoring.pareto_frontier`` (test oracle)."""
    pairs = set()
    for share in itertools.product(*(range(c + 1) for c in counts)):
        pa = sum(s * v for s, v in zip(share, values_a, strict=True))
        pb = sum((c - s) * v for c, s, v in zip(counts, share, values_b, strict=True))
        pairs.add((pa, pb))
    frontier = [p for p in pairs if not any(q[0] >= p[0] and q[1] >= p[1] and q != p for q in pairs)]
    return sorted(frontier)


def debiased_mean_naive(values, *, side, first_mover) -> float:
    """Loop-based twin of ``backend.dond.debiasing.debiased_mean`` (test oracle)."""
    groups: dict[tuple[str, bool], list[float]] = {}
    for value, s, f in zip(values, side, first_mover, strict=True):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        groups.setdefault((str(s), bool(f)), []).append(float(value))
    if not groups:
        return math.nan
    return sum(sum(v) / len(v) for v in groups.values()) / len(groups)


def bootstrap_replicates_naive(values, *, side, first_mover, cluster=None, n_boot, seed) -> list[float]:
    """Loop-based twin of the bootstrap (test oracle): same random draws, aggregation by ``debiased_mean_naive``."""
    keep = ~np.isnan(np.asarray(values, dtype=float))
    x = [float(v) for v, k in zip(values, keep, strict=True) if k]
    cells = [f"{s}|{bool(f)}" for s, f, k in zip(side, first_mover, keep, strict=True) if k]
    clusters = None if cluster is None else [str(g) for g, k in zip(cluster, keep, strict=True) if k]
    rng = np.random.default_rng(seed)
    labels = sorted(set(cells))
    if clusters is None:
        per_cell = [[float(v) for v, c in zip(x, cells, strict=True) if c == label] for label in labels]
        cell_boot = [[0.0] * len(labels) for _ in range(n_boot)]
        for c, members in enumerate(per_cell):
            for b in range(n_boot):
                picks = rng.integers(0, len(members), size=len(members))
                cell_boot[b][c] = sum(members[i] for i in picks) / len(members)
        return [sum(row) / len(row) for row in cell_boot]
    cluster_labels = sorted(set(clusters))
    replicates = []
    for _ in range(n_boot):
        picks = rng.integers(0, len(cluster_labels), size=len(cluster_labels))
        chosen_values, chosen_sides, chosen_firsts = [], [], []
        for pick in picks:
            for v, c, g in zip(x, cells, clusters, strict=True):
                if g == cluster_labels[pick]:
                    s, f = c.rsplit("|", 1)
                    chosen_values.append(float(v))
                    chosen_sides.append(s)
                    chosen_firsts.append(f == "True")
        replicates.append(debiased_mean_naive(chosen_values, side=chosen_sides, first_mover=chosen_firsts))
    return replicates


def _drawn_debiased_mean(rows, drawn) -> float:
    """Mean over cells of the cell means of the games of the drawn instances, each game once per draw."""
    by_cell: dict[str, list[float]] = {}
    for label in drawn:
        for x, c, g in rows:
            if g == label:
                by_cell.setdefault(c, []).append(x)
    return sum(sum(v) / len(v) for v in by_cell.values()) / len(by_cell)


def paired_difference_replicates_naive(
    values, cells, clusters, baseline_values, baseline_cells, baseline_clusters, *, n_boot, seed
) -> list[float]:
    """Loop-based twin of ``backend.dond.effects.paired_difference``'s replicates (test oracle): the instances with
    a value under both conditions, one draw of them per replicate (the same random draws as the production code),
    and for each condition the mean over cells of the cell means of the drawn games (a game counted as often as its
    instance was drawn); the replicate is the condition's minus the baseline's."""

    def games(xs, cs, gs):
        return [(float(x), str(c), str(g)) for x, c, g in zip(xs, cs, gs, strict=True) if not math.isnan(float(x))]

    mine, theirs = games(values, cells, clusters), games(baseline_values, baseline_cells, baseline_clusters)
    common = sorted({g for _, _, g in mine} & {g for _, _, g in theirs})
    mine = [game for game in mine if game[2] in common]
    theirs = [game for game in theirs if game[2] in common]
    rng = np.random.default_rng(seed)
    replicates = []
    for _ in range(n_boot):
        picks = rng.integers(0, len(common), size=len(common))
        drawn = [common[pick] for pick in picks]
        replicates.append(_drawn_debiased_mean(mine, drawn) - _drawn_debiased_mean(theirs, drawn))
    return replicates
