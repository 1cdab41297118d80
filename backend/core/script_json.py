"""JSON written into an HTML ``<script>`` element: one rule for every page and admin report.

An HTML parser ends a script at ``</script>`` and treats ``<!--`` specially, whatever the JavaScript around them, and
plain JSON escapes neither. Chat messages, model replies and researchers' files all reach such scripts (oTree's
``js_vars``, the admin reports' chart data), so ``<``, ``>`` and ``&`` are written as ``\\u003c``, ``\\u003e`` and
``\\u0026``, and U+2028 and U+2029 (line ends to older JavaScript) as ``\\u2028`` and ``\\u2029``. JavaScript and any
JSON parser read the escapes back as the same characters.
"""

from __future__ import annotations

import json
from typing import Any

_SCRIPT_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def script_safe(json_text: str) -> str:
    """``json_text`` with the characters that can break out of a ``<script>`` element written as JSON escapes.

    >>> script_safe('{"m": "</script><!-- & \\u2028"}')
    '{"m": "\\\\u003c/script\\\\u003e\\\\u003c!-- \\\\u0026 \\\\u2028"}'
    """
    return json_text.translate(_SCRIPT_ESCAPES)


def script_json(value: Any, **dumps_options: Any) -> str:
    """``json.dumps(value, **dumps_options)`` made script-safe (`script_safe`).

    >>> script_json({"label": "Believ <!--<script> x"})
    '{"label": "Believ \\\\u003c!--\\\\u003cscript\\\\u003e x"}'
    >>> json.loads(script_json("a&<b>")) == "a&<b>"
    True
    """
    return script_safe(json.dumps(value, **dumps_options))
