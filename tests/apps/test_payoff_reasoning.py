"""The payoff_reasoning_eval app end to end: bot export, session-creation errors, upload, admin report, a real judge."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import requests
from playwright.sync_api import expect

from backend.codebook.reasoning import PROTOCOL_BESIDE
from backend.reasoning.games import GAMES
from backend.reasoning.logs import confusion_label, failed_queries_field, read_log_folder
from backend.reasoning.protocol import PROTOCOL_COLUMNS, read_protocol_form
from harness import PROJECT_ROOT
from harness.servers import create_session, export_rows, next_page, run_bots, session_start_links

SAMPLE_FOLDER = PROJECT_ROOT / "payoff_reasoning_eval" / "logs"
TWO_ATTEMPTS = "demo-reasoner_pd_p1_1_5_0_3_0_1001.txt"


APP = "payoff_reasoning_eval"


def sample_logs():
    logs, errors = read_log_folder(SAMPLE_FOLDER, games=GAMES)
    assert errors == []
    return {log.filename: log for log in logs}


@pytest.mark.bots
def test_bot_session_export_has_the_protocol_columns_values_and_all_four_cells(tmp_path):
    result = run_bots("payoff_reasoning_eval", export_dir=tmp_path)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    path = tmp_path / "payoff_reasoning_eval_custom.csv"
    header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[: len(PROTOCOL_COLUMNS)] == list(PROTOCOL_COLUMNS)  # the published 12, then who, where, when
    assert header[len(PROTOCOL_COLUMNS) :] == PROTOCOL_BESIDE
    form = read_protocol_form(path)
    logs = sample_logs()
    assert len(form) == 3 * len(logs)  # judges_per_log = 3, three judges each taking every log
    assert form["file"].value_counts().to_dict() == {name: 3 for name in logs}
    for row in form.itertuples():
        log = logs[row.file]
        assert (row.game, row.attempts, row.orig_choice, row.final_choice) == (
            log.game,
            len(log.attempts),
            log.orig_choice,
            log.final_choice,
        )
        assert row.failed_queries == failed_queries_field(log)
        assert row.con_mat == confusion_label(row.orig_cor, log.check_passed)
        if row.attempts == 1:
            assert row.fin_cor == row.orig_cor
        assert row.remarks == "bot judge\\nsecond line"  # line break kept as \n
    assert set(form["con_mat"]) == {"TP", "FP", "FN", "TN"}


def test_a_broken_log_stops_session_creation_with_file_and_line(otree_server):
    upload = {
        "good_sh_p1_1_3_0_5_0_1.txt": "###ATTEMPT##0~\nRESPONSE##\nB pays 5 if both pick it. {B}~\n",
        "broken_pd_p1_1_5_0_3_0_2.txt": "###ATTEMPT##0~\nRESPONSE##\nI cannot decide.~\n",
        "stray_hd_p1_0_5_1_3_0_3.txt": "notes\n###ATTEMPT##0~\nRESPONSE##\n{R}~\n",
    }
    response = requests.post(
        otree_server.url + "/api/sessions",
        json=dict(
            session_config_name="payoff_reasoning_eval",
            num_participants=1,
            modified_session_config_fields={"logs_upload": json.dumps(upload)},
        ),
        timeout=30,
    )
    assert response.status_code >= 400
    assert "broken_pd_p1_1_5_0_3_0_2.txt, line 2: the RESPONSE of attempt 0 contains no choice" in response.text
    assert "stray_hd_p1_0_5_1_3_0_3.txt, line 1: text before" in response.text


def test_uploaded_logs_and_the_admin_report(otree_server):
    upload = {name: (SAMPLE_FOLDER / name).read_text(encoding="utf-8") for name in sorted(sample_logs())[:2]}
    session = create_session(
        otree_server.url, "payoff_reasoning_eval", 2, logs_upload=json.dumps(upload), judges_per_log=2
    )
    html = requests.get(f"{otree_server.url}/AdminReport/{session['code']}", timeout=30).text
    assert "0 of 4 judgements done" in html
    for name in upload:
        assert name in html
    payload = html.split('<script type="application/json" id="protocol-csv">')[1].split("</script>")[0]
    assert json.loads(payload) == ";".join(PROTOCOL_COLUMNS) + "\n"


def slow_network(page, *, latency_ms: int = 250) -> None:
    """Every response reaches the page ``latency_ms`` later, as on a busy server: a test that reads a page before the
    next one has loaded fails here every time instead of now and then."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": latency_ms, "downloadThroughput": -1, "uploadThroughput": -1},
    )


@pytest.mark.browser
def test_a_judge_marks_two_sentences_and_the_export_holds_them(otree_server, page):
    name = "browser-judge_pd_p1_1_5_0_3_0_4242.txt"  # a name no other session uses
    upload = {name: (SAMPLE_FOLDER / TWO_ATTEMPTS).read_text(encoding="utf-8")}
    session = create_session(
        otree_server.url,
        "payoff_reasoning_eval",
        1,
        logs_upload=json.dumps(upload),
        judges_per_log=1,
        logs_per_judge=1,
    )
    page.goto(session_start_links(otree_server.url, session["code"])[0])
    page.get_by_label("I have read the information above and agree to take part.").check()
    next_page(page)  # consent
    next_page(page)  # instructions

    expect(page.locator("#last-response")).to_be_visible()  # two attempts: the last response is shown too
    first = page.locator("#first-response .sentence").nth(2)
    last = page.locator("#last-response .sentence").nth(1)
    clicked = [first.inner_text(), last.inner_text()]
    first.click()
    last.click()
    expect(page.locator("#marked-list li .marked-text")).to_have_text(clicked)
    page.locator("#id_orig_cor-1").check()  # incorrect
    page.locator("#id_fin_cor-0").check()  # correct
    page.locator("#err-pa").check()
    page.locator("#err-rga").check()
    next_page(page)
    expect(page.get_by_text("You have completed the study.", exact=True)).to_be_visible()

    [row] = [row for row in export_rows(otree_server.url, APP, "custom_export") if row["file"] == name]
    assert row["sentence"] == "#".join(clicked)
    assert (row["orig_cor"], row["fin_cor"], row["err_type"], row["con_mat"]) == ("0", "1", "pa#rga", "TN")
    [held] = [row for row in export_rows(otree_server.url, APP, "custom_export_assignments") if row["file"] == name]
    assert held["status"] == "done" and held["finished_at"] >= held["reserved_at"] > "2025"  # ISO-8601 UTC times

    # The admin report's download: the same row, separated by the session's csv_separator (default ';').
    page.goto(f"{otree_server.url}/AdminReport/{session['code']}")
    expect(page.get_by_text("1 of 1 judgements done", exact=False)).to_be_visible()
    with page.expect_download() as download:
        page.locator("#download-protocol").click()
    lines = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0] == ";".join(PROTOCOL_COLUMNS)
    [downloaded] = list(csv.DictReader(lines, delimiter=";"))
    assert downloaded == {column: row[column] for column in PROTOCOL_COLUMNS}  # the published form: 12 columns
    assert (
        row["judged_at"] == held["finished_at"] and row["session_code"] == session["code"] and row["participant_code"]
    )


@pytest.mark.browser
def test_log_text_is_shown_as_text_and_a_rejected_verdict_keeps_the_marks(otree_server, page):
    slow_network(page)
    name = "browser-escape_hd_p1_0_5_1_3_0_4343.txt"
    response = 'R gives me <b>5</b> or 0. <img src=x onerror="window.pwned=1"> B is safer. {B}'
    upload = {name: f"###ATTEMPT##0~\nRESPONSE##\n{response}~\n\nPREDICATES##\n~\n"}
    session = create_session(
        otree_server.url, "payoff_reasoning_eval", 1, logs_upload=json.dumps(upload), judges_per_log=1, consent=False
    )
    page.goto(session_start_links(otree_server.url, session["code"])[0])
    next_page(page)  # welcome
    next_page(page)  # instructions
    sentences = page.locator("#first-response .sentence")
    expect(sentences.first).to_have_text("R gives me <b>5</b> or 0.")
    assert page.evaluate("window.pwned") is None
    assert page.locator("#last-response").count() == 0 and page.locator("#id_fin_cor-0").count() == 0

    sentences.nth(0).click()
    page.locator("#id_orig_cor-1").check()
    next_page(page)
    # The refusal names what to fix beside the field; the marks and the verdict are kept.
    expect(page.locator("#error-types")).to_contain_text("please tick at least one error type")
    expect(page.locator("#marked-list li .marked-text")).to_have_text(["R gives me <b>5</b> or 0."])
    expect(page.locator("#id_orig_cor-1")).to_be_checked()

    page.evaluate("document.getElementById('id_err_type').value = '<i>zz</i>'")
    next_page(page)
    expect(page.locator(".otree-form-errors")).to_contain_text("Unknown error type(s) '<i>zz</i>'")

    page.locator("#err-pc").check()
    next_page(page)
    expect(page.get_by_text("You have completed the study.", exact=True)).to_be_visible()
    [row] = [row for row in export_rows(otree_server.url, APP, "custom_export") if row["file"] == name]
    assert (row["sentence"], row["err_type"], row["fin_cor"], row["con_mat"]) == (
        "R gives me <b>5</b> or 0.",
        "pc",
        "0",
        "FP",  # people: incorrect; the check passed (no predicates)
    )


@pytest.mark.parametrize("language", ["en", "de", "it"])
def test_the_judge_page_refuses_exactly_what_the_protocol_refuses_and_names_the_field(language):
    """Judge.error_message words the rules in the judge's language (judging.py); the protocol's own check
    (backend.reasoning.task.check_verdict) must agree on every verdict a judge can send from the page."""
    from backend.reasoning.task import MAX_REMARKS_CHARS, check_verdict
    from payoff_reasoning_eval.judging import verdict_problems
    from payoff_reasoning_eval.texts import TEXTS

    text = TEXTS[language]
    for log in sample_logs().values():
        two = len(log.attempts) > 1
        sentence = "f0"
        for orig in (None, 0, 1):
            for fin in (None, 0, 1) if two else (None,):
                for types in ("", "pa", "pa#rga"):
                    for marked in ("", sentence):
                        for remarks in ("", "r" * (MAX_REMARKS_CHARS + 1)):
                            values = dict(orig_cor=orig, fin_cor=fin, err_type=types, marked_sentences=marked)
                            values["remarks"] = remarks
                            ours = verdict_problems(log, values, text)
                            protocol = check_verdict(
                                log, orig_cor=orig, fin_cor=fin, err_type=types, marked=marked, remarks=remarks
                            )
                            assert bool(ours) == bool(protocol), (log.filename, values, ours, protocol)
                            assert not isinstance(ours, str) or not ours  # every reachable refusal names a field
    log = sample_logs()[TWO_ATTEMPTS]
    found = verdict_problems(log, dict(orig_cor=0, fin_cor=None, err_type="pa", marked_sentences=""), text)
    assert found == {  # everything to fix at once
        "fin_cor": text["error_fin_missing"].replace("'", "&#x27;"),
        "marked_sentences": text["error_sentences_missing"].replace("'", "&#x27;"),
    }
    found = verdict_problems(log, dict(orig_cor=0, fin_cor=1, err_type="", marked_sentences=""), text)
    assert set(found) == {"err_type", "marked_sentences"}
    tampered = verdict_problems(log, dict(orig_cor=0, fin_cor=1, err_type="zz", marked_sentences="f0"), text)
    assert "Unknown error type(s)" in tampered


def test_every_text_of_the_pages_exists_in_every_language_and_is_translated():
    from bias_tests.texts import TEXTS as BIAS
    from payoff_reasoning_eval.texts import TEXTS as PAYOFF

    for texts in (BIAS, PAYOFF):
        assert set(texts["de"]) == set(texts["en"]) == set(texts["it"])
        for key, english in texts["en"].items():
            for language in ("de", "it"):
                assert texts[language][key] != english or not any(c.isalpha() for c in english), (language, key)
