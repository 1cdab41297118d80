"""The exports a researcher downloads, from a real server on an SQLite file: their headers are the codebook's, demo
(test) sessions stay out of the exports of all sessions and are marked in the export of their own session, and rows
corrupted by hand in the database are flagged (``integrity``) without failing the export of the others (issue 23).
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import shutil
import sqlite3

import pytest
import requests
import websockets

from backend import codebook
from harness.participants import Person, answer_one_bias_question
from harness.servers import base_env, export_rows, scratch_project, session_start_links, start_server
from tests.system.test_csv_neutralisation import (
    answer_bias_tests,
    judge_in_payoff_reasoning,
    play_dond_person_vs_person,
    rate_in_social_eval,
)
from tests.system.test_exports_columns import answer_a_bias_question

pytestmark = pytest.mark.slow

APPS = ("dond", "social_eval", "payoff_reasoning_eval", "bias_tests")


def create_demo_session(server_url: str, config: str) -> str:
    """A session made as oTree's /demo page makes it (its socket), so the session is a demo (a test); its code."""

    async def create():
        async with websockets.connect(server_url.replace("http", "ws", 1) + "/create_demo_session") as socket:
            await socket.send(json.dumps({"session_config": config}))
            while True:
                answer = json.loads(await asyncio.wait_for(socket.recv(), 120))
                if "session_url" in answer:
                    return answer["session_url"].rstrip("/").split("/")[-1]
                assert "error" not in answer, answer

    return asyncio.run(create())


def answer_in_demo(server_url: str, code: str) -> None:
    """The first demo participant answers one bias question."""
    person = Person(session_start_links(server_url, code)[0], code)
    answer_one_bias_question(person)


@pytest.fixture(scope="module")
def server():
    folder = scratch_project("otree-codebook-")
    # oTree keeps an SQLite database in db.sqlite3 of the folder it runs in (DATABASE_URL only says "sqlite").
    database = folder / "db.sqlite3"
    running = start_server(kind="prodserver", env=base_env(DATABASE_URL="sqlite:///db.sqlite3"), folder=folder)
    try:
        play_dond_person_vs_person(running.url)
        for _ in range(2):  # two sessions of each annotation app: one is corrupted below, the other stays sound
            rate_in_social_eval(running.url)
            judge_in_payoff_reasoning(running.url)
            answer_a_bias_question(running.url)
        answer_bias_tests(running.url)
        demo = create_demo_session(running.url, "bias_tests")
        answer_in_demo(running.url, demo)
        running.database, running.demo = database, demo
        yield running
    finally:
        running.stop()
        shutil.rmtree(folder, ignore_errors=True)


def header(server_url: str, app: str, function: str, **params) -> list[str]:
    response = requests.get(
        server_url + "/api/export_app_custom", params=dict(app=app, function_name=function, **params), timeout=120
    )
    assert response.status_code == 200, (app, function, response.text[-2000:])
    return next(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))


def custom_exports(server_url: str) -> list[tuple[str, str]]:
    page = requests.get(server_url + "/ExportIndex", timeout=60).text
    return sorted(set(re.findall(r'data-app="([a-z_]+)" data-custom="1" data-export-name="(custom_export\w*)"', page)))


def test_every_export_has_exactly_the_codebooks_columns_and_the_data_page_says_what_a_row_is(server):
    listed = custom_exports(server.url)
    assert {app for app, _ in listed} == set(APPS)
    page = requests.get(server.url + "/ExportIndex", timeout=60).text
    for app, function in listed:
        if function == codebook.CODEBOOK_FUNCTION:
            rows = export_rows(server.url, app, function)
            assert {row["app"] for row in rows} == {app}
            assert {(row["export"], row["column"]) for row in rows} == {
                (key[1], column)
                for key, export in codebook.EXPORTS.items()
                if key[0] == app
                for column in [c.name for c in export.columns]
            } | {(row[1], row[3]) for row in codebook.otree.codebook_rows(app)}  # and oTree's own exports
            continue
        assert codebook.unmatched(app, function, header(server.url, app, function)) == ([], []), (app, function)
        assert codebook.description(app, function) in page.replace("&#x27;", "'").replace("&#39;", "'")
    assert {function for app, function in listed if app == "social_eval"} >= {
        "custom_export_ratings_long",
        "custom_export_ratings_wide",
        "custom_export_qualified",
        "custom_export_assignments",
        "custom_export_codebook",
    }


def test_a_demo_session_stays_out_of_the_exports_of_all_sessions_and_is_marked_in_its_own(server):
    everyone = export_rows(server.url, "bias_tests", "custom_export")
    assert everyone and server.demo not in {row["session_code"] for row in everyone}
    assert {row["is_test"] for row in everyone} == {"0"}
    assert {row["config_name"] for row in everyone} == {"bias_tests"} and {row["language"] for row in everyone} == {
        "en"
    }
    demo_rows = export_rows(server.url, "bias_tests", "custom_export", session_code=server.demo)
    assert demo_rows and {(row["session_code"], row["is_test"]) for row in demo_rows} == {(server.demo, "1")}
    assert {row["confidence"] for row in demo_rows} == {"60"} and {row["confidence_max"] for row in demo_rows} == {
        "100"
    }
    assert {row["option_index"] for row in demo_rows} == {"0"}


def corrupt(database, statements: list[str]) -> None:
    with sqlite3.connect(database) as connection:
        for statement in statements:
            assert connection.execute(statement).rowcount == 1, statement


def flagged(rows: list[dict]) -> list[dict]:
    return [row for row in rows if row["integrity"]]


def test_rows_corrupted_by_hand_are_flagged_and_every_other_row_is_exported(server):
    before = {
        (app, function): export_rows(server.url, app, function)
        for app, function in (
            ("social_eval", "custom_export_ratings_long"),
            ("social_eval", "custom_export_ratings_wide"),
            ("social_eval", "custom_export_assignments"),
            ("payoff_reasoning_eval", "custom_export"),
            ("payoff_reasoning_eval", "custom_export_protocol_with_ids"),
            ("payoff_reasoning_eval", "custom_export_assignments"),
            ("bias_tests", "custom_export"),
        )
    }
    for key, rows in before.items():
        assert rows and not flagged(rows), key
    social = before[("social_eval", "custom_export_ratings_wide")][0]["session_code"]
    payoff = before[("payoff_reasoning_eval", "custom_export")][0]["session_code"]
    bias = [row for row in before[("bias_tests", "custom_export")] if row["bias"] != "confirmation"][0]
    first_player = "(SELECT MIN(p.id) FROM {app}_player p JOIN otree_session s ON p.session_id = s.id WHERE s.code = '{code}' AND {done})"
    corrupt(
        server.database,
        [
            "UPDATE social_eval_player SET rating_1_2 = 'lots', reason_2_1 = NULL WHERE id = "
            + first_player.format(app="social_eval", code=social, done="p.submitted_at IS NOT NULL"),
            "UPDATE social_eval_assignment SET reserved_at = 'yesterday', status = 'lost' WHERE id = (SELECT MIN(a.id) "
            "FROM social_eval_assignment a JOIN social_eval_subsession u ON a.subsession_id = u.id JOIN otree_session s "
            f"ON u.session_id = s.id WHERE s.code = '{social}')",
            "UPDATE payoff_reasoning_eval_player SET orig_cor = 7, con_mat = 'maybe', attempts = 'many' WHERE id = "
            + first_player.format(app="payoff_reasoning_eval", code=payoff, done="p.con_mat IS NOT NULL"),
            "UPDATE payoff_reasoning_eval_assignment SET finished_at = 'soon' WHERE id = (SELECT MIN(a.id) "
            "FROM payoff_reasoning_eval_assignment a JOIN payoff_reasoning_eval_subsession u ON a.subsession_id = u.id "
            f"JOIN otree_session s ON u.session_id = s.id WHERE s.code = '{payoff}' AND a.status = 'done')",
            "UPDATE bias_tests_player SET choice = 42, confidence = 'high' WHERE id = "
            + first_player.format(app="bias_tests", code=bias["session_code"], done="p.answered_at IS NOT NULL"),
        ],
    )
    for (app, function), rows in before.items():
        for session_code in (None, rows[0]["session_code"]):
            after = export_rows(server.url, app, function, session_code=session_code)  # answers 200, never 500
            expected = [row for row in rows if session_code in (None, row["session_code"])]
            assert len(after) == len(expected), (app, function, session_code)
            assert all(row in expected for row in after if not row["integrity"]), (app, function)  # untouched
            assert flagged(after), (app, function, session_code)
        for session_code in (None, rows[0]["session_code"]):  # the gold results read the same (corrupted) ratings
            export_rows(server.url, "social_eval", "custom_export_qualified", session_code=session_code)
    long = export_rows(server.url, "social_eval", "custom_export_ratings_long", session_code=social)
    broken = flagged(long)
    assert {row["integrity"] for row in broken} == {
        "rating_1_2: 'lots' is not a whole number from -5 to 5; reason_2_1: missing"
    }
    assert sum(row["rating"] == "" for row in broken) == 1 and len(broken) == 14  # the other 13 ratings are there
    wide = flagged(export_rows(server.url, "social_eval", "custom_export_ratings_wide"))
    assert len(wide) == 1 and wide[0]["relationship_1"] == "" and wide[0]["believability_1"] != ""
    [log] = flagged(export_rows(server.url, "social_eval", "custom_export_assignments"))
    assert log["reserved_at"] == "" and "reserved_at: 'yesterday' is not a time" in log["integrity"]
    assert "status: 'lost'" in log["integrity"]
    [verdict] = flagged(export_rows(server.url, "payoff_reasoning_eval", "custom_export"))
    assert verdict["orig_cor"] == "" and verdict["con_mat"] == "" and verdict["attempts"] == ""
    assert verdict["participant_code"] and verdict["session_code"] == payoff
    [judged] = flagged(export_rows(server.url, "payoff_reasoning_eval", "custom_export_assignments"))
    assert "finished_at: 'soon' is not a time" in judged["integrity"]
    [answer] = flagged(export_rows(server.url, "bias_tests", "custom_export"))
    assert (
        answer["item_id"] == bias["item_id"] and answer["answer"] == "" and "unreadable answer" in answer["integrity"]
    )
    # the admin reports of the corrupted sessions still open
    for code in (social, payoff, bias["session_code"]):
        report = requests.get(f"{server.url}/AdminReport/{code}", timeout=60)
        assert report.status_code == 200, (code, report.text[-1500:])


def test_the_create_session_page_gives_each_key_a_label_and_a_line_of_help(server):
    page = requests.get(server.url + "/create_session", timeout=60).text
    assert "<b>Messages per player</b> <code>max_messages</code>" in page
    assert "Chat messages each side may send before both must make a proposal." in page
    assert "<b>Prolific completion code</b> <code>completion_code</code>" in page
    assert "<b>max_messages</b>" not in page and "<b>llm_model</b>" not in page
    assert "Where things are" not in page and "form.py" not in page


@pytest.mark.parametrize(
    "posted",
    [
        "implausible",  # more time on the steps than the page was open
        '{"rating_1_1": "many"}',  # not one time per step
    ],
)
def test_forged_step_times_are_not_stored(server, posted):
    from backend.social import forms as social_forms
    from backend.social.rubrics import load_rubric
    from tests.system.test_csv_neutralisation import visitors

    rubric = load_rubric()
    fields = [
        social_forms.rating_field(a, s) for a in social_forms.AGENTS for s in range(1, len(rubric.dimensions) + 1)
    ]
    if posted == "implausible":
        posted = json.dumps(dict.fromkeys(fields, 9999))
    [annotator] = visitors(server.url, "social_eval", 1, "T", attention_checks=0, annotators_per_episode=1)
    annotator.advance_to("Rate")
    form = {"step_seconds": posted}
    for agent in social_forms.AGENTS:
        for slot, dimension in enumerate(rubric.dimensions, start=1):
            form[social_forms.rating_field(agent, slot)] = dimension.max
            form[social_forms.reason_field(agent, slot)] = "A reason that is long enough to count."
    annotator.submit(form)
    rows = export_rows(server.url, "social_eval", "custom_export_ratings_long", session_code=annotator.session_code)
    assert len(rows) == len(fields)  # the ratings are stored; only the timings are not
    assert {(row["step_times_ok"], row["step_seconds"]) for row in rows} == {("0", "")}
