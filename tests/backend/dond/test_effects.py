"""Treatment effects (backend/dond/effects.py): per-condition figures, the paired clustered bootstrap against its
oracle, a difference worked out by hand, and a two-condition self-play run whose report states the effect."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from backend.core.llm.fake_server import Reply
from backend.dond import effects
from backend.dond import report as dond_report
from backend.dond.export import DOND_GAMES_COLUMNS
from backend.dond.selfplay import main, run_selfplay
from harness.servers import run_async
from tests.backend.dond.oracles import paired_difference_replicates_naive


def game(instance, cell, visibility, points_focal, *, outcome="success", description="none", main_score=50):
    """A dond_games row: ``instance`` names the instance, ``cell`` is (focal role, opener)."""
    row = dict.fromkeys(DOND_GAMES_COLUMNS, "")
    focal, opener = cell
    row.update(
        game_id=f"{instance}-{focal}{opener}-{visibility}-{description}",
        mode="semi",
        language="en",
        model="m",
        cell="1",
        focal_role=focal,
        opener=opener,
        outcome=outcome,
        instance_seed=instance,
        item_types='["egg"]',
        counts="[2]",
        values_a="[5]",
        values_b="[5]",
        points_focal="" if outcome == "aborted" else points_focal,
        points_opponent="" if outcome == "aborted" else 10 - points_focal,
        main_score="" if outcome == "aborted" else main_score,
        mode_score="" if outcome == "aborted" else main_score,
        value_visibility=visibility,
        agent_description=description,
        disclose_description=0,
        opponent_intro="auto",
    )
    return row


FIRST, SECOND = ("A", "A"), ("A", "B")


def test_visibility_gain_matches_a_difference_worked_out_by_hand():
    # Instance 1: own 5 and 3 points (first / second mover), both 7 and 5. Instance 2: own 6 and 2, both 6 and 4.
    # Instance 3 is played under own only: it must be dropped from the comparison.
    rows = [
        game("1", FIRST, "own", 5),
        game("1", SECOND, "own", 3),
        game("2", FIRST, "own", 6),
        game("2", SECOND, "own", 2),
        game("3", FIRST, "own", 10),
        game("1", FIRST, "both", 7),
        game("1", SECOND, "both", 5),
        game("2", FIRST, "both", 6),
        game("2", SECOND, "both", 4),
    ]
    frame = pd.DataFrame(rows).astype(str)
    gains = {r["metric"]: r for r in effects.treatment_effects(frame, n_boot=200) if r["effect"] == "visibility gain"}
    utility = gains["utility"]
    # By hand, utility = points / 10, on instances 1 and 2 only:
    # own:  first mover (0.5 + 0.6) / 2 = 0.55, second (0.3 + 0.2) / 2 = 0.25, debiased (0.55 + 0.25) / 2 = 0.40
    # both: first mover (0.7 + 0.6) / 2 = 0.65, second (0.5 + 0.4) / 2 = 0.45, debiased (0.65 + 0.45) / 2 = 0.55
    assert utility["difference"] == pytest.approx(0.15)
    assert (utility["condition"], utility["baseline"], utility["instances"], utility["dropped"]) == (
        "both",
        "own",
        2,
        1,
    )
    # Two instances: a replicate draws {1,1}, {2,2} or {1,2}; their gains are 0.2, 0.1 and 0.15.
    assert utility["ci_low"] == pytest.approx(0.1) and utility["ci_high"] == pytest.approx(0.2)
    assert gains["agreement_rate"]["difference"] == 0.0
    per_condition = {(r["value_visibility"], r["metric"]): r for r in effects.condition_summaries(frame, n_boot=100)}
    # Per condition every game counts (instance 3 too): own first mover (0.5 + 0.6 + 1.0) / 3 = 0.7, second 0.25.
    assert per_condition[("own", "utility")]["debiased_mean"] == pytest.approx((0.7 + 0.25) / 2)
    assert per_condition[("both", "utility")]["debiased_mean"] == pytest.approx(0.55)
    text = effects.text_report(
        effects.condition_summaries(frame, n_boot=50), effects.treatment_effects(frame, n_boot=50)
    )
    assert "visibility gain" in text and "0.150" in text and "dropped" in text


@pytest.mark.parametrize("seed", [0, 7])
def test_paired_bootstrap_draws_the_same_instances_for_both_conditions_as_the_oracle(seed):
    rng = np.random.default_rng(100 + seed)
    n = 60
    clusters = rng.integers(0, 9, size=n).astype(str)
    cells = rng.choice(["A|first", "A|second", "B|first", "B|second"], size=n)
    values = rng.normal(size=n)
    values[rng.random(n) < 0.1] = np.nan  # e.g. the main score of aborted games
    base_clusters = rng.integers(0, 11, size=n).astype(str)  # instances 9 and 10 only in the baseline
    base_cells = rng.choice(["A|first", "A|second", "B|first", "B|second"], size=n)
    base_values = rng.normal(size=n)
    result = effects.paired_difference(
        values, cells, clusters, base_values, base_cells, base_clusters, n_boot=40, seed=seed
    )
    naive = paired_difference_replicates_naive(
        values, cells, clusters, base_values, base_cells, base_clusters, n_boot=40, seed=seed
    )
    assert result["replicates"] == pytest.approx(naive, abs=1e-12)
    assert result["dropped"] == len(set(clusters) | set(base_clusters)) - result["instances"]


def test_no_common_instance_gives_no_difference_and_says_how_many_were_dropped():
    result = effects.paired_difference([1.0], ["A|first"], ["i1"], [0.0], ["A|first"], ["i2"], n_boot=10)
    assert np.isnan(result["difference"]) and (result["instances"], result["dropped"]) == (0, 2)


def test_a_file_of_default_games_reports_no_treatment_section():
    frame = pd.DataFrame([game("1", FIRST, "own", 5), game("1", SECOND, "own", 3)]).astype(str)
    assert not effects.has_conditions(frame)
    assert effects.has_conditions(pd.DataFrame([game("1", FIRST, "both", 5)]).astype(str))


def test_selfplay_with_two_visibility_conditions_gives_the_paired_gain(tmp_path, llm_server, monkeypatch):
    """Against the fake server: a model that sees the other's values takes nothing (a deal), one that does not asks
    for everything (no deal). The prompts must carry the other's table exactly under 'both'."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def respond(request):
        first = request["messages"][0]["content"]
        spoken = sum(1 for message in request["messages"] if message["role"] == "assistant")
        if spoken == 0:
            return Reply(text="Hello, let us find a split.")
        if "worth to the other player" in first:
            return Reply(text="[Proposal: ]")
        items = first.split("The items: ", 1)[1].splitlines()[0]
        return Reply(text=f"[Proposal: {items}]")

    llm_server.responder = respond
    summary = run_async(
        run_selfplay(
            model_a="model-x",
            model_b="model-x",
            instances=3,
            mode="semi",
            language="en",
            out_dir=tmp_path,
            settings_options=dict(base_url=llm_server.base_url, max_retries=0, timeout_s=10),
            visibilities=("own", "both"),
        )
    )
    assert (summary.planned, summary.played) == (12, 12)
    games = pd.read_csv(tmp_path / "dond_games.csv", dtype=str, keep_default_na=False)
    assert games.groupby("value_visibility")["instance_seed"].apply(sorted).to_dict() == {
        "both": ["1", "1", "2", "2", "3", "3"],
        "own": ["1", "1", "2", "2", "3", "3"],
    }
    assert set(zip(games["value_visibility"], games["outcome"], strict=True)) == {("own", "lose"), ("both", "success")}
    firsts = [r["messages"][0]["content"] for r in llm_server.requests]
    assert sum("worth to the other player" in f for f in firsts) and not all(
        "worth to the other player" in f for f in firsts
    )
    rows = json.loads(dond_report.report([tmp_path / "dond_games.csv"], as_json=True))
    treatments = rows[0]["treatments"]
    agreement = {c["value_visibility"]: c for c in treatments["conditions"] if c["metric"] == "agreement_rate"}
    assert (agreement["own"]["debiased_mean"], agreement["both"]["debiased_mean"]) == (0.0, 1.0)
    gain = next(
        e for e in treatments["effects"] if e["effect"] == "visibility gain" and e["metric"] == "agreement_rate"
    )
    assert (gain["difference"], gain["ci_low"], gain["ci_high"], gain["instances"], gain["dropped"]) == (1, 1, 1, 3, 0)
    text = dond_report.report([tmp_path / "dond_games.csv"])
    assert "visibility gain" in text and "Treatments: figures per condition" in text


def test_selfplay_describes_model_a_only_and_refuses_an_unknown_condition(tmp_path, llm_server, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm_server.responder = lambda request: Reply(text="[Proposal: ]")
    args = ["--model-a", "model-x", "--instances", "1", "--out", str(tmp_path), "--quiet"]
    args += ["--base-url", llm_server.base_url, "--describe", "none,expert"]
    assert main(args) == 0
    games = pd.read_csv(tmp_path / "dond_games.csv", dtype=str, keep_default_na=False)
    assert sorted(games["agent_description"]) == ["expert", "expert", "none", "none"]
    expert = "You are highly experienced at negotiating"
    by_model_role = [(r["messages"][0]["content"]) for r in llm_server.requests]
    assert sum(expert in first for first in by_model_role) == 2  # model A in the two expert games; B stays neutral
    assert all(first.startswith("You negotiate in this game as a representative.") for first in by_model_role)
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main([*args[:5], str(tmp_path / "other"), "--quiet", "--visibility", "own,llm_sees_other"])
    assert "--visibility takes a comma-separated list of own, both; 'llm_sees_other' is none of them." in (
        capsys.readouterr().err
    )
