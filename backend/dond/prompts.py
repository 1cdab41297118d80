"""What an LLM player of DoND sees: its prompts rebuilt from the game's events, the re-prompt after a violation,
and the scripted agent that plays offline (``llm_model = "scripted"``).

Prompts are templates in ``backend/dond/data/dond_prompts/<language>/`` (``initial_<mode>.txt``, ``reprompt.txt``,
the notices, ``problems.json``, and ``treatments.json`` + ``other_values.txt`` for the treatments); the chat is rebuilt from the stored events each time, so it is the same after a
restart (``llm_messages``).

Treatments (``backend.dond.treatments.LLMView``): the initial prompt opens with the agent description (``none``:
the neutral representative), states in rule 1 who sees whose values, and lists the other's values after the
model's own only when the model sees them; otherwise the other's values never reach the prompt.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

from backend.dond.errors import MoveError
from backend.dond.game import GameConfig, GameState, apply_event, event_value, other_role, replay
from backend.dond.instances import Instance, format_items, format_values
from backend.dond.proposals import PROPOSAL_PREFIX, format_proposal
from backend.dond.treatments import NEUTRAL_VIEW, LLMView

PROMPTS_DIR = Path(__file__).with_name("data") / "dond_prompts"
FORMAT_HINT = {
    "en": "[Proposal: <number> <item>, <number> <item>, ...]",
    "de": "[Vorschlag: <Anzahl> <Gegenstand>, <Anzahl> <Gegenstand>, ...]",
    "it": "[Proposta: <numero> <oggetto>, <numero> <oggetto>, ...]",
}


NOTICES = ("other_proposed", "time_up", "no_reply")


@cache
def _template(language: str, name: str) -> Template:
    return Template((PROMPTS_DIR / language / name).read_text(encoding="utf-8").strip())


@cache
def _problems(language: str) -> dict[str, str]:
    return json.loads((PROMPTS_DIR / language / "problems.json").read_text(encoding="utf-8"))


@cache
def treatment_texts(language: str) -> dict[str, dict[str, str]]:
    """The treatment wording of ``language`` (``treatments.json``): ``visibility`` rule sentences, ``agent``
    descriptions."""
    return json.loads((PROMPTS_DIR / language / "treatments.json").read_text(encoding="utf-8"))


def initial_prompt(instance: Instance, role: str, config: GameConfig, view: LLMView = NEUTRAL_VIEW) -> str:
    """The agent description, the rules, the goal of the mode, the items and the player's own values (template
    ``initial_<mode>.txt``); the other player's values too only when ``view.sees_other``.

    >>> instance = Instance(("egg", "knife"), (1, 2), (4, 3), (10, 0))
    >>> "worth to the other player: egg: 10" in initial_prompt(instance, "A", GameConfig("semi", "en"), LLMView(True))
    True
    """
    language = config.language
    texts = treatment_texts(language)
    other_table = ""
    if view.sees_other:
        other_values = format_values(instance.values(other_role(role)), instance, language)
        other_table = "\n" + _template(language, "other_values.txt").substitute(other_values=other_values)
    rules = _template(language, f"initial_{config.mode}.txt").substitute(
        max_messages=config.max_messages,
        format=FORMAT_HINT[language],
        items=format_items(instance, language),
        values=format_values(instance.values(role), instance, language),
        other_table=other_table,
        visibility_rule=texts["visibility"][view.visibility_rule],
    )
    return texts["agent"][view.description] + "\n\n" + rules


def notice(name: str, config: GameConfig) -> str:
    """The text of a notice to the model (``other_proposed``, ``time_up``, ``no_reply``) in the game's language."""
    if name not in NOTICES:
        raise ValueError(f"name must be one of {', '.join(NOTICES)}, not {name!r}.")
    return _template(config.language, f"{name}.txt").substitute(format=FORMAT_HINT[config.language])


def problem_text(error_kind: str, details: Mapping[str, Any], instance: Instance, config: GameConfig) -> str:
    """What was wrong with a reply, in the game's language (for the re-prompt)."""
    language = config.language
    problems = _problems(language)
    key = details.get("reason") if error_kind == "format" else error_kind
    template = problems.get(key) or problems.get(error_kind) or problems["pairs"]
    values = {
        "format": FORMAT_HINT[language],
        "prefix": PROPOSAL_PREFIX[language],
        "items": format_items(instance, language),
        **{name: value for name, value in details.items() if isinstance(value, str | int)},
    }
    if error_kind in ("over_ask", "duplicate_item") and details.get("item") in instance.item_types:
        index = instance.item_types.index(details["item"])
        values["item"] = instance.plural(language)[index]
    return Template(template).safe_substitute(values)


def reprompt_text(error: MoveError, instance: Instance, config: GameConfig) -> str:
    """The message sent to an LLM after a violation: what was wrong, and to answer again.

    >>> from backend.dond.errors import OverAskError
    >>> instance = Instance(("egg",), (1,), (10,), (10,))
    >>> reprompt_text(OverAskError("", item="egg", asked=2, available=1), instance, GameConfig(mode="semi", language="en"))
    'Your last reply could not be accepted: You asked for 2 of "eggs", but there are only 1. Please reply again and follow the rules.'
    """
    return _template(config.language, "reprompt.txt").substitute(
        problem=problem_text(error.kind, error.details, instance, config)
    )


def llm_messages(
    events: Iterable[Mapping[str, Any] | Any],
    role: str,
    instance: Instance,
    config: GameConfig,
    view: LLMView = NEUTRAL_VIEW,
) -> list[dict[str, str]]:
    """The chat an LLM playing ``role`` sees, rebuilt from the events (so it is the same after a restart).

    Its first user turn is the initial prompt (followed by the other's first message when the other opened); the
    other's messages are user turns, its own replies (also invalid ones) assistant turns, a re-prompt is a user
    turn; a proposal of the other player shows only as the ``other_proposed`` notice. When all messages are used,
    the ``time_up`` notice follows the other's last message only for the player asked to propose first (the
    opener, ``GameState.to_act``); the other sees ``other_proposed`` once the opener has proposed, never
    ``time_up`` (clembench's flow). An empty message of the other (clembench-exact games) shows as ``no_reply``.
    Consecutive turns of the same side are joined with a blank line.
    """
    other = other_role(role)
    chat: list[dict[str, str]] = []

    def add(side: str, text: str) -> None:
        if chat and chat[-1]["role"] == side:
            chat[-1]["content"] += "\n\n" + text
        else:
            chat.append({"role": side, "content": text})

    add("user", initial_prompt(instance, role, config, view))
    state = replay((), config, counts=instance.counts)
    told_time_up = False
    for event in events:
        kind, event_role = event_value(event, "kind"), event_value(event, "role")
        text = event_value(event, "text") or ""
        before = state
        state = apply_event(state, event)
        if state.proposals[role] is not None or state.finished:
            if kind in ("message", "proposal", "violation") and event_role == role and text:
                add("assistant", text)
            continue
        if kind == "message" and event_role == other and not text.strip():
            add("user", notice("no_reply", config))
        elif kind == "message":
            add("assistant" if event_role == role else "user", text)
        elif kind == "proposal" and event_role == other:
            add("user", notice("other_proposed", config))
        elif kind == "violation" and event_role == role and text:
            add("assistant", text)
        elif kind == "reprompt" and event_role == role:
            add("user", text)
        exhausted = before.phase == "chat" and state.phase == "propose" and state.proposals[other] is None
        if exhausted and state.to_act == (role,) and not told_time_up:
            add("user", notice("time_up", config))
            told_time_up = True
    return chat


# ---------------------------------------------------------------------------------------------------------------
# The scripted agent (offline, deterministic): what `llm_model = "scripted"` plays.

_SCRIPTED_OPENING = {
    "en": "Hello! What matters most to me are the {items}. Which items matter most to you?",
    "de": "Guten Tag! Am wichtigsten sind mir: {items}. Welche Gegenstände sind Ihnen am wichtigsten?",
    "it": "Buongiorno! Per me contano soprattutto: {items}. Quali oggetti contano di più per Lei?",
}
_SCRIPTED_CLOSING = {
    "en": "Thanks. I will make my proposal based on that.",
    "de": "Vielen Dank. Ich mache meinen Vorschlag auf dieser Grundlage.",
    "it": "Grazie. Farò la mia proposta su questa base.",
}


def scripted_proposal(instance: Instance, role: str) -> dict[str, int]:
    """The scripted agent's proposal: every item whose value to it is at least 2, nothing else.

    >>> scripted_proposal(Instance(("egg", "knife", "pen"), (1, 2, 4), (4, 3, 0), (2, 0, 2)), "A")
    {'egg': 1, 'knife': 2, 'pen': 0}
    """
    return {
        item: count if value >= 2 else 0
        for item, count, value in zip(instance.item_types, instance.counts, instance.values(role), strict=True)
    }


def scripted_policy(instance: Instance, role: str, state: GameState) -> Callable[[list[dict[str, str]]], str]:
    """A deterministic player for ``llm_model = "scripted"``: one opening message, one closing message, then its
    proposal (earlier when a proposal is required)."""
    language = state.config.language

    def policy(messages: list[dict[str, str]]) -> str:
        if state.must_propose(role) or state.messages_sent[role] >= 2:
            return format_proposal(scripted_proposal(instance, role), instance, language)
        if state.messages_sent[role] == 0:
            values = instance.values(role)
            best = max(range(len(values)), key=lambda i: (values[i], -i))
            return _SCRIPTED_OPENING[language].format(items=instance.plural(language)[best])
        return _SCRIPTED_CLOSING[language]

    return policy
