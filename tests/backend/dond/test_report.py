"""`python -m backend report dond_games.csv`: hand-computed figures, debiasing, bootstrap, CLI and JSON."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pandas as pd
import pytest

from backend import __main__ as cli
from backend.core import stats
from backend.dond import report as dond_report
from backend.dond.export import DOND_EVENTS_COLUMNS, DOND_GAMES_COLUMNS
from backend.dond.protocol import PLAYER_METRICS


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
    **columns,
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
    row.update(columns)
    return row


GAMES = [
    game(1, "success", 100.0, pareto=True, points=(6, 4)),
    game(1, "success", 80.0, pareto=False, points=(8, 1)),
    game(2, "lose", 0.0, pareto=False, points=(0, 0)),
    game(2, "aborted"),
    game(2, "unfinished"),  # left out
    game(1, "success", 50.0, mode="coop", model="other", mode_score=75.0, pareto=False, points=(5, 5)),
]


def write_csv(path, rows, delimiter=",", columns=DOND_GAMES_COLUMNS):
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, delimiter=delimiter, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_looks_like_recognises_only_the_games_export():
    assert dond_report.looks_like(DOND_GAMES_COLUMNS)
    assert not dond_report.looks_like(DOND_EVENTS_COLUMNS)
    assert cli.find_reporter(DOND_GAMES_COLUMNS) is dond_report


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


def main_score_interval(values, *, cells=None, n_boot=dond_report.N_BOOT):
    """The interval the report gives the main score (``backend.core.stats``, as ``dond_report.summarise`` calls it)."""
    replicates = stats.bootstrap_replicates(values, cells=cells, n_boot=n_boot, seed=0)
    return stats.percentile_interval(replicates, confidence=0.95)


def test_stratified_bootstrap_keeps_every_cell():
    values = np.array([100.0] * 30 + [0.0] * 3)
    cells = np.array([1] * 30 + [2] * 3)
    low, high = main_score_interval(values, cells=cells)
    assert low == high == 50.0  # every resample has cell 1 at 100 and cell 2 at 0
    plain_low, plain_high = main_score_interval(values)
    assert plain_low < plain_high and plain_low > 70


def test_bootstrap_matches_the_normal_approximation_for_a_large_sample():
    rng = np.random.default_rng(1)
    values = rng.uniform(0, 100, size=400)
    low, high = main_score_interval(values, n_boot=4000)
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
    with pytest.raises(ValueError, match="dond_games"):
        dond_report.summarise(pd.DataFrame({"a": [1]}))


# LLM agency. Against a person the LLM plays B in cells 1 (A opens: B second) and 2 (B opens: B first), A in cells
# 3 (B opens: A second) and 4 (A opens: A first).
OPENER = {1: "A", 2: "B", 3: "B", 4: "A"}


def llm_game(cell, seed, *, model="m", protocol="notes", **metrics):
    """A game against a person; ``metrics`` name the LLM role's agency metrics without the role suffix."""
    role = "b" if cell in (1, 2) else "a"
    columns = {f"{name}_{role}": value for name, value in metrics.items()}
    columns.setdefault(f"turns_{role}", 3)
    return game(
        cell,
        "success",
        50.0,
        model=model,
        opponent="llm",
        opener=OPENER[cell],
        focal_role="A" if cell in (1, 2) else "B",
        instance_seed=seed,
        llm_protocol=protocol,
        llm_word_limit=64,
        **{f"model_{role}": model},
        **columns,
    )


AGENCY_GAMES = [
    # model m: three games as B second mover (cell 1), one as A first mover (cell 4).
    llm_game(1, 1, internal_faithfulness=1.0, utility=0.6),
    llm_game(1, 2, internal_faithfulness=1.0, utility=0.4),
    llm_game(1, 3, internal_faithfulness=0.4),
    llm_game(4, 1, internal_faithfulness=0.0, utility=0.2),
    # model n: two games per cell, cells 2 (B first) and 3 (A second).
    llm_game(2, 1, model="n", utility=0.6),
    llm_game(2, 2, model="n", utility=0.4),
    llm_game(3, 1, model="n", utility=0.2),
    llm_game(3, 2, model="n", utility=0.0),
]


def agency_rows(rows, model):
    return {r["metric"]: r for r in rows if r["model"] == model}


def test_agency_frame_has_one_row_per_llm_role():
    self_play = game(
        1,
        "success",
        50.0,
        model="x",
        opponent="self",
        opener="A",
        instance_seed=7,
        model_a="x",
        model_b="y",
        llm_protocol="plain",
        turns_a=2,
        turns_b=2,
        utility_a=0.3,
        utility_b=0.7,
    )
    person_vs_person = game(1, "success", 50.0, model="human", opponent="human", opener="A")
    unfinished = llm_game(1, 9, utility=1.0) | {"outcome": "unfinished"}
    frame = pd.DataFrame([AGENCY_GAMES[0], AGENCY_GAMES[3], self_play, person_vs_person, unfinished]).astype(str)
    long = dond_report.agency_frame(frame)
    assert list(long.columns) == dond_report.AGENCY_FRAME_COLUMNS
    got = long[["model", "side", "is_first_mover", "llm_protocol", "utility"]].to_records(index=False).tolist()
    assert got == [
        ("m", "A", True, "notes", 0.2),  # cell 4: the LLM plays A and opens
        ("x", "A", True, "plain", 0.3),
        ("m", "B", False, "notes", 0.6),  # cell 1: the LLM plays B, the person opens
        ("y", "B", False, "plain", 0.7),  # self-play: each role under its own model
    ]
    assert long["cluster"].str.startswith(("1|", "7|")).all() and long["cluster"].nunique() == 2
    assert set(dond_report.AGENCY_METRICS) <= set(PLAYER_METRICS)


def test_agency_figures_are_debiased_by_hand():
    frame = pd.DataFrame(AGENCY_GAMES).astype(str)
    rows = dond_report.summarise_agency(frame, n_boot=200)
    m = agency_rows(rows, "m")
    assert set(m) == {"internal_faithfulness", "utility"}  # metrics with no value are left out
    faithful = m["internal_faithfulness"]
    assert faithful["n"] == 4 and faithful["n_cells"] == 2
    assert faithful["mean"] == pytest.approx(0.6)  # (1 + 1 + 0.4 + 0) / 4
    assert faithful["debiased_mean"] == pytest.approx(0.4)  # cells B second 0.8 and A first 0: (0.8 + 0) / 2
    assert math.isnan(faithful["se"])  # the A-first cell has a single value
    assert faithful["mode"] == "semi" and faithful["language"] == "en" and faithful["llm_protocol"] == "notes"
    utility = m["utility"]
    assert utility["n"] == 3 and utility["mean"] == pytest.approx(0.4)  # the third game has no utility
    assert utility["debiased_mean"] == pytest.approx(0.35)  # (0.5 + 0.2) / 2
    n = agency_rows(rows, "n")["utility"]
    assert n["mean"] == pytest.approx(0.3) and n["debiased_mean"] == pytest.approx(0.3)  # (0.5 + 0.1) / 2
    assert n["se"] == pytest.approx(math.sqrt(0.02 / 2 + 0.02 / 2) / 2)  # s_c^2 = 0.02 in both cells
    assert n["ci_low"] <= n["debiased_mean"] <= n["ci_high"]
    assert pd.DataFrame(rows).equals(pd.DataFrame(dond_report.summarise_agency(frame, n_boot=200)))  # seeded


def test_report_prints_and_attaches_the_agency_figures(tmp_path):
    path = write_csv(tmp_path / "dond_games.csv", AGENCY_GAMES + [game(1, "success", 80.0, model="human")])
    text = dond_report.report([path])
    assert "main score [95% CI]" in text and "debiased" in text and "internal_faithfulness" in text
    assert text.index("main score [95% CI]") < text.index("internal_faithfulness")
    assert "external_faithfulness" not in text  # n = 0 everywhere
    rows = json.loads(dond_report.report([path], as_json=True))
    assert [r["model"] for r in rows] == ["human", "m", "n"]
    by_model = {r["model"]: r for r in rows}
    assert by_model["human"]["llm_agency"] == []
    assert [a["metric"] for a in by_model["m"]["llm_agency"]] == ["internal_faithfulness", "utility"]
    assert by_model["m"]["llm_agency"][0]["debiased_mean"] == pytest.approx(0.4)
    assert by_model["m"]["main_score"] == 50.0  # the existing figures are unchanged


def test_a_file_without_the_agency_columns_reports_as_before(tmp_path):
    old_columns = DOND_GAMES_COLUMNS[: DOND_GAMES_COLUMNS.index("model_a")]
    old = write_csv(tmp_path / "old.csv", GAMES, columns=old_columns)
    new = write_csv(tmp_path / "new.csv", GAMES)
    assert dond_report.summarise_agency(pd.DataFrame(columns=old_columns)) is None
    text = dond_report.report([old])
    assert "60.0" in text and "45.0" in text and "internal_faithfulness" not in text and "LLM agency" not in text
    rows = json.loads(dond_report.report([old], as_json=True))
    assert all("llm_agency" not in r for r in rows)
    assert rows == [
        {k: v for k, v in r.items() if k != "llm_agency"} for r in json.loads(dond_report.report([new], as_json=True))
    ]
    assert "internal_faithfulness" in dond_report.report([old, write_csv(tmp_path / "llm.csv", AGENCY_GAMES)])


def test_aborts_for_an_unreachable_model_are_reported_apart_from_rule_aborts(tmp_path, capsys):
    """Rows as the app exports them (game_row from events, identifiers, ISO times, neutralised cells), read back by
    the CLI: an outage and a rule-breaking model are two different rates, and neither is a violation of the other."""
    from backend.core.csvio import neutralise_row
    from backend.dond.export import game_row
    from backend.dond.game import GameConfig
    from backend.dond.instances import generate_instance

    instance = generate_instance(3)
    config = GameConfig(mode="semi", language="en", opener="A", llm_reprompts=0)
    failed = {"kind": "llm_error", "role": "B", "error_kind": "server_error", "created_at": 1764000000.0}
    broke = {"kind": "violation", "role": "B", "error_kind": "format", "text": "[Offer]", "created_at": 1764000001.0}
    taken = [0] * len(instance.counts)
    games = {
        "outage": [failed, {"kind": "abort", "role": "B", "text": "llm_error: server_error", "created_at": 1764000002}],
        "rules": [broke, {"kind": "abort", "role": "B", "text": "llm_invalid: format", "created_at": 1764000003.0}],
        "deal": [
            {"kind": "proposal", "role": "A", "proposal": taken, "created_at": 1764000004.0},
            {"kind": "proposal", "role": "B", "proposal": taken, "created_at": 1764000005.0},
        ],
    }
    person = {"participant_code": "p1", "prolific_pid": "5f0c1e2d3b4a59687a6b5c4d", "study_id": "-A1-B1"}
    rows = []
    for name, events in games.items():
        row = game_row(
            events, instance, config, session_code="s", game_id=name, opponent="llm", model="m", cell=1,
            focal_role="A", people={"A": person},
        )  # fmt: skip
        rows.append(neutralise_row(row))
    outage = rows[0]
    assert (outage["violations_b"], outage["llm_errors_b"], outage["started_at"]) == (0, 1, "2025-11-24T16:00:00.000Z")
    assert outage["study_id"] == "'-A1-B1"  # a formula-like text cell, neutralised as every export is
    path = write_csv(tmp_path / "dond_games.csv", rows)

    [report] = json.loads(dond_report.report([path], as_json=True))
    assert report["games"] == 3 and report["aborted_rate"] == pytest.approx(2 / 3)
    assert report["llm_error_rate"] == pytest.approx(1 / 3) and report["llm_invalid_rate"] == pytest.approx(1 / 3)
    assert cli.main(["report", str(path)]) == 0
    text = capsys.readouterr().out
    assert "LLM error/rules" in text and "0.33/0.33" in text


def test_the_report_says_what_the_model_calls_cost_and_an_unpriced_game_is_unknown_never_free(tmp_path):
    priced = [
        game(1, "success", 100.0, llm_calls=4, llm_cost="0.5", llm_cost_currency="EUR"),
        game(2, "lose", 0.0, llm_calls=2, llm_cost="0.25", llm_cost_currency="EUR"),
    ]
    rows = json.loads(dond_report.report([write_csv(tmp_path / "g.csv", priced)], as_json=True))
    assert [(row["cost"], row["cost_per_game"], row["cost_currency"]) for row in rows] == [(0.75, 0.375, "EUR")]
    assert "Model costs (the price table's, llm_cost): semi/en/default: 0.7500 EUR" in dond_report.report(
        [tmp_path / "g.csv"]
    )
    unpriced = [*priced, game(1, "success", 90.0, llm_calls=3, llm_cost="", llm_cost_currency="EUR")]
    (row,) = json.loads(dond_report.report([write_csv(tmp_path / "u.csv", unpriced)], as_json=True))
    assert row["cost"] is None and row["cost_text"] == "unknown (1 of 3 games unpriced; 0.7500 EUR known)"
