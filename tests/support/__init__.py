"""What the tests and benchmarks share: paths, servers, simulated participants, scripted players."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


def examples(count: int) -> int:
    """A property test's ``max_examples``: ``count`` under Hypothesis's "full" profile (CI, the README's command),
    a tenth of it under "fast" (``HYPOTHESIS_PROFILE=fast``, the fast tier); profiles in ``tests/conftest.py``."""
    from hypothesis import settings

    return max(1, count * settings.default.max_examples // 100)
