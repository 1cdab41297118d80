"""Models as social_eval annotators against the local OpenAI-compatible test server: the structured request and its
refusal, reasoning kept apart, errors, unparseable replies, resuming, spreadsheet safety, and the flow of the output
into ``python -m backend report`` next to people's ratings."""

from __future__ import annotations

import csv
import json
import re

import pytest

from backend.__main__ import main as backend_main
from backend.core.llm import LLMSettings
from backend.core.llm.fake_server import Reply
from backend.social import cells as social_cells
from backend.social import report as social_report
from backend.social.annotator import COLUMNS, annotate, main
from backend.social.annotator_prompts import (
    RatingsParseError,
    parse_ratings,
    ratings_schema,
    scripted_rating,
    unit_budget,
)
from backend.social.episodes import load_episodes
from backend.social.rubrics import DEFAULT_RUBRIC_PATH, load_rubric
from harness.servers import run_async
from tests.support.social import human_export_row as human_row

RUBRIC = load_rubric()
BUNDLED = DEFAULT_RUBRIC_PATH.parent / "episodes"
LADDER = BUNDLED / "borrowed_ladder.json"  # two agents: Grace Okafor (1), Henrik Lund (2)
EPISODE = load_episodes(LADDER, rubric=RUBRIC)
REASON = "What the character said in the conversation supports this rating."


def answer(rating_of=lambda dimension: dimension.max, reasoning=REASON) -> str:
    return json.dumps({d.key: {"reasoning": reasoning, "rating": rating_of(d)} for d in RUBRIC.dimensions})


def rated_agent(request) -> int:
    return int(re.search(r"\(character (\d)\)", request["messages"][1]["content"]).group(1))


def settings_for(server, **changes) -> LLMSettings:
    values = dict(model="judge-model", base_url=server.base_url, max_retries=0, backoff_s=0.01, timeout_s=10)
    values.update(changes)
    return LLMSettings(**values)


def run(server, tmp_path, episodes=EPISODE, **options):
    return run_async(
        annotate(episodes, RUBRIC, settings_for(server), out_dir=tmp_path, episodes_name=LADDER, **options)
    )


def read(path):
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_structured_request_carries_the_rubric_schema_and_budget(llm_server, tmp_path):
    llm_server.responder = lambda request: answer(lambda d: d.min if rated_agent(request) == 1 else d.max)
    summary = run(llm_server, tmp_path, concurrency=2)
    assert summary.counts == {"answered": 2} and summary.complete
    assert len(llm_server.requests) == 2
    for request in llm_server.requests:
        sent = request["response_format"]
        assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == ratings_schema(RUBRIC)
        goal = sent["json_schema"]["schema"]["properties"]["goal"]["properties"]["rating"]
        assert goal == {"type": "integer", "minimum": 0, "maximum": 10}
        assert request["max_tokens"] == unit_budget(RUBRIC) == 7 * 5000 // 2 + 240  # 5000 = people's limit
    rows = read(summary.csv_path)
    assert [row["dimension"] for row in rows[:7]] == RUBRIC.keys and len(rows) == 14
    assert {(row["status"], row["answer_source"], row["max_tokens"]) for row in rows} == {
        ("answered", "structured", str(unit_budget(RUBRIC)))
    }
    by_agent = {(row["agent_index"], row["dimension"]): int(row["rating"]) for row in rows}
    assert by_agent[("1", "secret")] == -10 and by_agent[("2", "secret")] == 0 and by_agent[("2", "goal")] == 10


def test_a_refused_schema_is_asked_again_without_and_read_from_text(llm_server, tmp_path):
    llm_server.refuse_response_format = True
    llm_server.responder = lambda request: "Here are my ratings:\n```json\n" + answer() + "\n```"
    summary = run(llm_server, tmp_path, concurrency=1)
    assert summary.counts == {"answered": 2}
    answered = [request for request in llm_server.requests if "response_format" not in request]
    assert len(answered) == 2 and all("max_tokens" in request for request in llm_server.requests)
    assert {row["answer_source"] for row in read(summary.csv_path)} == {"text"}


@pytest.mark.parametrize("shape", ["think_tags", "reasoning_content", "reasoning"])
def test_thinking_is_stored_apart_and_never_read_as_the_answer(llm_server, tmp_path, shape):
    decoy = answer(lambda d: d.min, reasoning="A decoy answer inside the thinking, valid but not the reply.")
    real = answer(lambda d: d.max)
    if shape == "think_tags":
        llm_server.responder = lambda request: f"<think>Let me draft it: {decoy}</think>\n{real}"
    else:
        llm_server.responder = lambda request: Reply(text=real, reasoning=f"Draft: {decoy}", reasoning_field=shape)
    summary = run(llm_server, tmp_path)
    rows = read(summary.csv_path)
    assert {int(row["rating"]) - int(row["scale_max"]) for row in rows} == {0}  # every rating is the real maximum
    assert all("decoy answer inside the thinking" in row["model_thinking"] for row in rows)
    assert all("decoy" not in row["raw_reply"] and "decoy" not in row["reasoning"] for row in rows)


def test_failed_calls_are_errors_not_answers_and_a_second_run_asks_only_them(llm_server, tmp_path, capsys):
    def flaky(request):
        return Reply(status=500) if rated_agent(request) == 2 else answer()

    llm_server.responder = flaky
    argv = ["--episodes", str(LADDER), "--model", "judge-model", "--out", str(tmp_path), "--max-retries", "0"]
    argv += ["--base-url", llm_server.base_url, "--concurrency", "1"]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert "1 answered, 1 error" in captured.out and "run the same command again" in captured.out
    assert "2/2 answered 1 error 1" in captured.err  # the progress line
    (path,) = tmp_path.glob("*.csv")
    errors = [row for row in read(path) if row["status"] == "error"]
    assert (
        len(errors) == 7
        and {row["rating"] for row in errors} == {""}
        and {row["answer_source"] for row in errors} == {""}
    )
    assert "server_error" in errors[0]["problem"]
    episodes_file = next(tmp_path.glob("*.episodes.json"))
    (written,) = load_episodes(episodes_file, rubric=RUBRIC)
    assert written.model_rater == "judge-model" and not written.agents[1].model_ratings  # the old ones are gone
    assert written.agents[0].model_ratings == {d.key: d.max for d in RUBRIC.dimensions}

    llm_server.clear()
    llm_server.responder = lambda request: answer(lambda d: d.min)
    assert main(argv) == 0
    assert [rated_agent(request) for request in llm_server.requests] == [2]  # only the failed unit
    rows = read(path)
    assert len(rows) == 14 and {row["status"] for row in rows} == {"answered"}
    assert "1 kept from before, 1 answered" in capsys.readouterr().out
    (written,) = load_episodes(episodes_file, rubric=RUBRIC)
    assert written.agents[1].model_ratings == {d.key: d.min for d in RUBRIC.dimensions}
    llm_server.clear()
    assert main(argv) == 0 and llm_server.requests == []


def test_unusable_replies_are_asked_again_naming_the_problem_then_recorded_unparseable(llm_server, tmp_path):
    def stubborn(request):
        if rated_agent(request) == 1:
            return answer(lambda d: 11 if d.key == "goal" else d.max)  # never within range
        if len(request["messages"]) == 2:
            return "I think Henrik was quite believable."  # no JSON at first, fixed when asked again
        return answer()

    llm_server.responder = stubborn
    summary = run(llm_server, tmp_path, parse_retries=1, concurrency=1)
    assert summary.counts == {"answered": 1, "unparseable": 1}
    reasked = [request["messages"][-1]["content"] for request in llm_server.requests if len(request["messages"]) == 4]
    assert any("goal: the rating 11 is outside the range 0 to 10" in text for text in reasked)
    assert any("no complete JSON object" in text for text in reasked)
    rows = {row["agent_index"]: row for row in read(summary.csv_path)}
    assert rows["1"]["status"] == "unparseable" and rows["1"]["rating"] == "" and rows["1"]["calls"] == "2"
    assert "outside the range" in rows["1"]["problem"] and '"rating": 11' in rows["1"]["raw_reply"]
    assert rows["2"]["status"] == "answered" and rows["2"]["calls"] == "2"
    llm_server.clear()
    assert run(llm_server, tmp_path).counts == {} and llm_server.requests == []  # unparseable is final


def test_a_reasoning_starting_with_a_formula_is_neutralised_and_resumed_exactly(llm_server, tmp_path):
    formula = '=HYPERLINK("http://evil.example","Open me") is what Grace typed into the chat.'
    llm_server.responder = lambda request: answer(reasoning=formula)
    summary = run(llm_server, tmp_path)
    raw = summary.csv_path.read_text(encoding="utf-8")
    assert "'=HYPERLINK" in raw and ',"=HYPERLINK' not in raw
    frame = social_report.read_csv_any(summary.csv_path)
    assert set(frame["reasoning"]) == {formula}
    llm_server.clear()
    assert run(llm_server, tmp_path).counts == {} and {row["reasoning"] for row in read(summary.csv_path)} == {
        "'" + formula
    }


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("No ratings today.", "no complete JSON object"),
        ('{"overall": 3}', "none of the dimension keys"),
        (answer() + "\nor maybe\n" + answer(lambda d: d.min), "2 different rating objects"),
        (answer().replace('{"believability"', '{"goal": {"reasoning": "x", "rating": 1}, "believability"', 1), "more"),
        (answer(lambda d: 6.5 if d.key == "goal" else d.max), "goal: the rating 6.5 is not a whole number"),
        (answer(lambda d: True if d.key == "goal" else d.max), "goal: the rating True is not a whole number"),
        (answer(reasoning="Short."), "the reasoning has 6 characters, it must have 20 to 5000"),
        (json.dumps({k: {"reasoning": REASON, "rating": 0} for k in RUBRIC.keys[:-1]}), "['goal'] are missing"),
    ],
)
def test_the_parser_refuses_what_it_would_have_to_guess(reply, problem):
    with pytest.raises(RatingsParseError, match=re.escape(problem)):
        parse_ratings(reply, RUBRIC)


def test_the_parser_accepts_unambiguous_shapes():
    twice = f"Draft: {answer()}\nFinal: {answer()}"  # the same object twice is one answer
    assert parse_ratings(twice, RUBRIC)["goal"].rating == 10
    loose = answer(lambda d: {"goal": "7", "secret": "−3", "knowledge": 4.0}.get(d.key, 0))
    ratings = parse_ratings(loose, RUBRIC, min_reasoning_chars=0)
    assert (ratings["goal"].rating, ratings["secret"].rating, ratings["knowledge"].rating) == (7, -3, 4)
    with pytest.raises(RatingsParseError, match="100 characters, it must have 20 to 99"):
        parse_ratings(answer(reasoning="x" * 100), RUBRIC, max_reasoning_chars=99)


def test_scripted_ratings_flow_into_the_human_vs_model_report(tmp_path, capsys):
    episodes = load_episodes(BUNDLED, rubric=RUBRIC)
    assert main(["--episodes", str(BUNDLED), "--model", "scripted", "--out", str(tmp_path), "--quiet"]) == 0
    scores_file = next(tmp_path.glob("*.episodes.json"))  # the report reads the rated episode file itself
    rated = load_episodes(scores_file, rubric=RUBRIC)
    assert [episode.id for episode in rated] == [episode.id for episode in episodes]
    assert {episode.model_rater for episode in rated} == {"scripted"}  # no longer "illustrative-judge"
    goal = RUBRIC.dimension("goal")
    assert rated[0].agents[0].model_ratings["goal"] == scripted_rating(episodes[0].id, episodes[0].agents[0].name, goal)

    # People's export: two annotators per regular episode, near the scripted model on goal, far from it elsewhere.
    regular = [episode for episode in episodes if not episode.is_gold]
    rows = []
    for episode in regular:
        for agent_index, agent in enumerate(episode.agents, start=1):
            for dimension in RUBRIC.dimensions:
                model = scripted_rating(episode.id, agent.name, dimension)
                for annotator, shift in (("p1", 0), ("p2", 1)):
                    rating = min(model + shift, dimension.max) if dimension.key == "goal" else dimension.min
                    rows.append(human_row(episode.id, annotator, agent_index, dimension.key, rating))
    export = tmp_path / "ratings.csv"
    with export.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=social_cells.EXPORT_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)

    backend_main(["report", str(export), str(scores_file)])
    text = capsys.readouterr().out
    assert "pearson" in text and "model_mean" in text and "== demo / agent 1" in text
    backend_main(["report", str(export), str(scores_file), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["model_ratings"] == scores_file.name
    figures = next(r for r in report["summary"] if r["scope"] == "agent 1" and r["dimension"] == "goal")
    expected = [scripted_rating(e.id, e.agents[0].name, goal) for e in regular]
    assert figures["n_model"] == len(regular) == 6
    assert figures["model_mean"] == pytest.approx(sum(expected) / len(expected))
    assert figures["pearson"] > 0.9 and figures["diff"] > 0  # people are the model's rating or one above it


def test_the_output_columns_and_the_command_line_refusals(tmp_path, capsys):
    assert COLUMNS[:3] == ["episode_id", "episode_group", "is_gold"] and "model_thinking" in COLUMNS
    (tmp_path / "social_scripted_borrowed_ladder.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["--episodes", str(LADDER), "--model", "scripted", "--out", str(tmp_path), "--quiet"])
    assert "does not have the columns of the annotator's output" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--episodes", str(LADDER), "--model", "scripted", "--out", str(tmp_path / "x"), "--concurrency", "0"])
    assert "concurrency must be at least 1" in capsys.readouterr().err
