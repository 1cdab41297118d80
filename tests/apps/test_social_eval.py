"""The social_eval app end to end: k-coverage bots, session-creation errors, expiring reservations on a real server
(with a real clock), exports, the admin report, and a server restart."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import shutil
import signal
from urllib.parse import quote

import pytest
import requests

from backend.core.csvio import restore_cell, unescape_text
from backend.social import forms as social_forms
from harness import PROJECT_ROOT
from harness.participants import Annotator
from harness.servers import (
    base_env,
    create_session,
    export_rows,
    run_bots,
    scratch_project,
    script_on_server_session,
    session_start_links,
    start_server,
)
from study_flow import STUDY_IDS_COOKIE
from tests.support.social import RUBRIC, SAMPLES

# A small study: one conversation per person, one person per conversation, reservations of two seconds.
TIGHT = dict(annotators_per_episode=1, episodes_per_annotator=1, attention_checks=0, reservation_timeout_s=2)


def rating_form(reason: str = "A considered reason,\nwritten on two lines.") -> dict:
    values = {}
    for agent in social_forms.AGENTS:
        for slot, dimension in enumerate(RUBRIC.dimensions, start=1):
            values[social_forms.rating_field(agent, slot)] = dimension.max
            values[social_forms.reason_field(agent, slot)] = reason
    return values


def export(server_url: str, function_name: str) -> list[dict]:
    response = requests.get(
        server_url + "/api/export_app_custom",
        params={"app": "social_eval", "function_name": function_name},
        timeout=30,
    )
    response.raise_for_status()
    return list(csv.DictReader(io.StringIO(response.text)))


@pytest.mark.bots
def test_bots_give_every_episode_k_annotators_and_nobody_an_episode_twice():
    result = run_bots("social_eval", participants=8)  # 8 x 3 places for 6 episodes x 2: the late ones find none
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "social_eval coverage check: 6 episodes x 2 annotators, no duplicates" in output
    assert "Bots completed session" in output


def test_an_expired_reservation_goes_to_the_next_annotator(otree_server, server_clock):
    session = create_session(otree_server.url, "social_eval", 4, **TIGHT)
    links = session_start_links(otree_server.url, session["code"])
    first = Annotator(links[0]).to_rating_page()
    second = Annotator(links[1]).to_rating_page()
    assert first.episode_id != second.episode_id  # least covered first: a held episode is not handed out
    server_clock.advance(2.5)  # both reservations expire
    kept = second.reload().episode_id  # nobody took the second annotator's episode meanwhile: renewed on reload
    assert kept == second.episode_id
    third = Annotator(links[2]).to_rating_page()
    assert third.episode_id == first.episode_id  # the first annotator's episode is back in the pool, first in line

    first.submit(rating_form())  # too late: someone else holds it now
    assert first.page == "Rate" and "given to someone else" in first.html
    assert "more than 1 minute," in first.html  # a 2 s reservation, rounded up: never "0 minutes", never "1 minutes"
    assert first.episode_id not in (third.episode_id, kept)
    first.submit(rating_form())
    assert first.page == "Completion"
    second.submit(rating_form())
    assert second.page == "Completion"

    log = [
        row for row in export(otree_server.url, "custom_export_assignments") if row["session_code"] == session["code"]
    ]
    states = {(row["annotator"], row["episode_id"]): row["status"] for row in log}
    codes = [link.rsplit("/", 1)[-1] for link in links]
    assert states[(codes[0], third.episode_id)] == "released"
    assert states[(codes[2], third.episode_id)] == "reserved"
    assert states[(codes[1], kept)] == "done"
    assert sum(status == "done" for status in states.values()) == 2  # first's second episode, and second's


def test_exports_keep_multi_line_reasoning_and_the_report_reads_them(otree_server, tmp_path):
    session = create_session(otree_server.url, "social_eval", 2, annotators_per_episode=2, episodes_per_annotator=1)
    links = session_start_links(otree_server.url, session["code"])
    reason = 'First line, with "quotes", a comma\nand a second line <b>bold?</b>'
    for link in links:
        annotator = Annotator(link).to_rating_page()
        annotator.submit(rating_form(reason))
        while annotator.page == "Rate":  # the attention episode
            annotator.submit(rating_form(reason))
        assert annotator.page == "Completion"

    long_rows = [
        r for r in export(otree_server.url, "custom_export_ratings_long") if r["session_code"] == session["code"]
    ]
    assert len(long_rows) == 2 * 2 * 14  # two annotators x (one episode + one attention episode) x 14 ratings
    assert {unescape_text(row["reasoning"]) for row in long_rows} == {reason}
    assert {row["is_gold"] for row in long_rows} == {"0", "1"}
    assert {row["attention_passed"] for row in long_rows if row["is_gold"] == "1"} <= {"0", "1"}
    relationship = [row for row in long_rows if row["dimension"] == "relationship"]
    assert {(row["scale_min"], row["scale_max"], row["rating"]) for row in relationship} == {("-5", "5", "5")}

    wide = [r for r in export(otree_server.url, "custom_export_ratings_wide") if r["session_code"] == session["code"]]
    assert len(wide) == 4 and all(unescape_text(row["goal_reasoning_2"]) == reason for row in wide)

    path = tmp_path / "social_eval_long.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(long_rows[0]))
        writer.writeheader()
        writer.writerows(long_rows)
    from backend.social.report import report

    text = report([path])
    assert "Attention episodes:" in text and "== sample / both" in text

    admin = requests.get(f"{otree_server.url}/AdminReport/{session['code']}", timeout=30).text
    assert "vendor/chartjs/chart.umd.min.js" in admin and 'id="summary-table"' in admin
    assert re.search(r'id="complete-episodes">\d+</strong> of 6 episodes', admin)


def test_ratings_and_reservations_survive_a_killed_server():
    folder = scratch_project("otree-restart-")
    env = base_env(DATABASE_URL=f"sqlite:///{folder}/restart.sqlite3")
    try:
        server = start_server(kind="prodserver", env=env, folder=folder)
        try:
            session = create_session(
                server.url, "social_eval", 2, annotators_per_episode=1, episodes_per_annotator=2, attention_checks=0
            )
            links = session_start_links(server.url, session["code"])
            first = Annotator(links[0]).to_rating_page()
            rated = first.episode_id
            first.submit(rating_form("Rated before the crash,\non two lines."))
            held = first.episode_id  # the second episode, reserved; the form is half done when the process dies
            assert held != rated
        finally:
            server.stop(signal.SIGKILL)
        server = start_server(kind="prodserver", env=env, folder=folder, port=int(server.url.rsplit(":", 1)[1]))
        try:
            ratings = [row for row in export(server.url, "custom_export_ratings_long") if row["episode_id"] == rated]
            assert len(ratings) == 14 and "Rated before the crash,\non two lines." in {
                unescape_text(r["reasoning"]) for r in ratings
            }
            assert first.reload().episode_id == held  # the reservation is in the database, not in memory
            second = Annotator(links[1]).to_rating_page()
            assert second.episode_id != held
        finally:
            server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_the_completion_page_follows_the_last_task_without_walking_the_unused_rounds(otree_server):
    session = create_session(otree_server.url, "social_eval", 1, episodes_per_annotator=1, attention_checks=0)
    annotator = Annotator(session_start_links(otree_server.url, session["code"])[0]).to_rating_page()
    annotator.submit(rating_form())
    assert annotator.page == "Completion"
    sequence = re.search(r"^page_sequence = \[(.*)\]$", (PROJECT_ROOT / "social_eval/__init__.py").read_text(), re.M)
    pages_per_round = len(sequence.group(1).split(","))
    index_in_pages = int(annotator.url.rstrip("/").rsplit("/", 1)[-1])
    assert index_in_pages <= pages_per_round  # round 1's completion page, not the one of round C.NUM_ROUNDS


ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def test_every_export_row_carries_the_identifiers_and_iso_times(otree_server):
    session = create_session(otree_server.url, "social_eval", 1, episodes_per_annotator=1, attention_checks=1)
    (link,) = session_start_links(otree_server.url, session["code"])
    code, pid = link.rsplit("/", 1)[-1], "5f1c0a3b9d2e4f6a7b8c9d0e"
    study_ids = quote(json.dumps(dict(pid=pid, study_id="-A1-B1", session_id="ps-77")))
    annotator = Annotator(f"{link}?participant_label={pid}", cookies={STUDY_IDS_COOKIE: study_ids}).to_rating_page()
    while annotator.page == "Rate":  # one regular and one attention episode
        annotator.submit(rating_form())
    assert annotator.page == "Completion"

    ids = dict(session_code=session["code"], prolific_pid=pid, study_id="-A1-B1")
    # The participant code once per row: "annotator" (Sotopia's name) in the ratings and the assignment log,
    # "participant_code" in the qualified export (issue 35: a second column with the same code was dropped).
    who = dict(custom_export_qualified="participant_code")
    times = dict(
        custom_export_ratings_long=["shown_at", "submitted_at"],
        custom_export_ratings_wide=["shown_at", "submitted_at"],
        custom_export_qualified=["last_submitted_at"],
        custom_export_assignments=["reserved_at", "done_at"],
    )
    counts = {}
    for function, time_columns in times.items():
        rows = export_rows(otree_server.url, "social_eval", function, session_code=session["code"])
        counts[function] = len(rows)
        column = who.get(function, "annotator")
        expected = {**ids, column: code}
        for row in rows:
            assert not ({"annotator", "participant_code"} - {column}) & set(row), function
            cells = {column: restore_cell(row[column]) for column in [*expected, "prolific_session_id", *time_columns]}
            assert {column: cells[column] for column in expected} == expected, function
            assert cells["prolific_session_id"] == "ps-77", function
            assert all(ISO_UTC.match(cells[column]) for column in time_columns), (function, cells)
    assert counts == dict(
        custom_export_ratings_long=28,
        custom_export_ratings_wide=2,
        custom_export_qualified=1,
        custom_export_assignments=2,
    )


@pytest.mark.parametrize(
    ("language", "too_short", "too_long"),
    [
        ("de", "mit mindestens 20 Zeichen (Sie haben 5 geschrieben)", "auf höchstens 5000 Zeichen (Sie haben 5001"),
        ("it", "con almeno 20 caratteri (ne ha scritti 5)", "a 5000 caratteri (ne ha scritti 5001)"),
    ],
)
def test_a_refused_reasoning_is_explained_in_the_participants_language(otree_server, language, too_short, too_long):
    session = create_session(
        otree_server.url, "social_eval", 1, language=language, episodes_per_annotator=1, attention_checks=0
    )
    annotator = Annotator(session_start_links(otree_server.url, session["code"])[0]).to_rating_page()
    form = rating_form()
    annotator.submit({**form, "reason_1_1": "kurz.", "reason_2_1": "x" * 5001})
    assert annotator.page == "Rate"
    page_text = html.unescape(annotator.html)
    assert too_short in page_text and too_long in page_text
    annotator.submit(form)
    assert annotator.page == "Completion"


def test_a_missing_answer_is_refused_in_the_participants_language_not_otrees_english(otree_server):
    session = create_session(
        otree_server.url,
        "social_eval",
        1,
        language="de",
        episodes_per_annotator=1,
        attention_checks=0,
        comprehension_check=True,
    )
    annotator = Annotator(session_start_links(otree_server.url, session["code"])[0])
    annotator.submit(dict(consent_given="True")).submit({})
    annotator.submit(dict(quiz_1=RUBRIC.comprehension[0].answer))  # two questions left out: not an attempt
    page_text = html.unescape(annotator.html)
    assert annotator.page == "Comprehension" and "noch offen: 2 und 3" in page_text
    assert "This field is required" not in page_text
    annotator.submit({f"quiz_{n}": q.answer for n, q in enumerate(RUBRIC.comprehension, start=1)})
    form = rating_form()
    del form["rating_1_3"]
    form["reason_2_2"] = ""
    annotator.submit(form)
    page_text = html.unescape(annotator.html)
    assert annotator.page == "Rate" and "This field is required" not in page_text
    assert "Bitte wählen Sie eine Bewertung auf der Skala." in page_text
    assert "Bitte begründen Sie Ihre Bewertung." in page_text
    annotator.submit(rating_form())
    assert annotator.page == "Completion"


def rating_rows(page: str) -> str:
    """The rating form's rows of a Rate page, without the errors of a refused form."""
    form = page[page.index('<div class="se-form"') : page.index('name="step_seconds"')]
    return re.sub(r'<div class="form-control-errors">.*?</div>', "", form, flags=re.S)


def test_the_rating_rows_drawn_once_per_session_are_those_the_page_draws_itself(otree_server):
    """The rows of the rating form are drawn once per session and agent (social_eval/views.rows_html); a form shown
    again with its errors is drawn by the page itself, and shows the same rows but for the errors."""
    session = create_session(otree_server.url, "social_eval", 2, episodes_per_annotator=1, attention_checks=0)
    first, second = (
        Annotator(link).to_rating_page() for link in session_start_links(otree_server.url, session["code"])
    )
    drawn_once = rating_rows(first.html)
    assert drawn_once.count('class="se-row"') == 2 * len(RUBRIC.dimensions)
    assert rating_rows(first.reload().html) == drawn_once
    first.submit({**rating_form(), "reason_1_1": "kurz."})
    assert first.page == "Rate" and 'class="form-control-errors"' in first.html
    assert rating_rows(first.html) == drawn_once
    second.submit({**rating_form(), "reason_2_3": ""})
    assert second.page == "Rate" and rating_rows(second.html) == rating_rows(second.reload().html)


READ_STUDY_TWICE = r"""
import json, sys
from lab_server.otree_internals import setup
setup()
from lab_server import otree_internals as internals
internals.save_sqlite_db  # noqa: B018 (sets up the database layer as oTree's command line does)
import sqlalchemy
from social_eval import study
writes, written = [0], []
def counting(connection, cursor, statement, *args):
    writes[0] += statement.lstrip().upper().startswith("UPDATE OTREE_SESSION")
for _ in range(2):  # two page requests, each with a database session of its own
    internals.db.new_session()
    if not written:
        sqlalchemy.event.listen(internals.db._db.get_bind(), "before_cursor_execute", counting)
    session = internals.db.query(internals.Session).filter_by(code=sys.argv[1]).one()
    before = writes[0]
    ids = study.study(session)["regular_ids"]
    internals.db._db.flush()  # what the request's commit writes
    written.append(writes[0] - before)
print(json.dumps(dict(written=written, ids=ids, kept=sorted(session.vars["social_eval"]))))
"""


def test_the_study_material_is_read_without_writing_the_session_back_on_every_step():
    """oTree marks a session's vars changed when they are read and writes them back whole with the request: the
    episode ids (46 kB in a session of 3,000) were written twice per annotator. Read once per process now."""
    result, _ = script_on_server_session("social_eval", 2, READ_STUDY_TWICE)
    assert result["written"] == [1, 0]  # only the first reading in this process writes it back, as oTree's .vars does
    # the regular ids are the stored episodes', in the episodes file's order, not a list in the session's vars
    # (unpickled with the session's row on every request)
    assert result["ids"] == [episode.id for episode in SAMPLES.values() if not episode.is_gold]
    assert result["kept"] == ["gold_ids", "rubric"]
