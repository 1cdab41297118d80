"""The offline demo's DoND player: what ``python -m backend.core.llm.fake_server`` answers to a DoND prompt.

The fake server sees only the chat it is sent, so this player reads the game from it: the language (by the
proposal format the prompt shows), the items and its own values (the initial prompt's two lines ``<label>: <count>
<item>, ...`` and ``<label>: <item>: <value>, ...``, as ``backend.dond.instances.format_items`` and
``format_values`` write them). Then it plays like the scripted agent (``backend.dond.prompts.scripted_proposal``):
an opening message, a closing message, then its secret proposal in the game's bracket format; it proposes at once
when the other player has proposed, when all messages are used, or after any re-prompt. Under the notes protocol it
answers the private note and the belief probe with the scripted agent's note and split. Its messages address the
person formally (German "Sie", Italian "Lei"), as the interface does.

``respond(request)`` returns the reply text, or None when the request is not a DoND game's chat; ``demo(request)``
is the fake server's demo responder (``--responder demo``): ``respond``, else the fake server's echo.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from backend.core.llm.fake_server import default_responder
from backend.dond.errors import ProposalRequiredError
from backend.dond.game import GameConfig
from backend.dond.instances import Instance
from backend.dond.prompts import FORMAT_HINT, notice, reprompt_text, scripted_proposal
from backend.dond.proposals import format_proposal
from backend.dond.protocol import json_example, probe_messages, scripted_note, scripted_probe

OPENING = {
    "en": "Hello! What matters most to me are the {items}. Which items matter most to you?",
    "de": "Guten Tag! Am wichtigsten sind mir: {items}. Welche Gegenstände sind Ihnen am wichtigsten?",
    "it": "Buongiorno! Per me contano soprattutto: {items}. Quali oggetti contano di più per Lei?",
}
CLOSING = {
    "en": "Thank you. I will make my proposal based on that.",
    "de": "Vielen Dank. Ich mache meinen Vorschlag auf dieser Grundlage.",
    "it": "La ringrazio. Farò la mia proposta su questa base.",
}
MESSAGES_BEFORE_PROPOSING = 2
_ITEM_PAIR = re.compile(r"(\d+) (\S.*)")
_VALUE_PAIR = re.compile(r"(\S.*): (\d+)")


@dataclass(frozen=True)
class DemoGame:
    """What the demo player knows of its game: the language and the items with its own values (as role A)."""

    language: str
    instance: Instance


def _pairs(text: str, pattern: re.Pattern) -> list[tuple[str, ...]] | None:
    matches = [pattern.fullmatch(part.strip()) for part in text.split(", ")]
    return [match.groups() for match in matches] if matches and all(matches) else None


def read_game(prompt: str) -> DemoGame | None:
    """The game of a DoND initial prompt, or None when ``prompt`` is not one.

    >>> from backend.dond.prompts import initial_prompt
    >>> instance = Instance(("egg", "knife"), (1, 2), (4, 3), (10, 0))
    >>> game = read_game(initial_prompt(instance, "A", GameConfig(mode="semi", language="de")))
    >>> game.language, game.instance.counts, game.instance.values_a, game.instance.singular("de")
    ('de', (1, 2), (4, 3), ('Ei', 'Messer'))
    >>> read_game("Rate this conversation.") is None
    True
    """
    language = next((code for code, hint in FORMAT_HINT.items() if hint in prompt), None)
    if language is None:
        return None
    items = None
    for line in prompt.splitlines():
        _, colon, rest = line.strip().partition(": ")
        if not colon:
            continue
        if items is None:
            items = _pairs(rest, _ITEM_PAIR)
            continue
        values = _pairs(rest, _VALUE_PAIR)
        if values and len(values) == len(items):
            counts = tuple(int(count) for count, _ in items)
            singulars = tuple(word for word, _ in values)
            plurals = tuple(word for _, word in items)
            own = tuple(int(value) for _, value in values)
            try:
                instance = Instance(singulars, counts, own, own, words={language: (singulars, plurals)})
            except ValueError:
                return None
            return DemoGame(language, instance)
        items = _pairs(rest, _ITEM_PAIR) or items
    return None


def _user_turns(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    return [str(message.get("content") or "") for message in messages if message.get("role") == "user"]


def must_propose(last_user_turn: str, language: str, instance: Instance) -> bool:
    """Whether the last user turn asks for the proposal now: the other has proposed, the messages are used up, or
    the previous reply was refused (a re-prompt: proposing is then always a valid answer)."""
    config = GameConfig(mode="semi", language=language)
    refused = reprompt_text(ProposalRequiredError("", format=FORMAT_HINT[language]), instance, config)
    refused_prefix = refused.split(":")[0]
    cues = (notice("other_proposed", config), notice("time_up", config), refused_prefix)
    return any(cue in last_user_turn for cue in cues)


def respond(request: Mapping[str, Any]) -> str | None:
    """The demo player's reply to a chat-completions ``request``, or None when it is not a DoND game's chat."""
    messages = request.get("messages") or []
    user_turns = _user_turns(messages)
    if not user_turns:
        return None
    game = read_game(user_turns[0])
    if game is None:
        return None
    language, instance = game.language, game.instance
    last = user_turns[-1]
    if "{" + json_example(instance, language) + "}" in last:  # the notes protocol's private note or belief probe
        config = GameConfig(mode="semi", language=language)
        probe = probe_messages([], instance, config)[-1]["content"]
        answer = scripted_probe if last.rstrip().endswith(probe) else scripted_note
        return answer(instance, "A", language)([])
    own_turns = sum(1 for message in messages if message.get("role") == "assistant")
    if own_turns >= MESSAGES_BEFORE_PROPOSING or must_propose(last, language, instance):
        return format_proposal(scripted_proposal(instance, "A"), instance, language)
    if own_turns == 0:
        values = instance.values_a
        best = max(range(len(values)), key=lambda index: (values[index], -index))
        return OPENING[language].format(items=instance.plural(language)[best])
    return CLOSING[language]


def demo(request: Mapping[str, Any]) -> str:
    """The offline demo's answers: a DoND game's chat gets the demo player, anything else the fake server's echo."""
    return respond(request) or default_responder(dict(request))
