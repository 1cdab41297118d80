"""Model annotators and judges fail loudly: placeholders echoed from the prompt are refused, a run in which most units
failed ends with a summary and exit status 3, and the reports name each file's contribution and what was left out."""

from __future__ import annotations

import csv
import json

import pytest

from backend.__main__ import main as backend_main
from backend.core.progress import MOSTLY_FAILED_EXIT, RunTally
from backend.reasoning.judge import main as judge_main
from backend.reasoning.judge_prompts import REMARKS_PLACEHOLDER, JudgementParseError, parse_judgement
from backend.social import cells as social_cells
from backend.social.annotator import main as annotator_main
from backend.social.annotator_prompts import RatingsParseError, parse_ratings
from backend.social.episodes import load_episodes
from backend.social.rubrics import DEFAULT_RUBRIC_PATH, load_rubric
from tests.backend.reasoning.test_judge import LOGS, LOGS_DIR, ONE_ATTEMPT, good, log_of
from tests.support.social import human_export_row as human_row

RUBRIC = load_rubric()
LADDER = DEFAULT_RUBRIC_PATH.parent / "episodes" / "borrowed_ladder.json"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")


def small_model_ratings(request) -> str:
    """What SmolLM2 sent under llama.cpp's grammar: ratings outside the rubric and reasons under 20 characters."""
    return json.dumps({d.key: {"reasoning": "Good.", "rating": d.max + 5} for d in RUBRIC.dimensions})


@pytest.mark.parametrize(
    ("tally", "mostly"),
    [({"answered": 5, "unparseable": 5}, False), ({"answered": 4, "unparseable": 3, "error": 3}, True), ({}, False)],
)
def test_most_means_more_than_half_of_the_units_asked(tally, mostly):
    summary = RunTally(planned=10)
    for status, count in tally.items():
        for _ in range(count):
            summary.record(status, "a reason")
    assert summary.mostly_failed is mostly


def test_an_annotator_that_rates_nothing_exits_non_zero_with_a_summary_and_the_report_says_so(
    llm_server, tmp_path, capsys
):
    llm_server.responder = small_model_ratings
    argv = ["--episodes", str(LADDER), "--model", "smol", "--out", str(tmp_path), "--quiet"]
    argv += ["--base-url", llm_server.base_url, "--parse-retries", "1"]
    assert annotator_main(argv) == MOSTLY_FAILED_EXIT
    out = capsys.readouterr().out
    assert "2 unparseable" in out and "2 of 2 units asked in this run failed" in out
    assert "2 x believability: the reasoning has 5 characters, it must have 20 to 5000" in out
    assert "Most units failed" in out

    (episode,) = load_episodes(LADDER, rubric=RUBRIC)
    export = tmp_path / "ratings.csv"
    with export.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=social_cells.EXPORT_COLUMNS)
        writer.writeheader()
        for annotator in ("p1", "p2"):
            for agent_index in (1, 2):
                writer.writerows(human_row(episode.id, annotator, agent_index, d.key, d.min) for d in RUBRIC.dimensions)
    model_file = next(tmp_path.glob("*.episodes.json"))
    assert backend_main(["report", str(export), str(model_file)]) == 0
    text = capsys.readouterr().out
    assert "  ratings.csv: 28 ratings" in text
    assert f"  {model_file.name}: 0 model ratings; this model file added no ratings" in text


def test_a_reasoning_that_repeats_the_forms_placeholder_is_refused():
    answer = {d.key: {"reasoning": "<your reasoning>", "rating": d.min} for d in RUBRIC.dimensions}
    with pytest.raises(RatingsParseError, match="only repeats the placeholder '<your reasoning>'"):
        parse_ratings(json.dumps(answer), RUBRIC, min_reasoning_chars=0)


def test_a_remark_that_repeats_the_forms_placeholder_is_refused():
    judgement = json.loads(good({"messages": [{}, {"content": _prompt(ONE_ATTEMPT)}]}))
    judgement["remarks"] = REMARKS_PLACEHOLDER
    with pytest.raises(JudgementParseError, match="only repeat the placeholder 'text or empty'"):
        parse_judgement(json.dumps(judgement), ONE_ATTEMPT)
    judgement["remarks"] = "The text is empty of any reasoning about the table."
    assert parse_judgement(json.dumps(judgement), ONE_ATTEMPT).remarks == judgement["remarks"]


def _prompt(log) -> str:
    from backend.reasoning.judge_prompts import build_messages
    from tests.backend.reasoning.test_judge import GAMES

    return build_messages(log, GAMES[log.game])[1]["content"]


def test_a_judge_that_judges_most_logs_badly_exits_non_zero_and_the_report_lists_the_logs_left_out(
    llm_server, tmp_path, capsys
):
    judged = {LOGS[0].filename, LOGS[1].filename}

    def responder(request):
        if log_of(request).filename in judged:
            return good(request)
        data = json.loads(good(request))
        return json.dumps({**data, "remarks": REMARKS_PLACEHOLDER})

    llm_server.responder = responder
    argv = ["--logs", str(LOGS_DIR), "--model", "smol", "--out", str(tmp_path), "--quiet"]
    argv += ["--base-url", llm_server.base_url, "--parse-retries", "0"]
    assert judge_main(argv) == MOSTLY_FAILED_EXIT
    out = capsys.readouterr().out
    assert "4 of 6 units asked in this run failed" in out and "Most units failed" in out
    protocol = tmp_path / "reasoning_judge_smol.csv"
    assert backend_main(["report", str(protocol)]) == 0
    text = capsys.readouterr().out
    assert "  reasoning_judge_smol.csv: 2 verdicts" in text
    assert "left out, 4 logs the judge could not judge:" in text
    left_out = [log.filename for log in LOGS if log.filename not in judged]
    assert all(f"      {name} (unparseable: the remarks only repeat the placeholder" in text for name in left_out)


def test_token_limits_fit_the_context_the_endpoint_reports_or_the_flag_gives(llm_server, tmp_path):
    from backend.core.llm.context import prompt_tokens
    from backend.social.annotator_prompts import unit_budget

    assert unit_budget(RUBRIC) == 17740  # the default budget alone exceeds an 8k context
    good = json.dumps({d.key: {"reasoning": "x" * 30, "rating": d.min} for d in RUBRIC.dimensions})
    llm_server.responder = lambda request: good
    llm_server.context_tokens = 8192  # llama.cpp's /props
    argv = ["--episodes", str(LADDER), "--model", "smol", "--out", str(tmp_path / "a"), "--quiet"]
    argv += ["--base-url", llm_server.base_url]
    assert annotator_main(argv) == 0
    for request in llm_server.requests:
        assert request["max_tokens"] == 8192 - prompt_tokens(request["messages"]) - 64 < 8192
    llm_server.clear()
    llm_server.context_tokens = None  # an endpoint that reports nothing: the researcher's flag counts
    argv = ["--episodes", str(LADDER), "--model", "smol", "--out", str(tmp_path / "b"), "--quiet"]
    argv += ["--base-url", llm_server.base_url, "--context-tokens", "6000"]
    assert annotator_main(argv) == 0
    assert {request["max_tokens"] + prompt_tokens(request["messages"]) + 64 for request in llm_server.requests} == {
        6000
    }
