"""Text that every supported database can store.

PostgreSQL's ``text`` type cannot hold the NUL character (U+0000): an insert with one fails, so a model reply, or a
refused input quoted in its error, that carried one would break the game storing it (SQLite stores it). Such text
keeps everything else and shows NUL as U+FFFD, the replacement character, which readers recognise as "unreadable".
"""

from __future__ import annotations

REPLACEMENT = "\ufffd"


def storable(text: str) -> str:
    """``text`` with every NUL replaced by U+FFFD.

    >>> storable("a\\x00b"), storable("plain")
    ('a\\ufffdb', 'plain')
    """
    return text.replace("\x00", REPLACEMENT) if "\x00" in text else text
