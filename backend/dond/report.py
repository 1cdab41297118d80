"""``python -m backend report dond_games.csv``: DoND metrics per mode × language × model pairing × condition.

Games are grouped by who played (``pairings``: a model against people, one model in self-play, two models in
cross-play, named both, or people alone) and by treatment condition (``value_visibility`` and the other treatment
keys: conditions are never pooled); the points column says whose points they are (person/model, person/person,
model A/model B). For every group of finished games (outcome success, lose or aborted; unfinished rows are left
out):

- ``games``, ``cells`` (counterbalancing cells present);
- ``aborted_rate``, ``lose_rate``, ``success_rate``: shares of games; of the aborted ones, ``llm_error_rate`` (the
  model could not be reached: failed calls, not the model's doing) and ``llm_invalid_rate`` (the model broke the
  rules too often) apart, from ``abort_reason``;
- ``pareto_optimal_rate``: share of non-aborted games whose split no complete split improves (lost games count
  as not optimal);
- ``main_score``: mean over non-aborted games (aborted games have none), with a 95% percentile bootstrap interval;
- ``points_focal``/``points_opponent``: mean points of the person (player A in self-play) and of the other player
  over non-aborted games; ``sum_share``: mean sum of points over the best possible sum;
- ``mode_score``: mean of clembench's per-mode score over non-aborted games (its "quality score"), and
  ``benchmark_score`` = played share × ``mode_score`` / 100 × 100, i.e. (1 − aborted rate) × mean mode score,
  which is the published clemscore of the game;
- ``*_debiased``: the same statistic as the unweighted mean of the per-cell means (each of the four cells, which
  value function the person gets × who opens, weighs the same), with a bootstrap that resamples within cells.

Worked example: two cells, cell 1 with main scores 100 and 80, cell 2 with 40: the plain mean is 73.3, the
debiased mean (90 + 40) / 2 = 65.

LLM agency (exports with the ``model_a``/``model_b``, ``llm_protocol`` and ``<metric>_a``/``<metric>_b`` columns;
older files simply lack this section). ``agency_frame`` makes one row per finished game × role an LLM played (a
role whose agency columns hold a value; a person's role has none): ``model`` = that role's model (``model_a`` /
``model_b``, else the game's ``model``), ``side`` = the role (its value function), ``is_first_mover`` = whether it
opened (``opener`` equals the role), ``cluster`` = the instance (seed, item types, counts, values). A game against
a person gives one row, a model-vs-model game two. ``summarise_agency`` then reports, per mode × language × model
× ``llm_protocol``, the faithfulness (``internal_faithfulness``, ``external_faithfulness``), instruction-following
(``note_under_limit``, ``message_under_limit``, ``note_json``, ``proposal_format``) and ``utility`` figures with
``backend.dond.debiasing.summarise``: ``n`` (rows with a value), ``n_cells``, the plain ``mean``, the
``debiased_mean`` = (1/C) Σ_c mean_c over the C non-empty cells c = (side, opened), ``se`` = sqrt(Σ_c s_c²/n_c) / C
(s_c the cell's sample std; NaN when a cell has one value) and a 95% bootstrap interval that resamples whole
instances. Metrics with no value in a group (n = 0, e.g. note figures under the plain protocol) are left out. The
text report prints them as a second table; the JSON gives each row of the main list a key ``llm_agency``: the
figures of that row's model in that mode and language, one dict per protocol × metric (the key is absent for files
without the agency columns).

Worked example: an LLM playing B, three games as second mover with internal faithfulness 1, 1 and 0.4, one game as
first mover with 0: plain mean 2.4 / 4 = 0.6, debiased mean (0.8 + 0) / 2 = 0.4.

Treatments (exports with the ``value_visibility`` ... ``opponent_intro`` columns): figures per condition and each
condition minus the default ("visibility gain", "description effect"), paired on instances with a clustered
bootstrap interval (``backend.dond.effects``). The text report prints them as two more tables; the JSON gives each
row a key ``treatments`` with ``conditions`` and ``effects`` of that row's mode, language and model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from backend.core import stats
from backend.core.csvio import read_csv_any
from backend.core.jsonable import jsonable
from backend.core.llm.costs import CostSum
from backend.dond import debiasing, effects
from backend.dond.protocol import PLAYER_METRICS

REQUIRED_COLUMNS = {"game_id", "mode", "language", "model", "cell", "outcome", "main_score", "mode_score", "values_a"}
FINISHED = ("success", "lose", "aborted")
N_BOOT = 2000
# Statistics per game, as floats (NaN where a game has no value, e.g. the main score of an aborted game).
STATISTICS = (
    "aborted_rate",
    "llm_error_rate",
    "llm_invalid_rate",
    "lose_rate",
    "success_rate",
    "pareto_optimal_rate",
    "main_score",
    "points_focal",
    "points_opponent",
    "sum_share",
    "mode_score",
)
# Per-role LLM agency metrics reported (backend.dond.protocol.player_metrics), grouped by AGENCY_BY.
AGENCY_METRICS = (
    "internal_faithfulness",
    "external_faithfulness",
    "note_under_limit",
    "message_under_limit",
    "note_json",
    "proposal_format",
    "utility",
)
AGENCY_BY = ("mode", "language", "model", "llm_protocol")
INSTANCE_COLUMNS = ("instance_seed", "item_types", "counts", "values_a", "values_b")
AGENCY_FRAME_COLUMNS = [*AGENCY_BY, "game_id", "side", "is_first_mover", "cluster", *AGENCY_METRICS]


def looks_like(columns: Sequence[str]) -> bool:
    """Whether a CSV header is a ``dond_games`` export.

    >>> from backend.dond.export import DOND_GAMES_COLUMNS
    >>> looks_like(DOND_GAMES_COLUMNS), looks_like(["game_id", "rating"])
    (True, False)
    """
    return set(columns) >= REQUIRED_COLUMNS


def _as_float(series: pd.Series) -> np.ndarray:
    """0/1, True/False (any case) and numbers as floats; empty cells as NaN."""
    mapping = {"true": 1.0, "false": 0.0, "": math.nan, "nan": math.nan}

    def convert(value: Any) -> float:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return math.nan
        if isinstance(value, bool | np.bool_):
            return float(value)
        text = str(value).strip().lower()
        return mapping[text] if text in mapping else float(text)

    return np.array([convert(v) for v in series], dtype=float)


def game_statistics(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per-game values of every statistic (NaN where not defined), for finished games."""
    outcome = frame["outcome"].astype(str).to_numpy()
    aborted = outcome == "aborted"
    pareto = _as_float(frame["pareto_optimal"]) if "pareto_optimal" in frame else np.full(len(frame), math.nan)
    reasons = frame["abort_reason"].astype(str) if "abort_reason" in frame else pd.Series([""] * len(frame))
    codes = reasons.str.split(":").str[0].str.strip().to_numpy()
    per_game = {
        "aborted_rate": aborted.astype(float),
        "llm_error_rate": (aborted & (codes == "llm_error")).astype(float),
        "llm_invalid_rate": (aborted & (codes == "llm_invalid")).astype(float),
        "lose_rate": (outcome == "lose").astype(float),
        "success_rate": (outcome == "success").astype(float),
        "pareto_optimal_rate": np.where(aborted, math.nan, pareto),
        "main_score": np.where(aborted, math.nan, _as_float(frame["main_score"])),
        "mode_score": np.where(aborted, math.nan, _as_float(frame["mode_score"])),
    }
    for name in ("points_focal", "points_opponent", "sum_share"):
        values = _as_float(frame[name]) if name in frame else np.full(len(frame), math.nan)
        per_game[name] = np.where(aborted, math.nan, values)
    return per_game


def _nanmean(values: np.ndarray) -> float:
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else math.nan


def _cell(frame: pd.DataFrame, name: str) -> pd.Series:
    if name not in frame:
        return pd.Series("", index=frame.index, dtype=object)
    text = frame[name].fillna("").astype(str).str.strip()
    return text.where(text.str.lower() != "nan", "")


def pairings(frame: pd.DataFrame) -> pd.DataFrame:
    """Who played each game: ``pairing`` names both sides (``"m1 (A) vs m2 (B)"`` for cross-play, ``"m (self-play)"``
    when one model played both roles, the model for a person against a model, ``"people"`` for people alone) and
    ``players`` says whose points ``points_focal``/``points_opponent`` are (``person/model``, ``person/person``,
    ``model A/model B``); ``condition`` lists the treatment keys that differ from the default (``default`` when none),
    so games of different conditions are never pooled.

    >>> games = pd.DataFrame({"opponent": ["self", "self", "llm"], "model": ["m1", "m1", "m1"],
    ...                       "model_a": ["m1", "m1", "m1"], "model_b": ["m2", "m1", ""],
    ...                       "value_visibility": ["own", "both", "own"]})
    >>> pairings(games).values.tolist()
    [['m1 (A) vs m2 (B)', 'model A/model B', 'default'], ['m1 (self-play)', 'model A/model B', 'value_visibility=both'], ['m1', 'person/model', 'default']]
    """
    opponent, model = _cell(frame, "opponent"), _cell(frame, "model")
    model_a, model_b = _cell(frame, "model_a"), _cell(frame, "model_b")
    pairing, players = [], []
    for kind, name, a, b in zip(opponent, model, model_a, model_b, strict=True):
        if kind == "self":
            a, b = a or name, b or "scripted player"
            pairing.append(f"{a} (self-play)" if a == b else f"{a} (A) vs {b} (B)")
            players.append("model A/model B")
        elif kind == "human" or name == "human":
            pairing.append("people")
            players.append("person/person")
        else:
            pairing.append(name)
            players.append("person/model")
    departures = [
        _cell(frame, column).map(lambda value, c=column, d=default: f"{c}={value}" if value not in ("", str(d)) else "")
        for column, (_, default) in effects.FACTORS.items()
    ]
    condition = [", ".join(part for part in parts if part) or "default" for parts in zip(*departures, strict=True)]
    return pd.DataFrame({"pairing": pairing, "players": players, "condition": condition}, index=frame.index)


def model_cost(group: pd.DataFrame) -> dict[str, Any]:
    """What the model calls of these games cost, from the export's ``llm_cost`` (empty while a price is unknown) and
    ``llm_calls``: ``cost`` (None while any game with calls has no price), ``cost_per_game``, ``cost_currency`` and
    ``cost_text`` (``backend.core.llm.costs.CostSum``; a game without calls costs nothing). Empty without the columns
    (an export from before the price table).

    >>> games = pd.DataFrame({"llm_cost": ["0.5", "", "0.25"], "llm_calls": ["2", "0", "1"],
    ...                       "llm_cost_currency": ["EUR", "EUR", "EUR"]})
    >>> model_cost(games)["cost"], model_cost(games)["cost_per_game"], model_cost(games)["cost_text"]
    (0.75, 0.25, '0.7500 EUR')
    >>> model_cost(games.assign(llm_calls=["2", "3", "1"]))["cost_text"]
    'unknown (1 of 3 games unpriced; 0.7500 EUR known)'
    """
    if "llm_cost" not in group or "llm_calls" not in group:
        return {}
    currencies = sorted({str(c) for c in group.get("llm_cost_currency", pd.Series(dtype=str)) if str(c)})
    spent = CostSum(", ".join(currencies), unit="games")
    for cost, calls in zip(group["llm_cost"].astype(str), group["llm_calls"].astype(str), strict=True):
        spent.add(float(cost) if cost.strip() else (0.0 if calls.strip() in ("", "0") else None))
    total = spent.total
    return dict(
        cost=total,
        cost_per_game=total / len(group) if total is not None and len(group) else None,
        cost_currency=spent.currency,
        cost_text=spent.text(),
    )


def summarise(frame: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0) -> list[dict[str, Any]]:
    """One dict per mode × language × model pairing × condition with every statistic, plain and debiased (see the
    module doc); ``pairings`` says who played and in which condition."""
    missing = REQUIRED_COLUMNS - set(frame.columns)
    if missing:
        raise ValueError(f"The frame is not a dond_games export; missing columns {sorted(missing)}.")
    frame = frame[frame["outcome"].astype(str).isin(FINISHED)]
    frame = (
        pd.concat([frame, pairings(frame)], axis=1)
        if len(frame)
        else frame.assign(pairing=[], players=[], condition=[])
    )
    rows = []
    keys = ["mode", "language", "model", "pairing", "players", "condition"]
    for (mode, language, model, pairing, players, condition), group in frame.groupby(keys, sort=True, dropna=False):
        values = game_statistics(group)
        cells = group["cell"].astype(str).to_numpy()
        row: dict[str, Any] = {
            "mode": mode,
            "language": language,
            "model": model,
            "pairing": pairing,
            "players": players,
            "condition": condition,
            "games": len(group),
            "cells": sorted(set(cells)),
            **model_cost(group),
        }
        for name in STATISTICS:
            row[name] = _nanmean(values[name])
            row[f"{name}_debiased"] = stats.debiased_mean(values[name], cells=cells)
        for key, by_cell in (("main_score_ci", None), ("main_score_debiased_ci", cells)):
            replicates = stats.bootstrap_replicates(values["main_score"], cells=by_cell, n_boot=n_boot, seed=seed)
            row[key] = list(stats.percentile_interval(replicates, confidence=0.95))
        for suffix in ("", "_debiased"):
            played = 1.0 - row[f"aborted_rate{suffix}"]
            mode_score = row[f"mode_score{suffix}"]
            row[f"benchmark_score{suffix}"] = played * mode_score if not math.isnan(mode_score) else 0.0
        rows.append(row)
    return rows


def has_agency_columns(frame: pd.DataFrame) -> bool:
    """Whether the frame has the per-role agency columns (exports before them do not).

    >>> from backend.dond.export import DOND_GAMES_COLUMNS
    >>> has_agency_columns(pd.DataFrame(columns=DOND_GAMES_COLUMNS)), has_agency_columns(pd.DataFrame(columns=["a"]))
    (True, False)
    """
    return any(f"{metric}_{side}" in frame for side in ("a", "b") for metric in AGENCY_METRICS)


def _text_values(series: pd.Series) -> pd.Series:
    """Strings with missing values (NaN, None, "nan") as empty text."""
    text = series.fillna("").astype(str).str.strip()
    return text.where(text.str.lower() != "nan", "")


def agency_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per finished game × LLM role with agency metrics (see the module doc); columns ``AGENCY_FRAME_COLUMNS``.

    A role counts when any of its ``<metric>_<role>`` columns (``PLAYER_METRICS``) holds a number. Empty for a
    frame without the agency columns.
    """
    if "outcome" in frame:
        frame = frame[frame["outcome"].astype(str).isin(FINISHED)]
    empty = pd.Series("", index=frame.index, dtype=object)

    def text(name: str) -> pd.Series:
        return _text_values(frame[name]) if name in frame else empty

    cluster_parts = [text(name) for name in INSTANCE_COLUMNS if name in frame]
    cluster = cluster_parts[0].str.cat(cluster_parts[1:], sep="|") if cluster_parts else empty
    parts = []
    for role in ("A", "B"):
        suffix = role.lower()
        present = [f"{metric}_{suffix}" for metric in PLAYER_METRICS if f"{metric}_{suffix}" in frame]
        if not present:
            continue
        numbers = frame[present].apply(pd.to_numeric, errors="coerce")
        llm = numbers.notna().any(axis=1).to_numpy()
        if not llm.any():
            continue
        role_model = text(f"model_{suffix}")
        part = pd.DataFrame(
            {
                "mode": text("mode"),
                "language": text("language"),
                "model": role_model.where(role_model != "", text("model")),
                "llm_protocol": text("llm_protocol"),
                "game_id": text("game_id"),
                "side": role,
                "is_first_mover": text("opener") == role,
                "cluster": cluster,
            },
            index=frame.index,
        )
        for metric in AGENCY_METRICS:
            part[metric] = numbers.get(f"{metric}_{suffix}", math.nan)
        parts.append(part[llm])
    if not parts:
        return pd.DataFrame(columns=AGENCY_FRAME_COLUMNS)
    return pd.concat(parts, ignore_index=True)[AGENCY_FRAME_COLUMNS]


def summarise_agency(frame: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0) -> list[dict[str, Any]] | None:
    """Faithfulness, instruction-following and utility per mode × language × model × protocol, debiased.

    One dict per group × metric with ``n``, ``n_cells``, ``mean``, ``debiased_mean``, ``se``, ``ci_low``,
    ``ci_high`` (``backend.dond.debiasing.summarise`` on ``agency_frame``, clustered by instance); metrics with n = 0
    are left out. ``None`` when the frame has no agency columns (an export older than them).
    """
    if not has_agency_columns(frame):
        return None
    long = agency_frame(frame)
    if long.empty:
        return []
    table = debiasing.summarise(long, AGENCY_METRICS, by=AGENCY_BY, cluster="cluster", n_boot=n_boot, seed=seed)
    return table[table["n"] > 0].to_dict("records")  # groups sorted, metrics in AGENCY_METRICS order


GROUP_HEADER = ["mode", "lang", "model"]


def _group_cells(row: dict[str, Any]) -> list[str]:
    return [str(row["mode"]), str(row["language"]), str(row["model"])]


def _agency_text_table(rows: list[dict[str, Any]]) -> str:
    header = [*GROUP_HEADER, "protocol", "metric", "n", "cells", "mean", "debiased", "SE", "95% CI"]
    lines = [header] + [
        [
            *_group_cells(r),
            str(r["llm_protocol"]) or "–",
            str(r["metric"]),
            str(r["n"]),
            str(r["n_cells"]),
            _fmt(r["mean"], 3),
            _fmt(r["debiased_mean"], 3),
            _fmt(r["se"], 3),
            _interval(r["ci_low"], r["ci_high"], 3),
        ]
        for r in rows
    ]
    notes = (
        "One row per finished game and role an LLM played; cells = side (A/B) x whether it opened. "
        "Debiased = (1/C) sum of the C cell means; SE = sqrt(sum s_c^2/n_c)/C; the 95% CI bootstraps instances. "
        "Faithfulness and format figures are shares; utility = own points / 10."
    )
    title = "LLM agency per model: faithfulness, instruction following and utility"
    return title + "\n\n" + "\n".join(_aligned(lines)) + "\n\n" + notes


def _aligned(lines: list[list[str]]) -> list[str]:
    """Rows of cells as left-aligned text columns, a dashed rule under the first (the header)."""
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    text = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)) for line in lines]
    text.insert(1, "  ".join("-" * width for width in widths))
    return text


def _fmt(value: float, digits: int = 1) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _interval(low: float, high: float, digits: int = 1) -> str:
    return f"[{_fmt(low, digits)}, {_fmt(high, digits)}]"


def _text_table(rows: list[dict[str, Any]]) -> str:
    header = [
        *("mode", "lang", "players", "condition"),
        *("games", "cells", "aborted", "LLM error/rules", "lose", "success", "pareto"),
        *("main score [95% CI]", "debiased main [95% CI]", "points", "benchmark", "debiased benchmark"),
    ]
    lines = [header] + [
        [
            str(r["mode"]),
            str(r["language"]),
            str(r["pairing"]),
            str(r["condition"]),
            str(r["games"]),
            ",".join(r["cells"]),
            _fmt(r["aborted_rate"], 2),
            f"{_fmt(r['llm_error_rate'], 2)}/{_fmt(r['llm_invalid_rate'], 2)}",
            _fmt(r["lose_rate"], 2),
            _fmt(r["success_rate"], 2),
            _fmt(r["pareto_optimal_rate"], 2),
            f"{_fmt(r['main_score'])} {_interval(*r['main_score_ci'])}",
            f"{_fmt(r['main_score_debiased'])} {_interval(*r['main_score_debiased_ci'])}",
            f"{_fmt(r['points_focal'])}/{_fmt(r['points_opponent'])} ({r['players']})",
            _fmt(r["benchmark_score"]),
            _fmt(r["benchmark_score_debiased"]),
        ]
        for r in rows
    ]
    notes = (
        "Rates are shares of finished games; LLM error/rules: aborted because the model could not be reached / "
        "broke the rules too often. Pareto, main score and points are over non-aborted games. "
        "Debiased = mean of the per-cell means over the counterbalancing cells present. "
        "Benchmark = (1 - aborted rate) x mean clembench per-mode score."
    )
    return "\n".join(_aligned(lines)) + "\n\n" + notes


def report_data(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """What ``report --json`` prints (strict-JSON values): one ``summarise`` row per mode × language × model, with
    its ``llm_agency`` rows and its ``treatments`` (conditions and effects) when the games have them. The figures
    (``backend.dond.figures``) and the admin report draw from this."""
    rows = summarise(frame)
    agency = summarise_agency(frame)
    treated = effects.has_conditions(frame) and bool(rows)
    conditions = effects.condition_summaries(frame) if treated else []
    gains = effects.treatment_effects(frame) if treated else []
    treated_keys = set()  # rows split by pairing and condition share a key: its treatments go to the first only
    for row in rows:
        key = (row["mode"], row["language"], row["model"])
        if agency is not None:
            row["llm_agency"] = [a for a in agency if (a["mode"], a["language"], a["model"]) == key]
        if treated and key not in treated_keys:
            treated_keys.add(key)
            same = [c for c in conditions if (c["mode"], c["language"], c["model"]) == key]
            row["treatments"] = {
                "conditions": same,
                "effects": [e for e in gains if (e["mode"], e["language"], e["model"]) == key],
            }
    return jsonable(rows)


def report(paths: Sequence[str | Path], *, as_json: bool = False) -> str:
    """The printed report of one or more ``dond_games`` CSV files (or JSON with ``as_json``)."""
    if not paths:
        raise ValueError("paths must name at least one dond_games CSV file.")
    frames = [read_csv_any(path, dtype=str, keep_default_na=False) for path in paths]
    frame = pd.concat(frames, ignore_index=True)
    if as_json:
        return json.dumps(report_data(frame), indent=2, allow_nan=False, ensure_ascii=False)
    rows = summarise(frame)
    agency = summarise_agency(frame)
    treated = effects.has_conditions(frame) and bool(rows)
    conditions = effects.condition_summaries(frame) if treated else []
    gains = effects.treatment_effects(frame) if treated else []
    if not rows:
        return "No finished DoND games in the file(s)."
    text = _text_table(rows)
    if any("cost_text" in row for row in rows):
        text += "\n\nModel costs (the price table's, llm_cost): " + "; ".join(
            f"{row['mode']}/{row['language']}/{row['condition']}: {row['cost_text']}"
            for row in rows
            if "cost_text" in row
        )
    if agency:
        text += "\n\n" + _agency_text_table(agency)
    if treated:
        text += "\n\n" + effects.text_report(conditions, gains)
    return text
