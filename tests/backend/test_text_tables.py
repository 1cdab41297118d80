"""Every text table, checked without a server or a browser (a second): the same keys in every language, the same
placeholders in each translation of a text, and no translation left in English.

The tables: every table keyed by languages in our texts modules (``tests.support.language_check.TEXT_MODULES``, the
modules the browser walks' English-word check reads). The browser walks check what a page shows; this checks every
text, also those no walk reaches.
"""

from __future__ import annotations

import string
from collections.abc import Iterator

import pytest

from tests.support.language_check import LANGUAGES, TEXT_MODULES, load_texts, words

# Translations that are rightly the English text: names, codes and words both languages use as they are.
SAME_AS_ENGLISH = frozenset(
    {
        "",
        "OK",
        "Prolific",
        "Prolific ID",
        "ID",
        "Chat",
        "Online",
        "Feedback",
        "Bonus",
        "Score",
        "Item",
        "Items",
        "Start",
        "Stop",
        "Total",
        "Team",
        "Test",
        "Demo",
        "Status",
        "Email",
        "E-mail",
        "Link",
        "Code",
        "Info",
        "Pareto",
        "Dimension",
    }
)


# A language's forms of one placeholder: the opponent of DoND is ``{other}``, ``{Other}`` at a sentence's start and,
# where the language declines it, ``{other_dat}`` (German) or ``{other_of}``, ``{other_to}`` (Italian); their
# values are the extra keys of ``dond/texts.py`` OPPONENTS in that language.
FORMS = {"Other": "other", "other_dat": "other", "other_of": "other", "other_to": "other"}


def placeholders(text: str) -> set[str]:
    """The names of ``text``'s ``str.format`` placeholders, each language's forms of one as that one (`FORMS`); a
    text that is not a format string has none.

    >>> sorted(placeholders("{n} of {total} left, {{literal}}, {Other} and {other_dat}"))
    ['n', 'other', 'total']
    """
    try:
        names = {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError:
        return set()
    return {FORMS.get(name, name) for name in names}


def language_tables() -> Iterator[tuple[str, dict]]:
    """``(where, table)`` for every dict keyed by languages (an ``"en"`` entry and only language codes as keys) in
    the texts modules, at any depth."""

    def walk(where: str, value) -> Iterator[tuple[str, dict]]:
        if isinstance(value, dict) and "en" in value and set(value) <= set(LANGUAGES):
            yield where, value
        elif isinstance(value, dict):
            for key, item in value.items():
                yield from walk(f"{where}[{key!r}]", item)
        elif isinstance(value, list | tuple):
            for index, item in enumerate(value):
                yield from walk(f"{where}[{index}]", item)

    for relative in TEXT_MODULES:
        module = load_texts(relative)
        assert module is not None, f"{relative} is listed in TEXT_MODULES but missing"
        for name, value in vars(module).items():
            if not name.startswith("_") and name.isupper():
                yield from walk(f"{relative}: {name}", value)


def table_problems(where: str, table: dict, *, languages=LANGUAGES) -> list[str]:
    """What is wrong with one table keyed by languages: a language missing, a key or list item missing or extra in a
    language, a placeholder that differs from the English text's, a translation equal to its English text (with
    words of three or more letters, not in `SAME_AS_ENGLISH`).

    >>> table_problems("t", {"en": {"a": "Hello {name}", "b": "x"}, "de": {"a": "Hallo {nom}"}}, languages=("en", "de"))
    ["t: de lacks ['b']", "t['a']: de has placeholders ['nom'], en ['name']"]
    """
    problems = [f"{where}: no {language} table" for language in languages if language not in table]

    def compare(path: str, english, other, language: str) -> None:
        if isinstance(english, dict):
            if not isinstance(other, dict):
                problems.append(f"{path}: {language} is not a table like en")
                return
            if missing := sorted(set(english) - set(other), key=str):
                problems.append(f"{path}: {language} lacks {missing}")
            if extra := sorted(set(other) - set(english) - {form for form in FORMS if FORMS[form] in english}, key=str):
                problems.append(f"{path}: {language} has keys en lacks {extra}")
            for key in english:
                if key in other:
                    compare(f"{path}[{key!r}]", english[key], other[key], language)
        elif isinstance(english, list | tuple):
            if not isinstance(other, list | tuple) or len(other) != len(english):
                problems.append(f"{path}: {language} has not the {len(english)} items of en")
                return
            for index, (item, translated) in enumerate(zip(english, other, strict=True)):
                compare(f"{path}[{index}]", item, translated, language)
        elif isinstance(english, str):
            if not isinstance(other, str):
                problems.append(f"{path}: {language} is not a text")
                return
            if placeholders(other) != placeholders(english):
                problems.append(
                    f"{path}: {language} has placeholders {sorted(placeholders(other))}, en {sorted(placeholders(english))}"
                )
            if other == english and other not in SAME_AS_ENGLISH and words(other):
                problems.append(f"{path}: {language} is the English text {english!r}")

    for language in languages:
        if language != "en" and language in table:
            compare(where, table["en"], table[language], language)
    return problems


def test_every_text_table_has_every_key_and_placeholder_in_every_language():
    tables = list(language_tables())
    assert len(tables) >= len(TEXT_MODULES), "the texts modules hold fewer language tables than modules"
    problems = [problem for where, table in tables for problem in table_problems(where, table)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "broken, expected",
    [
        ({"en": {"a": "Yes", "b": "No"}, "de": {"a": "Ja"}, "it": {"a": "Sì", "b": "No!"}}, "de lacks ['b']"),
        ({"en": {"a": "{n} left"}, "de": {"a": "{n} übrig"}, "it": {"a": "ne restano"}}, "it has placeholders []"),
        ({"en": {"a": ["x", "y"]}, "de": {"a": ["x"]}, "it": {"a": ["x", "y"]}}, "de has not the 2 items of en"),
        ({"en": {"a": "Please wait"}, "de": {"a": "Bitte warten"}, "it": {"a": "Please wait"}}, "it is the English"),
        ({"en": {"a": "Yes"}, "de": {"a": "Ja"}}, "no it table"),
    ],
)
def test_the_check_fails_on_a_broken_table(broken, expected):
    problems = table_problems("t", broken)
    assert any(expected in problem for problem in problems), problems


def test_a_key_missing_in_one_language_of_a_real_table_is_found():
    where, table = next(language_tables())
    english = table["en"]
    assert isinstance(english, dict) and english
    dropped = next(iter(english))
    broken = dict(table, de={key: value for key, value in table["de"].items() if key != dropped})
    assert f"{where}: de lacks [{dropped!r}]" in table_problems(where, broken)
