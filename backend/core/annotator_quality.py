"""How well each annotator works, for the admin reports of both annotation apps: time, gold accuracy, agreement.

Per annotator (`annotator_quality`):

- ``items``: finished items (regular and gold); ``median_seconds``: the median time per item; ``fast_items``: items
  finished in less than ``floor_s`` seconds (a plausible floor: faster than anyone can read and rate the item);
- ``gold_rated``/``gold_passed``/``gold_accuracy``: gold items (attention checks) rated, passed, and passed / rated
  (NaN where the person rated no gold item);
- agreement with the others, on *shared units* (a unit is one rated thing, e.g. one agent of one episode on one
  dimension, or one verdict of one log) that at least one other annotator rated too. The others' consensus of a unit
  is the mean of the other annotators' values (leave-one-out, so a person is never compared with themselves):
  ``shared_units``; ``mean_abs_diff``: mean |own value - others' mean| (for 0/1 verdicts: how often, on average, the
  others said otherwise); ``correlation``: Pearson's r between own values and the others' means (NaN with fewer than
  three shared units or when either side is constant).

One value per annotator and unit counts: the first one given (as in ``backend.social.report``'s agreement figures).
Pure Python; the apps pass plain tuples.

>>> items = [("ann", 40.0, None), ("ann", 5.0, True), ("bob", 60.0, False)]
>>> ratings = [("ann", "u1", 3), ("bob", "u1", 5), ("ann", "u2", 1), ("bob", "u2", 1)]
>>> [q.annotator for q in annotator_quality(items, ratings, floor_s=10)]
['ann', 'bob']
>>> ann = annotator_quality(items, ratings, floor_s=10)[0]
>>> ann.items, ann.median_seconds, ann.fast_items, ann.gold_accuracy, ann.shared_units, ann.mean_abs_diff
(2, 22.5, 1, 1.0, 2, 1.0)
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

NAN = math.nan


@dataclass(frozen=True)
class AnnotatorQuality:
    annotator: str
    items: int
    median_seconds: float
    fast_items: int
    gold_rated: int
    gold_passed: int
    gold_accuracy: float
    shared_units: int
    mean_abs_diff: float
    correlation: float


def pearson(xs: list[float], ys: list[float]) -> float:
    """Pearson's r; NaN with fewer than three pairs or a constant side.

    >>> pearson([1, 2, 3], [2, 4, 7])
    0.9933992677987828
    >>> pearson([1, 1, 1], [1, 2, 3])
    nan
    """
    if len(xs) != len(ys):
        raise ValueError(f"pearson needs pairs: {len(xs)} and {len(ys)} values.")
    if len(xs) < 3:
        return NAN
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mean_x) ** 2 for x in xs)
    syy = sum((y - mean_y) ** 2 for y in ys)
    return NAN if sxx == 0 or syy == 0 else sxy / math.sqrt(sxx * syy)


def first_values(ratings: Iterable[tuple[str, Hashable, float]]) -> dict[Hashable, dict[str, float]]:
    """unit -> {annotator: value}, keeping each annotator's first value of a unit; missing (None, NaN) values left out.

    >>> first_values([("a", "u", 1), ("a", "u", 5), ("b", "u", None)])
    {'u': {'a': 1.0}}
    """
    units: dict[Hashable, dict[str, float]] = {}
    for annotator, unit, value in ratings:
        if value is None or value == "" or math.isnan(float(value)):
            continue
        units.setdefault(unit, {}).setdefault(annotator, float(value))
    return units


def leave_one_out(units: dict[Hashable, dict[str, float]], annotator: str) -> tuple[list[float], list[float]]:
    """The annotator's values on shared units and the others' means of the same units, unit by unit.

    >>> leave_one_out({"u": {"a": 1.0, "b": 2.0, "c": 4.0}, "v": {"a": 3.0}}, "a")
    ([1.0], [3.0])
    """
    own, others = [], []
    for values in units.values():
        if annotator in values and len(values) > 1:
            rest = [value for who, value in values.items() if who != annotator]
            own.append(values[annotator])
            others.append(sum(rest) / len(rest))
    return own, others


def annotator_quality(
    items: Iterable[tuple[str, float | None, bool | None]],
    ratings: Iterable[tuple[str, Hashable, float]],
    *,
    floor_s: float,
) -> list[AnnotatorQuality]:
    """The figures of every annotator (see the module doc), sorted by annotator.

    ``items``: one ``(annotator, seconds or None, gold passed: True/False, or None for a regular item)`` per finished
    item; ``ratings``: ``(annotator, unit, value)``; ``floor_s``: the plausible floor in seconds (0 flags nothing).
    """
    if floor_s < 0:
        raise ValueError(f"The plausible floor must be 0 seconds or more, got {floor_s}.")
    times: dict[str, list[float]] = {}
    counts: dict[str, int] = {}
    gold: dict[str, list[bool]] = {}
    for annotator, seconds, passed in items:
        counts[annotator] = counts.get(annotator, 0) + 1
        if seconds is not None and not math.isnan(float(seconds)):
            times.setdefault(annotator, []).append(float(seconds))
        if passed is not None:
            gold.setdefault(annotator, []).append(bool(passed))
    units = first_values(ratings)
    annotators = sorted(set(counts) | {who for values in units.values() for who in values})
    result = []
    for annotator in annotators:
        own_times, own_gold = times.get(annotator, []), gold.get(annotator, [])
        own, others = leave_one_out(units, annotator)
        result.append(
            AnnotatorQuality(
                annotator=annotator,
                items=counts.get(annotator, 0),
                median_seconds=statistics.median(own_times) if own_times else NAN,
                fast_items=sum(seconds < floor_s for seconds in own_times),
                gold_rated=len(own_gold),
                gold_passed=sum(own_gold),
                gold_accuracy=sum(own_gold) / len(own_gold) if own_gold else NAN,
                shared_units=len(own),
                mean_abs_diff=sum(abs(a - b) for a, b in zip(own, others, strict=True)) / len(own) if own else NAN,
                correlation=pearson(own, others),
            )
        )
    return result


def flagged(quality: AnnotatorQuality) -> bool:
    """Whether the quality view marks an annotator: an item faster than the floor or a failed gold item.

    >>> flagged(AnnotatorQuality("ab", 2, 31.0, 0, 2, 1, 0.5, 4, 0.25, NAN))
    True
    >>> flagged(AnnotatorQuality("cd", 2, 31.0, 0, 0, 0, NAN, 4, 0.25, NAN))
    False
    """
    return bool(quality.fast_items) or (quality.gold_rated > 0 and quality.gold_passed < quality.gold_rated)


QUALITY_COLUMNS = (
    ("annotator", "Annotator"),
    ("n_items", "Items"),
    ("median_seconds", "Median s / item"),
    ("fast_items", "Faster than floor"),
    ("gold", "Gold passed"),
    ("shared_units", "Shared units"),
    ("mean_abs_diff", "Mean |own − others|"),
    ("correlation", "r with others"),
)


def _figure(value: float, digits: int) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def quality_rows(qualities: Iterable[AnnotatorQuality], *, labels: dict[str, str] | None = None) -> list[dict]:
    """The figures as text for a report table (keys of `QUALITY_COLUMNS`; "–" where a figure does not exist);
    ``labels`` maps an annotator code to what the table shows (e.g. the Prolific ID next to the code).

    >>> row = quality_rows([AnnotatorQuality("ab", 2, 31.25, 0, 2, 1, 0.5, 4, 0.25, NAN)])[0]
    >>> row["median_seconds"], row["gold"], row["mean_abs_diff"], row["correlation"], row["flagged"]
    ('31.2', '1 of 2 (50%)', '0.25', '–', True)
    """
    labels = labels or {}
    rows = []
    for q in qualities:
        gold = f"{q.gold_passed} of {q.gold_rated} ({q.gold_accuracy:.0%})" if q.gold_rated else "–"
        rows.append(
            dict(
                annotator=labels.get(q.annotator, q.annotator),
                n_items=q.items,
                median_seconds=_figure(q.median_seconds, 1),
                fast_items=q.fast_items,
                gold=gold,
                shared_units=q.shared_units,
                mean_abs_diff=_figure(q.mean_abs_diff, 2),
                correlation=_figure(q.correlation, 2),
                flagged=flagged(q),
            )
        )
    return rows
