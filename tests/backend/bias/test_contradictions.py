"""Replies whose letter and own words disagree are flagged, left out of the metrics by default, and counted; the
report keeps answer modes apart and refuses a respondent who answered one test twice."""

from __future__ import annotations

import csv
import math
import re

import pytest

from backend.__main__ import main as report_main
from backend.bias import report as bias_report
from backend.bias.contradictions import contradiction, is_contradiction
from backend.bias.prompts import argument_letter_labels
from backend.bias.runner import run_tests
from backend.core.llm import LLMSettings
from backend.core.llm.fake_server import Reply
from harness.servers import run_async
from tests.support.bias_replies import ITEMS, responder


def settings_for(server, model="test-model") -> LLMSettings:
    return LLMSettings(model=model, base_url=server.base_url, max_retries=1, backoff_s=0.01, timeout_s=10)


def read(path):
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def letter_reply(text: str, p_first: float = 0.8) -> Reply:
    """A reply that writes ``text`` and whose first token is letter A with probability ``p_first`` (B the rest)."""
    alternatives = [{"token": "A", "logprob": math.log(p_first)}, {"token": "B", "logprob": math.log(1 - p_first)}]
    content = [{"token": "A", "logprob": math.log(p_first), "top_logprobs": alternatives}]
    content.append({"token": text[1:], "logprob": -0.1, "top_logprobs": []})
    return Reply(text=text, logprobs={"content": content})


def self_contradicting(request):
    """Letter A everywhere; its words: B's option on the bakery (A = 150 loaves), 15 % on the cyclist campaign
    (A = 20 %), "No" on every argument (A = yes), and A's own words elsewhere."""
    prompt = request["messages"][1]["content"]
    if "Would you take argument" in prompt:
        return letter_reply("A. No")
    first = re.search(r"^A\. (.*)$", prompt, flags=re.MULTILINE).group(1)
    if first == "150 loaves":
        return letter_reply("A. 250 loaves")
    if first == "20 %":
        return letter_reply("A. 15%")
    return letter_reply(f"A. {first}")


@pytest.mark.parametrize(
    ("reply", "labels", "index", "said"),
    [
        ("A. 250 loaves", ["150 loaves", "250 loaves"], 0, "says '250 loaves' (option B)"),
        ("**A**. 15%", ["20 %", "15 %"], 0, "writes 15"),
        ("A. No", argument_letter_labels("en"), 0, "starts with 'No'"),
        ("A. Nein", argument_letter_labels("de"), 0, "starts with 'Nein'"),
        ("B) Sì", argument_letter_labels("it"), 1, "starts with 'Sì'"),
        ("A. 1.000 Euro", ["1000 Euro", "2.000 Euro"], 1, "writes 1000"),
    ],
)
def test_a_reply_whose_words_name_another_option_is_a_contradiction(reply, labels, index, said):
    assert said in contradiction(reply, labels, index)


@pytest.mark.parametrize(
    ("reply", "labels", "index"),
    [
        ("A. 150 loaves", ["150 loaves", "250 loaves"], 0),
        ("A, 150 rather than 250", ["150 loaves", "250 loaves"], 0),
        ("A", ["20 %", "15 %"], 0),
        ("B. No", argument_letter_labels("en"), 1),
        ("A. Yes, because it matters.", argument_letter_labels("en"), 0),
        ("B. 2,5 kg", ["1 kg", "2.5 kg"], 1),
    ],
)
def test_a_reply_that_agrees_with_its_letter_is_no_contradiction(reply, labels, index):
    assert contradiction(reply, labels, index) == ""


def test_logprob_mode_flags_letters_that_contradict_their_words_and_the_report_leaves_them_out(llm_server, tmp_path):
    llm_server.responder = self_contradicting
    summary = run_async(run_tests(ITEMS, settings_for(llm_server), out_dir=tmp_path, answer_mode="logprobs"))
    rows = {(row["item_id"], row["version"]): row for row in read(summary.path)}
    bakery = rows["anchoring_bakery", "control"]
    assert (bakery["status"], bakery["answer"]) == ("answered", "150")  # the letter's answer is kept, flagged
    assert (
        bakery["problem"] == "contradiction: the letter A is '150 loaves', but the reply says '250 loaves' (option B)"
    )
    cyclist = rows["halo_cyclist_campaign", "control"]
    assert is_contradiction(cyclist["problem"]) and "writes 15" in cyclist["problem"]
    arguments = rows["confirmation_home_office", "treatment"]
    assert (
        is_contradiction(arguments["problem"]) and "argument 8: the letter A is 'Yes, I would" in arguments["problem"]
    )
    agreeing = rows["anchoring_training", "control"]
    assert agreeing["status"] == "answered" and agreeing["problem"] == ""
    # The question says what each letter means, in words the reply is checked against.
    asked = [request["messages"][1]["content"] for request in llm_server.requests]
    assert any("A. Yes, I would take it into account\nB. No, I would not take it into account" in p for p in asked)
    flagged = sum(is_contradiction(row["problem"]) for row in rows.values())
    assert flagged == 2 + 2 + 2  # bakery and cyclist campaign (both versions), two argument tests

    frame = bias_report.read_rows([summary.path])
    left_out = bias_report.summarise(frame)
    group = "test-model [logprobs]"
    assert left_out["counts"][group]["contradictions"] == flagged
    assert left_out["metrics"]["anchoring_agnostic"][group]["tests"] == 1  # the bakery pair is left out
    assert left_out["metrics"]["confirmation"][group]["tests"] == 0
    included = bias_report.summarise(frame, include_contradictions=True)
    assert included["metrics"]["anchoring_agnostic"][group]["tests"] == 2
    assert included["metrics"]["confirmation"][group]["tests"] == 2


def test_stated_mode_flags_a_text_answer_whose_number_is_not_its_options(llm_server, tmp_path):
    def reply(request):
        prompt = request["messages"][1]["content"]
        return "A. 15%" if "\nA. 20 %" in prompt else responder(request)

    llm_server.responder = reply
    summary = run_async(run_tests(ITEMS, settings_for(llm_server), out_dir=tmp_path))
    rows = [row for row in read(summary.path) if row["item_id"] == "halo_cyclist_campaign"]
    assert [row["status"] for row in rows] == ["answered", "answered"]
    assert all(row["problem"].startswith("contradiction: the letter A is '20 %'") for row in rows)


def test_the_report_keeps_answer_modes_apart_and_counts_contradictions(llm_server, tmp_path, capsys):
    paths = []
    for mode in ("stated", "structured", "logprobs"):
        llm_server.responder = self_contradicting if mode == "logprobs" else responder
        out = tmp_path / mode
        paths.append(run_async(run_tests(ITEMS, settings_for(llm_server), out_dir=out, answer_mode=mode)).path)
    summary = bias_report.summarise(bias_report.read_rows(paths))
    assert summary["groups"] == ["test-model [logprobs]", "test-model [stated]", "test-model [structured]"]
    assert {summary["counts"][group]["respondents"] for group in summary["groups"]} == {1}
    assert report_main(["report", *map(str, paths)]) == 0
    text = capsys.readouterr().out
    assert re.search(r"self-contradicting answers\s+6\s+0\s+0", text), text[:900]
    assert "are left out; --include-contradictions includes them" in text
    assert report_main(["report", "--include-contradictions", *map(str, paths)]) == 0
    assert "Self-contradicting answers (the letter says one option, the reply's words another) are included." in (
        capsys.readouterr().out
    )


def test_the_report_refuses_a_respondent_who_answered_a_test_twice(tmp_path, capsys):
    from backend.bias.runner import main as run_model

    assert run_model(["--model", "scripted", "--out", str(tmp_path / "a"), "--quiet"]) == 0
    assert run_model(["--model", "scripted", "--out", str(tmp_path / "b"), "--quiet"]) == 0
    files = [str(next((tmp_path / name).glob("*.csv"))) for name in "ab"]
    with pytest.raises(SystemExit) as exit_info:
        report_main(["report", *files])
    assert exit_info.value.code == 2
    assert "The respondent 'scripted#1'" in capsys.readouterr().err
