"""`python -m backend report dond_games.csv`: hand-computed figures, debiasing, bootstrap, CLI and JSON."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from backend import __main__ as cli
from backend import dond_report
from backend.dond_export import DOND_EVENTS_COLUMNS, DOND_GAMES_COLUMNS


def game(
    cell,
    outcome,
    main_score=None,
    *,
    mode="semi",
    language="en",
    model="m",
    mode_score=None,
    pareto=None,
    points=(None, None),
):
    row = dict.fromkeys(DOND_GAMES_COLUMNS, "")
    row.update(
        game_id=f"g{id(object())}",
        mode=mode,
        language=language,
        model=model,
        cell=cell,
        outcome=outcome,
        values_a="[1]",
        aborted=int(outcome == "aborted"),
        success=int(outcome == "success"),
        lose=int(outcome == "lose"),
        main_score="" if main_score is None else main_score,
        mode_score=""
        if mode_score is None and main_score is None
        else (main_score if mode_score is None else mode_score),
        pareto_optimal="" if pareto is None else int(pareto),
        points_focal="" if points[0] is None else points[0],
        points_opponent="" if points[1] is None else points[1],
    )
    return row


GAMES = [
    game(1, "success", 100.0, pareto=True, points=(6, 4)),
    game(1, "success", 80.0, pareto=False, points=(8, 1)),
    game(2, "lose", 0.0, pareto=False, points=(0, 0)),
    game(2, "aborted"),
    game(2, "unfinished"),  # left out
    game(1, "success", 50.0, mode="coop", model="other", mode_score=75.0, pareto=False, points=(5, 5)),
]


def write_csv(path, rows, delimiter=","):
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=DOND_GAMES_COLUMNS, delimiter=delimiter)
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_looks_like_recognises_only_the_games_export():
    assert dond_report.looks_like(DOND_GAMES_COLUMNS)
    assert not dond_report.looks_like(DOND_EVENTS_COLUMNS)
    assert cli._find_reporter(DOND_GAMES_COLUMNS) is dond_report


def test_hand_computed_figures(tmp_path):
    rows = json.loads(dond_report.report([write_csv(tmp_path / "g.csv", GAMES)], as_json=True))
    semi = next(r for r in rows if r["mode"] == "semi")
    assert semi["games"] == 4 and semi["cells"] == ["1", "2"]
    assert semi["aborted_rate"] == 0.25 and semi["lose_rate"] == 0.25 and semi["success_rate"] == 0.5
    assert semi["pareto_optimal_rate"] == pytest.approx(1 / 3)
    assert semi["main_score"] == pytest.approx(60.0)  # (100 + 80 + 0) / 3: the aborted game has no score
    assert semi["main_score_debiased"] == pytest.approx(45.0)  # (90 + 0) / 2
    assert semi["aborted_rate_debiased"] == pytest.approx(0.25)  # (0 + 0.5) / 2
    assert semi["points_focal"] == pytest.approx(14 / 3) and semi["points_opponent"] == pytest.approx(5 / 3)
    assert semi["benchmark_score"] == pytest.approx(0.75 * 60.0)
    assert semi["benchmark_score_debiased"] == pytest.approx(0.75 * 45.0)
    coop = next(r for r in rows if r["mode"] == "coop")
    assert coop["model"] == "other" and coop["main_score"] == 50.0 and coop["mode_score"] == 75.0
    assert coop["benchmark_score"] == 75.0


def test_intervals_contain_the_mean_and_are_reproducible(tmp_path):
    rows = json.loads(dond_report.report([write_csv(tmp_path / "g.csv", GAMES)], as_json=True))
    semi = next(r for r in rows if r["mode"] == "semi")
    low, high = semi["main_score_ci"]
    assert low <= semi["main_score"] <= high and low >= 0 and high <= 100
    assert rows == json.loads(dond_report.report([tmp_path / "g.csv"], as_json=True))


def test_stratified_bootstrap_keeps_every_cell():
    values = np.array([100.0] * 30 + [0.0] * 3)
    cells = np.array([1] * 30 + [2] * 3)
    low, high = dond_report.bootstrap_interval(values, cells=cells)
    assert low == high == 50.0  # every resample has cell 1 at 100 and cell 2 at 0
    plain_low, plain_high = dond_report.bootstrap_interval(values)
    assert plain_low < plain_high and plain_low > 70


def test_bootstrap_matches_the_normal_approximation_for_a_large_sample():
    rng = np.random.default_rng(1)
    values = rng.uniform(0, 100, size=400)
    low, high = dond_report.bootstrap_interval(values, n_boot=4000)
    half_width = 1.96 * values.std(ddof=1) / math.sqrt(values.size)
    assert (high - low) / 2 == pytest.approx(half_width, rel=0.1)


def test_cli_prints_a_table_and_json(tmp_path, capsys):
    path = write_csv(tmp_path / "dond_games.csv", GAMES, delimiter=";")
    assert cli.main(["report", str(path)]) == 0
    text = capsys.readouterr().out
    assert "main score [95% CI]" in text and "60.0" in text and "45.0" in text and "semi" in text
    assert cli.main(["report", str(path), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2


def test_report_of_no_finished_games(tmp_path):
    path = write_csv(tmp_path / "g.csv", [game(1, "unfinished")])
    assert "No finished" in dond_report.report([path])
    assert json.loads(dond_report.report([path], as_json=True)) == []


def test_summarise_rejects_other_frames():
    import pandas as pd

    with pytest.raises(ValueError, match="dond_games"):
        dond_report.summarise(pd.DataFrame({"a": [1]}))
