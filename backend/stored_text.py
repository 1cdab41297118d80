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
