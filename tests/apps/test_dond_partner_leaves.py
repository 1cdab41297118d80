"""Person-vs-person DoND when a partner leaves (session key ``partner_leaves``; docs/partner-leaves.md), over the
real live socket of a real oTree server, the model served by the fake endpoint.

- ``model``: the partner goes silent mid-chat; the next heartbeat of the one left behind gives the seat to the model,
  which plays on until the game ends in a deal; the person is told; the leaver, back, cannot move; the games and
  events exports and the transcript show the switch; the person reaches Results and the completion page.
- ``end``: the game ends; the person is told why (German) and reaches Results with the stated bonus
  (``partner_left_pay``) and then the completion page.
- ``partner_leaves=model`` without a model is refused at creation with a sentence.
- The Pairing page states what happens, and what is paid, if nobody arrives (en/de/it).

A partner counts as gone after ``disconnect_timeout_s`` without a heartbeat (10 s, the key's minimum): the tests move
the server's clock forward (``server_clock``) instead of waiting.
"""

from __future__ import annotations

import asyncio
import json
import math
import re

import pytest
import requests
import websockets

from backend.core.llm.fake_server import Reply
from harness.participants import people
from harness.servers import export_rows, rest_headers, run_async
from tests.support.live import next_state, pair_and_start, payload_of, receive, send_until

GONE_S = 10  # disconnect_timeout_s of these sessions
MODEL = "test-model"


def chat_then_take_nothing(request) -> Reply:
    """Chat until the prompt asks for a proposal (the notices end with the bracket format), then take nothing."""
    asked = request["messages"][-1]["content"].rstrip().endswith("]")
    return Reply(text="[Proposal: ]" if asked else "I would like the rest, please.")


def opener_and_other(players):
    opener = players[0] if players[0].js_vars()["view"]["can_message"] else players[1]
    return opener, players[1] if opener is players[0] else players[0]


async def states_until(socket, done) -> list[dict]:
    """State payloads until ``done(state)``; a refusal fails the test."""
    states = []
    while True:
        payload = payload_of(await receive(socket, timeout_s=60))
        if payload.get("type") == "rejected":
            raise AssertionError(f"refused: {payload}")
        if payload.get("type") == "state":
            states.append(payload)
            if done(payload):
                return states


def texts_of(state) -> str:
    return " ".join(item.get("text", "") for item in state["chat"])


def finish_study(person) -> str:
    """From the finished Bargain page to Results, then the completion page; returns the Results page."""
    person.reload()
    person.submit()
    assert person.page == "Results", person.url
    results = person.html
    person.submit()
    assert person.page == "Completion", person.url
    return results


def test_a_model_takes_over_the_seat_of_a_partner_who_leaves_and_the_game_ends_in_a_deal(
    otree_server, llm_server, server_clock
):
    llm_server.responder = chat_then_take_nothing
    players = people(
        otree_server.url,
        "dond_human",
        2,
        partner_leaves="model",
        llm_model=MODEL,
        disconnect_timeout_s=GONE_S,
        max_messages=2,
    )
    pair_and_start(players)
    stayer, leaver = opener_and_other(players)

    async def play():
        async with websockets.connect(stayer.live_url(), max_size=None) as socket:
            log: list = []
            await socket.send(json.dumps({"type": "message", "text": "Hello, I need the hats."}))
            await next_state(socket, log)
            server_clock.advance(GONE_S + 1)  # the other never answers: their page is closed
            await socket.send(json.dumps({"type": "ping"}))
            taken = await states_until(socket, lambda s: not s["typing"] and s["chat"][-1]["who"] == "other")
            await socket.send(json.dumps({"type": "message", "text": "Fine, then I take the hats only."}))
            await states_until(socket, lambda s: not s["typing"] and s["can_propose"])
            await socket.send(json.dumps({"type": "proposal", "counts": {}}))
            end = (await states_until(socket, lambda s: s["finished"]))[-1]
        async with websockets.connect(leaver.live_url(), max_size=None) as socket:  # the one who left comes back
            await socket.send(json.dumps({"type": "message", "text": "Sorry, I am back."}))
            refusal = payload_of(await receive(socket))
        return taken, end, refusal

    taken, end, refusal = run_async(play())
    told_before = "If the other participant leaves or stops answering, an AI continues in their place"
    assert any(told_before in page for page in stayer.seen), "the Instructions state the rule"
    assert any("has left the game. From now on an AI continues" in texts_of(s) for s in taken), taken
    assert end["finished"] and end["outcome"] == "success", end
    assert refusal["type"] == "rejected" and "An AI plays in your place" in refusal["message"], refusal
    assert len(llm_server.requests) >= 2  # the model wrote and proposed in the leaver's seat

    code = stayer.session_code
    (game,) = export_rows(otree_server.url, "dond", "custom_export_dond_games", session_code=code)
    assert game["opponent"] == "human" and game["model"] == f"takeover:{MODEL}", game
    assert game["taken_over_by_model"] == "1" and game["takeover_reason"] == "partner_left"
    events = export_rows(otree_server.url, "dond", "custom_export_dond_events", session_code=code)
    (switch,) = [e for e in events if e["kind"] == "takeover"]
    role = switch["role"]
    assert game["takeover_role"] == role and switch["actor"] == "system" and switch["model"] == MODEL
    after = events[events.index(switch) + 1 :]
    moves = [e for e in after if e["role"] == role and e["kind"] in ("message", "proposal")]
    assert moves and all(e["actor"] == "llm" for e in moves), after
    assert game["takeover_at"] == switch["created_at"]

    transcripts = requests.get(f"{otree_server.url}/DondTranscripts/{code}", headers=rest_headers(), timeout=30)
    assert f"a model ({MODEL}) takes over {role}: player {role} left the game" in transcripts.text

    results = finish_study(stayer)
    assert "Deal! Your proposals fit together." in results, results[-3000:]
    left = finish_study(leaver)  # the one who left, back, is told they get no bonus
    assert "you left the game before it ended, so no bonus is paid" in left, left[-3000:]


def test_a_partner_who_leaves_ends_the_game_and_the_one_left_behind_is_paid_the_stated_bonus(
    otree_server, server_clock
):
    players = people(
        otree_server.url, "dond_human", 2, language="de", disconnect_timeout_s=GONE_S, partner_left_pay="half_total"
    )
    pair_and_start(players)
    stayer, _ = opener_and_other(players)
    items = stayer.js_vars()["items"]
    points = math.ceil(sum(item["count"] * item["own_points"] for item in items) / 2)

    async def play():
        async with websockets.connect(stayer.live_url(), max_size=None) as socket:
            await socket.send(json.dumps({"type": "message", "text": "Guten Tag."}))
            await next_state(socket, [])
            server_clock.advance(GONE_S + 1)
            await socket.send(json.dumps({"type": "ping"}))
            return await states_until(socket, lambda s: s["finished"])

    end = run_async(play())[-1]
    told_before = "Verlässt die andere Person das Spiel oder antwortet nicht mehr, endet das Spiel"
    assert any(told_before in page and f"({points} Punkte)" in page for page in stayer.seen), "the Instructions"
    assert end["outcome"] == "aborted" and "hat das Spiel verlassen" in texts_of(end), end
    results = finish_study(stayer)
    assert f"aufgerundet ({points} Punkte)" in results, re.findall(r'<p id="dond-paid">(.*?)</p>', results, re.S)
    bonus = re.search(r'<td id="bonus">(.*?)</td>', results).group(1)
    assert points > 0 and re.search(r"[1-9]", bonus), bonus  # the half-total bonus, in the study's currency


def test_partner_leaves_model_without_a_model_is_refused_at_creation(otree_server):
    payload = dict(
        session_config_name="dond_human", num_participants=2, modified_session_config_fields={"partner_leaves": "model"}
    )
    response = requests.post(otree_server.url + "/api/sessions", json=payload, headers=rest_headers(), timeout=30)
    assert response.status_code == 400, response.text[:500]
    assert "set llm_model" in response.text, response.text[:2000]


@pytest.mark.parametrize(
    ("language", "said"),
    [
        (
            "en",
            "If no partner is found within 2 minutes, you continue without a game and receive the participation fee",
        ),
        ("de", "Wird innerhalb von 2 Minuten keine zweite Person gefunden"),
        ("it", "Se entro 2 minuti non viene trovata un'altra persona"),
    ],
)
def test_the_pairing_page_says_what_happens_and_what_is_paid_if_nobody_arrives(otree_server, language, said):
    (person,) = people(otree_server.url, "dond_human", 2, language=language, pairing_timeout_s=120)[:1]
    person.advance_to("Pairing")
    rule = re.search(r'<p id="pairing-rule">(.*?)</p>', person.html, re.S)
    assert rule and said in rule.group(1).replace("&#x27;", "'").replace("&#39;", "'"), person.html[-3000:]


def test_a_partner_still_reading_the_instructions_is_not_taken_for_gone(otree_server, llm_server, server_clock):
    """The Instructions page sends a heartbeat: a partner who reads longer than ``disconnect_timeout_s`` while the
    other already waits on the Bargain page keeps their seat (no takeover, no abort, no ``left_game`` pay)."""
    llm_server.responder = chat_then_take_nothing
    players = people(
        otree_server.url, "dond_human", 2, partner_leaves="model", llm_model=MODEL, disconnect_timeout_s=GONE_S
    )
    for player in players:
        player.advance_to("Pairing")
    for player in players:
        run_async(send_until(player.live_url(), {"type": "wait"}, until=lambda p: True))
    quick, reader = players
    quick.advance_to("Bargain")
    reader.advance_to("Instructions")

    async def wait_and_read():
        async with (
            websockets.connect(quick.live_url(), max_size=None) as waiting,
            websockets.connect(reader.live_url(), max_size=None) as reading,
        ):
            for _ in range(GONE_S // 2 + 2):  # longer than disconnect_timeout_s, the reader's page alive
                server_clock.advance(2)
                await reading.send(json.dumps({"type": "ping"}))  # as the page's own heartbeat sends it
                await asyncio.sleep(0.2)
            await waiting.send(json.dumps({"type": "load"}))
            return await next_state(waiting, [])

    state = run_async(wait_and_read())
    assert not state["finished"] and "has left the game" not in texts_of(state), state
    (game,) = export_rows(otree_server.url, "dond", "custom_export_dond_games", session_code=quick.session_code)
    assert game["taken_over_by_model"] in ("", "0") and game["outcome"] in ("", "unfinished"), game
