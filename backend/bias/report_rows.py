"""Reading bias-test exports for the report: the rows of several files, their respondent groups, the answered rows
with parsed numbers and the per-group counts (``backend.bias.report`` computes the metrics from them).

Groups: all people together, and each model in each answer mode (``"smollm [logprobs]"``); a respondent who
answered one test version twice in the files is refused; a reply whose words contradict its letter
(``backend.bias.contradictions``) is counted and left out unless ``include_contradictions``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from backend.bias.contradictions import is_contradiction
from backend.bias.export import ADDED_COLUMNS, ESCAPED_COLUMNS, EXPORT_COLUMNS
from backend.bias.items import ATTENTION_CHECK, CONTROL, TREATMENT

PEOPLE = "people"


def read_rows(paths: Sequence[str | Path]) -> pd.DataFrame:
    """The rows of one or more exports, as text (empty cells as empty strings), neutralised cells restored exactly.

    Files written before the identifier and answer columns (``ADDED_COLUMNS``) existed are read with those cells
    empty. The app's export gives confidence on the slider's scale (``confidence_max``, 100): read as a fraction. The
    model's text (``ESCAPED_COLUMNS``) is read back with its line breaks.
    """
    from backend.core.csvio import read_csv_any, unescape_text

    frames = []
    for path in paths:
        frame = read_csv_any(path, dtype=str, keep_default_na=False)
        for column in (*ADDED_COLUMNS, "model", "run", "option_probabilities", "attempts", "raw_reply"):  # app: none
            if column not in frame.columns:
                frame[column] = ""
        for column in ESCAPED_COLUMNS:  # multi-line model text, kept on one line by the export
            frame[column] = frame[column].map(unescape_text)
        if "confidence_max" in frame.columns:  # the app writes the slider's 0-100; the metrics read 0-1
            frame["confidence"] = [
                _fraction(value, top) for value, top in zip(frame["confidence"], frame["confidence_max"], strict=True)
            ]
        frames.append(frame)
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=EXPORT_COLUMNS)
    missing = [column for column in EXPORT_COLUMNS if column not in rows.columns]
    if missing:
        raise ValueError(f"The export lacks the columns {missing}; is it a bias_tests export?")
    return rows


def _fraction(value: str, top: str) -> str:
    """A confidence cell on a scale from 0 to ``top`` as text of a fraction in [0, 1] (unchanged when either cell is
    not a positive number: the metrics then read it as they would have).

    >>> _fraction("60", "100"), _fraction("0.6", ""), _fraction("", "100")
    ('0.6', '0.6', '')
    """
    number, scale = _cell_number(value), _cell_number(top)
    if math.isnan(number) or math.isnan(scale) or scale <= 0:
        return value
    return f"{number / scale:g}"


def _cell_number(text: Any) -> float:
    """An export cell as a float; NaN for an empty or non-numeric cell (an item file's numbers are checked by
    ``backend.bias.item_fields.number_field`` instead, which refuses them)."""
    try:
        return float(text) if str(text).strip() != "" else math.nan
    except ValueError:
        return math.nan


def _json_list(text: Any) -> list | None:
    if not isinstance(text, str) or not text.strip():
        return None
    value = json.loads(text)
    return value if isinstance(value, list) else None


def group_of(row: pd.Series) -> str:
    """People, or the model with its answer mode: ``"smollm [logprobs]"`` (a file without the mode: the model)."""
    if row["respondent_kind"] == "person":
        return PEOPLE
    mode = str(row.get("answer_mode", "") or "").strip()
    return f"{row['model'] or 'model'} [{mode}]" if mode else (row["model"] or "model")


def _refuse_repeated_answers(rows: pd.DataFrame) -> None:
    """A ``ValueError`` naming the first respondent who answered one test version twice (in one group)."""
    keys = ["group", "respondent_id", "item_id", "version"]
    repeated = rows[(rows["status"] == "answered") & rows.duplicated(keys, keep=False)]
    if len(repeated):
        first = repeated.iloc[0]
        raise ValueError(
            f"The respondent {first['respondent_id']!r} ({first['group']}) answered the test {first['item_id']!r} "
            f"({first['version']}) {int((repeated[keys] == first[keys]).all(axis=1).sum())} times in these files; "
            "the answers would be merged. Pass each run once, or give the runs different model names."
        )


def prepare(
    rows: pd.DataFrame, *, exclude_inattentive: bool = False, include_contradictions: bool = False
) -> tuple[pd.DataFrame, dict[str, dict]]:
    """Answered rows with parsed numbers, and per-group counts (respondents, attention, unparseable,
    contradictions); rows whose reply contradicts itself are left out unless ``include_contradictions``."""
    rows = rows.copy()
    rows["group"] = rows.apply(group_of, axis=1) if len(rows) else pd.Series(dtype=str)
    _refuse_repeated_answers(rows)
    contradicted = rows["problem"].map(is_contradiction) & (rows["status"] == "answered")
    checks = rows[(rows["bias"] == ATTENTION_CHECK) & (rows["status"] == "answered")]
    failed = set(
        checks.loc[checks["is_correct"].astype(str) != "1", ["group", "respondent_id"]].itertuples(index=False)
    )
    counts: dict[str, dict] = {}
    for group, part in rows.groupby("group", sort=False):
        group_checks = checks[checks["group"] == group]
        counts[group] = {
            "respondents": int(part["respondent_id"].nunique()),
            "rows": len(part),
            "unparseable": int((part["status"] == "unparseable").sum()),
            "errors": int((part["status"] == "error").sum()),
            "contradictions": int(contradicted[part.index].sum()),
            "attention_checks": len(group_checks),
            "attention_passed": int((group_checks["is_correct"].astype(str) == "1").sum()),
        }
    if exclude_inattentive and failed:
        keys = list(zip(rows["group"], rows["respondent_id"], strict=True))
        rows = rows[[key not in failed for key in keys]]
    usable = (rows["status"] == "answered") & (include_contradictions | ~contradicted[rows.index])
    answered = rows[usable & (rows["bias"] != ATTENTION_CHECK)].copy()
    for column in ("answer", "confidence", "anchor", "lambda", "pro_selected", "con_selected", "n_arguments"):
        answered[column] = answered[column].map(_cell_number)
    answered["options"] = answered["options"].map(_json_list)
    answered["option_probabilities"] = answered["option_probabilities"].map(_json_list)
    return answered, counts


def ordered_groups(groups: Iterable[str]) -> list[str]:
    unique = list(dict.fromkeys(groups))
    return ([PEOPLE] if PEOPLE in unique else []) + sorted(group for group in unique if group != PEOPLE)


def paired_answers(answered: pd.DataFrame, bias: str) -> pd.DataFrame:
    """One row per (group, respondent, item) with the control (``c_``) and treatment (``t_``) answers side by side."""
    part = answered[answered["bias"] == bias]
    keys = ["group", "respondent_id", "item_id"]
    control = part[part["version"] == CONTROL].drop_duplicates(keys, keep="last").set_index(keys).add_prefix("c_")
    treatment = part[part["version"] == TREATMENT].drop_duplicates(keys, keep="last").set_index(keys).add_prefix("t_")
    return control.join(treatment, how="inner").reset_index()
