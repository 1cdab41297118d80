"""Reading JSON out of a model's reply: models wrap it in code fences, put text around it, or write it twice."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def json_objects(reply: str, *, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> list:
    """Every top-level JSON object in ``reply``, in order; text, code fences and other values around them allowed.

    ``object_pairs_hook`` is ``json``'s (for example, to refuse a key given twice by raising).

    >>> json_objects('Sure! ```json\\n{"answer": "B"}\\n``` or {"answer": "C"} [1]')
    [{'answer': 'B'}, {'answer': 'C'}]
    >>> json_objects("no object here {")
    []
    """
    decoder = json.JSONDecoder(object_pairs_hook=object_pairs_hook)
    found, position = [], 0
    while (start := reply.find("{", position)) != -1:
        try:
            value, end = decoder.raw_decode(reply, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        if isinstance(value, dict):
            found.append(value)
        position = end
    return found
