"""Every session key has a label and one line of help in a researcher's words, on its field of the app's model
(``backend.core.session_keys``) or of the shared keys' (study_flow.config.SharedKeys); the Create-session page shows
them (tests/system/test_export_codebook.py)."""

from __future__ import annotations

import settings
from study_flow import config as shared

OTREE_KEYS = {"name", "display_name", "app_sequence", "num_demo_participants", "doc", "use_browser_bots"}


def test_every_key_of_every_settings_class_has_words():
    models = [*shared.app_keys().values(), shared.SharedKeys]
    for model in models:
        for key, field in model.model_fields.items():
            assert field.title and field.description, f"{model.__name__}.{key} has no label or help"
    assert set(shared.key_words()) == {key for model in models for key in model.model_fields}


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


def test_the_launch_check_names_only_keys_the_models_define():
    """The launch check reads a session's keys by name (lab_server/study_pages.py) and names them in its advice
    (backend/core/launch_check.py): each name is a field of a model, so a renamed key cannot leave it reading nothing."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    models = [shared.SharedKeys, *shared.app_keys().values()]
    keys = {key for model in models for key in model.model_fields} | OTREE_KEYS | {"name"}
    pages = (root / "lab_server" / "study_pages.py").read_text(encoding="utf-8")
    advice = (root / "backend" / "core" / "launch_check.py").read_text(encoding="utf-8")
    named = set(re.findall(r"config(?:\.get\(|\[)\"([a-z_]+)\"", pages))
    named |= set(re.findall(r"session key ([a-z_]{4,})", advice))
    assert len(named) > 10
    assert named - keys == set()
