"""social_eval's material in the session's language: our bundled German and Italian material mirrors the English one
exactly (only the words differ), the session's language picks it, and material declared in another language than the
pages is refused at creation unless the researcher confirms the mismatch."""

from __future__ import annotations

import json

import pytest

from backend.core.material_language import MISMATCH_KEY
from backend.social.bundled import BUNDLED_LANGUAGES, bundled_episodes_path, bundled_rubric_path
from backend.social.episodes import episode_from_dict, load_episodes
from backend.social.rubrics import load_rubric, rubric_from_dict
from backend.social.settings import checked_settings
from harness import PROJECT_ROOT

ENGLISH_EPISODES = "backend/social/data/episodes"


def _shape(value):
    """The JSON value with every text replaced (the numbers, keys, lists and names' places kept)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items() if key != "language"}
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return "<text>" if isinstance(value, str) else value


def _checked(**config):
    return checked_settings(config, project_root=PROJECT_ROOT, max_tasks=15, max_questions=6)


@pytest.mark.parametrize("language", ["de", "it"])
def test_the_bundled_translations_keep_every_number_name_and_id(language):
    english_rubric = json.loads(bundled_rubric_path("en").read_text(encoding="utf-8"))
    rubric = json.loads(bundled_rubric_path(language).read_text(encoding="utf-8"))
    assert _shape(rubric) == _shape(english_rubric)
    assert rubric["language"] == language and english_rubric["language"] == "en"
    english = {e.id: e for e in load_episodes(bundled_episodes_path("en"))}
    translated = {e.id: e for e in load_episodes(bundled_episodes_path(language), rubric=load_rubric(None))}
    assert translated.keys() == english.keys()
    for episode_id, episode in translated.items():
        original = english[episode_id]
        assert episode.language == language and original.language == "en"
        assert _shape(episode.as_dict()) == _shape(original.as_dict())
        assert [a.name for a in episode.agents] == [a.name for a in original.agents]
        assert [a.gold_ratings for a in episode.agents] == [a.gold_ratings for a in original.agents]
        assert [a.model_ratings for a in episode.agents] == [a.model_ratings for a in original.agents]
        assert [(t.speaker, t.kind) for t in episode.turns] == [(t.speaker, t.kind) for t in original.turns]
        assert episode.scenario != original.scenario  # written in the language, not copied


@pytest.mark.parametrize("language", BUNDLED_LANGUAGES)
def test_the_session_language_picks_the_bundled_rubric_and_samples(language):
    _, rubric, episodes = _checked(language=language, episodes="samples")
    assert rubric.language == language and {e.language for e in episodes} == {language}
    assert rubric.title == json.loads(bundled_rubric_path(language).read_text(encoding="utf-8"))["title"]
    assert len(episodes) == 8 and sum(e.is_gold for e in episodes) == 2


def test_english_material_for_german_pages_is_refused_unless_confirmed():
    with pytest.raises(ValueError) as refused:
        _checked(language="de", episodes=ENGLISH_EPISODES)
    message = str(refused.value)
    assert message.startswith("The session's pages are in German (language 'de'), but its material declares another")
    assert "the episodes in 'used_car.json': English ('en')" in message
    assert f"set the session key '{MISMATCH_KEY}' to True" in message
    with pytest.raises(ValueError, match=r"the rubric_file 'backend/social/data/sotopia_rubric.json': English"):
        _checked(language="it", rubric_file="backend/social/data/sotopia_rubric.json", episodes="samples")
    _, rubric, episodes = _checked(language="de", episodes=ENGLISH_EPISODES, **{MISMATCH_KEY: True})
    assert rubric.language == "de" and {e.language for e in episodes} == {"en"}
    with pytest.raises(ValueError, match=f"The session key '{MISMATCH_KEY}' must be true or false"):
        _checked(language="de", episodes=ENGLISH_EPISODES, **{MISMATCH_KEY: "perhaps"})


def test_a_researchers_file_declares_its_language_or_is_undeclared(tmp_path):
    episode = json.loads((PROJECT_ROOT / ENGLISH_EPISODES / "used_car.json").read_text(encoding="utf-8"))
    del episode["language"]
    undeclared = tmp_path / "undeclared.json"
    undeclared.write_text(json.dumps(episode), encoding="utf-8")
    _, _, episodes = _checked(language="de", episodes=str(undeclared))
    assert episodes[0].language is None  # never refused: we cannot know
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"language": "de-CH", "episodes": [episode]}), encoding="utf-8")
    _, _, episodes = _checked(language="de", episodes=str(wrapped))
    assert episodes[0].language == "de-CH"
    with pytest.raises(ValueError, match=r"the episodes in 'wrapped.json': German \('de-CH'\)"):
        _checked(language="it", episodes=str(wrapped))
    pasted = json.dumps({"language": "fr", "episodes": [episode]})
    with pytest.raises(ValueError, match=r"'session config episodes_json': 'fr'"):
        _checked(language="en", episodes="", episodes_json=pasted)
    wrapped.write_text(json.dumps({"language": "Deutsch", "episodes": [episode]}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"wrapped.json: language: must be a language tag such as 'en', 'de' or 'it'"):
        _checked(language="de", episodes=str(wrapped))


def test_a_stored_episode_and_rubric_keep_their_language():
    _, rubric, episodes = _checked(language="it", episodes="samples")
    assert rubric_from_dict(rubric.as_dict()).language == "it"
    assert episode_from_dict(episodes[0].as_dict()).language == "it"


def test_a_bias_item_file_declares_its_language_and_a_mismatch_is_refused_unless_confirmed(tmp_path):
    from backend.bias.items import DEFAULT_ITEMS_PATH
    from backend.bias.settings import checked_session

    data = json.loads(DEFAULT_ITEMS_PATH.read_text(encoding="utf-8"))
    assert data["language"] == "en"
    path = tmp_path / "items.json"
    path.write_text(json.dumps(data), encoding="utf-8")

    def checked(**config):
        return checked_session({"item_file": str(path), **config}, project_root=PROJECT_ROOT, max_versions=40)

    with pytest.raises(ValueError, match=r"pages are in Italian \(language 'it'\).*items.json.*: English"):
        checked(language="it")
    assert checked(language="it", **{MISMATCH_KEY: "yes"})[2].language == "en"
    assert checked(language="en")[2].language == "en"
    del data["language"]
    path.write_text(json.dumps(data), encoding="utf-8")
    assert checked(language="it")[2].language is None  # undeclared: accepted
    data["language"] = 7
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"items.json: language: must be a language tag"):
        checked(language="en")


def test_a_payoff_log_set_declares_its_language_beside_its_logs(tmp_path):
    import shutil
    import zipfile

    from backend.reasoning.task import check_log_language, load_logs, task_settings

    folder = tmp_path / "logs"
    shutil.copytree(PROJECT_ROOT / "payoff_reasoning_eval" / "logs", folder)
    assert json.loads((folder / "language.json").read_text(encoding="utf-8")) == {"language": "en"}

    def check(source, **config):
        settings = task_settings({"logs_folder": str(source), **config}, max_logs_per_judge=10)
        check_log_language(settings, config, project_root=PROJECT_ROOT)
        return settings

    assert load_logs(check(folder, language="en"), project_root=PROJECT_ROOT)  # language.json is not a log
    with pytest.raises(ValueError, match=r"pages are in German.*the logs_folder '.*logs': English \('en'\)"):
        check(folder, language="de")
    check(folder, language="de", **{MISMATCH_KEY: True})
    archive = tmp_path / "logs.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in folder.iterdir():
            zipped.write(path, path.name)
    with pytest.raises(ValueError, match=r"the logs_folder '.*logs.zip': English"):
        check(archive, language="it")
    (folder / "language.json").unlink()
    check(folder, language="de")  # undeclared: accepted
    check("payoff_reasoning_eval/logs", language="de")  # our demo logs, English only so far: not checked yet
