"""What the dond pages show: the localised game state sent over the live socket, the pages' variables, the Results
chart, and the outcome and payoff stored when the Results page is shown."""

from otree.api import cu

from backend import dond
from backend.core import csvio
from backend.dond import game as dond_game
from backend.dond import integrity, scoring, treatments
from study_flow import pay, workload

from . import storage, takeover
from .exports import bonus_of, failure_pay_statement, game_row
from .item_names import page_item_words
from .storage import config_of, events_of, game_of, instance_of
from .texts import texts

BARGAIN_TEXT_KEYS = [
    *("you", "other", "send", "placeholder", "messages_left", "your_turn", "waiting", "typing"),
    *("must_propose", "propose", "finished", "continue", "error_server", "error_empty_message"),
    *("chars", "error_too_long_typed", "preview", "confirm_summary", "error_count", "notice_nothing"),
]
CHART_TEXT_KEYS = ("chart_all", "chart_frontier", "chart_agreed", "chart_x", "chart_y")
QUIET_TIMER_S = 300  # the Bargain page's countdown shows in its last 5 minutes (or last 20%, if that is shorter)
BARGAIN_PING_S = 5  # person vs person: the Bargain page tells the server this often that its person is there


def introduced_as(game):
    """``ai``, ``person`` or ``neutral``: what the person is told the opponent is (the game's ``opponent_intro``)."""
    return treatments.introduced_as(storage.treatment_of(game).opponent_intro, game.opponent)


def page_text(game):
    """The game's texts, the opponent named as the person is told (``dond/texts.py``)."""
    return texts(storage.page_language_of(game), introduced_as(game))


def item_words(game, instance):
    """``(singulars, plurals)`` of the game's items as the person's pages name them (``dond/item_names.py``)."""
    return page_item_words(instance, storage.page_language_of(game), game_language=game.language)


def session_text(session):
    """The texts of a session's pages before a game exists (the Pairing page)."""
    settings = storage.settings_of(session)
    return texts(settings.language, treatments.introduced_as(settings.opponent_intro, settings.opponent))


def pairing_rule(session):
    """The Pairing page's sentence on what happens, and what is paid, when nobody arrives in ``pairing_timeout_s``.
    An unpaired person goes on to Results and the completion page with the participation fee and no bonus."""
    minutes = storage.settings_of(session).pairing_timeout_s / 60
    fee = workload.pay_text(session.config, workload.currency())  # as the consent page states it
    return session_text(session)["pairing_rule"].format(minutes=f"{minutes:g}", fee=fee)


def person_sees_other(game):
    """Whether the person's pages show the other side's values (the game's ``value_visibility``)."""
    return storage.treatment_of(game).sees_other_values("person")


def opponent_sees_mine(game):
    return storage.treatment_of(game).sees_other_values("llm" if game.opponent == "llm" else "person")


def view_for(player, game, events, *, readable=None):
    """The localised chat and controls of ``player`` (texts shown with textContent in the browser). ``readable``:
    the tolerant reading of ``events`` (``integrity.checked_events``) when the caller has it already, so a live
    message reads the game once, not once per use."""
    text = page_text(game)
    instance = instance_of(game)
    if readable is None:
        readable, _ = integrity.checked_events(events, config_of(game), counts=instance.counts)
    view = dond_game.participant_view(readable, player.game_role, config_of(game), counts=instance.counts)
    ones, words = item_words(game, instance)
    for item in view["chat"]:
        notice = item.pop("notice", None)
        if notice == "you_proposed":
            taken = [
                f"{n} {w if n != 1 else one}" for n, w, one in zip(item.pop("proposal"), words, ones, strict=True) if n
            ]
            item["text"] = text["notice_you_proposed"].format(items=", ".join(taken) or text["notice_nothing"])
        elif notice == "aborted":
            item["text"] = text["notice_aborted"].format(
                reason=reason_text(text, item.pop("reason"), item.pop("self", False))
            )
        elif notice:
            item["text"] = text[f"notice_{notice}"]
    # The LLM is working on its move whenever the state says it is to act: the browser shows it typing.
    model_plays_other = game.opponent == "llm" or takeover.model_role(events) == dond_game.other_role(player.game_role)
    view["typing"] = model_plays_other and view["other_to_act"]
    view["type"] = "state"
    return view


def reason_text(text, code, by_me):
    """The page's words for an abort reason code; ``by_me`` when this person is the one who left (their own
    record: "you left the game", never "the other left")."""
    return text[f"reason_{code}_self"] if by_me and f"reason_{code}_self" in text else text[f"reason_{code}"]


def payloads(player, game, events, *, both=False, readable=None):
    """State payloads for the player (and the human partner, in person-vs-person games); ``readable``: see
    ``view_for``."""
    if readable is None:
        readable, _ = integrity.checked_events(events, config_of(game), counts=instance_of(game).counts)
    result = {player.id_in_group: view_for(player, game, events, readable=readable)}
    partner = storage.partner_of(player, game) if both else None
    if partner is not None:
        result[partner.id_in_group] = view_for(partner, game, events, readable=readable)
    return result


def game_vars(player):
    """The Instructions and Bargain pages: the rules of this player's game and the values the player may see."""
    game = game_of(player)
    instance = instance_of(game)
    text = page_text(game)
    treatment = storage.treatment_of(game)
    values = instance.values(player.game_role)
    shows_other = person_sees_other(game)
    values_rule = " ".join(
        [
            text["values_shown"] if shows_other else text["values_own"],
            text["values_other_sees"] if opponent_sees_mine(game) else text["values_other_blind"],
        ]
    )
    first = text["first_you"] if game.opener == player.game_role else text["first_other"]
    per_point = cu(1).to_real_world_currency(player.session)
    rows = [
        dict(word=w, count=c, value=v)
        for w, c, v in zip(item_words(game, instance)[1], instance.counts, values, strict=True)
    ]
    if shows_other:  # only then do the other's values reach the page
        for row, value in zip(rows, instance.values(dond_game.other_role(player.game_role)), strict=True):
            row["other_value"] = value
    llm_game = game.opponent == "llm"
    return dict(
        text=text,
        intro=text["intro"],
        rules=[
            rule.format(max_messages=game.max_messages, first=first, values_rule=values_rule) for rule in text["rules"]
        ],
        goal=text[f"goal_{game.mode}"],
        bonus_rule=text["bonus_rule"].format(per_point=per_point),
        failure_rule=failure_pay_statement(game, player.game_role)
        or takeover.rule_statement(text, game, player.game_role),
        description=text[f"describe_{treatment.agent_description}"]
        if llm_game and treatment.disclose_description
        else "",
        show_other=shows_other,
        rows=rows,
    )


def bargain_js_vars(player):
    """The Bargain page's script: the state, the items with the person's own values (the proposal's preview),
    texts and limits, the key of the unsent message's draft. The other side's values are never here."""
    game = game_of(player)
    instance = instance_of(game)
    text = page_text(game)
    own = instance.values(player.game_role)
    ones, words = item_words(game, instance)
    names = zip(words, ones, strict=True)
    items = zip(instance.item_types, names, instance.counts, own, strict=True)
    timeout_s = storage.settings_of(player.session).game_timeout_s
    draft_prefix = f"dond:{player.participant.code}:"  # the unsent chat message, per participant and game (drafts.js)
    return dict(
        draft_key=f"{draft_prefix}{game.id}",
        draft_prefix=draft_prefix,
        view=view_for(player, game, events_of(game)),
        items=[dict(id=i, word=w, one=one, count=c, own_points=v) for i, (w, one), c, v in items],
        text={key: text[key] for key in BARGAIN_TEXT_KEYS},
        max_chars=game.max_message_chars,
        opponent=game.opponent,
        timer_shows_at_s=min(QUIET_TIMER_S, 0.2 * timeout_s),
        **({"ping_ms": BARGAIN_PING_S * 1000} if game.opponent == "human" else {}),  # only a partner's page pings
    )


def replayed(game):
    """The game's state, replayed from its events as far as they are readable (``backend.dond.integrity``)."""
    return integrity.replay_checked(events_of(game), config_of(game), counts=instance_of(game).counts)[0]


def end_reason(game, player, *, timer_ran_out: bool) -> str:
    """Why ``player``'s Bargain page left an unfinished game: ``advanced_by_admin`` (the admin's advance), else the
    time limit's reason (``backend.dond.game.time_limit_reason``: ``no_connection`` when this person's page never
    connected, ``llm_time_limit`` when only the model owed a move)."""
    if not timer_ran_out:
        return "advanced_by_admin"
    model_role = storage.llm_role(game) if game.opponent == "llm" else takeover.model_role(events_of(game))
    return dond_game.time_limit_reason(replayed(game), llm_role=model_role, page_connected=bool(player.live_since))


def pay_rule(game, row, role):
    """The rule that paid the person in ``role`` (``mode_goal``, ``model_failure_<pay>``, or a partner rule:
    ``takeover.role_pay_rule``) and the abort's reason code."""
    code = dond_game.abort_reason_code(csvio.unescape_text(row["abort_reason"]))
    return takeover.role_pay_rule(game, row, role), code


def finish(player):
    """Store outcome, points and bonus of a finished (or abandoned) game on the player; idempotent."""
    game = game_of(player)
    if game is None:
        player.outcome = "unpaired"
        return None
    row = game_row(game, events_of(game))
    if row["outcome"] in ("success", "lose"):
        player.points = int(row[f"points_{player.game_role.lower()}"])
    player.bonus_points = float(bonus_of(game, row, player.game_role))  # by the game's pay rule
    player.outcome = row["outcome"]
    player.payoff = player.bonus_points
    return row


def proposals_table(game, player, state, text):
    """Both proposals item by item, with what each would earn its maker; the items they over-asked together."""
    instance = instance_of(game)
    me, other = player.game_role, dond_game.other_role(player.game_role)
    mine, theirs = state.proposals[me], state.proposals[other]
    words = item_words(game, instance)[1]
    rows, over = [], []
    for index, (word, count) in enumerate(zip(words, instance.counts, strict=True)):
        asked = [proposal[index] if proposal is not None else None for proposal in (mine, theirs)]
        rows.append(dict(word=word, count=count, mine=shown(asked[0], "–"), theirs=shown(asked[1], "–")))
        if None not in asked and sum(asked) > count:
            over.append(text["over_asked"].format(item=word, asked=sum(asked), count=count))
    worth = [
        dond.points(proposal, instance.values(role)) if proposal is not None else None
        for proposal, role in ((mine, me), (theirs, other))
    ]
    none = text["no_proposal"]
    table = dict(rows=rows, worth_mine=shown(worth[0], none), worth_theirs=shown(worth[1], none))
    return dict(table, any=mine is not None or theirs is not None), over


def shown(value, missing):
    return missing if value is None else str(value)


def results_vars(player):
    row = finish(player)
    if row is None:
        return dict(text=session_text(player.session), unpaired=True)
    game = game_of(player)
    text = page_text(game)
    state = replayed(game)
    outcome = row["outcome"]
    role, other = player.game_role.lower(), "b" if player.game_role == "A" else "a"
    rule, code = pay_rule(game, row, player.game_role)
    proposals, over = proposals_table(game, player, state, text)
    stated = pay.shown(player, rule=rule)  # stored when first shown; never recomputed (study_flow.pay)
    per_point = stated.get("per_point_text") or cu(1).to_real_world_currency(player.session)
    scored = outcome in ("success", "lose")
    if outcome == "success":
        outcome_text = text["outcome_success"]
    elif outcome == "lose":
        outcome_text = text["outcome_lose"].format(items="; ".join(over))
    else:
        outcome_text = text["outcome_aborted"].format(
            reason=reason_text(text, code, state.aborted_by == player.game_role)
        )
    if partner_paid := takeover.paid_statement(text, game, player.game_role, rule):
        paid = partner_paid
    elif rule != "mode_goal":
        paid = failure_pay_statement(game, player.game_role)
    elif outcome == "success":
        score = scoring.goal_score(game.mode, int(row[f"points_{role}"]), int(row[f"points_{other}"]))
        paid = text["paid_success"].format(score=score, per_point=per_point)
    else:
        paid = text[f"paid_{'lose' if outcome == 'lose' else 'aborted'}"]
    return dict(
        text=text,
        unpaired=False,
        outcome=outcome,
        outcome_text=outcome_text,
        scored=scored,
        proposals=proposals,
        my_points=row[f"points_{role}"] if scored else "",
        other_points=row[f"points_{other}"] if scored else "",
        main_score="–" if row["main_score"] == "" else f"{float(row['main_score']):.0f} / 100",
        bonus=stated["text"],
        paid=paid,
    )


def results_js_vars(player):
    game = game_of(player)
    if game is None:
        return {}
    text = page_text(game)
    state = replayed(game)
    if state.outcome not in ("success", "lose"):  # an aborted game has no result to place among the splits
        return {}
    agreed = {"x": 0, "y": 0}
    if state.outcome == "success":
        instance = instance_of(game)
        mine = dond.points(state.proposals[player.game_role], instance.values(player.game_role))
        other_role = dond_game.other_role(player.game_role)
        agreed = {"x": mine, "y": dond.points(state.proposals[other_role], instance.values(other_role))}
    labels = {key: text[key] for key in CHART_TEXT_KEYS}
    return dict(chart=chart_data(game, player), agreed=agreed, labels=labels)


def chart_data(game, player):
    """Every split's points (mine, other's), the Pareto frontier and the agreed split, for Chart.js."""
    instance = instance_of(game)
    mine, theirs = (instance.values_a, instance.values_b)[:: 1 if player.game_role == "A" else -1]
    counts = instance.counts
    pa, pb = scoring.split_points(counts, mine, theirs)
    points = sorted({(int(a), int(b)) for a, b in zip(pa, pb, strict=True)})
    frontier = scoring.pareto_frontier(counts, mine, theirs).tolist()
    return dict(all=[{"x": a, "y": b} for a, b in points], frontier=[{"x": a, "y": b} for a, b in frontier])


def timer_text(player, key):
    """oTree's countdown line of a page, in the session's language (``key``: timer_bargain or timer_pairing)."""
    return texts(storage.settings_of(player.session).language)[key]
