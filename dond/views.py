"""What the dond pages show: the localised game state sent over the live socket, the pages' variables, the Results
chart, and the outcome and payoff stored when the Results page is shown."""

from otree.api import cu

from backend import dond
from backend.core import csvio
from backend.dond import game as dond_game
from backend.dond import scoring as pareto

from . import storage
from .exports import game_row
from .storage import config_of, events_of, game_of, instance_of
from .texts import texts

BARGAIN_TEXT_KEYS = [
    *("you", "other", "send", "placeholder", "messages_left", "your_turn", "waiting", "typing"),
    *("must_propose", "propose", "confirm_proposal", "finished", "continue", "error_server"),
]
CHART_TEXT_KEYS = ("chart_all", "chart_frontier", "chart_agreed", "chart_x", "chart_y")


def view_for(player, game, events):
    """The localised chat and controls of ``player`` (texts shown with textContent in the browser)."""
    text = texts(game.language)
    instance = instance_of(game)
    view = dond_game.participant_view(events, player.game_role, config_of(game), counts=instance.counts)
    words = instance.plural(game.language)
    for item in view["chat"]:
        notice = item.pop("notice", None)
        if notice == "you_proposed":
            taken = [f"{n} {w}" for n, w in zip(item.pop("proposal"), words, strict=True) if n]
            item["text"] = text["notice_you_proposed"].format(items=", ".join(taken) or text["notice_nothing"])
        elif notice == "aborted":
            item["text"] = text["notice_aborted"].format(reason=text[f"reason_{item.pop('reason')}"])
        elif notice:
            item["text"] = text[f"notice_{notice}"]
    # The LLM is working on its move whenever the state says it is to act: the browser shows it typing.
    view["typing"] = game.opponent == "llm" and view["other_to_act"]
    view["type"] = "state"
    return view


def payloads(player, game, events, *, both=False):
    """State payloads for the player (and the human partner, in person-vs-person games)."""
    result = {player.id_in_group: view_for(player, game, events)}
    partner = storage.partner_of(player, game) if both else None
    if partner is not None:
        result[partner.id_in_group] = view_for(partner, game, events)
    return result


def game_vars(player):
    """The Instructions (and Bargain) page: the rules of this player's game and their items' values."""
    game = game_of(player)
    instance = instance_of(game)
    text = texts(game.language)
    values = instance.values(player.game_role)
    first = text["first_you"] if game.opener == player.game_role else text["first_other"]
    per_point = cu(1).to_real_world_currency(player.session)
    return dict(
        text=text,
        intro=text["intro"].format(opponent=text[f"opponent_{game.opponent}"]),
        rules=[rule.format(max_messages=game.max_messages, first=first) for rule in text["rules"]],
        goal=text[f"goal_{game.mode}"],
        bonus_rule=text["bonus_rule"].format(per_point=per_point),
        rows=[
            dict(word=w, count=c, value=v)
            for w, c, v in zip(instance.plural(game.language), instance.counts, values, strict=True)
        ],
    )


def bargain_js_vars(player):
    game = game_of(player)
    instance = instance_of(game)
    text = texts(game.language)
    return dict(
        view=view_for(player, game, events_of(game)),
        items=[
            dict(id=i, word=w, count=c)
            for i, w, c in zip(instance.item_types, instance.plural(game.language), instance.counts, strict=True)
        ],
        text={key: text[key] for key in BARGAIN_TEXT_KEYS},
        max_chars=game.max_message_chars,
        opponent=game.opponent,
    )


def replayed(game):
    """The game's state, replayed from its events."""
    return dond_game.replay(events_of(game), config_of(game), counts=instance_of(game).counts)


def finish(player):
    """Store outcome, points and bonus of a finished (or abandoned) game on the player; idempotent."""
    game = game_of(player)
    if game is None:
        player.outcome = "unpaired"
        return None
    row = game_row(game, events_of(game))
    role = player.game_role.lower()
    other = "b" if role == "a" else "a"
    if row["outcome"] in ("success", "lose"):
        player.points = int(row[f"points_{role}"])
    mine, theirs = row[f"points_{role}"], row[f"points_{other}"]
    player.bonus_points = float(dond.bonus(game.mode, mine, theirs, outcome=row["outcome"]))  # success only
    player.outcome = row["outcome"]
    player.payoff = player.bonus_points
    return row


def results_vars(player):
    text = texts(storage.settings_of(player.session).language)
    row = finish(player)
    if row is None:
        return dict(text=text, unpaired=True)
    role, other = player.game_role.lower(), "b" if player.game_role == "A" else "a"
    reason = text[f"reason_{dond_game.abort_reason_code(csvio.unescape_text(row['abort_reason']))}"]
    return dict(
        text=text,
        unpaired=False,
        outcome=row["outcome"],
        outcome_text=text[f"outcome_{row['outcome']}"].format(reason=reason) if row["outcome"] != "unfinished" else "",
        my_points=row[f"points_{role}"],
        other_points=row[f"points_{other}"],
        main_score="–" if row["main_score"] == "" else f"{float(row['main_score']):.0f} / 100",
        bonus=player.payoff.to_real_world_currency(player.session),
    )


def results_js_vars(player):
    game = game_of(player)
    if game is None:
        return {}
    text = texts(game.language)
    state = replayed(game)
    agreed = None
    if state.outcome == "success":
        instance = instance_of(game)
        mine = dond.points(state.proposals[player.game_role], instance.values(player.game_role))
        other_role = dond_game.other_role(player.game_role)
        agreed = {"x": mine, "y": dond.points(state.proposals[other_role], instance.values(other_role))}
    elif state.outcome == "lose":
        agreed = {"x": 0, "y": 0}
    labels = {key: text[key] for key in CHART_TEXT_KEYS}
    return dict(chart=chart_data(game, player), agreed=agreed, labels=labels)


def chart_data(game, player):
    """Every split's points (mine, other's), the Pareto frontier and the agreed split, for Chart.js."""
    instance = instance_of(game)
    mine, theirs = (instance.values_a, instance.values_b)[:: 1 if player.game_role == "A" else -1]
    counts = instance.counts
    pa, pb = pareto.split_points(counts, mine, theirs)
    points = sorted({(int(a), int(b)) for a, b in zip(pa, pb, strict=True)})
    frontier = pareto.pareto_frontier(counts, mine, theirs).tolist()
    return dict(all=[{"x": a, "y": b} for a, b in points], frontier=[{"x": a, "y": b} for a, b in frontier])
