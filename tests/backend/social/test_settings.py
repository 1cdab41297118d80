"""social_eval's typed settings: defaults defined once, every key checked, the material checked against the keys."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from backend.social.settings import DEFAULTS, SocialSettings, check_material, load_material, social_settings
from harness import PROJECT_ROOT


def test_defaults_are_the_model_defaults_and_a_config_overrides_them():
    assert social_settings({}, max_tasks=15) == SocialSettings()
    assert DEFAULTS["reservation_timeout_s"] == 1800 and DEFAULTS["attention_checks"] == 0
    typed = social_settings({"annotators_per_episode": "3", "qualification_mode": "yes"}, max_tasks=15)
    assert (typed.annotators_per_episode, typed.qualification_mode) == (3, True)
    assert typed.as_config() == {**DEFAULTS, "annotators_per_episode": 3, "qualification_mode": True}
    with pytest.raises(ValidationError, match="frozen"):
        typed.annotators_per_episode = 4


def test_every_key_at_fault_is_named_in_one_message():
    with pytest.raises(ValueError) as refused:
        social_settings({"episodes_per_annotator": 20, "reservation_timeout_s": 0}, max_tasks=15)
    message = str(refused.value)
    assert "The session key 'episodes_per_annotator' must be a whole number from 1 to 15, not 20." in message
    assert "The session key 'reservation_timeout_s' must be a number from 1 to 604800, not 0." in message
    with pytest.raises(ValueError, match="Set 'reservation_timeout_s' = 1800 instead"):
        social_settings({"reservation_minutes": 30}, max_tasks=15)


def test_the_material_is_checked_against_the_keys():
    settings = social_settings({"episodes": "backend/social/data/episodes", "attention_checks": 3}, max_tasks=15)
    rubric, episodes = load_material(settings, project_root=PROJECT_ROOT)
    with pytest.raises(ValueError, match=r"'attention_checks' \(3\) exceeds the 2 gold episodes"):
        check_material(settings, rubric, episodes, max_tasks=15, max_questions=6)
    with pytest.raises(ValueError, match="both empty: there is nothing to rate"):
        load_material(SocialSettings(), project_root=PROJECT_ROOT)
