"""The social-evaluation report over the app's long export: hand-computed figures, gold handling, text escaping."""

from __future__ import annotations

import csv
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backend.__main__ import main as backend_main
from backend.core import csvio, publish
from backend.social import cells as social_cells
from backend.social import report as social_report
from backend.social import settings as social_settings
from tests.support.social import human_export_row as _row


@pytest.fixture
def export(tmp_path):
    rows = [
        # goal, agent 1: e1 rated 8 and 6, e2 rated 2 and 2; the model said 9 and 1.
        _row("e1", "p1", 1, "goal", 8, model=9, reasoning="Reached it.\nMostly."),
        _row("e1", "p2", 1, "goal", 6, model=9),
        _row("e2", "p1", 1, "goal", 2, model=1),
        _row("e2", "p2", 1, "goal", 2, model=1),
        # secret, agent 1: all zero.
        *[_row(e, p, 1, "secret", 0, model=0) for e in ("e1", "e2") for p in ("p1", "p2")],
        # A gold episode, left out of the figures; p2 missed the reference.
        _row("g1", "p1", 1, "goal", 0, gold=True, passed=1),
        _row("g1", "p1", 1, "secret", -10, gold=True, passed=1),
        _row("g1", "p2", 1, "goal", 9, gold=True, passed=0),
        _row("g1", "p2", 1, "secret", -10, gold=True, passed=0),
    ]
    path = tmp_path / "social_eval_long.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=social_cells.EXPORT_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def _figures(table, dimension, scope="agent 1", group="demo"):
    match = table[(table["dimension"] == dimension) & (table["scope"] == scope) & (table["group"] == group)]
    assert len(match) == 1
    return match.iloc[0].to_dict()


def test_export_figures_are_hand_computed(export):
    ratings, notes = social_report.load_ratings([export])
    table = social_report.summarise(ratings)
    goal = _figures(table, "goal")
    assert goal["n_items"] == 2 and goal["n_ratings"] == 4  # the gold episode is excluded
    assert goal["mean"] == pytest.approx((7 + 2) / 2)
    assert goal["exact"] == pytest.approx(0.5) and goal["within_1"] == pytest.approx(0.5)
    # Units {8, 6} and {2, 2}: D_o = 8 / 4, D_e = 216 / 12; alpha = 1 - 2 / 18.
    assert goal["alpha"] == pytest.approx(1 - 2 / 18)
    assert goal["model_mean"] == pytest.approx(5.0)
    assert goal["diff"] == pytest.approx(((7 - 9) + (2 - 1)) / 2)
    assert goal["n_model"] == 2 and math.isnan(goal["pearson"])  # fewer than three pairs
    overall = _figures(table, "overall")  # per annotation: mean of goal and secret
    assert overall["mean"] == pytest.approx(((8 + 0) / 2 + (6 + 0) / 2 + (2 + 0) / 2 * 2) / 4)
    assert set(table["scope"]) == {"agent 1", "both"}  # no agent 2 rows, no known focus agent
    assert notes["attention"] == dict(n_annotators=2, share_passed=0.5)


def test_the_live_admin_page_leaves_the_bootstrap_out_and_keeps_every_figure(export):
    """The session's admin page is drawn under oTree's lock: its summary has the same figures without the intervals
    (the bootstrap took about 6 s of a 15 s draw at 21,000 ratings); the report keeps them."""
    ratings, _ = social_report.load_ratings([export])
    full, quick = social_report.summarise(ratings), social_report.summarise(ratings, intervals=False)
    assert "alpha_low" in full and not [column for column in quick if column.endswith(("_low", "_high"))]
    assert quick.equals(full[list(quick.columns)])


def test_gold_rows_can_be_included(export):
    ratings, _ = social_report.load_ratings([export])
    goal = _figures(social_report.summarise(ratings, include_gold=True), "goal", group="(all)")
    assert goal["n_items"] == 3 and goal["n_ratings"] == 6


def test_report_text_and_json(export, capsys):
    text = social_report.report([export])
    # Gold (attention) episodes are counted apart, never as regular ones.
    assert "4 annotations of 2 episodes by 2 annotators" in text
    assert "gold (attention) episodes apart: 2 annotations of 1 episodes" in text
    assert "Attention episodes: 50% of 2 annotators" in text
    assert "== demo / agent 1 (2 episodes) ==" in text and "pearson" in text
    data = json.loads(social_report.report([export], as_json=True))
    goal = next(r for r in data["summary"] if r["dimension"] == "goal" and r["scope"] == "agent 1")
    assert goal["pearson"] is None and goal["mean"] == 4.5
    backend_main(["report", str(export)])
    assert "== demo / both" in capsys.readouterr().out


def test_looks_like_recognises_both_layouts_only():
    assert social_report.looks_like(social_cells.EXPORT_COLUMNS)
    assert social_report.looks_like(["", "model", "pk", "data", "prolific_id", "believability_1", "goal_2"])
    assert not social_report.looks_like(["session_code", "episode_id", "rating"])


def test_unknown_files_and_missing_columns_are_reported(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="other.csv is neither"):
        social_report.load_ratings([path])
    with pytest.raises(ValueError, match="ratings lacks the columns"):
        social_report.summarise(social_report.pd.DataFrame({"rating": [1]}))


@given(st.text())
def test_escaping_keeps_text_on_one_line_and_round_trips(text):
    escaped = csvio.escape_text(text)
    assert "\n" not in escaped and "\r" not in escaped
    assert csvio.unescape_text(escaped) == text


def test_coverage_counts():
    assert social_report.coverage_counts({"a": 3, "b": 0}, per_item=2) == {0: 1, 1: 0, 2: 1}
    with pytest.raises(ValueError, match="per_item must be at least 1"):
        social_report.coverage_counts({}, per_item=0)


def _naive_quality(rows, *, floor_s):
    """The quality per annotator, counted by hand from export rows: one annotation per (annotator, episode)."""
    result = {}
    for who in sorted({row["annotator"] for row in rows}):
        annotations = {row["episode_id"]: row for row in rows if row["annotator"] == who}
        times = sorted(float(row["seconds_spent"]) for row in annotations.values())
        middle = len(times) // 2
        median = times[middle] if len(times) % 2 else (times[middle - 1] + times[middle]) / 2
        gold = [row["attention_passed"] == 1 for row in annotations.values() if row["is_gold"]]
        differences = []
        for own in rows:
            if own["annotator"] != who or own["is_gold"]:
                continue
            cell = (own["episode_id"], own["agent_index"], own["dimension"])
            others = [
                r["rating"]
                for r in rows
                if r["annotator"] != who and (r["episode_id"], r["agent_index"], r["dimension"]) == cell
            ]
            if others:
                differences.append(abs(own["rating"] - sum(others) / len(others)))
        result[who] = dict(
            median_seconds=median,
            gold_accuracy=sum(gold) / len(gold) if gold else None,
            mean_abs_diff=sum(differences) / len(differences) if differences else None,
            flagged=any(t < floor_s for t in times) or not all(gold),
        )
    return result


def test_the_quality_per_annotator_is_a_figure_of_the_command_and_counted_by_hand(tmp_path, capsys):
    rows = [
        _row("e1", "p1", 1, "goal", 8),
        _row("e1", "p2", 1, "goal", 6),
        _row("e1", "p3", 1, "goal", 3),
        _row("e2", "p1", 2, "goal", 5),
        _row("e2", "p2", 2, "goal", 5),
        _row("g1", "p1", 1, "goal", 0, gold=True, passed=1),
        _row("g1", "p2", 1, "goal", 9, gold=True, passed=0),
    ]
    seconds = {"p1": {"e1": 80, "e2": 95.5, "g1": 61}, "p2": {"e1": 70, "e2": 130, "g1": 90}, "p3": {"e1": 12}}
    for row in rows:
        row["seconds_spent"] = seconds[row["annotator"]][row["episode_id"]]
    export = tmp_path / "social_eval_long.csv"
    with export.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=social_cells.EXPORT_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    out = tmp_path / "figures"
    assert backend_main(["report", str(export), "--figures", str(out)]) in (0, None)
    assert (out / "annotator_quality.svg").read_text().startswith("<?xml")
    assert (out / "annotator_quality.png").read_bytes().startswith(b"\x89PNG")
    capsys.readouterr()
    data = json.loads(social_report.report([export], as_json=True))
    specs = {spec.name: spec for spec in publish.report_outputs("backend.social.report", data)[0]}
    drawn = specs["annotator_quality"].data
    expected = _naive_quality(rows, floor_s=60)
    assert drawn["annotator"] == ["#1", "#2", "#3"]  # numbered, no codes drawn
    for key in ("median_seconds", "gold_accuracy", "mean_abs_diff", "flagged"):
        assert drawn[key] == pytest.approx([expected[who][key] for who in ("p1", "p2", "p3")]), key
    assert drawn["floor_s"] == 60 == social_settings.DEFAULTS["quality_floor_s"]  # the app's default floor
    assert "* p3: 1 episodes, median 12.0 s, 1 faster than the floor" in social_report.report([export])
