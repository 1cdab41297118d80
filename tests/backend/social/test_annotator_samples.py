"""A model annotator asked k times per (episode, agent) on the fake OpenAI-compatible server: the median rating, the
spread of its samples in its output, and the report's error (MAE), rank correlation with intervals over episodes,
the spread against the error and the admission line against people's ratings of the same units (issue 37)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from scipy import stats as scipy_stats

from backend.__main__ import main as backend_main
from backend.core import runs, unit_bootstrap
from backend.social import cells as social_cells
from backend.social.annotator import COLUMNS, main
from backend.social.annotator_prompts import build_messages, scripted_rating
from backend.social.episodes import load_episodes
from backend.social.rubrics import DEFAULT_RUBRIC_PATH, load_rubric
from tests.support.social import human_export_row as human_row

RUBRIC = load_rubric()
BUNDLED = DEFAULT_RUBRIC_PATH.parent / "episodes"
EPISODES = load_episodes(BUNDLED, rubric=RUBRIC)
UNITS = [(episode, index) for episode in EPISODES for index in (1, 2)]
REASON = "What the character said in the conversation supports this rating."


def clip(value: int, dimension) -> int:
    return max(dimension.min, min(dimension.max, value))


def level(unit_number: int) -> int:
    """How far the model's three samples spread on a unit (0, 1 or 2 points each way), and how far people are off."""
    return unit_number % 3


def base(episode, index: int, dimension) -> int:
    """The samples' middle rating: the scripted rating, kept 2 points inside the scale so no sample is clipped."""
    return max(
        dimension.min + 2,
        min(dimension.max - 2, scripted_rating(episode.id, episode.agents[index - 1].name, dimension)),
    )


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")


def test_three_samples_give_the_median_and_spread_and_the_report_scores_them_against_people(
    llm_server, tmp_path, capsys
):
    prompts = {build_messages(episode, index, RUBRIC)[1]["content"]: n for n, (episode, index) in enumerate(UNITS)}
    asked: dict[int, int] = {}

    def sampled(request):
        n = prompts[request["messages"][1]["content"]]
        sample = asked.get(n, 0)
        asked[n] = sample + 1
        episode, index = UNITS[n]
        offset = (-1, 0, 1)[sample] * level(n)
        ratings = {d.key: {"reasoning": REASON, "rating": base(episode, index, d) + offset} for d in RUBRIC.dimensions}
        return json.dumps(ratings)

    llm_server.responder = sampled
    arguments = ["--episodes", str(BUNDLED), "--model", "rater", "--out", str(tmp_path), "--quiet", "--samples", "3"]
    arguments += ["--base-url", llm_server.base_url, "--temperature", "0.7", "--max-retries", "0"]
    assert main(arguments) == 0
    capsys.readouterr()
    assert len(llm_server.requests) == 3 * len(UNITS) and set(asked.values()) == {3}
    [output] = tmp_path.glob("social_rater_*.csv")
    rows = runs.read_rows(output, columns=COLUMNS, what="the annotator's output")  # cells as before neutralising
    assert len(rows) == len(UNITS) * len(RUBRIC.dimensions)
    for row in rows:
        n = next(i for i, (e, a) in enumerate(UNITS) if e.id == row["episode_id"] and a == int(row["agent_index"]))
        middle = base(*UNITS[n], RUBRIC.dimension(row["dimension"]))
        assert (row["status"], row["samples"], row["rating"]) == ("answered", "3", str(middle))
        assert float(row["rating_spread"]) == pytest.approx(level(n), abs=1e-6)  # SD of (m - l, m, m + l) is l
        assert row["sample_ratings"] == f"{middle - level(n)}#{middle}#{middle + level(n)}"

    # People: two annotators per regular episode, off from the model's rating by as much as its samples spread.
    regular = [(n, episode, index) for n, (episode, index) in enumerate(UNITS) if not episode.is_gold]
    people = []
    for n, episode, index in regular:
        for dimension in RUBRIC.dimensions:
            for annotator in ("p1", "p2"):
                rating = clip(base(episode, index, dimension) + level(n), dimension)
                people.append(human_row(episode.id, annotator, index, dimension.key, rating))
    export = tmp_path / "ratings.csv"
    with export.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=social_cells.EXPORT_COLUMNS)
        writer.writeheader()
        writer.writerows(people)
    [episodes_file] = tmp_path.glob("*.episodes.json")

    assert backend_main(["report", str(export), str(episodes_file), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    goal = next(r for r in data["summary"] if (r["group"], r["scope"], r["dimension"]) == ("demo", "both", "goal"))
    dimension = RUBRIC.dimension("goal")
    human = np.array([clip(base(e, i, dimension) + level(n), dimension) for n, e, i in regular], dtype=float)
    model = np.array([base(e, i, dimension) for _, e, i in regular], dtype=float)
    spread = np.array([level(n) for n, _, _ in regular], dtype=float)
    assert goal["n_model"] == len(regular)
    assert goal["mae"] == pytest.approx(np.mean(np.abs(human - model)))
    assert goal["spearman"] == pytest.approx(scipy_stats.spearmanr(human, model).statistic)
    assert goal["spread_rho"] == pytest.approx(scipy_stats.spearmanr(spread, np.abs(human - model)).statistic)
    assert goal["spread_rho"] > 0.9  # the model is less sure exactly where it is further from people
    # The intervals resample episodes with the documented seed: recomputed here from the same draws.
    episode_ids = sorted({e.id for _, e, _ in regular})
    draws = unit_bootstrap.unit_draws(len(episode_ids), seed=unit_bootstrap.DEFAULT_SEED)
    order = sorted(range(len(regular)), key=lambda k: (regular[k][1].id, regular[k][2]))
    weights = unit_bootstrap.cluster_weights(draws, [episode_ids.index(regular[k][1].id) for k in order])
    expected = unit_bootstrap.interval(unit_bootstrap.spearman_replicates(human[order], model[order], weights))
    assert [goal["spearman_low"], goal["spearman_high"]] == pytest.approx(list(expected))
    for key in ("alpha", "pearson", "spearman", "diff", "mae"):
        if goal[key] is not None and goal[f"{key}_low"] is not None:
            assert goal[f"{key}_low"] <= goal[key] + 1e-9 and goal[key] <= goal[f"{key}_high"] + 1e-9, key
    admitted = {item["dimension"]: item for item in data["admission"] if item["group"] == "demo"}
    assert admitted["goal"]["low"] == pytest.approx(goal["spearman_low"]) and data["admit_at"] == 0.6
    assert "bootstrap over the rated units" in data["interval_method"]

    assert backend_main(["report", str(export), str(episodes_file), "--admit-at", "-1"]) == 0
    text = capsys.readouterr().out
    assert f"demo / goal: admitted: the lower bound {goal['spearman_low']:.2f} clears -1.00" in text
    assert "spread_rho" in text and "mae_ci" in text and "alpha_ci" in text

    # Figures and paper tables carry the intervals, the tables' notes name the method.
    figures, markdown = tmp_path / "figures", tmp_path / "tables"
    arguments = ["report", str(export), str(episodes_file), "--figures", str(figures), "--markdown", str(markdown)]
    assert backend_main(arguments) == 0
    capsys.readouterr()
    assert (figures / "social_agreement.svg").is_file() and (figures / "social_people_vs_models.svg").is_file()
    models_table = (markdown / "social_models.md").read_text(encoding="utf-8")
    assert "bootstrap over the rated units (1000 resamples, seed 0" in models_table
    assert f"{goal['spearman']:.2f} \\[{goal['spearman_low']:.2f}, {goal['spearman_high']:.2f}\\]" in models_table
    dimensions_table = (markdown / "social_dimensions.md").read_text(encoding="utf-8")
    assert "bootstrap over the rated units" in dimensions_table and " \\[" in dimensions_table
