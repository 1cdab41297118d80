"""Every word a participant reads, in gettext catalogues: English source tables in the code, one ``.po`` per language.

A module writes its participant-facing words once, in English, in a source table that the extractor reads:
``english("<domain>", {"<key>": "English text", ...})``. The key becomes the message's ``msgctxt``, the English
text its ``msgid``; a value may also be a `Plural` (``ngettext``: the count picks the form) or a list of texts
(keys ``<key>[1]``, ``<key>[2]``, ...). The translations live in ``locale/<language>/LC_MESSAGES/<domain>.po``
(Poedit, Weblate and ``msgfmt`` read them); each is compiled to a ``.mo`` beside it when the ``.mo`` is missing or
was not compiled from it (``python -m backend.core.catalogue_tool compile`` does all of them; the server and the tests do it on first
use). ``locale/<domain>.pot`` is each domain's template, made from the code by ``backend/core/catalogue_tool.py``.

A language is available when every domain has a catalogue for it that translates every message of the domain's
template (`languages`): adding a language is a folder of ``.po`` files, no code. ``LAB_LOCALE_DIRS`` (folders
separated by ``os.pathsep``) are searched before the repository's ``locale/``. Why gettext, and why this layout:
docs/decisions/0006-gettext-catalogues.md.

>>> table = english("study_flow", {"consent_title": "Consent"})
>>> translated(table, "de")["consent_title"], translated(table, "en")["consent_title"]
('Einwilligung', 'Consent')
>>> translated(table, "xx")["consent_title"]  # a language without catalogues reads English
'Consent'
"""

from __future__ import annotations

import functools
import gettext
import io
import os
import re
import string
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from backend.core import environment

ROOT = Path(__file__).resolve().parents[2]
LOCALE_DIR = ROOT / "locale"
SOURCE_LANGUAGE = "en"
DOMAINS = ("study_flow", "dond", "social_eval", "payoff_reasoning_eval", "bias_tests")
# Where the extractor looks for source tables (every .py file below these folders that calls english()).
SOURCE_DIRS = ("study_flow", "lab_server", "dond", "social_eval", "payoff_reasoning_eval", "bias_tests", "backend")
# The counterpart of DoND is {other} ({Other} at a sentence's start); a language that declines it writes one of its
# case forms instead (opponent.<kind>.other_dat, other_of, other_to): the same placeholder to the checks.
PLACEHOLDER_FORMS = {"Other": "other", "other_dat": "other", "other_of": "other", "other_to": "other"}
LOCALE_DIRS_VARIABLE = "LAB_LOCALE_DIRS"


class Plural(NamedTuple):
    """A text whose wording depends on a count: gettext's ``msgid`` / ``msgid_plural``, one form per plural form of
    each language. In a translated table it is a `PluralText`."""

    singular: str
    plural: str


class PluralText(NamedTuple):
    """A plural message of one language: ``text(count)`` is the form ``count`` takes (not yet formatted).

    >>> PluralText(gettext.NullTranslations(), "k", Plural("{count} try", "{count} tries"))(2)
    '{count} tries'
    """

    translations: gettext.NullTranslations
    key: str
    source: Plural

    def __call__(self, count: int) -> str:
        return self.translations.npgettext(self.key, self.source.singular, self.source.plural, count)


class SourceTable(dict):
    """An English source table (key -> text, `Plural` or list of texts) and the domain its catalogue is."""

    domain: str


def english(domain: str, table: Mapping) -> SourceTable:
    """Mark ``table`` as the English source of messages of ``domain`` (the extractor reads the call's literal)."""
    if domain not in DOMAINS:
        raise ValueError(f"domain {domain!r} is not one of {', '.join(DOMAINS)}.")
    source = SourceTable(table)
    source.domain = domain
    return source


def locale_dirs() -> tuple[Path, ...]:
    """The folders searched for catalogues: ``LAB_LOCALE_DIRS`` first (``backend.core.environment``), then the
    repository's ``locale/``.

    >>> locale_dirs()[-1] == LOCALE_DIR
    True
    """
    given = environment.variable(LOCALE_DIRS_VARIABLE) or ""
    extra = [Path(part) for part in given.split(os.pathsep) if part.strip()]
    return (*extra, LOCALE_DIR)


def po_path(domain: str, language: str) -> Path | None:
    """The ``.po`` file of ``domain`` in ``language``: the first of `locale_dirs` that has one."""
    for folder in locale_dirs():
        path = folder / language / "LC_MESSAGES" / f"{domain}.po"
        if path.is_file():
            return path
    return None


def pot_path(domain: str) -> Path:
    return LOCALE_DIR / f"{domain}.pot"


def compile_po(po: Path) -> Path | None:
    """Compile ``po`` to the ``.mo`` beside it unless that was compiled from it (the ``.mo`` carries the ``.po``'s
    time: a ``.po`` replaced by an older file, unzipped or copied with its time, is compiled again too); its path
    (None when not writable)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    mo, source = po.with_suffix(".mo"), po.stat()
    if mo.is_file() and mo.stat().st_mtime_ns == source.st_mtime_ns:
        return mo
    with po.open("rb") as handle:
        catalog = read_po(handle)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    try:
        partial = mo.with_suffix(f".mo.{os.getpid()}")
        partial.write_bytes(buffer.getvalue())
        os.utime(partial, ns=(source.st_atime_ns, source.st_mtime_ns))
        partial.replace(mo)
    except OSError:
        return None
    return mo


@functools.cache
def _translations(domain: str, language: str, dirs: tuple[Path, ...]) -> gettext.NullTranslations:
    po = po_path(domain, language)
    if language == SOURCE_LANGUAGE or po is None:
        return gettext.NullTranslations()
    mo = compile_po(po)
    if mo is not None:
        with mo.open("rb") as handle:
            return gettext.GNUTranslations(handle)
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as handle:
        buffer = io.BytesIO()
        write_mo(buffer, read_po(handle))
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


def translations(domain: str, language: str) -> gettext.NullTranslations:
    """The compiled catalogue of ``domain`` in ``language`` (English, or no catalogue: the English source)."""
    return _translations(domain, language, locale_dirs())


def translated(table: SourceTable, language: str | None) -> dict:
    """``table`` in ``language``: each text translated, `Plural`s as `PluralText`, lists item by item.

    >>> translated(english("dond", {"send": "Send"}), "it")["send"]
    'Invia'
    """
    catalogue = translations(table.domain, language or SOURCE_LANGUAGE)
    result = {}
    for key, value in table.items():
        if isinstance(value, Plural):
            result[key] = PluralText(catalogue, key, value)
        elif isinstance(value, list | tuple):
            result[key] = [catalogue.pgettext(f"{key}[{index}]", text) for index, text in enumerate(value, 1)]
        else:
            result[key] = catalogue.pgettext(key, value)
    return result


def by_language(table: SourceTable) -> dict[str, dict]:
    """``{language: translated table}`` for every available language (`languages`)."""
    return {language: translated(table, language) for language in languages()}


class Entry(NamedTuple):
    key: str
    msgid: str | tuple[str, str]
    path: str


def placeholders(text: str) -> set[str]:
    """The ``str.format`` names in ``text``, a language's case forms of the counterpart as ``other``.

    >>> sorted(placeholders("{n} of {total}, {{literal}}, {Other} and {other_dat}"))
    ['n', 'other', 'total']
    """
    try:
        names = {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError:
        return set()
    return {PLACEHOLDER_FORMS.get(name.split(".")[0].split("[")[0], name) for name in names if name}


_MARKUP = re.compile(r"<\s*[A-Za-z/!?]")  # the start of a tag, a comment or a declaration


def _fields(text: str) -> set[str]:
    return {
        "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        for _, name, spec, conversion in string.Formatter().parse(text)
        if name is not None
    }


def unsafe_form(text: str, english: tuple[str, ...]) -> str | None:
    """Why ``text``, a translation of ``english``, would break or change the page it lands on, or None: a brace
    without its pair or a placeholder written with a format, conversion, attribute or index the English has not (the
    code's ``str.format`` raises, or shows what it should not), or HTML markup the English has not (some pages print
    their texts as they are: participant texts are plain text).

    >>> unsafe_form("{n} von {total}", ("{n} of {total}",)), unsafe_form("Weiter :-}", ("Next",))
    (None, 'a brace without its pair (participant texts hold braces only around placeholders)')
    >>> unsafe_form("{n:d} von {total}", ("{n} of {total}",)), unsafe_form("<b>Weiter</b>", ("Next",))
    ('{n:d}: a placeholder is its name in braces, nothing more', 'markup (participant texts are plain text)')
    >>> unsafe_form("2 < 3 & 4 > 1", ("2 < 3",))
    """
    try:
        fields = _fields(text)
        source = set().union(*(_fields(other) for other in english))
    except ValueError:
        return "a brace without its pair (participant texts hold braces only around placeholders)"
    for field in sorted(fields - source):
        if not field[1:-1].isidentifier():
            return f"{field}: a placeholder is its name in braces, nothing more"
    if _MARKUP.search(text) and not any(_MARKUP.search(other) for other in english):
        return "markup (participant texts are plain text)"
    return None


# -- checks and the languages they make available ------------------------------------------------------------------


def template_entries(domain: str) -> tuple[Entry, ...]:
    """The messages of ``domain``'s template file (``locale/<domain>.pot``, which a test keeps equal to `extract`):
    what a language's catalogue must translate, read without scanning the code.

    >>> len(template_entries("bias_tests")), template_entries("bias_tests")[0].key
    (18, 'instructions_title')
    """
    path = pot_path(domain)
    return _template_entries(path, path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _template_entries(path: Path, mtime_ns: int) -> tuple[Entry, ...]:
    from babel.messages.pofile import read_po

    with path.open("rb") as handle:
        catalog = read_po(handle)
    return tuple(
        Entry(message.context, tuple(message.id) if message.pluralizable else message.id, "")
        for message in catalog
        if message.id
    )


def problems(domain: str, language: str, po: Path | None = None) -> list[str]:
    """What keeps ``language``'s catalogue of ``domain`` from being complete: a message of the template missing,
    fuzzy or untranslated, a placeholder not the template's, a Babel checker's error, or a file gettext cannot read
    (not UTF-8, a Plural-Forms rule it cannot parse). Empty: complete.

    >>> problems("dond", "de")
    []
    """
    from babel.messages.pofile import read_po

    po = po or po_path(domain, language)
    if po is None:
        return [f"{domain}: no {language} catalogue"]
    where = f"{po.name} ({language})"
    try:
        with po.open("rb") as handle:
            catalog = read_po(handle, locale=language if "_" not in language else None)
        _readable(catalog)
    except Exception as error:  # whatever a lab's file holds: the language is not offered, the check says why
        return [f"{where}: unreadable ({type(error).__name__}: {error})"]
    found = []
    for entry in template_entries(domain):
        message = catalog.get(entry.msgid[0] if isinstance(entry.msgid, tuple) else entry.msgid, context=entry.key)
        if message is None:
            found.append(f"{where}: {entry.key}: missing")
            continue
        if message.fuzzy:
            found.append(f"{where}: {entry.key}: fuzzy")
        sources = entry.msgid if isinstance(entry.msgid, tuple) else (entry.msgid,)
        translations_ = message.string if isinstance(message.string, tuple | list) else (message.string,)
        if not all(translations_):
            found.append(f"{where}: {entry.key}: untranslated")
            continue
        expected = set().union(*(placeholders(text) for text in sources))
        unsafe = next((reason for text in translations_ if (reason := unsafe_form(text, sources))), None)
        if unsafe:
            found.append(f"{where}: {entry.key}: {unsafe}")
            continue
        for text in translations_:
            if placeholders(text) - expected or (placeholders(text) != expected and not isinstance(entry.msgid, tuple)):
                found.append(
                    f"{where}: {entry.key}: placeholders {sorted(placeholders(text))}, the English {sorted(expected)}"
                )
                break
    for message, errors in catalog.check():
        found += [f"{where}: {message.context}: {error}" for error in errors]
    return found


def _readable(catalog) -> None:
    """Raise what gettext raises reading ``catalog`` compiled (its header, its plural rule)."""
    from babel.messages.mofile import write_mo

    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    gettext.GNUTranslations(buffer).ngettext("", "", 2)


@functools.cache
def _languages(dirs: tuple[Path, ...]) -> tuple[str, ...]:
    candidates = set()
    for folder in dirs:
        if folder.is_dir():
            candidates |= {path.name for path in folder.iterdir() if (path / "LC_MESSAGES").is_dir()}
    complete = [
        language
        for language in sorted(candidates - {SOURCE_LANGUAGE})
        if all(not problems(domain, language) for domain in DOMAINS)
    ]
    return (SOURCE_LANGUAGE, *complete)


def languages() -> tuple[str, ...]:
    """English, then every language whose catalogues of all domains are complete (`problems`), alphabetically.

    >>> languages()[:3]
    ('en', 'de', 'it')
    """
    return _languages(locale_dirs())


def statistics(po: Path) -> tuple[int, int, int]:
    """``(translated, fuzzy, untranslated)`` messages of ``po``, as ``msgfmt --statistics`` counts them."""
    from babel.messages.pofile import read_po

    with po.open("rb") as handle:
        catalog = read_po(handle)
    counts = [0, 0, 0]
    for message in catalog:
        if not message.id:
            continue
        forms = message.string if isinstance(message.string, tuple | list) else (message.string,)
        counts[1 if message.fuzzy else 0 if all(forms) else 2] += 1
    return counts[0], counts[1], counts[2]
