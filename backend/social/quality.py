"""The quality per annotator of social_eval's exports, as the admin report and ``python -m backend report`` show it:
time per episode, gold (attention) episodes passed, and distance from the other annotators
(``backend.core.annotator_quality`` computes it; this module reads it from the exports and writes it out).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from backend.core import annotator_quality
from backend.core.csvio import truthy_cell
from backend.core.jsonable import jsonable

# The quality view flags episodes rated faster than this (seconds): the app's default ``quality_floor_s``, and the
# floor of ``python -m backend report`` (an export does not record a session's own floor).
QUALITY_FLOOR_S = 60.0
# One annotation of an app export, as the quality view reads it.
ANNOTATION_COLUMNS = ["annotator", "episode_id", "round", "is_gold", "seconds_spent", "attention_passed"]


def annotation_table(table: pd.DataFrame) -> pd.DataFrame:
    """One row per annotation of an app export (``ANNOTATION_COLUMNS``): the long export's first row of each
    (annotator, episode, round), the wide export's rows as they are; a column the export lacks is empty."""
    frame = pd.DataFrame(
        {
            column: table[column] if column in table else table.get("pk", np.nan) if column == "episode_id" else np.nan
            for column in ANNOTATION_COLUMNS
        }
    )
    frame["annotator"] = frame["annotator"].astype(str)
    frame["episode_id"] = frame["episode_id"].astype(str)
    return frame.drop_duplicates(subset=["annotator", "episode_id", "round"], keep="first").reset_index(drop=True)


def quality_items(annotations: pd.DataFrame) -> list[tuple[str, float | None, bool | None]]:
    """``backend.core.annotator_quality``'s items: per annotation (annotator, seconds or None, gold passed or None
    for a regular episode); a gold episode without a stored result counts as not passed.

    >>> frame = pd.DataFrame(dict(annotator=["a", "a"], is_gold=[0, "1"], seconds_spent=["12.5", ""],
    ...                           attention_passed=["", ""]))
    >>> quality_items(frame)
    [('a', 12.5, None), ('a', None, False)]
    """
    seconds = pd.to_numeric(annotations["seconds_spent"], errors="coerce")
    return [
        (
            str(annotator),
            None if math.isnan(spent) else float(spent),
            truthy_cell(passed) if truthy_cell(gold) else None,
        )
        for annotator, spent, gold, passed in zip(
            annotations["annotator"], seconds, annotations["is_gold"], annotations["attention_passed"], strict=True
        )
    ]


def quality_ratings(ratings: pd.DataFrame) -> list[tuple[str, tuple[str, int, str], float]]:
    """``backend.core.annotator_quality``'s ratings: (annotator, unit, rating) of the regular episodes of a ratings
    frame, one unit per (episode, agent, dimension)."""
    regular = ratings[~ratings["is_gold"].astype(bool)]
    return [
        (annotator, (episode_id, int(agent), dimension), float(rating))
        for annotator, episode_id, agent, dimension, rating in zip(
            regular["annotator"],
            regular["episode_id"],
            regular["agent"],
            regular["dimension"],
            regular["rating"],
            strict=True,
        )
    ]


def annotator_qualities(
    annotations: pd.DataFrame, ratings: pd.DataFrame, *, floor_s: float = QUALITY_FLOOR_S
) -> list[annotator_quality.AnnotatorQuality]:
    """The quality per annotator (sorted by annotator) of an app export's ``annotation_table`` and ratings frame:
    time per episode, gold episodes passed, and agreement with the others on regular (episode, agent, dimension)."""
    return annotator_quality.annotator_quality(quality_items(annotations), quality_ratings(ratings), floor_s=floor_s)


def quality_records(qualities: Iterable[annotator_quality.AnnotatorQuality]) -> list[dict[str, Any]]:
    """The quality per annotator as the report's JSON data: every figure of ``AnnotatorQuality`` (NaN as None) and
    ``flagged`` (an episode faster than the floor or a failed gold episode).

    >>> q = annotator_quality.AnnotatorQuality("ab", 2, 31.25, 0, 2, 1, 0.5, 4, 0.25, math.nan)
    >>> record = quality_records([q])[0]
    >>> record["median_seconds"], record["correlation"], record["flagged"]
    (31.25, None, True)
    """
    return [jsonable({**dataclasses.asdict(q), "flagged": annotator_quality.flagged(q)}) for q in qualities]


def quality_lines(records: Sequence[Mapping[str, Any]] | None, *, floor_s: float | None) -> list[str]:
    """The text report's quality view: one line per annotator of ``quality_records`` (none without records).

    >>> q = annotator_quality.AnnotatorQuality("ab", 2, 31.25, 1, 0, 0, math.nan, 4, 0.25, math.nan)
    >>> print("\\n".join(quality_lines(quality_records([q]), floor_s=60)))
    Quality per annotator (flagged *: an episode faster than 60 s or a failed gold episode):
     * ab: 2 episodes, median 31.2 s, 1 faster than the floor, gold –, 4 shared units, mean |own − others| 0.25, r –
    """
    if not records:
        return []
    lines = [f"Quality per annotator (flagged *: an episode faster than {floor_s:g} s or a failed gold episode):"]
    for row in annotator_quality.quality_rows(
        [annotator_quality.AnnotatorQuality(**quality_fields(r)) for r in records]
    ):
        lines.append(
            f" {'*' if row['flagged'] else ' '} {row['annotator']}: {row['n_items']} episodes, median "
            f"{row['median_seconds']} s, {row['fast_items']} faster than the floor, gold {row['gold']}, "
            f"{row['shared_units']} shared units, mean |own − others| {row['mean_abs_diff']}, r {row['correlation']}"
        )
    return lines


def quality_fields(record: Mapping[str, Any]) -> dict[str, Any]:
    """An ``AnnotatorQuality``'s fields from a JSON record (None back to NaN)."""
    names = [field.name for field in dataclasses.fields(annotator_quality.AnnotatorQuality)]
    return {name: math.nan if record[name] is None else record[name] for name in names}
