"""The words of DoND: item names in every language, counts written as words, and how an item word is checked.

Items come from ``backend/dond/data/dond_items.json`` (100 items, singular and plural in en/de/it); an item's id is
its English singular. A proposal names items by these words (``backend.dond.proposals``), matched exactly or by
their Snowball stem (``stem``).

>>> item_word("apple", "de", plural=True), stem("Äpfeln", "de") == stem("Äpfel", "de")
('Äpfel', True)
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import snowballstemmer

from backend.dond.rules import LANGUAGES, check_language

STEMMER_NAME = {"en": "english", "de": "german", "it": "italian"}
# Counts written as words are recognised so that the error can say "write it in digits" (or, on request, accepted).
NUMBER_WORDS = {
    "en": {"zero": 0, "no": 0, "one": 1, "a": 1, "an": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "seven": 7, "eight": 8, "nine": 9, "ten": 10},
    "de": {"null": 0, "kein": 0, "keine": 0, "ein": 1, "eine": 1, "einen": 1, "eins": 1, "zwei": 2, "drei": 3,
           "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10},
    "it": {"zero": 0, "nessun": 0, "nessuna": 0, "un": 1, "uno": 1, "una": 1, "due": 2, "tre": 3, "quattro": 4,
           "cinque": 5, "sei": 6, "sette": 7, "otto": 8, "nove": 9, "dieci": 10},
}  # fmt: skip
ITEMS_FILE = Path(__file__).with_name("data") / "dond_items.json"


@cache
def _item_table() -> dict[str, dict[str, tuple[str, str]]]:
    data = json.loads(ITEMS_FILE.read_text(encoding="utf-8"))
    return {entry["en"][0]: {lang: tuple(entry[lang]) for lang in LANGUAGES} for entry in data["items"]}


def item_ids() -> tuple[str, ...]:
    """The ids of all item words (their English singular), in file order.

    >>> len(item_ids()), item_ids()[:2]
    (100, ('acorn', 'apple'))
    """
    return tuple(_item_table())


def item_word(item_id: str, language: str, *, plural: bool = False) -> str:
    """The word for an item id in a language, singular or plural.

    >>> item_word("apple", "de", plural=True), item_word("egg", "it"), item_word("knife", "en", plural=True)
    ('Äpfel', 'uovo', 'knives')
    """
    check_language(language)
    table = _item_table()
    if item_id not in table:
        raise ValueError(f"item_id {item_id!r} is not one of the {len(table)} items in {ITEMS_FILE.name}.")
    return table[item_id][language][1 if plural else 0]


MAX_WORD_CHARS = 40
# A proposal is read as "<digits> <one word>" pairs between brackets and separated by commas (``parse_proposal``),
# so an item word with a space, bracket or comma could never be proposed; < > { } have no place in a noun.
WORD_FORBIDDEN = re.compile(r"[\s\[\]{}<>,\x00-\x1f\x7f]")


def check_item_word(word: Any, language: str, *, where: str) -> str:
    """``word`` when it can name an item in ``language``: one word of at most 40 characters, some letter, no space,
    bracket, comma, angle bracket or control character, and not a number word (a count could be read into it).

    >>> check_item_word("Äpfel", "de", where="x")
    'Äpfel'
    >>> check_item_word("big apples", "en", where="instances.json, instance 1, words.en")
    Traceback (most recent call last):
    ...
    ValueError: instances.json, instance 1, words.en: 'big apples' is not a single item word (at most 40 characters with a letter, no space, bracket, comma, < > or control character).
    """
    ok = (
        isinstance(word, str)
        and 0 < len(word) <= MAX_WORD_CHARS
        and not WORD_FORBIDDEN.search(word)
        and any(char.isalpha() for char in word)
    )
    if not ok:
        shown = word if not isinstance(word, str) or len(word) <= 60 else word[:60] + "..."
        raise ValueError(
            f"{where}: {shown!r} is not a single item word (at most {MAX_WORD_CHARS} characters with a letter, no "
            "space, bracket, comma, < > or control character)."
        )
    if word.casefold() in NUMBER_WORDS[language]:
        raise ValueError(f"{where}: {word!r} reads as a number in {language}; choose another word.")
    return word


@cache
def _stemmer(language: str):
    return snowballstemmer.stemmer(STEMMER_NAME[language])


def stem(word: str, language: str) -> str:
    """The Snowball stem of a word (case-folded) in ``language``: how a proposal's item name that is neither the
    singular nor the plural is matched.

    >>> stem("Äpfeln", "de") == stem("Äpfel", "de"), stem("running", "en")
    (True, 'run')
    """
    return _stemmer(language).stemWord(word.casefold())
