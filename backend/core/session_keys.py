"""Session-config keys checked before a session exists: one reader per kind of value, one message style.

oTree hands a session's config to every app when the session is created; a key can come from ``settings.py``, the
admin's "Create session" form (text typed into a number field) or the REST API (any JSON). Each reader returns the
value in its proper type or raises ``ValueError`` with a sentence that names the key, what it must be and what it got.
Apps call these readers from their ``validate_session_config(config)`` (see ``lab_server/creation.py``), which runs
before oTree creates a single row, so a refused key leaves nothing behind.

>>> whole_number({"max_messages": "5"}, "max_messages", minimum=1, maximum=50)
5
>>> whole_number({"max_messages": 0}, "max_messages", minimum=1, maximum=50)
Traceback (most recent call last):
...
ValueError: The session key 'max_messages' must be a whole number from 1 to 50, not 0.
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

_MISSING = object()


def _value(config: Mapping[str, Any], key: str, default: Any):
    value = config.get(key, default)
    if value is _MISSING:
        raise ValueError(f"The session key {key!r} is missing.")
    return value


def whole_number(config: Mapping[str, Any], key: str, *, minimum: int, maximum: int, default: Any = _MISSING) -> int:
    """``config[key]`` as an int in ``[minimum, maximum]``; numeric text such as ``"5"`` is accepted.

    >>> whole_number({"n": 3.0}, "n", minimum=1, maximum=9)
    3
    >>> whole_number({"n": "abc"}, "n", minimum=1, maximum=9)
    Traceback (most recent call last):
    ...
    ValueError: The session key 'n' must be a whole number from 1 to 9, not 'abc'.
    """
    value = _value(config, key, default)
    number = _as_number(value)
    if number is None or not number.is_integer() or not minimum <= number <= maximum:
        raise ValueError(f"The session key {key!r} must be a whole number from {minimum} to {maximum}, not {value!r}.")
    return int(number)


def number(config: Mapping[str, Any], key: str, *, minimum: float, maximum: float, default: Any = _MISSING) -> float:
    """``config[key]`` as a finite float in ``[minimum, maximum]``.

    >>> number({"t": "0.5"}, "t", minimum=0, maximum=2)
    0.5
    >>> number({"t": float("nan")}, "t", minimum=0, maximum=2)
    Traceback (most recent call last):
    ...
    ValueError: The session key 't' must be a number from 0 to 2, not nan.
    """
    value = _value(config, key, default)
    result = _as_number(value)
    if result is None or not minimum <= result <= maximum:
        raise ValueError(f"The session key {key!r} must be a number from {minimum} to {maximum}, not {value!r}.")
    return result


def flag(config: Mapping[str, Any], key: str, *, default: Any = _MISSING) -> bool:
    """``config[key]`` as a bool: True/False, 1/0, or the texts true/false/yes/no/1/0.

    >>> flag({"f": "yes"}, "f"), flag({"f": 0}, "f")
    (True, False)
    """
    value = _value(config, key, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    raise ValueError(f"The session key {key!r} must be true or false, not {value!r}.")


def choice(config: Mapping[str, Any], key: str, options: Iterable[str], *, default: Any = _MISSING) -> str:
    """``config[key]`` when it is one of ``options``.

    >>> choice({"language": "fr"}, "language", ("en", "de", "it"))
    Traceback (most recent call last):
    ...
    ValueError: The session key 'language' must be one of en, de, it, not 'fr'.
    """
    value = _value(config, key, default)
    options = tuple(options)
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"The session key {key!r} must be one of {', '.join(options)}, not {value!r}.")
    return value


def text(
    config: Mapping[str, Any],
    key: str,
    *,
    max_chars: int,
    pattern: str | None = None,
    describe: str = "",
    default: Any = _MISSING,
) -> str:
    """``config[key]`` as text of at most ``max_chars`` characters, matching ``pattern`` (whole text) when given.

    >>> text({"code": "C1-2"}, "code", max_chars=64, pattern=r"[A-Za-z0-9_-]*", describe="letters, digits, - or _")
    'C1-2'
    >>> text({"code": "<b>"}, "code", max_chars=64, pattern=r"[A-Za-z0-9_-]*", describe="letters, digits, - or _")
    Traceback (most recent call last):
    ...
    ValueError: The session key 'code' must be text of letters, digits, - or _ (at most 64 characters), not '<b>'.
    """
    value = _value(config, key, default)
    if value is None:
        value = ""
    ok = isinstance(value, str) and len(value) <= max_chars and (pattern is None or re.fullmatch(pattern, value))
    if not ok:
        what = f"text of {describe} " if describe else "text "
        shown = value if not isinstance(value, str) or len(value) <= 80 else value[:80] + "..."
        raise ValueError(f"The session key {key!r} must be {what}(at most {max_chars} characters), not {shown!r}.")
    return value


def read_keys(
    config: Mapping[str, Any], readers: Mapping[str, Callable[[Mapping[str, Any], str], Any]]
) -> tuple[dict[str, Any], list[str]]:
    """Every key of ``readers`` read from ``config`` with its reader ``read(config, key)``: the values read, and the
    sentence of each key at fault, in the readers' order. A caller adds problems of its own (a file the keys name),
    then ``refuse_problems``, so a researcher learns of every mistake at once.

    >>> read_keys({"a": "2", "b": "x"}, {"a": whole_number_reader(0, 9), "b": whole_number_reader(0, 9)})
    ({'a': 2}, ["The session key 'b' must be a whole number from 0 to 9, not 'x'."])
    """
    values, problems = {}, []
    for key, read in readers.items():
        try:
            values[key] = read(config, key)
        except ValueError as error:
            problems.append(str(error))
    return values, problems


def refuse_problems(problems: Sequence[str]) -> None:
    """Raise one ValueError holding every problem (sentences joined by a space); nothing when there is none."""
    if problems:
        raise ValueError(" ".join(problems))


def whole_number_reader(minimum: int, maximum: int) -> Callable[[Mapping[str, Any], str], int]:
    """``whole_number`` with its bounds fixed, as a reader for ``read_keys``."""
    return lambda config, key: whole_number(config, key, minimum=minimum, maximum=maximum)


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, numbers.Real | decimal.Decimal):  # oTree's currencies are Decimals
        return None
    value = float(value)
    return value if math.isfinite(value) else None
