"""Breaking one field of a valid JSON document, for the tests of the episode and rubric readers."""

from __future__ import annotations

import copy
from typing import Any


def edited(data: Any, path: list, value: Any) -> Any:
    """A deep copy of ``data`` with the field at ``path`` set to ``value``, or removed when ``value`` is KeyError."""
    changed = copy.deepcopy(data)
    target = changed
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return changed
