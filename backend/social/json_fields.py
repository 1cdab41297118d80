"""Reading fields out of a researcher's nested JSON (rubrics, episodes) with messages that name file and field.

Every failure is the reader's ``error`` class with the message ``<source>: <path>: <problem>``, e.g.
``bad.json: agents[1].goal: must be a non-empty string, got 3.``
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class JsonFields:
    """Checks of one source's fields, raising ``error`` (a ``ValueError`` class) with the file and field path.

    >>> fields = JsonFields("rubric.json")
    >>> fields.integer(7.0, "dimensions[0].min"), fields.field({}, "version", "", required=False, default="1")
    (7, '1')
    >>> fields.text(3, "agents[1].goal")
    Traceback (most recent call last):
    ...
    ValueError: rubric.json: agents[1].goal: must be a non-empty string, got 3.
    """

    def __init__(self, source: str, *, error: type[ValueError] = ValueError):
        self.source = source
        self.error = error

    def fail(self, path: str, problem: str) -> ValueError:
        return self.error(f"{self.source}: {path}: {problem}")

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(path, f"must be a JSON object, got {type(value).__name__}.")
        return value

    def field(self, data: Mapping[str, Any], name: str, path: str, *, required: bool = True, default: Any = None):
        if name not in data:
            if required:
                raise self.fail(f"{path}.{name}" if path else name, "is missing.")
            return default
        return data[name]

    def text(self, value: Any, path: str, *, allow_empty: bool = False) -> str:
        if not isinstance(value, str) or (not allow_empty and not value.strip()):
            raise self.fail(path, f"must be a non-empty string, got {value!r:.80}.")
        return value

    def integer(self, value: Any, path: str) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value  # a JSON integer of any size (float() of a 400-digit one would overflow)
        if not isinstance(value, float) or not value.is_integer():
            raise self.fail(path, f"must be a whole number, got {value!r:.60}.")
        return int(value)

    def items(self, value: Any, path: str, *, minimum: int = 0) -> Sequence[Any]:
        if not isinstance(value, list) or len(value) < minimum:
            raise self.fail(path, f"must be a list with at least {minimum} entries, got {value!r:.60}.")
        return value
