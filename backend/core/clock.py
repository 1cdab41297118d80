"""The product's wall clock, and the one way tests move it forward.

Every timer that judges a person (a game's time limit, a partner gone or silent on their turn, a reservation, a
page's countdown in oTree) reads `now()` (epoch seconds). In a test server the environment variable
``LAB_TEST_CLOCK_FILE`` names a file holding a number of seconds, the clock's advance; `now()` is then
``time.time()`` plus that number, read at every call, so a test moves the server's time forward by writing the file
(`advance`), and no test waits for a real clock to run out. Without the variable (always in production:
``settings.py`` refuses to start with it) `now()` is ``time.time()``.

Ranges: the advance is any finite number of seconds (a missing, empty or unreadable file counts as 0).

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "clock")
>>> before = now(path)
>>> advance(300, path)
300.0
>>> 299 < now(path) - before < 301
True
>>> advance(0.5, path), offset_s(os.path.join(path, "missing"))
(300.5, 0.0)
"""

from __future__ import annotations

import math
import os
import time as _time
from pathlib import Path

CLOCK_FILE_VARIABLE = "LAB_TEST_CLOCK_FILE"


def clock_file() -> str | None:
    """The test clock's file (``LAB_TEST_CLOCK_FILE``), or None: the real clock."""
    return os.environ.get(CLOCK_FILE_VARIABLE) or None


def offset_s(path: str | None = None) -> float:
    """Seconds the test clock is ahead of the real one (0 without a clock file, or when it cannot be read)."""
    path = path or clock_file()
    if not path:
        return 0.0
    try:
        value = float(Path(path).read_text(encoding="utf-8").strip() or 0)
    except (OSError, ValueError):
        return 0.0
    return value if math.isfinite(value) else 0.0


def now(path: str | None = None) -> float:
    """The current time in epoch seconds: ``time.time()`` plus the test clock's advance (`offset_s`)."""
    return _time.time() + offset_s(path)


def advance(seconds: float, path: str | None = None) -> float:
    """Move the test clock at ``path`` (default ``LAB_TEST_CLOCK_FILE``) forward by ``seconds``; its new advance."""
    path = path or clock_file()
    if not path:
        raise RuntimeError(f"No test clock: {CLOCK_FILE_VARIABLE} is not set.")
    total = offset_s(path) + float(seconds)
    Path(path).write_text(repr(total), encoding="utf-8")
    return total


class TestTime:
    """The ``time`` module as oTree's page views see it in a test server: ``time()`` is `now`, the rest is Python's
    (``lab_server`` puts it in place of ``otree.views.abstract.time`` only when a test clock is set)."""

    __test__ = False  # not a pytest test class

    @staticmethod
    def time() -> float:
        return now()

    def __getattr__(self, name: str):
        return getattr(_time, name)
