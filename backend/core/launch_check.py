"""What would hurt a study before its first participant arrives: the launch check's rules, from plain facts.

``lab_server/study_pages.py`` gathers the facts of a session (its keys, one real model call, its material, its room)
and shows the findings on the session's Launch check page; ``python -m backend launch-check`` prints the same for a
config. Nothing here blocks anything: each finding has a ``severity`` (``problem``: participants would be stranded,
underpaid or served by the wrong model; ``warning``: worth a look; ``ok``), ``what`` is wrong and the ``fix``.

Rules (each a function below, keyword-only facts, one finding or none):

- codes: no ``completion_code`` strands people on the last page; no ``screenout_code`` leaves a screened-out person
  with no next step (only where the study can screen out: with consent or a comprehension check); the same code
  for both (compared without regard to case: ``same_code``) makes Prolific count screened-out people as finished
  (and the other way round).
- model: the one real call failed, took longer than ``SLOW_S`` seconds, or was answered by another model than the
  config names.
- language: material that declares a language other than the session's.
- places: ``places * per_person`` ratings against ``items * per_item`` needed (k annotators per item).
- pay: ``pay / (minutes / 60)`` against the researcher's floor per hour (``min_pay_per_hour``).
- pairing: person-vs-person DoND with an odd number of places (the last person to arrive is never paired).
- time limits: a game's or a reservation's time limit below the time one unit takes by the workload estimate
  (``workload.TIME_LIMITS``): most people would be cut off or lose their item half-way.
- partner limits: person-vs-person DoND's ``turn_timeout_s``, ``disconnect_timeout_s`` and ``pairing_timeout_s``
  (``workload.PARTNER_LIMITS``) below what a person needs: a move (``workload.MESSAGE_S``), the heartbeat of the
  slowest page that tells the server its person is there, a partner's way through the consent page
  (``workload.START_S``); most games would end as ``partner_timeout`` or ``partner_left``, or most people unpaired.
- room (``room_check.room_findings``): a session in no room or in a room tied to other configs; a room taken by a newer session while this one
  still had people working or places free (naming the session that holds the room now), and a session that took
  its room from such a study, directly or through sessions between them (``lab_server/creation.py`` records each
  takeover when it happens; ``room_check.py`` words them, ``lab_server/study_pages.py`` reads the chain;
  docs/decisions/0001-a-room-taken-from-a-live-study.md).

Session keys other than the fee cannot be changed after creation (oTree's Edit page sets only the fee, the currency
per point, the label and the comment), so a fix that changes a key says: create the session again, in its room.
"""

from __future__ import annotations

import math

SEVERITIES = ("problem", "warning", "ok")
SLOW_S = 10.0  # one model call slower than this makes a participant wait visibly at every turn


def finding(severity: str, what: str, fix: str = "") -> dict[str, str]:
    if severity not in SEVERITIES:
        raise ValueError(f"The severity must be one of {', '.join(SEVERITIES)}, not {severity!r}.")
    return dict(severity=severity, what=what, fix=fix)


def codes_findings(*, completion_code: str, screenout_code: str, can_screen_out: bool) -> list[dict]:
    """Missing Prolific codes.

    >>> [f["severity"] for f in codes_findings(completion_code="", screenout_code="", can_screen_out=True)]
    ['problem', 'warning']
    >>> codes_findings(completion_code="C1", screenout_code="", can_screen_out=False)[0]["severity"]
    'ok'
    >>> [f["severity"] for f in codes_findings(completion_code="C1", screenout_code="C1", can_screen_out=True)]
    ['problem']
    >>> [f["severity"] for f in codes_findings(completion_code="ABC123", screenout_code="abc123", can_screen_out=True)]
    ['problem']
    """
    found = []
    if not completion_code:
        found.append(
            finding(
                "problem",
                "No completion code (session key completion_code): the last page shows no code and does not send "
                "people back to Prolific, so they cannot submit.",
                "Create the session again in its room (Rooms, the room's page) with the completion code from the "
                "study's page on Prolific in completion_code, before the first participant arrives: the Edit page "
                "cannot set it, and the new session takes the room.",
            )
        )
    if not screenout_code and can_screen_out:
        found.append(
            finding(
                "warning",
                "No screen-out code (session key screenout_code): someone who declines consent or fails a check "
                "sees no code and no next step.",
                "Add a screen-out completion code on Prolific (e.g. 'screen out with payment') and create the "
                "session again in its room with it in screenout_code (the Edit page cannot set it).",
            )
        )
    if completion_code and same_code(completion_code, screenout_code):
        shown = repr(completion_code)
        if completion_code != screenout_code:
            shown = (
                f"{completion_code!r} and {screenout_code!r}, which differ only in upper and lower case or spaces, "
                "and a code is read without regard to them"
            )
        found.append(
            finding(
                "problem",
                f"The completion code and the screen-out code are the same ({shown}): Prolific cannot "
                "tell people who finished from people who were screened out, and pays or rejects them alike.",
                "Create the session again in its room with the two different codes Prolific gave you "
                "(completion_code for finishing, screenout_code for screening out); the Edit page cannot set them.",
            )
        )
    return found or [finding("ok", "Completion and screen-out codes are set.")]


def same_code(first: str, second: str) -> bool:
    """Whether two Prolific codes are the same code: compared without regard to case or surrounding spaces.
    Participants type a code shown on a page into Prolific in whatever case they read it, and Prolific's own
    documentation does not promise that ``abc123`` and ``ABC123`` are told apart; the launch check treats them as one
    code (docs/decisions/0002-partner-limits-and-codes-in-the-launch-check.md).

    >>> same_code("ABC123", "abc123"), same_code("ABC123", " ABC123 "), same_code("ABC123", "ABC124")
    (True, True, False)
    """
    return first.strip().casefold() == second.strip().casefold()


def model_findings(*, model: str, served: str | None, latency_s: float | None, error: str | None) -> list[dict]:
    """The result of one real call to the config's model.

    >>> model_findings(model="m1", served="m2", latency_s=0.3, error=None)[0]["what"]
    "The endpoint answered as model 'm2', not 'm1' as the config names (0.30 s)."
    >>> model_findings(model="m1", served="m1", latency_s=12.5, error=None)[0]["severity"]
    'warning'
    >>> model_findings(model="m1", served=None, latency_s=None, error="connection refused")[0]["severity"]
    'problem'
    """
    shown = f" ({latency_s:.2f} s)" if latency_s is not None else ""
    if error:
        return [
            finding(
                "problem",
                f"The model endpoint did not answer for model {model!r}{shown}: {error}",
                "Check OPENAI_BASE_URL and OPENAI_API_KEY on the server and the session key llm_model; start the "
                "model server; then reload this page.",
            )
        ]
    if served and served != model:
        return [
            finding(
                "problem",
                f"The endpoint answered as model {served!r}, not {model!r} as the config names{shown}.",
                "Point OPENAI_BASE_URL at the server that serves the model, or set llm_model to the model it serves.",
            )
        ]
    if latency_s is not None and latency_s > SLOW_S:
        return [
            finding(
                "warning",
                f"Model {model!r} answered, but slowly: {latency_s:.2f} s for one short call (over {SLOW_S:.0f} s).",
                "Participants wait this long at every model turn: use a faster endpoint or model, or check its load.",
            )
        ]
    return [finding("ok", f"Model {model!r} answered in {latency_s or 0:.2f} s.")]


def language_findings(*, language: str, material: dict[str, str]) -> list[dict]:
    """Material (name -> the language it declares) in another language than the session.

    >>> language_findings(language="de", material={"bias items": "en"})[0]["severity"]
    'problem'
    >>> language_findings(language="en", material={})
    []
    """
    other = {name: declared for name, declared in material.items() if declared and declared != language}
    if not other:
        return [finding("ok", f"The material is in the session's language ({language}).")] if material else []
    listing = ", ".join(f"{name} ({declared})" for name, declared in other.items())
    return [
        finding(
            "problem",
            f"The session is in {language!r} but its material is not: {listing}.",
            "Give the session material in its language, or set the session key language to the material's.",
        )
    ]


def places_findings(*, places: int, per_person: int, items: int, per_item: int, unit: str = "item") -> list[dict]:
    """Places against what the items need: ``items * per_item`` tasks, ``places * per_person`` done at most.

    >>> places_findings(places=4, per_person=3, items=10, per_item=2, unit="episode")[0]["what"]
    'Too few places: 4 places x 3 episodes each = 12 ratings, but 10 episodes x 2 annotators need 20.'
    >>> places_findings(places=40, per_person=3, items=10, per_item=2, unit="episode")[0]["severity"]
    'warning'
    """
    if places <= 0 or per_person <= 0 or items <= 0 or per_item <= 0:
        return []
    offered, needed = places * per_person, items * per_item
    counts = f"{places} places x {per_person} {unit}s each = {offered} ratings, but {items} {unit}s x {per_item}"
    if offered < needed:
        return [
            finding(
                "warning",
                f"Too few places: {counts} annotators need {needed}.",
                f"Make the session (and Prolific's places) at least {math.ceil(needed / per_person)} large, or "
                "lower the annotators per item.",
            )
        ]
    spare = places - math.ceil(needed / per_person)
    if spare > max(2, places // 5):
        return [
            finding(
                "warning",
                f"More places than the {unit}s can cover: {items} {unit}s x {per_item} = {needed} ratings fill "
                f"{math.ceil(needed / per_person)} places; {spare} of {places} would find nothing left to rate.",
                "Offer fewer places on Prolific, add material, or raise the annotators per item. Keep a few spare "
                "places for returns.",
            )
        ]
    return [finding("ok", f"{places} places cover {items} {unit}s x {per_item}.")]


def pay_findings(*, minutes: float, pay: float, currency: str, floor_per_hour: float | None) -> list[dict]:
    """Pay per hour from the estimated duration: ``pay / (minutes / 60)`` against the researcher's floor.

    >>> pay_findings(minutes=20, pay=2.0, currency="GBP", floor_per_hour=9)[0]["what"]
    'Estimated 20 min for 2.00 GBP: 6.00 GBP per hour, below your floor of 9.00 GBP per hour.'
    >>> pay_findings(minutes=20, pay=3.0, currency="GBP", floor_per_hour=None)[0]["severity"]
    'warning'
    """
    if minutes <= 0:
        return []
    per_hour = pay / (minutes / 60)
    said = f"Estimated {minutes:.0f} min for {pay:.2f} {currency}: {per_hour:.2f} {currency} per hour"
    if floor_per_hour is None or floor_per_hour <= 0:
        return [
            finding(
                "warning",
                said + "; no floor is set.",
                "Set the session key min_pay_per_hour to the pay per hour you want to keep (Prolific has a minimum).",
            )
        ]
    if per_hour < floor_per_hour:
        return [
            finding(
                "problem",
                f"{said}, below your floor of {floor_per_hour:.2f} {currency} per hour.",
                f"Pay at least {floor_per_hour * minutes / 60:.2f} {currency} (participation_fee), or ask less.",
            )
        ]
    return [finding("ok", f"{said} (floor {floor_per_hour:.2f}).")]


def pairing_findings(*, places: int, two_people: bool) -> list[dict]:
    """Person-vs-person games pair people by arrival: with an odd number of places the last one is never paired.

    >>> pairing_findings(places=7, two_people=True)[0]["severity"]
    'problem'
    >>> pairing_findings(places=8, two_people=True)[0]["severity"], pairing_findings(places=7, two_people=False)
    ('ok', [])
    """
    if not two_people or places <= 0:
        return []
    if places % 2:
        return [
            finding(
                "problem",
                f"{places} places for a game of two people: when every place is taken, the last person waits for a "
                "partner who never comes and leaves unpaired, with no game and no bonus.",
                f"Create the session again in its room with an even number of places ({places + 1}, or "
                f"{places - 1}), and offer that many places on Prolific.",
            )
        ]
    return [finding("ok", f"{places} places pair up into {places // 2} games.")]


def time_limit_findings(*, limits: dict[str, float], unit_s: float, unit: str) -> list[dict]:
    """Time limits (session key -> seconds) for one unit against the seconds one unit takes by the workload estimate:
    below it most people are cut off (a problem), below twice it the slower half may be (a warning).

    >>> time_limit_findings(limits={"game_timeout_s": 45}, unit_s=420, unit="game")[0]["what"]
    'The time limit game_timeout_s is 45 s, but one game takes about 420 s by the workload estimate: most people would be cut off.'
    >>> [f["severity"] for f in time_limit_findings(limits={"a_s": 600, "b_s": 1800}, unit_s=420, unit="game")]
    ['warning', 'ok']
    """
    found = []
    for key, seconds in limits.items():
        if not seconds or seconds <= 0 or unit_s <= 0:
            continue
        said = (
            f"The time limit {key} is {seconds:g} s, but one {unit} takes about {unit_s:g} s by the workload estimate"
        )
        fix = (
            f"Create the session again in its room with {key} of at least {2 * unit_s:g} (twice the estimate, for "
            "slower readers); the Edit page cannot set it."
        )
        if seconds < unit_s:
            found.append(finding("problem", said + ": most people would be cut off.", fix))
        elif seconds < 2 * unit_s:
            found.append(finding("warning", said + ": the slower half of them could be cut off.", fix))
        else:
            found.append(
                finding("ok", f"The time limit {key} ({seconds:g} s) leaves room for one {unit} ({unit_s:g} s).")
            )
    return found


def partner_limit_findings(
    *, limits: dict[str, float], message_s: float, heartbeats_s: dict[str, float], start_s: float
) -> list[dict]:
    """Person-vs-person limits (session key -> seconds) against what a person needs; each key below its first
    threshold is a problem (most games or most waits would end by it), below its second a warning:

    | key | problem below | warning below | why |
    |---|---|---|---|
    | ``turn_timeout_s`` | 2 x ``message_s`` | 4 x ``message_s`` | a game of a dozen moves ends at its slowest turn, and a turn is also spent re-reading the items and the offers |
    | ``disconnect_timeout_s`` | the slowest heartbeat, inclusive | 3 x it | between two heartbeats a reader looks gone; one late or lost heartbeat (a reconnecting page) must not end the game |
    | ``pairing_timeout_s`` | ``start_s`` | 2 x ``start_s`` | a partner who opened the link at the same moment reaches the Pairing page after the consent page |

    ``heartbeats_s``: page -> seconds between the messages by which an open page shows its person is there (DoND:
    the Instructions page's ``INSTRUCTIONS_HEARTBEAT_S`` and the Bargain page's ping). Thresholds and their reasons:
    docs/decisions/0002-partner-limits-and-codes-in-the-launch-check.md.

    >>> found = partner_limit_findings(limits={"turn_timeout_s": 10, "disconnect_timeout_s": 10,
    ...     "pairing_timeout_s": 10}, message_s=35, heartbeats_s={"Instructions": 20, "Bargain": 5}, start_s=120)
    >>> [f["severity"] for f in found]
    ['problem', 'problem', 'problem']
    >>> found[1]["what"][:90]
    'The partner limit disconnect_timeout_s is 10 s, but the Instructions page tells the server'
    >>> [f["severity"] for f in partner_limit_findings(limits={"turn_timeout_s": 100, "disconnect_timeout_s": 90},
    ...     message_s=35, heartbeats_s={"Bargain": 5}, start_s=120)]
    ['warning', 'ok']
    """
    page, heartbeat = max(heartbeats_s.items(), key=lambda item: item[1], default=("", 0.0))
    rules = {  # key: (problem below, warning below, what a person needs, what the limit does to most, to some)
        "turn_timeout_s": (
            2 * message_s,
            4 * message_s,
            f"one move (read the partner's message, write one's own or an offer) takes about {message_s:g} s by the "
            "workload estimate, and a game of a dozen moves ends at its slowest turn",
            "most games would end early as partner_timeout, a partner still thinking taken for gone",
            "slower players' games could end as partner_timeout",
        ),
        "disconnect_timeout_s": (
            heartbeat + 1e-9,  # at or below one heartbeat: inclusive
            3 * heartbeat,
            f"the {page} page tells the server only every {heartbeat:g} s that its person is still there (its "
            "heartbeat)",
            "most games would end early as partner_left, a partner reading with the page open taken for gone",
            "one late or lost heartbeat (a page reconnecting, a phone changing networks) could end a game as "
            "partner_left",
        ),
        "pairing_timeout_s": (
            start_s,
            2 * start_s,
            f"a partner who opened the study link at the same moment reaches the Pairing page only after the consent "
            f"page (the first pages take about {start_s:g} s by the workload estimate), and places on Prolific "
            "fill over minutes",
            "most people would leave unpaired, with no game and no bonus",
            "people who arrive alone could leave unpaired, with no game and no bonus",
        ),
    }
    found = []
    for key, seconds in limits.items():
        if key not in rules or not seconds or seconds <= 0 or (key == "disconnect_timeout_s" and heartbeat <= 0):
            continue
        problem_below, warning_below, needs, most, some = rules[key]
        said = f"The partner limit {key} is {seconds:g} s, but {needs}"
        fix = (
            f"Create the session again in its room with {key} of at least {math.ceil(warning_below):g} s; the Edit "
            "page cannot set it."
        )
        if seconds < problem_below:
            found.append(finding("problem", f"{said}: {most}.", fix))
        elif seconds < warning_below:
            found.append(finding("warning", f"{said}: {some}.", fix))
        else:
            found.append(finding("ok", f"The partner limit {key} ({seconds:g} s) leaves a person room: {needs}."))
    return found


def live_study(record: dict | None) -> bool:
    """Whether a session, by the counts recorded when its room was taken, was a study under way: someone (not a test)
    had taken a place, and someone was still working or a place was still free.

    >>> live_study(dict(started=3, working=1, free=0)), live_study(dict(started=0, working=0, free=5))
    (True, False)
    >>> live_study(None), live_study({"started": "?"})
    (False, False)
    """
    if not isinstance(record, dict):
        return False
    try:
        started, working, free = (int(record.get(key) or 0) for key in ("started", "working", "free"))
    except (TypeError, ValueError):
        return False  # a record we did not write: read it as nothing under way rather than fail the page
    return started > 0 and (working > 0 or free > 0)


def worst(findings: list[dict]) -> str:
    """The most severe finding's severity ("ok" when there is none).

    >>> worst([finding("ok", "a"), finding("warning", "b")])
    'warning'
    """
    return min((f["severity"] for f in findings), key=SEVERITIES.index, default="ok")
