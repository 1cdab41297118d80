"""Driving a running study from outside, as the tests and the benchmarks both do: real oTree servers and bots
(``servers``), participants over plain HTTP (``participants``), DoND players on the live socket (``dond_live_client``,
``dond_fault_run``). It imports the product (``backend``) and is imported only by ``tests`` and ``bench``
(``tests/backend/test_layers.py``)."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
