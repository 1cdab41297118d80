"""What a study asks of one participant and how long it takes: counts and an estimate in minutes.

The estimate is ``START_S + units * seconds_per_unit`` where ``seconds_per_unit`` comes from a pilot's measured page
times when a pilot ran (the median seconds per unit) and otherwise from ``DEFAULT_SECONDS`` below, the one table of
documented defaults (our own guesses from the apps' pages, not measured):

| app | unit | default seconds per unit | why |
|---|---|---|---|
| (every app) | consent, instructions and the last page | 120 | reading a page of information twice |
| dond | one negotiation (Pairing excluded) | 420 | a few offers and messages, each a short read |
| social_eval | one conversation with its ratings | 14 ratings x 25 s + 90 s reading = 440 | 20-character explanations |
| payoff_reasoning_eval | one log judged sentence by sentence | 180 | a short log with a dozen sentences |
| bias_tests | one test item | 40 | read, choose, set confidence |

Within a unit, ``MESSAGE_S`` is the time of one move in DoND (read the partner's message, write one's own or an
offer): the game's 420 s over the 12 moves of a game at the default ``max_messages`` (5 messages each, then a
proposal each), 35 s.

``launch_check.pay_findings`` turns the estimate into pay per hour. ``TIME_LIMITS`` names each app's session keys
that limit the time of one unit; ``launch_check.time_limit_findings`` holds them against the unit's default seconds.
``PARTNER_LIMITS`` names the keys that end a person-vs-person game when a partner seems slow or gone;
``launch_check.partner_limit_findings`` holds them against ``MESSAGE_S``, the pages' heartbeats and ``START_S``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

START_S = 120
MIN_MEASURED = 3  # finished participants whose median time replaces the estimate (a pilot's few places)
DEFAULT_SECONDS = {"dond": 420, "social_eval": 14 * 25 + 90, "payoff_reasoning_eval": 180, "bias_tests": 40}
UNIT_NAMES = {"dond": "game", "social_eval": "conversation", "payoff_reasoning_eval": "log", "bias_tests": "item"}
MESSAGE_S = {"dond": 420 / 12}  # one move of a person: the game's default seconds over its 12 moves (module doc)
# Session keys (seconds) that cut one unit short: the game's time limit, how long an annotation item stays reserved.
TIME_LIMITS = {
    "dond": ("game_timeout_s",),
    "social_eval": ("reservation_timeout_s",),
    "payoff_reasoning_eval": ("reservation_timeout_s",),
}
# Person vs person (DoND): a turn left silent, a page closed, a wait for a partner this long ends the person's game.
PARTNER_LIMITS = {"dond": ("turn_timeout_s", "disconnect_timeout_s", "pairing_timeout_s")}


def time_limits(app: str, config: Mapping) -> dict[str, float]:
    """The app's per-unit time limits (session key -> seconds) set in ``config``; keys it leaves out are not read.

    >>> time_limits("dond", {"game_timeout_s": 45}), time_limits("bias_tests", {}), time_limits("dond", {})
    ({'game_timeout_s': 45.0}, {}, {})
    >>> time_limits("social_eval", {"reservation_timeout_s": "a while"})  # unreadable: left to creation's checks
    {}
    """
    return _seconds(config, TIME_LIMITS.get(app, ()))


def partner_limits(app: str, config: Mapping) -> dict[str, float]:
    """The app's person-vs-person limits (session key -> seconds) set in ``config`` (``PARTNER_LIMITS``).

    >>> partner_limits("dond", {"turn_timeout_s": 10, "pairing_timeout_s": "10"}), partner_limits("bias_tests", {})
    ({'turn_timeout_s': 10.0, 'pairing_timeout_s': 10.0}, {})
    """
    return _seconds(config, PARTNER_LIMITS.get(app, ()))


def _seconds(config: Mapping, keys) -> dict[str, float]:
    found = {}
    for key in keys:
        try:
            found[key] = float(config[key])
        except (KeyError, TypeError, ValueError):
            continue
    return found


def units(app: str, config: Mapping) -> int:
    """How many units (games, conversations, logs, items) one participant does under a session config.

    >>> units("social_eval", {"episodes_per_annotator": 3, "attention_checks": 1})
    4
    >>> units("payoff_reasoning_eval", {"logs_per_judge": 6}), units("dond", {})
    (6, 1)
    """
    if app == "social_eval":
        return int(config.get("episodes_per_annotator", 3)) + int(config.get("attention_checks", 0) or 0)
    if app == "payoff_reasoning_eval":
        return int(config.get("logs_per_judge", 6))
    if app == "bias_tests":
        return int(config.get("bias_items_count", 0) or 10)  # the session's own count, where the caller knows it
    if app == "dond":
        return 1
    raise ValueError(f"No workload is known for the app {app!r}; known: {', '.join(DEFAULT_SECONDS)}.")


def estimate_minutes(
    app: str, config: Mapping, *, units_done: int | None = None, measured_s: Sequence[float] = ()
) -> tuple[int, str]:
    """Estimated minutes for one participant (rounded up) and where the figure comes from.

    ``units_done``: the participant's own count where it is known (their bias questions), else ``units(app, config)``.
    ``measured_s``: a pilot's seconds per unit, one value per unit done; their median replaces the default.

    >>> estimate_minutes("social_eval", {"episodes_per_annotator": 3, "attention_checks": 1})
    (32, 'default times (backend/core/workload.py)')
    >>> estimate_minutes("dond", {}, measured_s=[200, 300, 1000])
    (7, 'pilot: median 300 s per unit over 3 units')
    >>> estimate_minutes("bias_tests", {}, units_done=20)[0]
    16
    """
    count = units_done if units_done is not None else units(app, config)
    if measured_s:
        per_unit = statistics.median(float(s) for s in measured_s)
        source = f"pilot: median {per_unit:.0f} s per unit over {len(measured_s)} units"
    else:
        per_unit, source = DEFAULT_SECONDS[app], "default times (backend/core/workload.py)"
    return math.ceil((START_S + count * per_unit) / 60), source


def measured_minutes(durations_s: Sequence[float]) -> int | None:
    """The median minutes (rounded up) of finished participants' times from first to last page, as Prolific judges
    pay; None with fewer than ``MIN_MEASURED`` of them. At least 1: oTree stores page times in whole seconds, so a
    very fast run can measure 0 s, and 0 minutes would hide the pay figure.

    >>> measured_minutes([600, 900, 3000]), measured_minutes([600, 900]), measured_minutes([0, 0, 0.3])
    (15, None, 1)
    """
    if len(durations_s) < MIN_MEASURED:
        return None
    return max(1, math.ceil(statistics.median(float(s) for s in durations_s) / 60))
