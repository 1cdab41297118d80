"""LLM faults under load: many DoND games at once while the model endpoint times out, rate-limits (429 with
Retry-After), fails (500), drops streams and sends garbage. Every game ends in a defined state, nobody is stuck,
every request to the endpoint is stored exactly once, and the global cap on concurrent calls holds."""

from __future__ import annotations

import pytest

from harness.dond_fault_run import STORED_KIND, FaultyModel, play_all_to_end, summarise
from harness.dond_live_client import advance_all
from harness.servers import (
    base_env,
    create_session,
    export_rows,
    own_database,
    run_async,
    running_server,
    uses_server_database,
)

pytestmark = pytest.mark.slow

GAMES = 24
CAP = 6  # LLM_MAX_CONCURRENCY: far fewer than the games that want a model call at the same moment
REPROMPTS = 2
TIMEOUT_S = 3.0


def test_every_game_ends_defined_under_injected_faults_and_the_cap_holds(llm_server):
    # 3 s per call: a busy CI machine must not turn slow streams into timeouts that were not injected.
    model = FaultyModel(fault_rate=0.35, seed=7, timeout_s=TIMEOUT_S)
    llm_server.responder = model
    env = base_env(
        OPENAI_BASE_URL=llm_server.base_url, OPENAI_API_KEY="sk-test-not-a-real-key", LLM_MAX_CONCURRENCY=str(CAP)
    )
    with own_database(env) as env:
        kind = "prodserver" if uses_server_database(env) else "devserver"
        with running_server(kind=kind, env=env) as server:
            session = create_session(
                server.url,
                "dond_llm",
                GAMES,
                llm_model="test-model",
                first_mover="human",
                llm_timeout_s=TIMEOUT_S,
                llm_max_retries=1,
                llm_reprompts=REPROMPTS,
            )
            players = advance_all(server.url, session["code"])
            outcomes = run_async(play_all_to_end([p.live_url for p in players], deadline_s=150))
            games = export_rows(server.url, "dond", "custom_export_dond_games")
            events = export_rows(server.url, "dond", "custom_export_dond_events")

    report = summarise(games, events)
    print(f"\ninjected: {dict(model.injected)}; games: {report}")
    assert [o for o in outcomes if not o.finished] == []  # nobody stuck, no error, no rejected move
    assert report["games"] == report["finished"] == GAMES
    for game in games:  # defined end: both proposals in, or aborted with a stored reason
        if game["aborted"] in ("1", "True"):
            assert game["abort_reason"].split(":")[0] in ("llm_error", "llm_invalid"), game["abort_reason"]
        else:
            assert game["proposal_a"] and game["proposal_b"] and game["outcome"] in ("success", "lose")
    # Every request the endpoint received is one attempt of one stored call: none lost, none stored twice.
    assert report["attempts"] == len(llm_server.requests) == sum(model.injected.values())
    # A dropped stream is shown, then cut: never retried, so each one is a stored 'interrupted' call.
    assert report["failed_calls"]["interrupted"] == model.injected["dropped_stream"] > 0
    assert set(report["failed_calls"]) <= set(STORED_KIND.values())
    # An aborted game ended after more failed calls in a row than the re-prompt budget allows, and only then.
    for game in games:
        calls = [e for e in events if e["game_id"] == game["game_id"] and e["kind"] == "llm_call"]
        failed_in_a_row = 0
        for call in calls:
            failed_in_a_row = failed_in_a_row + 1 if call["llm_error_kind"] else 0
        aborted = game["aborted"] in ("1", "True")
        assert (failed_in_a_row > REPROMPTS) == (aborted and game["abort_reason"].startswith("llm_error")), game
    assert llm_server.max_in_flight == CAP  # the cap was reached and never exceeded
