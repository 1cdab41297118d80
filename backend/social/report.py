"""Metrics of seven-dimension social-evaluation ratings: the ``social_eval`` export and the Sotopia-π release.

``python -m backend report FILE...`` accepts the app's long export (``custom_export_ratings_long``, columns
``backend.social.cells.EXPORT_COLUMNS``), its wide export (``custom_export_ratings_wide``: one row per annotation,
Sotopia's column names plus the annotator and ``is_gold``) or the released ``*_final.csv`` tables, optionally followed by model-rating JSON
files (``complete_gpt_score.json``: model ratings; ``complete_pk_agent_pairs.json``: which agent is under test).
Both app exports give the same figures; only the long one carries the episodes' model ratings.

For every group (model file or episode group), scope (agent 1, agent 2, both agents, the agent under test where
known) and dimension, plus the overall score (mean of the dimensions of one annotation), it reports:

* ``mean``/``sd``: mean human rating, averaging the annotators of each (episode, agent) first, as the Sotopia
  papers do; ``sd`` is the sample SD of those per-item means;
* ``alpha``: Krippendorff's alpha (interval) over (episode, agent) units; ``exact``/``within_1``: pairwise
  agreement. Agreement uses one rating per annotator and unit (the first, if someone rated an episode twice);
* ``pearson``/``spearman``/``diff``: per-item human mean against the model's rating, and mean(human - model),
  wherever model ratings exist; ``mae``: mean |human - model| (the model's error, in rating points);
* ``spread_rho``: where the model annotator rated each unit k times (``--samples``; its CSV beside the episode file),
  Spearman's rho between the model's spread (SD of its k ratings) and its absolute error: positive when the model is
  less sure where it is further from people.

**Intervals** (`backend.core.unit_bootstrap`): ``alpha``, ``pearson``, ``spearman``, ``diff`` and ``mae`` each have
a 95 % percentile interval (``<figure>_low``, ``<figure>_high``) from 1000 resamples of the episodes (an episode with
all its agents and ratings), seed 0: the same files give the same intervals.

**Admission** (``report(admit_at=...)``, ``python -m backend report --admit-at``, default
`backend.core.calibration.DEFAULT_ADMISSION_THRESHOLD`): per group and dimension (both agents), the model's ratings
stand in for people's when the lower bound of Spearman's rho between them clears the threshold.

Gold (attention) episodes are left out of these figures and summarised separately. The app exports also give the
quality per annotator (``quality``: time per episode, gold episodes passed, distance from the others; see
``backend.core.annotator_quality``), the same view the admin report shows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from backend.core import agreement, calibration, unit_bootstrap
from backend.core.csvio import read_csv_any, truthy_cell
from backend.core.jsonable import jsonable
from backend.social import model_scores, sotopia_release
from backend.social.episodes import parse_episode_data
from backend.social.quality import (
    QUALITY_FLOOR_S,
    annotation_table,
    annotator_qualities,
    quality_lines,
    quality_records,
)

# The ratings frame every metric here works on.
RATING_COLUMNS = [
    "group",
    "episode_id",
    "agent",
    "dimension",
    "rating",
    "annotator",
    "annotation",
    "model_rating",
    "is_gold",
    "is_focus",
]
OVERALL = "overall"
SCOPES = ("agent 1", "agent 2", "both", "focus")


LONG_EXPORT_REQUIRED = frozenset({"episode_id", "agent_index", "dimension", "rating", "annotator"})
WIDE_EXPORT_REQUIRED = frozenset({"session_code", "annotator", "is_gold"})  # and episode_id (pk before 2026-11)


def wide_dimensions(columns: Iterable[str]) -> list[str]:
    """The dimensions of a wide table (Sotopia's layout): every ``<d>_1`` that has its ``<d>_reasoning_1``.

    >>> wide_dimensions(["pk", "goal_1", "goal_reasoning_1", "goal_2", "goal_reasoning_2", "round"])
    ['goal']
    """
    names = list(columns)
    return [name[:-2] for name in names if name.endswith("_1") and f"{name[:-2]}_reasoning_1" in names]


def export_kind(columns: Iterable[str]) -> str | None:
    """Which social-evaluation table a CSV header belongs to: ``long`` (``custom_export_ratings_long``), ``wide``
    (``custom_export_ratings_wide``), ``release`` (a released Sotopia ``*_final.csv``) or None.

    The wide export uses Sotopia's rating columns but also names the annotator and marks gold episodes, which the
    release does not; it is read by its own columns, never as a release table (that grouped it by the empty
    ``prolific_id`` and counted gold episodes as regular ones).

    >>> export_kind(["session_code", "episode_id", "agent_index", "dimension", "rating", "annotator"])
    'long'
    >>> export_kind(["session_code", "episode_id", "is_gold", "annotator", "goal_1", "goal_reasoning_1"])
    'wide'
    >>> export_kind(["session_code", "pk", "is_gold", "prolific_id", "annotator", "goal_1", "goal_reasoning_1"])
    'wide'
    >>> export_kind(["", "model", "pk", "data", "prolific_id", "believability_1", "goal_2"])
    'release'
    >>> export_kind(["participant.code", "player.offer"]) is None
    True
    """
    names = [str(column).strip() for column in columns]
    if set(names) >= LONG_EXPORT_REQUIRED:
        return "long"
    if set(names) >= WIDE_EXPORT_REQUIRED and {"episode_id", "pk"} & set(names):
        return "wide"
    if sotopia_release.looks_like_release(names):
        return "release"
    return None


def looks_like(columns: Iterable[str]) -> bool:
    """Whether a CSV header is a social_eval export (long or wide) or a released Sotopia annotation table.

    >>> looks_like(["session_code", "episode_id", "agent_index", "dimension", "rating", "annotator"])
    True
    >>> looks_like(["pk", "prolific_id", "believability_1", "goal_2"])
    True
    >>> looks_like(["participant.code", "player.offer"])
    False
    """
    return export_kind(columns) is not None


def ratings_from_export(table: pd.DataFrame) -> pd.DataFrame:
    """The ratings frame of a social_eval long export (rows without a rating are dropped)."""
    missing = [column for column in LONG_EXPORT_REQUIRED if column not in table]
    if missing:
        raise ValueError(f"The export lacks the columns {sorted(missing)}.")
    table = table.loc[pd.to_numeric(table["rating"], errors="coerce").notna()]
    group = table["episode_group"].fillna("").astype(str) if "episode_group" in table else ""
    frame = pd.DataFrame(
        dict(
            group=group,
            episode_id=table["episode_id"].astype(str),
            agent=pd.to_numeric(table["agent_index"]).astype(int),
            dimension=table["dimension"].astype(str),
            rating=pd.to_numeric(table["rating"]).astype(float),
            annotator=table["annotator"].astype(str),
            model_rating=pd.to_numeric(table.get("model_rating", np.nan), errors="coerce"),
            is_gold=table.get("is_gold", False),
        )
    )
    frame["is_gold"] = frame["is_gold"].map(truthy_cell).astype(bool)
    # Someone never rates an episode twice in the app, so annotator + episode identifies one annotation.
    frame["annotation"] = frame["annotator"] + "|" + frame["episode_id"]
    frame["is_focus"] = pd.array([pd.NA] * len(frame), dtype="boolean")
    return frame.reset_index(drop=True)[RATING_COLUMNS]


def ratings_from_wide_export(table: pd.DataFrame) -> pd.DataFrame:
    """The ratings frame of a social_eval wide export: one row per annotation becomes one row per rating.

    Annotators are the ``annotator`` column (the participant code), gold episodes keep ``is_gold``; a session whose
    rubric lacks a dimension leaves its cells empty, and empty cells are no ratings.
    """
    missing = sorted(WIDE_EXPORT_REQUIRED - set(table.columns))
    dimensions = wide_dimensions(table.columns)
    if missing or not dimensions:
        raise ValueError(
            f"The wide export lacks the columns {missing or ['<dimension>_1', '<dimension>_reasoning_1']}."
        )
    group = table["episode_group"].fillna("").astype(str) if "episode_group" in table else ""
    frames = []
    for agent in (1, 2):
        for dimension in dimensions:
            column = f"{dimension}_{agent}"
            if column not in table:
                continue
            frames.append(
                pd.DataFrame(
                    dict(
                        group=group,
                        episode_id=table["episode_id" if "episode_id" in table else "pk"].astype(str),
                        agent=agent,
                        dimension=dimension,
                        rating=pd.to_numeric(table[column], errors="coerce"),
                        annotator=table["annotator"].astype(str),
                        model_rating=np.nan,
                        is_gold=table["is_gold"].map(truthy_cell).astype(bool),
                    )
                )
            )
    frame = pd.concat(frames, ignore_index=True)
    frame = frame.loc[frame["rating"].notna()].copy()
    frame["annotation"] = frame["annotator"] + "|" + frame["episode_id"]
    frame["is_focus"] = pd.array([pd.NA] * len(frame), dtype="boolean")
    return frame.reset_index(drop=True)[RATING_COLUMNS]


def _with_overall(ratings: pd.DataFrame, dimensions: Sequence[str]) -> pd.DataFrame:
    """Append ``overall`` rows: per annotation and agent, the mean of its ratings when all dimensions are there."""
    rows = ratings[ratings["dimension"].isin(dimensions)]
    keys = ["group", "episode_id", "agent", "annotator", "annotation", "is_gold"]
    grouped = rows.groupby(keys, dropna=False, sort=False)
    complete = grouped["dimension"].transform("nunique") == len(dimensions)
    rows = rows[complete]
    if rows.empty:
        return ratings
    grouped = rows.groupby(keys, dropna=False, sort=False)
    overall = grouped.agg(rating=("rating", "mean"), is_focus=("is_focus", "first")).reset_index()
    model = grouped["model_rating"].agg(lambda values: values.mean() if values.notna().all() else np.nan)
    overall["model_rating"] = model.to_numpy()
    overall["dimension"] = OVERALL
    return pd.concat([ratings, overall[RATING_COLUMNS]], ignore_index=True)


def _scope_rows(rows: pd.DataFrame, scope: str) -> pd.DataFrame:
    if scope == "agent 1":
        return rows[rows["agent"] == 1]
    if scope == "agent 2":
        return rows[rows["agent"] == 2]
    if scope == "focus":
        return rows[rows["is_focus"].fillna(False).astype(bool)]
    return rows


def dimension_statistics(
    rows: pd.DataFrame, *, seed: int = unit_bootstrap.DEFAULT_SEED, intervals: bool = True
) -> dict[str, float]:
    """All figures for the rows of one group, scope and dimension, with their intervals over episodes (see the
    module docstring); ``intervals=False`` leaves the bootstrap out (the live admin page, which must stay fast)."""
    units = rows.groupby(["episode_id", "agent"], sort=True)
    item_mean = units["rating"].mean()
    item_model = units["model_rating"].first()
    one_per_annotator = rows.drop_duplicates(subset=["episode_id", "agent", "annotator"], keep="first")
    values = [group["rating"].to_numpy() for _, group in one_per_annotator.groupby(["episode_id", "agent"])]
    comparison = agreement.compare_with_model(item_mean.to_numpy(), item_model.to_numpy())
    has_model = item_model.notna()
    human, model = item_mean.to_numpy(), item_model.to_numpy(dtype=float)
    error = np.abs(human - model)
    spread = (
        units["model_spread"].first().to_numpy(dtype=float) if "model_spread" in rows else np.full(len(human), np.nan)
    )
    bounds = (
        model_scores.interval_bounds(values, human, model, item_mean.index.get_level_values(0).astype(str), seed=seed)
        if intervals
        else {}
    )
    return dict(
        n_episodes=int(rows["episode_id"].nunique()),
        n_items=int(len(item_mean)),
        n_ratings=int(len(rows)),
        n_paired_items=int(sum(len(v) >= 2 for v in values)),
        mean=float(item_mean.mean()),
        sd=float(item_mean.std(ddof=1)) if len(item_mean) > 1 else math.nan,
        alpha=agreement.krippendorff_alpha(values, level="interval"),
        exact=agreement.pairwise_agreement(values, tolerance=0),
        within_1=agreement.pairwise_agreement(values, tolerance=1),
        n_model=comparison["n"],
        model_mean=float(item_model[has_model].mean()) if has_model.any() else math.nan,
        pearson=comparison["pearson"],
        spearman=comparison["spearman"],
        diff=comparison["mean_difference"],
        mae=float(np.nanmean(error)) if has_model.any() else math.nan,
        spread_rho=model_scores.spread_against_error(spread, error),
        **bounds,
    )


def summarise(
    ratings: pd.DataFrame,
    *,
    dimensions: Sequence[str] | None = None,
    pooled_group: str | None = "(all)",
    include_gold: bool = False,
    intervals: bool = True,
) -> pd.DataFrame:
    """One row of ``dimension_statistics`` per (group, scope, dimension), overall score included (``intervals``: with
    the bootstrap intervals, as the report and the paper tables show them).

    ``dimensions`` defaults to those present, in order of appearance; ``pooled_group`` adds a group pooling every
    group when there is more than one (None: do not).
    """
    missing = [column for column in RATING_COLUMNS if column not in ratings]
    if missing:
        raise ValueError(
            f"ratings lacks the columns {missing}; build it with ratings_from_export or the release loader."
        )
    rows = ratings if include_gold else ratings[~ratings["is_gold"].astype(bool)]
    if rows.empty:
        raise ValueError("There are no ratings to summarise (gold episodes are excluded).")
    dimensions = list(dimensions or dict.fromkeys(rows["dimension"]))
    rows = _with_overall(rows[rows["dimension"].isin(dimensions)], dimensions)
    groups = list(dict.fromkeys(rows["group"]))
    partitions = [(group, rows[rows["group"] == group]) for group in groups]
    if pooled_group is not None and len(groups) > 1:
        partitions.append((pooled_group, rows))
    records = []
    for group, group_rows in partitions:
        for scope in SCOPES:
            scoped = _scope_rows(group_rows, scope)
            for dimension in [*dimensions, OVERALL]:
                subset = scoped[scoped["dimension"] == dimension]
                if subset.empty:
                    continue
                figures = dimension_statistics(subset, intervals=intervals)
                records.append(dict(group=group, scope=scope, dimension=dimension, **figures))
    return pd.DataFrame.from_records(records)


def attention_summary(table: pd.DataFrame) -> dict[str, float] | None:
    """Share of annotators whose gold episodes were all within tolerance (from an export's attention column)."""
    if "attention_passed" not in table or "is_gold" not in table:
        return None
    gold = table[table["is_gold"].map(truthy_cell)]
    if gold.empty:
        return None
    per_annotator = gold.groupby("annotator")["attention_passed"].agg(lambda values: all(map(truthy_cell, values)))
    return dict(n_annotators=int(len(per_annotator)), share_passed=float(per_annotator.mean()))


def _decoded(path: Path) -> Any:
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def _is_episode_file(data: Any) -> bool:
    """Our episode format (one episode, a list of them, or ``{"episodes": [...]}``), told by its ``agents`` list."""
    if isinstance(data, dict) and isinstance(data.get("episodes"), list):
        data = data["episodes"]
    items = data if isinstance(data, list) else [data]
    return bool(items) and all(isinstance(item, dict) and isinstance(item.get("agents"), list) for item in items)


def episode_model_scores(data: Any, *, source: str) -> dict[str, list[dict[str, float]]]:
    """The model ratings of decoded episodes in our format: ``{episode_id: [agent 1 ratings, agent 2 ratings]}``
    (episodes without model ratings left out), the layout ``attach_model_scores`` fills ``model_rating`` from."""
    episodes = parse_episode_data(data, source=source)
    return {
        episode.id: [dict(agent.model_ratings) for agent in episode.agents]
        for episode in episodes
        if episode.has_model_ratings
    }


def load_ratings(paths: Sequence[str | Path]) -> tuple[pd.DataFrame, dict]:
    """Read exports / release tables and optional model-rating JSON files into one ratings frame.

    Model ratings come from an episode file in our format whose agents carry ``model_ratings`` (as the model
    annotator ``backend.social.annotator`` writes it, or as a study was loaded) or from Sotopia's
    ``complete_gpt_score.json`` layout; Sotopia's ``complete_pk_agent_pairs.json`` names the focus agents."""
    frames, release_tables, attention_tables, annotation_tables = [], [], [], []
    notes = dict(files=[], model_ratings=None, attention=None, contributions=[], quality=None, quality_floor_s=None)
    scores, focus, spreads = None, None, {}
    for path in map(Path, paths):
        notes["files"].append(path.name)
        if path.suffix in (".json", ".jsonl"):
            data = _decoded(path)
            if _is_episode_file(data):  # an episode file whose agents carry model_ratings (a model annotator's)
                found = episode_model_scores(data, source=path.name)
                spreads.update(model_scores.model_spreads(path))
            elif isinstance(data, list):
                focus = sotopia_release.read_focus_agents(path)
                notes["contributions"].append(dict(file=path.name, what="focus agents", units=len(focus), note=""))
                continue
            else:
                found = sotopia_release.read_gpt4_scores(path)
            scores, notes["model_ratings"] = {**(scores or {}), **found}, path.name
            count = sum(len(agent) for agents in found.values() for agent in agents)
            note = "" if count else "this model file added no ratings (no agent carries model ratings)"
            notes["contributions"].append(dict(file=path.name, what="model ratings", units=count, note=note))
            continue
        kind = export_kind(read_csv_any(path, nrows=0).columns)
        if kind == "release":
            release_tables.append(path)
        elif kind in ("long", "wide"):
            table = read_csv_any(path, dtype={"episode_id": str, "pk": str, "annotator": str}, keep_default_na=False)
            table = table.replace("", np.nan)
            frames.append(ratings_from_export(table) if kind == "long" else ratings_from_wide_export(table))
            notes["contributions"].append(dict(file=path.name, what="ratings", units=len(frames[-1]), note=""))
            if {"annotator", "is_gold", "attention_passed"} <= set(table.columns):
                attention_tables.append(table[["annotator", "is_gold", "attention_passed"]])
            annotation_tables.append(annotation_table(table))
        else:
            raise ValueError(f"{path.name} is neither a social_eval export nor a Sotopia annotation table.")
    if attention_tables:
        notes["attention"] = attention_summary(pd.concat(attention_tables, ignore_index=True))
    if annotation_tables:  # the app exports' annotators (a release table records no time or gold episodes)
        annotations, exported = pd.concat(annotation_tables), pd.concat(frames, ignore_index=True)
        notes["quality"] = quality_records(annotator_qualities(annotations, exported, floor_s=QUALITY_FLOOR_S))
        notes["quality_floor_s"] = QUALITY_FLOOR_S
    if release_tables:
        release = sotopia_release.ratings_from_release(release_tables)
        notes["contributions"].append(
            dict(file=", ".join(p.name for p in release_tables), what="ratings", units=len(release), note="")
        )
        release["annotation"] = release["group"] + ":" + release["row"].astype(str)
        frames.append(release[RATING_COLUMNS])
    if not frames:
        raise ValueError("No rating table among the files: give at least one CSV export or annotation table.")
    ratings = pd.concat(frames, ignore_index=True)
    if scores is not None:
        ratings = sotopia_release.attach_model_scores(ratings, scores)
    if focus is not None:
        ratings = sotopia_release.attach_focus(ratings, focus)
    if spreads:
        keys = zip(ratings["episode_id"], ratings["agent"], ratings["dimension"], strict=True)
        ratings["model_spread"] = [spreads.get((str(e), int(a), str(d)), np.nan) for e, a, d in keys]
        ratings.loc[ratings["model_rating"].isna(), "model_spread"] = np.nan
        notes["model_spread"] = True
    return ratings, notes


def report(
    paths: Sequence[str | Path],
    *,
    as_json: bool = False,
    admit_at: float = calibration.DEFAULT_ADMISSION_THRESHOLD,
) -> str:
    """The printed report of ``python -m backend report`` for social-evaluation files; ``admit_at``: the threshold
    of the model ratings' admission line."""
    calibration.admission(math.nan, admit_at)  # refuses a threshold outside [-1, 1] before any work
    ratings, notes = load_ratings(paths)
    table = summarise(ratings)
    admitted = model_scores.admissions(table, admit_at)
    regular, gold = ratings[~ratings["is_gold"]], ratings[ratings["is_gold"]]
    header = dict(
        annotations=int(regular["annotation"].nunique()),
        episodes=int(regular["episode_id"].nunique()),
        annotators=int(regular["annotator"].nunique()),
        gold_annotations=int(gold["annotation"].nunique()),
        gold_episodes=int(gold["episode_id"].nunique()),
        **notes,
    )
    if as_json:
        records = [jsonable(record) for record in table.to_dict("records")]
        extra = dict(interval_method=unit_bootstrap.METHOD, admit_at=admit_at, admission=jsonable(admitted))
        return json.dumps(dict(header, **extra, summary=records), indent=2, ensure_ascii=False)
    lines = [
        f"Social evaluation: {header['annotations']} annotations of {header['episodes']} episodes "
        f"by {header['annotators']} annotators ({', '.join(notes['files'])}); gold (attention) episodes apart: "
        f"{header['gold_annotations']} annotations of {header['gold_episodes']} episodes",
        "mean = mean over items (episode x agent) of the annotators' mean; alpha = Krippendorff interval; "
        "exact / within_1 = pairwise agreement; pearson, spearman, diff (human - model), mae (mean |human - model|) "
        "where model ratings exist; spread_rho = Spearman of the model's spread over k samples against its error. "
        f"[low, high]: {unit_bootstrap.METHOD}.",
    ]
    lines += ["Files:"] + [
        f"  {item['file']}: {item['units']} {item['what']}" + (f"; {item['note']}" if item["note"] else "")
        for item in notes["contributions"]
    ]
    if notes["attention"]:
        attention = notes["attention"]
        lines.append(
            f"Attention episodes: {attention['share_passed']:.0%} of {attention['n_annotators']} annotators "
            "within tolerance on every gold rating."
        )
    lines += quality_lines(notes["quality"], floor_s=notes["quality_floor_s"])
    columns = ["dimension", "n_items", "n_ratings", "mean", "sd", "alpha", "alpha_ci", "exact", "within_1"]
    model_columns = ["dimension", "n_model", "model_mean", "pearson", "pearson_ci", "spearman", "spearman_ci"]
    model_columns += ["diff", "diff_ci", "mae", "mae_ci"]
    for (group, scope), rows in table.groupby(["group", "scope"], sort=False):
        rows = rows.copy()
        for key in ("alpha", "pearson", "spearman", "diff", "mae"):
            rows[f"{key}_ci"] = model_scores.interval_text(rows, key)
        lines += ["", f"== {group} / {scope} ({int(rows['n_episodes'].max())} episodes) =="]
        lines.append(rows[columns].to_string(index=False, float_format=lambda value: f"{value:.2f}", na_rep="-"))
        if rows["n_model"].sum() > 0:
            shown = model_columns + (["spread_rho"] if rows["spread_rho"].notna().any() else [])
            lines.append(rows[shown].to_string(index=False, float_format=lambda value: f"{value:.2f}", na_rep="-"))
    if admitted:
        lines += [
            "",
            f"Admission (the model's ratings stand in for people's where the lower bound of Spearman's rho clears "
            f"{admit_at:.2f}, --admit-at; both agents):",
            *[f"  {item['group']} / {item['dimension']}: {item['text']}" for item in admitted],
        ]
    return "\n".join(lines)


def coverage_counts(done_per_item: Mapping[str, int], *, per_item: int) -> dict[int, int]:
    """How many items have 0, 1, ..., ``per_item`` finished ratings (more is counted as ``per_item``).

    >>> coverage_counts({"a": 2, "b": 1, "c": 0, "d": 2}, per_item=2)
    {0: 1, 1: 1, 2: 2}
    """
    if per_item < 1:
        raise ValueError(f"per_item must be at least 1, got {per_item}.")
    counts = dict.fromkeys(range(per_item + 1), 0)
    for done in done_per_item.values():
        counts[min(int(done), per_item)] += 1
    return counts
