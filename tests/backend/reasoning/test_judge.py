"""The model judge of payoff-reasoning logs against the local OpenAI-compatible test server, and its report."""

from __future__ import annotations

import csv
import json
import re

import pytest

from backend.__main__ import main as backend_main
from backend.core.llm import LLMSettings
from backend.core.llm.fake_server import Reply
from backend.reasoning import task
from backend.reasoning.judge import CALL_COLUMNS, load_judged_logs, main, output_paths, read_calls, run_judge
from backend.reasoning.judge_prompts import (
    JudgementParseError,
    build_messages,
    judgement_schema,
    parse_judgement,
    scripted_judgement,
    token_budget,
)
from backend.reasoning.protocol import PROTOCOL_COLUMNS, export_cell, read_protocol_form
from backend.reasoning.report import report
from harness import PROJECT_ROOT
from harness.servers import run_async

LOGS_DIR = PROJECT_ROOT / "payoff_reasoning_eval" / "logs"
LOGS, GAMES = load_judged_logs(LOGS_DIR)
BY_FILE = {log.filename: log for log in LOGS}
# Attempt 0's automated check, in file order: the scripted judge's orig_cor.
CHECK = [int(log.check_passed) for log in LOGS]
assert CHECK == [0, 0, 0, 1, 1, 0]
ONE_ATTEMPT = next(log for log in LOGS if len(log.attempts) == 1)
SEVERAL = next(log for log in LOGS if len(log.attempts) == 3)


def log_of(request) -> object:
    """The log a request asks about: the one whose prompt is the request's first user message."""
    prompt = request["messages"][1]["content"]
    return next(log for log in LOGS if build_messages(log, GAMES[log.game])[1]["content"] == prompt)


def good(request) -> str:
    return scripted_judgement(log_of(request))


def page_row(log, judgement: dict) -> dict:
    """The row the Judge page saves for a person who submits ``judgement``."""
    return task.verdict_row(
        log,
        orig_cor=judgement["orig_cor"],
        fin_cor=judgement.get("fin_cor"),
        err_type="#".join(judgement["err_type"]),
        marked="#".join(judgement["sentences"]),
        remarks=judgement["remarks"],
    )


def settings_for(server, **changes) -> LLMSettings:
    values = dict(model="judge-model", base_url=server.base_url, max_retries=0, backoff_s=0.01, timeout_s=10)
    return LLMSettings(**{**values, **changes})


def judge(server, tmp_path, **options):
    settings = options.pop("settings", None) or settings_for(server)
    return run_async(run_judge(LOGS, GAMES, settings, out_dir=tmp_path, **options))


def calls(summary) -> dict[str, dict]:
    return {row["file"]: row for row in read_calls(summary.calls_path)}


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")


def test_structured_judgements_become_the_pages_protocol_rows_with_the_model_as_judge(llm_server, tmp_path):
    llm_server.responder = good
    summary = judge(llm_server, tmp_path)
    assert summary.counts == {"judged": 6} and summary.complete
    assert len(llm_server.requests) == 6
    for request in llm_server.requests:
        log = log_of(request)
        assert request["response_format"]["json_schema"]["schema"] == judgement_schema(log)
        assert request["max_tokens"] == token_budget(log)  # the protocol's longest judgement of this log
    assert {row["answer_source"] for row in calls(summary).values()} == {"structured"}
    form = read_protocol_form(summary.protocol_path).set_index("file").loc[list(BY_FILE)]  # rows come as answered
    assert list(form["orig_cor"]) == CHECK
    for file, row in form.iterrows():
        expected = page_row(BY_FILE[file], json.loads(scripted_judgement(BY_FILE[file])))
        assert {column: str(row[column]) for column in PROTOCOL_COLUMNS[1:]} == {
            column: str(expected[column]) for column in PROTOCOL_COLUMNS[1:]
        }
    with summary.protocol_path.open(encoding="utf-8") as handle:
        header = handle.readline().rstrip("\n").split(";")
        first = next(csv.reader(handle, delimiter=";"))
    assert header == [*PROTOCOL_COLUMNS, *task.IDENTITY_COLUMNS]
    assert first[len(PROTOCOL_COLUMNS)] == "model:judge-model"


def test_an_endpoint_refusing_the_schema_is_asked_without_it_and_the_answer_says_so(llm_server, tmp_path):
    llm_server.responder = good
    llm_server.refuse_response_format = True
    summary = judge(llm_server, tmp_path)
    assert summary.counts == {"judged": 6}
    rows = calls(summary).values()
    assert {row["answer_source"] for row in rows} == {"json"} and {row["structured"] for row in rows} == {"0"}
    assert any("response_format" not in request for request in llm_server.requests)


def test_reasoning_in_both_shapes_is_stored_apart_and_never_read_as_the_judgement(llm_server, tmp_path):
    # The thinking holds a different, valid-looking judgement (everything correct); the answer after it does not.
    decoy = '{"orig_cor": 1, "fin_cor": 1, "err_type": [], "sentences": [], "remarks": ""}'

    def thinking(request):
        log = log_of(request)
        if log is SEVERAL:
            return Reply(text=f"<think>Looks fine: {decoy}</think>\n\n{good(request)}")
        return Reply(text=good(request), reasoning=f"Maybe {decoy}", reasoning_field="reasoning")

    llm_server.responder = thinking
    summary = judge(llm_server, tmp_path)
    rows = calls(summary)
    assert summary.counts == {"judged": 6}
    assert rows[SEVERAL.filename]["orig_cor"] == "0" and rows[SEVERAL.filename]["reasoning"] == f"Looks fine: {decoy}"
    assert rows[SEVERAL.filename]["reply"] == good({"messages": build_messages(SEVERAL, GAMES[SEVERAL.game])})
    other = rows[LOGS[1].filename]
    assert other["orig_cor"] == "0" and other["reasoning"] == f"Maybe {decoy}" and decoy not in other["reply"]
    assert list(read_protocol_form(summary.protocol_path).set_index("file").loc[list(BY_FILE), "orig_cor"]) == CHECK


def test_reasoning_content_field_is_kept_too(llm_server, tmp_path):
    llm_server.responder = lambda request: Reply(text=good(request), reasoning="Weighing cells.")
    summary = judge(llm_server, tmp_path)
    assert {row["reasoning"] for row in calls(summary).values()} == {"Weighing cells."}


def test_unusable_replies_are_asked_again_naming_the_problem_then_recorded_unparseable(llm_server, tmp_path):
    def responder(request):
        log, asked_again = log_of(request), len(request["messages"]) > 2
        if log is ONE_ATTEMPT:
            return "The reasoning looks fine to me."  # never a judgement
        if log is SEVERAL and not asked_again:
            return '{"orig_cor": 0, "fin_cor": 1, "err_type": [], "sentences": []}'  # breaks the form's rules
        return good(request)

    llm_server.responder = responder
    summary = judge(llm_server, tmp_path, parse_retries=2)
    rows = calls(summary)
    assert summary.counts == {"judged": 5, "unparseable": 1} and summary.complete
    refused = rows[ONE_ATTEMPT.filename]
    assert (refused["status"], refused["asks"], refused["answer_source"]) == ("unparseable", "3", "")
    assert "no JSON object" in refused["problem"] and refused["reply"] == "The reasoning looks fine to me."
    # usage summed over the three asks (the test server counts 10 prompt tokens and one per word of the reply)
    assert (refused["prompt_tokens"], refused["completion_tokens"], refused["attempts"]) == ("30", "18", "3")
    mended = rows[SEVERAL.filename]
    assert (mended["status"], mended["asks"]) == ("judged", "2")
    follow_up = next(
        request for request in llm_server.requests if log_of(request) is SEVERAL and len(request["messages"]) > 2
    )
    assert "needs at least one error type" in follow_up["messages"][-1]["content"]
    assert follow_up["messages"][-2]["role"] == "assistant"
    assert ONE_ATTEMPT.filename not in set(read_protocol_form(summary.protocol_path)["file"])


def test_a_failed_call_is_an_error_not_a_verdict_and_a_second_run_asks_only_it(llm_server, tmp_path):
    failing = LOGS[2]
    llm_server.responder = lambda request: Reply(status=500) if log_of(request) is failing else good(request)
    first = judge(llm_server, tmp_path)
    assert first.counts == {"judged": 5, "error": 1} and not first.complete
    row = calls(first)[failing.filename]
    assert row["status"] == "error" and "server_error" in row["problem"] and row["orig_cor"] == ""
    assert failing.filename not in set(read_protocol_form(first.protocol_path)["file"])

    llm_server.clear()
    llm_server.responder = good
    second = judge(llm_server, tmp_path)
    assert (second.kept, second.counts) == (5, {"judged": 1})
    assert [log_of(request) for request in llm_server.requests] == [failing]
    form = read_protocol_form(second.protocol_path)
    assert (
        sorted(form["file"]) == sorted(BY_FILE) and list(form.set_index("file").loc[list(BY_FILE)]["orig_cor"]) == CHECK
    )
    assert len(read_calls(second.calls_path)) == 6


def test_a_reply_and_remark_starting_with_a_formula_are_neutralised_and_read_back_exactly(llm_server, tmp_path):
    remark = '=HYPERLINK("http://x")'

    def responder(request):
        judgement = json.loads(good(request))
        return "=" + json.dumps({**judgement, "remarks": remark})

    llm_server.responder = responder
    summary = judge(llm_server, tmp_path)
    with summary.protocol_path.open(encoding="utf-8", newline="") as handle:
        raw_remarks = {row["remarks"] for row in csv.DictReader(handle, delimiter=";")}
    with summary.calls_path.open(encoding="utf-8", newline="") as handle:
        raw_calls = list(csv.DictReader(handle))
    assert raw_remarks == {"'" + remark} and {row["remarks"] for row in raw_calls} == {"'" + remark}
    assert {row["reply"][:2] for row in raw_calls} == {"'="}
    assert set(read_protocol_form(summary.protocol_path)["remarks"]) == {remark}
    assert {row["reply"][0] for row in read_calls(summary.calls_path)} == {"="}


def test_every_request_carries_max_tokens_also_when_asked_again(llm_server, tmp_path):
    llm_server.responder = lambda request: "no judgement" if len(request["messages"]) == 2 else good(request)
    judge(llm_server, tmp_path, remark_chars=100, settings=settings_for(llm_server, reasoning_tokens=1000))
    assert len(llm_server.requests) == 12
    assert all(r["max_tokens"] == token_budget(log_of(r), remark_chars=100) + 1000 for r in llm_server.requests)


def test_the_parser_reads_tolerantly_and_never_guesses():
    log = SEVERAL
    wanted = parse_judgement('{"orig_cor": 0, "fin_cor": 1, "err_type": ["pa"], "sentences": ["f1"]}', log)
    assert (wanted.orig_cor, wanted.fin_cor, wanted.err_types, wanted.marked) == (0, 1, ("pa",), ("f1",))
    loose = 'Here:\n```json\n{"Orig_Cor": false, "fin_cor": "correct", "err_type": "PA", "marked": "[F1]"}\n```'
    assert parse_judgement(loose, log) == wanted
    twice = '{"orig_cor": 0, "fin_cor": 1, "err_type": ["pa"], "sentences": ["f1"]}'
    assert parse_judgement(f"{twice} again: {twice}", log) == wanted  # the same judgement twice is one judgement
    refusals = {
        f'{twice} or rather {{"orig_cor": 1, "fin_cor": 1, "err_type": [], "sentences": []}}': "2 different",
        '{"fin_cor": 1}': 'no "orig_cor"',
        '{"orig_cor": 1}': 'no "fin_cor"',
        '{"orig_cor": 2, "fin_cor": 1}': "0 (incorrect) or 1",
        '{"orig_cor": 0, "fin_cor": 1, "err_type": ["xx"], "sentences": ["f1"]}': "Unknown error type",
        '{"orig_cor": 0, "fin_cor": 1, "err_type": ["pa"], "sentences": ["f99"]}': "Unknown sentence id",
        '{"orig_cor": 1, "fin_cor": 1, "err_type": ["pa"], "sentences": []}': "has no error types",
        '{"orig_cor": 0, "first_correct": 1, "fin_cor": 1}': "orig_cor twice",
        "orig_cor: 0": "no JSON object",
        "": "empty",
    }
    for reply, fragment in refusals.items():
        with pytest.raises(JudgementParseError, match=re.escape(fragment)):
            parse_judgement(reply, log)
    with pytest.raises(JudgementParseError, match="single response"):
        parse_judgement('{"orig_cor": 1, "fin_cor": 0, "err_type": [], "sentences": []}', ONE_ATTEMPT)
    long = json.dumps({"orig_cor": 1, "fin_cor": 1, "err_type": [], "sentences": [], "remarks": "x" * 5001})
    with pytest.raises(JudgementParseError, match="shorten your remarks"):
        parse_judgement(long, log)


def write_people(path, verdicts: dict[str, int]) -> None:
    """Two people per log, as payoff_reasoning_eval's custom_export_protocol_with_ids writes them (comma)."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*PROTOCOL_COLUMNS, *task.IDENTITY_COLUMNS])
        for person in ("p1", "p2"):
            for log in LOGS:
                orig = verdicts.get(log.filename, int(log.check_passed))
                fin = int(log.final_check_passed) if len(log.attempts) > 1 else orig
                wrong = not (orig and fin)
                row = task.verdict_row(
                    log,
                    orig_cor=orig,
                    fin_cor=fin,
                    err_type="pa" if wrong else "",
                    marked="f0" if wrong else "",
                    remarks="",
                )
                writer.writerow([export_cell(c, row[c]) for c in PROTOCOL_COLUMNS] + [person, "", "", "s1", ""])


def test_the_report_sets_the_model_judge_beside_people_and_the_automated_check(tmp_path, capsys):
    assert main(["--logs", str(LOGS_DIR), "--model", "scripted", "--out", str(tmp_path), "--quiet"]) == 0
    model_file, _ = output_paths(tmp_path, "scripted")
    people_file = tmp_path / "people.csv"
    write_people(people_file, {LOGS[0].filename: 1})  # people find log 0 correct; the check (and model) do not
    assert backend_main(["report", str(people_file), str(model_file)]) == 0
    text = capsys.readouterr().out
    assert "12 ratings of 6 logs" in text  # people only: the model's six ratings are not mixed in
    assert "Model judges (6 ratings of 6 logs)" in text and "model:scripted" in text
    data = json.loads(report([people_file, model_file], as_json=True))
    overall = data["groups"][0]
    assert (overall["ratings"], overall["FN"], overall["accuracy"]) == (12, 1, pytest.approx(5 / 6))
    beside = data["model_judges"][0]
    assert (beside["judge"], beside["game"], beside["logs"], beside["with_people"]) == ("model:scripted", "all", 6, 6)
    assert beside["agree_orig"] == pytest.approx(5 / 6) and beside["agree_fin"] == 1.0
    # Fleiss, two raters, (n0, n1) per log: (1,1) then five alike -> P_bar = 5/6; p = (7/12, 5/12);
    # P_e = 74/144; kappa = (120 - 74) / (144 - 74) = 23/35.
    assert beside["kappa_people"] == pytest.approx(23 / 35)
    assert (beside["TP"], beside["TN"], beside["FP"], beside["FN"], beside["accuracy"]) == (2, 4, 0, 0, 1.0)
    assert beside["check_vs_people"] == pytest.approx(5 / 6)
    assert [group["game"] for group in data["model_judges"]] == ["all", "hd", "pd", "sh"]
    # The model's file alone: the model judge is the form's judge, as before.
    alone = report([model_file])
    assert "6 ratings of 6 logs" in alone and "against the model judges" in alone and "Model judges (" not in alone


def test_command_line_resumes_and_refuses_what_the_app_refuses(tmp_path, capsys):
    arguments = ["--logs", str(LOGS_DIR), "--model", "scripted", "--out", str(tmp_path), "--quiet"]
    assert main(arguments) == 0
    assert "6 logs, 0 kept from before, 6 judged" in capsys.readouterr().out
    assert main(arguments) == 0
    assert "6 kept from before, nothing new" in capsys.readouterr().out
    _, calls_path = output_paths(tmp_path, "scripted")
    with calls_path.open(encoding="utf-8", newline="") as handle:
        assert tuple(next(csv.reader(handle))) == CALL_COLUMNS
    broken = tmp_path / "logs"
    broken.mkdir()
    (broken / "m_pd_p1_1_5_0_3_0_1.txt").write_text("RESPONSE##\nno attempt header {R}~\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["--logs", str(broken), "--model", "scripted", "--out", str(tmp_path / "x"), "--quiet"])
    assert "before the first '###ATTEMPT##0~' line" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*arguments, "--remark-chars", "6000"])
    assert "remark length" in capsys.readouterr().err


def test_peoples_plain_protocol_export_goes_beside_a_model_judge_but_never_two_peoples_files(tmp_path, capsys):
    assert main(["--logs", str(LOGS_DIR), "--model", "scripted", "--out", str(tmp_path), "--quiet"]) == 0
    model_file, _ = output_paths(tmp_path, "scripted")
    with_ids = tmp_path / "people_with_ids.csv"
    write_people(with_ids, {LOGS[0].filename: 1})
    plain = tmp_path / "people.csv"  # the app's custom_export: the protocol columns only
    with with_ids.open(encoding="utf-8", newline="") as source, plain.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        for row in csv.reader(source):
            writer.writerow(row[: len(PROTOCOL_COLUMNS)])
    assert backend_main(["report", str(plain), str(model_file)]) == 0
    text = capsys.readouterr().out
    assert "12 ratings of 6 logs" in text and "Model judges (6 ratings of 6 logs)" in text
    with pytest.raises(SystemExit):  # the same people twice would be counted twice
        backend_main(["report", str(plain), str(with_ids)])
    assert "different exports" in capsys.readouterr().err
