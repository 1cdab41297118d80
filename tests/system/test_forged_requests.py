"""A participant cannot read or change another participant's data through pages or live messages.

oTree names the participant in every request: page URLs are ``/p/<code>/<app>/<Page>/<index>`` and the live socket's
query string holds ``participant_code``, ``page_name``, ``page_index`` and ``session_code``. The code is the only
credential (whoever holds it is that participant), so these tests check that no page or payload shows one person
another's code, and forge everything else a participant can send: page names and indexes, made-up codes,
live sockets for a page the participant is not on, live payloads with extra keys (``role``, ``participant_code``,
``game_id``...) or of the wrong type, and form posts with fields the form does not have. Each protection is checked
on what the server does and stores (status codes, payloads, exports), so removing it makes a test fail.
"""

from __future__ import annotations

import json
import re

import pytest
import requests
import websockets

from backend.bias import items as bias_items
from backend.core.llm.fake_server import Reply
from backend.social import forms as social_forms
from harness.participants import Person, people
from harness.servers import export_rows, run_async
from tests.support.dond_pages import keys_of
from tests.support.live import (
    next_state,
    pair_and_start,
    payload_of,
    receive,
    send_until,
)
from tests.support.social import RUBRIC

pytestmark = pytest.mark.slow


class Raw(str):
    """A frame sent as it is (every other frame is sent as JSON, as ``liveSend`` does)."""


BAD_FRAME = Raw("{this is not JSON")  # the server closes the socket at this frame, after handling the ones before


def player_rows(person: Person, app: str) -> list[dict]:
    rows = export_rows(person.server, app, session_code=person.session_code)
    return [row for row in rows if row["participant.code"] == person.code]


async def settle(url: str, *frames) -> list[dict]:
    """Send ``frames`` on one socket, then a frame that is not JSON; return what came back before the server closed.

    The server handles one socket's frames in order and closes it at the bad frame, so once the socket is closed
    every frame before it has been handled: "nothing came back" is known without waiting for a timeout.
    """
    received = []
    try:
        async with websockets.connect(url, max_size=None, open_timeout=30) as socket:
            for frame in frames:
                await socket.send(frame if isinstance(frame, Raw) else json.dumps(frame))
            await socket.send(BAD_FRAME)
            try:
                while True:
                    received.append(await receive(socket))
            except websockets.ConnectionClosed:
                return received
    except websockets.exceptions.InvalidStatusCode as refusal:  # refused at the handshake (lab_server/limits.py)
        assert refusal.status_code == 403, refusal
        return received


def others_said(payload: dict) -> list[str]:
    return [item.get("text", "") for item in payload.get("chat", []) if item.get("who") == "other"]


def dond_events(person: Person) -> dict[str, list[dict]]:
    """The dond events of the person's session by participant code (both players of a game share its events)."""
    games = export_rows(person.server, "dond", "custom_export_dond_games", session_code=person.session_code)
    events = export_rows(person.server, "dond", "custom_export_dond_events", session_code=person.session_code)
    by_code = {}
    for game in games:
        rows = [event for event in events if event["game_id"] == game["game_id"]]
        for code in (game["participant_a"], game["participant_b"]):
            if code:
                by_code[code] = rows
    return by_code


def dond_game_row(person: Person) -> dict:
    games = export_rows(person.server, "dond", "custom_export_dond_games", session_code=person.session_code)
    (game,) = [row for row in games if person.code in (row["participant_a"], row["participant_b"])]
    return game


def items_table_values(page_html: str) -> list[int]:
    table = re.search(r'<table[^>]*id="dond-items".*?<tbody>(.*?)</tbody>', page_html, re.S).group(1)
    return [int(cells[2]) for cells in re.findall(r"<td>(.*?)</td><td>(.*?)</td><td>(.*?)</td>", table)]


# --- pages: URLs and form posts ---------------------------------------------------------------------------------
def test_pages_other_than_the_current_one_are_neither_served_nor_stored(otree_server):
    early, ahead = people(otree_server.url, "dond_llm", 2, first_mover="human")
    ahead.advance_to("Bargain")
    bargain = ahead.index  # the page indexes are the same for every participant of the session
    start = early.url
    for page, index in (("Instructions", bargain - 1), ("Bargain", bargain), ("Results", bargain + 1)):
        forged = early.url_of(page, index)
        response = requests.get(forged, allow_redirects=False, timeout=30)
        assert (response.status_code, response.headers["location"]) == (302, start.split(early.server)[1]), forged
        assert 'id="dond-items"' not in response.text
        posted = requests.post(forged, data=dict(consent_given="True", timeout_happened="True"), timeout=30)
        assert posted.url == start  # redirected back: the form was not handled
    [row] = player_rows(early, "dond")
    # Instructions would have created a game (and shown its values); no page ran, not even Consent's form.
    assert (row["player.game_id"], row["participant._index_in_pages"], row["player.consent_given"]) == ("0", "1", "")

    for method in (requests.get, requests.post):  # a made-up code is no participant
        response = method(early.url_of("Consent", 1, code="nosuchp1"), timeout=30, allow_redirects=False)
        assert response.status_code == 404

    # A page already done cannot be posted again: declining consent afterwards changes nothing.
    early.advance_to("Instructions")
    response = requests.post(early.url_of("Consent", 1), data=dict(consent_given="False"), timeout=30)
    assert response.url == early.url
    [row] = player_rows(early, "dond")
    assert (row["player.consent_given"], row["participant._current_page_name"]) == ("1", "Instructions")

    # The game's page cannot be left by claiming its time limit ran out (it runs 30 minutes).
    ahead.submit(dict(timeout_happened="True"))
    assert ahead.page == "Bargain" and "Please finish the negotiation first." in ahead.html
    assert requests.get(ahead.url_of("Results", bargain + 1), timeout=30).url == ahead.url
    assert dond_events(ahead).get(ahead.code, []) == []  # no abort ("time_limit") stored, no game ended


def test_a_later_pages_form_posted_early_stores_nothing(otree_server):
    early, ahead = people(otree_server.url, "bias_tests", 2)
    ahead.advance_to("Choice")
    forged = early.url_of("Choice", ahead.index)
    response = requests.post(forged, data=dict(choice="0", confidence="77"), allow_redirects=False, timeout=30)
    assert response.status_code == 302 and early.url.endswith(response.headers["location"])
    rows = player_rows(early, "bias_tests")
    assert [(row["player.choice"], row["player.confidence"], row["player.answer"]) for row in rows] == [
        ("", "", "")
    ] * len(rows)
    early.advance_to("Choice")  # the participant's own way through is unaffected
    assert early.url == forged and 'name="choice"' in early.html


def test_forged_fields_in_a_rating_form_change_nothing_of_others(otree_server):
    first, second = people(
        otree_server.url, "social_eval", 2, annotators_per_episode=1, episodes_per_annotator=2, attention_checks=0
    )
    first.advance_to("Rate")
    second.advance_to("Rate")
    log = export_rows(first.server, "social_eval", "custom_export_assignments", session_code=first.session_code)
    held = {row["annotator"]: row["episode_id"] for row in log}
    mine, theirs = held[first.code], held[second.code]
    assert mine != theirs

    first.submit(dict(timeout_happened="True"))  # no time limit on this page: an empty form is just invalid
    assert first.page == "Rate" and first.index == second.index

    ratings = {}
    for agent in social_forms.AGENTS:
        for slot, dimension in enumerate(RUBRIC.dimensions, start=1):
            ratings[social_forms.rating_field(agent, slot)] = dimension.min
            ratings[social_forms.reason_field(agent, slot)] = "A reason long enough to be accepted."
    unused_slot = len(RUBRIC.dimensions) + 1
    forged = dict(
        episode_id=theirs,
        assignment=theirs,
        annotator=second.code,
        participant_code=second.code,
        id_in_group="2",
        round_number="2",
        is_gold="True",
        attention_passed="True",
        gold_max_difference="0",
        submitted_at="1",
        shown_at="1",
        seconds_spent="1",
        comprehension_attempts="-5",
        status="released",
        quiz_1="0",
    )
    unused = social_forms.rating_field(social_forms.AGENTS[0], unused_slot)
    assert unused_slot <= social_forms.MAX_DIMENSIONS  # a field of the player, but not of this rubric's form
    forged[unused] = "9"
    round_one = first.url
    first.submit(dict(ratings, **forged))
    assert first.page == "Rate" and first.url != round_one  # saved: on to the second episode

    log = export_rows(first.server, "social_eval", "custom_export_assignments", session_code=first.session_code)
    states = {(row["annotator"], row["episode_id"], row["round"]): row["status"] for row in log}
    assert states[(first.code, mine, "1")] == "done"
    assert states[(second.code, theirs, "1")] == "reserved"  # the other's reservation is untouched
    assert not any(code == first.code and episode == theirs for code, episode, _ in states)
    long_rows = export_rows(first.server, "social_eval", "custom_export_ratings_long", session_code=first.session_code)
    assert {(row["annotator"], row["episode_id"], row["is_gold"]) for row in long_rows} == {(first.code, mine, "0")}
    expected = {(d.key, str(d.min)) for d in RUBRIC.dimensions}
    assert {(row["dimension"], row["rating"]) for row in long_rows} == expected
    [row_one, row_two, *_] = player_rows(first, "social_eval")
    assert (row_one["player.episode_id"], row_one["player.is_gold"], row_one["player.attention_passed"]) == (
        mine,
        "0",
        "",
    )
    assert row_one["player.comprehension_attempts"] == "0" and float(row_one["player.submitted_at"]) > 1
    assert row_one[f"player.{unused}"] == ""

    # The saved page cannot be posted again with other ratings.
    again = {name: (dimension_max(name) if name.startswith("rating") else value) for name, value in ratings.items()}
    response = requests.post(round_one, data=again, timeout=30)
    assert response.url == first.url
    long_rows = export_rows(first.server, "social_eval", "custom_export_ratings_long", session_code=first.session_code)
    assert {(row["dimension"], row["rating"]) for row in long_rows} == expected
    assert row_two["player.episode_id"] != theirs


def dimension_max(field_name: str) -> str:
    slot = int(field_name.rsplit("_", 1)[1])
    return str(RUBRIC.dimensions[slot - 1].max)


def test_forged_fields_in_judge_and_bias_forms_are_ignored(otree_server):
    judge, other_judge = people(otree_server.url, "payoff_reasoning_eval", 2, judges_per_log=1)
    judge.advance_to("Judge")
    other_judge.advance_to("Judge")
    [mine] = player_rows(judge, "payoff_reasoning_eval")[:1]
    [theirs] = player_rows(other_judge, "payoff_reasoning_eval")[:1]
    assert mine["player.log_file"] != theirs["player.log_file"]
    forged = {
        "log_file": theirs["player.log_file"],
        "game": "xx",
        "attempts": "1",
        "orig_choice": "forged",
        "final_choice": "forged",
        "failed_queries": "forged",
        "sentence": "forged",
        "con_mat": "forged",
        "participant_code": other_judge.code,
        "consent_given": "False",
    }
    judge.submit(dict(orig_cor="1", fin_cor="1", err_type="", marked_sentences="", remarks="", **forged))
    assert judge.page != "Judge" or judge.index != other_judge.index  # saved
    [row] = player_rows(judge, "payoff_reasoning_eval")[:1]
    for field in ("log_file", "game", "attempts", "orig_choice", "final_choice", "failed_queries"):
        assert row[f"player.{field}"] == mine[f"player.{field}"], field
    assert row["player.con_mat"] in ("TP", "FP", "FN", "TN") and row["player.consent_given"] == "1"
    # The protocol's CSV holds one verdict, on the judge's own log; the other judge's log and row are untouched.
    verdicts = export_rows(judge.server, "payoff_reasoning_eval", "custom_export", session_code=judge.session_code)
    assert [(row["file"], row["con_mat"]) for row in verdicts] == [(mine["player.log_file"], row["player.con_mat"])]
    [unchanged] = player_rows(other_judge, "payoff_reasoning_eval")[:1]
    assert unchanged == theirs

    respondent, other = people(otree_server.url, "bias_tests", 2)
    respondent.advance_to("Choice")
    [before] = player_rows(respondent, "bias_tests")[:1]
    forged = dict(
        item_id="forged",
        bias="forged",
        version="forged",
        answer="999",
        is_correct="True",
        seconds="0",
        arguments_shown="a,b",
        participant_code=other.code,
    )
    respondent.submit(dict(choice="99", confidence="50", **forged))  # not one of the options: rejected
    assert respondent.page == "Choice" and player_rows(respondent, "bias_tests")[0]["player.choice"] == ""
    respondent.submit(dict(choice="0", confidence="50", **forged))
    [after] = player_rows(respondent, "bias_tests")[:1]
    for field in ("item_id", "bias", "version", "arguments_shown"):
        assert after[f"player.{field}"] == before[f"player.{field}"], field
    item = bias_items.load_items().item(before["player.item_id"])
    option = bias_items.present(item, before["player.version"]).options[0]
    assert (after["player.choice"], float(after["player.answer"])) == ("0", float(option.value))
    assert after["player.is_correct"] == (
        "" if item.bias != bias_items.ATTENTION_CHECK else str(int(option.label == item.correct))
    )
    assert float(after["player.seconds"]) > 0
    assert [row["player.choice"] for row in player_rows(other, "bias_tests")] == [""] * len(
        player_rows(other, "bias_tests")
    )


# --- live messages ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("config", "page"),
    [("social_eval", "Rate"), ("payoff_reasoning_eval", "Judge"), ("bias_tests", "Choice")],
)
def test_pages_without_a_live_method_ignore_live_messages(otree_server, config, page):
    person, other = people(otree_server.url, config, 2)
    person.advance_to(page)
    other.advance_to(page)
    app = config  # each of these session configs runs the app of the same name
    before = export_rows(person.server, app, session_code=person.session_code)
    forged = [
        {"episode_id": "x", "log_file": "x", "item_id": "x", "choice": 0, "participant_code": other.code},
        {"type": "load"},
        None,
        [1, 2],
    ]
    failed = {"otree_success": False, "live_method_payload": None}  # oTree's answer when there is no live method
    assert run_async(settle(person.live_url(), *forged)) == [failed] * len(forged)
    assert run_async(settle(person.live_url(page_name="Consent"), *forged)) == []  # not the current page: ignored
    assert export_rows(person.server, app, session_code=person.session_code) == before
    assert person.reload().page == page


def test_forged_live_sockets_reach_no_other_participants_game(otree_server, llm_server):
    victim, attacker = people(otree_server.url, "dond_llm", 2, llm_model="test-model", first_mover="human")
    victim.advance_to("Bargain")
    attacker.advance_to("Instructions")  # the attacker's game exists (Instructions shows its values)
    secret = "Take the hats; the books are worth nothing to me."
    llm_server.script(Reply(text=secret))
    run_async(send_until(victim.live_url(), {"type": "message", "text": "Victim here."}, until=others_said))
    victim_events = dond_events(victim)[victim.code]
    assert [(e["kind"], e["actor"]) for e in victim_events if e["kind"] == "message"] == [
        ("message", "human"),
        ("message", "llm"),
    ]

    [victim_game] = [row["player.game_id"] for row in player_rows(victim, "dond")]
    move = dict(type="message", text="Forged move.", participant_code=victim.code, role="A", game_id=int(victim_game))
    forged_sockets = [
        (victim.live_url(participant_code="nosuchp1"), []),  # a made-up code: the server drops the socket
        (attacker.live_url(page_name="Bargain", page_index=victim.index), []),  # a page the attacker is not on
        (attacker.live_url(page_name="Bargain", session_code="nosuchsession"), []),
        (attacker.live_url(), []),  # its own page, Instructions: a heartbeat, which answers and moves nothing
    ]
    seen = []
    for url, expected in forged_sockets:
        replies = run_async(settle(url, move, {"type": "load"}))
        assert replies == expected, url
        seen += replies
    assert dond_events(attacker).get(attacker.code, []) == []

    attacker.advance_to("Bargain")  # on the victim's page now: its socket still acts for the attacker only
    seen += run_async(send_until(attacker.live_url(), move, until=lambda p: bool(others_said(p))))
    events = dond_events(victim)
    assert events[victim.code] == victim_events  # the victim's game: not one row more
    assert [(e["kind"], e["actor"], e["text"]) for e in events[attacker.code] if e["kind"] == "message"][0] == (
        "message",
        "human",
        "Forged move.",
    )
    everything = json.dumps(seen) + "".join(attacker.seen)
    assert "Victim here." not in everything and secret not in everything
    assert victim.code not in everything
    state = run_async(send_until(victim.live_url(), {"type": "load"}, until=lambda p: p.get("type") == "state"))
    assert [item["text"] for item in payload_of(state[-1])["chat"]] == ["Victim here.", secret]


MALFORMED = [
    None,
    [],
    ["message", "hi"],
    5,
    "message",
    True,
    {},
    {"type": None},
    {"type": 5},
    {"type": ["message"]},
    {"type": {"type": "message"}},
    {"type": "x" * 5000},
    {"type": "message"},
    {"type": "message", "text": None},
    {"type": "message", "text": 5},
    {"type": "message", "text": ["hi"]},
    {"type": "message", "text": {"text": "hi"}},
    {"type": "message", "text": ""},
    {"type": "message", "text": "x" * 1001},
    {"type": "message", "text": "y" * 500_000},
    {"type": "message", "text": "nul\x00byte"},  # PostgreSQL cannot store NUL: refused, not a crash
    {"type": "message", "text": "lone \ud800 surrogate"},  # no driver can encode it: refused, not a crash
    {"type": "proposal"},
    {"type": "proposal", "counts": None},
    {"type": "proposal", "counts": "everything"},
    {"type": "proposal", "counts": [1, 1, 1]},
    {"type": "proposal", "counts": {"unicorn": 1}},
    {"type": "proposal", "counts": {"uni\x00corn": 1}},  # quoted in the stored error: stored without NUL
]


def malformed_counts(items: list[str]) -> list[dict]:
    first = items[0]
    rest = {item: 0 for item in items[1:]}
    values = ["one", "1.0", " ", "\u0663", 1.5, True, -1, 10**30, None, [1], {"n": 1}]  # digit strings are counts
    return [{"type": "proposal", "counts": {first: value, **rest}} for value in values]


def test_malformed_live_payloads_are_rejected_and_change_nothing(otree_server, llm_server):
    # Many messages in a row: a per-participant rate limit (live_messages_per_minute) must not answer for the checks.
    attacker, victim = people(
        otree_server.url, "dond_llm", 2, llm_model="test-model", first_mover="human", live_messages_per_minute=1000
    )
    attacker.advance_to("Bargain")
    victim.advance_to("Bargain")
    items = [item["id"] for item in attacker.js_vars()["items"]]
    forged = MALFORMED + malformed_counts(items)
    forged.append({"type": "load", "role": "B", "participant_code": victim.code, "id_in_group": 1, "game_id": 1})

    replies = run_async(settle(attacker.live_url(), *forged))
    assert len(replies) == len(forged)
    for sent, reply in zip(forged[:-1], replies[:-1], strict=True):
        payload = payload_of(reply)
        assert payload.get("type") == "rejected", (sent, reply)
        assert 0 < len(payload["message"]) < 200 and "xxxx" not in payload["message"], payload
    assert payload_of(replies[-1])["chat"] == []  # the load with forged keys: the attacker's own, empty game

    # Frames the server cannot read close the socket; the server keeps serving.
    nested = Raw('{"type": "proposal", "counts": ' + "[" * 5000 + "]" * 5000 + "}")
    for url, frame in (
        (attacker.live_url(), nested),
        (attacker.live_url(participant_code="nosuchp1"), {"type": "load"}),
    ):
        assert run_async(settle(url, frame)) == []

    events = dond_events(attacker)
    assert events.get(victim.code, []) == []
    rejected = events[attacker.code]
    assert len(rejected) == len(forged) - 1
    role = dond_game_row(attacker)["focal_role"]
    assert {(e["kind"], e["role"], e["actor"]) for e in rejected} == {("input_rejected", role, "human")}

    llm_server.script("Fine by me.")
    frames = run_async(send_until(attacker.live_url(), {"type": "message", "text": "Hello?"}, until=others_said))
    assert others_said(payload_of(frames[-1])) == ["Fine by me."]
    victim_view = run_async(send_until(victim.live_url(), {"type": "load"}, until=lambda p: p.get("type") == "state"))
    assert payload_of(victim_view[-1])["chat"] == [] and payload_of(victim_view[-1])["can_message"]


def test_a_rejected_payload_is_stored_clipped(otree_server):
    [attacker] = people(otree_server.url, "dond_llm", 1, first_mover="human")
    attacker.advance_to("Bargain")
    item = attacker.js_vars()["items"][0]["id"]
    huge = "z" * 100_000
    forged = [{"type": huge}, {"type": "proposal", "counts": {item: huge}}, {"type": "proposal", "counts": {huge: 1}}]
    replies = run_async(settle(attacker.live_url(), *forged))
    assert [payload_of(reply)["type"] for reply in replies] == ["rejected"] * 3
    stored = [len(event["error"]) for event in dond_events(attacker)[attacker.code]]
    assert len(stored) == 3 and max(stored) <= 1000, stored


def test_in_a_person_vs_person_game_nobody_sees_the_others_values_or_speaks_for_them(otree_server):
    players = people(otree_server.url, "dond_human", 4)
    pair_and_start(players)
    first, second, third, fourth = players
    game_one, game_two = dond_game_row(first), dond_game_row(third)
    assert {game_one["participant_a"], game_one["participant_b"]} == {first.code, second.code}
    speaker = first if first.js_vars()["view"]["can_message"] else second
    listener = second if speaker is first else first
    role = "A" if game_one["participant_a"] == speaker.code else "B"
    other_role = "B" if role == "A" else "A"
    [other_game] = {row["player.game_id"] for row in player_rows(third, "dond")}
    items = [item["id"] for item in speaker.js_vars()["items"]]
    counts = [item["count"] for item in speaker.js_vars()["items"]]
    forged = dict(
        role=other_role,
        actor="llm",
        who="other",
        participant_code=listener.code,
        id_in_group=players.index(listener) + 1,
        player_id=players.index(listener) + 1,
        game_id=int(other_game),
    )
    listener_share = {item: (counts[0] if index == 0 else 0) for index, item in enumerate(items)}
    speaker_share = {item: (0 if index == 0 else counts[index]) for index, item in enumerate(items)}

    async def play():
        seen = {"speaker": [], "listener": [], "bystander": []}
        async with (
            websockets.connect(speaker.live_url(), max_size=None) as mine,
            websockets.connect(listener.live_url(), max_size=None) as theirs,
            websockets.connect(third.live_url(), max_size=None) as bystander,
        ):
            await mine.send(json.dumps(dict(forged, type="message", text="Speaker's words.")))
            told = await next_state(mine, seen["speaker"]), await next_state(theirs, seen["listener"])
            await theirs.send(json.dumps({"type": "proposal", "counts": listener_share}))
            await next_state(theirs, seen["listener"]), await next_state(mine, seen["speaker"])
            await mine.send(json.dumps(dict(forged, type="proposal", counts=speaker_share)))
            end = await next_state(mine, seen["speaker"]), await next_state(theirs, seen["listener"])
            await bystander.send(json.dumps({"type": "load"}))
            await next_state(bystander, seen["bystander"])
        return told, end, seen

    (told_speaker, told_listener), (end_speaker, end_listener), seen = run_async(play())
    assert told_speaker["chat"] == [{"who": "me", "text": "Speaker's words."}]
    assert told_listener["chat"] == [{"who": "other", "text": "Speaker's words."}]
    assert told_listener["messages_left"] == 5  # the listener's own allowance is untouched
    assert end_speaker["finished"] and end_listener["finished"]

    events = dond_events(first)
    stored = [(e["kind"], e["role"], e["actor"]) for e in events[first.code] if e["kind"] != "input_rejected"]
    assert stored == [
        ("message", role, "human"),
        ("proposal", other_role, "human"),
        ("proposal", role, "human"),
    ]
    assert events.get(third.code, []) == [] and game_two["outcome"] == "unfinished"
    assert [payload_of(frame)["chat"] for frame in seen["bystander"]] == [[]]  # one frame: its own empty game
    final = dond_game_row(first)
    assert json.loads(final[f"proposal_{role.lower()}"]) == [speaker_share[item] for item in items]

    # Secret proposals stay secret: the listener's notice of its own proposal (which names its share) and the
    # proposal itself reach only the listener; the speaker is told that a proposal was made, nothing more.
    def system_texts(frames):
        return [item["text"] for f in frames for item in payload_of(f)["chat"] if item["who"] == "system"]

    [listener_notice] = set(system_texts(seen["listener"])) - set(system_texts(seen["speaker"]))
    assert listener_notice not in json.dumps(seen["speaker"], ensure_ascii=False)
    assert not any("proposal" in item for f in seen["speaker"] for item in payload_of(f)["chat"])

    # Private values: each table shows the viewer's own values; the other's appear in no page or payload.
    own = json.loads(final[f"values_{role.lower()}"])
    other_values = json.loads(final[f"values_{other_role.lower()}"])
    assert own != other_values
    for page_html in speaker.seen:
        if 'id="dond-items"' in page_html:
            assert items_table_values(page_html) == own
    speaker.reload()
    everything = json.dumps(seen["speaker"]) + "".join(speaker.seen)
    assert listener.code not in everything and third.code not in everything
    assert str(other_values) not in everything and json.dumps(other_values, separators=(",", ":")) not in everything
    assert not any(
        "value" in key for key in keys_of([payload_of(f) for f in seen["speaker"]]) | keys_of(speaker.js_vars())
    )
