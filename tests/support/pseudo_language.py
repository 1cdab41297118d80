"""A language made at test time from the English templates: what a lab adding a language does, done by a program.

`write_pseudo_language(folder)` writes ``<folder>/xx/LC_MESSAGES/<domain>.po`` for every domain from its template
(``locale/<domain>.pot``), each text pseudo-localised (`pseudo`): every letter a look-alike accented one, so no word of
it is an English word, while placeholders, tags and entities stay as they are. Given to a server or a test as
``LAB_LOCALE_DIRS=<folder>``, ``xx`` becomes one of the languages (``backend.core.catalogues.languages``) with no
Python change: tests/backend/test_catalogues.py and tests/browser/test_new_language.py.
"""

from __future__ import annotations

import re
from pathlib import Path

from backend.core import catalogues

LANGUAGE = "xx"
_LOOK_ALIKES = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "ȧƀƈḓḗƒɠħīĵķŀḿƞǿƥɋřşŧŭṽẇẋẏẑȦƁƇḒḖƑƓĦĪĴĶĿḾȠǾƤɊŘŞŦŬṼẆẊẎẐ",
)
_KEPT = re.compile(r"(\{[^{}]*\}|<[^<>]*>|&[a-z]+;|%\w)")


def pseudo(text: str) -> str:
    """``text`` with every letter outside placeholders, tags and entities replaced by a look-alike.

    >>> pseudo("Wait {seconds} s, <b>then</b> go&nbsp;on.")
    'Ẇȧīŧ {seconds} ş, <b>ŧħḗƞ</b> ɠǿ&nbsp;ǿƞ.'
    """
    return "".join(part if _KEPT.fullmatch(part) else part.translate(_LOOK_ALIKES) for part in _KEPT.split(text))


def write_pseudo_language(folder: Path, *, language: str = LANGUAGE, skip: tuple[str, str] | None = None) -> Path:
    """Write ``language``'s catalogues of every domain into ``folder`` (``skip``: a ``(domain, key)`` left out, to
    make one incomplete); ``folder``."""
    import io

    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po, write_po

    for domain in catalogues.DOMAINS:
        with catalogues.pot_path(domain).open("rb") as handle:
            template = read_po(handle)
        catalog = Catalog(locale=None, domain=domain, fuzzy=False)
        for message in template:
            if not message.id or (domain, message.context) == skip:
                continue
            string = tuple(pseudo(text) for text in message.id) if message.pluralizable else pseudo(message.id)
            catalog.add(message.id, string, context=message.context, flags=message.flags)
        path = folder / language / "LC_MESSAGES" / f"{domain}.po"
        path.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        write_po(buffer, catalog, width=116)
        text = buffer.getvalue().decode("utf-8")
        header = f'"Language: {language}\\n"\n"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n'
        path.write_text(text.replace('msgstr ""\n', 'msgstr ""\n' + header, 1), encoding="utf-8")
    return folder
