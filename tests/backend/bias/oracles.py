"""Loop versions of the bias metrics (no validation, no numpy vectorisation): the oracles the metric tests compare
``backend.bias.metrics`` with. Each returns (individual values, batch value)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from backend.bias.metrics import EPSILON


def _rows(value: Any) -> list:
    return [row if isinstance(row, (int, float)) else row[0] for row in np.asarray(value).tolist()]


def _naive_distribution(confidence_row, chosen: int, n_options: int) -> list[float]:
    if isinstance(confidence_row, (list, tuple)) and len(confidence_row) > 1:
        total = sum(confidence_row)
        return [value / total for value in confidence_row]
    c = confidence_row[0] if isinstance(confidence_row, (list, tuple)) else confidence_row
    return [c if k == chosen else (1.0 - c) / (n_options - 1) for k in range(n_options)]


def _naive_expected(answer, options: list, confidence_row) -> float:
    chosen = options.index(answer)
    if confidence_row is None:
        return answer
    probabilities = _naive_distribution(confidence_row, chosen, len(options))
    return sum(p * o for p, o in zip(probabilities, options, strict=True))


def _naive_batch(values: Sequence[float], weights: Sequence[float] | None) -> float:
    weights = [1.0] * len(values) if weights is None else weights
    return sum(w * v for w, v in zip(weights, values, strict=True)) / sum(weights)


def anchoring_naive(
    control_answer,
    treatment_answer,
    answer_options,
    anchor=None,
    *,
    anchor_agnostic=True,
    control_confidence=None,
    treatment_confidence=None,
    weights=None,
) -> tuple[list[float], float]:
    """Loop version of ``AnchoringBiasMetric`` (no validation): (individual values, batch value)."""
    options_rows = np.asarray(answer_options).tolist()
    controls, treatments = _rows(control_answer), _rows(treatment_answer)
    anchors = _rows(anchor) if anchor is not None else [None] * len(controls)
    control_conf = np.asarray(control_confidence).tolist() if control_confidence is not None else None
    treatment_conf = np.asarray(treatment_confidence).tolist() if treatment_confidence is not None else None
    values = []
    for i, options in enumerate(options_rows):
        a1 = _naive_expected(controls[i], options, control_conf[i] if control_conf else None)
        a2 = _naive_expected(treatments[i], options, treatment_conf[i] if treatment_conf else None)
        if anchor_agnostic:
            farthest = options[0]
            for option in options:
                if abs(option - a1) > abs(farthest - a1):
                    farthest = option
            values.append(abs(a1 - a2) / abs(a1 - farthest + EPSILON))
        else:
            target = options[0]
            for option in options:
                if abs(anchors[i] - option) < abs(anchors[i] - target):
                    target = option
            values.append(max(0.0, (abs(a1 - target) - abs(a2 - target)) / abs(a1 - target + EPSILON)))
    return values, _naive_batch(values, _rows(weights) if weights is not None else None)


def halo_effect_naive(control_answer, treatment_answer, answer_options, **options) -> tuple[list[float], float]:
    """Loop version of ``HaloEffectMetric``: (individual values, batch value)."""
    return anchoring_naive(control_answer, treatment_answer, answer_options, anchor_agnostic=True, **options)


def _naive_probability_of_one(answer: int, confidence_row) -> float:
    if confidence_row is None:
        return float(answer)
    return _naive_distribution(confidence_row, answer, 2)[1]


def loss_aversion_naive(answer, lambdas, *, answer_confidence=None, weights=None) -> tuple[list[float], float]:
    """Loop version of ``LossAversionMetric``: (individual values, batch value)."""
    answers, lambda_values = _rows(answer), _rows(lambdas)
    confidences = np.asarray(answer_confidence).tolist() if answer_confidence is not None else None
    weight_values = _rows(weights) if weights is not None else [1.0] * len(answers)
    accepted = [_naive_probability_of_one(a, confidences[i] if confidences else None) for i, a in enumerate(answers)]
    numerator = sum(w * a / lam for w, a, lam in zip(weight_values, accepted, lambda_values, strict=True))
    denominator = sum(w / lam for w, lam in zip(weight_values, lambda_values, strict=True))
    return accepted, 1 - numerator / denominator


def confirmation_naive(
    answer, pro_answer, con_answer, n_args, *, answer_confidence=None, weights=None
) -> tuple[list[float], float]:
    """Loop version of ``ConfirmationBiasMetric``: (individual values, batch value)."""
    answers, pros, cons, sizes = _rows(answer), _rows(pro_answer), _rows(con_answer), _rows(n_args)
    confidences = np.asarray(answer_confidence).tolist() if answer_confidence is not None else None
    weight_values = _rows(weights) if weights is not None else [1.0] * len(answers)
    values = []
    for i, a in enumerate(answers):
        q = _naive_probability_of_one(a, confidences[i] if confidences else None)
        p, n = pros[i], cons[i]
        values.append(max(0.0, (q * (p - n) + (1 - q) * (n - p)) / (p + n)))
    numerator = sum(w * b * size for w, b, size in zip(weight_values, values, sizes, strict=True))
    return values, numerator / sum(w * size for w, size in zip(weight_values, sizes, strict=True))
