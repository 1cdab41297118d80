"""A text as masks read it: its matching view (``matching_view``: each character in Unicode's compatibility form,
any dash as "-", invisible characters left out, escaped line breaks as spaces) with, for each of its characters, the
character of the text it came from, so that what a pattern finds in the view is replaced in the text as written
(``masked``, ``ViewPattern``). A person types a Prolific ID with the en dashes a phone puts in or with zero-width
spaces; the release's masks (``backend.core.release.MASKS``) see "5f3c-2a1b" and "5f3c2a1b".

>>> ViewPattern(re.compile("[0-9a-f]{8}")).sub("[id]", "id 5f3c\u20132a1b? no: 5f3c\u200b2a1b")
'id 5f3c–2a1b? no: [id]'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

# What the matching view leaves out or reads otherwise (``matching_view``).
DASHES = "\u2212\u2053\u2e3a\u2e3b\u30fc\uff70"  # minus, swung dash, two- and three-em dashes, prolonged sound marks
INVISIBLE_CATEGORIES = ("Cf", "Mn")  # zero-width spaces and joiners, soft hyphens, direction marks; combining marks
ESCAPED_BREAKS = re.compile(r"\\+[nrt]?")  # an export's "\n" (backslash, n) and JSON's "\\n"


def matching_view(text: str) -> tuple[str, list[int] | None]:
    r"""The text the masks of a release look at (``backend.core.release.mask_text``), and for each of its characters
    the index of the character of ``text`` it came from (None: the same index). Each character is read in Unicode's
    compatibility form (NFKC: full-width digits as digits, a no-break space as a space), dashes as "-", invisible
    characters (zero-width spaces and joiners, soft hyphens, direction and combining marks) left out, and backslash
    escapes of line breaks and tabs (``\n``, as the exports write a line break, and JSON's ``\\n``) as spaces:
    "5f3c–2a1b" and "5f3c\u200b2a1b" read "5f3c-2a1b" and "5f3c2a1b".

    >>> matching_view("id\u00a0\uff15f3c\u20132a\u200b1b")
    ('id 5f3c-2a1b', [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12])
    >>> matching_view("a\\nb")
    ('a  b', None)
    """
    origin = None
    if not text.isascii():
        chars, origin = [], []
        for at, char in enumerate(text):
            for read in unicodedata.normalize("NFKC", char):
                category = unicodedata.category(read)
                if category in INVISIBLE_CATEGORIES:
                    continue
                chars.append("-" if category == "Pd" or read in DASHES else read)
                origin.append(at)
        text = "".join(chars)
    return ESCAPED_BREAKS.sub(lambda found: " " * len(found.group(0)), text), origin


def masked(text: str, pattern: re.Pattern, mask: str | Callable[[re.Match], str]) -> str:
    """``text`` with each match of ``pattern`` in its matching view (``matching_view``) replaced by ``mask`` (or what
    ``mask(match)`` gives; a match it gives back unchanged stays as written), from the first to the last character
    of ``text`` the match was read from."""
    view, origin = matching_view(text)
    pieces, done = [], 0
    for found in pattern.finditer(view):
        replacement = mask(found) if callable(mask) else mask
        if replacement == found.group(0):
            continue
        start, end = (
            (found.start(), found.end()) if origin is None else (origin[found.start()], origin[found.end() - 1] + 1)
        )
        if start < done:  # two matches read from one character (a ligature): the first one masked it
            continue
        pieces += [text[done:start], replacement]
        done = end
    return "".join(pieces) + text[done:] if pieces else text


@dataclass(frozen=True)
class ViewPattern:
    """A regular expression looked for in a text's matching view (``matching_view``: any dash as "-", zero-width
    characters left out, full-width digits as digits, escaped line breaks as spaces); ``sub`` replaces what it finds
    in the text as written (``masked``), ``search`` finds it in the view.

    >>> ViewPattern(re.compile("a-b")).sub("[x]", "a\u2013b, a\u200b-b")
    '[x], [x]'
    """

    regex: re.Pattern

    def search(self, text: str) -> re.Match | None:
        return self.regex.search(matching_view(text)[0])

    def sub(self, mask: str | Callable[[re.Match], str], text: str) -> str:
        return masked(text, self.regex, mask)
