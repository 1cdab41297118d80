import asyncio
import json
import os

from otree.api import Bot, Submission, expect

from backend import dond as game_rules

from . import Bargain, Consent, Event, Game, Instructions, Pairing, Results, game_of

# Cases run with the session's own config (the scripted agent by default). tests/apps/test_dond_bots.py also runs them
# against the local OpenAI-compatible test server, which `script` feeds over HTTP (DOND_BOT_SCRIPT names the case).
cases = ["play"]


def drain(agen):
    async def collect():
        return [item async for item in agen]

    return asyncio.run(collect())


def states(payloads, id_in_group):
    return [p[id_in_group] for p in payloads if id_in_group in p and p[id_in_group].get("type") == "state"]


def play_llm_game(method, player):
    """The person chats once, then proposes what the scripted agent leaves (or everything they value)."""
    id_in_group = player.id_in_group
    first = states(drain(method(id_in_group, {"type": "load"})), id_in_group)[-1]
    if first["can_message"]:
        replies = drain(method(id_in_group, {"type": "message", "text": "Hello <b>there</b>, what do you need?"}))
        expect(any(p[id_in_group].get("type") == "state" for p in replies), True)
    # Bad input is rejected with a message and changes nothing.
    for forged in (
        {"type": "proposal", "counts": {"unicorn": 1}},
        {"type": "proposal", "counts": {player_item(player): -1}},
        {"type": "message", "text": ""},
        {"type": "nonsense"},
    ):
        answer = drain(method(id_in_group, forged))[-1][id_in_group]
        expect(answer["type"], "rejected")
    view = states(drain(method(id_in_group, {"type": "ping"})), id_in_group)[-1]
    if not view["finished"]:
        counts = {
            item: 0 for item in game_rules.Instance.from_dict(json.loads(game_of(player).instance_json)).item_types
        }
        counts[player_item(player)] = 1
        final = states(drain(method(id_in_group, {"type": "proposal", "counts": counts})), id_in_group)[-1]
        expect(final["finished"], True)
        second = drain(method(id_in_group, {"type": "proposal", "counts": counts}))[-1][id_in_group]
        expect(second["type"], "rejected")


def player_item(player):
    return json.loads(game_of(player).instance_json)["item_types"][0]


def play_human_game(method, players):
    """Two people: A and B alternate one message each, then both propose."""
    game = game_of(players[0])
    by_role = {p.game_role: p for p in players}
    opener = by_role[game.opener]
    other = by_role["B" if game.opener == "A" else "A"]
    drain(method(opener.id_in_group, {"type": "message", "text": "Hi, I like the first item."}))
    out_of_turn = drain(method(opener.id_in_group, {"type": "message", "text": "again"}))[-1][opener.id_in_group]
    expect(out_of_turn["type"], "rejected")
    replies = drain(method(other.id_in_group, {"type": "message", "text": "Fine by me."}))
    expect(opener.id_in_group in replies[-1], True)  # the partner sees it at once
    items = json.loads(game.instance_json)["item_types"]
    drain(method(opener.id_in_group, {"type": "proposal", "counts": {items[0]: 1}}))
    last = drain(method(other.id_in_group, {"type": "proposal", "counts": {items[1]: 1}}))
    expect(last[-1][other.id_in_group]["finished"], True)


def call_live_method(method, page_class, group, case, **kwargs):
    players = group.get_players()
    if page_class is Pairing:  # consecutive arrivals are paired
        for first, second in zip(players[::2], players[1::2], strict=False):
            expect(drain(method(first.id_in_group, {"type": "wait"}))[-1][first.id_in_group], {"waiting": True})
            answers = drain(method(second.id_in_group, {"type": "wait"}))
            expect(answers[-1][second.id_in_group]["paired"], True)
            expect(answers[-1][first.id_in_group]["paired"], True)
    elif page_class is Bargain and players[0].session.config.get("opponent") == "human":
        for pair in {p.game_id: [q for q in players if q.game_id == p.game_id] for p in players}.values():
            play_human_game(method, pair)
    elif page_class is Bargain:
        play_llm_game(method, players[0])


class PlayerBot(Bot):
    def play_round(self):
        yield Consent, dict(consent_given=True)
        if self.session.config.get("opponent") == "human":
            yield Pairing
        yield Instructions
        expect("dond-items" in self.html, True)
        yield Submission(Bargain, check_html=False)
        yield Results
        game = game_of(self.player)
        events = Event.filter(game=game)
        kinds = [event.kind for event in events]
        expect(self.player.outcome in ("success", "lose", "aborted"), True)
        expect("input_rejected" in kinds, True)
        if game.opponent == "llm":
            expect("llm_call" in kinds, True)
            expected = os.environ.get("DOND_BOT_EXPECT")
            if expected:
                expect(self.player.outcome, expected)
                if os.environ.get("DOND_BOT_EXPECT_VIOLATIONS"):
                    expect(kinds.count("violation"), int(os.environ["DOND_BOT_EXPECT_VIOLATIONS"]))
        # The typed HTML is stored as typed.
        texts = [event.text for event in events if event.kind == "message" and event.actor == "human"]
        if texts and game.opponent == "llm":
            expect(texts[0], "Hello <b>there</b>, what do you need?")
        expect(len(Game.filter(subsession=self.subsession)) >= 1, True)
