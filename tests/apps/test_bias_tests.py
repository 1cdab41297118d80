"""The bias_tests app end to end: bots and their export, the report with people and a model side by side, the
researcher's item file, escaping, the admin report, and a person in a real browser."""

from __future__ import annotations

import copy
import csv
import json
import re

import pytest
import requests
from playwright.sync_api import expect

from backend.bias import report as bias_report
from backend.bias.items import DEFAULT_ITEMS_PATH, load_items
from backend.bias.runner import main as run_model
from backend.bias.runner import output_path
from bias_tests.exports import PERSON_COLUMNS
from harness.servers import create_session, export_rows, next_page, run_bots, session_start_links
from tests.support.bias_replies import responder

ITEMS = load_items()
PER_PERSON = sum(len(item.versions) for item in ITEMS.items)
SAMPLE = json.loads(DEFAULT_ITEMS_PATH.read_text(encoding="utf-8"))


def check_person_order(rows: list[dict]) -> None:
    """Controls before treatments and never a test's two versions back to back, for one person."""
    ordered = sorted(rows, key=lambda row: int(row["position"]))
    assert [int(row["position"]) for row in ordered] == list(range(1, len(ordered) + 1))
    versions = [row["version"] for row in ordered if row["version"] != "check"]
    assert versions == sorted(versions)
    assert all(a["item_id"] != b["item_id"] for a, b in zip(ordered, ordered[1:], strict=False))


@pytest.mark.bots
def test_bots_export_and_the_report_shows_people_and_the_model_side_by_side(tmp_path, capsys, llm_server):
    result = run_bots("bias_tests", participants=4, export_dir=tmp_path)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    people = tmp_path / "bias_tests_custom.csv"
    assert people.read_text(encoding="utf-8").splitlines()[0] == ",".join(PERSON_COLUMNS)
    with people.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4 * PER_PERSON
    by_person: dict[str, list] = {}
    for row in rows:
        by_person.setdefault(row["respondent_id"], []).append(row)
    assert len(by_person) == 4
    for person_rows in by_person.values():
        assert sorted((r["item_id"], r["version"]) for r in person_rows) == sorted(
            (item.id, version) for item in ITEMS.items for version in item.versions
        )
        check_person_order(person_rows)
    # confidence on the slider's scale, as the person saw it (0-100), its top in confidence_max
    assert all(0 <= float(row["confidence"]) <= 100 for row in rows if row["confidence"])
    assert {row["confidence_max"] for row in rows if row["confidence"]} == {"100"}
    assert any(float(row["confidence"]) > 1 for row in rows)
    assert {row["n_arguments"] for row in rows if row["arguments_shown"]} == {"8"}
    assert sorted(row["is_correct"] for row in rows if row["bias"] == "attention_check") == ["0", "1", "1", "1"]

    # The model answers through the local OpenAI-compatible server; it never answers one item readably.
    llm_server.responder = responder
    command = ["--model", "test-model", "--base-url", llm_server.base_url, "--repeats", "3", "--out", str(tmp_path)]
    assert run_model([*command, "--quiet"]) == 0
    capsys.readouterr()
    model = output_path(tmp_path, "test-model", ITEMS)
    from backend.__main__ import main as report_main

    assert report_main(["report", str(people), str(model)]) == 0
    text = capsys.readouterr().out
    halo_table = text.split("Halo effect")[0].splitlines()[-1] + "\n" + text.split("Halo effect")[1][:800]
    assert re.search(r"people\s+test-model \[stated\]", halo_table), halo_table
    assert re.search(r"unparseable answers\s+0\s+6", text), text[:600]  # 2 halo versions x 3 runs
    summary = bias_report.summarise(bias_report.read_rows([people, model]))
    assert summary["groups"] == ["people", "test-model [stated]"]
    for name in bias_report.METRICS:
        for group in ("people", "test-model [stated]"):
            figures = summary["metrics"][name][group]
            assert 0 <= figures["batch"] <= 1
            assert figures["batch_ci"][0] <= figures["batch"] <= figures["batch_ci"][1]
    assert summary["metrics"]["halo"]["people"]["tests"] == 8
    assert summary["metrics"]["halo"]["test-model [stated]"]["tests"] == 3  # the refused halo item is left out
    assert summary["metrics"]["halo"]["test-model [stated]"]["expected_batch"] is not None
    assert summary["counts"]["people"]["attention_passed"] == 3


def _item_file(tmp_path, change) -> str:
    data = copy.deepcopy(SAMPLE)
    change(data)
    path = tmp_path / "researcher_items.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_researcher_item_file_is_used_and_its_text_is_escaped(otree_server, tmp_path):
    def smaller(data):
        data["name"] = "researcher_set"
        data["items"] = [item for item in data["items"] if item["bias"] in ("halo", "loss_aversion")]
        data["items"][0]["scenario"] = "A <script>alert('x')</script> supplier."

    session = create_session(otree_server.url, "bias_tests", 1, item_file=_item_file(tmp_path, smaller))
    link = session_start_links(otree_server.url, session["code"])[0]
    with requests.Session() as browser:
        page = browser.get(link, timeout=30)
        form = {"consent_given": "True"}
        page = browser.post(page.url, data=form, timeout=30)  # consent
        assert "You will read 7 short situations" in page.text
        page = browser.post(page.url, data={}, timeout=30)  # instructions
        assert "Item 1 of 7" in page.text
        escaped_pages = 0
        for _ in range(7):
            assert "<script>alert" not in page.text
            escaped_pages += "&lt;script&gt;alert" in page.text
            page = browser.post(page.url, data={"choice": "0", "confidence": "70"}, timeout=30)
        assert escaped_pages == 2  # the item's control and treatment pages
    rows = export_rows(otree_server.url, "bias_tests", "custom_export", session_code=session["code"])
    assert len(rows) == 7 and {row["item_set"] for row in rows} == {"researcher_set"}
    assert {row["confidence"] for row in rows} == {"70"}


def test_a_broken_item_file_stops_session_creation_with_its_field(otree_server, tmp_path):
    def broken(data):
        data["items"][0]["anchor"] = 999

    response = requests.post(
        otree_server.url + "/api/sessions",
        json=dict(
            session_config_name="bias_tests",
            num_participants=1,
            modified_session_config_fields={"item_file": _item_file(tmp_path, broken)},
        ),
        timeout=30,
    )
    assert response.status_code >= 400
    assert "researcher_items.json: items[0] (anchoring_bakery).anchor_sentence: must hold exactly one number" in (
        response.text
    )


@pytest.mark.browser
def test_a_person_completes_the_tests_with_slider_and_argument_selection(otree_server, page):
    session = create_session(otree_server.url, "bias_tests", 1, order_seed=7)
    page.goto(session_start_links(otree_server.url, session["code"])[0])
    page.get_by_label("I have read the information above and agree to take part.").check()
    next_page(page)
    next_page(page)  # instructions

    confidences, selections, seen_slider_error = [], [], False
    for step in range(PER_PERSON):
        # waits for the next page: the progress text changes with every test
        expect(page.locator(".study-progress-text")).to_have_text(f"Item {step + 1} of {PER_PERSON}")
        if page.locator("#argument-list").count():
            boxes = page.locator(".bias-argument")
            assert boxes.count() == 8
            boxes.nth(1).check()
            boxes.nth(4).check()
            selections.append([boxes.nth(1).get_attribute("value"), boxes.nth(4).get_attribute("value")])
        else:
            page.locator("input[name=choice]").nth(1).check()
            if not seen_slider_error:  # the answer alone is refused: the slider must be moved; the answer is kept
                next_page(page)
                expect(page.locator("body")).to_contain_text("Please use the slider")
                expect(page.locator("input[name=choice]").nth(1)).to_be_checked()
                seen_slider_error = True
            value = 10 + 5 * step
            page.locator("#confidence-slider").fill(str(value))
            assert page.locator("#confidence-value").inner_text() == str(value)
            confidences.append(value)
        next_page(page)
    expect(page.locator("#_otree-title")).to_have_text("Thank you!")

    rows = sorted(
        export_rows(otree_server.url, "bias_tests", "custom_export", session_code=session["code"]),
        key=lambda row: int(row["position"]),
    )
    assert len(rows) == PER_PERSON
    check_person_order(rows)
    assert [float(row["confidence"]) for row in rows if row["confidence"]] == pytest.approx(confidences)
    assert [json.loads(row["arguments_selected"]) for row in rows if row["arguments_selected"]] == selections
    assert all(row["confidence_source"] == "slider" for row in rows if row["confidence"])

    page.goto(f"{otree_server.url}/AdminReport/{session['code']}")
    page.wait_for_function("() => window.Chart && Chart.getChart(document.getElementById('bias-batches'))")
    chart = page.evaluate("() => Chart.getChart(document.getElementById('bias-batches')).data.datasets[0].label")
    assert chart == "people: batch"
    assert page.locator("table.bias-metric").count() == len(bias_report.METRICS)
