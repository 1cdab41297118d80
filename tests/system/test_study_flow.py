"""study_flow, the pages every app shares, without a server: its doctests, and the completion page's hooks.

The suite's doctests cover ``backend/`` only (pyproject ``testpaths``); study_flow's run here.
"""

from __future__ import annotations

import doctest
import importlib
from types import SimpleNamespace

import pytest

import study_flow

MODULES = ("texts", "entry", "config", "hooks", "pages")


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(importlib.import_module(f"study_flow.{name}"), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


class Player(SimpleNamespace):
    """A player of the app ``tests`` (study_flow names an app by its player's module, as oTree's models are the app's)."""


def app_player(round_number: int, *, last_app: bool = True, screened_out: bool = False) -> Player:
    return Player(
        round_number=round_number,
        session=SimpleNamespace(config={"app_sequence": ["tests"] if last_app else ["tests", "other"]}),
        participant=SimpleNamespace(vars={"screened_out": screened_out}),
    )


@pytest.mark.parametrize(
    ("hooks", "rounds_shown"),
    [
        (study_flow.AppHooks(num_rounds=3), [3]),
        (study_flow.AppHooks(num_rounds=3, tasks_over=lambda player: player.round_number >= 2), [2, 3]),
        (study_flow.AppHooks(), [1]),
    ],
)
def test_the_completion_page_shows_in_the_last_round_or_when_the_app_says_the_tasks_are_over(hooks, rounds_shown):
    Completion = type("Completion", (study_flow.CompletionPage,), {"hooks": hooks})
    shown = [number for number in (1, 2, 3) if Completion.is_displayed(app_player(number))]
    assert shown == rounds_shown
    assert not Completion.is_displayed(app_player(3, screened_out=True))
    assert not Completion.is_displayed(app_player(3, last_app=False))


def test_the_consent_question_in_each_language():
    for language in study_flow.SHARED_LANGUAGES:
        asked = SimpleNamespace(session=SimpleNamespace(config={"language": language}))
        (yes, agree), (no, decline) = study_flow.consent_given_choices(asked)
        assert (yes, no) == (True, False)
        assert (agree, decline) == (
            study_flow.messages(language)["consent_yes"],
            study_flow.messages(language)["consent_no"],
        )


def test_a_completion_page_without_hooks_is_refused_when_the_app_is_imported():
    with pytest.raises(
        TypeError, match=r"Completion must declare hooks = study_flow.AppHooks\(num_rounds=C.NUM_ROUNDS"
    ):

        class Completion(study_flow.CompletionPage):
            pass
