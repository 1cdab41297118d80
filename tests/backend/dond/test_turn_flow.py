"""clembench's turn order in self-play, checked by an independent reference that reads only the output files.

The players are a fake model (served by ``llm_server``) that never proposes by itself: it chats until its prompt
asks it for a proposal (the time-up or the other-proposed notice, the only prompts that show the bracket format
after the rules), then proposes every item it values at 2 or more, listing all item types in the order of the
items line. Now and then (fixed by its values) it answers such a request with chat instead: a broken rule.

``clembench_order`` is the reference: naive, written from clembench's rules (the opener starts; players alternate;
after the non-opener's last message the opener is asked, with the time-up text, and proposes first; after any
proposal the other is asked for theirs; a chat reply when a proposal is due aborts, blamed on its sender; two
proposals end the game, with points only when together they never ask for more than there is). It reads the
stored replies in the order they were made and says who clembench would have asked for each, who broke the rule,
the outcome and the points; the project's games must agree on every game.
"""

from __future__ import annotations

import io
import json
import re

import pytest

from backend.core import runs
from backend.core.llm.fake_server import Reply
from backend.dond.export import DOND_EVENTS_COLUMNS, DOND_GAMES_COLUMNS
from backend.dond.selfplay import run_selfplay
from harness.servers import run_async

ITEMS_LINE = re.compile(r"^[^:\n]*: (\d+ [^,\n]+(?:, \d+ [^,\n]+)*)$", re.M)
VALUES_LINE = re.compile(r"^[^:\n]*: ([^:,\n]+: \d+(?:, [^:,\n]+: \d+)*)$", re.M)


def never_proposes_first(request) -> Reply:
    """The fake model: chat until asked for a proposal, then propose (or, for some value tables, chat anyway)."""
    messages = request["messages"]
    rules = next(m["content"] for m in messages if m["role"] == "user")
    items = [pair.split(" ", 1) for pair in ITEMS_LINE.search(rules).group(1).split(", ")]
    values = [int(pair.rsplit(": ", 1)[1]) for pair in VALUES_LINE.search(rules).group(1).split(", ")]
    spoken = sum(m["role"] == "assistant" for m in messages)
    last = messages[-1]["content"]
    asked_to_propose = last.rstrip().endswith("]")  # the two notices end with the bracket format, nothing else
    if not asked_to_propose:
        return Reply(text=f"Message {spoken + 1}: which items matter to you?")
    if (sum(values) * 7 + sum(int(n) for n, _ in items) + spoken) % 5 == 0:
        return Reply(text="Let us keep talking a little.")  # breaks the rule: a proposal is due
    prefix = last[last.rindex("[") + 1 : last.index(":", last.rindex("[")) + 1]
    taken = [f"{count if value >= 2 else 0} {word}" for (count, word), value in zip(items, values, strict=True)]
    return Reply(text=f"[{prefix} {', '.join(taken)}]")


def clembench_order(game: dict, replies: list[str]) -> dict:
    """What clembench does with these replies, in this order: who is asked for each, who broke a rule, the end."""
    opener = game["opener"]
    other = {"A": "B", "B": "A"}
    max_messages = int(game["max_messages"])
    counts = json.loads(game["counts"])
    values = {"A": json.loads(game["values_a"]), "B": json.loads(game["values_b"])}
    sent = {"A": 0, "B": 0}
    must_propose = {"A": False, "B": False}
    proposals: dict[str, list[int]] = {}
    asked: list[str] = []
    current = opener
    for reply in replies:
        asked.append(current)
        if "[" in reply:
            inside = reply[reply.index("[") + 1 : reply.index("]")]
            # the items in the order of the items line (the fake model's way); an empty list asks for nothing
            proposals[current] = [int(n) for n in re.findall(r"(\d+) \S+", inside)] or [0] * len(counts)
            if len(proposals) == 2:
                break
            must_propose[other[current]] = True
            current = other[current]
            continue
        if must_propose[current]:
            return {"asked": asked, "broke": current, "outcome": "aborted", "points": {"A": 0, "B": 0}}
        sent[current] += 1
        if current != opener and sent[current] == max_messages:
            must_propose[opener] = True  # the opener gets this last message with the time-up text
        current = other[current]
    else:
        return {"asked": asked, "broke": None, "outcome": "unfinished", "points": {"A": 0, "B": 0}}
    fits = all(a + b <= n for a, b, n in zip(proposals["A"], proposals["B"], counts, strict=True))
    points = {
        role: sum(c * v for c, v in zip(proposals[role], values[role], strict=True)) if fits else 0 for role in "AB"
    }
    return {"asked": asked, "broke": None, "outcome": "success" if fits else "lose", "points": points}


def read_run(out) -> tuple[list[dict], dict[str, list[dict]]]:
    games = runs.read_rows(out / "dond_games.csv", columns=DOND_GAMES_COLUMNS, what="games")
    events = runs.read_rows(out / "dond_events.csv", columns=DOND_EVENTS_COLUMNS, what="events")
    calls: dict[str, list[dict]] = {}
    for event in sorted(events, key=lambda e: (e["game_id"], int(e["seq"]))):
        if event["kind"] == "llm_call" and event["purpose"] == "message":
            calls.setdefault(event["game_id"], []).append(event)
    return games, calls


@pytest.mark.parametrize("language", ["en", "de"])
def test_selfplay_asks_players_in_clembench_order_on_every_game(tmp_path, llm_server, monkeypatch, language):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm_server.responder = never_proposes_first
    progress = io.StringIO()
    summary = run_async(
        run_selfplay(
            model_a="fake-model",
            model_b="fake-model",
            instances=8,
            mode="semi",
            language=language,
            out_dir=tmp_path,
            concurrency=4,
            max_messages=2,
            clembench_exact=True,
            progress=progress,
            settings_options=dict(base_url=llm_server.base_url, max_retries=0, timeout_s=10),
        )
    )
    assert summary.played == 16
    games, calls = read_run(tmp_path)
    seen = {"aborted": 0, "success": 0, "opener_proposed_first": 0}
    for game in games:
        replies = [call["llm_reply"] for call in calls[game["game_id"]]]
        reference = clembench_order(game, replies)
        where = (game["game_id"], game["opener"], replies)
        assert [call["role"] for call in calls[game["game_id"]]] == reference["asked"], where
        assert game["outcome"] == reference["outcome"], where
        assert (game["aborted_by"] or None) == reference["broke"], where
        assert game["clembench_exact"] == "1"
        if reference["outcome"] != "aborted":
            assert (int(game["points_a"]), int(game["points_b"])) == (
                reference["points"]["A"],
                reference["points"]["B"],
            ), where
        seen[reference["outcome"]] = seen.get(reference["outcome"], 0) + 1
        if len(replies) > 4 and "[" in replies[4]:
            seen["opener_proposed_first"] += calls[game["game_id"]][4]["role"] == game["opener"]
    # The run exercises every branch: time-up proposals by the opener, broken rules, deals.
    assert seen["aborted"] >= 1 and seen["success"] >= 1 and seen["opener_proposed_first"] >= 4, seen
    # The bar moved with the turns: many more redraws than games, the turns counted.
    assert progress.getvalue().count("\r") > 3 * 16 and " turns " in progress.getvalue()


def test_the_opener_hears_the_last_message_with_the_time_up_text_and_the_other_never_does(
    tmp_path, llm_server, monkeypatch
):
    """The prompts, as stored: the opener's proposal prompt ends with the other's last message and the time-up
    text; the other's proposal prompt is the other-proposed notice, and no prompt of the other holds the time-up text."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm_server.responder = never_proposes_first
    run_async(
        run_selfplay(
            model_a="fake-model",
            model_b="fake-model",
            instances=2,
            mode="coop",
            language="en",
            out_dir=tmp_path,
            concurrency=2,
            max_messages=2,
            settings_options=dict(base_url=llm_server.base_url, max_retries=0, timeout_s=10),
        )
    )
    games, calls = read_run(tmp_path)
    for game in games:
        game_calls = calls[game["game_id"]]
        opener = game["opener"]
        fifth, sixth = game_calls[4], game_calls[5]
        assert fifth["role"] == opener and sixth["role"] != opener
        opener_prompt = json.loads(fifth["llm_messages"])[-1]["content"].replace("\\n", "\n")  # export escapes
        assert opener_prompt.startswith(game_calls[3]["llm_reply"] + "\n\nAll messages have been used.")
        other_prompts = [json.loads(c["llm_messages"]) for c in game_calls if c["role"] != opener]
        assert all("All messages have been used" not in m["content"] for p in other_prompts for m in p)
        assert other_prompts[-1][-1]["content"].startswith("The other player has made a secret proposal.")
