"""Reading a researcher's files (instances, items, episodes, rubrics, logs) with plain-word errors.

Files made on Windows often start with a UTF-8 byte-order mark, and files from older tools may not be UTF-8 at all.
Both readers accept a BOM, refuse other encodings with the byte position and line, refuse files over a size bound
before reading them whole, and say which file (and, for JSON, which line and column) is wrong. Every message names
the file as the researcher wrote it (``what``), e.g. ``instances_file 'data/x.json'``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MAX_FILE_BYTES = 20 * 1024 * 1024  # researcher files are specifications and samples, not data sets


def decode_text(raw: bytes, *, what: str) -> str:
    """``raw`` as UTF-8 text (a leading byte-order mark dropped), or a ValueError naming the first bad byte.

    >>> decode_text("\\ufeffHallo".encode(), what="x.txt")
    'Hallo'
    >>> decode_text(b"line 1\\nna\\xefve", what="x.txt")
    Traceback (most recent call last):
    ...
    ValueError: x.txt is not UTF-8 text: byte 0xef at line 2, position 10 cannot be read. Save the file as UTF-8 and try again.
    """
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ValueError(
            f"{what} is not UTF-8 text: byte 0x{raw[error.start]:02x} at line {line}, position {error.start + 1} cannot be "
            "read. Save the file as UTF-8 and try again."
        ) from None


def read_text(path: str | Path, *, what: str, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of a file, refusing a missing file, a folder, or one larger than ``max_bytes``."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{what} was not found (looked for {path}).")
    size = path.stat().st_size
    if size > max_bytes:
        raise ValueError(f"{what} is {size:,} bytes, more than the {max_bytes:,} bytes allowed.")
    return decode_text(path.read_bytes(), what=what)


def parse_json(text: str, *, what: str) -> Any:
    """JSON from text, or a ValueError with the line and column of the first error.

    >>> parse_json('{"a": 1,}', what="items.json")
    Traceback (most recent call last):
    ...
    ValueError: items.json is not valid JSON: line 1, column 9: Expecting property name enclosed in double quotes.
    >>> parse_json("[" * 100_000, what="deep.json")
    Traceback (most recent call last):
    ...
    ValueError: deep.json nests lists or objects too deeply to be read.
    """
    try:
        return json.loads(text.lstrip("\ufeff"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{what} is not valid JSON: line {error.lineno}, column {error.colno}: {error.msg}.") from None
    except RecursionError:
        raise ValueError(f"{what} nests lists or objects too deeply to be read.") from None


def read_json(path: str | Path, *, what: str, max_bytes: int = MAX_FILE_BYTES) -> Any:
    """`read_text` then `parse_json`."""
    return parse_json(read_text(path, what=what, max_bytes=max_bytes), what=what)
