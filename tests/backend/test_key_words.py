"""Every session key has a label and one line of help in a researcher's words, defined beside its settings class
(``KEY_WORDS``) or with the shared keys (study_flow.config); the Create-session page shows them
(tests/system/test_export_codebook.py)."""

from __future__ import annotations

import dataclasses

import settings
from backend.bias import settings as bias_settings
from backend.dond.settings import DondSettings
from backend.reasoning import task
from backend.social.settings import SocialSettings
from study_flow import config as shared

OTREE_KEYS = {"name", "display_name", "app_sequence", "num_demo_participants", "doc", "use_browser_bots"}


def test_every_key_of_every_settings_class_has_words():
    words = shared.key_words()
    keys = {field.name for field in dataclasses.fields(DondSettings)}
    keys |= {field.name for field in dataclasses.fields(SocialSettings)}
    keys |= set(task.DEFAULTS) | set(bias_settings.DEFAULTS) | set(shared.SHARED_KEY_WORDS)
    assert keys - set(words) == set()
    assert set(words) - keys == set()  # no words for a key that no longer exists


def test_every_key_a_config_shows_on_the_create_session_page_has_words():
    words = shared.key_words()
    for config in settings.SESSION_CONFIGS:
        shown = set({**settings.SESSION_CONFIG_DEFAULTS, **config}) - OTREE_KEYS
        assert shown - set(words) == set(), config["name"]


def test_the_words_are_a_label_and_one_line_without_developer_notes():
    for key, (label, help_text) in shared.key_words().items():
        assert label and label[0].isupper() and "_" not in label, key
        assert help_text.endswith(".") and "\n" not in help_text and len(help_text) <= 110, key
        assert ".py" not in help_text and "backend" not in help_text, key


def test_the_app_descriptions_shown_on_the_create_session_page_carry_no_developer_notes():
    import importlib

    for app in ("dond", "social_eval", "payoff_reasoning_eval", "bias_tests"):
        doc = importlib.import_module(app).doc
        assert "Where things are" not in doc and ".py" not in doc, app
