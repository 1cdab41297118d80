"""dond bots: every mode × language with the scripted agent, and the real openai client against the local
OpenAI-compatible test server (a normal game, a malformed proposal that is re-prompted, and one that aborts)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from backend.dond import rules as dond
from harness.servers import OTREE, base_env, run_bots, scratch_project

pytestmark = pytest.mark.bots

MATRIX_SETTINGS = """
import runpy as _runpy
from pathlib import Path as _Path

globals().update({k: v for k, v in _runpy.run_path(str(_Path(__file__).resolve().parent / "settings_project.py")).items()
                  if not k.startswith("__")})
_base = next(config for config in SESSION_CONFIGS if config["name"] == "dond_llm")
SESSION_CONFIGS = [
    dict(_base, name=f"dond_{mode}_{language}", mode=mode, language=language, num_demo_participants=4)
    for mode in %r for language in %r
]
"""


def test_scripted_games_complete_in_every_mode_and_language():
    folder = scratch_project("otree-dond-matrix-")
    try:
        (folder / "settings_project.py").symlink_to((folder / "settings.py").resolve())
        (folder / "settings.py").unlink()
        (folder / "settings.py").write_text(MATRIX_SETTINGS % (dond.MODES, dond.LANGUAGES))
        result = subprocess.run(
            [OTREE, "test"], cwd=folder, env=base_env(LLM_MODEL="scripted"), capture_output=True, text=True, timeout=600
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert output.count("Bots completed session") == len(dond.MODES) * len(dond.LANGUAGES), output[-4000:]


def _responder(request):
    """A model that chats until it is asked for its proposal, then takes nothing (always complementary)."""
    messages = request["messages"]
    if len(messages) > 1 and "secret proposal" in messages[-1]["content"]:
        return "Agreed. [Proposal:]"
    return "Hello! I mostly care about fairness. What do you need?"


def _run(llm_server, *replies, expect, violations=None, participants=1):
    llm_server.responder = _responder
    llm_server.script(*replies)
    env = base_env(
        LLM_MODEL="test-model",
        OPENAI_BASE_URL=llm_server.base_url,
        OPENAI_API_KEY="sk-test",
        DOND_BOT_EXPECT=expect,
        DOND_BOT_EXPECT_VIOLATIONS="" if violations is None else str(violations),
    )
    result = run_bots("dond_llm", env=env, participants=participants)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "Bots completed session" in output
    return llm_server.requests


def test_games_against_the_test_server_through_the_openai_client(llm_server):
    requests = _run(llm_server, expect="success", violations=0, participants=4)
    assert requests and all(r["model"] == "test-model" and r["stream"] for r in requests)
    prompts = [r["messages"][0]["content"] for r in requests]
    assert all("[Proposal: <number> <item>" in prompt for prompt in prompts)


def test_malformed_proposal_is_reprompted_then_the_game_goes_on(llm_server):
    requests = _run(llm_server, "[Offer: everything for me]", expect="success", violations=1)
    reprompted = requests[1]["messages"]
    assert reprompted[-2] == {"role": "assistant", "content": "[Offer: everything for me]"}
    assert "Proposal:" in reprompted[-1]["content"] and "could not be accepted" in reprompted[-1]["content"]


def test_repeated_violations_abort_the_game(llm_server):
    bad = "[Offer: everything for me]"
    requests = _run(llm_server, bad, bad, bad, expect="aborted", violations=3)
    assert len(requests) == 3  # the default llm_reprompts=2: two re-prompts, then the game ends


TREATMENT_SETTINGS = """
import runpy as _runpy
from pathlib import Path as _Path

globals().update({k: v for k, v in _runpy.run_path(str(_Path(__file__).resolve().parent / "settings_project.py")).items()
                  if not k.startswith("__")})
_base = next(config for config in SESSION_CONFIGS if config["name"] == "dond_llm")
SESSION_CONFIGS = [
    dict(_base, name=f"dond_{visibility}", value_visibility=visibility, agent_description="expert",
         disclose_description=True, opponent_intro="neutral", model_failure_pay="zero", num_demo_participants=2)
    for visibility in %r
]
"""


def test_games_complete_under_every_visibility_condition_and_only_the_model_that_sees_gets_the_table(llm_server):
    from backend.dond.treatments import VISIBILITIES, sees_other_values

    llm_server.responder = _responder
    folder = scratch_project("otree-dond-treatments-")
    try:
        (folder / "settings_project.py").symlink_to((folder / "settings.py").resolve())
        (folder / "settings.py").unlink()
        (folder / "settings.py").write_text(TREATMENT_SETTINGS % (VISIBILITIES,))
        env = base_env(LLM_MODEL="test-model", OPENAI_BASE_URL=llm_server.base_url, OPENAI_API_KEY="sk-test")
        result = subprocess.run([OTREE, "test"], cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert output.count("Bots completed session") == len(VISIBILITIES), output[-4000:]
    firsts = [r["messages"][0]["content"] for r in llm_server.requests]
    assert all("You are highly experienced at negotiating" in first for first in firsts)
    seen = {"neither of you sees": False, "You can also see their list": True, "They can see your list": False}
    seen["Each of you sees both lists"] = True
    for rule, shows_table in seen.items():
        prompts = [first for first in firsts if rule in first]
        assert prompts, rule  # every condition was played
        assert all(("worth to the other player" in first) is shows_table for first in prompts), rule
    assert [sees_other_values(v, "llm") for v in VISIBILITIES] == [False, True, False, True]
