"""Report figures as strict JSON: NaN becomes ``null`` and numpy numbers plain ones (``json.dumps(allow_nan=False)``
accepts the result)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def jsonable(value: Any) -> Any:
    """``value`` with NaN (float or numpy) as None, numpy integers and floats as int and float, recursing into dicts,
    lists and tuples (a tuple becomes a list); everything else unchanged.

    >>> jsonable({"mean": float("nan"), "n": np.int64(3), "ci": (np.float64(0.5), 1.0), "label": "a"})
    {'mean': None, 'n': 3, 'ci': [0.5, 1.0], 'label': 'a'}
    """
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if isinstance(value, float | np.floating):
        return None if math.isnan(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value
