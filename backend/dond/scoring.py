"""How a DoND game is scored, each rule written once: complementarity, points, the mode's goal and the bonus, and
the Pareto metrics (every complete split, the frontier, the maximum Pareto improvement, the main score).

- ``is_complementary`` / ``outcome``: proposals succeed when A's count + B's count <= available for every type;
- ``points``: Σ count × own value of the items a player takes;
- ``goal_score`` / ``bonus``: what the mode asks a player to maximise, and the bonus it pays (success only);
- ``pay_rule`` / ``person_bonus`` / ``model_failure_bonus``: the pay rule when the model side breaks the game
  (session key ``model_failure_pay``) and ``model_failure_pay_statement``, the sentence that states it;
- ``max_pareto_improvement``, ``pareto_frontier``, ``quality_score``, ``main_score``, ``game_metrics``.

A *complete split* gives each of the ``counts[t]`` items of type ``t`` to A or to B (A gets ``0..counts[t]``, B the
rest): there are Π (counts[t] + 1) of them, a few hundred at most for DoND instances, enumerated at once with numpy.
The brute-force twins of the split functions (loops over ``itertools.product``) are the tests' oracles
(``tests/backend/dond/oracles.py``).

Worked example (clembench's semi_en game 0): 3 crayons, 1 chalk, 2 bolts; A values 0/0/5, B values 1/3/2.
A takes 2 bolts (10 points), B takes 3 crayons (3 points) and leaves the chalk: giving B the chalk too is a
complete split where A keeps 10 and B gains 3, so the maximum Pareto improvement is 3 and the main score 70.

>>> counts, values_a, values_b = (3, 1, 2), (0, 0, 5), (1, 3, 2)
>>> max_pareto_improvement(counts, values_a, values_b, 10, 3)
3
>>> main_score(counts, values_a, values_b, (0, 0, 2), (3, 0, 0))
70.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from backend.core.catalogues import english, translated
from backend.dond.rules import check_mode

OUTCOMES = ("success", "lose", "aborted")


def is_complementary(proposal_a: Sequence[int], proposal_b: Sequence[int], counts: Sequence[int]) -> bool:
    """Whether two proposals fit together: A's count + B's count <= available for every type (leftovers allowed).

    >>> is_complementary((0, 2), (1, 0), (1, 2)), is_complementary((1, 2), (1, 0), (1, 2))
    (True, False)
    """
    a, b, c = (np.asarray(x) for x in (proposal_a, proposal_b, counts))
    if not a.shape == b.shape == c.shape:
        raise ValueError("proposal_a, proposal_b and counts must have the same length.")
    return bool(((a + b) <= c).all())


def outcome(
    counts: Sequence[int], proposal_a: Sequence[int] | None, proposal_b: Sequence[int] | None, *, aborted: bool
) -> str:
    """``aborted``, else ``success`` when the two final proposals are complementary, else ``lose``.

    Each proposal must ask for 0..count of every type.

    >>> outcome((1, 2), (0, 2), (1, 0), aborted=False), outcome((1, 2), (1, 2), (1, 0), aborted=False)
    ('success', 'lose')
    """
    if aborted:
        return "aborted"
    if proposal_a is None or proposal_b is None:
        raise ValueError("proposal_a and proposal_b are both required unless the game was aborted.")
    a, b, c = (np.asarray(x) for x in (proposal_a, proposal_b, counts))
    if not a.shape == b.shape == c.shape:
        raise ValueError("proposal_a, proposal_b and counts must have the same length.")
    if (a < 0).any() or (b < 0).any() or (a > c).any() or (b > c).any():
        raise ValueError(f"Each proposal must ask for 0..count of every type, got {a.tolist()} and {b.tolist()}.")
    return "success" if is_complementary(a, b, c) else "lose"


def points(proposal: Sequence[int], values: Sequence[int]) -> int:
    """A player's points for the items they take: Σ count × own value.

    >>> points((0, 2), (4, 3))
    6
    """
    a, v = np.asarray(proposal), np.asarray(values)
    if a.shape != v.shape:
        raise ValueError("proposal and values must have the same length.")
    return int(a @ v)


def goal_score(mode: str, own_points: float, other_points: float) -> float:
    """What the mode asks a player to maximise: own (semi), sum of both (coop), own minus other (comp).

    >>> goal_score("semi", 6, 4), goal_score("coop", 6, 4), goal_score("comp", 3, 7)
    (6, 10, -4)
    """
    check_mode(mode)
    return {"semi": own_points, "coop": own_points + other_points, "comp": own_points - other_points}[mode]


def bonus(mode: str, own_points: float | None, other_points: float | None, *, outcome: str) -> float:
    """A participant's bonus in points: the mode's goal (``goal_score``) clamped at 0 when the game succeeded, else 0.

    A lost game (conflicting proposals), an aborted one and one not finished (``unfinished``) pay no bonus; their
    points are not read.

    >>> bonus("comp", 3, 7, outcome="success"), bonus("coop", 6, 4, outcome="success"), bonus("semi", 6, 4, outcome="lose")
    (0, 10, 0)
    """
    if outcome not in (*OUTCOMES, "unfinished"):
        raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)} or unfinished, not {outcome!r}.")
    if outcome != "success":
        return 0
    return max(0, goal_score(mode, own_points, other_points))


MODEL_FAILURE_PAYS = ("half_total", "zero")  # session key model_failure_pay (backend.dond.treatments)
MODEL_FAILURES = (
    "llm_error",
    "llm_invalid",
    "llm_budget",
    "llm_time_limit",
    "llm_cost_cap",  # the study's spending cap was reached: the game ends, paid as if the model had broken it
)  # abort reasons where the model side broke the game
# The export's pay_rule column. A partner who left a person-vs-person game (backend.dond.partner): the one left behind
# is paid partner_left_<pay> (the model_failure_pay shape, session key partner_left_pay), the one who left left_game.
PAY_RULES = (
    "mode_goal",
    "model_failure_half_total",
    "model_failure_zero",
    "partner_left_half_total",
    "partner_left_zero",
    "left_game",
)


def pay_rule(outcome: str, abort_code: str, *, model_failure_pay: str, person_vs_llm: bool) -> str:
    """Which rule pays the person: ``mode_goal`` (`bonus`), or ``model_failure_<pay>`` when the person faced an LLM
    and the game was aborted because the model broke it (``MODEL_FAILURES``: unreachable, invalid, out of budget, or the
    time limit ran out while only the model owed a move).

    >>> pay_rule("aborted", "llm_invalid", model_failure_pay="half_total", person_vs_llm=True)
    'model_failure_half_total'
    >>> pay_rule("aborted", "time_limit", model_failure_pay="half_total", person_vs_llm=True)
    'mode_goal'
    """
    if model_failure_pay not in MODEL_FAILURE_PAYS:
        raise ValueError(
            f"model_failure_pay must be one of {', '.join(MODEL_FAILURE_PAYS)}, not {model_failure_pay!r}."
        )
    if person_vs_llm and outcome == "aborted" and abort_code in MODEL_FAILURES:
        return f"model_failure_{model_failure_pay}"
    return "mode_goal"


def model_failure_bonus(model_failure_pay: str, counts: Sequence[int], own_values: Sequence[int]) -> int:
    """The person's bonus points when the model broke the game: ``half_total`` pays ceil(half the person's total
    value of all items), what an even split is worth in expectation; ``zero`` pays nothing.

    >>> model_failure_bonus("half_total", (3, 1, 2), (1, 3, 2)), model_failure_bonus("zero", (3, 1, 2), (1, 3, 2))
    (5, 0)
    >>> model_failure_bonus("half_total", (1, 2), (3, 2))  # total 7: ceil(3.5)
    4
    """
    if model_failure_pay not in MODEL_FAILURE_PAYS:
        raise ValueError(
            f"model_failure_pay must be one of {', '.join(MODEL_FAILURE_PAYS)}, not {model_failure_pay!r}."
        )
    if model_failure_pay == "zero":
        return 0
    return math.ceil(points(counts, own_values) / 2)


def person_bonus(
    mode: str,
    own_points: float | None,
    other_points: float | None,
    *,
    outcome: str,
    rule: str,
    counts: Sequence[int],
    own_values: Sequence[int],
) -> float:
    """The person's bonus points under ``rule`` (`pay_rule`): `bonus` for ``mode_goal``, 0 for ``left_game``, else
    `model_failure_bonus` with the rule's pay (``model_failure_<pay>`` or ``partner_left_<pay>``).

    >>> person_bonus("semi", None, None, outcome="aborted", rule="model_failure_half_total", counts=(2,), own_values=(5,))
    5
    >>> person_bonus("semi", None, None, outcome="aborted", rule="partner_left_half_total", counts=(2,), own_values=(5,))
    5
    >>> person_bonus("semi", 6, 4, outcome="success", rule="left_game", counts=(2,), own_values=(5,))
    0
    """
    if rule not in PAY_RULES:
        raise ValueError(f"rule must be one of {', '.join(PAY_RULES)}, not {rule!r}.")
    if rule == "mode_goal":
        return bonus(mode, own_points, other_points, outcome=outcome)
    if rule == "left_game":
        return 0
    return model_failure_bonus(rule.removeprefix("model_failure_").removeprefix("partner_left_"), counts, own_values)


# The sentence the Results page (and the instructions) state the rule with; {points} is the bonus it pays (English
# source of these messages of the ``dond`` catalogue).
MODEL_FAILURE_PAY_TEXT = english(
    "dond",
    {
        "model_failure_pay.half_total": "If the game breaks off because the other side fails, you receive half the total value of all items to you, rounded up ({points} points): what an even split is worth.",
        "model_failure_pay.zero": "If the game breaks off because the other side fails, no bonus is paid.",
    },
)


def model_failure_pay_statement(
    model_failure_pay: str, language: str, counts: Sequence[int], own_values: Sequence[int]
) -> str:
    """The rule for a game the model breaks, as one sentence in ``language``, with the points it pays this person.

    >>> model_failure_pay_statement("half_total", "en", (3, 1, 2), (1, 3, 2))
    'If the game breaks off because the other side fails, you receive half the total value of all items to you, rounded up (5 points): what an even split is worth.'
    """
    points_paid = model_failure_bonus(model_failure_pay, counts, own_values)
    return translated(MODEL_FAILURE_PAY_TEXT, language)[f"model_failure_pay.{model_failure_pay}"].format(
        points=points_paid
    )


def quality_score(improvement: float, normaliser: float) -> float:
    """The score of a split from how much it could still be improved: 100 − 100 × improvement / normaliser.

    ``main_score`` uses the max Pareto improvement over the max player score; clembench's per-mode score (coop) the
    missing sum over the max sum.

    >>> quality_score(3, 10), quality_score(0, 10)
    (70.0, 100.0)
    """
    return 100.0 - 100.0 * improvement / normaliser


def _as_int_vectors(counts, values_a, values_b) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    arrays = []
    for name, raw in (("counts", counts), ("values_a", values_a), ("values_b", values_b)):
        array = np.asarray(raw)
        if array.ndim != 1 or array.size == 0:
            raise ValueError(f"{name} must be a non-empty one-dimensional sequence, got {raw!r}.")
        if not np.issubdtype(array.dtype, np.integer) or (array < 0).any():
            raise ValueError(f"{name} must hold non-negative integers, got {raw!r}.")
        arrays.append(array.astype(np.int64))
    if not arrays[0].shape == arrays[1].shape == arrays[2].shape:
        raise ValueError("counts, values_a and values_b must have the same length.")
    return arrays[0], arrays[1], arrays[2]


def all_splits(counts: Sequence[int]) -> np.ndarray:
    """A's share in every complete split, shape (Π (counts + 1), n_types); B gets ``counts - row``.

    >>> all_splits((1, 2)).tolist()
    [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    """
    counts_array, _, _ = _as_int_vectors(counts, counts, counts)
    return np.indices(tuple(counts_array + 1)).reshape(counts_array.size, -1).T


def split_points(
    counts: Sequence[int], values_a: Sequence[int], values_b: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Points of A and of B in every complete split (same order as ``all_splits``).

    points_a = share @ values_a, points_b = (counts - share) @ values_b.

    >>> [p.tolist() for p in split_points((1, 2), (4, 3), (10, 0))]
    [[0, 3, 6, 4, 7, 10], [10, 10, 10, 0, 0, 0]]
    """
    counts_array, a, b = _as_int_vectors(counts, values_a, values_b)
    shares = all_splits(counts_array)
    return shares @ a, (counts_array - shares) @ b


def max_pareto_improvement(
    counts: Sequence[int], values_a: Sequence[int], values_b: Sequence[int], points_a: float, points_b: float
) -> int:
    """The largest gain of either player over a complete split that leaves neither worse off.

    max over splits s with P_A(s) >= points_a and P_B(s) >= points_b of max(P_A(s) - points_a, P_B(s) - points_b),
    and 0 if there is no such split. 0 means the achieved points are Pareto optimal among complete splits.
    Ranges from 0 to the larger total value (10 for DoND instances).

    >>> max_pareto_improvement((3, 1, 2), (0, 0, 5), (1, 3, 2), 5, 8)
    0
    """
    for name, value in (("points_a", points_a), ("points_b", points_b)):
        if not isinstance(value, int | float | np.integer | np.floating) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, not {value!r}.")
    pa, pb = split_points(counts, values_a, values_b)
    keep = (pa >= points_a) & (pb >= points_b)
    if not keep.any():
        return 0
    gain = np.maximum(pa[keep] - points_a, pb[keep] - points_b).max()
    return int(max(gain, 0))


def pareto_frontier(counts: Sequence[int], values_a: Sequence[int], values_b: Sequence[int]) -> np.ndarray:
    """The Pareto-optimal point pairs (points A, points B) over complete splits, sorted by A's points.

    A pair is on the frontier when no split gives one player more without giving the other less.

    >>> pareto_frontier((3, 1, 2), (0, 0, 5), (1, 3, 2)).tolist()
    [[0, 10], [5, 8], [10, 6]]
    """
    pa, pb = split_points(counts, values_a, values_b)
    pairs = np.unique(np.column_stack([pa, pb]), axis=0)  # sorted by A then B
    order = np.lexsort((-pairs[:, 1], -pairs[:, 0]))  # A descending, B descending within equal A
    ordered = pairs[order]
    # A pair survives when its B beats every pair with at least as much A seen before it.
    best_b_before = np.maximum.accumulate(np.concatenate([[-1], ordered[:-1, 1]]))
    frontier = ordered[ordered[:, 1] > best_b_before]
    return frontier[np.argsort(frontier[:, 0], kind="stable")]


def max_sum_of_points(counts: Sequence[int], values_a: Sequence[int], values_b: Sequence[int]) -> int:
    """The best possible sum of both players' points: Σ count × max(value A, value B).

    >>> max_sum_of_points((3, 1, 2), (0, 0, 5), (1, 3, 2))
    16
    """
    c, a, b = _as_int_vectors(counts, values_a, values_b)
    return int(c @ np.maximum(a, b))


def main_score(
    counts: Sequence[int],
    values_a: Sequence[int],
    values_b: Sequence[int],
    proposal_a: Sequence[int] | None,
    proposal_b: Sequence[int] | None,
    *,
    aborted: bool = False,
) -> float:
    """The game's quality score: 100 − 100 × max Pareto improvement / max player score, in [0, 100].

    The max player score is max(Σ count × value A, Σ count × value B) (10 for DoND instances). A lost game
    (conflicting proposals) scores 0; an aborted game has no score (NaN, excluded from means).

    >>> main_score((3, 1, 2), (0, 0, 5), (1, 3, 2), (0, 0, 1), (3, 1, 1))
    100.0
    >>> main_score((3, 1, 2), (0, 0, 5), (1, 3, 2), (0, 0, 2), (3, 1, 1))
    0.0
    """
    c, a, b = _as_int_vectors(counts, values_a, values_b)
    result = outcome(c, proposal_a, proposal_b, aborted=aborted)
    if result == "aborted":
        return math.nan
    _, _, improvement, max_player = _achieved(c, a, b, proposal_a, proposal_b, result)
    return quality_score(improvement, max_player)


def _achieved(c, a, b, proposal_a, proposal_b, result: str) -> tuple[int, int, int, int]:
    """Points of A and B, the max Pareto improvement (the max player score on lose) and the max player score."""
    max_player = max(int(c @ a), int(c @ b))
    if result == "lose":
        return 0, 0, max_player, max_player
    points_a, points_b = points(proposal_a, a), points(proposal_b, b)
    return points_a, points_b, max_pareto_improvement(c, a, b, points_a, points_b), max_player


def game_metrics(
    counts: Sequence[int],
    values_a: Sequence[int],
    values_b: Sequence[int],
    proposal_a: Sequence[int] | None,
    proposal_b: Sequence[int] | None,
    *,
    mode: str,
    aborted: bool = False,
) -> dict[str, Any]:
    """Every per-game metric, from the instance and the two final proposals.

    - ``success``/``lose``/``aborted``: exactly one is true (lose = both proposed, not complementary).
    - ``points_a``/``points_b``: Σ own count × own value on success, 0 on lose, None when aborted.
    - ``sum_points``, ``max_sum_points`` (Σ count × max value), ``sum_share`` = sum / max sum (None when aborted).
    - ``pareto_improvement`` (as ``max_pareto_improvement``; the max player score on lose), ``pareto_optimal``
      (improvement == 0), ``main_score`` (see ``main_score``).
    - clembench's per-mode definitions, so results compare with published numbers: ``mode_pareto_improvement``,
      ``mode_pareto_optimal`` and ``mode_score`` (its "Main Score"): semi = ours; coop uses
      max sum − achieved sum (score 100 × sum / max sum, "optimal" = sum-maximal); comp always 0 (score 100,
      optimal). ``mode_score`` is NaN when aborted.

    >>> m = game_metrics((3, 1, 2), (0, 0, 5), (1, 3, 2), (0, 0, 1), (3, 1, 1), mode="coop")
    >>> m["main_score"], m["pareto_optimal"], m["mode_score"], m["mode_pareto_optimal"]
    (100.0, True, 81.25, False)
    """
    check_mode(mode)
    c, a, b = _as_int_vectors(counts, values_a, values_b)
    result = outcome(c, proposal_a, proposal_b, aborted=aborted)
    max_sum = max_sum_of_points(c, a, b)
    max_player = max(int(c @ a), int(c @ b))
    metrics: dict[str, Any] = {
        "success": result == "success",
        "lose": result == "lose",
        "aborted": result == "aborted",
        "max_sum_points": max_sum,
        "max_player_points": max_player,
    }
    if result == "aborted":
        none_keys = ("points_a", "points_b", "sum_points", "sum_share", "pareto_improvement", "pareto_optimal")
        metrics.update(dict.fromkeys(none_keys + ("mode_pareto_improvement", "mode_pareto_optimal")))
        metrics.update(main_score=math.nan, mode_score=math.nan)
        return metrics
    points_a, points_b, improvement, _ = _achieved(c, a, b, proposal_a, proposal_b, result)
    total = points_a + points_b
    if mode == "semi":
        mode_improvement, mode_normaliser = improvement, max_player
    elif mode == "coop":
        mode_improvement, mode_normaliser = max_sum - total, max_sum
    else:
        mode_improvement, mode_normaliser = 0, 0
    metrics.update(
        points_a=points_a,
        points_b=points_b,
        sum_points=total,
        sum_share=total / max_sum,
        pareto_improvement=improvement,
        pareto_optimal=improvement == 0,
        main_score=quality_score(improvement, max_player),
        mode_pareto_improvement=mode_improvement,
        mode_pareto_optimal=mode_improvement == 0,
        mode_score=100.0 if mode_normaliser == 0 else quality_score(mode_improvement, mode_normaliser),
    )
    return metrics
