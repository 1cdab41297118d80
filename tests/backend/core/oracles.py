"""Naive reference implementations of backend/core metrics, straight from their definitions (test oracles)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence


def pairable(values_per_unit: Sequence[Sequence[float]]) -> list[list[float]]:
    """The units holding at least two ratings, missing (NaN) ratings left out."""
    units = [[float(value) for value in unit if not math.isnan(float(value))] for unit in values_per_unit]
    return [unit for unit in units if len(unit) >= 2]


def interval_alpha_reference(values_per_unit: Sequence[Sequence[float]]) -> float:
    """Naive interval alpha straight from the definition (test oracle for ``krippendorff_alpha``).

    With n pairable values (units holding m_u >= 2 ratings):
    D_o = (1/n) * sum_u 1/(m_u - 1) * sum_{i != j in u} (v_i - v_j)^2 and
    D_e = 1/(n (n - 1)) * sum_{c != k over all pairable values} (v_c - v_k)^2.

    >>> interval_alpha_reference([[1, 2], [3, 3]])
    0.7272727272727273
    """
    units = [[float(value) for value in unit] for unit in pairable(values_per_unit)]
    pooled = [value for unit in units for value in unit]
    n = len(pooled)
    if n < 2:
        return math.nan
    observed = (
        sum(sum((a - b) ** 2 for a, b in itertools.permutations(unit, 2)) / (len(unit) - 1) for unit in units) / n
    )
    expected = sum((a - b) ** 2 for a, b in itertools.permutations(pooled, 2)) / (n * (n - 1))
    return math.nan if expected == 0 else 1 - observed / expected


def choose_item_reference(item_ids, rows, *, participant, per_item, now, timeout_s):
    """The assignment policy straight from its definition, one row at a time (test oracle for ``choose_item``):
    the participant's first live reservation, else among items not finished by them and below ``per_item`` (None: no
    cap) the one with the fewest finished ratings, then live reservations, then the earliest in the list."""
    live = [r for r in rows if r["status"] == "reserved" and now - r["reserved_at"] < timeout_s]
    mine_live = [r["item_id"] for r in live if r["participant"] == participant]
    if mine_live:
        return mine_live[0]
    candidates = []
    for position, item in enumerate(item_ids):
        done = sum(1 for r in rows if r["item_id"] == item and r["status"] == "done")
        held = sum(1 for r in live if r["item_id"] == item)
        mine = any(r["item_id"] == item and r["participant"] == participant and r["status"] == "done" for r in rows)
        if not mine and (per_item is None or done + held < per_item):
            candidates.append((done, held, position, item))
    return min(candidates)[3] if candidates else None
