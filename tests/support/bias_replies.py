"""A model for the bias tests, scripted per item: good replies, one item it never answers readably, one it answers
readably only when re-asked (set it as the local test server's ``responder``)."""

from __future__ import annotations

from backend.bias.items import load_items

ITEMS = load_items()
REFUSED = ITEMS.item("halo_cyclist_campaign").scenario  # the server never answers this item readably
FLAKY = ITEMS.item("loss_trade_fair").scenario  # the server answers this item readably only when re-asked
CHOICE_REPLY = '{"answer": "B", "probabilities": {"A": 0.2, "B": 0.5, "C": 0.2, "D": 0.1}}'
YES_NO_REPLY = '{"answer": "B", "probabilities": {"A": 0.3, "B": 0.7}}'


def good_reply(prompt: str) -> str:
    if "\nArguments:\n" in prompt:
        return '{"selected": [1, 3, 4]}'
    return CHOICE_REPLY if "\nD. " in prompt else YES_NO_REPLY


def responder(request):
    messages = request["messages"]
    prompt = messages[1]["content"]
    if REFUSED in prompt:
        return "I'd rather not say."
    if FLAKY in prompt and len(messages) == 2:
        return "Hmm, that depends on many things."
    return good_reply(prompt)
