"""Reading JSON out of a model's reply: models wrap it in code fences, put text around it, or write it twice."""

from __future__ import annotations

import json
from collections.abc import Sequence


class RepeatedKeyError(ValueError):
    """A JSON object that gives a key twice (in any letter case): which value the model meant is unknowable."""


def _refuse_repeated_keys(pairs: list[tuple[str, object]]) -> dict:
    keys = [str(key).strip().lower() for key, _ in pairs]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise RepeatedKeyError(f"the JSON object gives {', '.join(repeated)} more than once")
    return dict(pairs)


def json_objects(reply: str) -> list[dict]:
    """Every top-level JSON object in ``reply``, in order; text, code fences and other values around them allowed.
    An object (or one nested in it) that gives a key twice, in any letter case, raises ``RepeatedKeyError``.

    >>> json_objects('Sure! ```json\\n{"answer": "B"}\\n``` or {"answer": "C"} [1]')
    [{'answer': 'B'}, {'answer': 'C'}]
    >>> json_objects('{"answer": "A", "Answer": "B"}')
    Traceback (most recent call last):
    ...
    backend.core.llm.replies.RepeatedKeyError: the JSON object gives answer more than once
    """
    decoder = json.JSONDecoder(object_pairs_hook=_refuse_repeated_keys)
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


def _bare(text: str) -> str:
    return " ".join(str(text).strip().strip("<>\"'`[]().").split()).casefold()


def echoed_placeholder(text: str, placeholders: Sequence[str]) -> str:
    """The placeholder of the prompt's answer form that ``text`` merely repeats (``""`` when it says something of its
    own): a small model often copies ``"<your reasoning>"`` or ``"text or empty"`` from the form it was shown.
    Compared without surrounding brackets, quotes and spaces, in any letter case.

    >>> echoed_placeholder(" <Your reasoning> ", ["<your reasoning>"]), echoed_placeholder("TEXT or empty.", ["text or empty"])
    ('<your reasoning>', 'text or empty')
    >>> echoed_placeholder("The text is empty of reasons.", ["text or empty"])
    ''
    """
    said = _bare(text)
    return next((placeholder for placeholder in placeholders if said and said == _bare(placeholder)), "")
