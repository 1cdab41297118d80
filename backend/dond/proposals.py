"""DoND proposals: reading a player's reply (free message or secret proposal), writing a proposal, checking one.

A proposal names what its proposer takes, as counts per item type. An LLM writes it in square brackets,
``[Proposal: 2 knives, 1 egg]`` (``Vorschlag:`` in German, ``Proposta:`` in Italian), read by ``parse_proposal``;
a person's form or live message sends counts, checked by ``check_proposal``. Every mistake raises a ``MoveError``
subclass (``backend.dond.errors``) whose ``kind`` the re-prompt names.

>>> from backend.dond.instances import generate_instance
>>> instance = generate_instance(7)
>>> parse_proposal("Fine. [Proposal: 1 " + instance.singular("en")[0] + "]", instance, "en")[instance.item_types[0]]
1
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from backend.dond.errors import (
    DuplicateItemError,
    EmptyMessageError,
    OverAskError,
    ProposalFormatError,
    ProposalRequiredError,
    UnknownItemError,
)
from backend.dond.instances import Instance, format_items
from backend.dond.items import NUMBER_WORDS, stem
from backend.dond.rules import check_language

PROPOSAL_PREFIX = {"en": "Proposal:", "de": "Vorschlag:", "it": "Proposta:"}
_BRACKETS = re.compile(r"\[(.*?)\]", re.DOTALL)


def format_proposal(proposal: Mapping[str, int], instance: Instance, language: str) -> str:
    """A proposal in the bracket format that ``parse_proposal`` reads (types with count 0 left out).

    >>> instance = Instance(("egg", "knife"), (1, 2), (4, 3), (10, 0))
    >>> format_proposal({"egg": 0, "knife": 2}, instance, "it")
    '[Proposta: 2 coltelli]'
    >>> format_proposal({}, instance, "en")
    '[Proposal:]'
    """
    counts = proposal_vector(proposal, instance)
    singulars, plurals = instance.singular(language), instance.plural(language)
    pairs = [f"{n} {singulars[i] if n == 1 else plurals[i]}" for i, n in enumerate(counts) if n]
    return f"[{PROPOSAL_PREFIX[language]}{' ' if pairs else ''}{', '.join(pairs)}]"


def _match_item(name: str, count: int, instance: Instance, language: str) -> int | None:
    """Index of the item type that ``name`` names: exact (case-insensitive) word, else a unique Snowball stem.

    The expected number (singular for 1, else plural) is tried before the other, as in the reference game.
    """
    singulars = [w.casefold() for w in instance.singular(language)]
    plurals = [w.casefold() for w in instance.plural(language)]
    word_lists = (singulars, plurals) if count == 1 else (plurals, singulars)
    key = name.casefold()
    for words in word_lists:
        if key in words:
            return words.index(key)
    key_stem = stem(key, language)
    for words in word_lists:
        matches = [i for i, word in enumerate(words) if stem(word, language) == key_stem]
        if len(matches) == 1:
            return matches[0]
    return None


def _parse_count(token: str, part: str, language: str, *, number_words: bool) -> int:
    if token.isascii() and token.isdigit():
        return int(token)
    spelled = NUMBER_WORDS[language].get(token.casefold())
    if spelled is not None and number_words:
        return spelled
    if spelled is not None:
        raise ProposalFormatError(
            f"The count in {part.strip()!r} is written as a word; write it in digits, e.g. '{spelled} ...'.",
            reason="number_word",
            part=part.strip(),
        )
    raise ProposalFormatError(
        f"{part.strip()!r} is not a pair of a count in digits and one item name.", reason="pairs", part=part.strip()
    )


def parse_proposal(text: str, instance: Instance, language: str, *, number_words: bool = False) -> dict[str, int]:
    """Read the secret proposal in an LLM reply: what the proposer takes, for every item type of the instance.

    The first ``[...]`` in ``text`` must start with the language's prefix (``Proposal:``, ``Vorschlag:``,
    ``Proposta:``; any case), followed by comma-separated ``<digits> <item>`` pairs; one trailing comma and an
    empty list are allowed. An item name matches a singular or plural word (any case), else a unique Snowball
    stem. Types not named get 0. ``number_words=True`` also accepts counts written as words (``two``, ``zwei``).

    Raises a ``MoveError`` subclass: ``ProposalFormatError`` (no bracket, wrong prefix, not count/name pairs,
    ``reason`` in details), ``UnknownItemError``, ``DuplicateItemError``, ``OverAskError``.

    >>> instance = Instance(("egg", "knife"), (1, 2), (4, 3), (10, 0))
    >>> parse_proposal("ok [proposal: 2 knife]", instance, "en")
    {'egg': 0, 'knife': 2}
    >>> parse_proposal("[Vorschlag: 1 Eier, 1 Messer]", instance, "de")
    {'egg': 1, 'knife': 1}
    >>> parse_proposal("[Proposta: 3 coltelli]", instance, "it")
    Traceback (most recent call last):
    ...
    backend.dond.errors.OverAskError: The proposal asks for 3 coltelli, but there are only 2.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, not {type(text).__name__}.")
    check_language(language)
    prefix = PROPOSAL_PREFIX[language]
    match = _BRACKETS.search(text)
    if match is None:
        raise ProposalFormatError(
            f"No proposal found: write it in square brackets, e.g. '[{prefix} 2 ...]'.", reason="no_brackets"
        )
    content = match.group(1).strip()
    if not content.casefold().startswith(prefix.casefold()):
        raise ProposalFormatError(
            f"The text in square brackets must start with '{prefix}', but it is '[{content[:60]}]'.",
            reason="prefix",
            bracket=content,
        )
    rest = content[len(prefix) :].strip()
    if rest.endswith(","):
        rest = rest[:-1]
    taken = [0] * len(instance.item_types)
    named: set[int] = set()
    if rest.strip():
        for part in rest.split(","):
            tokens = part.split()
            if len(tokens) != 2:
                if len(tokens) > 2 and tokens[0].casefold() in NUMBER_WORDS[language]:
                    _parse_count(tokens[0], part, language, number_words=False)
                raise ProposalFormatError(
                    f"{part.strip()!r} is not a pair of a count in digits and one item name.",
                    reason="pairs",
                    part=part.strip(),
                )
            count = _parse_count(tokens[0], part, language, number_words=number_words)
            index = _match_item(tokens[1], count, instance, language)
            if index is None:
                raise UnknownItemError(
                    f"{tokens[1]!r} is not one of the items: {format_items(instance, language)}.", item=tokens[1]
                )
            if index in named:
                raise DuplicateItemError(
                    f"The proposal names {instance.singular(language)[index]!r} more than once.",
                    item=instance.item_types[index],
                )
            named.add(index)
            taken[index] = count
    for index, count in enumerate(taken):
        if count > instance.counts[index]:
            word = instance.plural(language)[index] if count != 1 else instance.singular(language)[index]
            raise OverAskError(
                f"The proposal asks for {count} {word}, but there are only {instance.counts[index]}.",
                item=instance.item_types[index],
                asked=count,
                available=instance.counts[index],
            )
    return dict(zip(instance.item_types, taken, strict=True))


@dataclass(frozen=True)
class Move:
    """A parsed reply: ``kind`` is ``"message"`` (free text, passed on as typed) or ``"proposal"``."""

    kind: str
    text: str
    proposal: dict[str, int] | None = None


def parse_reply(
    text: str, instance: Instance, language: str, *, must_propose: bool = False, number_words: bool = False
) -> Move:
    """Classify a player's reply: a free message, or a proposal when it contains ``[...]`` (parsed as above).

    ``must_propose`` is true once the other player has proposed or the player's messages are used up; a reply
    without brackets then raises ``ProposalRequiredError``. An empty reply raises ``EmptyMessageError``.

    >>> instance = Instance(("egg", "knife"), (1, 2), (4, 3), (10, 0))
    >>> parse_reply("I like eggs.", instance, "en")
    Move(kind='message', text='I like eggs.', proposal=None)
    >>> parse_reply("[Proposal: 1 egg]", instance, "en", must_propose=True).proposal
    {'egg': 1, 'knife': 0}
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, not {type(text).__name__}.")
    if _BRACKETS.search(text) is None:
        if must_propose:
            raise ProposalRequiredError(
                "A secret proposal is required now, in square brackets: "
                f"'[{PROPOSAL_PREFIX.get(language, 'Proposal:')} <count> <item>, ...]'.",
            )
        if not text.strip():
            raise EmptyMessageError("The message is empty.")
        return Move("message", text)
    return Move("proposal", text, parse_proposal(text, instance, language, number_words=number_words))


def proposal_vector(proposal: Mapping[str, int] | Sequence[int], instance: Instance) -> tuple[int, ...]:
    """A proposal as counts in ``item_types`` order (dicts may leave types out; sequences must be complete).

    >>> proposal_vector({"knife": 1}, Instance(("egg", "knife"), (1, 2), (4, 3), (10, 0)))
    (0, 1)
    """
    if isinstance(proposal, Mapping):
        unknown = set(proposal) - set(instance.item_types)
        if unknown:
            raise UnknownItemError(
                f"Unknown item type(s) {sorted(unknown)}; the items are {list(instance.item_types)}."
            )
        return tuple(int(proposal.get(item, 0)) for item in instance.item_types)
    vector = tuple(int(v) for v in proposal)
    if len(vector) != len(instance.item_types):
        raise ValueError(f"proposal must have {len(instance.item_types)} counts, got {len(vector)}.")
    return vector


def check_proposal(proposal: Mapping[str, Any], instance: Instance) -> dict[str, int]:
    """Validate a proposal from a form or a live message: every count an integer in 0..available.

    Returns the proposal with every item type (missing ones as 0); raises ``UnknownItemError``,
    ``ProposalFormatError`` (not a whole number, negative) or ``OverAskError``.

    >>> instance = Instance(("egg", "knife"), (1, 2), (4, 3), (10, 0))
    >>> check_proposal({"knife": "2"}, instance)
    {'egg': 0, 'knife': 2}
    >>> check_proposal({"knife": -1}, instance)
    Traceback (most recent call last):
    ...
    backend.dond.errors.ProposalFormatError: The count for 'knife' must be a whole number from 0 to 2, not -1.
    """
    if not isinstance(proposal, Mapping):
        raise ProposalFormatError(f"A proposal must map item types to counts, not {type(proposal).__name__}.")
    unknown = [key for key in proposal if key not in instance.item_types]
    if unknown:
        raise UnknownItemError(f"Unknown item type(s) {unknown}; the items are {list(instance.item_types)}.")
    result = {}
    for item, available in zip(instance.item_types, instance.counts, strict=True):
        raw = proposal.get(item, 0)
        text = str(raw).strip()
        is_whole = not isinstance(raw, bool) and (
            isinstance(raw, int | np.integer) or (isinstance(raw, str) and text.isascii() and text.isdigit())
        )
        if not is_whole or int(text) < 0:
            raise ProposalFormatError(
                f"The count for {item!r} must be a whole number from 0 to {available}, not {raw!r}.", item=item
            )
        if int(text) > available:
            raise OverAskError(
                f"The count for {item!r} is {int(text)}, but there are only {available}.",
                item=item,
                asked=int(text),
                available=available,
            )
        result[item] = int(text)
    return result
