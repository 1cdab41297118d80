"""The Rate page's time per rating step, as the browser measured it, judged before it is stored.

The page shows one rating (agent x dimension) at a time; its script adds up the time each step was on screen and
posts ``{"rating_1_1": 12.4, ...}`` (seconds) with the form. A browser can send anything, so the server keeps the
timings only when they are plausible: one per step of the form (``fields``), each a finite number of at least 0, and
together no more than the page's own measured time (``seconds_spent``, from showing the page to its submission) plus
a slack of ``SLACK_S`` + 1 %. A reload restarts the browser's count, so the sum may be smaller, never larger.

>>> fields = ["rating_1_1", "rating_2_1"]
>>> judged_step_seconds('{"rating_1_1": 12.44, "rating_2_1": 3}', fields=fields, seconds_spent=20)
({'rating_1_1': 12.4, 'rating_2_1': 3.0}, '')
>>> judged_step_seconds('{"rating_1_1": 50, "rating_2_1": 3}', fields=fields, seconds_spent=20)[1]
'the steps add up to 53.0 s, more than the 20.0 s the page was open'
>>> judged_step_seconds('', fields=fields, seconds_spent=20)
(None, 'no timings were sent')
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

SLACK_S = 2.0
MAX_CHARS = 4000  # 20 steps of a long number each; a forged megabyte is refused unread


def judged_step_seconds(
    raw: object, *, fields: Sequence[str], seconds_spent: float | None
) -> tuple[dict[str, float] | None, str]:
    """(seconds per step rounded to 0.1 s, "") when ``raw`` is plausible, else (None, why not)."""
    if not isinstance(raw, str) or not raw.strip():
        return None, "no timings were sent"
    if len(raw) > MAX_CHARS:
        return None, f"the timings are longer than {MAX_CHARS} characters"
    try:
        found = json.loads(raw)
    except ValueError:
        return None, "the timings are not JSON"
    if not isinstance(found, dict) or set(found) != set(fields):
        return None, "the timings do not name each step of the form once"
    times = {}
    for field in fields:
        value = found[field]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            return None, f"the time of {field} is not a number of seconds"
        times[field] = round(float(value), 1)
    total = sum(times.values())
    if seconds_spent is not None and total > seconds_spent * 1.01 + SLACK_S:
        return None, f"the steps add up to {total:.1f} s, more than the {seconds_spent:.1f} s the page was open"
    return times, ""
