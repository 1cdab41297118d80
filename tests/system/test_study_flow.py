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
LAB_SERVER_MODULES = ("languages", "creation", "admission", "budgets", "places")


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(importlib.import_module(f"study_flow.{name}"), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


@pytest.mark.parametrize("name", LAB_SERVER_MODULES)
def test_lab_server_doctests(name):
    result = doctest.testmod(importlib.import_module(f"lab_server.{name}"), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_the_browsers_q_values_choose_the_language_of_the_pages_before_otree():
    """``Accept-Language`` is read with its q-values (werkzeug): ``en;q=0.1, de;q=0.9`` prefers German, which the
    hand-written reading (the first language named) had answered with English; a regional variant alone counts as its
    language, and a language refused with ``q=0`` is never chosen."""
    from lab_server import admission, limits

    def asking(header: str) -> dict:
        return {"headers": [(b"user-agent", b"x"), (b"accept-language", header.encode())]}

    assert limits.accepted_language(asking("en;q=0.1, de;q=0.9"), study_flow.SHARED_LANGUAGES) == "de"
    assert admission.page_language("/room/never_entered", asking("en;q=0.1, de;q=0.9")) == "de"
    assert limits.accepted_language(asking("it-CH"), study_flow.SHARED_LANGUAGES) == "it"
    assert limits.accepted_language(asking("de;q=0, fr"), study_flow.SHARED_LANGUAGES) == "en"


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


# -- the researchers' configs (settings.py) -----------------------------------------------------------------------


def project_settings():
    import settings

    return settings


def test_every_config_has_a_description_naming_the_allowed_values_of_its_fixed_choices():
    for config in project_settings().SESSION_CONFIGS:
        doc = config.get("doc", "")
        assert len(doc) > 80, config["name"]
        assert "<code>language</code>: <code>en</code>, <code>de</code>, <code>it</code>" in doc, config["name"]
        assert "Every key: the manual's Reference › Session-config keys" in doc
    docs = {config["name"]: config["doc"] for config in project_settings().SESSION_CONFIGS}
    assert "<code>mode</code>: <code>semi</code>, <code>coop</code>, <code>comp</code>" in docs["dond_human"]
    assert (
        "<code>aggregation_rule</code>: <code>unanimity</code>, <code>majority</code>" in docs["payoff_reasoning_eval"]
    )


def test_only_configs_where_an_llm_plays_carry_llm_keys():
    settings = project_settings()
    assert not [key for key in settings.SESSION_CONFIG_DEFAULTS if key.startswith("llm_")]
    for config in settings.SESSION_CONFIGS:
        llm_keys = {key for key in config if key.startswith("llm_")}
        llm_plays = config["app_sequence"] == ["dond"] and config.get("opponent") == "llm"
        if llm_plays:
            assert set(study_flow.LLM_KEYS[:4]) <= llm_keys, config["name"]
        else:
            assert llm_keys == set(), (config["name"], llm_keys)


def test_every_config_shows_the_language_key_and_every_room_is_tied_to_existing_configs():
    settings = project_settings()
    assert settings.SESSION_CONFIG_DEFAULTS["language"] == "en"
    names = [config["name"] for config in settings.SESSION_CONFIGS]
    tied = [name for configs in settings.ROOM_CONFIGS.values() for name in configs]
    assert sorted(tied) == sorted(names)  # every config in exactly one room
    assert [room["name"] for room in settings.ROOMS] == list(settings.ROOM_CONFIGS)
    for room in settings.ROOMS:
        assert all(name in room["display_name"] for name in settings.ROOM_CONFIGS[room["name"]])


def test_the_languages_guard_translates_only_otrees_english_defaults():
    from lab_server.languages import study_heading, translate_context

    class Form:
        errors = {"answer": ["..."]}
        non_field_error = None

        def __iter__(self):
            return iter([])

    context = {
        "timer_text": "Time left to complete this page:",
        "title_text": "Please wait",
        "body_text": "Our own words.",
        "powered_by_otree": "Powered by oTree",
        "form": Form(),
    }
    translate_context(context, "it")
    assert context["timer_text"] == study_flow.messages("it")["timer_text"]
    assert context["title_text"] == study_flow.messages("it")["wait_title"]
    assert context["body_text"] == "Our own words."
    assert context["powered_by_otree"].startswith("Realizzato con <a ")
    assert context["form"].non_field_error == study_flow.messages("it")["form_errors"]
    english = {"timer_text": "Time left to complete this page:"}
    assert translate_context(dict(english), "en") == english
    session = SimpleNamespace(config={"language": "de", "study_title": ""})
    assert study_heading(session) == {"text": "Forschungsstudie", "material": False}
    session.config["study_title"] = "Verhandlungsstudie"
    assert study_heading(session) == {"text": "Verhandlungsstudie", "material": True}


def test_a_room_runs_only_its_own_configs():
    from lab_server.creation import room_problem

    rooms = project_settings().ROOM_CONFIGS
    assert room_problem("bias_tests", "dond_study", rooms) == (
        "The room 'dond_study' runs only the configs dond_llm, dond_llm_notes, dond_human, not 'bias_tests'; "
        "create it in the room bias_study."
    )
    assert room_problem("dond_human", "dond_study", rooms) is None
    assert room_problem("bias_tests", None, rooms) is None


def test_otrees_messages_for_a_refused_field_and_its_yes_no_choices_follow_the_language():
    from lab_server.languages import translate_form

    class Field(SimpleNamespace):
        pass

    answer = Field(errors=["This field is required."], choices=[(True, "Yes"), (False, "No")])
    amount = Field(errors=["Number must be at least 5.", "Our own sentence."], choices=None)
    own = Field(errors=[], choices=[(1, "Yes, always"), (2, "No")])

    class Form:
        non_field_error = None
        errors = {"answer": answer.errors}

        def __iter__(self):
            return iter([answer, amount, own])

    form = Form()
    translate_form(form, study_flow.messages("de"))
    assert answer.errors == ["Bitte füllen Sie dieses Feld aus."]
    assert answer.choices == [(True, "Ja"), (False, "Nein")]
    assert amount.errors == ["Bitte geben Sie mindestens 5 ein.", "Our own sentence."]
    assert own.choices == [(1, "Yes, always"), (2, "No")]  # the app's own labels stay
    assert form.non_field_error == "Bitte korrigieren Sie die markierten Angaben."
