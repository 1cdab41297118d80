"""Model ratings against people's in the social_eval report: the intervals over episodes of every agreement figure
(`backend.core.unit_bootstrap`), the model's spread over its k samples against its error, the model annotator's
spreads read from its CSV, and the admission line of each dimension (`backend.core.calibration`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from backend.core import agreement, calibration, unit_bootstrap
from backend.core.csvio import read_csv_any


def interval_bounds(
    values: Sequence[Sequence[float]],
    human: Any,
    model: Any,
    episode_of_item: Sequence[str],
    *,
    seed: int = unit_bootstrap.DEFAULT_SEED,
) -> dict[str, float]:
    """``<figure>_low`` and ``<figure>_high`` of alpha (``values``: each item's ratings), Pearson, Spearman, the mean
    difference and the mean absolute error of people's item means (``human``) against the model's (``model``): the
    percentile bootstrap resampling whole episodes (``episode_of_item``: each item's episode).

    >>> bounds = interval_bounds([[1, 2], [3, 3], [5, 4]], [1.5, 3, 4.5], [2, 3, 4], ["a", "b", "c"])
    >>> sorted(bounds)[:4], bool(bounds["mae_low"] <= 1 / 3 <= bounds["mae_high"])
    (['alpha_high', 'alpha_low', 'diff_high', 'diff_low'], True)
    """
    human, model = np.asarray(human, dtype=float), np.asarray(model, dtype=float)
    episodes, episode_index = np.unique(np.asarray(episode_of_item, dtype=str), return_inverse=True)
    weights = unit_bootstrap.cluster_weights(unit_bootstrap.unit_draws(len(episodes), seed=seed), episode_index)
    replicates = dict(
        alpha=unit_bootstrap.alpha_replicates(values, weights),
        pearson=unit_bootstrap.pearson_replicates(human, model, weights),
        spearman=unit_bootstrap.spearman_replicates(human, model, weights),
        diff=unit_bootstrap.mean_replicates(human - model, weights),
        mae=unit_bootstrap.mean_replicates(np.abs(human - model), weights),
    )
    bounds = {}
    for key, found in replicates.items():
        low, high = unit_bootstrap.interval(found)
        bounds.update({f"{key}_low": low, f"{key}_high": high})
    return bounds


def spread_against_error(spread: Any, error: Any) -> float:
    """Spearman's rho of the model's spread over its k samples against its absolute error, on the items with both;
    NaN without spreads (a run of one sample records none that varies).

    >>> spread_against_error([0, 1, 2, float("nan")], [0.5, 1.0, 2.0, 3.0])
    1.0
    """
    spread, error = np.asarray(spread, dtype=float), np.asarray(error, dtype=float)
    known = ~np.isnan(spread) & ~np.isnan(error)
    return agreement.compare_with_model(spread[known], error[known])["spearman"] if known.any() else math.nan


EPISODES_SUFFIX = ".episodes.json"  # backend.social.annotator: <stem>.episodes.json beside <stem>.csv


def model_spreads(path: Path) -> dict[tuple[str, int, str], float]:
    """The model annotator's spread per (episode, agent, dimension) from its CSV beside the episode file
    (``<stem>.csv`` beside ``<stem>.episodes.json``); empty when there is none, or when it predates k samples."""
    if not path.name.endswith(EPISODES_SUFFIX):
        return {}
    beside = path.with_name(path.name[: -len(EPISODES_SUFFIX)] + ".csv")
    if not beside.is_file():
        return {}
    table = read_csv_any(beside, dtype=str, keep_default_na=False)
    if not {"episode_id", "agent_index", "dimension", "status", "rating_spread"} <= set(table.columns):
        return {}
    table = table[(table["status"] == "answered") & (table["rating_spread"] != "")]
    return {
        (row["episode_id"], int(row["agent_index"]), row["dimension"]): float(row["rating_spread"])
        for _, row in table.iterrows()
    }


def admissions(table: pd.DataFrame, admit_at: float) -> list[dict[str, Any]]:
    """Per group and dimension (scope ``both``) with model ratings: the admission line of the model's ratings
    (`backend.core.calibration.admission` of the lower bound of Spearman's rho)."""
    rows = table[(table["scope"] == "both") & (table["n_model"] > 0)]
    return [
        dict(
            group=row["group"],
            dimension=row["dimension"],
            spearman=row["spearman"],
            **calibration.admission(row["spearman_low"], admit_at),
        )
        for _, row in rows.iterrows()
    ]


def interval_text(table: pd.DataFrame, key: str) -> list[str]:
    def number(value: float) -> str:
        return "-" if pd.isna(value) else f"{value:.2f}"

    return [
        f"[{number(low)}, {number(high)}]" for low, high in zip(table[f"{key}_low"], table[f"{key}_high"], strict=True)
    ]
