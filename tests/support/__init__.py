"""What only the tests use: tiers, protections, page checks (accessibility, languages, screenshots), scripted
players; what the benchmarks use too (servers, participants, the DoND live client) lives in ``harness``."""

from __future__ import annotations


def examples(count: int) -> int:
    """A property test's ``max_examples``: ``count`` under Hypothesis's "full" profile (CI, the README's command),
    a tenth of it under "fast" (``HYPOTHESIS_PROFILE=fast``, the fast tier); profiles in ``tests/conftest.py``."""
    from hypothesis import settings

    return max(1, count * settings.default.max_examples // 100)
