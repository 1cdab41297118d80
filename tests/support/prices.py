"""A price table of known prices for the cost tests (``backend.core.llm.costs``): model ``m`` at 1 per million prompt
tokens and 4 per million completion tokens, in USD."""

from __future__ import annotations

import json
from pathlib import Path

from backend.core.llm import costs

PRICES = {"currency": "USD", "models": {"m": {"input_per_million": 1.0, "output_per_million": 4.0}}}
TABLE = costs.PriceTable.model_validate(PRICES)


def price_file(folder: Path) -> Path:
    """`PRICES` written as the JSON file a runner's ``--prices`` names."""
    path = folder / "prices.json"
    path.write_text(json.dumps(PRICES), encoding="utf-8")
    return path
