"""The language a study's material declares, and the one check of it against the session's language.

A rubric, an episodes file, a bias item file or a payoff log set may carry a ``language`` field (``"en"``, ``"de"``,
``"it"``, or any language tag such as ``"de-CH"``). Our bundled material always declares it; a researcher's file
without it is *undeclared* and never refused. A session whose pages are in language L is refused at creation when
some of its material declares another language, unless the researcher confirms the mismatch with the session key
``allow_material_language_mismatch`` (`MISMATCH_KEY`). Languages are compared by their first subtag, lower-cased
(``de-CH`` is German). See docs/languages.md.

>>> check_material_languages({"rubric_file 'r.json'": "en", "episodes file 'a.json'": None}, language="de",
...                          allow_mismatch=False)
Traceback (most recent call last):
...
ValueError: The session's pages are in German (language 'de'), but its material declares another language (rubric_file 'r.json': English ('en')). Give material in German, or set the session key 'allow_material_language_mismatch' to True to confirm that participants will read it as it is.
>>> check_material_languages({"rubric_file 'r.json'": "en"}, language="de", allow_mismatch=True)
["rubric_file 'r.json': English ('en')"]
>>> check_material_languages({"rubric_file 'r.json'": "de-CH"}, language="de", allow_mismatch=False)
[]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from backend.core import session_keys

MISMATCH_KEY = "allow_material_language_mismatch"
FIELD = "language"
_TAG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,3}$")
_NAMES = {"en": "English", "de": "German", "it": "Italian"}


def declared_language(data: Any, *, what: str) -> str | None:
    """The ``language`` field of a decoded material file (a mapping), or None when it has none (undeclared).

    >>> declared_language({"language": "de", "items": []}, what="items.json")
    'de'
    >>> declared_language([{"id": 1}], what="a.json") is None
    True
    >>> declared_language({"language": "Deutsch"}, what="a.json")
    Traceback (most recent call last):
    ...
    ValueError: a.json: language: must be a language tag such as 'en', 'de' or 'it', got 'Deutsch'.
    """
    if not isinstance(data, Mapping) or FIELD not in data:
        return None
    value = data[FIELD]
    if not isinstance(value, str) or not _TAG.match(value.strip()):
        raise ValueError(f"{what}: {FIELD}: must be a language tag such as 'en', 'de' or 'it', got {value!r:.40}.")
    return value.strip()


def same_language(declared: str, language: str) -> bool:
    """Whether a declared tag and a session language name the same language (first subtag, any case).

    >>> same_language("DE-at", "de"), same_language("en", "it")
    (True, False)
    """
    return declared.split("-")[0].lower() == language.split("-")[0].lower()


def _name(tag: str) -> str:
    base = tag.split("-")[0].lower()
    return f"{_NAMES[base]} ({tag!r})" if base in _NAMES else repr(tag)


def check_material_languages(declared: Mapping[str, str | None], *, language: str, allow_mismatch: bool) -> list[str]:
    """Refuse material declared in another language than ``language`` unless ``allow_mismatch``.

    ``declared``: what -> declared language (None: undeclared, never refused). Returns the mismatches (one phrase
    each; empty when everything fits) when they are allowed; raises ValueError naming every one otherwise.
    """
    mismatches = [f"{what}: {_name(tag)}" for what, tag in declared.items() if tag and not same_language(tag, language)]
    if mismatches and not allow_mismatch:
        base = language.split("-")[0].lower()
        pages = f"{_NAMES[base]} (language {language!r})" if base in _NAMES else f"language {language!r}"
        in_language = _NAMES.get(base, f"language {language!r}")
        raise ValueError(
            f"The session's pages are in {pages}, but its material declares another language ("
            + "; ".join(mismatches)
            + f"). Give material in {in_language}, or set the session key {MISMATCH_KEY!r} to True to confirm that "
            "participants will read it as it is."
        )
    return mismatches


def session_language(config: Mapping[str, Any]) -> str:
    """The session's page language from its config (``en`` when unset or empty)."""
    return str(config.get("language") or "en")


def mismatch_allowed(config: Mapping[str, Any]) -> bool:
    """The researcher's confirmation (session key `MISMATCH_KEY`; absent = not confirmed)."""
    return session_keys.flag(config, MISMATCH_KEY, default=False)
