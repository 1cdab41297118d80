"""A model judge's confidence from k samples per unit, scored against people's blind labels of the same units.

**Confidence.** A judge asked k times for the same unit (``--samples K`` of ``backend.reasoning.judge`` and
``backend.social.annotator``) gives k verdicts or k ratings:

- verdicts (0/1): ``vote_summary``: the judge's verdict is the majority (a tie counts as 0, as the majority rule of
  ``backend.reasoning.report.combine_verdicts``), ``p_correct`` = the share of samples saying 1 (the probability
  the Brier score scores) and ``confidence`` = the share of samples agreeing with the verdict (what ECE bins);
- ratings: ``rating_summary``: the rating is the median (half rounded up), the spread is the sample SD of the k
  ratings (0 with one sample): the wider, the less sure.

**Against people** (their combined verdict ``y``, 1 = correct, on the units both labelled):

- Brier score = mean (p_correct - y)²: 0 is perfect, 0.25 is what always saying 0.5 scores;
- ECE (expected calibration error, Guo et al. 2017) = Σ_b (n_b / N) |acc_b - conf_b| over ``bins`` equal-width
  bins ((b-1)/B, b/B] of the confidence (0 in the first), acc_b = share of the bin's units whose verdict equals
  people's, conf_b = the bin's mean confidence. The same bins give the reliability figure (``reliability_bins``).

**Admission** (``admission``): a judge stands in for people when its agreement with them *at the lower bound of
its interval* clears the researcher's threshold (``python -m backend report --admit-at``, default
``DEFAULT_ADMISSION_THRESHOLD``), so a judge is never admitted on a lucky point estimate from few units.

Weighted forms (``*_replicates``) score every bootstrap resample at once (``backend.core.unit_bootstrap``).

>>> summary = vote_summary([1, 1, 0])
>>> summary["verdict"], round(summary["confidence"], 3), round(summary["p_correct"], 3)
(1, 0.667, 0.667)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

DEFAULT_BINS = 10
# Landis & Koch (1977) call kappa above 0.6 "substantial": the default bar for the lower bound of agreement.
DEFAULT_ADMISSION_THRESHOLD = 0.6


def vote_summary(verdicts: Sequence[int]) -> dict[str, Any]:
    """The judge's verdict from k sampled 0/1 verdicts, with its confidence and the share saying 1.

    >>> vote_summary([0, 1])  # a tie counts as 0 (majority rule); half the samples agree with it
    {'samples': 2, 'votes_correct': 1, 'verdict': 0, 'p_correct': 0.5, 'confidence': 0.5}
    """
    values = [int(value) for value in verdicts]
    if not values or any(value not in (0, 1) for value in values):
        raise ValueError(f"verdicts must be one or more 0/1 values, got {values!r}.")
    ones = sum(values)
    verdict = int(2 * ones > len(values))
    agreeing = ones if verdict else len(values) - ones
    return dict(
        samples=len(values),
        votes_correct=ones,
        verdict=verdict,
        p_correct=ones / len(values),
        confidence=agreeing / len(values),
    )


def rating_summary(ratings: Sequence[float]) -> dict[str, Any]:
    """The rating from k sampled ratings (median, a half rounded up) and their spread (sample SD; 0 for one).

    >>> rating_summary([7, 8, 8, 9])
    {'samples': 4, 'rating': 8, 'spread': 0.816496580927726}
    >>> rating_summary([3, 4])["rating"], rating_summary([5])["spread"]
    (4, 0.0)
    """
    values = np.asarray([float(value) for value in ratings])
    if values.size == 0 or np.isnan(values).any():
        raise ValueError(f"ratings must be one or more numbers, got {list(ratings)!r}.")
    return dict(
        samples=int(values.size),
        rating=int(math.floor(float(np.median(values)) + 0.5)),
        spread=float(values.std(ddof=1)) if values.size > 1 else 0.0,
    )


def _checked(confidence: Any, correct: Any) -> tuple[np.ndarray, np.ndarray]:
    c, y = np.asarray(confidence, dtype=float), np.asarray(correct, dtype=float)
    if c.shape != y.shape or c.ndim != 1:
        raise ValueError(f"the two sequences must be paired and 1-D, got shapes {c.shape} and {y.shape}.")
    if ((c < 0) | (c > 1)).any() or not np.isin(y, (0, 1)).all():
        raise ValueError("probabilities must lie in [0, 1] and outcomes be 0 or 1.")
    return c, y


def brier_score(p_correct: Any, outcome: Any) -> float:
    """Mean squared difference between the judge's probability of "correct" and people's 0/1 verdict; NaN when empty.

    >>> brier_score([1.0, 0.5, 0.0], [1, 0, 1])  # (0 + 0.25 + 1) / 3
    0.4166666666666667
    """
    p, y = _checked(p_correct, outcome)
    return float(np.mean((p - y) ** 2)) if p.size else math.nan


def bin_index(confidence: Any, *, bins: int = DEFAULT_BINS) -> np.ndarray:
    """The bin of each confidence: b such that it lies in (b/B, (b+1)/B]; 0 goes to the first bin.

    >>> bin_index([0.0, 0.1, 0.15, 0.5, 1.0], bins=10).tolist()
    [0, 0, 1, 4, 9]
    """
    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}.")
    c = np.asarray(confidence, dtype=float)
    # A small tolerance so that 0.1 * 10 (0.1 is not exact in binary) is the edge it is meant to be.
    return np.clip(np.ceil(c * bins - 1e-9).astype(int) - 1, 0, bins - 1)


def reliability_bins(confidence: Any, correct: Any, *, bins: int = DEFAULT_BINS) -> list[dict[str, Any]]:
    """Per non-empty bin: its edges, ``n``, mean ``confidence`` and ``accuracy`` (share correct): the points of a
    reliability diagram.

    >>> reliability_bins([0.6, 0.65, 1.0], [1, 0, 1], bins=5)
    [{'low': 0.4, 'high': 0.6, 'n': 1, 'confidence': 0.6, 'accuracy': 1.0}, {'low': 0.6, 'high': 0.8, 'n': 1, 'confidence': 0.65, 'accuracy': 0.0}, {'low': 0.8, 'high': 1.0, 'n': 1, 'confidence': 1.0, 'accuracy': 1.0}]
    """
    c, y = _checked(confidence, correct)
    index = bin_index(c, bins=bins)
    found = []
    for b in np.unique(index):
        chosen = index == b
        found.append(
            dict(
                low=round(float(b) / bins, 10),
                high=round(float(b + 1) / bins, 10),
                n=int(chosen.sum()),
                confidence=float(c[chosen].mean()),
                accuracy=float(y[chosen].mean()),
            )
        )
    return found


def expected_calibration_error(confidence: Any, correct: Any, *, bins: int = DEFAULT_BINS) -> float:
    """ECE = Σ_b (n_b / N) |accuracy_b - confidence_b|; NaN when empty.

    >>> expected_calibration_error([0.6, 0.65, 1.0], [1, 0, 1], bins=5)  # (0.4 + 0.65 + 0) / 3
    0.35000000000000003
    """
    return float(ece_replicates(confidence, correct, np.ones((1, len(np.atleast_1d(confidence)))), bins=bins)[0])


def ece_replicates(confidence: Any, correct: Any, weights: Any, *, bins: int = DEFAULT_BINS) -> np.ndarray:
    """ECE of each weighted resample of the units (``weights``: resamples x units, how often each unit is drawn).

    >>> ece_replicates([0.6, 0.65, 1.0], [1, 0, 1], [[1, 1, 1], [2, 0, 1]], bins=5).round(4).tolist()
    [0.35, 0.2667]
    """
    c, y = _checked(confidence, correct)
    w = np.asarray(weights, dtype=float)
    w = w[None, :] if w.ndim == 1 else w
    if w.shape[1] != c.size:
        raise ValueError(f"weights must have one column per unit ({c.size}), got shape {w.shape}.")
    one_hot = np.zeros((c.size, bins))
    one_hot[np.arange(c.size), bin_index(c, bins=bins)] = 1.0
    n_bin = w @ one_hot
    gap = np.abs((w * y) @ one_hot - (w * c) @ one_hot)  # n_b |acc_b - conf_b|
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        result = gap.sum(axis=1) / total
    return np.where((total > 0) & (n_bin.sum(axis=1) > 0), result, np.nan)


def admission(low: float, threshold: float = DEFAULT_ADMISSION_THRESHOLD) -> dict[str, Any]:
    """Whether a judge's agreement with people clears ``threshold`` at the lower bound ``low`` of its interval:
    ``admitted`` True / False, or None when the bound is undefined (too few units), with the sentence to print.

    >>> admission(0.64, 0.6)["text"]
    'admitted: the lower bound 0.64 clears 0.60'
    >>> admission(float("nan"))["admitted"] is None
    True
    """
    if not -1 <= threshold <= 1:
        raise ValueError(f"The admission threshold must lie in [-1, 1], got {threshold}.")
    if low is None or math.isnan(low):
        return dict(admitted=None, low=None, threshold=threshold, text="undecided: no interval (too few units)")
    admitted = bool(low >= threshold)
    verb = "clears" if admitted else "is below"
    text = f"{'admitted' if admitted else 'not admitted'}: the lower bound {low:.2f} {verb} {threshold:.2f}"
    return dict(admitted=admitted, low=float(low), threshold=threshold, text=text)


def check_samples(samples: int, settings: Any) -> None:
    """Refuse a sample count below 1, or several samples at temperature 0 from a real model (``settings``: the
    runner's ``LLMSettings``): K copies of one answer would read as full confidence. The scripted agent may repeat.

    >>> from types import SimpleNamespace
    >>> check_samples(3, SimpleNamespace(model="scripted", temperature=0.0))
    >>> check_samples(2, SimpleNamespace(model="m", temperature=0.7))
    >>> check_samples(3, SimpleNamespace(model="m", temperature=0.0))
    Traceback (most recent call last):
    ...
    ValueError: --samples 3 needs --temperature above 0: at temperature 0 the samples repeat one answer.
    >>> check_samples(0, SimpleNamespace(model="scripted", temperature=0.0))
    Traceback (most recent call last):
    ...
    ValueError: --samples must be a whole number of at least 1, got 0.
    """
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ValueError(f"--samples must be a whole number of at least 1, got {samples!r}.")
    if samples > 1 and settings.temperature == 0 and settings.model != "scripted":
        raise ValueError(
            f"--samples {samples} needs --temperature above 0: at temperature 0 the samples repeat one answer."
        )
