"""Time every bias metric (plain and with confidences) on 1,000,000 random tests; target: under 1 s each.

Run: ``python bench/bias_metrics.py [--tests N] [--repeat R]`` (prints the best of R runs, in seconds).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.bias.metrics import (  # noqa: E402
    AnchoringBiasMetric,
    ConfirmationBiasMetric,
    HaloEffectMetric,
    LossAversionMetric,
)


def _random_tests(n_tests: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    options = np.sort(rng.integers(0, 1000, size=(n_tests, 4)), axis=1) + np.arange(4) * 1000
    pick = rng.integers(0, 4, size=(n_tests, 2))
    sizes = np.full((n_tests, 1), 8)
    pro = rng.integers(0, 5, size=(n_tests, 1))
    return dict(
        options=options,
        control=np.take_along_axis(options, pick[:, :1], axis=1),
        treatment=np.take_along_axis(options, pick[:, 1:], axis=1),
        anchor=rng.integers(0, 4000, size=(n_tests, 1)),
        binary=rng.integers(0, 2, size=(n_tests, 1)),
        lambdas=rng.uniform(1, 2, size=(n_tests, 1)).round(1),
        confidence=rng.uniform(0, 1, size=(n_tests, 1)),
        probabilities=rng.dirichlet(np.ones(4), size=n_tests),
        pro=pro,
        con=np.maximum(rng.integers(0, 5, size=(n_tests, 1)), (pro == 0).astype(int)),
        sizes=sizes,
    )


def _cases(data: dict[str, np.ndarray]):
    paired = (data["control"], data["treatment"], data["options"])
    with_confidence = dict(control_confidence=data["confidence"], treatment_confidence=data["probabilities"])
    weighted = dict(weights=data["confidence"])
    confirmation = (data["binary"], data["pro"], data["con"], data["sizes"])
    for agnostic in (True, False):
        name = "anchoring " + ("agnostic" if agnostic else "specific")
        metric = AnchoringBiasMetric(anchor_agnostic=agnostic, overall=True)
        yield name, lambda m=metric: m.compute(*paired, data["anchor"])
        yield name + " + confidences", lambda m=metric: m.compute(*paired, data["anchor"], **with_confidence)
        yield name + " weighted", lambda m=metric: m.compute(*paired, data["anchor"], **weighted)
    halo = HaloEffectMetric(overall=True)
    yield "halo", lambda: halo.compute(*paired)
    yield "halo + confidences", lambda: halo.compute(*paired, **with_confidence)
    loss = LossAversionMetric(overall=True)
    yield "loss aversion", lambda: loss.compute(data["binary"], data["lambdas"])
    yield (
        "loss aversion + confidence + weights",
        lambda: loss.compute(data["binary"], data["lambdas"], answer_confidence=data["confidence"], **weighted),
    )
    confirmation_metric = ConfirmationBiasMetric(overall=True)
    yield "confirmation", lambda: confirmation_metric.compute(*confirmation)
    yield (
        "confirmation + confidence + weights",
        lambda: confirmation_metric.compute(*confirmation, answer_confidence=data["confidence"], **weighted),
    )
    individual = AnchoringBiasMetric(anchor_agnostic=True, overall=False)
    yield "anchoring agnostic, individual (N, 1)", lambda: individual.compute(*paired, data["anchor"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    data = _random_tests(args.tests)
    print(f"{args.tests:,} tests, best of {args.repeat} runs (target < 1 s each)")
    for name, run in _cases(data):
        timings = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            result = run()
            timings.append(time.perf_counter() - started)
        shown = f"{result:.6f}" if isinstance(result, float) else f"shape {result.shape}"
        verdict = "ok" if min(timings) < 1 else "SLOW"
        print(f"  {name:<42} {min(timings):7.3f} s  {verdict}  ({shown})")


if __name__ == "__main__":
    main()
