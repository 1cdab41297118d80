"""DoND in a language only the catalogues know: the pages name the items from the ``dond`` catalogue
(dond/item_names.py), the model keeps its prompts' words, and a session needs prompts only when a model plays
(``llm_prompt_language``, backend/dond/settings.py)."""

from __future__ import annotations

import pytest

from backend.core import catalogues
from backend.dond import items, rules
from backend.dond.instances import Instance
from backend.dond.settings import DondSettings, dond_settings, prompt_language_problem
from dond.item_names import page_item_words
from tests.support.pseudo_language import LANGUAGE, pseudo, write_pseudo_language

ALL = Instance(items.item_ids(), (1,) * 100, (0,) * 100, (0,) * 100)


@pytest.mark.parametrize("language", rules.LANGUAGES)
def test_the_catalogue_names_every_item_as_the_game_data_do_in_en_de_and_it(language):
    """The pages of an en, de or it session show the same words as before the catalogue (the prompts' own)."""
    assert page_item_words(ALL, language) == (ALL.singular(language), ALL.plural(language))


def test_a_language_added_by_catalogues_names_the_items_in_its_own_words(tmp_path, monkeypatch):
    monkeypatch.setenv(catalogues.LOCALE_DIRS_VARIABLE, str(write_pseudo_language(tmp_path)))
    singulars, plurals = page_item_words(ALL, LANGUAGE)
    assert singulars[:2] == (pseudo("acorn"), pseudo("apple")) and plurals[1] == pseudo("apples")


def test_a_researchers_own_words_and_items_stay_on_the_page():
    own = Instance(
        ("apple", "unicorn"), (1, 2), (10, 0), (0, 5), words={"en": (("pear", "unicorn"), ("pears", "unicorns"))}
    )
    assert page_item_words(own, "en") == (("pear", "unicorn"), ("pears", "unicorns"))  # the file's words for en
    assert page_item_words(own, "de", game_language="en") == (("Apfel", "unicorn"), ("Äpfel", "unicorns"))


def test_the_prompt_language_is_the_key_else_the_session_language_when_it_has_prompts():
    assert DondSettings(language="it").prompt_language == "it"
    assert DondSettings(language="it", llm_prompt_language="de").prompt_language == "de"
    assert dond_settings({"language": "de", "llm_prompt_language": "en"}).prompt_language == "en"
    with pytest.raises(ValueError, match="llm_prompt_language' must be one of auto, en, de, it"):
        dond_settings({"llm_prompt_language": "xx"})  # the model's prompts: only the languages shipped


@pytest.mark.parametrize(
    ("opponent", "prompt", "refused"), [("llm", "auto", True), ("llm", "en", False), ("human", "auto", False)]
)
def test_only_a_session_whose_model_has_no_prompts_in_its_language_is_refused(opponent, prompt, refused):
    problem = prompt_language_problem(LANGUAGE, prompt, model_plays=opponent == "llm")
    assert (problem is not None) == refused
    if refused:
        assert "llm_prompt_language" in problem and f"backend/dond/data/dond_prompts/{LANGUAGE}/" in problem
