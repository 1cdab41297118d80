"""oTree's start-up checks (run by ``otree devserver`` before it serves) print no warning for our apps: a warning such
as "'validate_session_config' is defined but not used" looks like breakage to a new user."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_otree_start_up_checks_find_no_error_and_no_warning():
    code = "from otree.checks import get_checks_output; errors, warnings = get_checks_output(); print(errors, warnings)"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[] []", result.stdout


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"LLM_MODEL": "scripted"}, "played by the offline scripted agent"),
        (
            {"LLM_MODEL": "SmolLM2-test", "OPENAI_BASE_URL": "http://user:s3cret@127.0.0.1:9/v1"},
            "played by SmolLM2-test at http://127.0.0.1:9.",
        ),
    ],
)
def test_a_started_server_prints_no_warning_and_its_demo_page_says_which_model_plays(env, said):
    import requests

    from harness.servers import base_env, running_server

    server_env = base_env(**env)
    if "OPENAI_BASE_URL" not in env:
        server_env.pop("OPENAI_BASE_URL", None)
    with running_server(env=server_env) as server:
        page = requests.get(server.url + "/demo", timeout=30).text
        log = server.log()
    assert said in page
    assert "s3cret" not in page
    assert "defined but not used" not in log
