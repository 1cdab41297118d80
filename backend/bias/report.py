"""Report of bias-test exports: every bias metric per respondent group (people, each model), side by side.

Input: rows with ``backend.bias.export.EXPORT_COLUMNS`` (the ``bias_tests`` app's export and the files of
``backend.bias.runner``; several files are merged). A *test* is one respondent's answers to one item: the control
and treatment answers (anchoring, halo, confirmation) or the single treatment answer (loss aversion); a test
missing an answered version (skipped, unparseable, failed) is left out and counted as incomplete. Groups: all
people together, and each model in each answer mode (``answer_mode``: stated, structured, logprobs) as its own group,
e.g. ``smollm [logprobs]`` (its runs are its respondents): files of one model asked in three modes are three groups,
never one respondent. The same respondent answering the same test version twice (the same file given twice under
two names, or two runs written into one folder) is refused with the respondent and test named.

A reply whose own words contradict its letter (``problem`` starting with "contradiction",
``backend.bias.contradictions``) is counted per group and left out of the metrics unless
``include_contradictions=True`` (``python -m backend report --include-contradictions``).

Per bias and group: the individual metric's mean, sd, median and range; the batch metric of ``backend.bias.metrics``
(anchoring both anchor-agnostic and anchor-specific); its confidence variants, computed over the tests whose answers
all carry a confidence:

- expected answer: option probabilities where the respondent stated them (models), otherwise the single confidence
  (people's slider, 0-1) spread as in ``backend.bias.metrics.confidence_distribution``;
- confidence-weighted batch: each test weighted by the confidence in its answers, i.e. the probability the
  respondent gave to the chosen option (anchoring, halo: mean of control and treatment; loss aversion: the answer;
  confirmation: the control answer, as the argument selection has no confidence);

and a seeded 95% bootstrap interval (``backend.bias.metrics.bootstrap_ci``, tests resampled) for each of the three batch
values. The attention check's pass rate is reported per group; ``exclude_inattentive=True`` drops the respondents
who failed it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from backend.bias.export import EXPORT_COLUMNS
from backend.bias.items import TREATMENT
from backend.bias.metrics import (
    AnchoringBiasMetric,
    ConfirmationBiasMetric,
    HaloEffectMetric,
    LossAversionMetric,
    bootstrap_ci,
    confidence_distribution,
)
from backend.bias.report_rows import PEOPLE, group_of, ordered_groups, paired_answers, prepare, read_rows
from backend.core.jsonable import jsonable
from backend.core.script_json import script_json

__all__ = ["PEOPLE", "admin_view", "group_of", "looks_like", "prepare", "read_rows", "report", "summarise"]
METRICS = ("anchoring_agnostic", "anchoring_specific", "halo", "loss_aversion", "confirmation")
METRIC_TITLES = {
    "anchoring_agnostic": "Anchoring (anchor-agnostic)",
    "anchoring_specific": "Anchoring (anchor-specific)",
    "halo": "Halo effect",
    "loss_aversion": "Loss aversion (individual = accepted)",
    "confirmation": "Confirmation bias",
}
BOOTSTRAP_RESAMPLES = 1000


def looks_like(columns: Iterable[str]) -> bool:
    """A bias-test export: it has the columns that only this export has."""
    names = {str(column).strip() for column in columns}
    return {"respondent_kind", "item_id", "bias", "version", "pro_selected", "arguments_selected"} <= names


# --- the metrics per group -----------------------------------------------------------------------------------------
class _WeightedMean:
    """The batch of anchoring and halo (mean of the individual values), for tests with differing option counts."""

    overall = True

    def compute(self, values: Any, *, weights: Any = None) -> float:
        values = np.asarray(values, dtype=float).reshape(-1, 1)
        if weights is None:
            return float(np.mean(values))
        weights = np.asarray(weights, dtype=float).reshape(-1, 1)
        if weights.sum() <= 0:
            raise ValueError("weights must not all be zero.")
        return float(np.sum(weights * values) / np.sum(weights))


def _distribution_rows(answers, options, confidences, probabilities) -> list[np.ndarray] | None:
    """Per test the option probabilities of the expected-answer variant, or None if a test has no confidence."""
    rows = []
    for answer, option_values, confidence, stated in zip(answers, options, confidences, probabilities, strict=True):
        if stated is not None:
            rows.append(np.asarray(stated, dtype=float) / np.sum(stated))
        elif not math.isnan(confidence):
            rows.append(confidence_distribution([[answer]], [option_values], [[confidence]])[0])
        else:
            return None
    return rows


def _mean_confidence(*columns: Sequence[float]) -> np.ndarray:
    return np.nanmean(np.column_stack(columns), axis=1) if columns else np.array([])


def _shift_values(pairs: pd.DataFrame, metric_name: str) -> dict[str, Any]:
    """Individual values (plain and expected-answer) of anchoring/halo, computed per block of equal option count."""
    plain, expected, weights, has_confidence = [], [], [], []
    for _, block in pairs.groupby(pairs["c_options"].map(len), sort=False):
        options = np.array(block["c_options"].tolist(), dtype=float)
        args = [block["c_answer"].to_numpy().reshape(-1, 1), block["t_answer"].to_numpy().reshape(-1, 1), options]
        if metric_name == "halo":
            metric = HaloEffectMetric(overall=False)
        else:
            metric = AnchoringBiasMetric(anchor_agnostic=metric_name == "anchoring_agnostic", overall=False)
            args.append(block["c_anchor"].to_numpy().reshape(-1, 1))
        plain.extend(metric.compute(*args).ravel().tolist())
        for row_index in range(len(block)):
            row = block.iloc[row_index]
            control = _distribution_rows(
                [row.c_answer], [row.c_options], [row.c_confidence], [row.c_option_probabilities]
            )
            treatment = _distribution_rows(
                [row.t_answer], [row.t_options], [row.t_confidence], [row.t_option_probabilities]
            )
            if control is None or treatment is None:
                expected.append(math.nan)
                weights.append(math.nan)
                has_confidence.append(False)
                continue
            value = metric.compute(
                *[np.asarray(arg)[row_index : row_index + 1] for arg in args],
                control_confidence=control[0].reshape(1, -1),
                treatment_confidence=treatment[0].reshape(1, -1),
            )
            expected.append(float(value[0, 0]))
            chosen = [control[0][row.c_options.index(row.c_answer)], treatment[0][row.t_options.index(row.t_answer)]]
            weights.append(float(np.mean(chosen)))
            has_confidence.append(True)
    return dict(plain=np.array(plain), expected=np.array(expected), weights=np.array(weights), mask=has_confidence)


def _interval(metric, *arrays, **options) -> list[float] | None:
    try:
        low, high = bootstrap_ci(metric, *arrays, n_resamples=BOOTSTRAP_RESAMPLES, seed=0, **options)
    except ValueError:
        return None
    return [low, high]


def _summary(values: np.ndarray) -> dict[str, float]:
    values = np.asarray(values, dtype=float)
    return {
        "individual_mean": float(np.mean(values)),
        "individual_sd": float(np.std(values, ddof=1)) if len(values) > 1 else math.nan,
        "individual_median": float(np.median(values)),
        "individual_min": float(np.min(values)),
        "individual_max": float(np.max(values)),
    }


def _empty(n_tests: int = 0) -> dict[str, Any]:
    return {"tests": n_tests}


def shift_metric(pairs: pd.DataFrame, metric_name: str) -> dict[str, Any]:
    """Anchoring (agnostic/specific) or halo figures of one group's paired tests."""
    if pairs.empty:
        return _empty()
    values = _shift_values(pairs, metric_name)
    mean = _WeightedMean()
    result = {"tests": len(pairs), "respondents": int(pairs["respondent_id"].nunique()), **_summary(values["plain"])}
    result["batch"] = mean.compute(values["plain"])
    result["batch_ci"] = _interval(mean, values["plain"])
    mask = np.array(values["mask"], dtype=bool)
    result["confidence_tests"] = int(mask.sum())
    if mask.any():
        result["expected_batch"] = mean.compute(values["expected"][mask])
        result["expected_batch_ci"] = _interval(mean, values["expected"][mask])
        weights = values["weights"][mask]
        if weights.sum() > 0:
            result["weighted_batch"] = mean.compute(values["plain"][mask], weights=weights)
            result["weighted_batch_ci"] = _interval(mean, values["plain"][mask], weights=weights)
    return result


def _binary_confidences(part: pd.DataFrame, prefix: str) -> np.ndarray | None:
    """(N, 2) probabilities of answering (0, 1) for the tests' 0/1 answers, or None if one has no confidence."""
    answers = part[f"{prefix}answer"].to_numpy()
    options = part[f"{prefix}options"].tolist()
    stated = part[f"{prefix}option_probabilities"].tolist()
    # reorder stated probabilities (listed in the shown order, e.g. Yes=1 first) to the values (0, 1)
    aligned = [
        None if probabilities is None else [probabilities[values.index(0)], probabilities[values.index(1)]]
        for probabilities, values in zip(stated, options, strict=True)
    ]
    rows = _distribution_rows(answers, [[0, 1]] * len(part), part[f"{prefix}confidence"].tolist(), aligned)
    return None if rows is None else np.array(rows)


def _binary_variants(result: dict, metric, arrays: list[np.ndarray], part: pd.DataFrame, prefix: str) -> None:
    has_confidence = (part[f"{prefix}confidence"].notna() | part[f"{prefix}option_probabilities"].notna()).to_numpy()
    result["confidence_tests"] = int(has_confidence.sum())
    if not has_confidence.any():
        return
    subset = part[has_confidence]
    sub_arrays = [array[has_confidence] for array in arrays]
    distributions = _binary_confidences(subset, prefix)
    result["expected_batch"] = metric.compute(*sub_arrays, answer_confidence=distributions)
    result["expected_batch_ci"] = _interval(metric, *sub_arrays, answer_confidence=distributions)
    # the weight is the probability given to the chosen answer (the slider value, or the stated probability)
    chosen = subset[f"{prefix}answer"].to_numpy(dtype=int)
    confidence = distributions[np.arange(len(subset)), chosen].reshape(-1, 1)
    if confidence.sum() > 0:
        result["weighted_batch"] = metric.compute(*sub_arrays, weights=confidence)
        result["weighted_batch_ci"] = _interval(metric, *sub_arrays, weights=confidence)


def loss_aversion_metric(part: pd.DataFrame) -> dict[str, Any]:
    """Loss-aversion figures of one group's answered treatment rows."""
    if part.empty:
        return _empty()
    part = part.rename(columns=lambda column: f"t_{column}" if column not in ("group", "respondent_id") else column)
    answers = part["t_answer"].to_numpy(dtype=int).reshape(-1, 1)
    lambdas = part["t_lambda"].to_numpy(dtype=float).reshape(-1, 1)
    metric = LossAversionMetric(overall=True)
    result = {"tests": len(part), "respondents": int(part["respondent_id"].nunique()), **_summary(answers)}
    result["batch"] = metric.compute(answers, lambdas)
    result["batch_ci"] = _interval(metric, answers, lambdas)
    _binary_variants(result, metric, [answers, lambdas], part, "t_")
    return result


def confirmation_metric(pairs: pd.DataFrame) -> dict[str, Any]:
    """Confirmation-bias figures of one group's paired tests (control agree/disagree, treatment selection)."""
    if pairs.empty:
        return _empty()
    arrays = [
        pairs["c_answer"].to_numpy(dtype=int).reshape(-1, 1),
        pairs["t_pro_selected"].to_numpy(dtype=int).reshape(-1, 1),
        pairs["t_con_selected"].to_numpy(dtype=int).reshape(-1, 1),
        pairs["t_n_arguments"].to_numpy(dtype=int).reshape(-1, 1),
    ]
    individual = ConfirmationBiasMetric(overall=False).compute(*arrays)
    metric = ConfirmationBiasMetric(overall=True)
    result = {"tests": len(pairs), "respondents": int(pairs["respondent_id"].nunique()), **_summary(individual)}
    result["batch"] = metric.compute(*arrays)
    result["batch_ci"] = _interval(metric, *arrays)
    _binary_variants(result, metric, arrays, pairs, "c_")
    return result


def summarise(
    rows: pd.DataFrame, *, exclude_inattentive: bool = False, include_contradictions: bool = False
) -> dict[str, Any]:
    """All figures: ``{"groups": [...], "counts": {group: {...}}, "metrics": {metric: {group: {...}}}}``."""
    answered, counts = prepare(
        rows, exclude_inattentive=exclude_inattentive, include_contradictions=include_contradictions
    )
    groups = ordered_groups(counts)
    metrics: dict[str, dict[str, Any]] = {name: {} for name in METRICS}
    pairs = {bias: paired_answers(answered, bias) for bias in ("anchoring", "halo", "confirmation")}
    loss_rows = answered[(answered["bias"] == "loss_aversion") & (answered["version"] == TREATMENT)]
    for group in groups:

        def of(frame: pd.DataFrame, group: str = group) -> pd.DataFrame:
            return frame[frame["group"] == group]

        metrics["anchoring_agnostic"][group] = shift_metric(of(pairs["anchoring"]), "anchoring_agnostic")
        metrics["anchoring_specific"][group] = shift_metric(of(pairs["anchoring"]), "anchoring_specific")
        metrics["halo"][group] = shift_metric(of(pairs["halo"]), "halo")
        metrics["loss_aversion"][group] = loss_aversion_metric(of(loss_rows))
        metrics["confirmation"][group] = confirmation_metric(of(pairs["confirmation"]))
    return {
        "groups": groups,
        "counts": counts,
        "metrics": metrics,
        "exclude_inattentive": exclude_inattentive,
        "include_contradictions": include_contradictions,
    }


# --- output --------------------------------------------------------------------------------------------------------
def _figure(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.3f}"
    return str(value)


def _cells(figures: dict[str, Any]) -> dict[str, str]:
    def interval(key: str) -> str:
        bounds = figures.get(key)
        return f"[{bounds[0]:.3f}, {bounds[1]:.3f}]" if bounds else "n/a"

    return {
        "tests (respondents)": f"{figures.get('tests', 0)} ({figures.get('respondents', 0)})",
        "individual mean ± sd": f"{_figure(figures.get('individual_mean'))} ± {_figure(figures.get('individual_sd'))}",
        "individual median [min, max]": f"{_figure(figures.get('individual_median'))} "
        f"[{_figure(figures.get('individual_min'))}, {_figure(figures.get('individual_max'))}]",
        "batch": _figure(figures.get("batch")),
        "  95% bootstrap CI": interval("batch_ci"),
        "tests with confidence": str(figures.get("confidence_tests", 0)),
        "expected-answer batch": _figure(figures.get("expected_batch")),
        "  95% bootstrap CI ": interval("expected_batch_ci"),
        "confidence-weighted batch": _figure(figures.get("weighted_batch")),
        "  95% bootstrap CI  ": interval("weighted_batch_ci"),
    }


def report(
    paths: Sequence[str | Path],
    *,
    as_json: bool = False,
    exclude_inattentive: bool = False,
    include_contradictions: bool = False,
) -> str:
    """The printed report of ``python -m backend report`` for bias-test exports (people and models side by side)."""
    summary = summarise(
        read_rows(paths), exclude_inattentive=exclude_inattentive, include_contradictions=include_contradictions
    )
    if as_json:
        return json.dumps(jsonable(summary), indent=2, ensure_ascii=False)
    groups = summary["groups"]
    lines = [f"Bias tests: {len(groups)} respondent group(s); figures per group side by side."]
    header = pd.DataFrame(
        {
            group: {
                "respondents": counts["respondents"],
                "unparseable answers": counts["unparseable"],
                "failed calls": counts["errors"],
                "self-contradicting answers": counts["contradictions"],
                "attention checks passed": f"{counts['attention_passed']}/{counts['attention_checks']}",
            }
            for group, counts in ((group, summary["counts"][group]) for group in groups)
        }
    )
    lines += [header.to_string(), ""]
    for name in METRICS:
        table = pd.DataFrame({group: _cells(summary["metrics"][name][group]) for group in groups})
        table.index.name = METRIC_TITLES[name]
        lines += [table.to_string(), ""]
    lines.append(
        "Self-contradicting answers (the letter says one option, the reply's words another) are included."
        if include_contradictions
        else "Self-contradicting answers (the letter says one option, the reply's words another) are left out; "
        "--include-contradictions includes them."
    )
    lines.append(
        "Confidence variants use only tests whose answers all carry a confidence; "
        "intervals: percentile bootstrap over tests, 1000 resamples, seed 0."
    )
    return "\n".join(lines)


def _script_json(value: Any) -> str:
    return script_json(jsonable(value), ensure_ascii=False)


def admin_view(rows: Sequence[dict]) -> dict[str, Any]:
    """What the app's admin report shows: the tables of ``report`` and a bar chart of the batch values per bias.

    ``rows`` are export rows (``EXPORT_COLUMNS`` dicts). Chart data: one dataset per group and batch kind (plain,
    expected answer, confidence-weighted), one bar per metric; missing values are null.
    """
    frame = pd.DataFrame(list(rows), columns=list(EXPORT_COLUMNS)).fillna("").astype(str)
    if frame.empty:
        return dict(has_data=False, groups=[], counts=[], tables=[], chart_json=_script_json({}))
    summary = summarise(frame)
    groups = summary["groups"]
    counts = [
        [label, *[str(summary["counts"][group][key]) for group in groups]]
        for label, key in (("respondents", "respondents"), ("answers", "rows"))
    ]
    counts.append(
        [
            "attention checks passed",
            *[f"{summary['counts'][g]['attention_passed']}/{summary['counts'][g]['attention_checks']}" for g in groups],
        ]
    )
    tables = []
    for name in METRICS:
        cells = {group: _cells(summary["metrics"][name][group]) for group in groups}
        labels = list(next(iter(cells.values())))
        tables.append(
            {
                "title": METRIC_TITLES[name],
                "rows": [[label.strip(), *[cells[g][label] for g in groups]] for label in labels],
            }
        )
    kinds = (("batch", "batch"), ("expected_batch", "expected answer"), ("weighted_batch", "confidence-weighted"))
    datasets = [
        {
            "label": f"{group}: {kind_label}",
            "data": [summary["metrics"][name][group].get(key) for name in METRICS],
        }
        for group in groups
        for key, kind_label in kinds
    ]
    chart = {"labels": [METRIC_TITLES[name] for name in METRICS], "datasets": datasets}
    view = dict(has_data=True, groups=groups, counts=counts, tables=tables, chart_json=_script_json(chart))
    return dict(view, summary=jsonable(summary))  # what `report --json` prints: the figures draw from it
