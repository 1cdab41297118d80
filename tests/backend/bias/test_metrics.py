"""The bias metrics: the reference notebook's numbers to the last digit, the confidence variants, bad inputs, oracles."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.bias.metrics import (
    AnchoringBiasMetric,
    ConfirmationBiasMetric,
    HaloEffectMetric,
    LossAversionMetric,
    bootstrap_ci,
)
from tests.backend.bias.oracles import anchoring_naive, confirmation_naive, halo_effect_naive, loss_aversion_naive
from tests.support import examples

# --- the seed's inputs (../shared/seeds/002, the reference notebook) -------------------------------------------------
CONTROL = np.array([[10], [10], [16], [5], [200]])
TREATMENT = np.array([[10], [20], [4], [4], [100]])
ANCHOR = np.array([[10], [10], [4], [3], [30]])
OPTIONS = np.array([[10, 20, 30, 40], [10, 20, 30, 40], [4, 8, 16, 20], [2, 3, 4, 5], [100, 200, 300, 400]])
ANSWER_UNBIASED = np.array([[0], [1], [1], [1], [1], [1]])
ANSWER_BIASED = np.array([[0], [0], [0], [0], [1], [1]])
LAMBDAS = np.array([[1.0000001], [1.05], [1.1], [10], [100], [2000]])
AGREES = np.array([[0], [1], [0], [1], [0], [1], [0]])
PRO = np.array([[2], [6], [1], [3], [4], [1], [1]])
CON = np.array([[2], [6], [4], [0], [5], [2], [2]])
N_ARGS = np.array([[8], [12], [8], [6], [10], [10], [20]])

# The seed's printed outputs, character for character.
SEED_AGNOSTIC = """array([[0.        ],
       [0.33333333],
       [1.        ],
       [0.33333333],
       [0.5       ]])"""
SEED_SPECIFIC = """array([[0. ],
       [0. ],
       [1. ],
       [0.5],
       [1. ]])"""
SEED_LA_UNBIASED = "[[0]\n [1]\n [1]\n [1]\n [1]\n [1]]"
SEED_LA_BIASED = "[[0]\n [0]\n [0]\n [0]\n [1]\n [1]]"
SEED_CONFIRMATION = """array([[0.        ],
       [0.        ],
       [0.6       ],
       [1.        ],
       [0.11111111],
       [0.        ],
       [0.33333333]])"""


# --- the seed, to the last digit -----------------------------------------------------------------------------------
def test_anchor_agnostic_individual_prints_as_in_the_seed():
    result = AnchoringBiasMetric(anchor_agnostic=True, overall=False).compute(CONTROL, TREATMENT, OPTIONS, ANCHOR)
    assert result.shape == (5, 1)
    assert repr(result) == SEED_AGNOSTIC
    # the reference's unrounded values (eps inside the absolute value)
    expected = [0, 0.333333333444, 0.999999999167, 0.333333332222, 0.500000000025]
    assert result.ravel() == pytest.approx(expected, abs=1e-12)


def test_anchor_specific_individual_prints_as_in_the_seed():
    result = AnchoringBiasMetric(anchor_agnostic=False, overall=False).compute(CONTROL, TREATMENT, OPTIONS, ANCHOR)
    assert repr(result) == SEED_SPECIFIC
    assert result.ravel() == pytest.approx([0, 0, 0.9999999992, 0.4999999975, 0.9999999999], abs=1e-10)


def test_anchoring_batches_equal_the_seed_exactly():
    agnostic = AnchoringBiasMetric(anchor_agnostic=True, overall=True).compute(CONTROL, TREATMENT, OPTIONS, ANCHOR)
    specific = AnchoringBiasMetric(anchor_agnostic=False, overall=True).compute(CONTROL, TREATMENT, OPTIONS, ANCHOR)
    assert isinstance(agnostic, float) and isinstance(specific, float)
    assert repr(agnostic) == "0.4333333329716666"
    assert repr(specific) == "0.4999999993133334"


def test_epsilon_sits_inside_the_absolute_value():
    # eps outside |.| would give 0.43333333291722215, no eps 0.4333333333 (reference §2.2)
    batch = AnchoringBiasMetric(anchor_agnostic=True, overall=True).compute(CONTROL, TREATMENT, OPTIONS, ANCHOR)
    assert batch != 0.43333333291722215
    assert batch != pytest.approx(13 / 30, abs=1e-12)


def test_halo_effect_equals_the_seed():
    individual = HaloEffectMetric(overall=False).compute(CONTROL, TREATMENT, OPTIONS)
    assert repr(individual) == SEED_AGNOSTIC
    assert repr(HaloEffectMetric(overall=True).compute(CONTROL, TREATMENT, OPTIONS)) == "0.4333333329716666"


def test_loss_aversion_equals_the_seed():
    individual = LossAversionMetric(overall=False)
    assert f"{individual.compute(ANSWER_UNBIASED, LAMBDAS)}" == SEED_LA_UNBIASED
    assert f"{individual.compute(ANSWER_BIASED, LAMBDAS)}" == SEED_LA_BIASED
    batch = LossAversionMetric(overall=True)
    assert f"(Almost) Unbiased: {batch.compute(ANSWER_UNBIASED, LAMBDAS)}" == "(Almost) Unbiased: 0.33647691844311445"
    assert f"Biased: {batch.compute(ANSWER_BIASED, LAMBDAS)}" == "Biased: 0.9964669920030466"


def test_loss_aversion_uses_lambda_unshifted():
    # the older "lambda - 1" version gives 0.99999699 and 0.99999999894 (reference §2.2)
    assert LossAversionMetric(overall=True).compute(ANSWER_UNBIASED, LAMBDAS) < 0.5


def test_confirmation_bias_equals_the_seed():
    individual = ConfirmationBiasMetric(overall=False).compute(AGREES, PRO, CON, N_ARGS)
    assert repr(individual) == SEED_CONFIRMATION
    batch = ConfirmationBiasMetric(overall=True).compute(AGREES, PRO, CON, N_ARGS)
    assert repr(batch) == "0.251051051051051"


def test_confirmation_disagreeing_branch_uses_con_minus_pro():
    # a = 0 with 1 pro and 4 con selected confirms the disagreement: (4 - 1) / 5
    value = ConfirmationBiasMetric(overall=False).compute([[0]], [[1]], [[4]], [[8]])
    assert value[0, 0] == pytest.approx(0.6)


def test_one_dimensional_inputs_give_the_same_results():
    metric = AnchoringBiasMetric(anchor_agnostic=True, overall=False)
    flat = metric.compute(CONTROL.ravel(), TREATMENT.ravel(), OPTIONS, ANCHOR.ravel())
    assert flat.shape == (5, 1)
    np.testing.assert_array_equal(flat, metric.compute(CONTROL, TREATMENT, OPTIONS, ANCHOR))


# --- confidence variants, hand-computed ----------------------------------------------------------------------------
ROW = [[10, 20, 30, 40]]


def test_expected_answer_spreads_the_rest_of_a_single_confidence_evenly():
    # treatment 20 held with 0.4: 0.4*20 + 0.2*(10+30+40) = 24; control 10 is certain; farthest from 10 is 40
    metric = AnchoringBiasMetric(anchor_agnostic=True, overall=False)
    value = metric.compute([[10]], [[20]], ROW, treatment_confidence=[[0.4]])
    assert value[0, 0] == pytest.approx(14 / 30, rel=1e-7)


def test_expected_answer_moves_the_reference_points_with_the_expected_control():
    # control 40 held with 0.7: 0.7*40 + 0.1*(10+20+30) = 34; anchor 10 -> option 10; treatment 30 certain
    # anchor-specific: (|34-10| - |30-10|) / |34-10| = 4/24
    metric = AnchoringBiasMetric(anchor_agnostic=False, overall=False)
    value = metric.compute([[40]], [[30]], ROW, [[10]], control_confidence=[[0.7]])
    assert value[0, 0] == pytest.approx(1 / 6, rel=1e-7)
    # anchor-agnostic: the option farthest from 34 is 10, so |30-34| / |34-10| = 4/24 too
    agnostic = AnchoringBiasMetric(anchor_agnostic=True, overall=False)
    assert agnostic.compute([[40]], [[30]], ROW, control_confidence=[[0.7]])[0, 0] == pytest.approx(1 / 6, rel=1e-7)


def test_expected_answer_takes_option_probabilities_and_normalises_them():
    # control probabilities (0.5, 0.5, 0, 0) -> 15; farthest from 15 is 40; treatment 30: |30-15| / |15-40| = 0.6
    metric = HaloEffectMetric(overall=False)
    value = metric.compute([[10]], [[30]], ROW, control_confidence=[[0.5, 0.5, 0, 0]])
    assert value[0, 0] == pytest.approx(0.6, rel=1e-7)
    unnormalised = metric.compute([[10]], [[30]], ROW, control_confidence=[[20, 20, 0, 0]])
    assert unnormalised[0, 0] == value[0, 0]


def test_uniform_confidence_removes_the_shift():
    metric = HaloEffectMetric(overall=False)
    quarter = [[0.25]]
    assert metric.compute([[10]], [[40]], ROW, control_confidence=quarter, treatment_confidence=quarter)[0, 0] == 0


def test_full_confidence_gives_exactly_the_plain_metric():
    ones = np.ones((5, 1))
    for agnostic in (True, False):
        metric = AnchoringBiasMetric(anchor_agnostic=agnostic, overall=True)
        plain = metric.compute(CONTROL, TREATMENT, OPTIONS, ANCHOR)
        assert (
            metric.compute(CONTROL, TREATMENT, OPTIONS, ANCHOR, control_confidence=ones, treatment_confidence=ones)
            == plain
        )
    assert LossAversionMetric(overall=True).compute(
        ANSWER_UNBIASED, LAMBDAS, answer_confidence=np.ones((6, 1))
    ) == LossAversionMetric(overall=True).compute(ANSWER_UNBIASED, LAMBDAS)
    assert ConfirmationBiasMetric(overall=True).compute(
        AGREES, PRO, CON, N_ARGS, answer_confidence=np.ones((7, 1))
    ) == ConfirmationBiasMetric(overall=True).compute(AGREES, PRO, CON, N_ARGS)


def test_loss_aversion_expected_answer_is_the_probability_of_accepting():
    # accept with 0.8 -> 0.8, reject with 0.6 -> 0.4; lambdas 2, 4: 1 - (0.8/2 + 0.4/4) / (1/2 + 1/4) = 1/3
    metric = LossAversionMetric(overall=True)
    assert metric.compute([[1], [0]], [[2], [4]], answer_confidence=[[0.8], [0.6]]) == pytest.approx(1 / 3)
    # the same as probabilities of (reject, accept)
    as_pairs = metric.compute([[1], [0]], [[2], [4]], answer_confidence=[[0.2, 0.8], [0.6, 0.4]])
    assert as_pairs == pytest.approx(1 / 3)


def test_loss_aversion_weighted_batch():
    # 1 - (1*1/2 + 3*0/4) / (1/2 + 3/4) = 1 - 0.5/1.25 = 0.6
    assert LossAversionMetric(overall=True).compute([[1], [0]], [[2], [4]], weights=[[1], [3]]) == pytest.approx(0.6)


def test_confirmation_expected_answer_uses_the_probability_of_agreeing():
    # q = 0.75 and 0.1: B1 = (2*0.75-1)(3-1)/4 = 0.25, B2 = (2*0.1-1)(1-3)/4 = 0.4; batch (0.25*8 + 0.4*8) / 16
    metric = ConfirmationBiasMetric(overall=False)
    values = metric.compute([[1], [0]], [[3], [1]], [[1], [3]], [[8], [8]], answer_confidence=[[0.75], [0.9]])
    assert values.ravel() == pytest.approx([0.25, 0.4])
    batch = ConfirmationBiasMetric(overall=True).compute(
        [[1], [0]], [[3], [1]], [[1], [3]], [[8], [8]], answer_confidence=[[0.75], [0.9]]
    )
    assert batch == pytest.approx(0.325)


def test_confirmation_weighted_batch_multiplies_weight_and_argument_count():
    # plain B = 0.5 and 0; weights 1, 3; N = 8, 4: (1*0.5*8) / (1*8 + 3*4) = 0.2
    batch = ConfirmationBiasMetric(overall=True).compute(
        [[1], [1]], [[3], [1]], [[1], [3]], [[8], [4]], weights=[[1], [3]]
    )
    assert batch == pytest.approx(0.2)


def test_anchoring_weighted_batch():
    # seed individual values weighted 1, 1, 0, 0, 2: (0 + 0.333333333444 + 2 * 0.500000000025) / 4
    metric = AnchoringBiasMetric(anchor_agnostic=True, overall=True)
    batch = metric.compute(CONTROL, TREATMENT, OPTIONS, ANCHOR, weights=[[1], [1], [0], [0], [2]])
    assert batch == pytest.approx((0.333333333444 + 1.00000000005) / 4, abs=1e-12)


# --- bad inputs ----------------------------------------------------------------------------------------------------
def _anchoring(**changes):
    arguments = dict(control_answer=CONTROL, treatment_answer=TREATMENT, answer_options=OPTIONS, anchor=ANCHOR)
    arguments.update(changes)
    return lambda: AnchoringBiasMetric(anchor_agnostic=False, overall=True).compute(**arguments)


def _halo(**changes):
    arguments = dict(control_answer=CONTROL, treatment_answer=TREATMENT, answer_options=OPTIONS)
    arguments.update(changes)
    return lambda: HaloEffectMetric(overall=False).compute(**arguments)


def _loss(**changes):
    arguments = dict(answer=ANSWER_BIASED, lambdas=LAMBDAS)
    arguments.update(changes)
    return lambda: LossAversionMetric(overall=True).compute(**arguments)


def _confirmation(**changes):
    arguments = dict(answer=AGREES, pro_answer=PRO, con_answer=CON, n_args=N_ARGS)
    arguments.update(changes)
    return lambda: ConfirmationBiasMetric(overall=True).compute(**arguments)


BAD_INPUTS = {
    "mismatched answers": (_anchoring(treatment_answer=TREATMENT[:4]), "same tests"),
    "options rows": (_halo(answer_options=OPTIONS[:4]), "answer_options must have one row per test"),
    "anchor rows": (_anchoring(anchor=ANCHOR[:3]), "anchor has 3"),
    "matrix answer": (_halo(control_answer=OPTIONS), r"control_answer must be a column vector"),
    "nan answer": (_halo(control_answer=[[np.nan]] * 5), "control_answer must hold finite"),
    "inf option": (_halo(answer_options=np.where(OPTIONS == 40, np.inf, OPTIONS)), "answer_options must hold finite"),
    "nan anchor": (_anchoring(anchor=[[1], [2], [np.nan], [4], [5]]), "anchor must hold finite"),
    "text answer": (_halo(control_answer=[["a"]] * 5), "control_answer must hold numbers"),
    "treatment not an option": (_halo(treatment_answer=[[10], [20], [5], [4], [100]]), "treatment_answer must be one"),
    "control not an option": (_anchoring(control_answer=[[11], [10], [16], [5], [200]]), "control_answer must be one"),
    "one option": (_halo(control_answer=[[1]], treatment_answer=[[1]], answer_options=[[1]]), "at least two options"),
    "no tests": (_halo(control_answer=np.empty((0, 1)), treatment_answer=np.empty((0, 1))), "at least one test"),
    "anchor missing": (_anchoring(anchor=None), "anchor is required"),
    "lambda zero": (_loss(lambdas=[[1], [2], [0], [1], [1], [1]]), "lambdas must be positive"),
    "lambda negative": (_loss(lambdas=-LAMBDAS), "lambdas must be positive"),
    "lambda nan": (_loss(lambdas=[[1], [2], [np.nan], [1], [1], [1]]), "lambdas must hold finite"),
    "loss answer 2": (_loss(answer=[[0], [2], [0], [0], [1], [1]]), "answer must be 0 or 1"),
    "loss rows": (_loss(lambdas=LAMBDAS[:5]), "same tests"),
    "nothing selected": (_confirmation(pro_answer=[[0]] * 7, con_answer=[[0]] * 7), r"pro_answer \+ con_answer"),
    "more than shown": (_confirmation(n_args=[[4]] * 7), "must not exceed n_args"),
    "negative pro": (_confirmation(pro_answer=-PRO), "pro_answer must hold whole numbers"),
    "fractional con": (_confirmation(con_answer=CON + 0.5), "con_answer must hold whole numbers"),
    "zero arguments": (_confirmation(n_args=[[0]] * 7), "n_args must hold whole numbers of at least 1"),
    "agree 0.5": (_confirmation(answer=[[0.5]] * 7), "answer must be 0 or 1"),
    "confirmation rows": (_confirmation(con_answer=CON[:6]), "same tests"),
    "confidence above 1": (_halo(control_confidence=[[1.2]] * 5), "control_confidence must lie between 0 and 1"),
    "confidence below 0": (_halo(treatment_confidence=[[-0.1]] * 5), "treatment_confidence must lie between"),
    "confidence shape": (_halo(control_confidence=np.ones((5, 3))), "control_confidence must have shape"),
    "negative probability": (_halo(control_confidence=[[0.5, 0.6, -0.1, 0]] * 5), "must not be negative"),
    "zero probabilities": (_halo(treatment_confidence=np.zeros((5, 4))), "positive sum"),
    "nan confidence": (_loss(answer_confidence=[[np.nan]] * 6), "answer_confidence must hold finite"),
    "negative weight": (_confirmation(weights=[[-1]] * 7), "weights must not be negative"),
    "zero weights": (_loss(weights=np.zeros((6, 1))), "weights must not all be zero"),
    "weights on individual": (_halo(weights=np.ones((5, 1))), "weights only apply to the batch"),
    "weights rows": (_anchoring(weights=np.ones((4, 1))), "weights must have one row per test"),
}


@pytest.mark.parametrize("case", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_raises_a_value_error_naming_the_argument(case):
    call, message = case
    with pytest.raises(ValueError, match=message):
        call()


def test_flags_must_be_booleans():
    with pytest.raises(ValueError, match="overall must be True or False"):
        HaloEffectMetric(overall="yes")
    with pytest.raises(ValueError, match="anchor_agnostic must be True or False"):
        AnchoringBiasMetric(anchor_agnostic=1, overall=True)


# --- agreement with the loop oracles -------------------------------------------------------------------------------
@st.composite
def paired_tests(draw, with_confidence: bool):
    n_tests = draw(st.integers(1, 12))
    n_options = draw(st.integers(2, 6))
    values = st.integers(-50, 50)
    options = np.array([draw(st.lists(values, min_size=n_options, max_size=n_options)) for _ in range(n_tests)])
    control = np.array([[row[draw(st.integers(0, n_options - 1))]] for row in options])
    treatment = np.array([[row[draw(st.integers(0, n_options - 1))]] for row in options])
    anchor = np.array([[draw(values)] for _ in range(n_tests)])
    extra = {}
    if with_confidence:
        unit = st.floats(0, 1, allow_nan=False)
        extra["control_confidence"] = np.array([[draw(unit)] for _ in range(n_tests)])
        positive = st.floats(0.01, 1, allow_nan=False)
        extra["treatment_confidence"] = np.array(
            [draw(st.lists(positive, min_size=n_options, max_size=n_options)) for _ in range(n_tests)]
        )
        extra["weights"] = np.array([[draw(positive)] for _ in range(n_tests)])
    return control, treatment, options, anchor, extra


@settings(max_examples=examples(150), deadline=None)
@given(paired_tests(with_confidence=False) | paired_tests(with_confidence=True), st.booleans())
def test_anchoring_and_halo_agree_with_the_oracle(data, agnostic):
    control, treatment, options, anchor, extra = data
    individual_extra = {key: value for key, value in extra.items() if key != "weights"}
    values = AnchoringBiasMetric(anchor_agnostic=agnostic, overall=False).compute(
        control, treatment, options, anchor, **individual_extra
    )
    batch = AnchoringBiasMetric(anchor_agnostic=agnostic, overall=True).compute(
        control, treatment, options, anchor, **extra
    )
    naive_values, naive_batch = anchoring_naive(control, treatment, options, anchor, anchor_agnostic=agnostic, **extra)
    np.testing.assert_allclose(values.ravel(), naive_values, rtol=1e-9, atol=1e-12)
    assert batch == pytest.approx(naive_batch, rel=1e-9, abs=1e-12)
    # eps inside |.| lets a negative a1 - f exceed 1 by eps / |a1 - f| (as in the reference)
    assert ((values >= 0) & (values <= 1 + 1e-7)).all()
    if agnostic:
        halo = HaloEffectMetric(overall=True).compute(control, treatment, options, **extra)
        assert halo == pytest.approx(halo_effect_naive(control, treatment, options, **extra)[1], rel=1e-9, abs=1e-12)


@settings(max_examples=examples(150), deadline=None)
@given(st.data())
def test_loss_aversion_and_confirmation_agree_with_the_oracle(data):
    n_tests = data.draw(st.integers(1, 15))
    binary = np.array([[data.draw(st.integers(0, 1))] for _ in range(n_tests)])
    lambdas = np.array([[data.draw(st.floats(0.05, 500))] for _ in range(n_tests)])
    confidence = np.array([[data.draw(st.floats(0, 1))] for _ in range(n_tests)])
    weights = np.array([[data.draw(st.floats(0.01, 5))] for _ in range(n_tests)])
    sizes = np.array([[data.draw(st.integers(2, 20))] for _ in range(n_tests)])
    pro = np.array([[data.draw(st.integers(0, int(size[0]) - 1))] for size in sizes])
    con = np.array(
        [
            [data.draw(st.integers(1 if p[0] == 0 else 0, int(size[0]) - p[0]))]
            for p, size in zip(pro, sizes, strict=True)
        ]
    )
    use_confidence = data.draw(st.booleans())
    extra = dict(answer_confidence=confidence, weights=weights) if use_confidence else {}

    la_values, la_batch = loss_aversion_naive(binary, lambdas, **extra)
    assert LossAversionMetric(overall=True).compute(binary, lambdas, **extra) == pytest.approx(la_batch, rel=1e-9)
    if use_confidence:
        individual = LossAversionMetric(overall=False).compute(binary, lambdas, answer_confidence=confidence)
        np.testing.assert_allclose(individual.ravel(), la_values, rtol=1e-12)

    cb_values, cb_batch = confirmation_naive(binary, pro, con, sizes, **extra)
    batch = ConfirmationBiasMetric(overall=True).compute(binary, pro, con, sizes, **extra)
    assert batch == pytest.approx(cb_batch, rel=1e-9, abs=1e-12)
    individual_extra = {"answer_confidence": confidence} if use_confidence else {}
    values = ConfirmationBiasMetric(overall=False).compute(binary, pro, con, sizes, **individual_extra)
    np.testing.assert_allclose(values.ravel(), cb_values, rtol=1e-9, atol=1e-12)
    assert 0 <= batch <= 1 and 0 <= LossAversionMetric(overall=True).compute(binary, lambdas, **extra) <= 1


# --- bootstrap interval --------------------------------------------------------------------------------------------
def test_bootstrap_interval_is_seeded_and_brackets_the_batch_value():
    metric = ConfirmationBiasMetric(overall=True)
    first = bootstrap_ci(metric, AGREES, PRO, CON, N_ARGS, seed=7)
    again = bootstrap_ci(metric, AGREES, PRO, CON, N_ARGS, seed=7)
    other = bootstrap_ci(metric, AGREES, PRO, CON, N_ARGS, seed=8)
    assert first == again
    assert first != other
    assert 0 <= first.low <= metric.compute(AGREES, PRO, CON, N_ARGS) <= first.high <= 1


def test_bootstrap_interval_resamples_keyword_arrays_with_their_rows():
    metric = LossAversionMetric(overall=True)
    weighted = bootstrap_ci(metric, ANSWER_BIASED, LAMBDAS, weights=np.arange(1, 7).reshape(-1, 1), seed=3)
    assert 0 <= weighted.low <= weighted.high <= 1
    constant = bootstrap_ci(HaloEffectMetric(overall=True), [[10], [10]], [[10], [10]], [ROW[0], ROW[0]])
    assert constant == (0.0, 0.0)


def test_bootstrap_interval_rejects_what_it_cannot_do():
    with pytest.raises(ValueError, match="overall=True"):
        bootstrap_ci(HaloEffectMetric(overall=False), CONTROL, TREATMENT, OPTIONS)
    with pytest.raises(ValueError, match="at least two tests"):
        bootstrap_ci(HaloEffectMetric(overall=True), [[10]], [[20]], ROW)
    with pytest.raises(ValueError, match="treatment_answer must be one"):
        bootstrap_ci(HaloEffectMetric(overall=True), [[10], [10]], [[10], [11]], ROW * 2)
    with pytest.raises(ValueError, match="confidence_level"):
        bootstrap_ci(HaloEffectMetric(overall=True), CONTROL, TREATMENT, OPTIONS, confidence_level=95)
