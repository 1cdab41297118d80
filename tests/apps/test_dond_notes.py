"""A person plays the dond app against an LLM under the notes protocol (with the external-belief probe); the exports
hold the notes, the beliefs and the per-turn faithfulness verdicts, and the person never sees a note."""

from __future__ import annotations

import asyncio
import json
import re

import websockets

from backend.core.llm.fake_server import Reply
from harness.dond_live_client import advance_all
from harness.servers import create_session, export_rows, run_async

NOTE_TEXT = "Private: I should keep one of each."


def respond(request):
    """Notes and probes fill in the JSON template the prompt shows; a message offers the first item only."""
    last = [m["content"] for m in request["messages"] if m["role"] == "user"][-1]
    if "write a private note for yourself" in last or "Put yourself in the other player's position" in last:
        template = re.search(r"\{[^{}]*<number>[^{}]*\}", last).group(0)
        split = template.replace("<number>", "1")
        text = f"{NOTE_TEXT} {split}" if "private note" in last else split
        return Reply(text=text, delay_s=0.05)
    note_split = json.loads(re.findall(r"\{[^{}]*\}", last)[0])
    first = next(iter(note_split))
    return Reply(text=f"How about this? (I take: 1 {first})", delay_s=0.05)


async def talk(live_url: str, exchanges: int) -> list[dict]:
    """Send messages, wait for each LLM reply, return every payload the person received."""
    payloads = []
    async with websockets.connect(live_url, open_timeout=60) as socket:
        for number in range(exchanges):
            await socket.send(json.dumps({"type": "message", "text": f"Message {number + 1}"}))
            while True:
                payload = json.loads(await asyncio.wait_for(socket.recv(), timeout=60)).get("live_method_payload") or {}
                payloads.append(payload)
                assert payload.get("type") != "rejected", payload
                others = [item for item in payload.get("chat", []) if item.get("who") == "other"]
                if payload.get("type") == "state" and len(others) >= number + 1:
                    break
    return payloads


def test_notes_protocol_game_exports_notes_beliefs_and_verdicts(otree_server, llm_server):
    llm_server.responder = respond
    session = create_session(
        otree_server.url,
        "dond_llm",
        1,
        llm_model="test-model",
        first_mover="human",
        llm_protocol="notes",
        llm_probe_external=True,
        llm_word_limit=40,
    )
    (person,) = advance_all(otree_server.url, session["code"])
    payloads = run_async(talk(person.live_url, 2))
    assert NOTE_TEXT not in json.dumps(payloads)  # the note never reaches the person

    events = export_rows(otree_server.url, "dond", "custom_export_dond_events", session_code=session["code"])
    notes = [e for e in events if e["kind"] == "note"]
    probes = [e for e in events if e["kind"] == "probe"]
    assert [n["turn"] for n in notes] == ["0", "1"] and all(NOTE_TEXT in n["text"] for n in notes)
    assert sorted(p["turn"] for p in probes) == ["0", "1"]
    assert all(n["note_split"] and p["belief_split"] for n, p in zip(notes, probes, strict=True))
    calls = [e for e in events if e["kind"] == "llm_call"]
    assert sorted(c["purpose"] for c in calls) == ["message", "message", "note", "note", "probe", "probe"]
    assert "under 40 words" in next(c["llm_messages"] for c in calls if c["purpose"] == "note")

    (game,) = export_rows(otree_server.url, "dond", "custom_export_dond_games", session_code=session["code"])
    role = "B"  # first_mover=human: the person is A and opens (cell 1)
    values = json.loads(game[f"values_{role.lower()}"])
    counts = json.loads(game["counts"])
    replies = [e for e in events if e["kind"] == "message" and e["actor"] == "llm"]
    assert len(replies) == 2
    for reply in replies:
        offer = json.loads(reply["offer"])
        note_split = json.loads(reply["note_split"])
        assert reply["offer_status"] == "offer" and offer[0] == 1 and sum(offer) == 1
        assert note_split == [1] * len(counts)
        offered, noted = values[0], sum(values)  # one of the first item vs one of each
        expected = "faithful" if offered >= noted else "unfaithful"
        assert reply["internal_verdict"] == expected
        assert reply["external_verdict"] == expected  # the belief was the same split
    assert game["llm_protocol"] == "notes" and game["model_b"] == "test-model" and game["model_a"] == ""
    assert float(game["note_json_b"]) == 1.0 and float(game["note_under_limit_b"]) == 1.0
    assert game["internal_faithfulness_a"] == ""  # the person's side has no agency metrics
