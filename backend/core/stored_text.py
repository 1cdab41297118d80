"""Text that every supported database can store.

PostgreSQL's ``text`` type cannot hold the NUL character (U+0000), and no database driver can encode a lone UTF-16
surrogate (U+D800..U+DFFF, which JSON's ``\ud800`` escapes can produce): an insert with either fails, so a model
reply, or a refused input quoted in its error, that carried one would break the game storing it. Such text keeps
everything else and shows each of them as U+FFFD, the replacement character, which readers recognise as
"unreadable".
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(text: str) -> str:
    """``text`` with every NUL and lone surrogate replaced by U+FFFD.

    >>> storable("a\\x00b"), storable("I offer \\ud800 hats"), storable("plain")
    ('a\\ufffdb', 'I offer \\ufffd hats', 'plain')
    """
    return _UNSTORABLE.sub(REPLACEMENT, text)


def typed_length(text: str) -> int:
    """The length of form text as the person saw it: a browser posts a textarea's line break as CR LF but counts it
    as one character (``maxlength``), so limits stated to people count it as one too.

    >>> typed_length("one\\r\\ntwo"), typed_length("one\\ntwo")
    (7, 7)
    """
    return len(text.replace("\r\n", "\n"))
