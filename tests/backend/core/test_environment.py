"""The environment variables as one model (backend/core/environment.py): read once, typed, a blank value unset, and a
value the server cannot use refused with a sentence naming the variable, before anything runs with it."""

from __future__ import annotations

import runpy

import pytest

from backend.core.environment import VARIABLES, Environment, environment, variable
from harness import PROJECT_ROOT


def test_the_defaults_are_the_reference_pages():
    defaults = environment({})
    assert defaults == Environment()
    assert defaults.LAB_SOCKETS_PER_PARTICIPANT == float(VARIABLES["LAB_SOCKETS_PER_PARTICIPANT"].default) == 6
    assert (defaults.OTREE_PRODUCTION, defaults.LAB_NO_TLS, defaults.LLM_MODEL) == (False, False, "scripted")
    assert defaults.LLM_MAX_CONCURRENCY == 32 and defaults.SECRET_KEY is None


def test_values_are_typed_and_a_blank_one_is_unset():
    read = environment(
        {"LAB_MAX_FORM_BYTES": " 1024 ", "LAB_NO_TLS": "yes", "OTREE_PRODUCTION": "1", "SECRET_KEY": " "}
    )
    assert (read.LAB_MAX_FORM_BYTES, read.LAB_NO_TLS, read.OTREE_PRODUCTION) == (1024.0, True, True)
    assert read.SECRET_KEY is None  # blank: unset, so production refuses it as missing
    assert environment({"OTREE_PRODUCTION": "0"}).OTREE_PRODUCTION is False  # oTree's own reading: 0 is off


@pytest.mark.parametrize(
    ("name", "raw", "words"),
    [
        ("LAB_LOGIN_LOCKOUT_S", "0", "a positive number"),
        ("LAB_LOGIN_LOCKOUT_S", "ten", "a positive number"),
        ("LAB_MAX_FORM_BYTES", "inf", "a positive number"),
        ("LAB_INACTIVE_AFTER_S", "nan", "a finite number of seconds"),
        ("LLM_MAX_CONCURRENCY", "2.5", "a whole number of at least 1"),
    ],
)
def test_an_unusable_value_is_refused_in_a_sentence_naming_the_variable(name, raw, words):
    with pytest.raises(ValueError) as refused:
        variable(name, {name: raw})
    assert str(refused.value) == f"The environment variable {name} must be {words}, not {raw!r}."


def test_one_variable_is_read_without_the_others():
    assert variable("LAB_NO_TLS", {"LAB_NO_TLS": "1", "LAB_MAX_FORM_BYTES": "-1"}) is True


def test_the_server_does_not_start_with_an_unusable_variable(monkeypatch):
    monkeypatch.setenv("LAB_PAGE_REQUESTS_PER_MINUTE", "-5")
    with pytest.raises(SystemExit, match="The environment variable LAB_PAGE_REQUESTS_PER_MINUTE must be a positive"):
        runpy.run_path(str(PROJECT_ROOT / "settings.py"))


def test_production_still_refuses_a_test_clock_and_missing_secrets(monkeypatch):
    monkeypatch.setenv("OTREE_PRODUCTION", "1")
    monkeypatch.setenv("OTREE_ADMIN_PASSWORD", "pw")
    monkeypatch.setenv("SECRET_KEY", "")
    with pytest.raises(SystemExit, match=r"the environment variable\(s\) SECRET_KEY must be set"):
        runpy.run_path(str(PROJECT_ROOT / "settings.py"))
    monkeypatch.setenv("SECRET_KEY", "k" * 32)
    monkeypatch.setenv("LAB_TEST_CLOCK_FILE", "/tmp/clock")
    with pytest.raises(SystemExit, match="LAB_TEST_CLOCK_FILE is set"):
        runpy.run_path(str(PROJECT_ROOT / "settings.py"))
