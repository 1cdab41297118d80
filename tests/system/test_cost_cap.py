"""Issue 37 (part A), from outside on ``otree prodserver`` in production mode: a live DoND study with a price table
(``llm_prices_file``) and a spending cap (``llm_cost_cap``) makes no paid call past its cap. The person whose game
needs the model is never stuck: the game ends (``llm_cost_cap``), the page says why and how to go on, and the stated
pay rule (``model_failure_pay``) pays. Study status and the launch check say what was spent and that the cap is
reached; the exports hold the game's cost."""

from __future__ import annotations

import json

import pytest

from backend.core.llm.fake_server import Reply
from harness.participants import people
from harness.servers import production_lab, run_async
from tests.support.admin import logged_in
from tests.support.dond_integrity import dond_export
from tests.support.live import chat_until_the_model_replies, payload_of, send_until

# 1 (of the table's currency) a token; a call holds its prompt (2 characters a token) and max_tokens 516 before it
# is sent: the first call fits under the cap of 3000, reports 5000 + 10 tokens, and no later call fits.
PRICES = {"currency": "EUR", "models": {"priced-model": {"input_per_million": 1e6, "output_per_million": 1e6}}}
CAP = 3000


@pytest.fixture(scope="module")
def lab(_llm_server_instance):
    with production_lab(_llm_server_instance.base_url) as server:
        yield server


def test_a_live_dond_study_at_its_cap_ends_the_game_pays_the_stated_rule_and_says_so(lab, llm_server, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES), encoding="utf-8")
    llm_server.responder = lambda request: Reply(
        "Could I have the books? You may keep the rest.", prompt_tokens=5000, completion_tokens=10
    )
    config = dict(llm_model="priced-model", first_mover="human", llm_prices_file=str(prices), llm_cost_cap=CAP)
    [person] = people(lab.url, "dond_llm", 1, **config)
    person.advance_to("Bargain")
    chat = chat_until_the_model_replies(person, "Hello, which items matter to you?")  # the one call the cap admits
    assert any(item.get("who") == "other" for item in chat)
    assert len(llm_server.requests) == 1

    frames = run_async(
        send_until(
            person.live_url(),
            {"type": "message", "text": "I would like the hats and the balls."},
            lambda payload: payload.get("type") == "state" and payload.get("finished"),
        )
    )
    last = payload_of(frames[-1])
    said = " ".join(str(item.get("text", "")) for item in last["chat"])
    assert "budget for" in said and "Please press Continue" in said, said
    assert len(llm_server.requests) == 1  # no call past the cap was sent

    person.submit({})  # the person goes on: never stuck
    assert person.page == "Results", person.url
    (game,) = [row for row in dond_export(lab.url, "custom_export_dond_games", person.session_code)]
    assert game["outcome"] == "aborted" and game["abort_reason"].startswith("llm_cost_cap")
    assert game["pay_rule"] == "model_failure_half_total" and int(game["bonus_points"]) > 0
    assert float(game["llm_cost"]) == pytest.approx(5010.0)  # the game's cost, by the price table
    calls = [row for row in dond_export(lab.url, "custom_export_dond_events", person.session_code)]
    calls = [row for row in calls if row["kind"] == "llm_call"]
    sent = [row for row in calls if row["llm_error_kind"] != "cost_cap"]
    assert len(sent) == 1 and float(sent[0]["call_cost"]) == pytest.approx(5010.0)  # each call's cost (issue 37)
    assert {row["llm_cost_currency"] for row in calls} == {"EUR"} and {row["llm_cached"] for row in calls} == {"0"}
    assert all(float(row["call_cost"]) == 0 for row in calls if row not in sent)  # never sent: it cost nothing

    admin = logged_in(lab.url, lab.password)
    status = admin.get(f"{lab.url}/StudyStatus/{person.session_code}", timeout=30).text
    assert 'class="cap-reached"' in status and "5010.0000 EUR" in status, status[-3000:]
    check = admin.get(f"{lab.url}/LaunchCheck/{person.session_code}", timeout=60).text
    assert "The spending cap of 3000.0000 EUR is reached" in check
    assert "tokens measured on the 1 calls stored so far" in check


def test_a_cap_without_the_models_price_is_refused_at_creation(lab, tmp_path):
    import requests

    from harness.servers import create_session

    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"currency": "EUR", "models": {}}), encoding="utf-8")
    with pytest.raises(requests.HTTPError) as refused:
        create_session(lab.url, "dond_llm", 1, llm_model="other-model", llm_prices_file=str(prices), llm_cost_cap=5)
    assert "has no price for the model 'other-model'" in refused.value.response.text
