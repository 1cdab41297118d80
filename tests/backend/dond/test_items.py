"""DoND item words (backend/dond/items.py): 100 aligned nouns per language, unambiguous words and stems."""

from __future__ import annotations

import json

import pytest

from backend.dond import items, rules

# ---------------------------------------------------------------------------------------------------------------
# Item words


def test_item_file_has_100_aligned_single_word_nouns_per_language():
    data = json.loads(items.ITEMS_FILE.read_text(encoding="utf-8"))
    assert data["languages"] == list(rules.LANGUAGES)
    assert len(data["items"]) == 100
    for entry in data["items"]:
        for language in rules.LANGUAGES:
            singular, plural = entry[language]
            assert singular and plural and " " not in singular + plural and "," not in singular + plural, entry
        assert all(word[0].isupper() for word in entry["de"]), entry  # German nouns are capitalised


@pytest.mark.parametrize("language", rules.LANGUAGES)
def test_item_words_and_stems_identify_one_item_each(language):
    """No word or Snowball stem is shared by two items, so every name the parser accepts is unambiguous."""
    word_owner, stem_owner = {}, {}
    for item in items.item_ids():
        for plural in (False, True):
            word = items.item_word(item, language, plural=plural)
            assert word_owner.setdefault(word.casefold(), item) == item, (word, item)
            stem = items.stem(word, language)
            assert stem_owner.setdefault(stem, item) == item, (word, stem, item)
    number_words = set(items.NUMBER_WORDS[language])
    assert not number_words & set(word_owner), "an item word must not read as a number"


def test_item_word_rejects_unknown_ids_and_languages():
    with pytest.raises(ValueError, match="item_id"):
        items.item_word("unicorn", "en")
    with pytest.raises(ValueError, match="language"):
        items.item_word("apple", "fr")
