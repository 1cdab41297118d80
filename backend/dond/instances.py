"""DoND instances: what one game is (item types, counts, both players' values), how one is drawn, and how a
researcher's file of instances is read.

- ``Instance``: the items and values, and their words in each language (``backend.dond.items``);
- ``satisfies_constraints``: the generator's rules (3-5 types, 5-8 items, Σ count × value = 10 for each player, ...);
- ``generate_instance``: a seeded draw from exactly the distribution of clembench's rejection sampler;
- ``instances_from_data`` / ``entry_lines``: a researcher's instances file, every entry checked before a session exists;
- ``format_items`` / ``format_values``: the item set and a value function as text for prompts and pages.

>>> instance = generate_instance(7)
>>> satisfies_constraints(instance), sum(c * v for c, v in zip(instance.counts, instance.values_a))
(True, 10)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from math import comb
from typing import Any

import numpy as np

from backend.dond.items import MAX_WORD_CHARS, check_item_word, item_ids, item_word
from backend.dond.rules import (
    LANGUAGES,
    MAX_VALUE,
    N_ITEMS_RANGE,
    N_TYPES_RANGE,
    ROLES,
    TOTAL_POINTS,
    check_language,
)


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
        check_language(language)
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
        and values_compatible(a, b)
    )


def values_compatible(values_a: Sequence[int], values_b: Sequence[int]) -> bool:
    """Whether two value functions make a game: no item type worth 0 to both, some type worth more than 0 to both.

    >>> values_compatible((0, 0, 5), (1, 3, 2)), values_compatible((0, 0, 5), (2, 4, 0))
    (True, False)
    """
    a, b = np.asarray(values_a), np.asarray(values_b)
    return bool(not ((a == 0) & (b == 0)).any() and ((a > 0) & (b > 0)).any())


INSTANCE_KEYS = ("item_types", "counts", "values_a", "values_b", "words", "seed")


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
        check_language(language)
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
        unknown_ids = [item for item in types if item not in item_ids()]
        if unknown_ids:
            raise ValueError(
                f"{where}, item_types: {unknown_ids[0]!r} is not one of the {len(item_ids())} item ids, and the "
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
class CountsOption:
    """One counts vector the generator can draw, with its weight and every value function that fits it."""

    counts: tuple[int, ...]
    weight: float  # probability that the reference's rejection sampler ends with these counts (unnormalised)
    solutions: np.ndarray  # every value vector v in 0..10 with counts @ v == 10, shape (n, k)


@cache
def counts_options() -> tuple[CountsOption, ...]:
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
                n_valid = valid_pair_mask(solutions).sum()
                p_accept = n_valid / (MAX_VALUE + 1) ** (2 * k)
                n_k = N_TYPES_RANGE[1] - N_TYPES_RANGE[0] + 1
                n_n = N_ITEMS_RANGE[1] - N_ITEMS_RANGE[0] + 1
                options.append(CountsOption(counts, p_counts * p_accept / (n_k * n_n), solutions))
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


def valid_pair_mask(solutions: np.ndarray) -> np.ndarray:
    """mask[i, j] = ``values_compatible(solutions[i], solutions[j])`` for every pair at once (matrix form).

    >>> valid_pair_mask(np.array([[0, 0, 5], [1, 3, 2], [2, 4, 0]])).astype(int).tolist()
    [[0, 1, 0], [1, 1, 1], [0, 1, 0]]
    """
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
    options = [o for o in counts_options() if n_types is None or len(o.counts) == n_types]
    weights = np.array([o.weight for o in options])
    option = options[rng.choice(len(options), p=weights / weights.sum())]
    n_solutions = len(option.solutions)
    while True:  # uniform over valid pairs: draw a uniform pair and keep it if valid (most pairs are)
        i, j = rng.integers(n_solutions, size=2)
        values_a, values_b = option.solutions[i], option.solutions[j]
        if values_compatible(values_a, values_b):
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
