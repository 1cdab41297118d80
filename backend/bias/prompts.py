"""Asking a model the bias tests: the prompts, the JSON schemas of a reply, and the offline "scripted" model.

A choice test is asked with lettered options (A, B, ...) and the reply ``{"answer": "B", "probabilities": {...}}``;
an argument test lists numbered arguments and asks for ``{"selected": [2, 5]}``; the log-probability mode asks for the
option letter alone (``backend.bias.replies`` reads the replies). Prompt templates live in
``backend/bias/data/bias_prompts/*.txt`` (``string.Template`` with ``$name``).
"""

from __future__ import annotations

import json
import re
import string
import zlib
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from backend.bias.items import Presented

PROMPTS_PATH = Path(__file__).resolve().parent / "data" / "bias_prompts"
LETTERS = string.ascii_uppercase  # the option letters, A first


@cache
def _template(name: str) -> string.Template:
    return string.Template((PROMPTS_PATH / f"{name}.txt").read_text(encoding="utf-8").strip())


def _ask(template: str, presented: Presented, **fields: Any) -> list[dict[str, str]]:
    """The system prompt, then the test (its paragraphs and question) in ``template`` with ``fields``."""
    user = _template(template).substitute(
        context="\n\n".join(presented.paragraphs), question=presented.question, **fields
    )
    return [{"role": "system", "content": _template("system").template}, {"role": "user", "content": user}]


def _lettered_options(presented: Presented) -> str:
    letters = LETTERS[: len(presented.options)]
    return "\n".join(f"{letter}. {option.label}" for letter, option in zip(letters, presented.options, strict=True))


def _numbered_arguments(presented: Presented) -> str:
    return "\n".join(f"{number}. {argument.text}" for number, argument in enumerate(presented.arguments, 1))


def build_messages(presented: Presented) -> list[dict[str, str]]:
    """The chat messages that ask a model one test version (system prompt + the test).

    >>> from backend.bias.items import load_items, present
    >>> messages = build_messages(present(load_items().item("anchoring_training"), "control"))
    >>> [message["role"] for message in messages], "B. 25 %" in messages[1]["content"]
    (['system', 'user'], True)
    """
    if presented.kind == "arguments":
        return _ask("arguments", presented, arguments=_numbered_arguments(presented))
    keys = ", ".join(f'"{letter}": <p>' for letter in LETTERS[: len(presented.options)])
    return _ask("choice", presented, options=_lettered_options(presented), probability_keys=keys)


def build_letter_messages(presented: Presented) -> list[dict[str, str]]:
    """The chat messages that ask for the option letter alone (the log-probability answer mode).

    >>> from backend.bias.items import load_items, present
    >>> build_letter_messages(present(load_items().item("anchoring_training"), "control"))[1]["content"][-42:]
    'Reply with the letter of your choice only.'
    """
    return _ask("letter", presented, options=_lettered_options(presented))


# What the letters of the per-argument question mean, in the item set's language (A = yes, B = no); the reply's own
# words are checked against them (``backend.bias.contradictions``).
ARGUMENT_LETTER_LABELS = {
    "en": ("Yes, I would take it into account", "No, I would not take it into account"),
    "de": ("Ja, ich würde es berücksichtigen", "Nein, ich würde es nicht berücksichtigen"),
    "it": ("Sì, ne terrei conto", "No, non ne terrei conto"),
}


def argument_letter_labels(language: str = "en") -> tuple[str, str]:
    """The meanings of the letters A (yes) and B (no) of the per-argument question; English for other languages.

    >>> argument_letter_labels("de")[1]
    'Nein, ich würde es nicht berücksichtigen'
    """
    return ARGUMENT_LETTER_LABELS.get(str(language).split("-")[0].lower(), ARGUMENT_LETTER_LABELS["en"])


def build_argument_letter_messages(presented: Presented, number: int, *, language: str = "en") -> list[dict[str, str]]:
    """The chat messages that ask whether argument ``number`` (1-based) would be taken into account, as a choice
    between the letters A (yes) and B (no), each letter with its meaning (``argument_letter_labels``): the
    log-probability answer mode of an arguments test.

    >>> from backend.bias.items import load_items, present
    >>> item = load_items().item("confirmation_home_office")
    >>> "A. Yes, I would take it into account" in build_argument_letter_messages(present(item, "treatment"), 1)[1]["content"]
    True
    """
    if not 1 <= number <= len(presented.arguments):
        raise ValueError(f"Argument {number} was not offered; the test lists {len(presented.arguments)}.")
    yes_label, no_label = argument_letter_labels(language)
    return _ask(
        "argument_letter",
        presented,
        arguments=_numbered_arguments(presented),
        number=number,
        yes_label=yes_label,
        no_label=no_label,
    )


def choice_schema(n_options: int) -> dict[str, Any]:
    """The JSON schema of a choice reply (structured output): an option letter and one probability per option.

    >>> choice_schema(2)["properties"]["answer"]["enum"]
    ['A', 'B']
    """
    letters = list(LETTERS[:n_options])
    probability = {"type": "number", "minimum": 0, "maximum": 1}
    return {
        "type": "object",
        "properties": {
            "answer": {"type": "string", "enum": letters},
            "probabilities": {
                "type": "object",
                "properties": dict.fromkeys(letters, probability),
                "required": letters,
                "additionalProperties": False,
            },
        },
        "required": ["answer", "probabilities"],
        "additionalProperties": False,
    }


def selection_schema(n_arguments: int) -> dict[str, Any]:
    """The JSON schema of an arguments reply: the numbers of the selected arguments."""
    number = {"type": "integer", "minimum": 1, "maximum": n_arguments}
    return {
        "type": "object",
        "properties": {"selected": {"type": "array", "items": number, "minItems": 1, "uniqueItems": True}},
        "required": ["selected"],
        "additionalProperties": False,
    }


def reprompt_message(problem: str) -> dict[str, str]:
    """The follow-up user message after an unreadable reply."""
    return {"role": "user", "content": _template("reprompt").substitute(problem=problem)}


# --- the offline "scripted" model ----------------------------------------------------------------------------------
def scripted_reply(messages: Sequence[Mapping[str, str]]) -> str:
    """A deterministic reply in the requested format (a function of the last user message): the scripted model.

    >>> reply = scripted_reply([{"role": "user", "content": "Q\\n\\nOptions:\\nA. 1\\nB. 2\\n\\nReply ..."}])
    >>> sorted(json.loads(reply))
    ['answer', 'probabilities']
    """
    prompt = next((m["content"] for m in reversed(messages) if m.get("role") == "user" and "\n" in m["content"]), "")
    digest = zlib.crc32(prompt.encode("utf-8"))
    numbered = re.findall(r"^(\d+)\. ", prompt, flags=re.MULTILINE)
    if "Arguments:" in prompt and numbered:
        count = len(numbered)
        chosen = sorted({digest % count + 1, (digest // count) % count + 1, (digest // 7) % count + 1})
        return json.dumps({"selected": chosen})
    letters = re.findall(r"^([A-Z])\. ", prompt, flags=re.MULTILINE) or ["A", "B"]
    index = digest % len(letters)
    rest = 0.4 / (len(letters) - 1)
    probabilities = {letter: round(0.6 if k == index else rest, 4) for k, letter in enumerate(letters)}
    return json.dumps({"answer": letters[index], "probabilities": probabilities})
