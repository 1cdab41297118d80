"""CSV conventions, in one place: spreadsheet-safe cells, their exact inverse, ISO-8601 times, and a tolerant reader.

**Formula neutralisation** (every CSV this product writes, oTree's built-in exports included). Excel, LibreOffice
and Google Sheets run a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return as a formula
(``=HYPERLINK(...)``, DDE payloads). A *text* cell that starts with one of these, or with the quote ``'`` itself,
gets one ``'`` in front; spreadsheets then show it as text. So does text whose first visible character is one of
``= + - @`` behind leading spaces, line breaks or invisible characters, or in a full-width form (``＝``): some
spreadsheets and import dialogs trim or normalise those. Numbers are never touched (a rating of -5 stays the number
-5), and neither is text that is a plain decimal number such as ``-5`` or ``+1.5e3`` (a spreadsheet reads it as
that number, which runs nothing). Reading back is exact: a text cell that starts with ``'`` loses its first
character (``restore_cell``); ``read_csv_any`` does this for every text column, so ``python -m backend report`` reads
neutralised files exactly as they were before neutralisation.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

FORMULA_STARTS = frozenset("=+-@\t\r")
NEUTRALISING_PREFIX = "'"
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def neutralise_cell(value):
    """``value`` made safe for a spreadsheet cell: text starting with ``= + - @``, tab, CR or ``'`` gets a ``'`` prefix.

    Non-text values pass through unchanged; so does text that is a plain decimal number.

    >>> neutralise_cell("=HYPERLINK(\\"http://x\\")")
    '\\'=HYPERLINK("http://x")'
    >>> neutralise_cell("-5"), neutralise_cell(-5), neutralise_cell("@SUM(A1)"), neutralise_cell("'quoted")
    ('-5', -5, "'@SUM(A1)", "''quoted")
    >>> neutralise_cell("-A1-B1"), neutralise_cell("plain text"), neutralise_cell(None)
    ("'-A1-B1", 'plain text', None)
    >>> neutralise_cell(" =1+1"), neutralise_cell("\\xa0\\n@x"), neutralise_cell("＝1+1"), neutralise_cell("-١")
    ("' =1+1", "'\\xa0\\n@x", "'＝1+1", "'-١")
    """
    if not isinstance(value, str) or not value:
        return value
    if value[0] == NEUTRALISING_PREFIX or _starts_like_a_formula(value):
        return NEUTRALISING_PREFIX + value
    return value


def _starts_like_a_formula(text: str) -> bool:
    if text[0] in FORMULA_STARTS:
        return not _PLAIN_NUMBER.fullmatch(text)
    visible = unicodedata.normalize("NFKC", text)
    start = 0
    while start < len(visible) and (visible[start].isspace() or unicodedata.category(visible[start]) in ("Cc", "Cf")):
        start += 1
    visible = visible[start:]
    return bool(visible) and visible[0] in "=+-@" and not _PLAIN_NUMBER.fullmatch(visible)


def restore_cell(value):
    """The exact inverse of `neutralise_cell` for text read from a neutralised file.

    >>> restore_cell("'=1+1"), restore_cell("''quoted"), restore_cell("-5"), restore_cell(3.5)
    ('=1+1', "'quoted", '-5', 3.5)
    >>> all(restore_cell(neutralise_cell(t)) == t for t in ["=x", "'", "''", "-5", "-x", "\\tx", "", "a"])
    True
    """
    if isinstance(value, str) and value.startswith(NEUTRALISING_PREFIX):
        return value[1:]
    return value


def neutralise_row(row):
    """`neutralise_cell` applied to every cell of a list (or the values of a dict, keys kept)."""
    if isinstance(row, dict):
        return {key: neutralise_cell(value) for key, value in row.items()}
    return [neutralise_cell(value) for value in row]


def restore_row(row: dict) -> dict:
    """`restore_cell` applied to every value of a row read with ``csv.DictReader``."""
    return {key: restore_cell(value) for key, value in row.items()}


_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_LINE_BREAK_ESCAPES = {"\\": "\\\\", "\n": "\\n"}
_UNESCAPES = {"\\": "\\", "n": "\n", "r": "\r", "t": "\t"}


def escape_text(text: str | None, *, line_breaks_only: bool = False) -> str:
    r"""Keep free text on one CSV line in any tool: backslash, newline, CR and tab become ``\\``, ``\n``, ``\r``,
    ``\t`` (oTree's own exports flatten line breaks; these stay recoverable with ``unescape_text``). None is "".

    ``line_breaks_only`` is the payoff-reasoning protocol's published form (its ``remarks`` cell): every line end
    (CR LF, CR or LF) becomes ``\n``, backslash becomes ``\\``, and tabs stay as they are.

    >>> escape_text('line one\nline "two"\\ end')
    'line one\\nline "two"\\\\ end'
    >>> unescape_text(escape_text("a\r\nb\tc\\n")) == "a\r\nb\tc\\n"
    True
    >>> escape_text("first\r\nsecond\rthird\t\\ end", line_breaks_only=True)
    'first\\nsecond\\nthird\t\\\\ end'
    """
    if text is None:
        return ""
    text, escapes = str(text), _ESCAPES
    if line_breaks_only:
        text, escapes = text.replace("\r\n", "\n").replace("\r", "\n"), _LINE_BREAK_ESCAPES
    return "".join(escapes.get(char, char) for char in text)


def unescape_text(text: str) -> str:
    """Undo ``escape_text`` (a backslash before any other character is kept as it is)."""
    out, chars = [], iter(text)
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            out.append(_UNESCAPES.get(following, "\\" + following))
        else:
            out.append(char)
    return "".join(out)


def truthy_cell(value) -> bool:
    """A boolean cell read back from any export: ``True``/``1``/``yes`` (text in any case, or numbers) are true; empty,
    ``False``, ``0`` and NaN are false.

    >>> [truthy_cell(v) for v in ("True", " yes ", "1", 1, "false", "0", "", float("nan"))]
    [True, True, True, True, False, False, False, False]
    """
    if isinstance(value, str):
        return value.strip().casefold() in ("true", "1", "yes")
    return bool(value) if value == value else False  # NaN → False


def iso_utc(timestamp: float | None) -> str:
    """A Unix time as ISO-8601 UTC with milliseconds (``Z`` suffix); empty for a missing time.

    >>> iso_utc(0), iso_utc(1764000000.25), iso_utc(None)
    ('1970-01-01T00:00:00.000Z', '2025-11-24T16:00:00.250Z', '')
    """
    if timestamp is None or timestamp == "":
        return ""
    moment = dt.datetime.fromtimestamp(float(timestamp), tz=dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def sniff_separator(sample: str, *, candidates: str = ",;\t") -> str:
    """Return the separator of a CSV sample: the candidate that splits the header line most often.

    >>> sniff_separator("a;b;c\\n1;2;3\\n")
    ';'
    >>> sniff_separator("a,b\\n1,2\\n")
    ','
    """
    if not sample:
        raise ValueError("The CSV sample is empty, so its separator cannot be recognised.")
    header = sample.splitlines()[0]
    try:
        return csv.Sniffer().sniff(header, delimiters=candidates).delimiter
    except csv.Error:
        return max(candidates, key=header.count)


def read_csv_any(path: str | Path, **kwargs) -> pd.DataFrame:
    """Read a CSV file with its separator recognised, a UTF-8 byte-order mark removed and neutralised text restored.

    Text columns go through `restore_cell`, so a cell written as ``'=1+1`` is read as ``=1+1`` again.
    """
    import pandas as pd  # loaded by the readers that need it, not by every page module importing this one

    path = Path(path)
    with path.open(encoding="utf-8-sig", newline="") as handle:
        sample = handle.read(64 * 1024)
    frame = pd.read_csv(path, sep=sniff_separator(sample), encoding="utf-8-sig", **kwargs)
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]) and not pd.api.types.is_bool_dtype(frame[column]):
            frame[column] = frame[column].map(restore_cell)
    return frame
