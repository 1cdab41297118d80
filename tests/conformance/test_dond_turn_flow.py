"""clembench's stored DoND replies played AS PLAYERS through the project's own game loop (self-play's
``play_match``, clembench-exact): each stored reply is given only when the project asks that player, and only when
the project shows it the same kind of prompt clembench had shown (a chat message, the time-up text, or the notice
that the other has proposed). So the order in which players are asked is checked, not only the parsing: on every
released episode the project asks the same players in the same order, uses every stored reply, and ends the same
way (proposals, abort, who broke the rule). Skipped, with the place looked for, without ../shared."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from backend.core.llm import CallRecord, LLMSettings
from backend.dond import instances
from backend.dond.game import GameConfig, replay
from backend.dond.prompts import notice
from backend.dond.protocol import PLAIN
from backend.dond.selfplay import Match, play_match
from harness.servers import run_async

PLAYERS = {"Player 1": "A", "Player 2": "B"}


def stored_turns(episode: Path, experiment: dict) -> list[tuple[str, str, str]]:
    """``(role, prompt kind, reply)`` of every stored reply, in order; the kind of the prompt clembench sent just
    before it: ``time_up`` (ends with the timeout template), ``other_proposed`` (the early-proposal template) or
    ``message``."""
    interactions = json.loads((episode / "interactions.json").read_text())
    timeout, early = experiment["proposal_timeout"].strip(), experiment["proposal_early"].strip()
    last_sent: dict[str, str] = {}
    turns = []
    for round_events in interactions["turns"]:
        for event in round_events:
            action = event["action"]
            if action["type"] == "send message" and event["to"] in PLAYERS:
                last_sent[event["to"]] = str(action["content"]).strip()
            elif action["type"] == "get message" and event["from"] in PLAYERS:
                shown = last_sent.get(event["from"], "")
                kind = "time_up" if shown.endswith(timeout) else "other_proposed" if shown == early else "message"
                turns.append((PLAYERS[event["from"]], kind, action["content"]))
    return turns


def play_episode(episode: Path) -> dict:
    experiment = json.loads((episode.parent / "experiment.json").read_text())
    language = experiment["language"]
    instance = instances.Instance.from_clembench(json.loads((episode / "instance.json").read_text()), language)
    config = GameConfig(
        experiment["mode"], language, "A", experiment["max_turns"], llm_reprompts=0, clembench_exact=True
    )
    turns = stored_turns(episode, experiment)
    queue = {role: [(kind, reply) for r, kind, reply in turns if r == role] for role in "AB"}
    asked: list[tuple[str, str]] = []

    async def stored_player(messages, settings, **_options):
        """The stored reply of the player asked (the role is the settings' model name), if the prompt matches."""
        role = settings.model
        last = messages[-1]["content"]
        kind = (
            "time_up"
            if last.endswith(notice("time_up", config))
            else "other_proposed"
            if last == notice("other_proposed", config)
            else "message"
        )
        asked.append((role, kind))
        stored_kind, reply = queue[role].pop(0) if queue[role] else (None, "")
        if stored_kind != kind:  # asked out of clembench's order: this reply was not given to this prompt
            reply = f"(no stored reply of {role} for a {kind} prompt)"
        yield CallRecord(model=role, messages=messages, reply=reply, attempts=1)

    match = Match(0, 1, (("A", "A"), ("B", "B")))
    settings = {role: LLMSettings(model=role) for role in "AB"}
    events = run_async(
        play_match(match, instance=instance, config=config, settings=settings, protocol=PLAIN, call_model=stored_player)
    )
    state = replay(events, config, counts=instance.counts)
    return {
        "asked": asked,
        "stored": [(role, kind) for role, kind, _ in turns],
        "state": state,
        "left": sum(len(q) for q in queue.values()),
    }


def test_clembench_replies_as_players_are_asked_in_clembench_order(dond_data):
    frame = pd.read_csv(dond_data / "episodes.csv", keep_default_na=False)
    prompts = {"time_up": 0, "other_proposed": 0}
    for row in frame.itertuples():
        result = play_episode(dond_data / row.path)
        where = (row.path, result["asked"], result["stored"])
        assert result["asked"] == result["stored"], where  # same players, same order, same kind of prompt
        assert result["left"] == 0, where
        state = result["state"]
        stored_a = json.loads(row.proposal_a) if row.proposal_a else None
        stored_b = json.loads(row.proposal_b) if row.proposal_b else None
        assert (list(state.proposals["A"]) if state.proposals["A"] else None) == stored_a, where
        assert (list(state.proposals["B"]) if state.proposals["B"] else None) == stored_b, where
        assert state.aborted == bool(row.Aborted), where
        if row.Aborted:  # clembench blames the player whose reply it could not accept: the last one asked
            assert state.aborted_by == result["stored"][-1][0], where
        for _, kind in result["stored"]:
            prompts[kind] = prompts.get(kind, 0) + 1
    # The data exercises both ways into the proposals: the messages running out (rare: most models propose
    # early) and a proposal made early.
    assert len(frame) == 150 and prompts["time_up"] >= 1 and prompts["other_proposed"] >= 100, prompts
