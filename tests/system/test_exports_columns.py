"""The exports a researcher downloads: the wide export without app columns that hold nothing, the per-app custom
exports without placeholder columns, and one session's rows (oTree's ``session_code`` filter and the admin report's
download buttons), every cell still neutralised.

The sessions are those of tests/system/test_csv_neutralisation.py (one of each app, formula text typed everywhere),
plus a second social_eval session, so "one session" is a real filter.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
import requests

from backend.bias.export import EXPORT_COLUMNS
from backend.codebook import otree as otree_codebook
from backend.core.csvio import FORMULA_STARTS
from bias_tests.exports import MODEL_ONLY_COLUMNS
from harness.participants import answer_one_bias_question
from harness.servers import export_rows
from study_flow.config import key_words
from tests.system.test_csv_neutralisation import (
    REASONING,
    answer_bias_tests,
    judge_in_payoff_reasoning,
    play_dond_person_vs_person,
    rate_in_social_eval,
    visitors,
)

pytestmark = pytest.mark.slow

APPS = ("dond", "social_eval", "payoff_reasoning_eval", "bias_tests")


def answer_a_bias_question(server_url: str) -> None:
    """One bias_tests participant answers until one answer is stored."""
    [person] = visitors(server_url, "bias_tests", 1, "Q")
    answer_one_bias_question(person)


@pytest.fixture(scope="module")
def otree_server(own_otree_server):
    """A server of this module's own: the tests below read whole exports, which hold every session of the server."""
    return own_otree_server


@pytest.fixture(scope="module")
def filled(otree_server):
    play_dond_person_vs_person(otree_server.url)
    rate_in_social_eval(otree_server.url)
    rate_in_social_eval(otree_server.url)  # a second session of the same app
    judge_in_payoff_reasoning(otree_server.url)
    answer_bias_tests(otree_server.url)
    answer_a_bias_question(otree_server.url)
    return otree_server


def wide(server_url: str) -> list[list[str]]:
    response = requests.get(server_url + "/api/export_wide", timeout=120)
    response.raise_for_status()
    return list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))


def test_the_wide_export_has_no_app_column_that_is_empty_for_everyone(filled):
    rows = wide(filled.url)
    header, body = rows[0], rows[1:]
    apps = {name.split(".")[0] for name in header} & set(APPS)
    assert apps == set(APPS)
    for index, name in enumerate(header):
        if name.split(".")[0] in APPS:
            assert any(row[index] != "" for row in body), f"{name} is empty in every row"
    # the data is there: the first round's ratings, the judge's verdict, the bias answer
    assert "social_eval.1.player.rating_1_1" in header and "payoff_reasoning_eval.1.player.orig_cor" in header
    assert not [name for name in header if name.startswith("social_eval.15.")]  # nobody reached round 15
    counts = {app: sum(name.startswith(app + ".") for name in header) for app in APPS}
    print(f"wide export: {len(header)} columns, {len(body)} participants, per app {counts}")
    assert len(header) < 700  # oTree's own header for these sessions: 2,000+ (every field x every round x app)


def test_every_column_of_otrees_own_exports_has_a_codebook_entry(filled):
    """oTree's wide export and each app's export, from sessions of every app: no column without an entry in
    backend/codebook/otree.py; each session key it writes has its words (label and help); progress_done is filled
    where the app counts items and empty in dond, as its entry says (issue 35)."""
    rows = wide(filled.url)
    header, body = rows[0], rows[1:]
    assert otree_codebook.wide_undescribed(header) == []
    words = key_words()  # every session key's label and help (the Create-session page, the Session keys reference)
    keys = [name.removeprefix("session.config.") for name in header if name.startswith("session.config.")]
    assert keys and [key for key in keys if key != "name" and key not in words] == []
    app_at, done_at = header.index("participant._current_app_name"), header.index("participant.progress_done")
    progress = {}
    for row in body:
        progress.setdefault(row[app_at], set()).add(row[done_at] != "")
    assert progress["dond"] == {False} and progress["bias_tests"] == {True}, progress
    for app in APPS:
        response = requests.get(filled.url + "/api/export_app", params=dict(app=app), timeout=120)
        response.raise_for_status()
        own = next(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
        assert otree_codebook.app_undescribed(app, own) == [], app


def test_custom_exports_hold_one_session_when_asked_and_start_with_the_session(filled):
    everyone = export_rows(filled.url, "social_eval", "custom_export_ratings_long")
    codes = sorted({row["session_code"] for row in everyone})
    assert len(codes) == 2
    for code in codes:
        mine = export_rows(filled.url, "social_eval", "custom_export_ratings_long", session_code=code)
        assert mine and {row["session_code"] for row in mine} == {code}
        assert len(mine) == sum(row["session_code"] == code for row in everyone)
    for app, function in (
        ("social_eval", "custom_export_ratings_long"),
        ("social_eval", "custom_export_ratings_wide"),
        ("social_eval", "custom_export_qualified"),
        ("social_eval", "custom_export_assignments"),
        ("payoff_reasoning_eval", "custom_export_assignments"),
        ("bias_tests", "custom_export"),
    ):
        response = requests.get(
            filled.url + "/api/export_app_custom", params=dict(app=app, function_name=function), timeout=60
        )
        assert response.text.splitlines()[0].split(",")[0] == "session_code", (app, function)


def test_the_bias_export_has_no_model_only_placeholder_columns(filled):
    rows = export_rows(filled.url, "bias_tests", "custom_export")
    assert rows
    header = list(rows[0])
    assert not set(header) & set(MODEL_ONLY_COLUMNS)
    assert set(header) - set(EXPORT_COLUMNS) == {"config_name", "language", "is_test", "option_index"} | {
        "confidence_max",
        "integrity",
    }
    assert set(EXPORT_COLUMNS) - set(header) == set(MODEL_ONLY_COLUMNS)
    assert all(row["respondent_kind"] == "person" for row in rows)


def report_downloads(server_url: str, session_code: str) -> list[dict]:
    report = requests.get(f"{server_url}/AdminReport/{session_code}", timeout=60).text
    found = re.search(r'<script type="application/json" id="downloads-json">(.*?)</script>', report, re.S)
    return json.loads(found.group(1))


def test_the_admin_reports_offer_their_own_sessions_rows_neutralised(filled):
    everyone = export_rows(filled.url, "social_eval", "custom_export_ratings_long")
    for code in sorted({row["session_code"] for row in everyone}):
        downloads = {item["file"]: item["csv"] for item in report_downloads(filled.url, code)}
        long = list(csv.DictReader(io.StringIO(downloads[f"social_eval_ratings_long_{code}.csv"])))
        assert long and {row["session_code"] for row in long} == {code}
        assert {row["reasoning"] for row in long} == {"'" + REASONING}  # neutralised, as every export
        for text in downloads.values():
            for row in csv.reader(io.StringIO(text)):
                assert not [cell for cell in row if cell[:1] in FORMULA_STARTS and not _number(cell)], row
    payoff_code = export_rows(filled.url, "payoff_reasoning_eval", "custom_export_assignments")[0]["session_code"]
    files = [item["file"] for item in report_downloads(filled.url, payoff_code)]
    assert files == [
        f"payoff_reasoning_protocol_with_ids_{payoff_code}.csv",
        f"payoff_reasoning_assignments_{payoff_code}.csv",
        "payoff_reasoning_codebook.csv",  # what every column of the files beside it means
    ]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True
