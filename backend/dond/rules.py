"""Deal or No Deal (DoND): instances, item words, the proposal parser and the game's pure rules.

The game follows clembench's DoND (see README, section DoND): two players split a set of items; each has private
integer values per item type (0..10) with a total of exactly 10 over all items. They chat, then each makes a secret
proposal naming what they take. The proposals succeed when they are complementary (A's count + B's count <= the
available count for every type; leftovers allowed); then each player scores Σ count × own value, else both score 0.

Player "A" receives ``values_a`` and player "B" ``values_b``; who opens the chat is a separate choice of the game.

>>> instance = generate_instance(7)
>>> parse_proposal("Fine. [Proposal: 1 " + instance.singular("en")[0] + "]", instance, "en")[instance.item_types[0]]
1
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from math import comb
from pathlib import Path
from typing import Any

import numpy as np
import snowballstemmer

LANGUAGES = ("en", "de", "it")
MODES = ("semi", "coop", "comp")
ROLES = ("A", "B")
MAX_VALUE = 10
TOTAL_POINTS = 10
N_TYPES_RANGE = (3, 5)
N_ITEMS_RANGE = (5, 8)

PROPOSAL_PREFIX = {"en": "Proposal:", "de": "Vorschlag:", "it": "Proposta:"}
_STEMMER_NAME = {"en": "english", "de": "german", "it": "italian"}
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
_BRACKETS = re.compile(r"\[(.*?)\]", re.DOTALL)


# ---------------------------------------------------------------------------------------------------------------
# Errors: one base class, one subclass per kind of mistake; ``kind`` is a stable code for storage and re-prompts.


class MoveError(ValueError):
    """A player's reply that breaks the game's rules; ``kind`` names the rule, ``details`` holds its specifics."""

    kind = "move"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.details = details


class ProposalFormatError(MoveError):
    """The bracket is not ``[<prefix> <digits> <item>, ...]`` (wrong prefix, pairs, or counts not in digits)."""

    kind = "format"


class UnknownItemError(MoveError):
    """A proposal names an item that is not in the game."""

    kind = "unknown_item"


class DuplicateItemError(MoveError):
    """A proposal names the same item type twice."""

    kind = "duplicate_item"


class OverAskError(MoveError):
    """A proposal asks for more of an item than there is."""

    kind = "over_ask"


class ProposalRequiredError(MoveError):
    """A free message where a secret proposal was required (after the other's proposal or the last message)."""

    kind = "proposal_required"


class EmptyMessageError(MoveError):
    """An empty or whitespace-only message."""

    kind = "empty_message"


# ---------------------------------------------------------------------------------------------------------------
# Item words


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
    _check_language(language)
    table = _item_table()
    if item_id not in table:
        raise ValueError(f"item_id {item_id!r} is not one of the {len(table)} items in {ITEMS_FILE.name}.")
    return table[item_id][language][1 if plural else 0]


def _check_language(language: str) -> None:
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, not {language!r}.")


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}.")


# ---------------------------------------------------------------------------------------------------------------
# Instances


@dataclass(frozen=True)
class Instance:
    """One game: item types (ids), their counts and both players' values, in the same order.

    ``words`` optionally gives the names per language as ``{language: (singulars, plurals)}``; without it the names
    come from ``backend/dond/data/dond_items.json`` (it is used for instances of other projects, whose words differ).
    """

    item_types: tuple[str, ...]
    counts: tuple[int, ...]
    values_a: tuple[int, ...]
    values_b: tuple[int, ...]
    words: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict, compare=False)
    seed: int | None = None

    def __post_init__(self) -> None:
        for name in ("item_types", "counts", "values_a", "values_b"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        n = len(self.item_types)
        if n == 0 or not all(len(getattr(self, name)) == n for name in ("counts", "values_a", "values_b")):
            raise ValueError("item_types, counts, values_a and values_b must be non-empty and of the same length.")
        if len(set(self.item_types)) != n:
            raise ValueError(f"item_types must be distinct, got {list(self.item_types)}.")
        for name in ("counts", "values_a", "values_b"):
            values = getattr(self, name)
            if not all(isinstance(v, int | np.integer) and not isinstance(v, bool) and v >= 0 for v in values):
                raise ValueError(f"{name} must hold non-negative integers, got {list(values)}.")
            object.__setattr__(self, name, tuple(int(v) for v in values))
        if not all(c >= 1 for c in self.counts):
            raise ValueError(f"counts must be at least 1 for every item type, got {list(self.counts)}.")

    def values(self, role: str) -> tuple[int, ...]:
        """The values of player ``"A"`` or ``"B"``."""
        if role not in ROLES:
            raise ValueError(f"role must be 'A' or 'B', not {role!r}.")
        return self.values_a if role == "A" else self.values_b

    def singular(self, language: str) -> tuple[str, ...]:
        """Item names in the singular, in the order of ``item_types``."""
        return self._names(language)[0]

    def plural(self, language: str) -> tuple[str, ...]:
        """Item names in the plural, in the order of ``item_types``."""
        return self._names(language)[1]

    def _names(self, language: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if language in self.words:
            singulars, plurals = self.words[language]
            return tuple(singulars), tuple(plurals)
        _check_language(language)
        return (
            tuple(item_word(item, language) for item in self.item_types),
            tuple(item_word(item, language, plural=True) for item in self.item_types),
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``words`` only when given); ``Instance.from_dict`` reads it back."""
        data: dict[str, Any] = {
            "item_types": list(self.item_types),
            "counts": list(self.counts),
            "values_a": list(self.values_a),
            "values_b": list(self.values_b),
        }
        if self.seed is not None:
            data["seed"] = self.seed
        if self.words:
            data["words"] = {lang: [list(s), list(p)] for lang, (s, p) in self.words.items()}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Instance:
        """Build an instance from ``to_dict`` output (or a file of such dicts).

        >>> Instance.from_dict(generate_instance(3).to_dict()) == generate_instance(3)
        True
        """
        missing = [key for key in ("item_types", "counts", "values_a", "values_b") if key not in data]
        if missing:
            raise ValueError(f"data must have the keys item_types, counts, values_a and values_b; missing {missing}.")
        words = {lang: (tuple(pair[0]), tuple(pair[1])) for lang, pair in (data.get("words") or {}).items()}
        return cls(data["item_types"], data["counts"], data["values_a"], data["values_b"], words, data.get("seed"))

    @classmethod
    def from_clembench(cls, game_instance: Mapping[str, Any], language: str) -> Instance:
        """Read one entry of clembench's ``game_instances`` (its own words, in ``language``)."""
        singulars = tuple(game_instance["item_types"])
        plurals = tuple(game_instance["item_types_plural"])
        return cls(
            singulars,
            game_instance["item_counts"],
            game_instance["player_a_values"],
            game_instance["player_b_values"],
            {language: (singulars, plurals)},
        )


def satisfies_constraints(instance: Instance) -> bool:
    """Whether an instance obeys the generator's rules.

    3-5 types, 5-8 items, each type at least once, values in 0..10, Σ count × value = 10 for each player,
    no type worth 0 to both players, and at least one type worth more than 0 to both.

    >>> satisfies_constraints(Instance(("a", "b", "c"), (3, 1, 2), (0, 0, 5), (1, 3, 2)))
    True
    >>> satisfies_constraints(Instance(("a", "b", "c"), (3, 1, 2), (0, 0, 5), (2, 4, 0)))
    False
    """
    counts, a, b = (np.asarray(x) for x in (instance.counts, instance.values_a, instance.values_b))
    return bool(
        N_TYPES_RANGE[0] <= counts.size <= N_TYPES_RANGE[1]
        and N_ITEMS_RANGE[0] <= counts.sum() <= N_ITEMS_RANGE[1]
        and (counts >= 1).all()
        and ((a >= 0) & (a <= MAX_VALUE) & (b >= 0) & (b <= MAX_VALUE)).all()
        and counts @ a == TOTAL_POINTS
        and counts @ b == TOTAL_POINTS
        and not ((a == 0) & (b == 0)).any()
        and ((a > 0) & (b > 0)).any()
    )


# ---------------------------------------------------------------------------------------------------------------
# A researcher's instances file, checked whole before a session exists

INSTANCE_KEYS = ("item_types", "counts", "values_a", "values_b", "words", "seed")
MAX_WORD_CHARS = 40
# A proposal is read as "<digits> <one word>" pairs between brackets and separated by commas (``parse_proposal``),
# so an item word with a space, bracket or comma could never be proposed; < > { } have no place in a noun.
_WORD_FORBIDDEN = re.compile(r"[\s\[\]{}<>,\x00-\x1f\x7f]")


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
        and not _WORD_FORBIDDEN.search(word)
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


def entry_lines(text: str) -> list[int]:
    """The line on which each entry of a top-level JSON list starts (empty when ``text`` is not such a list).

    >>> entry_lines('[\\n  {"a": 1},\\n  {"b": [1,\\n 2]}, 3\\n]')
    [2, 3, 4]
    """
    decoder = json.JSONDecoder()
    position, lines = 0, []

    def skip(at: int) -> int:
        while at < len(text) and text[at] in " \t\r\n\ufeff":
            at += 1
        return at

    position = skip(position)
    if not text.startswith("[", position):
        return []
    position = skip(position + 1)
    while position < len(text) and text[position] != "]":
        try:
            _, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            return []
        lines.append(text.count("\n", 0, position) + 1)
        position = skip(end)
        if text.startswith(",", position):
            position = skip(position + 1)
    return lines


def instances_from_data(data: Any, *, what: str, languages: Sequence[str], lines: Sequence[int] = ()) -> list[Instance]:
    """The instances of a researcher's file (already parsed JSON), every one checked for play in ``languages``.

    Each entry is an object with ``item_types``, ``counts``, ``values_a``, ``values_b`` and optionally ``seed``
    and ``words`` (``{language: [singulars, plurals]}``, one word per item type). It must follow the generator's
    rules (``satisfies_constraints``), and every item must have a word in each of ``languages``: from ``words``,
    or from the item list when the item type is one of its ids. A ValueError names ``what`` (the file), the
    instance (counting from 1; with ``lines``, see ``entry_lines``, also the line it starts on) and the field.

    >>> entry = {"item_types": ["apple", "egg", "pen"], "counts": [2, 2, 1], "values_a": [1, 2, 4], "values_b": [3, 1, 2]}
    >>> [i.plural("it") for i in instances_from_data([entry], what="f.json", languages=["it"])]
    [('mele', 'uova', 'penne')]
    >>> instances_from_data([dict(entry, item_types=["apple", "egg", "unicorn"])], what="f.json", languages=["de"])
    Traceback (most recent call last):
    ...
    ValueError: f.json, instance 1, item_types: 'unicorn' is not one of the 100 item ids, and the instance has no words for 'de'. Give "words": {"de": [[singulars], [plurals]]} or use known item ids.
    """
    if not isinstance(data, list) or not data:
        raise ValueError(f"{what} must hold a JSON list with at least one instance, not {type(data).__name__}.")
    for language in languages:
        _check_language(language)
    places = [
        f"{what}, instance {n}" + (f" (line {lines[n - 1]})" if n <= len(lines) else "")
        for n in range(1, len(data) + 1)
    ]
    return [_instance_entry(entry, place, languages) for entry, place in zip(data, places, strict=True)]


def _instance_entry(entry: Any, where: str, languages: Sequence[str]) -> Instance:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: must be an object with item_types, counts, values_a and values_b.")
    unknown = sorted(set(entry) - set(INSTANCE_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {', '.join(unknown)}; the fields are {', '.join(INSTANCE_KEYS)}.")
    for name in ("item_types", "counts", "values_a", "values_b"):
        if not isinstance(entry.get(name), list) or not entry[name]:
            raise ValueError(f"{where}, {name}: must be a non-empty list, not {entry.get(name)!r}.")
    types = entry["item_types"]
    if not all(isinstance(item, str) and 0 < len(item) <= MAX_WORD_CHARS for item in types):
        raise ValueError(f"{where}, item_types: every item type must be text of 1 to {MAX_WORD_CHARS} characters.")
    n = len(types)
    for name in ("counts", "values_a", "values_b"):
        values = entry[name]
        if len(values) != n or not all(type(v) is int and 0 <= v <= MAX_VALUE for v in values):
            raise ValueError(
                f"{where}, {name}: must hold {n} whole numbers from 0 to {MAX_VALUE} (one per item type), not {values!r}."
            )
    seed = entry.get("seed")
    if seed is not None and type(seed) is not int:
        raise ValueError(f"{where}, seed: must be a whole number or absent, not {seed!r}.")
    words = entry.get("words") or {}
    if not isinstance(words, dict):
        raise ValueError(f"{where}, words: must be an object {{language: [singulars, plurals]}}, not {words!r}.")
    for language, pair in words.items():
        field_name = f"{where}, words.{language}"
        if language not in LANGUAGES:
            raise ValueError(f"{field_name}: the language must be one of {', '.join(LANGUAGES)}.")
        shaped = isinstance(pair, list) and len(pair) == 2 and all(isinstance(part, list) for part in pair)
        if not shaped or len(pair[0]) != n or len(pair[1]) != n:
            raise ValueError(f"{field_name}: must be [singulars, plurals], two lists of {n} words (one per item type).")
        seen: dict[str, int] = {}
        for form in pair:
            for index, word in enumerate(form):
                key = check_item_word(word, language, where=field_name).casefold()
                if seen.setdefault(key, index) != index:
                    raise ValueError(f"{field_name}: {word!r} names two different item types.")
    for language in languages:
        if language in words:
            continue
        unknown_ids = [item for item in types if item not in _item_table()]
        if unknown_ids:
            raise ValueError(
                f"{where}, item_types: {unknown_ids[0]!r} is not one of the {len(_item_table())} item ids, and the "
                f'instance has no words for {language!r}. Give "words": {{"{language}": [[singulars], [plurals]]}} '
                "or use known item ids."
            )
    try:
        instance = Instance.from_dict(entry)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    if not satisfies_constraints(instance):
        raise ValueError(
            f"{where}: does not follow the game's rules: 3-5 item types, 5-8 items in all, each player's values "
            "times counts sum to 10, no item type worth 0 to both players and some item type worth more than 0 to both."
        )
    return instance


@dataclass(frozen=True)
class _CountsOption:
    counts: tuple[int, ...]
    weight: float  # probability that the reference's rejection sampler ends with these counts (unnormalised)
    solutions: np.ndarray  # every value vector v in 0..10 with counts @ v == 10, shape (n, k)


@cache
def _counts_options() -> tuple[_CountsOption, ...]:
    """Every counts vector with the exact weight clembench's rejection sampling gives it.

    The reference draws k in 3..5 and N in 5..8 uniformly, starts each type at 1 and adds the other N - k items to
    uniformly random types (a multinomial), then draws all values uniformly from 0..10 and keeps the instance only
    if the constraints hold. Accepting with probability P(valid values | counts) reweights the counts; conditioned
    on the counts, the accepted value pair is uniform over the valid pairs. Sampling from these weights gives the
    same distribution in one draw instead of thousands of rejections.
    """
    options = []
    for k in range(N_TYPES_RANGE[0], N_TYPES_RANGE[1] + 1):
        grid = np.indices((MAX_VALUE + 1,) * k).reshape(k, -1).T
        for n_items in range(max(k, N_ITEMS_RANGE[0]), N_ITEMS_RANGE[1] + 1):
            for counts in _compositions(n_items, k):
                extra = [c - 1 for c in counts]
                p_counts = comb_multinomial(extra) / k ** (n_items - k)
                solutions = grid[grid @ np.asarray(counts) == TOTAL_POINTS]
                n_valid = _valid_pair_mask(solutions).sum()
                p_accept = n_valid / (MAX_VALUE + 1) ** (2 * k)
                n_k = N_TYPES_RANGE[1] - N_TYPES_RANGE[0] + 1
                n_n = N_ITEMS_RANGE[1] - N_ITEMS_RANGE[0] + 1
                options.append(_CountsOption(counts, p_counts * p_accept / (n_k * n_n), solutions))
    return tuple(options)


def comb_multinomial(parts: Sequence[int]) -> int:
    """The multinomial coefficient (Σ parts)! / Π parts!.

    >>> comb_multinomial([2, 0, 1])
    3
    """
    total, result = 0, 1
    for part in parts:
        total += part
        result *= comb(total, part)
    return result


def _compositions(total: int, k: int) -> list[tuple[int, ...]]:
    if k == 1:
        return [(total,)]
    return [(first, *rest) for first in range(1, total - k + 2) for rest in _compositions(total - first, k - 1)]


def _valid_pair_mask(solutions: np.ndarray) -> np.ndarray:
    """mask[i, j]: values i for A and j for B leave no type worthless to both and some type valued by both."""
    zero = (solutions == 0).astype(np.int32)
    positive = 1 - zero
    return ((zero @ zero.T) == 0) & ((positive @ positive.T) > 0)


def generate_instance(seed: int, *, n_types: int | None = None) -> Instance:
    """A random instance, the same for a given seed (and for every language: item words are looked up later).

    3-5 item types out of the 100 item words, 5-8 items in all (each type at least once), integer values 0..10
    with Σ count × value = 10 for each player, no type worth 0 to both, some type worth more than 0 to both.
    The distribution equals clembench's rejection sampler (which favours 3 types and 5-6 items);
    ``n_types`` conditions it on the number of types.

    >>> instance = generate_instance(0)
    >>> satisfies_constraints(instance), instance == generate_instance(0)
    (True, True)
    >>> len(generate_instance(0, n_types=5).item_types)
    5
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, not {seed!r}.")
    if n_types is not None and not (N_TYPES_RANGE[0] <= n_types <= N_TYPES_RANGE[1]):
        raise ValueError(f"n_types must be None or between {N_TYPES_RANGE[0]} and {N_TYPES_RANGE[1]}, not {n_types!r}.")
    rng = np.random.default_rng(int(seed))
    options = [o for o in _counts_options() if n_types is None or len(o.counts) == n_types]
    weights = np.array([o.weight for o in options])
    option = options[rng.choice(len(options), p=weights / weights.sum())]
    n_solutions = len(option.solutions)
    while True:  # uniform over valid pairs: draw a uniform pair and keep it if valid (most pairs are)
        i, j = rng.integers(n_solutions, size=2)
        values_a, values_b = option.solutions[i], option.solutions[j]
        if not ((values_a == 0) & (values_b == 0)).any() and ((values_a > 0) & (values_b > 0)).any():
            break
    ids = item_ids()
    chosen = rng.choice(len(ids), size=len(option.counts), replace=False)
    return Instance(
        tuple(ids[i] for i in chosen),
        option.counts,
        tuple(int(v) for v in values_a),
        tuple(int(v) for v in values_b),
        seed=int(seed),
    )


def generate_instance_naive(seed: int) -> Instance:
    """The reference's rejection sampler, step by step (test oracle for ``generate_instance``; ~0.1 s a call).

    Draw k types, N items (each type once, the rest at random), values uniform 0..10 for both players; start
    again until the constraints hold. B's values are drawn only when A's already sum to 10 (same distribution).
    """
    rng = random.Random(seed)
    while True:
        k = rng.randint(*N_TYPES_RANGE)
        n_items = rng.randint(*N_ITEMS_RANGE)
        counts = [1] * k
        for _ in range(n_items - k):
            counts[rng.randrange(k)] += 1
        values_a = [rng.randint(0, MAX_VALUE) for _ in range(k)]
        if sum(c * v for c, v in zip(counts, values_a, strict=True)) != TOTAL_POINTS:
            continue
        values_b = [rng.randint(0, MAX_VALUE) for _ in range(k)]
        instance = Instance(rng.sample(item_ids(), k), counts, values_a, values_b, seed=seed)
        if satisfies_constraints(instance):
            return instance


# ---------------------------------------------------------------------------------------------------------------
# Rendering


def format_items(instance: Instance, language: str) -> str:
    """The item set as ``"<count> <word>"`` pairs, plural unless the count is 1.

    >>> format_items(Instance(("egg", "knife"), (1, 2), (4, 3), (10, 0)), "en")
    '1 egg, 2 knives'
    """
    singulars, plurals = instance.singular(language), instance.plural(language)
    return ", ".join(f"{count} {singulars[i] if count == 1 else plurals[i]}" for i, count in enumerate(instance.counts))


def format_values(values: Sequence[int], instance: Instance, language: str) -> str:
    """A value function as ``"<singular word>: <value>"`` pairs.

    >>> format_values((4, 3), Instance(("egg", "knife"), (1, 2), (4, 3), (10, 0)), "de")
    'Ei: 4, Messer: 3'
    """
    if len(values) != len(instance.item_types):
        raise ValueError(f"values must have one entry per item type ({len(instance.item_types)}), got {len(values)}.")
    return ", ".join(f"{word}: {value}" for word, value in zip(instance.singular(language), values, strict=True))


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


# ---------------------------------------------------------------------------------------------------------------
# Parsing


@cache
def _stemmer(language: str):
    return snowballstemmer.stemmer(_STEMMER_NAME[language])


def _stem(word: str, language: str) -> str:
    return _stemmer(language).stemWord(word.casefold())


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
    stem = _stem(key, language)
    for words in word_lists:
        matches = [i for i, word in enumerate(words) if _stem(word, language) == stem]
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
    backend.dond.rules.OverAskError: The proposal asks for 3 coltelli, but there are only 2.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, not {type(text).__name__}.")
    _check_language(language)
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


def must_propose(messages_sent: int, *, other_has_proposed: bool, max_messages: int) -> bool:
    """Whether a player's next reply must be a proposal: the other proposed, or their messages are used up.

    >>> must_propose(5, other_has_proposed=False, max_messages=5), must_propose(0, other_has_proposed=True, max_messages=5)
    (True, True)
    """
    if max_messages < 0 or messages_sent < 0:
        raise ValueError("messages_sent and max_messages must be non-negative.")
    return other_has_proposed or messages_sent >= max_messages


# ---------------------------------------------------------------------------------------------------------------
# Rules and payoffs


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
    backend.dond.rules.ProposalFormatError: The count for 'knife' must be a whole number from 0 to 2, not -1.
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


def is_complementary(proposal_a: Sequence[int], proposal_b: Sequence[int], counts: Sequence[int]) -> bool:
    """Whether two proposals fit together: A's count + B's count <= available for every type (leftovers allowed).

    >>> is_complementary((0, 2), (1, 0), (1, 2)), is_complementary((1, 2), (1, 0), (1, 2))
    (True, False)
    """
    a, b, c = (np.asarray(x) for x in (proposal_a, proposal_b, counts))
    if not a.shape == b.shape == c.shape:
        raise ValueError("proposal_a, proposal_b and counts must have the same length.")
    return bool(((a + b) <= c).all())


def points(proposal: Sequence[int], values: Sequence[int]) -> int:
    """A player's points for the items they take: Σ count × own value.

    >>> points((0, 2), (4, 3))
    6
    """
    a, v = np.asarray(proposal), np.asarray(values)
    if a.shape != v.shape:
        raise ValueError("proposal and values must have the same length.")
    return int(a @ v)


def goal_score(mode: str, own_points: float, other_points: float) -> float:
    """What the mode asks a player to maximise: own (semi), sum of both (coop), own minus other (comp).

    >>> goal_score("semi", 6, 4), goal_score("coop", 6, 4), goal_score("comp", 3, 7)
    (6, 10, -4)
    """
    _check_mode(mode)
    return {"semi": own_points, "coop": own_points + other_points, "comp": own_points - other_points}[mode]


def bonus_points(mode: str, own_points: float, other_points: float) -> float:
    """A participant's bonus in points: the mode's objective, clamped at 0.

    >>> bonus_points("comp", 3, 7), bonus_points("coop", 6, 4)
    (0, 10)
    """
    return max(0, goal_score(mode, own_points, other_points))
