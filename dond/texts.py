"""Every participant-facing word of the dond app, in English, German (formal "Sie") and Italian (formal "Lei").

Placeholders in braces. ``{other}``, ``{Other}`` (at a sentence's start) and the language's case forms
(``{other_dat}`` in German; ``{other_of}``, ``{other_to}`` in Italian) name the opponent as the session's
``opponent_intro`` says (`OPPONENTS`, keyed by ``backend.dond.treatments.introduced_as``); `texts` fills them in, the other placeholders stay for the caller.

``SOURCE`` and ``OPPONENT_SOURCE`` are the English source of the ``dond`` catalogue
(``locale/<language>/LC_MESSAGES/dond.po``); ``TEXTS`` and ``OPPONENTS`` hold every available language.
"""

import functools

from backend.core.catalogues import by_language, english

SOURCE = english(
    "dond",
    {
        "instructions_title": "Instructions",
        "intro": "You will negotiate with {intro} about how to split the items below between the two of you.",
        "rules": [
            "You both see the same items. {values_rule}",
            "You write messages in turn, at most {max_messages} each. {first}",
            "Instead of writing, you can make a secret proposal at any time it is your turn: you state how many of each item YOU want to take. {Other} does not see it and is then asked to make a proposal too. When all messages are used, the one who wrote first makes a secret proposal first, then the other.",
            "If the two proposals fit together (together they never ask for more items of a kind than there are), each of you gets the points of the items you asked for. Items nobody asked for are left over. Otherwise both of you get 0 points.",
        ],
        "values_own": "The table shows your points per item. {Other} has separate points for each item, which may differ from yours; you do not see them.",
        "values_shown": "The table shows your points per item and also {other}'s points per item.",
        "values_other_sees": "{Other} also sees your points per item.",
        "values_other_blind": "{Other} does not see your points.",
        "describe_none": "{Other} has been instructed to act as a neutral representative.",
        "describe_average": "{Other} has been described as an average negotiator.",
        "describe_expert": "{Other} has been described as an expert negotiator.",
        "describe_awful": "{Other} has been described as a very poor negotiator.",
        "first_you": "You write the first message.",
        "first_other": "{Other} writes the first message.",
        "goal_semi": "Your goal: earn as many points as you can for yourself.",
        "goal_coop": "Your goal: make the sum of your points and {other}'s points as large as possible.",
        "goal_comp": "Your goal: make your points minus {other}'s points as large as possible.",
        "bonus_rule": "Your bonus follows this goal: {per_point} per point (never below zero).",
        "item": "Item",
        "count": "Available",
        "your_value": "Points per item for you",
        "other_value": "Points per item for {other}",
        "bargain_title": "Negotiation",
        "rules_open": "Rules of the game",
        "you": "You",
        "send": "Send",
        "placeholder": "Write a message…",
        "chat_label": "Conversation",
        "chars": "{n} / {max} characters",
        "error_too_long_typed": "Your message is {over} characters too long (at most {max}). Please shorten it before sending.",
        "messages_left": "Messages left for you: {n}",
        "your_turn": "Your turn: write a message or make your secret proposal.",
        "waiting": "Waiting for {other}…",
        "typing": "{Other} is writing…",
        "must_propose": "Please make your secret proposal now.",
        "proposal_title": "Your secret proposal: how many of each item do you take?",
        "preview": "This proposal is worth {points} points to you.",
        "propose": "Submit secret proposal",
        "confirm_summary": "You take: {items}. This is worth {points} points to you. Submit this secret proposal? It cannot be changed.",
        "confirm_yes": "Yes, submit",
        "confirm_no": "Change it",
        "error_count": "{item}: please enter a whole number from 0 to {count}.",
        "notice_other_proposed": "{Other} has made a secret proposal. Please make yours now.",
        "notice_time_up": "All messages have been used. Please make your secret proposal now; {other} makes theirs after you.",
        "notice_time_up_wait": "All messages have been used. {Other} makes a secret proposal first; then it is your turn to make yours.",
        "notice_no_reply": "{Other} sent an empty message.",
        "notice_you_proposed": "You made your secret proposal: {items}.",
        "notice_nothing": "nothing",
        "notice_retry": "The reply of {other} broke a rule of the game; a new answer has been requested.",
        "notice_unreachable": "{Other} could not be reached (a technical problem on our side, not caused by you). We are trying again; please wait.",
        "notice_aborted": "The game has ended early: {reason}",
        "finished": "The game is over.",
        "continue": "Continue",
        "timer_bargain": "Time left for the negotiation:",
        "timer_pairing": "Time left to find a partner:",
        "reason_partner_left": "{other} left the game.",
        "reason_partner_timeout": "{other} did not answer in time.",
        "reason_partner_left_self": "you left the game: your page sent nothing for too long.",
        "reason_partner_timeout_self": "you did not answer in time on your turn.",
        "reason_time_limit": "the time limit was reached.",
        "reason_llm_time_limit": "the time limit was reached while {other} was still to answer.",
        "reason_no_connection": "your page could not connect to the game, so nobody could make a move.",
        "reason_llm_invalid": "{other} broke the rules of the game too often.",
        "reason_llm_error": "{other} could not be reached because of a technical problem on our side, not because of anything you did. Please press Continue to go on with the study.",
        "reason_llm_budget": "{other} used up the allowed number of answers.",
        "reason_llm_cost_cap": "the study's budget for {other}'s answers is used up, so the game ends here, not because of anything you did. Please press Continue to go on with the study.",
        "reason_other": "the game could not continue.",
        "error_empty_message": "Please write a message first.",
        "error_too_long": "Your message is too long (at most {limit} characters).",
        "error_out_of_turn": "Please wait: it is the turn of {other}.",
        "error_proposal_required": "No more messages: please make your secret proposal.",
        "error_already_proposed": "You have already made your proposal.",
        "error_game_over": "The game is over.",
        "error_format": "Please enter a whole number from 0 to the number available for every item.",
        "error_over_ask": "You asked for more of an item than there is.",
        "error_unknown_item": "That item is not part of this game.",
        "error_bad_request": "Your browser sent something we could not read. Please try again.",
        "error_server": "Something went wrong on our side. Please try again in a moment.",
        "error_not_finished": "Please finish the negotiation first.",
        "results_title": "Results",
        "outcome_success": "Deal! Your proposals fit together.",
        "outcome_lose": "No deal: together the two proposals asked for more than there is of: {items}. So both get 0 points.",
        "over_asked": "{item} ({asked} asked for, {count} available)",
        "outcome_aborted": "The game ended early: {reason}",
        "proposals_title": "The two secret proposals",
        "you_asked": "You asked for",
        "other_asked": "{Other} asked for",
        "no_proposal": "no proposal",
        "worth": "Points this proposal would earn",
        "your_points": "Your points",
        "other_points": "Points of {other}",
        "main_score": "Efficiency score",
        "main_score_help": "100 means no split of the items could give one of you more points without the other getting fewer.",
        "bonus": "Your bonus",
        "paid_success": "Bonus rule applied: the deal is scored by your goal ({score} points), paid at {per_point} per point, never below zero.",
        "paid_lose": "Bonus rule applied: without a deal there is no bonus.",
        "paid_aborted": "Bonus rule applied: a game that ended early pays no bonus.",
        "chart_title": "All possible ways to split the items",
        "chart_all": "Possible split",
        "chart_frontier": "Best possible splits",
        "chart_agreed": "Your result",
        "chart_x": "Your points",
        "chart_y": "Points of {other}",
        "pairing_title": "Finding a partner",
        "pairing_body": "Please wait while we pair you with {intro}. Please keep this page open.",
        "pairing_none": "No partner could be found.",
        "unpaired_results": "No partner was available, so no game was played.",
        "pairing_rule": "If no partner is found within {minutes} minutes, you continue without a game and receive the participation fee ({fee}), without a bonus.",
        "notice_takeover": "{Other} has left the game. From now on an AI continues in their place; the game goes on and your bonus follows the same rule.",
        "notice_taken_over": "You were away too long. An AI now continues in your place; you can no longer write or propose in this game.",
        "error_taken_over": "An AI plays in your place since you were away too long; you can no longer move.",
        "paid_partner_left_half_total": "Bonus rule applied: {other} left, so the game ended. You receive half the total value of all items to you, rounded up ({points} points), on top of the participation fee.",
        "paid_partner_left_zero": "Bonus rule applied: {other} left, so the game ended. You receive the participation fee, without a bonus.",
        "rule_partner_end_half_total": "If {other} leaves or stops answering, the game ends and you receive half the total value of all items to you, rounded up ({points} points), on top of the participation fee.",
        "rule_partner_end_zero": "If {other} leaves or stops answering, the game ends and you receive the participation fee, without a bonus.",
        "rule_partner_model": "If {other} leaves or stops answering, an AI continues in their place and your bonus follows the same rule. Whoever leaves the game receives no bonus.",
        "paid_left_game": "Bonus rule applied: you left the game before it ended, so no bonus is paid.",
    },
)

# How the opponent is named, per kind (``ai``, ``person``, ``neutral``; see `opponent_kind`): ``intro`` follows the
# Instructions' "negotiate with"; ``label`` names its chat bubbles; ``other`` the opponent in a sentence, and the case
# forms a language that declines it writes instead (German ``{other_dat}``; Italian ``{other_of}``, ``{other_to}``).
OPPONENT_SOURCE = english(
    "dond",
    {
        "opponent.ai.intro": "an AI language model",
        "opponent.ai.label": "AI model",
        "opponent.ai.other": "the AI model",
        "opponent.ai.other_dat": "the AI model",
        "opponent.ai.other_of": "of the AI model",
        "opponent.ai.other_to": "to the AI model",
        "opponent.person.intro": "another participant",
        "opponent.person.label": "Other participant",
        "opponent.person.other": "the other participant",
        "opponent.person.other_dat": "the other participant",
        "opponent.person.other_of": "of the other participant",
        "opponent.person.other_to": "to the other participant",
        "opponent.neutral.intro": "another negotiator",
        "opponent.neutral.label": "Other negotiator",
        "opponent.neutral.other": "the other negotiator",
        "opponent.neutral.other_dat": "the other negotiator",
        "opponent.neutral.other_of": "of the other negotiator",
        "opponent.neutral.other_to": "to the other negotiator",
    },
)
OPPONENT_FORMS = ("intro", "label", "other", "other_dat", "other_of", "other_to")
TEXTS = by_language(SOURCE)
OPPONENTS = {
    language: {
        kind: {form: names[f"opponent.{kind}.{form}"] for form in OPPONENT_FORMS}
        for kind in ("ai", "person", "neutral")
    }
    for language, names in by_language(OPPONENT_SOURCE).items()
}


def fill_opponent(text, names: dict):
    """``text`` (a string or a list of them) with the opponent's names in place of their placeholders."""
    if isinstance(text, list):
        return [fill_opponent(part, names) for part in text]
    for key, name in names.items():
        text = text.replace("{" + key + "}", name)
    return text


@functools.lru_cache(maxsize=16)
def texts(language: str | None, kind: str = "neutral") -> dict:
    """The texts of ``language`` (English when unknown), the opponent named as ``kind`` says (`OPPONENTS`; ``kind``
    is what ``backend.dond.treatments.introduced_as`` gives).

    >>> texts("de", "ai")["typing"], texts("it", "person")["waiting"]
    ('Die KI schreibt…', "In attesa dell'altra persona…")
    """
    language = language if language in TEXTS else "en"
    names = dict(OPPONENTS[language].get(kind, OPPONENTS[language]["neutral"]))
    names["Other"] = names["other"][0].upper() + names["other"][1:]
    names["other_label"] = names.pop("label")
    result = {key: fill_opponent(value, names) for key, value in TEXTS[language].items()}
    result["other"] = names["other_label"]  # the chat's name of the opponent
    result["opponent_intro"] = names["intro"]
    return result
