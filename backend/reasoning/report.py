"""Aggregate payoff-reasoning verdicts: combined verdict per log, the automated check against people, agreement.

Input: protocol form rows (`backend.reasoning.protocol.PROTOCOL_COLUMNS`), one per judge and log, from the app's
export or from separate per-judge forms. Per log, the judges' ``orig_cor`` / ``fin_cor`` are combined by
**unanimity** (correct only if every judge says correct, as in the reference study) or by **majority** (correct if
more than half say correct; a tie counts as incorrect). The automated check "passed" on a log when its attempt 0
had no failed queries. Against the combined ``orig_cor`` (positive = correct)::

    accuracy  = (TP + TN) / N        precision = TP / (TP + FP)       recall = TP / (TP + FN)
    error recall = TN / (TN + FP)    error precision = TN / (TN + FN)  (the check as an error detector)

Ratios with an empty denominator are NaN. Agreement among judges is Fleiss' kappa over the 0/1 verdicts
(`backend.core.agreement.fleiss_kappa`).
Everything is reported per model (from the log's file name) and game, per model, and overall.

**Model judges** (rows whose ``participant_code`` starts with ``model:``, as `backend.reasoning.judge` writes them)
are kept out of the people's figures above and set beside them, per judge and game (`model_judge_scores`): on the
logs both judged, the share of logs where the model's verdict equals the people's combined verdict
(``agree_orig``, ``agree_fin``) and Fleiss' kappa of the two (``kappa_people``); and the automated check scored
against the model exactly as against people (TP/FP/FN/TN, ``accuracy``), with the check's accuracy against people
on the same logs (``check_vs_people``). A form with model judges only is reported as if they were the judges.

**Calibration against people** (`backend.core.calibration`): a judge run with ``--samples K`` records per log its
share of samples saying correct (``p_correct``) and its confidence in its verdict, in the calls file beside its
protocol file (``reasoning_judge_calls_<model>.csv``); without that file, or from a run of one sample, each verdict
counts as one sample with confidence 1. On the logs people judged too: ``brier`` (p_correct against people's
combined verdict), ``ece`` (confidence against whether the verdict equals people's; ``reliability``: its bins, the
figure's points) and the **admission line**: the judge is admitted when the lower bound of ``kappa_people``'s
interval clears the threshold (``report(admit_at=...)``, ``python -m backend report --admit-at``, default
`backend.core.calibration.DEFAULT_ADMISSION_THRESHOLD`).

**Intervals** (`backend.core.unit_bootstrap`, ``METHOD``): every kappa, share of agreements, ECE and Brier score has
a 95 % percentile interval (``<figure>_low`` / ``<figure>_high``) from 1000 resamples of the logs (a log with all its
verdicts), seed 0: the same files give the same intervals.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from backend.core import calibration, unit_bootstrap
from backend.core.agreement import fleiss_kappa
from backend.core.csvio import read_csv_any
from backend.core.jsonable import jsonable
from backend.reasoning.judge_scores import (
    JUDGE_CALLS_PREFIX,
    JUDGE_PROTOCOL_PREFIX,
    MODEL_JUDGE_PREFIX,
    calibration_scores,
    judge_confidence,
    verdict_agreement,
)
from backend.reasoning.logs import confusion_label, parse_failed_queries_field, parse_log_name
from backend.reasoning.protocol import ERROR_TYPES, PROTOCOL_COLUMNS, RULES, read_protocol_form, split_hash_field

CONFUSION_CELLS = ("TP", "FP", "FN", "TN")


def combine_verdicts(verdicts: Sequence[int], *, rule: str = "unanimity") -> int:
    """Combine judges' 0/1 verdicts on one item: unanimity = min; majority = 1 if more than half are 1.

    >>> combine_verdicts([1, 1, 0]), combine_verdicts([1, 1, 0], rule="majority"), combine_verdicts([1, 0], rule="majority")
    (0, 1, 0)
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}.")
    values = np.asarray(verdicts)
    if values.size == 0:
        raise ValueError("verdicts must hold at least one judge's verdict.")
    if not np.isin(values, (0, 1)).all():
        raise ValueError(f"verdicts must be 0 or 1, got {sorted(set(values.tolist()))}.")
    if rule == "unanimity":
        return int(values.min())
    return int(2 * values.sum() > values.size)


def confusion_counts(truth: Iterable[int], passed: Iterable[int]) -> dict[str, int]:
    """Counts of TP/FP/FN/TN with truth = people's verdict (1 = correct) and prediction = the check passed.

    >>> confusion_counts([1, 1, 0, 0, 0], [1, 0, 1, 0, 0])
    {'TP': 1, 'FP': 1, 'FN': 1, 'TN': 2}
    """
    truth, passed = list(truth), list(passed)
    if len(truth) != len(passed):
        raise ValueError(f"truth and passed must have the same length, got {len(truth)} and {len(passed)}.")
    cells = Counter(confusion_label(t, p) for t, p in zip(truth, passed, strict=True))
    return {cell: cells[cell] for cell in CONFUSION_CELLS}


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else math.nan


def check_scores(counts: dict[str, int]) -> dict[str, float]:
    """Accuracy, precision, recall (positive = correct) and the error-detection pair from TP/FP/FN/TN counts.

    >>> check_scores({"TP": 15, "FP": 9, "FN": 5, "TN": 61})["precision"]
    0.625
    """
    tp, fp, fn, tn = (counts[cell] for cell in CONFUSION_CELLS)
    return {
        "accuracy": _ratio(tp + tn, tp + fp + fn + tn),
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        "error_recall": _ratio(tn, tn + fp),
        "error_precision": _ratio(tn, tn + fn),
    }


def error_type_counts(cells: Iterable[object]) -> dict[str, int]:
    """Tags of ``err_type`` cells summed (case and spaces ignored); unknown tags are listed under their text.

    >>> error_type_counts(["pa#rga", " Pc", "pa", "", "0"])
    {'pa': 2, 'rga': 1, 'pc': 1, 'u': 0, '0': 1}
    """
    found = Counter(tag.lower() for cell in cells for tag in split_hash_field(cell))
    result = {code: found.pop(code, 0) for code in ERROR_TYPES}
    result.update(sorted(found.items()))
    return result


def read_verdict_rows(paths: Iterable[str | Path]) -> pd.DataFrame:
    """All form rows of ``paths`` with ``source`` (the file name), prepared by `prepare_verdict_rows`."""
    frames = []
    for path in paths:
        frame = read_protocol_form(path)
        frame.insert(0, "source", Path(path).name)
        frame["judge"] = _judges(path, len(frame))
        frames.append(frame)
    if not frames:
        raise ValueError("paths must name at least one form.")
    return prepare_verdict_rows(pd.concat(frames, ignore_index=True))


def _judges(path: str | Path, n_rows: int) -> list[str]:
    """The ``participant_code`` of each row of a form that has one (the export with identifiers), else blanks."""
    frame = read_csv_any(Path(path), dtype=str, keep_default_na=False)
    frame.columns = [str(column).strip() for column in frame.columns]
    if "participant_code" not in frame.columns:
        return [""] * n_rows
    return [code.strip() for code in frame["participant_code"]]


def prepare_verdict_rows(rows: pd.DataFrame | Iterable[dict]) -> pd.DataFrame:
    """Protocol rows plus ``model`` (from the file name), the check result on the first and last attempt, and
    ``judge`` (blank when unknown)."""
    rows = pd.DataFrame(rows).copy()
    missing = [column for column in PROTOCOL_COLUMNS if column not in rows.columns]
    if missing:
        raise ValueError(f"rows lack the protocol column(s) {missing}.")
    if "judge" not in rows.columns:
        rows["judge"] = ""
    for column in ("attempts", "orig_cor", "fin_cor"):
        rows[column] = rows[column].astype(int)
    names = [parse_log_name(file) for file in rows["file"]]
    rows["model"] = [name.model if name else "unknown" for name in names]
    failed = [parse_failed_queries_field(cell) for cell in rows["failed_queries"]]
    rows["check_passed"] = [int(0 not in blocks) for blocks in failed]
    rows["final_check_passed"] = [
        int((attempts - 1) not in blocks) for attempts, blocks in zip(rows["attempts"], failed, strict=True)
    ]
    return rows


def combine_rows(rows: pd.DataFrame, *, rule: str = "unanimity") -> pd.DataFrame:
    """One row per log: model, game, attempts, judges, combined orig_cor / fin_cor, the check, con_mat."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}.")
    missing = {"file", "game", "attempts", "orig_cor", "fin_cor", "check_passed", "final_check_passed"} - set(rows)
    if missing:
        raise ValueError(f"rows lack the column(s) {sorted(missing)}.")
    combined = []
    for file, group in rows.groupby("file", sort=True):
        orig_cor = combine_verdicts(group["orig_cor"].tolist(), rule=rule)
        check_passed = int(group["check_passed"].iloc[0])
        combined.append(
            {
                "file": file,
                "model": group["model"].iloc[0] if "model" in group else "unknown",
                "game": group["game"].iloc[0],
                "attempts": int(group["attempts"].iloc[0]),
                "judges": len(group),
                "orig_cor": orig_cor,
                "fin_cor": combine_verdicts(group["fin_cor"].tolist(), rule=rule),
                "check_passed": check_passed,
                "final_check_passed": int(group["final_check_passed"].iloc[0]),
                "con_mat": confusion_label(orig_cor, check_passed),
            }
        )
    return pd.DataFrame(combined)


def judged_kappa(rows: pd.DataFrame, column: str) -> float:
    """Fleiss' kappa of the 0/1 ``column`` over logs, using the logs with the most common number (>= 2) of judges.

    Fleiss' kappa needs the same number of raters on every item; logs with fewer or more judges (an unfinished
    session) are left out. NaN when no log has two judges or when every verdict is the same.

    >>> rows = pd.DataFrame({"file": list("aaabbbcccd"), "orig_cor": [1, 1, 1, 0, 0, 1, 0, 0, 0, 1]})
    >>> round(judged_kappa(rows, "orig_cor"), 12)  # d (one judge) left out; (n0, n1) = (0,3) (2,1) (3,0)
    0.55

    By hand: P_i = 1, 1/3, 1 -> P_bar = 7/9; p = (5/9, 4/9) -> P_e = 41/81; kappa = (63 - 41) / (81 - 41) = 0.55.
    """
    per_log = rows.groupby("file")[column].agg(["sum", "count"])
    per_log = per_log[per_log["count"] >= 2]
    if per_log.empty:
        return math.nan
    per_log = per_log[per_log["count"] == per_log["count"].mode().max()]
    return fleiss_kappa(np.column_stack([per_log["count"] - per_log["sum"], per_log["sum"]]))


def _kappa_table(rows: pd.DataFrame, column: str) -> np.ndarray:
    """The logs x (0, 1) counts `judged_kappa` scores: logs with the most common number (>= 2) of judges."""
    per_log = rows.groupby("file")[column].agg(["sum", "count"])
    per_log = per_log[per_log["count"] >= 2]
    if per_log.empty:
        return np.zeros((0, 2))
    per_log = per_log[per_log["count"] == per_log["count"].mode().max()]
    return np.column_stack([per_log["count"] - per_log["sum"], per_log["sum"]])


def judged_kappa_interval(rows: pd.DataFrame, column: str, *, seed: int = unit_bootstrap.DEFAULT_SEED) -> list:
    """[low, high] of `judged_kappa`: the percentile bootstrap over the logs it scores (`backend.core.unit_bootstrap`).

    >>> rows = pd.DataFrame({"file": list("aabbccdd"), "orig_cor": [1, 1, 0, 0, 1, 0, 1, 1]})
    >>> low, high = judged_kappa_interval(rows, "orig_cor")
    >>> bool(-1 <= low <= judged_kappa(rows, "orig_cor") <= high <= 1)
    True
    """
    table = _kappa_table(rows, column)
    if len(table) == 0:
        return [math.nan, math.nan]
    draws = unit_bootstrap.unit_draws(len(table), seed=seed)
    return list(unit_bootstrap.interval(unit_bootstrap.fleiss_replicates(table, draws)))


def summarise(rows: pd.DataFrame, *, rule: str = "unanimity") -> list[dict]:
    """Figures per (model, game), per model (game ``all``) and overall (model and game ``all``)."""
    combined = combine_rows(rows, rule=rule)
    scopes = [("all", "all", combined, rows)]
    for model, per_model in combined.groupby("model", sort=True):
        scopes.append((model, "all", per_model, rows[rows["model"] == model]))
        for game, per_game in per_model.groupby("game", sort=True):
            scopes.append((model, game, per_game, rows[(rows["model"] == model) & (rows["game"] == game)]))
    summary = []
    for model, game, logs, ratings in scopes:
        counts = confusion_counts(logs["orig_cor"], logs["check_passed"])
        summary.append(
            {
                "model": model,
                "game": game,
                "logs": len(logs),
                "ratings": len(ratings),
                "judges_per_log": sorted(set(logs["judges"].tolist())),
                **counts,
                **check_scores(counts),
                "kappa_orig": judged_kappa(ratings, "orig_cor"),
                "kappa_orig_interval": judged_kappa_interval(ratings, "orig_cor"),
                "kappa_fin": judged_kappa(ratings, "fin_cor"),
                "kappa_fin_interval": judged_kappa_interval(ratings, "fin_cor"),
                "correct_first": _ratio(int(logs["orig_cor"].sum()), len(logs)),
                "correct_final": _ratio(int(logs["fin_cor"].sum()), len(logs)),
                "check_passed_final": _ratio(int(logs["final_check_passed"].sum()), len(logs)),
                "attempts": {int(k): int(v) for k, v in sorted(Counter(logs["attempts"]).items())},
                "error_types": error_type_counts(ratings["err_type"]),
            }
        )
    return summary


def split_judges(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(people's rows, model judges' rows): a model judge's ``judge`` starts with `MODEL_JUDGE_PREFIX`."""
    is_model = rows["judge"].astype(str).str.startswith(MODEL_JUDGE_PREFIX)
    return rows[~is_model], rows[is_model]


def model_judge_scores(
    people: pd.DataFrame,
    models: pd.DataFrame,
    *,
    rule: str = "unanimity",
    confidence: pd.DataFrame | None = None,
    admit_at: float = calibration.DEFAULT_ADMISSION_THRESHOLD,
) -> list[dict]:
    """Each model judge beside people (combined by ``rule``) and beside the automated check, per judge and game.

    One row per (judge, game) plus (judge, ``all``): ``logs`` it judged, ``with_people`` of them also judged by
    people, ``agree_orig`` / ``agree_fin`` (share of those logs with the same verdict) and ``kappa_people``
    (Fleiss' kappa of model and people on ``orig_cor``), the check's TP/FP/FN/TN and ``accuracy`` with the model's
    ``orig_cor`` as truth, and ``check_vs_people`` (the check's accuracy against people on the same logs); and the
    judge's calibration against people (`calibration_scores`), from ``confidence`` (`judge_confidence`; a log it
    does not cover counts as one sample: confidence 1).
    """
    combined_people = combine_rows(people, rule=rule).set_index("file") if len(people) else None
    known = (
        confidence.set_index(["judge", "file"])
        if confidence is not None and len(confidence)
        else pd.DataFrame(columns=["samples", "p_correct", "confidence"])
    )
    scores = []
    for judge, ratings in models.groupby("judge", sort=True):
        verdicts = combine_rows(ratings, rule=rule)  # one row per log: a judge rates a log once
        verdicts["samples"], verdicts["p_correct"], verdicts["confidence"] = 1, verdicts["orig_cor"].astype(float), 1.0
        for index, row in verdicts.iterrows():
            if (judge, row["file"]) in known.index:
                found = known.loc[(judge, row["file"])]
                if int(found["samples"]) >= 1:
                    verdicts.loc[index, ["samples", "p_correct", "confidence"]] = (
                        int(found["samples"]),
                        float(found["p_correct"]),
                        float(found["confidence"]),
                    )
        scopes = [("all", verdicts)] + list(verdicts.groupby("game", sort=True))
        for game, logs in scopes:
            counts = confusion_counts(logs["orig_cor"], logs["check_passed"])
            shared = logs[logs["file"].isin(combined_people.index)] if combined_people is not None else logs[:0]
            theirs = combined_people.loc[shared["file"]] if len(shared) else None
            people_orig = [] if theirs is None else theirs["orig_cor"].tolist()
            agree_fin, _ = verdict_agreement(shared["fin_cor"].tolist(), [] if theirs is None else theirs["fin_cor"])
            people_counts = confusion_counts(people_orig, shared["check_passed"])
            scored = calibration_scores(
                shared["orig_cor"].tolist(),
                people_orig,
                shared["p_correct"].tolist(),
                shared["confidence"].tolist(),
                admit_at=admit_at,
            )
            scores.append(
                {
                    "judge": judge,
                    "game": game,
                    "logs": len(logs),
                    "with_people": len(shared),
                    "samples": int(logs["samples"].max()) if len(logs) else 0,
                    "agree_orig": scored.pop("agree_orig"),
                    "agree_fin": agree_fin,
                    "kappa_people": scored.pop("kappa_people"),
                    **counts,
                    "accuracy": check_scores(counts)["accuracy"],
                    "check_vs_people": check_scores(people_counts)["accuracy"],
                    "correct_first": _ratio(int(logs["orig_cor"].sum()), len(logs)),
                    **scored,
                }
            )
    return scores


def looks_like(columns: Iterable[str]) -> bool:
    """A protocol form: all 12 protocol columns (an extra leading index column is allowed)."""
    return set(PROTOCOL_COLUMNS) <= {str(column).strip() for column in columns}


def format_figure(value: object) -> str:
    """A summary value as table text: floats with 3 decimals (NaN as n/a), dicts as ``key:count``, an interval
    (two floats) as ``[low, high]``.

    >>> format_figure([0.25, float("nan")]), format_figure(0.5)
    ('[0.250, n/a]', '0.500')
    """
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.3f}"
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, float) for v in value):
        return f"[{format_figure(value[0])}, {format_figure(value[1])}]"
    if isinstance(value, dict):
        return " ".join(f"{key}:{count}" for key, count in value.items())
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def file_contributions(paths: Sequence[str | Path], rows: pd.DataFrame) -> list[dict]:
    """Per input file: its name, the verdicts it contributed, and the logs left out and why. A model judge's
    protocol (``reasoning_judge_<model>.csv``) holds judged logs only; its calls file beside it
    (``reasoning_judge_calls_<model>.csv``) names the logs the judge could not judge (unparseable, failed call),
    which the report then lists as left out; without the calls file it says that it could not check."""
    found = []
    for path in map(Path, paths):
        entry = dict(file=path.name, verdicts=int((rows["source"] == path.name).sum()), left_out=[], note="")
        if path.name.startswith(JUDGE_PROTOCOL_PREFIX) and not path.name.startswith(JUDGE_CALLS_PREFIX):
            calls = path.with_name(JUDGE_CALLS_PREFIX + path.name[len(JUDGE_PROTOCOL_PREFIX) :])
            if calls.is_file():
                table = read_csv_any(calls, dtype=str, keep_default_na=False)
                failed = table[table["status"].isin(["unparseable", "error"])]
                entry["left_out"] = [
                    dict(file=row["file"], status=row["status"], problem=row["problem"]) for _, row in failed.iterrows()
                ]
            else:
                entry["note"] = f"{calls.name} is not beside it, so logs the judge could not judge are not listed"
        if not entry["verdicts"]:
            entry["note"] = "; ".join(filter(None, ["this file added no verdicts", entry["note"]]))
        found.append(entry)
    return found


def _contribution_lines(contributions: list[dict]) -> list[str]:
    lines = ["Files:"]
    for entry in contributions:
        lines.append(
            f"  {entry['file']}: {entry['verdicts']} verdicts" + (f"; {entry['note']}" if entry["note"] else "")
        )
        if entry["left_out"]:
            lines.append(f"    left out, {len(entry['left_out'])} logs the judge could not judge:")
            lines += [f"      {item['file']} ({item['status']}: {item['problem']})" for item in entry["left_out"]]
    return lines


def report(
    paths: Sequence[str | Path],
    *,
    as_json: bool = False,
    rule: str = "unanimity",
    admit_at: float = calibration.DEFAULT_ADMISSION_THRESHOLD,
) -> str:
    """The printed report of ``python -m backend report`` for protocol forms (one or many files): the figures, and
    which files contributed how many verdicts and which logs were left out (``file_contributions``); model judges
    beside people with their calibration and admission line (``admit_at``: the threshold of the admission line)."""
    calibration.admission(math.nan, admit_at)  # refuses a threshold outside [-1, 1] before any work
    rows = read_verdict_rows(paths)
    contributions = file_contributions(paths, rows)
    people, models = split_judges(rows)
    judged = people if len(people) else models  # a form of model judges alone: they are its judges
    summary = summarise(judged, rule=rule)
    beside = (
        model_judge_scores(people, models, rule=rule, confidence=judge_confidence(paths), admit_at=admit_at)
        if len(models) and len(people)
        else []
    )
    if as_json:
        groups = [jsonable(group) for group in summary]
        result = {"rule": rule, "groups": groups, "files": contributions, "interval_method": unit_bootstrap.METHOD}
        if beside:
            result["model_judges"] = [jsonable(group) for group in beside]
            result["admit_at"] = admit_at
        return json.dumps(result, indent=2)
    main_columns = ["model", "game", "logs", "ratings", *CONFUSION_CELLS, "accuracy", "precision", "recall"]
    more_columns = ["model", "game", "error_recall", "error_precision", "kappa_orig", "kappa_orig_interval"]
    more_columns += ["kappa_fin", "kappa_fin_interval"]
    more_columns += ["correct_first", "correct_final", "check_passed_final"]
    who = "people" if len(people) else "the model judges"
    lines = [
        f"Payoff-reasoning verdicts: {len(judged)} ratings of {judged['file'].nunique()} logs; judges combined by "
        f"{rule}.",
        f"Automated check (attempt 0 without failed queries) against {who} (positive = reasoning correct):",
        _table(summary, main_columns),
        "",
        "Error detection, agreement (Fleiss' kappa) and share judged correct:",
        _table(summary, more_columns),
        "",
        "Attempts and error types (tags summed over judges):",
        _table(summary, ["model", "game", "judges_per_log", "attempts", "error_types"]),
    ]
    if beside:
        agreement_columns = ["judge", "game", "logs", "with_people", "agree_orig", "agree_fin", "kappa_people"]
        check_columns = ["judge", "game", *CONFUSION_CELLS, "accuracy", "check_vs_people", "correct_first"]
        calibration_columns = ["judge", "game", "samples", "agree_orig_interval", "kappa_people_interval"]
        calibration_columns += ["brier", "brier_interval", "ece", "ece_interval"]
        lines += [
            "",
            f"Model judges ({len(models)} ratings of {models['file'].nunique()} logs) beside people (agreement with "
            "their combined verdict) and beside the automated check (scored against the model; check_vs_people: "
            "against people on the same logs):",
            _table(beside, agreement_columns),
            "",
            _table(beside, check_columns),
            "",
            "Calibration against people on the same logs (samples: judgements per log; confidence = share of "
            "samples agreeing with the judge's verdict; brier: share saying correct against people's verdict; "
            "ece: confidence against agreement with people, 10 bins):",
            _table(beside, calibration_columns),
            "",
            f"Admission (the judge stands in for people when the lower bound of kappa_people clears {admit_at:.2f}, "
            "--admit-at):",
            *[f"  {row['judge']}: {row['admission']['text']}" for row in beside if row["game"] == "all"],
        ]
    lines += ["", f"Intervals: {unit_bootstrap.METHOD}."]
    return "\n".join([*lines, "", *_contribution_lines(contributions)])


def _table(summary: list[dict], columns: list[str]) -> str:
    frame = pd.DataFrame([{column: format_figure(group[column]) for column in columns} for group in summary])
    return frame.to_string(index=False)
