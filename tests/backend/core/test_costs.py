"""Costs and caps from outside (issue 37, part A): the real ``openai`` client against the fake OpenAI-compatible
server with known token counts. An unknown price is reported as unknown; a runner's estimate is within 25 % of the
cost measured; a run whose estimate passes its cap is refused before its first call; a cap holds under 32 calls in
flight; each call records what a rerun needs."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest

from backend.core.llm import LLMSettings, complete, costs, stream
from backend.core.llm.fake_server import DEMO_RESPONDER, Reply, responder_named
from backend.core.run_costs import COST_CAP_EXIT
from backend.dond import selfplay
from harness import PROJECT_ROOT
from tests.support.prices import TABLE, price_file

MESSAGES = [{"role": "user", "content": "Say hello."}]


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-37")


@pytest.fixture
def prices(tmp_path) -> Path:
    return price_file(tmp_path)


def settings_for(server, **overrides) -> LLMSettings:
    return LLMSettings(model="m", base_url=server.base_url, max_retries=0, **overrides)


# --- prices ---------------------------------------------------------------------------------------------------------
def test_the_shipped_price_table_has_no_price_filled_in_and_unknown_is_never_free():
    table = costs.load_price_table(PROJECT_ROOT / "docs" / "files" / "prices.json")
    assert table.models and not any(price.known for price in table.models.values())
    assert costs.call_cost("gpt-4o", 1000, 1000, table) is None
    total = costs.CostSum(table.currency)
    total.add(costs.call_cost("gpt-4o", 1000, 1000, table))
    assert total.total is None and total.text().startswith("unknown")


def test_a_price_table_that_mixes_currencies_or_is_not_json_is_refused_with_its_name(tmp_path):
    mixed = tmp_path / "mixed.json"
    mixed.write_text(
        json.dumps(
            {
                "models": {
                    "a": {"input_per_million": 1, "output_per_million": 1, "currency": "USD"},
                    "b": {"input_per_million": 1, "output_per_million": 1, "currency": "EUR"},
                }
            }
        ),
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="several currencies"):
        costs.load_price_table(mixed)
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="broken.json is not JSON"):
        costs.load_price_table(broken)


# --- what a rerun needs ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("streamed", [False, True])
def test_each_call_records_the_served_model_fingerprint_sampling_endpoint_and_version(llm_server, streamed):
    llm_server.script(Reply("Hello there.", served_model="m-2025-01-01", system_fingerprint="fp_37"))
    settings = settings_for(llm_server, seed=11, temperature=0.0)

    async def call():
        if not streamed:
            return await complete(MESSAGES, settings, max_tokens=40)
        return [item async for item in stream(MESSAGES, settings, max_tokens=40)][-1]

    record = asyncio.run(call())
    assert record.ok, record.error
    assert record.served_model == "m-2025-01-01" and record.system_fingerprint == "fp_37"
    assert record.sampling == {"temperature": 0.0, "seed": 11} and record.max_tokens == 40
    assert llm_server.requests[-1]["seed"] == 11
    assert record.endpoint.startswith("http://127.0.0.1:") and "/v1" not in record.endpoint
    assert record.product_version
    assert "sk-test" not in json.dumps(costs.rerun_facts(record))


# --- the cap under concurrency --------------------------------------------------------------------------------------
def test_a_cap_holds_with_32_calls_in_flight_and_a_refused_call_is_never_sent(llm_server):
    # Each call: a 10-character prompt (5 tokens reserved) and max_tokens 100 at 1 a token: 105 held; it reports
    # 5 + 100 tokens, so it costs what it held. A cap of 1000 admits 9 calls; 32 start at once (the client's width).
    table = costs.PriceTable.model_validate(
        {"currency": "USD", "models": {"m": {"input_per_million": 1e6, "output_per_million": 1e6}}}
    )
    cap = costs.SpendingCap(limit=1000.0, table=table)
    llm_server.responder = lambda request: Reply("ok", delay_s=0.3, prompt_tokens=5, completion_tokens=100)
    messages = [{"role": "user", "content": "x" * 10}]

    async def many():
        calls = [complete(messages, settings_for(llm_server), max_tokens=100, spend=cap) for _ in range(40)]
        return await asyncio.gather(*calls)

    records = asyncio.run(many())
    sent = [record for record in records if record.error_kind != "cost_cap"]
    assert len(llm_server.requests) == len(sent) == 9
    assert all(record.ok for record in sent)
    assert cap.spent == 9 * 105 <= cap.limit and cap.held == 0 and cap.in_flight == 0
    refused = [record for record in records if record.error_kind == "cost_cap"]
    assert len(refused) == 31 and "no call was made" in refused[0].error


def test_what_a_call_spends_past_its_hold_is_the_only_overshoot(llm_server):
    # Calls that report more tokens than they held (a prompt longer in tokens than 2 characters a token): the money
    # past the cap is at most what the calls in flight when it was reached spent beyond their holds.
    cap = costs.SpendingCap(
        limit=50.0,
        table=costs.PriceTable.model_validate(
            {"currency": "USD", "models": {"m": {"input_per_million": 1e6, "output_per_million": 1e6}}}
        ),
    )
    llm_server.responder = lambda request: Reply("ok", delay_s=0.2, prompt_tokens=20, completion_tokens=10)
    messages = [{"role": "user", "content": "y" * 10}]  # 5 tokens held for the prompt, 20 reported

    async def many():
        return await asyncio.gather(
            *(complete(messages, settings_for(llm_server), max_tokens=10, spend=cap) for _ in range(32))
        )

    records = asyncio.run(many())
    admitted = sum(record.error_kind != "cost_cap" for record in records)
    assert admitted == 3  # 15 held each: 3 fit under 50
    assert cap.spent == 3 * 30 and cap.spent - cap.limit <= admitted * (30 - 15)


# --- runners: the estimate, the refusal, the summary ----------------------------------------------------------------
def known_tokens(request):
    """The offline demo's DoND player, with usage reported as 700 prompt and 40 completion tokens per call."""
    reply = responder_named(DEMO_RESPONDER)(request)
    return Reply(reply.text if isinstance(reply, Reply) else reply, prompt_tokens=700, completion_tokens=40)


def test_a_selfplay_estimate_from_a_pilot_is_within_25_percent_of_the_cost_measured(
    llm_server, prices, tmp_path, capsys
):
    llm_server.responder = known_tokens
    base = ["--model-a", "m", "--base-url", llm_server.base_url, "--out", str(tmp_path), "--quiet"]
    base += ["--prices", str(prices)]
    assert selfplay.main([*base, "--instances", "1"]) == 0  # the pilot: 2 games
    assert "Cost of this run: " in capsys.readouterr().out
    assert selfplay.main([*base, "--instances", "5", "--estimate-only"]) == 0
    out = capsys.readouterr().out
    assert "measured on 2 games already run" in out
    llm_server.clear()
    assert selfplay.main([*base, "--instances", "5"]) == 0
    manifest = json.loads((tmp_path / "run_manifest.json").read_text(encoding="utf-8"))
    run = manifest["runs"][-1]
    measured = sum(
        costs.call_cost("m", request_tokens[0], request_tokens[1], TABLE)
        for request_tokens in [(700, 40)] * len(llm_server.requests)
    )
    assert run["cost"] == pytest.approx(measured)
    assert abs(run["estimate"]["cost"] - measured) <= 0.25 * measured
    assert run["calls"][0]["served_model"] == "m" and run["calls"][0]["endpoint"].startswith("http://127.0.0.1")


def test_a_selfplay_run_whose_estimate_passes_its_cap_is_refused_before_its_first_call(
    llm_server, prices, tmp_path, capsys
):
    llm_server.responder = known_tokens
    argv = ["--model-a", "m", "--base-url", llm_server.base_url, "--out", str(tmp_path), "--quiet"]
    argv += ["--prices", str(prices), "--instances", "3", "--max-cost", "0.001"]
    assert selfplay.main(argv) == COST_CAP_EXIT
    err = capsys.readouterr().err
    assert "passes the cap of 0.0010 USD by" in err and "dry run of 6 games" in err
    assert llm_server.requests == []
    assert not (tmp_path / "dond_games.csv").exists() or "i0-c1" not in (tmp_path / "dond_games.csv").read_text()


def test_every_runner_refuses_a_run_over_its_cap_before_its_first_call(llm_server, prices, tmp_path, capsys):
    from backend.bias.runner import main as bias_main
    from backend.reasoning.judge import main as judge_main
    from backend.social.annotator import main as annotator_main
    from tests.backend.reasoning.test_judge import LOGS_DIR
    from tests.backend.test_loud_failures import LADDER

    common = ["--model", "m", "--base-url", llm_server.base_url, "--quiet", "--prices", str(prices)]
    runs = {
        "annotator": (annotator_main, ["--episodes", str(LADDER)]),
        "judge": (judge_main, ["--logs", str(LOGS_DIR)]),
        "bias": (bias_main, []),
    }
    for name, (main, own) in runs.items():
        assert main([*own, *common, "--out", str(tmp_path / name), "--max-cost", "0.00001"]) == COST_CAP_EXIT, name
        assert "passes the cap of" in capsys.readouterr().err, name
    assert llm_server.requests == []


def test_an_unknown_price_under_a_cap_refuses_the_run_and_without_a_cap_reports_unknown(llm_server, tmp_path, capsys):
    from backend.social.annotator import main as annotator_main
    from tests.backend.test_loud_failures import LADDER

    llm_server.responder = lambda request: Reply("{}", prompt_tokens=100, completion_tokens=10)
    argv = ["--episodes", str(LADDER), "--model", "unpriced", "--base-url", llm_server.base_url, "--quiet"]
    assert annotator_main([*argv, "--out", str(tmp_path / "a"), "--max-cost", "5"]) == COST_CAP_EXIT
    assert "the estimate is unknown" in capsys.readouterr().err and llm_server.requests == []
    annotator_main([*argv, "--out", str(tmp_path / "b"), "--parse-retries", "0"])
    assert "Cost of this run: unknown (" in capsys.readouterr().out


def by_length(request):
    """An answer whose reported prompt tokens are the prompt's characters / 3, with 60 completion tokens."""
    chars = sum(len(str(message.get("content", ""))) for message in request["messages"])
    return Reply("{}", prompt_tokens=chars // 3, completion_tokens=60)


def last_run_against_measured(out, llm_server):
    """The run manifest's last run, and what ``by_length``'s answers to the server's requests cost."""
    run = json.loads((out / "run_manifest.json").read_text(encoding="utf-8"))["runs"][-1]
    return run, sum(costs.call_cost("m", by_length(r).prompt_tokens, 60, TABLE) for r in llm_server.requests)


def test_an_annotator_estimate_from_a_pilot_on_a_short_episode_scales_to_the_long_ones_planned(
    llm_server, prices, tmp_path, capsys
):
    # The server reports a prompt's characters / 3 as its prompt tokens and 60 completion tokens. The pilot rates a
    # short episode; the run then rates episodes whose turns are 20 times as long: the pilot's mean prompt alone
    # would under-estimate their prompts by a third.
    from backend.social.annotator import main as annotator_main

    llm_server.responder = by_length
    source = json.loads((PROJECT_ROOT / "backend/social/data/episodes/gold_concert_tickets.json").read_text("utf-8"))
    folder = tmp_path / "episodes"
    folder.mkdir()
    (folder / "a_short.json").write_text(json.dumps(source), encoding="utf-8")
    argv = ["--episodes", str(folder), "--model", "m", "--base-url", llm_server.base_url, "--quiet"]
    argv += ["--out", str(tmp_path / "out"), "--prices", str(prices), "--parse-retries", "0"]
    annotator_main(argv)  # the pilot: 2 units, unparseable replies with their tokens
    for number in (1, 2):
        long = source | {"id": f"long-{number}", "turns": [t | {"text": t["text"] * 20} for t in source["turns"]]}
        (folder / f"b_long_{number}.json").write_text(json.dumps(long), encoding="utf-8")
    assert annotator_main([*argv, "--estimate-only"]) == 0
    out = capsys.readouterr().out
    assert "measured on 2 units already run" in out and "scaled by each unit's prompt characters" in out
    llm_server.clear()
    annotator_main(argv)
    run, measured = last_run_against_measured(tmp_path / "out", llm_server)
    assert len(llm_server.requests) == run["paid_calls"] == 4
    assert run["cost"] == pytest.approx(measured)
    assert abs(run["estimate"]["cost"] - measured) <= 0.1 * measured, (run["estimate"], measured)


def test_a_judge_resumed_after_a_pilot_estimates_the_rest_from_the_pilots_tokens(llm_server, prices, tmp_path, capsys):
    import shutil

    from backend.reasoning.judge import main as judge_main
    from tests.backend.reasoning.test_judge import LOGS_DIR

    llm_server.responder = by_length
    logs = sorted(LOGS_DIR.glob("*.txt"))
    folder = tmp_path / "logs"
    folder.mkdir()
    for path in [LOGS_DIR / "language.json", logs[0]]:
        shutil.copy(path, folder / path.name)
    argv = ["--logs", str(folder), "--model", "m", "--base-url", llm_server.base_url, "--quiet"]
    argv += ["--out", str(tmp_path / "out"), "--prices", str(prices), "--parse-retries", "0"]
    judge_main(argv)  # the pilot: one log
    for path in logs[1:]:
        shutil.copy(path, folder / path.name)
    assert judge_main([*argv, "--estimate-only"]) == 0
    assert "measured on 1 logs already run" in capsys.readouterr().out
    llm_server.clear()
    judge_main(argv)
    run, measured = last_run_against_measured(tmp_path / "out", llm_server)
    assert len(llm_server.requests) == run["paid_calls"] == len(logs) - 1
    assert run["cost"] == pytest.approx(measured)
    assert abs(run["estimate"]["cost"] - measured) <= 0.1 * measured, (run["estimate"], measured)


def test_a_pilot_unit_without_reported_tokens_is_left_out_of_the_prompt_sizes_too(llm_server, prices, tmp_path, capsys):
    # The pilot rates a short and a long episode, but the long one's tokens were not reported (blanked in its rows, as
    # an endpoint without usage leaves them). Its prompt characters must not count against the short one's tokens:
    # tokens per character would come out about 7 times too small and the long episodes planned next under-estimated.
    from backend.social.annotator import main as annotator_main

    llm_server.responder = by_length
    source = json.loads((PROJECT_ROOT / "backend/social/data/episodes/gold_concert_tickets.json").read_text("utf-8"))
    folder = tmp_path / "episodes"
    folder.mkdir()

    def long_episode(name):
        episode = source | {"id": name, "turns": [t | {"text": t["text"] * 20} for t in source["turns"]]}
        (folder / f"{name}.json").write_text(json.dumps(episode), encoding="utf-8")

    (folder / "a_short.json").write_text(json.dumps(source), encoding="utf-8")
    long_episode("b_long_unreported")
    argv = ["--episodes", str(folder), "--model", "m", "--base-url", llm_server.base_url, "--quiet"]
    argv += ["--out", str(tmp_path / "out"), "--prices", str(prices), "--parse-retries", "0"]
    annotator_main(argv)  # the pilot: 4 units
    (written,) = (tmp_path / "out").glob("*.csv")
    with open(written, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows, columns = list(reader), reader.fieldnames
    for row in rows:
        if row["episode_id"] == "b_long_unreported":
            row["prompt_tokens"] = row["completion_tokens"] = ""
    with open(written, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    for number in (1, 2):
        long_episode(f"c_long_{number}")
    capsys.readouterr()
    llm_server.clear()
    annotator_main(argv)
    run, measured = last_run_against_measured(tmp_path / "out", llm_server)
    assert len(llm_server.requests) == 4 and run["cost"] == pytest.approx(measured)
    assert abs(run["estimate"]["cost"] - measured) <= 0.1 * measured, (run["estimate"], measured)


def test_an_endpoint_that_reports_no_prompt_tokens_measured_nothing():
    assert not costs.Measured(units=2, calls=4, prompt_tokens=0, completion_tokens=80).usable
    assert costs.Measured(units=2, calls=4, prompt_tokens=1, completion_tokens=80).usable
