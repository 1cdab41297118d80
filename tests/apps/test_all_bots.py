"""oTree bots for every session config, through `otree test` (each app's tests.py drives its pages)."""

from __future__ import annotations

import pytest

from harness.servers import run_bots
from tests.support.session_configs import SESSION_CONFIGS


@pytest.mark.bots
@pytest.mark.parametrize("config_name", [config["name"] for config in SESSION_CONFIGS])
def test_bots_complete_every_session_config(config_name):
    result = run_bots(config_name)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "Bots completed session" in output
