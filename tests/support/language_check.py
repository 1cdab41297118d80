"""Is any English participant-facing word left on a German or Italian page? One check for every app's pages.

``english_words(page, language)`` reads what a participant sees on a Playwright page (its visible text, placeholders,
button values, options and the tab title), leaves out what is not ours to translate (elements marked
``data-material``: the researcher's own material, also where the tab title repeats it; ``data-own-text``: what the
participant typed; hidden elements; oTree's debug panel, which only a devserver shows), and returns every word found
in the English vocabulary of ``language``.

The English vocabulary of a language: every word (3 or more letters, lower-cased) of our English texts (the source
texts of every gettext catalogue, ``locale/<domain>.pot``) and of oTree's built-in English strings (its
``django.pot``), minus the words that also occur in that language's own catalogues (``Prolific``, ``JavaScript``,
Prolific's "Return submission" button). Call ``assert_no_english(page, language)`` on an app's pages: every app's
browser tests use this one check, and so does the walk in a language made at test time
(tests/browser/test_new_language.py).

Material: ``data-material`` is skipped for a researcher's own material. A session on our bundled social_eval material
(which we ship in en/de/it) is checked with ``material=True``: the marked elements are read too, and the vocabulary adds
the words our English material writes in lower case (names stay out), less `SHARED_MATERIAL_WORDS`.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from collections.abc import Iterable
from pathlib import Path

from backend.core import catalogues
from harness import PROJECT_ROOT

LANGUAGES = ("en", "de", "it")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}|<[^<>]*>|&[a-z]+;")
_WORD = re.compile(r"[^\W\d_]{3,}")

# What a participant sees, without the researcher's material, their own typed text and oTree's debug panel.
_VISIBLE_TEXT_JS = """
(material) => {
  // material: true checks the material too (a session on our bundled material in the page's language).
  const skip = (material ? '' : '[data-material], ') + '[data-own-text], .debug-info, script, style, template';
  const shown = (element) => {
    if (!element || element.closest(skip)) return false;
    const style = window.getComputedStyle(element);
    return style.visibility !== 'hidden' && style.display !== 'none' && element.getClientRects().length > 0;
  };
  // The tab title repeats the page's heading: researcher's material there stays as written too.
  let title = document.title;
  // A devserver's tab title adds "[<participant label>/P1] ... [debug]" (tab-title-debug-info): the label is the
  // participant's own ID, not a word of ours, and no participant of a study sees it.
  const debugMeta = document.querySelector('meta[name="tab-title-debug-info"]');
  if (debugMeta) title = title.split(`[${debugMeta.content}]`).join(' ').split('[debug]').join(' ');
  for (const element of material ? [] : document.querySelectorAll('[data-material]')) {
    const material = element.textContent.trim();
    if (material) title = title.split(material).join(' ');
  }
  const parts = [title];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.textContent.trim() && shown(node.parentElement)) parts.push(node.textContent);
  }
  for (const element of document.querySelectorAll('[placeholder], input[type=submit], input[type=button], option')) {
    if (element.closest(skip)) continue;
    if (element.tagName === 'OPTION') { if (shown(element.closest('select'))) parts.push(element.textContent); }
    else if (shown(element)) parts.push(element.getAttribute('placeholder') || element.value || '');
  }
  return parts.join('\\n');
}
"""


def words(text: str) -> set[str]:
    """The words of ``text`` (3 or more letters, lower-cased), placeholders, tags and entities left out.

    >>> sorted(words("Time left: {seconds} s <b>now</b>, l'ID Prolific"))
    ['left', 'now', 'prolific', 'time']
    """
    return {word.lower() for word in _WORD.findall(_PLACEHOLDER.sub(" ", text))}


def _strings(value) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple | set):
        for item in value:
            yield from _strings(item)


def load_texts(relative: str):
    """The texts module at ``relative`` (loaded from its file, no oTree import), or None when it is missing."""
    path = PROJECT_ROOT / relative
    if not path.is_file():
        return None
    name = "language_check_" + relative.replace("/", "_").removesuffix(".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def catalogue_table(domain: str, language: str) -> dict[str, str | tuple[str, ...]]:
    """``{key: text}`` of one catalogue: the template's English ``msgid`` for ``en``, else the language's
    ``msgstr`` (a plural message: its forms); empty when the language has no catalogue of ``domain``.

    >>> catalogue_table("dond", "de")["bargain_title"], catalogue_table("dond", "en")["bargain_title"]
    ('Verhandlung', 'Negotiation')
    """
    from babel.messages.pofile import read_po

    path = catalogues.pot_path(domain) if language == "en" else catalogues.po_path(domain, language)
    if path is None:
        return {}
    with path.open("rb") as handle:
        catalog = read_po(handle)
    return {
        message.context: (message.id if language == "en" else message.string)
        for message in catalog
        if message.id and message.context
    }


def language_tables(language: str) -> Iterable[tuple[str, dict]]:
    """``(where, table)`` for the catalogue of every domain in ``language`` (`catalogue_table`): ``where`` names
    the domain."""
    for domain in catalogues.DOMAINS:
        yield f"{domain} ({language})", catalogue_table(domain, language)


def all_strings(value) -> list[str]:
    """Every string in ``value`` (a text, or a list or dict of them, at any depth)."""
    return list(_strings(value))


@functools.cache
def texts_of(language: str) -> tuple[str, ...]:
    """Every text of our catalogues in ``language`` (English: the templates' source texts)."""
    return tuple(text for _, table in language_tables(language) for text in _strings(table))


def otree_strings() -> list[str]:
    """oTree's built-in English strings (the msgids of its translation template)."""
    pot = Path(importlib.util.find_spec("otree").origin).parent / "locale" / "django.pot"  # found, not imported
    ids = re.findall(r'^msgid(?:_plural)? "(.*)"$', pot.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return [text for text in ids if text]


@functools.cache
def material_texts(language: str) -> tuple[str, ...]:
    """Every string of our bundled social_eval material in ``language`` (rubric and sample episodes)."""
    from backend.social.bundled import bundled_episodes_path, bundled_rubric_path

    files = [bundled_rubric_path(language), *sorted(bundled_episodes_path(language).glob("*.json"))]
    return tuple(text for path in files for text in _shown(json.loads(path.read_text(encoding="utf-8"))))


_HIDDEN_FIELDS = {"key", "id", "name", "version", "group", "model", "model_rater", "language", "kind", "speaker"}


def _shown(value) -> Iterable[str]:
    """The strings of a material file a participant reads (not its ids, keys, kinds or model labels)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in _HIDDEN_FIELDS:
                yield from _shown(item)
    else:
        yield from (_strings(value) if not isinstance(value, list) else (t for i in value for t in _shown(i)))


# Words of our English material that are also German or Italian words of its translation (loanwords, false friends
# and the surname Price; each read in context by hand).
SHARED_MATERIAL_WORDS = {
    "de": frozenset(
        [
            "all",
            "app",
            "atlas",
            "banking",
            "barista",
            "baristas",
            "budget",
            "café",
            "cousins",
            "croissant",
            "fair",
            "fairness",
            "fan",
            "gut",
            "information",
            "online",
            "per",
            "plan",
            "positive",
            "price",
            "radio",
            "total",
            "warm",
            "will",
            "winter",
        ]
    ),
    "it": frozenset(
        [
            "app",
            "barista",
            "cardigan",
            "catering",
            "decide",
            "email",
            "far",
            "fine",
            "marketing",
            "online",
            "part",
            "price",
            "radio",
            "sale",
            "software",
            "time",
        ]
    ),
}


@functools.cache
def english_vocabulary(language: str, *, material: bool = False) -> frozenset[str]:
    """The English words that must not appear on a page in ``language``. With ``material``, the words our bundled
    English material writes in lower case somewhere are added (so people's names, always capitalised, are not), less
    `SHARED_MATERIAL_WORDS`; the words of the translated material are not subtracted, so an English sentence left in
    it is found."""
    english = set().union(*(words(text) for text in (*texts_of("en"), *otree_strings())))
    own = set().union(*(words(text) for text in texts_of(language)))
    if material:
        lower = set().union(*(set(_WORD.findall(_PLACEHOLDER.sub(" ", text))) for text in material_texts("en")))
        english |= {word for word in lower if word.islower()}
        own |= SHARED_MATERIAL_WORDS.get(language, frozenset())
    return frozenset(english - own)


# An entity a participant reads as written: a text escaped twice (``&amp;amp;`` in the page's source).
ESCAPED_TWICE = re.compile(r"&(?:amp|lt|gt|quot|apos|#x27|#39|#x2F);")


def visible_text(page, *, material: bool = False) -> str:
    """What a participant sees on ``page`` (see the module docstring for what is left out; ``material``: the
    elements marked ``data-material`` are read too)."""
    return page.evaluate(_VISIBLE_TEXT_JS, material)


def english_words(page, language: str, *, material: bool = False) -> list[str]:
    """The English words on ``page`` that a participant reading ``language`` would see, sorted."""
    vocabulary = english_vocabulary(language, material=material)
    return sorted(word for word in words(visible_text(page, material=material)) if word in vocabulary)


def assert_no_english(page, language: str, *, where: str = "", material: bool = False) -> None:
    """Fail, naming the words and the page, when ``page`` shows an English word to a ``language`` reader.

    ``material=True`` (a session on our bundled material, which exists in ``language``) checks the material too:
    only a researcher's own material is left as written. An English page (``language="en"``) passes: the walks that
    check German and Italian pages check English ones with the same calls (and axe-core). In every language, English
    too, no text shows an HTML entity (``&amp;``, ``&#x27;``): a text escaped twice (by its code, then by the template)."""
    shown = visible_text(page, material=True)
    twice = sorted(set(ESCAPED_TWICE.findall(shown)))
    assert not twice, (
        f"Text escaped twice on {where or page.url}: {', '.join(twice)}\n--- the page reads:\n{shown[:3000]}"
    )
    if language == "en":
        return
    found = english_words(page, language, material=material)
    assert not found, (
        f"English words on a {language} page {where or page.url}: {', '.join(found)}\n--- the page reads:\n"
        + visible_text(page, material=material)[:3000]
    )
