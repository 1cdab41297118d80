"""A model judge of payoff-reasoning logs against people, on the logs both judged: agreement, calibration of its
k-sample confidence (`backend.core.calibration`) and the admission line, each figure with its bootstrap interval over
logs (`backend.core.unit_bootstrap`); and the judge's per-log confidence, read from its calls file. The report
(`backend.reasoning.report.model_judge_scores`) sets these beside people's figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from backend.core import calibration, unit_bootstrap
from backend.core.agreement import fleiss_kappa
from backend.core.csvio import read_csv_any

MODEL_JUDGE_PREFIX = "model:"  # participant_code of a model judge (backend.reasoning.judge)
JUDGE_PROTOCOL_PREFIX, JUDGE_CALLS_PREFIX = "reasoning_judge_", "reasoning_judge_calls_"  # backend.reasoning.judge


def verdict_agreement(model: Sequence[int], people: Sequence[int]) -> tuple[float, float]:
    """(share of equal verdicts, Fleiss' kappa of the two raters) over paired 0/1 verdicts; NaN when none.

    >>> verdict_agreement([1, 0, 1], [1, 0, 0])[0]
    0.6666666666666666
    """
    if not len(model):
        return math.nan, math.nan
    model, people = np.asarray(model), np.asarray(people)
    ones = model + people
    return float((model == people).mean()), fleiss_kappa(np.column_stack([2 - ones, ones]))


def calibration_scores(
    model: Sequence[int],
    people: Sequence[int],
    p_correct: Sequence[float],
    confidence: Sequence[float],
    *,
    admit_at: float = calibration.DEFAULT_ADMISSION_THRESHOLD,
    seed: int = unit_bootstrap.DEFAULT_SEED,
) -> dict:
    """A judge against people on the logs both judged (one entry per log): ``agree_orig``, ``kappa_people``,
    ``brier``, ``ece`` and ``reliability`` (`backend.core.calibration`), each figure with its interval
    (``<figure>_interval``: percentile bootstrap over the logs), and ``admission`` (the lower bound of
    ``kappa_people``'s interval against ``admit_at``).

    >>> scores = calibration_scores([1, 0, 1, 1], [1, 0, 0, 1], [1.0, 0.0, 0.6, 0.8], [1.0, 1.0, 0.6, 0.8])
    >>> scores["agree_orig"], round(scores["brier"], 4), round(scores["ece"], 4), scores["admission"]["admitted"]
    (0.75, 0.1, 0.2, False)
    """
    model, people = np.asarray(model, dtype=int), np.asarray(people, dtype=int)
    p, c = np.asarray(p_correct, dtype=float), np.asarray(confidence, dtype=float)
    agree, kappa = verdict_agreement(model, people)
    found: dict = dict(agree_orig=agree, kappa_people=kappa, brier=math.nan, ece=math.nan, reliability=[])
    intervals = dict.fromkeys(["agree_orig", "kappa_people", "brier", "ece"], [math.nan, math.nan])
    if len(model):
        equal = (model == people).astype(int)
        found.update(
            brier=calibration.brier_score(p, people),
            ece=calibration.expected_calibration_error(c, equal),
            reliability=calibration.reliability_bins(c, equal),
        )
        draws = unit_bootstrap.unit_draws(len(model), seed=seed)
        ones = model + people
        replicates = dict(
            agree_orig=unit_bootstrap.mean_replicates(equal, draws),
            kappa_people=unit_bootstrap.fleiss_replicates(np.column_stack([2 - ones, ones]), draws),
            brier=unit_bootstrap.mean_replicates((p - people) ** 2, draws),
            ece=calibration.ece_replicates(c, equal, draws),
        )
        intervals = {key: list(unit_bootstrap.interval(values)) for key, values in replicates.items()}
    found.update({f"{key}_interval": bounds for key, bounds in intervals.items()})
    found["admission"] = calibration.admission(intervals["kappa_people"][0], admit_at)
    return found


def judge_confidence(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Per model judge (``model:<model>``) and log: ``samples``, ``p_correct`` and ``confidence`` from the calls
    file beside each judge's protocol file (``backend.reasoning.judge``); judged rows only, samples 0 where the
    file predates k samples (the report then counts one sample)."""
    frames = []
    for path in map(Path, paths):
        if not path.name.startswith(JUDGE_PROTOCOL_PREFIX) or path.name.startswith(JUDGE_CALLS_PREFIX):
            continue
        calls = path.with_name(JUDGE_CALLS_PREFIX + path.name[len(JUDGE_PROTOCOL_PREFIX) :])
        if not calls.is_file():
            continue
        table = read_csv_any(calls, dtype=str, keep_default_na=False)
        if not {"status", "model", "file"} <= set(table.columns):
            continue
        table = table[table["status"] == "judged"]
        numbers = {
            key: pd.to_numeric(table.get(key, pd.Series("", index=table.index)), errors="coerce")
            for key in ("samples", "p_correct", "confidence")
        }
        frames.append(
            pd.DataFrame(
                dict(
                    judge=MODEL_JUDGE_PREFIX + table["model"],
                    file=table["file"],
                    samples=numbers["samples"].fillna(0).astype(int),
                    p_correct=numbers["p_correct"],
                    confidence=numbers["confidence"],
                )
            )
        )
    if not frames:
        return pd.DataFrame(columns=["judge", "file", "samples", "p_correct", "confidence"])
    return pd.concat(frames, ignore_index=True).drop_duplicates(["judge", "file"], keep="last")
