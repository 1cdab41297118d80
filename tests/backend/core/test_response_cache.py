"""The opt-in response cache and the per-call costs (issue 37), from outside: the real ``openai`` client against the
fake OpenAI-compatible server. A rerun of the same run with ``--cache DIR`` sends no request, costs 0 and writes the
same records (apart from times and the cached mark); only successful answers are kept; a corrupted entry is ignored
and flagged, never fatal. Each model call's cost in ``dond_events`` and in the runners' CSVs is the price table
times its tokens."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest

from backend.core.llm import LLMSettings, complete
from backend.core.llm.cache import CACHE, ResponseCache, request_key
from backend.core.llm.fake_server import DEMO_RESPONDER, Reply, responder_named
from backend.core.llm.records import record_cost
from backend.dond import selfplay
from tests.support.prices import TABLE, price_file

MESSAGES = [{"role": "user", "content": "Say hello."}]
PER_CALL = (700 * 1.0 + 40 * 4.0) / 1e6  # a call of known_tokens by PRICES
# What may differ between a run and its cached rerun: times, the cached mark and what the call cost.
VARYING = {
    "created_at",
    "latency_s",
    "started_at",
    "ended_at",
    "answered_at",
    "judged_at",
    "seconds",
    "call_cost",
    "llm_cost",
    "cost",
    "llm_cached",
    "cached_calls",
    "attempts",
}


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-37")


@pytest.fixture
def prices(tmp_path) -> Path:
    return price_file(tmp_path)


def known_tokens(request):
    """The offline demo's DoND player, with usage reported as 700 prompt and 40 completion tokens per call."""
    reply = responder_named(DEMO_RESPONDER)(request)
    return Reply(reply.text if isinstance(reply, Reply) else reply, prompt_tokens=700, completion_tokens=40)


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def steady(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows without the cells a cached rerun may change, in a stable order."""
    kept = [{name: value for name, value in row.items() if name not in VARYING} for row in rows]
    return sorted(kept, key=lambda row: json.dumps(row, sort_keys=True))


def cached_call(settings: LLMSettings, cache: ResponseCache, **options):
    async def call():
        CACHE.set(cache)
        return await complete(MESSAGES, settings, max_tokens=40, **options)

    return asyncio.run(call())


# --- the cache ------------------------------------------------------------------------------------------------------
def test_a_selfplay_rerun_with_the_cache_sends_nothing_costs_nothing_and_writes_the_same_records(
    llm_server, prices, tmp_path, capsys
):
    llm_server.responder = known_tokens
    cache = tmp_path / "cache"
    base = ["--model-a", "m", "--base-url", llm_server.base_url, "--quiet", "--instances", "2"]
    base += ["--prices", str(prices), "--cache", str(cache)]
    assert selfplay.main([*base, "--out", str(tmp_path / "first")]) == 0
    sent = len(llm_server.requests)
    assert sent > 0 and "0 answers from the cache" in capsys.readouterr().out
    llm_server.clear()
    assert selfplay.main([*base, "--out", str(tmp_path / "again")]) == 0
    assert llm_server.requests == []  # the rerun asked nothing
    assert f"{sent} answers from the cache (cost 0)" in capsys.readouterr().out

    first, again = (read_csv(tmp_path / run / "dond_events.csv") for run in ("first", "again"))
    assert steady(first) == steady(again)
    calls = [row for row in again if row["kind"] == "llm_call"]
    assert len(calls) == sent and {row["llm_cached"] for row in calls} == {"1"}
    assert {float(row["call_cost"]) for row in calls} == {0.0}
    assert {row["llm_cached"] for row in first if row["kind"] == "llm_call"} == {"0"}
    games = [read_csv(tmp_path / run / "dond_games.csv") for run in ("first", "again")]
    assert steady(games[0]) == steady(games[1])
    assert {float(row["llm_cost"]) for row in games[1]} == {0.0} and all(float(r["llm_cost"]) > 0 for r in games[0])
    manifest = json.loads((tmp_path / "again" / "run_manifest.json").read_text(encoding="utf-8"))
    assert manifest["runs"][-1]["cost"] == 0.0 and manifest["runs"][-1]["cache"]["hits"] == sent


def test_the_other_runners_rerun_from_the_cache_without_a_request_and_with_the_same_rows(
    llm_server, prices, tmp_path, capsys
):
    from backend.bias.runner import main as bias_main
    from backend.reasoning.judge import main as judge_main
    from backend.social.annotator import main as annotator_main
    from tests.backend.reasoning.test_judge import LOGS_DIR
    from tests.backend.test_loud_failures import LADDER

    common = ["--model", "m", "--base-url", llm_server.base_url, "--quiet", "--prices", str(prices)]
    runners = {
        "annotator": (annotator_main, ["--episodes", str(LADDER)]),
        "judge": (judge_main, ["--logs", str(LOGS_DIR)]),
        "bias": (bias_main, []),
    }
    for name, (main, own) in runners.items():
        cache = ["--cache", str(tmp_path / f"cache-{name}")]
        llm_server.clear()
        main([*own, *common, *cache, "--out", str(tmp_path / name / "first")])
        assert llm_server.requests, name
        llm_server.clear()
        main([*own, *common, *cache, "--out", str(tmp_path / name / "again")])
        assert llm_server.requests == [], name  # every call of the first run was answered: none is asked again
        first = {path.name: read_csv(path) for path in (tmp_path / name / "first").glob("*.csv")}
        again = {path.name: read_csv(path) for path in (tmp_path / name / "again").glob("*.csv")}
        assert first.keys() == again.keys() and first, name
        for file_name in first:
            if "cost" in (first[file_name] or [{}])[0]:
                assert steady(first[file_name]) == steady(again[file_name]), (name, file_name)
        capsys.readouterr()


def test_only_a_successful_answer_is_kept_so_a_failure_is_never_replayed(llm_server, tmp_path):
    cache = ResponseCache(tmp_path / "cache")
    settings = LLMSettings(model="m", base_url=llm_server.base_url, max_retries=0)
    llm_server.script(
        Reply(status=400, error_message="no"), Reply("Hello there.", prompt_tokens=7, completion_tokens=3)
    )
    failed = cached_call(settings, cache)
    assert failed.error_kind == "http_error" and not failed.cached and cache.stored == 0
    answered = cached_call(settings, cache)
    assert answered.ok and not answered.cached and cache.stored == 1
    again = cached_call(settings, cache)
    assert len(llm_server.requests) == 2  # the third call was answered from the cache
    assert again.cached and again.attempts == 0 and again.reply == "Hello there."
    assert (again.prompt_tokens, again.completion_tokens) == (7, 3) and record_cost(again, TABLE) == 0.0
    assert record_cost(answered, TABLE) == pytest.approx((7 + 3 * 4) / 1e6)


def test_the_key_is_the_full_request_so_another_setting_or_endpoint_is_asked_again(llm_server, tmp_path):
    cache = ResponseCache(tmp_path / "cache")
    settings = LLMSettings(model="m", base_url=llm_server.base_url, max_retries=0, temperature=0.0)
    cached_call(settings, cache)
    for changed in (
        LLMSettings(model="m", base_url=llm_server.base_url, max_retries=0, temperature=0.5),
        LLMSettings(model="m", base_url=llm_server.base_url, max_retries=0, temperature=0.0, seed=3),
        LLMSettings(model="m", base_url=llm_server.base_url.replace("127.0.0.1", "localhost"), max_retries=0),
    ):
        assert not cached_call(changed, cache).cached
    assert not cached_call(settings, cache, top_p=0.5).cached
    assert cached_call(settings, cache).cached
    assert len(llm_server.requests) == 5
    assert request_key({"a": 1}) != request_key({"a": 1, "max_tokens": 2})


@pytest.mark.parametrize("damage", ["not json", '{"format": 1, "key": "other"}', "", "\udcff"])
def test_a_corrupted_entry_is_ignored_and_flagged_never_fatal(llm_server, tmp_path, damage):
    cache = ResponseCache(tmp_path / "cache")
    settings = LLMSettings(model="m", base_url=llm_server.base_url, max_retries=0)
    cached_call(settings, cache)
    [entry] = list((tmp_path / "cache").glob("*/*.json"))
    entry.write_bytes(damage.encode("utf-8", "surrogateescape"))
    record = cached_call(settings, cache)
    assert record.ok and not record.cached and record.extra.get("cache_corrupt") is True
    assert cache.corrupt == 1 and len(llm_server.requests) == 2
    assert cached_call(settings, cache).cached  # the fresh answer replaced the damaged entry


# --- the per-call costs ---------------------------------------------------------------------------------------------
def test_each_call_in_dond_events_costs_the_price_table_times_its_tokens(llm_server, prices, tmp_path):
    llm_server.responder = known_tokens
    argv = ["--model-a", "m", "--base-url", llm_server.base_url, "--quiet", "--instances", "1"]
    assert selfplay.main([*argv, "--prices", str(prices), "--out", str(tmp_path)]) == 0
    rows = read_csv(tmp_path / "dond_events.csv")
    calls = [row for row in rows if row["kind"] == "llm_call"]
    assert calls and len(calls) == len(llm_server.requests)
    assert all(float(row["call_cost"]) == pytest.approx(PER_CALL) for row in calls)
    assert {row["llm_cost_currency"] for row in calls} == {"USD"}
    assert {row["call_cost"] for row in rows if row["kind"] != "llm_call"} == {""}
    for game in read_csv(tmp_path / "dond_games.csv"):
        own = [float(row["call_cost"]) for row in calls if row["game_id"] == game["game_id"]]
        assert float(game["llm_cost"]) == pytest.approx(sum(own))


def test_an_unknown_price_leaves_a_calls_cost_empty_never_free(llm_server, tmp_path):
    llm_server.responder = known_tokens
    argv = ["--model-a", "m", "--base-url", llm_server.base_url, "--quiet", "--instances", "1"]
    assert selfplay.main([*argv, "--out", str(tmp_path)]) == 0
    calls = [row for row in read_csv(tmp_path / "dond_events.csv") if row["kind"] == "llm_call"]
    assert calls and {row["call_cost"] for row in calls} == {""}


def test_each_row_of_the_other_runners_costs_the_price_table_times_its_calls_tokens(llm_server, prices, tmp_path):
    from backend.bias.runner import main as bias_main
    from backend.reasoning.judge import main as judge_main
    from backend.social.annotator import main as annotator_main
    from tests.backend.reasoning.test_judge import LOGS_DIR
    from tests.backend.test_loud_failures import LADDER

    common = ["--model", "m", "--base-url", llm_server.base_url, "--quiet", "--prices", str(prices)]
    runners = {
        "annotator": (annotator_main, ["--episodes", str(LADDER)], "calls"),
        "judge": (judge_main, ["--logs", str(LOGS_DIR)], "asks"),
        "bias": (bias_main, [], "attempts"),
    }
    for name, (main, own, calls_column) in runners.items():
        llm_server.clear()
        llm_server.responder = lambda request: Reply("{}", prompt_tokens=700, completion_tokens=40)
        main([*own, *common, "--out", str(tmp_path / name), "--parse-retries", "0"])
        rows = [row for path in (tmp_path / name).glob("*.csv") for row in read_csv(path) if "cost" in row]
        assert rows, name
        for row in rows:
            if row.get("prompt_tokens", "") == "" and name != "bias":
                continue
            calls = int(row[calls_column])
            assert float(row["cost"]) == pytest.approx(calls * PER_CALL), (name, row)
            assert row["cached_calls"] == "0", name


def test_a_selfplay_folder_from_before_the_cost_columns_resumes_with_its_rows_lined_up(llm_server, prices, tmp_path):
    llm_server.responder = known_tokens
    argv = ["--model-a", "m", "--base-url", llm_server.base_url, "--quiet", "--prices", str(prices)]
    assert selfplay.main([*argv, "--instances", "1", "--out", str(tmp_path)]) == 0
    old = {"dond_events.csv": ("call_cost", "llm_cost_currency", "llm_cached"), "dond_games.csv": ("llm_cost",)}
    for name, dropped in old.items():  # as a run before issue 37 wrote them
        rows = read_csv(tmp_path / name)
        columns = [column for column in rows[0] if column not in dropped]
        with (tmp_path / name).open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)
    assert selfplay.main([*argv, "--instances", "2", "--out", str(tmp_path)]) == 0
    events = read_csv(tmp_path / "dond_events.csv")
    kinds = {"message", "proposal", "llm_call", "violation", "reprompt", "abort", "llm_error", "note", "probe"}
    assert {row["kind"] for row in events} <= kinds
    new_calls = [row for row in events if row["kind"] == "llm_call" and row["game_id"].startswith("i1")]
    assert new_calls and all(float(row["call_cost"]) == pytest.approx(PER_CALL) for row in new_calls)
    games = read_csv(tmp_path / "dond_games.csv")
    assert len(games) == 4 and all(row["outcome"] for row in games)
    assert all(None not in row for row in [*events, *games])  # no row longer than its header
    for game in (row for row in games if row["game_id"].startswith("i1")):
        own = [float(row["call_cost"]) for row in new_calls if row["game_id"] == game["game_id"]]
        assert game["llm_cost_currency"] == "USD" and float(game["llm_cost"]) == pytest.approx(sum(own))
