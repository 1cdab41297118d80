"""oTree's start-up checks (run by ``otree devserver`` before it serves) print no warning for our apps: a warning such
as "'validate_session_config' is defined but not used" looks like breakage to a new user."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_otree_start_up_checks_find_no_error_and_no_warning():
    code = "from otree.checks import get_checks_output; errors, warnings = get_checks_output(); print(errors, warnings)"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[] []", result.stdout
