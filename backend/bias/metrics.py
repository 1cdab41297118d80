"""Cognitive-bias metrics for paired test answers (anchoring, halo effect, loss aversion, confirmation bias).

The four metric classes follow the numpy metrics of Malberg et al., "A Comprehensive Evaluation of Cognitive Biases
in LLMs" (early ``metrics.py``, see ``../shared/reference/eval.md`` §2): a constructor with the flag ``overall``
(``True`` gives the batch metric, a float; ``False`` the individual metric, an array of shape (N, 1)) and a method
``compute(...)`` taking column vectors of shape (N, 1) (1-D arrays of length N are accepted too) and, for anchoring
and the halo effect, the answer options of shape (N, K). Answers are option *values* (10, 20, ...), not indices.
Without the keyword-only options the results are exactly those of the reference notebook, to the last digit.

Confidence variants (our definition; the reference only left a to-do note):

- *expected-answer variant*: each answer is replaced by the expected option value under the respondent's
  confidence. A single confidence c in [0, 1] (a slider value / 100, or a model's stated probability of its choice)
  puts c on the chosen option and spreads 1 - c evenly over the other K - 1 options; a row of K option probabilities
  (stated by a model or read from token log-probabilities) is used as given, after normalising it to sum 1. For
  loss aversion and the control answer of confirmation bias the answer becomes the probability of answering 1.
  Options ``control_confidence`` / ``treatment_confidence`` / ``answer_confidence`` (named after the answer they
  qualify); an answer without confidence counts as certain. With every confidence equal to 1 the results equal the
  plain metric exactly.
- *confidence-weighted batch*: option ``weights`` (shape (N, 1), non-negative, e.g. the respondent's confidence per
  test) turns the batch mean into a weighted mean; see each class for where the weight enters.

``bootstrap_ci`` gives a seeded percentile interval for any batch metric by resampling tests (through
``backend.core.stats``). Loop-based twins of the classes, the test oracles, live in ``tests/backend/bias/oracles.py``.

Worked example (the reference notebook's anchoring data):

>>> control = np.array([[10], [10], [16], [5], [200]])
>>> treatment = np.array([[10], [20], [4], [4], [100]])
>>> anchor = np.array([[10], [10], [4], [3], [30]])
>>> options = np.array([[10, 20, 30, 40], [10, 20, 30, 40], [4, 8, 16, 20], [2, 3, 4, 5], [100, 200, 300, 400]])
>>> AnchoringBiasMetric(anchor_agnostic=True, overall=True).compute(control, treatment, options, anchor)
0.4333333329716666
>>> AnchoringBiasMetric(anchor_agnostic=False, overall=True).compute(control, treatment, options, anchor)
0.4999999993133334
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from backend.core.stats import bootstrap_statistic, percentile_interval

EPSILON = 1e-8  # added to the signed difference inside |.| of the denominators, as in the reference


# --- input validation ---------------------------------------------------------------------------------------------
def _column(name: str, value: Any) -> np.ndarray:
    """``value`` as a numeric column of shape (N, 1) with N >= 1 and only finite entries (dtype kept)."""
    if value is None:
        raise ValueError(f"{name} is required, got None.")
    array = np.asarray(value)
    if array.dtype == bool:
        array = array.astype(np.int64)
    if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise ValueError(f"{name} must hold numbers, got an array of dtype {array.dtype}.")
    if array.ndim == 1:
        array = array.reshape(-1, 1)
    if array.ndim != 2 or array.shape[1] != 1:
        raise ValueError(f"{name} must be a column vector of shape (N, 1), got shape {array.shape}.")
    if array.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one test, got none.")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must hold finite numbers only, got NaN or infinity.")
    return array


def _same_length(**columns: np.ndarray) -> int:
    lengths = {name: array.shape[0] for name, array in columns.items()}
    if len(set(lengths.values())) != 1:
        described = ", ".join(f"{name} has {length}" for name, length in lengths.items())
        raise ValueError(f"All inputs must describe the same tests, but {described} rows.")
    return next(iter(lengths.values()))


def _options(value: Any, n_tests: int) -> np.ndarray:
    if value is None:
        raise ValueError("answer_options is required, got None.")
    options = np.asarray(value)
    if not (np.issubdtype(options.dtype, np.integer) or np.issubdtype(options.dtype, np.floating)):
        raise ValueError(f"answer_options must hold numbers, got an array of dtype {options.dtype}.")
    if options.ndim != 2:
        raise ValueError(f"answer_options must have shape (N, K), got shape {options.shape}.")
    if options.shape[0] != n_tests:
        raise ValueError(f"answer_options must have one row per test ({n_tests}), got {options.shape[0]} rows.")
    if options.shape[1] < 2:
        raise ValueError(f"answer_options must offer at least two options per test, got {options.shape[1]}.")
    if not np.isfinite(options).all():
        raise ValueError("answer_options must hold finite numbers only, got NaN or infinity.")
    return options


def _chosen_index(name: str, answer: np.ndarray, options: np.ndarray) -> np.ndarray:
    """Index (N,) of the first option equal to each answer; every answer must be one of its row's options."""
    matches = options == answer
    found = matches.any(axis=1)
    if not found.all():
        row = int(np.flatnonzero(~found)[0])
        raise ValueError(
            f"{name} must be one of the answer options, but test {row} answered {answer[row, 0]!r} "
            f"with options {options[row].tolist()}."
        )
    return matches.argmax(axis=1)


def _binary(name: str, answer: np.ndarray) -> None:
    if not np.isin(answer, (0, 1)).all():
        raise ValueError(f"{name} must be 0 or 1 in every test, got {sorted(set(answer.ravel().tolist()))}.")


def _whole(name: str, value: np.ndarray, *, minimum: int) -> None:
    if (value != np.round(value)).any() or (value < minimum).any():
        raise ValueError(f"{name} must hold whole numbers of at least {minimum}, got {value.ravel().tolist()[:10]}.")


def _option_distribution(name: str, confidence: Any, chosen: np.ndarray, options: np.ndarray) -> np.ndarray:
    """Probabilities (N, K) over the options from a single confidence per test or from K probabilities per test."""
    n_tests, n_options = options.shape
    array = np.asarray(confidence, dtype=float)
    if array.ndim == 1:
        array = array.reshape(-1, 1)
    if array.ndim != 2 or array.shape[0] != n_tests or array.shape[1] not in (1, n_options):
        raise ValueError(
            f"{name} must have shape ({n_tests}, 1) (confidence in the chosen option) or ({n_tests}, {n_options}) "
            f"(one probability per option), got shape {np.shape(confidence)}."
        )
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must hold finite numbers only, got NaN or infinity.")
    if array.shape[1] == 1:
        if ((array < 0) | (array > 1)).any():
            raise ValueError(f"{name} must lie between 0 and 1, got values from {array.min()} to {array.max()}.")
        spread = np.repeat((1.0 - array) / (n_options - 1), n_options, axis=1)
        np.put_along_axis(spread, chosen.reshape(-1, 1), array, axis=1)
        return spread
    if (array < 0).any():
        raise ValueError(f"{name} holds option probabilities, which must not be negative.")
    totals = array.sum(axis=1, keepdims=True)
    if (totals <= 0).any():
        raise ValueError(f"{name} holds option probabilities, and every row must have a positive sum.")
    return array / totals


def _probability_of_one(name: str, confidence: Any, answer: np.ndarray) -> np.ndarray:
    """Probability (N, 1) of answering 1 from a confidence in the given 0/1 answer or from probabilities of (0, 1)."""
    chosen = answer.ravel().astype(np.int64)
    distribution = _option_distribution(name, confidence, chosen, np.tile([0.0, 1.0], (answer.shape[0], 1)))
    return distribution[:, 1:2]


def _weights(weights: Any, n_tests: int, overall: bool) -> np.ndarray | None:
    if weights is None:
        return None
    if not overall:
        raise ValueError("weights only apply to the batch metric; construct the metric with overall=True.")
    array = _column("weights", weights).astype(float)
    if array.shape[0] != n_tests:
        raise ValueError(f"weights must have one row per test ({n_tests}), got {array.shape[0]} rows.")
    if (array < 0).any():
        raise ValueError("weights must not be negative.")
    if array.sum() <= 0:
        raise ValueError("weights must not all be zero.")
    return array


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def _expected_value(distribution: np.ndarray, options: np.ndarray) -> np.ndarray:
    return (distribution * options).sum(axis=1, keepdims=True)


def _pick(options: np.ndarray, index: np.ndarray) -> np.ndarray:
    return np.take_along_axis(options, index.reshape(-1, 1), axis=1)


def _mean(values: np.ndarray, weights: np.ndarray | None) -> float:
    if weights is None:
        return float(np.mean(values))
    return float(np.sum(weights * values) / np.sum(weights))


def _relative_shift(control: np.ndarray, treatment: np.ndarray, options: np.ndarray) -> np.ndarray:
    """|a2 - a1| / |a1 - farthest(a1) + eps|, the anchor-agnostic anchoring and halo-effect individual metric."""
    farthest = _pick(options, np.abs(options - control).argmax(axis=1))
    return np.abs(control - treatment) / np.abs(control - farthest + EPSILON)


def _paired_answers(
    control_answer: Any,
    treatment_answer: Any,
    answer_options: Any,
    control_confidence: Any,
    treatment_confidence: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated (control, treatment, options), the answers replaced by expected values where confidences are given."""
    control = _column("control_answer", control_answer)
    treatment = _column("treatment_answer", treatment_answer)
    n_tests = _same_length(control_answer=control, treatment_answer=treatment)
    options = _options(answer_options, n_tests)
    control_index = _chosen_index("control_answer", control, options)
    treatment_index = _chosen_index("treatment_answer", treatment, options)
    if control_confidence is not None:
        distribution = _option_distribution("control_confidence", control_confidence, control_index, options)
        control = _expected_value(distribution, options)
    if treatment_confidence is not None:
        distribution = _option_distribution("treatment_confidence", treatment_confidence, treatment_index, options)
        treatment = _expected_value(distribution, options)
    return control, treatment, options


class _BatchOrIndividual:
    def __init__(self, *, overall: bool = True):
        self.overall = _flag("overall", overall)

    def __repr__(self) -> str:
        flags = ", ".join(f"{name}={value!r}" for name, value in vars(self).items())
        return f"{type(self).__name__}({flags})"


# --- the metrics ----------------------------------------------------------------------------------------------------
class AnchoringBiasMetric(_BatchOrIndividual):
    """Anchoring bias: how far the answer moves between the control and the treatment (which adds an anchor).

    Let a1 be the control answer, a2 the treatment answer, O the test's options, eps = 1e-8.

    - anchor-agnostic (``anchor_agnostic=True``): B_i = |a2 - a1| / |a1 - f + eps| with f the option farthest from a1
      (argmax |O - a1|, the first on ties); B_i in [0, 1], 1 = moved as far as the options allow.
    - anchor-specific: B'_i = max(0, (|a1 - x| - |a2 - x|) / |a1 - x + eps|) with x the option closest to the anchor
      (argmin |anchor - O|, the first on ties); B'_i in [0, 1], 1 = moved onto the anchor, 0 = not closer.
    - batch: B = mean_i B_i, or with ``weights`` B = sum_i w_i B_i / sum_i w_i.
    - because eps sits inside |.|, a negative a1 - f (or a1 - x) gives values up to 1 + eps / |a1 - f|, e.g. the
      reference's 0.333333333444 for 10 / |10 - 40 + eps|; this is kept so that the seed numbers are reproduced.
    - expected-answer variant: a1 and a2 are replaced by sum_k p_k O_k (see the module docstring); f and x are then
      taken relative to that expected value.

    ``anchor`` (N, 1) is needed only for the anchor-specific metric.

    >>> options = np.array([[10, 20, 30, 40]])
    >>> AnchoringBiasMetric(anchor_agnostic=False, overall=False).compute([[40]], [[30]], options, [[10]])
    array([[0.33333333]])

    With 40% confidence in the treatment answer 20, the expected treatment answer is 0.4 * 20 + 0.2 * (10 + 30 + 40)
    = 24, so B = |24 - 10| / |10 - 40| = 0.4667 instead of 1/3:

    >>> AnchoringBiasMetric(anchor_agnostic=True, overall=False).compute(
    ...     [[10]], [[20]], options, treatment_confidence=[[0.4]])
    array([[0.46666667]])
    """

    def __init__(self, *, anchor_agnostic: bool = True, overall: bool = True):
        self.anchor_agnostic = _flag("anchor_agnostic", anchor_agnostic)
        super().__init__(overall=overall)

    def compute(
        self,
        control_answer: Any,
        treatment_answer: Any,
        answer_options: Any,
        anchor: Any = None,
        *,
        control_confidence: Any = None,
        treatment_confidence: Any = None,
        weights: Any = None,
    ) -> np.ndarray | float:
        control, treatment, options = _paired_answers(
            control_answer, treatment_answer, answer_options, control_confidence, treatment_confidence
        )
        anchors = None
        if anchor is not None or not self.anchor_agnostic:
            if anchor is None:
                raise ValueError("anchor is required for the anchor-specific metric (anchor_agnostic=False).")
            anchors = _column("anchor", anchor)
            _same_length(control_answer=control, anchor=anchors)
        weight = _weights(weights, control.shape[0], self.overall)
        if self.anchor_agnostic:
            individual = _relative_shift(control, treatment, options)
        else:
            target = _pick(options, np.abs(anchors - options).argmin(axis=1))
            closer = np.abs(control - target) - np.abs(treatment - target)
            individual = np.maximum(0, closer / np.abs(control - target + EPSILON))
        return _mean(individual, weight) if self.overall else individual


class HaloEffectMetric(_BatchOrIndividual):
    """Halo effect: how far the answer moves between the control and the treatment version of a test.

    B_i = |a2 - a1| / |a1 - f + eps| with f the option farthest from a1 (the first on ties), eps = 1e-8; B_i in
    [0, 1]. Batch: mean_i B_i, or sum_i w_i B_i / sum_i w_i with ``weights``. The expected-answer variant replaces a1
    and a2 by their expected option values (module docstring). This is the anchor-agnostic anchoring rule, and it is
    computed by ``AnchoringBiasMetric(anchor_agnostic=True)``.

    >>> HaloEffectMetric(overall=False).compute([[4]], [[8]], [[4, 8, 16, 20]])
    array([[0.25]])
    >>> batch = HaloEffectMetric(overall=True).compute([[4], [20]], [[8], [20]], [[4, 8, 16, 20]] * 2, weights=[[3], [1]])
    >>> round(batch, 8)  # (3 * 0.25 + 1 * 0) / 4
    0.1875
    """

    def compute(
        self,
        control_answer: Any,
        treatment_answer: Any,
        answer_options: Any,
        *,
        control_confidence: Any = None,
        treatment_confidence: Any = None,
        weights: Any = None,
    ) -> np.ndarray | float:
        return AnchoringBiasMetric(anchor_agnostic=True, overall=self.overall).compute(
            control_answer,
            treatment_answer,
            answer_options,
            control_confidence=control_confidence,
            treatment_confidence=treatment_confidence,
            weights=weights,
        )


class LossAversionMetric(_BatchOrIndividual):
    """Loss aversion: whether gambles "win lambda * X or lose X" are accepted (1) or rejected (0).

    Individual: B_i = a_i (the answer itself; dtype kept). Batch: B = 1 - sum_i (a_i / l_i) / sum_i (1 / l_i), in
    [0, 1]: rejecting every gamble gives 1, and accepting a gamble with a small lambda lowers the bias most. Lambda is
    used as given (the reference's earlier "lambda - 1" shift is not applied).

    - expected-answer variant (``answer_confidence``): a_i becomes the probability of accepting, c_i if a_i = 1 and
      1 - c_i if a_i = 0 (or the second of two probabilities for (reject, accept));
    - ``weights``: B = 1 - sum_i (w_i a_i / l_i) / sum_i (w_i / l_i).

    >>> LossAversionMetric(overall=True).compute([[1], [0]], [[2.0], [2.0]])
    0.5
    >>> LossAversionMetric(overall=False).compute([[1], [0]], [[2.0], [2.0]], answer_confidence=[[0.8], [0.6]])
    array([[0.8],
           [0.4]])
    """

    def compute(
        self, answer: Any, lambdas: Any, *, answer_confidence: Any = None, weights: Any = None
    ) -> np.ndarray | float:
        accepted = _column("answer", answer)
        _binary("answer", accepted)
        lambdas = _column("lambdas", lambdas)
        n_tests = _same_length(answer=accepted, lambdas=lambdas)
        if (lambdas <= 0).any():
            raise ValueError(f"lambdas must be positive, got {lambdas.min()}.")
        weight = _weights(weights, n_tests, self.overall)
        if answer_confidence is not None:
            accepted = _probability_of_one("answer_confidence", answer_confidence, accepted)
        if not self.overall:
            return accepted.copy()
        if weight is None:
            return float(1 - np.sum(accepted / lambdas) / np.sum(1 / lambdas))
        return float(1 - np.sum(weight * accepted / lambdas) / np.sum(weight / lambdas))


class ConfirmationBiasMetric(_BatchOrIndividual):
    """Confirmation bias: whether the arguments picked in the treatment side with the control answer.

    a_i in {0, 1} is the control answer (1 = agrees with the statement), p_i and n_i the numbers of pro and con
    arguments selected among the N_i shown in the treatment.

    - individual: B_i = max(0, (a_i (p_i - n_i) + (1 - a_i)(n_i - p_i)) / (p_i + n_i)), in [0, 1] (the reference
      notebook prints (p_i - n_i) in both terms, a typo; its code uses n_i - p_i for a_i = 0);
    - batch: B = sum_i B_i N_i / sum_i N_i (tests with more arguments count more), with ``weights``
      sum_i w_i B_i N_i / sum_i w_i N_i;
    - expected-answer variant (``answer_confidence``): a_i becomes the probability q_i of agreeing, so
      B_i = max(0, (2 q_i - 1)(p_i - n_i) / (p_i + n_i)).

    p_i + n_i = 0 (nothing selected) has no defined value and raises ``ValueError``.

    >>> ConfirmationBiasMetric(overall=False).compute([[1], [0]], [[3], [3]], [[1], [1]], [[8], [8]])
    array([[0.5],
           [0. ]])
    >>> ConfirmationBiasMetric(overall=False).compute([[1]], [[3]], [[1]], [[8]], answer_confidence=[[0.75]])
    array([[0.25]])
    """

    def compute(
        self,
        answer: Any,
        pro_answer: Any,
        con_answer: Any,
        n_args: Any,
        *,
        answer_confidence: Any = None,
        weights: Any = None,
    ) -> np.ndarray | float:
        agrees = _column("answer", answer)
        _binary("answer", agrees)
        pro = _column("pro_answer", pro_answer)
        con = _column("con_answer", con_answer)
        n_arguments = _column("n_args", n_args)
        n_tests = _same_length(answer=agrees, pro_answer=pro, con_answer=con, n_args=n_arguments)
        _whole("pro_answer", pro, minimum=0)
        _whole("con_answer", con, minimum=0)
        _whole("n_args", n_arguments, minimum=1)
        selected = pro + con
        if (selected == 0).any():
            row = int(np.flatnonzero(selected.ravel() == 0)[0])
            raise ValueError(f"pro_answer + con_answer must be positive, but test {row} selected no argument.")
        if (selected > n_arguments).any():
            row = int(np.flatnonzero((selected > n_arguments).ravel())[0])
            raise ValueError(f"pro_answer + con_answer must not exceed n_args, but test {row} selects more.")
        weight = _weights(weights, n_tests, self.overall)
        if answer_confidence is not None:
            agrees = _probability_of_one("answer_confidence", answer_confidence, agrees)
        individual = np.maximum(0, (agrees * (pro - con) + (1 - agrees) * (con - pro)) / selected)
        if not self.overall:
            return individual
        if weight is None:
            return float(np.sum(individual * n_arguments) / np.sum(n_arguments))
        return float(np.sum(weight * individual * n_arguments) / np.sum(weight * n_arguments))


def confidence_distribution(answer: Any, answer_options: Any, confidence: Any) -> np.ndarray:
    """The option probabilities (N, K) that the expected-answer variant uses for ``answer`` and ``confidence``.

    A single confidence c per test puts c on the chosen option and (1 - c) / (K - 1) on each other option; K
    probabilities per test are normalised to sum 1. Lets callers mix both kinds of confidence in one array.

    >>> confidence_distribution([[20]], [[10, 20, 30]], [[0.5]])
    array([[0.25, 0.5 , 0.25]])
    """
    chosen_answer = _column("answer", answer)
    options = _options(answer_options, chosen_answer.shape[0])
    chosen = _chosen_index("answer", chosen_answer, options)
    return _option_distribution("confidence", confidence, chosen, options)


# --- bootstrap interval ---------------------------------------------------------------------------------------------
class Interval(NamedTuple):
    low: float
    high: float


def bootstrap_ci(
    metric: _BatchOrIndividual,
    *arrays: Any,
    confidence_level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    **options: Any,
) -> Interval:
    """A percentile bootstrap interval for a batch metric: tests (rows) are resampled with replacement, all inputs
    together.

    ``arrays`` and ``options`` are exactly what ``metric.compute`` takes (array-valued options such as ``weights``
    or confidences are resampled with their rows). The resamples are ``backend.core.stats.bootstrap_statistic``'s
    (seeded row indices), the interval its ``percentile_interval``, so the same call gives the same interval. A
    resample the metric cannot score (e.g. only zero weights) counts as NaN and is left out.

    >>> metric = HaloEffectMetric(overall=True)
    >>> low, high = bootstrap_ci(metric, [[4], [8], [16], [20]], [[8], [8], [16], [4]], [[4, 8, 16, 20]] * 4, seed=1)
    >>> 0 <= low <= metric.compute([[4], [8], [16], [20]], [[8], [8], [16], [4]], [[4, 8, 16, 20]] * 4) <= high <= 1
    True
    """
    if not getattr(metric, "overall", False):
        raise ValueError("metric must compute the batch metric (overall=True) for a bootstrap interval.")
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must lie strictly between 0 and 1, got {confidence_level}.")
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}.")
    metric.compute(*arrays, **options)  # validates every input with its own message
    rows = [np.asarray(array) if array is not None else None for array in arrays]
    keyed = {key: (np.asarray(value) if value is not None else None) for key, value in options.items()}
    n_tests = len(rows[0])
    if n_tests < 2:
        raise ValueError(f"A bootstrap interval needs at least two tests, got {n_tests}.")

    def resampled(index: np.ndarray) -> float:
        args = [row[index] if row is not None else None for row in rows]
        kwargs = {key: (value[index] if value is not None else None) for key, value in keyed.items()}
        return metric.compute(*args, **kwargs)

    replicates = bootstrap_statistic(resampled, n_tests, n_boot=int(n_resamples), seed=seed)
    return Interval(*percentile_interval(replicates, confidence=confidence_level))
