"""The project's session configs, as settings.py defines them (read without importing oTree)."""

from __future__ import annotations

import runpy

from harness import PROJECT_ROOT

SESSION_CONFIGS = runpy.run_path(str(PROJECT_ROOT / "settings.py"))["SESSION_CONFIGS"]
