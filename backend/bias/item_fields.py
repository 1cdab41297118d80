"""The field readers of an item file (``backend.bias.items``): plain text, numbers, option lists and format texts.

Each reader takes the raw mapping of one item (the parsed JSON), the key and ``where`` (file, item index and id, for
messages), and returns the checked value or raises ``ItemFileError`` (a ``ValueError``) naming the file, the item, the
field and the value:

>>> text_field({"scenario": "  A bakery.  "}, "scenario", "mine.json: items[0] (a1)")
'A bakery.'
>>> number_field({"anchor": True}, "anchor", "mine.json: items[0] (a1)")
Traceback (most recent call last):
...
backend.bias.item_fields.ItemFileError: mine.json: items[0] (a1).anchor: must be a finite number, got True.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any

# Control characters (C0, DEL, C1) and the bidirectional overrides that make text display differently than it reads.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile(r"[\t\n]")
MAX_TEXT_CHARS = 2000  # a scenario, sentence, question, statement or argument
MAX_LABEL_CHARS = 200  # an option as shown, a format, the title
MAX_MAGNITUDE = 1e12  # numbers in an item file (options, anchor, amount)
MAX_OPTIONS = 20  # models answer with the letters A, B, ...
MAX_FORMAT_WIDTH = 100  # a width or precision in a format such as {value:>8.2f}


class ItemFileError(ValueError):
    """An item file or mapping that does not follow the documented layout."""


def is_finite_number(value: Any) -> bool:
    """A JSON number (not a bool) that is finite: the one test of every number an item file or a respondent gives.

    >>> [is_finite_number(v) for v in (3, 2.5, True, float("nan"), "4")]
    [True, True, False, False, False]
    """
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def plain_text(value: str, field: str, *, max_chars: int, line_breaks: bool) -> str:
    """``value`` when it is plain text of at most ``max_chars`` characters (tabs and newlines if ``line_breaks``)."""
    if len(value) > max_chars:
        raise ItemFileError(f"{field}: is {len(value):,} characters long; at most {max_chars:,} are allowed.")
    bad = _CONTROL.search(_LINE_BREAKS.sub(" ", value) if line_breaks else value)
    if bad:
        raise ItemFileError(
            f"{field}: holds the control character U+{ord(bad.group()):04X} at character {bad.start() + 1}; "
            "item texts must be plain text."
        )
    return value


def text_field(
    raw: Mapping, key: str, where: str, *, default: str | None = None, max_chars: int = MAX_TEXT_CHARS
) -> str:
    value = raw.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise ItemFileError(f"{where}.{key}: must be a non-empty text.")
    return plain_text(value.strip(), f"{where}.{key}", max_chars=max_chars, line_breaks=True)


def number_field(
    raw: Mapping, key: str, where: str, *, positive: bool = False, maximum: float = MAX_MAGNITUDE
) -> float:
    value = raw.get(key)
    if not is_finite_number(value):
        raise ItemFileError(f"{where}.{key}: must be a finite number, got {value!r}.")
    if positive and value <= 0:
        raise ItemFileError(f"{where}.{key}: must be positive, got {value!r}.")
    if abs(value) > maximum:
        raise ItemFileError(f"{where}.{key}: must not exceed {maximum:,g} in size, got {value!r}.")
    return value


def numeric_options(raw: Mapping, where: str) -> tuple:
    options = raw.get("options")
    if not isinstance(options, list) or len(options) < 2:
        raise ItemFileError(f"{where}.options: must list at least two numbers.")
    if len(options) > MAX_OPTIONS:
        raise ItemFileError(f"{where}.options: lists {len(options)} numbers; at most {MAX_OPTIONS} are allowed.")
    for value in options:
        if not is_finite_number(value):
            raise ItemFileError(f"{where}.options: must hold finite numbers only, got {value!r}.")
        if abs(value) > MAX_MAGNITUDE:
            raise ItemFileError(f"{where}.options: {value!r} is too large; at most {MAX_MAGNITUDE:,g} in size.")
    if len(set(options)) != len(options):
        raise ItemFileError(f"{where}.options: must not repeat a value, got {options}.")
    return tuple(options)


def template_field(
    raw: Mapping, key: str, where: str, *, default: str, placeholders: Sequence[str], max_chars: int = MAX_LABEL_CHARS
) -> str:
    """A format text (``option_format``, ``money_format``, the loss question) checked for its shape alone.

    Every placeholder must be one of ``placeholders`` (all of them present), without attribute or index access, and
    widths and precisions stay small (``{value:999999999}`` would build a gigabyte label).
    """
    field = f"{where}.{key}"
    template = raw.get(key, default)
    if not isinstance(template, str) or not template.strip():
        raise ItemFileError(f"{field}: must be a non-empty text, got {template!r}.")
    plain_text(template, field, max_chars=max_chars, line_breaks=key == "question")
    allowed = " and ".join("{" + name + "}" for name in placeholders)
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as error:
        raise ItemFileError(
            f"{field}: {template!r} is not a valid format ({error}). Only {allowed} may stand in braces; "
            "write a brace that should be shown as {{ or }}."
        ) from None
    used = set()
    for _, name, spec, _ in parts:
        if name is None:
            continue
        if name not in placeholders:
            raise ItemFileError(
                f"{field}: {template!r} uses {{{name}}}, but only {allowed} may stand in braces here; "
                "write a brace that should be shown as {{ or }}."
            )
        if "{" in spec:
            raise ItemFileError(f"{field}: {template!r} has a placeholder inside a format; write a fixed format.")
        sizes = [int(digits) for digits in re.findall(r"\d+", spec)]
        if sizes and max(sizes) > MAX_FORMAT_WIDTH:
            raise ItemFileError(
                f"{field}: {template!r} asks for a width or precision of {max(sizes)}; at most {MAX_FORMAT_WIDTH}."
            )
        used.add(name)
    for name in placeholders:
        if name not in used:
            raise ItemFileError(f"{field}: must contain {{{name}}}, got {template!r}.")
    return template


def filled(template: str, field: str, what: str, hint: str, **values: Any) -> str:
    """``template`` with ``values`` filled in, or a plain message naming the field, the value and what to write."""
    try:
        shown = template.format(**values)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError) as error:
        raise ItemFileError(f"{field}: {template!r} cannot show {what} ({error}). {hint}") from None
    if not shown.strip():
        raise ItemFileError(f"{field}: {template!r} shows {what} as an empty text.")
    return plain_text(shown, f"{field} (showing {what})", max_chars=MAX_TEXT_CHARS, line_breaks=True)
