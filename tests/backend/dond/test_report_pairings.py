"""The DoND report never pools what must stay apart: visibility conditions are separate rows, cross-play names both
models, and the points' labels fit the run (person/model, model A/model B)."""

from __future__ import annotations

import json

from backend.dond import report as dond_report
from tests.backend.dond.test_report import game, write_csv


def test_conditions_models_and_players_are_separate_rows_with_fitting_labels(tmp_path, capsys):
    games = [
        game(1, "success", 100.0, points=(6, 4), opponent="self", model_a="m1", model_b="m1", value_visibility="own"),
        game(2, "success", 20.0, points=(2, 8), opponent="self", model_a="m1", model_b="m1", value_visibility="both"),
        game(1, "success", 60.0, points=(5, 5), opponent="self", model_a="m1", model_b="m2", value_visibility="own"),
        game(1, "success", 40.0, points=(4, 6), opponent="llm", model_a="", model_b="m1", value_visibility="own"),
    ]
    path = write_csv(tmp_path / "games.csv", [dict(row, model="m1") for row in games])
    rows = json.loads(dond_report.report([path], as_json=True))
    found = {(r["pairing"], r["players"], r["condition"]): r["main_score"] for r in rows}
    assert found == {
        ("m1 (self-play)", "model A/model B", "default"): 100.0,
        ("m1 (self-play)", "model A/model B", "value_visibility=both"): 20.0,  # not pooled with the default
        ("m1 (A) vs m2 (B)", "model A/model B", "default"): 60.0,  # cross-play names both models
        ("m1", "person/model", "default"): 40.0,
    }
    text = dond_report.report([path])
    assert "points (person/other)" not in text
    assert "m1 (A) vs m2 (B)" in text and "6.0/4.0 (model A/model B)" in text and "4.0/6.0 (person/model)" in text
