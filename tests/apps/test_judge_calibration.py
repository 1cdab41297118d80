"""A model judge asked k times per log on the fake OpenAI-compatible server, scored against people's blind verdicts of
the same logs from a real payoff_reasoning_eval export: its confidence per log, ECE, Brier score, the intervals and
the admission line (issue 37, "judges calibrated against people")."""

from __future__ import annotations

import json
import re
from fractions import Fraction

import pytest

from backend.__main__ import main as backend_main
from backend.reasoning.judge import load_judged_logs, output_paths, read_calls
from backend.reasoning.judge import main as judge_main
from backend.reasoning.judge_prompts import build_messages
from backend.reasoning.report import report
from harness import PROJECT_ROOT
from harness.servers import create_session, session_start_links
from tests.apps.test_payoff_reasoning_field import Judge, export_text

APP = "payoff_reasoning_eval"
LOGS_DIR = PROJECT_ROOT / "payoff_reasoning_eval" / "logs"
LOGS, GAMES = load_judged_logs(LOGS_DIR)
# People's verdict on each log's first answer (the automated check's: [0, 0, 0, 1, 1, 0]) and the model's three
# sampled verdicts: agreeing, agreeing unsure, disagreeing sure, agreeing, agreeing unsure, agreeing.
PEOPLE = [int(log.check_passed) for log in LOGS]
SAMPLES = [[0, 0, 0], [0, 0, 1], [1, 1, 1], [1, 1, 1], [1, 0, 1], [0, 0, 0]]
assert PEOPLE == [0, 0, 0, 1, 1, 0]
# By hand. Verdicts (majority): [0, 0, 1, 1, 1, 0]; p_correct: 0, 1/3, 1, 1, 2/3, 0; confidence: 1, 2/3, 1, 1, 2/3, 1.
# Brier = (0 + 1/9 + 1 + 0 + 1/9 + 0) / 6 = 11/54.
# ECE, 10 bins: confidence 1 holds logs 0, 2, 3, 5 (3 of 4 agree with people): 4/6 * |3/4 - 1| = 1/6; (0.6, 0.7]
# holds logs 1, 4 (both agree): 2/6 * |1 - 2/3| = 1/9; ECE = 5/18.
# kappa (two raters, (n0, n1) per log: (2,0) (2,0) (1,1) (0,2) (0,2) (2,0)): P_bar = 5/6, P_e = 74/144 -> 23/35.
BRIER, ECE, KAPPA = Fraction(11, 54), Fraction(5, 18), Fraction(23, 35)


def judgement(log, orig_cor: int) -> str:
    """A valid judgement of ``log`` saying ``orig_cor`` about its first answer (the final one judged correct)."""
    found = {"orig_cor": orig_cor, "err_type": [], "sentences": [], "remarks": "sampled"}
    if len(log.attempts) > 1:
        found["fin_cor"] = 1
    if not orig_cor:
        found.update(err_type=["pa"], sentences=["f0"])  # the first answer's first sentence
    return json.dumps(found)


def people_verdict(html: str) -> dict:
    """What a person submits on the Judge page: the verdict of ``PEOPLE`` for the log the page shows."""
    [name] = set(re.findall(r"payoff_reasoning_eval:[^:\"]+:([^\"]+\.txt)", html))
    index = next(i for i, log in enumerate(LOGS) if log.filename == name)
    form = dict(orig_cor=str(PEOPLE[index]), remarks="")
    if len(LOGS[index].attempts) > 1:
        form["fin_cor"] = "1"
    if not PEOPLE[index]:
        form.update(err_type="pa", marked_sentences="f0")
    return form


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")


def test_a_judge_with_three_samples_reports_confidence_ece_brier_and_admission_against_peoples_export(
    otree_server, llm_server, tmp_path, capsys
):
    # People judge the six sample logs in the app (two judges each), blind: no model has judged anything yet.
    session = create_session(otree_server.url, APP, 2, judges_per_log=2, logs_per_judge=6)
    for number, link in enumerate(session_start_links(otree_server.url, session["code"])):
        assert Judge(link, pid=f"{number + 7:x}".rjust(24, "c"), study_id="calibration").judge_all(people_verdict) == 6
    people_file = tmp_path / "people.csv"
    people_file.write_text(
        export_text(otree_server.url, "custom_export_protocol_with_ids", session["code"]), encoding="utf-8"
    )

    # The model judge: three samples per log, the fake server answering each log's samples in turn.
    asked: dict[str, int] = {}

    def sampled(request):
        prompt = request["messages"][1]["content"]
        index = next(i for i, log in enumerate(LOGS) if build_messages(log, GAMES[log.game])[1]["content"] == prompt)
        sample = asked.get(LOGS[index].filename, 0)
        asked[LOGS[index].filename] = sample + 1
        return judgement(LOGS[index], SAMPLES[index][sample])

    llm_server.responder = sampled
    out = tmp_path / "judge"
    arguments = ["--logs", str(LOGS_DIR), "--model", "judge-model", "--out", str(out), "--quiet"]
    arguments += ["--base-url", llm_server.base_url, "--samples", "3", "--temperature", "0.7", "--max-retries", "0"]
    assert judge_main(arguments) == 0
    assert len(llm_server.requests) == 18 and set(asked.values()) == {3}
    protocol_file, calls_file = output_paths(out, "judge-model")
    calls = {row["file"]: row for row in read_calls(calls_file)}
    for log, samples in zip(LOGS, SAMPLES, strict=True):
        row = calls[log.filename]
        verdict = int(2 * sum(samples) > 3)
        assert row["orig_cor"] == str(verdict) and row["samples"] == "3"
        assert row["sample_verdicts"] == "#".join(map(str, samples))
        assert float(row["p_correct"]) == pytest.approx(sum(samples) / 3, abs=1e-6)
        assert float(row["confidence"]) == pytest.approx(samples.count(verdict) / 3, abs=1e-6)

    # The report: people's real export beside the judge's protocol file (its calls file beside it).
    data = json.loads(report([people_file, protocol_file], as_json=True, admit_at=0.5))
    overall = data["model_judges"][0]
    assert (overall["judge"], overall["game"], overall["with_people"], overall["samples"]) == (
        "model:judge-model",
        "all",
        6,
        3,
    )
    assert overall["brier"] == pytest.approx(float(BRIER))
    assert overall["ece"] == pytest.approx(float(ECE))
    assert overall["kappa_people"] == pytest.approx(float(KAPPA))
    assert [(point["n"], point["accuracy"]) for point in overall["reliability"]] == [(2, 1.0), (4, 0.75)]
    for key in ("agree_orig", "kappa_people", "brier", "ece"):
        low, high = overall[f"{key}_interval"]
        assert low <= overall[key] <= high, key
    low = overall["kappa_people_interval"][0]
    assert overall["admission"] == dict(admitted=low >= 0.5, low=low, threshold=0.5, text=overall["admission"]["text"])
    assert "bootstrap over the rated units" in data["interval_method"]
    # The bootstrap reproduces under its seed: the same files give the same intervals.
    again = json.loads(report([people_file, protocol_file], as_json=True, admit_at=0.5))["model_judges"][0]
    assert again["kappa_people_interval"] == overall["kappa_people_interval"]
    assert again["ece_interval"] == overall["ece_interval"]

    # The printed report, with the researcher's threshold from the command line.
    assert backend_main(["report", str(people_file), str(protocol_file), "--admit-at", "-1"]) == 0
    text = capsys.readouterr().out
    assert f"model:judge-model: admitted: the lower bound {low:.2f} clears -1.00" in text
    assert "Calibration against people" in text and "0.204" in text and "0.278" in text  # Brier 11/54, ECE 5/18
    assert backend_main(["report", str(people_file), str(protocol_file), "--admit-at", "0.99"]) == 0
    assert f"model:judge-model: not admitted: the lower bound {low:.2f} is below 0.99" in capsys.readouterr().out

    # The figures and paper tables: the reliability diagram, and every agreement figure with its interval and the
    # method named in the table's note.
    figures, markdown = tmp_path / "figures", tmp_path / "tables"
    arguments = ["report", str(people_file), str(protocol_file), "--figures", str(figures), "--markdown", str(markdown)]
    assert backend_main(arguments) == 0
    capsys.readouterr()
    assert (figures / "judge_reliability.svg").is_file() and (figures / "payoff_confusion.svg").is_file()
    judges_table = (markdown / "payoff_judges.md").read_text(encoding="utf-8")
    assert "bootstrap over the rated units (1000 resamples, seed 0" in judges_table
    lo, hi = overall["kappa_people_interval"]
    assert f"{float(KAPPA):.2f} \\[{lo:.2f}, {hi:.2f}\\]" in judges_table
    assert f"{float(ECE):.2f} \\[" in judges_table and "not admitted" in judges_table
    check_table = (markdown / "payoff_check.md").read_text(encoding="utf-8")
    assert "kappa \\[95% CI\\]" in check_table and "bootstrap over the rated units" in check_table
