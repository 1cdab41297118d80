"""Conformance with clembench DoND's released instances and 150 stored self-play episodes (../shared/data/dond).

From each episode's instance and raw replies we replay the game: our parser must find the same proposals and the
same abort (with the same kind of reason), and our scoring must reproduce every stored flag and score.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from backend.dond import errors, instances, rules, scoring
from backend.dond import proposals as parsing

# clembench's abort reasons (substring of the logged text) and the error class our parser raises for them.
REASON_TO_ERROR = {
    "does not start with": (errors.ProposalFormatError, "prefix"),
    "number/name pairs": (errors.ProposalFormatError, "pairs"),
    "only valid item types": (errors.UnknownItemError, None),
    "every item type only once": (errors.DuplicateItemError, None),
    "more items than available": (errors.OverAskError, None),
    "instructed to make a proposal": (errors.ProposalRequiredError, None),
}


@pytest.fixture(scope="module")
def episodes(dond_data: Path) -> pd.DataFrame:
    frame = pd.read_csv(dond_data / "episodes.csv", keep_default_na=False)
    assert len(frame) == 150
    return frame.rename(columns=lambda name: name.replace(" ", "_"))


def _vector(cell: str) -> list[int] | None:
    return json.loads(cell) if cell else None


def _replay(episode_dir: Path) -> dict:
    """Replay the raw replies of one episode through our parser and clembench's turn rules."""
    interactions = json.loads((episode_dir / "interactions.json").read_text())
    experiment = json.loads((episode_dir.parent / "experiment.json").read_text())
    instance = instances.Instance.from_clembench(
        json.loads((episode_dir / "instance.json").read_text()), experiment["language"]
    )
    replies = [
        (event["from"], event["action"]["content"])
        for round_events in interactions["turns"]
        for event in round_events
        if event["action"]["type"] == "get message"
    ]
    sent = Counter()
    proposals: dict[str, tuple[int, ...]] = {}
    for index, (player, text) in enumerate(replies):
        other = "Player 2" if player == "Player 1" else "Player 1"
        required = rules.must_propose(
            sent[player], other_has_proposed=other in proposals, max_messages=experiment["max_turns"]
        )
        try:
            move = parsing.parse_reply(text, instance, experiment["language"], must_propose=required)
        except errors.EmptyMessageError:
            move = parsing.Move("message", text)  # clembench forwards an empty message as a placeholder
        except errors.MoveError as error:
            return {"proposals": proposals, "error": error, "last": index == len(replies) - 1, "instance": instance}
        if move.kind == "proposal":
            proposals[player] = parsing.proposal_vector(move.proposal, instance)
        else:
            sent[player] += 1
    return {"proposals": proposals, "error": None, "last": True, "instance": instance}


def test_parser_reproduces_every_stored_proposal_and_abort(episodes, dond_data):
    checked = Counter()
    for row in episodes.itertuples():
        result = _replay(dond_data / row.path)
        stored_a, stored_b = _vector(row.proposal_a), _vector(row.proposal_b)
        ours_a, ours_b = result["proposals"].get("Player 1"), result["proposals"].get("Player 2")
        assert (list(ours_a) if ours_a else None) == stored_a, (row.path, ours_a, stored_a)
        assert (list(ours_b) if ours_b else None) == stored_b, (row.path, ours_b, stored_b)
        if row.Aborted:
            assert result["error"] is not None and result["last"], f"{row.path}: we did not abort on the last reply"
            interactions = json.loads((dond_data / row.path / "interactions.json").read_text())
            reason = next(
                e["action"]["content"]
                for r in interactions["turns"]
                for e in r
                if e["action"]["type"] in ("invalid format", "error")
            )
            error_class, format_reason = next(v for k, v in REASON_TO_ERROR.items() if k in reason)
            assert type(result["error"]) is error_class, (row.path, reason, result["error"])
            if format_reason:
                assert result["error"].details["reason"] == format_reason, (row.path, result["error"])
            checked[error_class.__name__] += 1
        else:
            assert result["error"] is None, (row.path, result["error"])
            checked["completed"] += 1
    assert checked["completed"] == 126 and sum(checked.values()) == 150
    assert checked["ProposalFormatError"] >= 1 and checked["ProposalRequiredError"] == 2


def test_parser_handles_german_episodes(episodes, dond_data):
    german = episodes[episodes.language == "de"]
    assert len(german) == 73
    parsed = 0
    for row in german.itertuples():
        result = _replay(dond_data / row.path)
        parsed += len(result["proposals"])
    assert parsed >= 2 * german.Success.sum()


def test_scoring_reproduces_every_stored_flag_and_score(episodes):
    for row in episodes.itertuples():
        counts, values_a, values_b = (json.loads(x) for x in (row.item_counts, row.values_a, row.values_b))
        metrics = scoring.game_metrics(
            counts,
            values_a,
            values_b,
            _vector(row.proposal_a),
            _vector(row.proposal_b),
            mode=row.mode,
            aborted=bool(row.Aborted),
        )
        where = f"{row.path}: {metrics}"
        assert (metrics["aborted"], metrics["lose"], metrics["success"]) == (row.Aborted, row.Lose, row.Success), where
        assert metrics["max_sum_points"] == int(row.stored_max_sum_of_scores), where
        assert metrics["max_player_points"] == int(row.stored_max_player_scores), where
        if row.Aborted:
            assert math.isnan(metrics["mode_score"]) and math.isnan(metrics["main_score"]), where
            assert str(row.Main_Score).lower() == "nan" and row.Pareto_Optimal == "", where
            continue
        assert metrics["sum_points"] == int(row.stored_sum_of_scores), where
        assert metrics["mode_pareto_improvement"] == int(row.stored_pareto_improvement), where
        assert metrics["mode_pareto_optimal"] == bool(int(row.Pareto_Optimal)), where
        assert metrics["mode_score"] == pytest.approx(float(row.Main_Score)), where
        assert metrics["mode_score"] == pytest.approx(100 * float(row.stored_episode_score)), where
        assert metrics["sum_share"] == pytest.approx(float(row.Sum_of_Points)), where
        if row.mode == "semi":  # clembench's semi-competitive Main Score is our main score
            assert metrics["main_score"] == pytest.approx(float(row.Main_Score)), where
            assert metrics["pareto_optimal"] == bool(int(row.Pareto_Optimal)), where


def test_stored_semi_scores_include_improvable_games(episodes):
    """The data must exercise the enumeration: some semi successes leave room for a Pareto improvement."""
    semi = episodes[(episodes["mode"] == "semi") & (episodes.Success == 1)]
    improvable = semi[semi.stored_pareto_improvement.astype(int) > 0]
    assert len(improvable) >= 5
    for row in improvable.itertuples():
        counts, values_a, values_b = (json.loads(x) for x in (row.item_counts, row.values_a, row.values_b))
        pa = int(np.dot(_vector(row.proposal_a), values_a))
        pb = int(np.dot(_vector(row.proposal_b), values_b))
        assert scoring.max_pareto_improvement(counts, values_a, values_b, pa, pb) == int(row.stored_pareto_improvement)


def _instance_files(dond_data: Path) -> list[Path]:
    files = sorted((dond_data / "instances").glob("instances_*_*.json"))
    assert len(files) == 9
    return files


def test_every_released_instance_satisfies_our_constraints(dond_data):
    for path in _instance_files(dond_data):
        experiment = json.loads(path.read_text())["experiments"][0]
        for entry in experiment["game_instances"]:
            instance = instances.Instance.from_clembench(entry, experiment["language"])
            assert instances.satisfies_constraints(instance), (path.name, entry["game_id"])


def test_released_instances_parse_their_own_proposals_in_every_language(dond_data):
    """Our format/parse round trip with clembench's words (German capitalised, Italian)."""
    rng = np.random.default_rng(0)
    for path in _instance_files(dond_data):
        experiment = json.loads(path.read_text())["experiments"][0]
        language = experiment["language"]
        for entry in experiment["game_instances"]:
            instance = instances.Instance.from_clembench(entry, language)
            taken = {t: int(rng.integers(0, c + 1)) for t, c in zip(instance.item_types, instance.counts, strict=True)}
            text = parsing.format_proposal(taken, instance, language)
            assert parsing.parse_proposal(text.lower(), instance, language) == taken, (path.name, text)


def test_generator_matches_the_released_distribution_of_sizes(dond_data):
    """clembench's rejection sampling skews toward 3 types and 5 items; ours must have the same skew."""
    observed_types, observed_items = Counter(), Counter()
    for path in _instance_files(dond_data):
        experiment = json.loads(path.read_text())["experiments"][0]
        if experiment["language"] != "en":  # the other languages hold the same instances
            continue
        for entry in experiment["game_instances"]:
            observed_types[len(entry["item_counts"])] += 1
            observed_items[sum(entry["item_counts"])] += 1
    ours = [instances.generate_instance(seed) for seed in range(4000)]
    for observed, size in ((observed_types, lambda i: len(i.counts)), (observed_items, lambda i: sum(i.counts))):
        keys = sorted(set(observed) | {size(i) for i in ours})
        expected_share = np.array([sum(size(i) == k for i in ours) for k in keys]) / len(ours)
        counts = np.array([observed[k] for k in keys])
        chi2 = stats.chisquare(counts, expected_share * counts.sum())
        assert chi2.pvalue > 0.001, (keys, counts, expected_share)
