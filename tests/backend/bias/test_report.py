"""The bias report: per bias and respondent group, metrics equal to backend.bias.metrics on the same tests, variants, CLI."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from backend import __main__ as cli
from backend.bias import report as bias_report
from backend.bias.export import EXPORT_COLUMNS, export_row
from backend.bias.items import load_items, present
from backend.bias.metrics import ConfirmationBiasMetric, HaloEffectMetric, LossAversionMetric

ITEMS = load_items()


def _row(kind, respondent, item_id, version, *, model="", run="", position=1, **answer):
    item = ITEMS.item(item_id)
    extra = {"model": model, "run": run} if kind == "model" else {}
    if "confidence" in answer or "option_probabilities" in answer:
        extra["confidence_source"] = "slider" if kind == "person" else "stated"
    return export_row(
        item,
        present(item, version),
        respondent_kind=kind,
        respondent_id=respondent,
        item_set=ITEMS.name,
        position=position,
        **answer,
        **extra,
    )


def _write(tmp_path, rows, name="export.csv"):
    path = tmp_path / name
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=EXPORT_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


# Halo answers (weeks, options 2/4/6/8) of three people: (control, treatment) and slider confidences.
PEOPLE_HALO = {"p1": (2, 4, 1.0, 0.4), "p2": (6, 6, 0.5, 0.5), "p3": (8, 2, 0.9, 0.7)}
PEOPLE_LOSS = {"p1": (1, 0, 1), "p2": (0, 0, 0), "p3": (1, 1, 1)}  # loss_app_promotion, trade_fair, pilot_route
PEOPLE_CONFIRMATION = {"p1": (1, ["commute", "focus", "mentoring"], 0.8), "p2": (0, ["cash", "own_cash"], 0.6)}


def _people_rows():
    rows = []
    for person, (control, treatment, c_conf, t_conf) in PEOPLE_HALO.items():
        rows.append(_row("person", person, "halo_linen_supplier", "control", answer=control, confidence=c_conf))
        rows.append(_row("person", person, "halo_linen_supplier", "treatment", answer=treatment, confidence=t_conf))
        for item_id, accepted in zip(
            ("loss_app_promotion", "loss_trade_fair", "loss_pilot_route"), PEOPLE_LOSS[person], strict=True
        ):
            rows.append(_row("person", person, item_id, "treatment", answer=accepted, confidence=0.75))
        rows.append(_row("person", person, "attention_reading", "check", answer=2 if person != "p3" else 0))
    for person, (agrees, selected, confidence) in PEOPLE_CONFIRMATION.items():
        item_id = "confirmation_home_office" if person == "p1" else "confirmation_early_payment"
        rows.append(_row("person", person, item_id, "control", answer=agrees, confidence=confidence))
        rows.append(_row("person", person, item_id, "treatment", selected=selected))
    # p3 left the anchoring test after its control version: an incomplete test
    rows.append(_row("person", "p3", "anchoring_bakery", "control", answer=250))
    return rows


def _model_rows():
    rows = []
    for run in (1, 2):
        respondent = f"gpt-test#{run}"
        stated = [0.1, 0.6, 0.2, 0.1]
        common = dict(model="gpt-test", run=run)
        rows.append(
            _row(
                "model",
                respondent,
                "halo_linen_supplier",
                "control",
                answer=4,
                option_probabilities=stated,
                confidence=0.6,
                **common,
            )
        )
        rows.append(
            _row(
                "model",
                respondent,
                "halo_linen_supplier",
                "treatment",
                answer=6 if run == 1 else 4,
                option_probabilities=[0.1, 0.2, 0.6, 0.1] if run == 1 else stated,
                confidence=0.6,
                **common,
            )
        )
        rows.append(
            _row(
                "model",
                respondent,
                "loss_trade_fair",
                "treatment",
                answer=1,
                option_probabilities=[0.7, 0.3],
                confidence=0.7,
                **common,
            )
        )
        rows.append(
            _row(
                "model", respondent, "anchoring_bakery", "control", status="unparseable", raw_reply="no idea", **common
            )
        )
    return rows


@pytest.fixture
def export(tmp_path):
    return _write(tmp_path, _people_rows() + _model_rows())


def test_looks_like_recognises_only_bias_exports(export):
    assert bias_report.looks_like(EXPORT_COLUMNS)
    assert not bias_report.looks_like(["participant", "item_id", "rating_goal"])
    assert cli.find_reporter(list(EXPORT_COLUMNS)) is bias_report


def test_batches_equal_the_metrics_on_the_same_tests(export):
    summary = bias_report.summarise(bias_report.read_rows([export]))
    assert summary["groups"] == ["people", "gpt-test"]
    halo = summary["metrics"]["halo"]["people"]
    control = [[values[0]] for values in PEOPLE_HALO.values()]
    treatment = [[values[1]] for values in PEOPLE_HALO.values()]
    options = [[2, 4, 6, 8]] * 3
    assert halo["batch"] == pytest.approx(HaloEffectMetric(overall=True).compute(control, treatment, options))
    assert halo["tests"] == 3 and halo["individual_max"] == pytest.approx(1, abs=1e-7)
    loss = summary["metrics"]["loss_aversion"]["people"]
    answers = [[accepted] for person in PEOPLE_LOSS.values() for accepted in person]
    lambdas = [[1.2], [1.5], [2.5]] * 3
    assert loss["batch"] == pytest.approx(LossAversionMetric(overall=True).compute(answers, lambdas))
    confirmation = summary["metrics"]["confirmation"]["people"]
    # p1 agrees and picks 2 pro + 1 con (1/3); p2 disagrees and picks 1 pro + 1 con (0): (1/3 * 8 + 0 * 8) / 16
    assert confirmation["batch"] == pytest.approx(1 / 6)
    assert confirmation["batch"] == pytest.approx(
        ConfirmationBiasMetric(overall=True).compute([[1], [0]], [[2], [1]], [[1], [1]], [[8], [8]])
    )
    low, high = halo["batch_ci"]
    assert low <= halo["batch"] <= high


def test_confidence_variants_by_hand(export):
    summary = bias_report.summarise(bias_report.read_rows([export]))
    halo = summary["metrics"]["halo"]["people"]
    # p1: control 2 (certain), treatment 4 held 0.4 -> 0.4*4 + 0.2*(2+6+8) = 4.8; farthest from 2 is 8: 2.8/6
    # p2: control 6 and treatment 6, both 0.5 -> equal expected values: 0
    # p3: control 8 held 0.9 -> 0.9*8 + (1/30)*(2+4+6) = 7.6; treatment 2 held 0.7 -> 1.4 + 0.1*(4+6+8) = 3.2;
    #     farthest from 7.6 is 2: 4.4 / 5.6
    expected = (2.8 / 6 + 0 + 4.4 / 5.6) / 3
    assert halo["expected_batch"] == pytest.approx(expected, rel=1e-6)
    # weights: mean slider confidence per test 0.7, 0.5, 0.8 on plain values 1/3, 0, 1
    weighted = (0.7 * (2 / 6) + 0.5 * 0 + 0.8 * 1) / (0.7 + 0.5 + 0.8)
    assert halo["weighted_batch"] == pytest.approx(weighted, rel=1e-6)
    model = summary["metrics"]["loss_aversion"]["gpt-test"]
    # both runs accept (lambda 1.5) with stated P(accept) = 0.7: 1 - (0.7/1.5 * 2) / (2/1.5) = 0.3
    assert model["batch"] == pytest.approx(0.0)
    assert model["expected_batch"] == pytest.approx(0.3)
    model_halo = summary["metrics"]["halo"]["gpt-test"]
    # run 1: control E = 0.2+2.4+1.2+0.8 = 4.6, treatment E = 0.2+0.8+3.6+0.8 = 5.4, farthest from 4.6 is 8: 0.8/3.4
    assert model_halo["expected_batch"] == pytest.approx((0.8 / 3.4 + 0) / 2, rel=1e-6)


def test_incomplete_unparseable_and_inattentive_are_counted_and_can_be_excluded(export):
    rows = bias_report.read_rows([export])
    summary = bias_report.summarise(rows)
    assert summary["metrics"]["anchoring_agnostic"]["people"] == {"tests": 0}
    assert summary["counts"]["gpt-test"]["unparseable"] == 2
    assert summary["counts"]["people"]["attention_passed"] == 2
    assert summary["counts"]["people"]["attention_checks"] == 3
    strict = bias_report.summarise(rows, exclude_inattentive=True)
    assert strict["metrics"]["halo"]["people"]["tests"] == 2  # p3 failed the check


def test_people_without_confidence_have_no_variants(tmp_path):
    rows = [
        _row("person", person, "halo_cyclist_campaign", version, answer=answer)
        for person, answers in {"a": (20, 5), "b": (10, 10)}.items()
        for version, answer in zip(("control", "treatment"), answers, strict=True)
    ]
    summary = bias_report.summarise(bias_report.read_rows([_write(tmp_path, rows)]))
    halo = summary["metrics"]["halo"]["people"]
    assert halo["confidence_tests"] == 0 and "expected_batch" not in halo and halo["batch"] == pytest.approx(0.5)


def test_cli_prints_groups_side_by_side_and_json(export, capsys):
    assert cli.main(["report", str(export)]) == 0
    text = capsys.readouterr().out
    header = next(line for line in text.splitlines() if "people" in line and "gpt-test" in line)
    assert header.index("people") < header.index("gpt-test")
    for title in bias_report.METRIC_TITLES.values():
        assert title in text
    assert "expected-answer batch" in text and "confidence-weighted batch" in text and "95% bootstrap CI" in text
    assert cli.main(["report", str(export), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["metrics"]["halo"]["people"]["tests"] == 3
    assert np.isfinite(data["metrics"]["confirmation"]["people"]["batch"])


def test_the_apps_slider_confidence_on_0_to_100_reads_as_the_same_fraction(tmp_path, export):
    """The app exports a person's confidence as the slider showed it (0-100, ``confidence_max`` 100); the report
    reads it as the fraction the metrics use, and gives the same figures as the runner's 0-1 file."""
    people = [dict(row) for row in _people_rows()]
    for row in people:
        if row["confidence"] != "":
            row["confidence"], row["confidence_max"] = round(row["confidence"] * 100), 100
    path = tmp_path / "app_export.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[*EXPORT_COLUMNS, "confidence_max"])
        writer.writeheader()
        writer.writerows(people)
    as_runner = bias_report.summarise(bias_report.read_rows([_write(tmp_path, _people_rows(), name="runner.csv")]))
    as_app = bias_report.summarise(bias_report.read_rows([path]))
    assert as_app["metrics"]["halo"]["people"]["weighted_batch"] == pytest.approx(
        as_runner["metrics"]["halo"]["people"]["weighted_batch"]
    )
    assert as_app == as_runner
