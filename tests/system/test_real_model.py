"""End to end against a real OpenAI-compatible server that nobody here wrote: llama.cpp's server with
SmolLM2-135M-Instruct (``real_model`` fixture). A 135M model plays badly; these tests check that whatever it does
ends in a defined, fully recorded state, and that the answer modes read what it can give.

Figures for the README come from ``bench/real_model.py``, not from here.
"""

from __future__ import annotations

import csv
import json
import shutil
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from backend.bias.items import load_items
from backend.bias.runner import main as bias_main
from backend.bias.runner import run_tests
from backend.core.llm import LLMSettings, reply_budget
from backend.core.progress import MOSTLY_FAILED_EXIT
from backend.dond.game import GameConfig
from backend.dond.protocol import Protocol
from backend.dond.selfplay import run_selfplay
from backend.reasoning.judge import main as judge_main
from backend.social.annotator import main as annotate_main
from harness import PROJECT_ROOT
from harness.servers import (
    base_env,
    create_session,
    export_rows,
    next_page,
    run_async,
    session_start_links,
    start_server,
)
from tests.support.usage_proxy import usage_proxy

pytestmark = [pytest.mark.real_model, pytest.mark.slow]

ITEMS = load_items()
N_TESTS = sum(len(item.versions) for item in ITEMS.items)


def settings(real_model, **changes) -> LLMSettings:
    values = dict(model=real_model.model, base_url=real_model.base_url, temperature=0.0, timeout_s=120, max_retries=1)
    return LLMSettings(**(values | changes))


def read(path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_logprob_mode_answers_every_test_whose_alternatives_hold_a_letter(real_model, tmp_path):
    summary = run_async(run_tests(ITEMS, settings(real_model), out_dir=tmp_path, answer_mode="logprobs"))
    rows = read(summary.path)
    assert len(rows) == N_TESTS and summary.complete
    for row in rows:
        assert row["status"] in ("answered", "unparseable") and row["answer_mode"] == "logprobs"
        if row["status"] == "answered":
            assert row["answer_source"].startswith("letter_logprob")
            if row["option_probabilities"]:
                probabilities = json.loads(row["option_probabilities"])
                assert sum(probabilities) == pytest.approx(1) and row["confidence_source"] == "logprobs"
        else:  # only when no letter came back, and then it says so
            assert "no option letter" in row["problem"] or "no log-probabilities" in row["problem"]
    # SmolLM2 returns option letters among its alternatives for every bundled test (16 of 16 when measured)
    assert sum(row["status"] == "answered" for row in rows) >= N_TESTS - 1


@pytest.mark.parametrize("mode", ["stated", "structured"])
def test_text_and_structured_modes_record_how_each_answer_was_read(real_model, tmp_path, mode):
    summary = run_async(
        run_tests(ITEMS, settings(real_model), out_dir=tmp_path, answer_mode=mode, parse_retries=1, concurrency=2)
    )
    rows = read(summary.path)
    assert len(rows) == N_TESTS and summary.complete  # no call failed: every row answered or unparseable
    for row in rows:
        assert row["status"] in ("answered", "unparseable")
        if row["status"] == "answered":
            assert row["answer_source"] in ("json", "structured", "answer_line", "letter", "option_text", "yes_no")
        else:
            assert row["problem"] and row["raw_reply"]  # why, and what the model said
    if mode == "structured":  # llama-cpp-python refuses OpenAI's shape and takes its own
        assert any(row["answer_source"] == "structured" for row in rows)


def dond_calls(events_path) -> list[dict[str, str]]:
    return [row for row in read(events_path) if row["kind"] == "llm_call"]


@pytest.mark.parametrize("protocol", ["plain", "notes"])
def test_self_play_ends_every_game_in_a_defined_state_with_every_call_stored(real_model, tmp_path, protocol):
    options = dict(temperature=0.0, timeout_s=120, max_retries=1, base_url=real_model.base_url)
    summary = run_async(
        run_selfplay(
            model_a=real_model.model,
            model_b=real_model.model,
            instances=1,
            mode="semi",
            language="en",
            out_dir=tmp_path,
            max_messages=2,
            llm_reprompts=1,
            protocol=Protocol(name=protocol, word_limit=30),
            settings_options=options,
            concurrency=1,
        )
    )
    games = read(tmp_path / "dond_games.csv")
    assert len(games) == 2 and {game["outcome"] for game in games} <= {"success", "no_deal", "aborted"}, summary
    calls = dond_calls(tmp_path / "dond_events.csv")
    events = read(tmp_path / "dond_events.csv")
    assert calls and all(call["model"] == real_model.model and call["max_tokens"] for call in calls)
    judged = [
        e for e in events if e["actor"] == "llm" and e["kind"] in ("message", "proposal", "violation", "llm_error")
    ]
    assert sum(call["purpose"] == "message" for call in calls) == len(judged)  # every reply judged, none lost
    budget = {"message": reply_budget(GameConfig("semi", "en").max_message_chars)}
    for call in calls:
        if call["purpose"] in budget:
            assert int(call["max_tokens"]) == budget[call["purpose"]]
        assert call["completion_tokens"] and int(call["completion_tokens"]) <= int(call["max_tokens"])
    if protocol == "notes":
        assert {"note", "message"} <= {call["purpose"] for call in calls}
        assert any(event["kind"] == "note" for event in events)


def test_a_person_plays_dond_in_chromium_against_the_real_model(real_model, page):
    env = base_env(OPENAI_BASE_URL=real_model.base_url, OPENAI_API_KEY="no-key")
    server = start_server(env=env)
    try:
        session = create_session(
            server.url,
            "dond_llm",
            1,
            llm_model=real_model.model,
            first_mover="llm",
            max_messages=1,
            llm_reprompts=1,
            max_message_chars=300,
            llm_timeout_s=120,
            llm_temperature=0,
        )
        page.on("dialog", lambda dialog: dialog.accept())
        page.goto(session_start_links(server.url, session["code"])[0])
        page.get_by_label("I have read the information above and agree to take part.").check()
        next_page(page)
        next_page(page, "Continue")
        page.wait_for_url("**/Bargain/**")
        deadline = time.monotonic() + 400
        while "/Results/" not in page.url:
            assert time.monotonic() < deadline, "the game never ended"
            if page.locator("#dond-propose").is_visible() and page.locator("#dond-propose").is_enabled():
                page.locator("#dond-proposal-fields input").first.fill("1")
                page.locator("#dond-propose").click()
                page.locator("#dond-confirm-yes").click()  # the proposal is confirmed in the page
            elif page.locator("#dond-input").is_visible() and page.locator("#dond-input").is_enabled():
                page.locator("#dond-input").fill("Hello. I would like one of each item; you keep the rest.")
                page.locator("#dond-input").press("Enter")
            page.wait_for_timeout(1000)
        expect(page.locator("#dond-outcome")).not_to_be_empty()

        games = export_rows(server.url, "dond", "custom_export_dond_games", session_code=session["code"])
        assert len(games) == 1 and games[0]["outcome"] in ("success", "no_deal", "aborted")
        events = export_rows(server.url, "dond", "custom_export_dond_events", session_code=session["code"])
        calls = [event for event in events if event["kind"] == "llm_call"]
        judged = [e for e in events if e["actor"] == "llm" and e["kind"] in ("message", "proposal", "violation")]
        failed = [e for e in events if e["kind"] == "llm_error"]
        assert calls and len(calls) == len(judged) + len(failed)  # every call stored, every reply judged
        assert all(call["max_tokens"] == "166" and call["model"] == real_model.model for call in calls)
    finally:
        server.process.terminate()
        server.process.wait(timeout=20)


def in_a_thread(main, argv: list[str]) -> int:
    """A command's ``main`` (which runs its own event loop) away from the loop Playwright keeps in this thread."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(main, argv).result()


LOGS = PROJECT_ROOT / "payoff_reasoning_eval" / "logs"
EPISODE = PROJECT_ROOT / "backend" / "social" / "data" / "episodes" / "used_car.json"


def test_a_model_judges_a_reasoning_log_under_the_protocol(real_model, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    first = sorted(LOGS.glob("*.txt"))[0]
    shutil.copy(first, logs / first.name)
    args = ["--logs", str(logs), "--model", real_model.model, "--base-url", real_model.base_url, "--out"]
    code = in_a_thread(judge_main, [*args, str(tmp_path / "out"), "--parse-retries", "1", "--quiet"])
    calls = read(tmp_path / "out" / f"reasoning_judge_calls_{real_model.model}.csv")
    assert len(calls) == 1 and calls[0]["status"] != "error"  # no call failed for good
    call = calls[0]
    assert code == (MOSTLY_FAILED_EXIT if call["status"] == "unparseable" else 0)  # a run that judged nothing fails
    assert call["status"] in ("judged", "unparseable") and int(call["max_tokens"]) > 0
    if call["status"] == "unparseable":  # what the model said and why it is not a judgement
        assert call["problem"] and call["reply"]
    else:
        assert call["answer_source"] in ("structured", "json")


def test_a_model_rates_an_episode_with_the_rubric(real_model, tmp_path):
    args = ["--episodes", str(EPISODE), "--model", real_model.model, "--base-url", real_model.base_url]
    options = ["--parse-retries", "1", "--max-reasoning-chars", "200", "--concurrency", "1", "--quiet"]
    code = in_a_thread(annotate_main, [*args, "--out", str(tmp_path), *options])
    stem = f"social_{real_model.model}_{EPISODE.stem}"
    rows = read(tmp_path / f"{stem}.csv")
    assert len(rows) == 2 * 7 and "error" not in {row["status"] for row in rows}  # no call failed for good
    failed_units = len({row["agent_index"] for row in rows if row["status"] == "unparseable"})
    assert code == (MOSTLY_FAILED_EXIT if failed_units == 2 else 0)  # 2 of 2 units is most, 1 of 2 is not
    for row in rows:
        assert row["status"] in ("answered", "unparseable") and int(row["max_tokens"]) > 0
        if row["status"] == "answered":
            assert int(row["scale_min"]) <= int(row["rating"]) <= int(row["scale_max"]) and row["reasoning"]
        else:
            assert row["problem"] and row["raw_reply"]
    rated = json.loads((tmp_path / f"{stem}.episodes.json").read_text(encoding="utf-8"))
    assert rated  # the rated episode file is written, with whatever was answered


PRICES = {"currency": "USD", "models": {"smollm2": {"input_per_million": 1.0, "output_per_million": 4.0}}}


def test_a_runs_estimate_is_within_25_percent_of_what_the_real_models_calls_cost(real_model, tmp_path):
    # The bias runner asking for the answer letter's log-probabilities, two respondents of three test versions: its
    # estimate (a dry run of the planned calls: each prompt's characters / 4 as prompt tokens, each call's
    # max_tokens of 8 as completion tokens), then the run. The calls pass a proxy that keeps the usage the server
    # reported, priced here. Measured: estimate / cost 0.99 to 1.06 on 5 sets of tests (docs/running/costs.md).
    assert real_model.model == "smollm2"
    document = json.loads((PROJECT_ROOT / "backend" / "bias" / "data" / "bias_items.json").read_text("utf-8"))
    chosen = {"anchoring_bakery", "loss_trade_fair"}  # three test versions of one call each
    items = tmp_path / "items.json"
    items.write_text(json.dumps(document | {"items": [i for i in document["items"] if i["id"] in chosen]}), "utf-8")
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES), encoding="utf-8")
    with usage_proxy(real_model.base_url) as proxy:
        argv = ["--model", real_model.model, "--base-url", proxy.base_url, "--items", str(items), "--quiet"]
        argv += ["--out", str(tmp_path / "out"), "--prices", str(prices), "--concurrency", "1", "--temperature", "0"]
        argv += ["--answer-mode", "logprobs", "--confidence", "logprobs", "--timeout", "120", "--repeats", "2"]
        assert in_a_thread(bias_main, [*argv, "--estimate-only"]) == 0 and proxy.usages == []  # nothing asked
        assert in_a_thread(bias_main, argv) == 0
    run = json.loads((tmp_path / "out" / "run_manifest.json").read_text(encoding="utf-8"))["runs"][-1]
    price = PRICES["models"]["smollm2"]
    measured = sum(p * price["input_per_million"] + c * price["output_per_million"] for p, c in proxy.usages) / 1e6
    assert run["estimate"]["how"].startswith("dry run of 6 units") and run["estimate"]["calls"] == 6
    assert len(proxy.usages) == run["paid_calls"] >= 6 and not proxy.answers_without_usage
    assert run["cost"] == pytest.approx(measured, rel=1e-9)  # the run's cost is the server's reported usage, priced
    assert abs(run["estimate"]["cost"] - measured) <= 0.25 * measured, (run["estimate"], proxy.usages)
