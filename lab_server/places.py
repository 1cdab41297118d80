"""Places go to real participants: the checks a room or session-wide link passes before it takes a new place.

``entry`` checks the PID's shape only; here, for a visitor who would take a *new* place (a returning PID resumes as
before; docs/decisions/0011-places-go-to-real-participants.md says why):

1. **The study's id.** A session whose ``prolific_study_id`` is set (the id of the study on Prolific, which Prolific
   appends to the link as ``STUDY_ID``) gives a place only to a link carrying that ``STUDY_ID``; any other gets a page
   in the session's language (``wrong_study``, HTTP 403) and no place.
2. **New places per address.** One client address takes at most ``LAB_NEW_PARTICIPANTS_PER_ADDRESS`` (default 60)
   new places per room (or session) at once, and then one more every ``LAB_NEW_PARTICIPANTS_WINDOW_S`` (default 600)
   seconds divided by that number (10 s): that many per window on average (a token bucket of the server's one
   limiter, ``budget``); more get a page (``busy``, HTTP 429). A lab whose class enters behind one NAT address fits
   60 people at once; a bigger class raises the number (e.g. ``LAB_NEW_PARTICIPANTS_PER_ADDRESS=200``).
3. **Places handed back.** A place taken through a room or session-wide link whose visitor has not answered the
   consent page within the session key ``consent_within_s`` (default 1800 s; 0: never) is handed back before the next
   new visitor is placed: the participant row is reset (no label, not visited, no vars) and gets a new participant
   code, so the old visitor's links no longer open it (the PID may enter again and get a place if one is free). The
   session's ``places_handed_back`` var records each (PID, when taken, when handed back) and the study status page
   counts them.

All of it runs inside oTree's room view, under its page lock, so two visitors never take one place.
"""

from __future__ import annotations

import datetime
import ipaddress
import time

import sqlalchemy

import lab_server.otree_internals as otree_internals
from backend.core.rate_limit import TokenBuckets

from .limits import positive_setting
from .refusals import refusal_page

PLACE_TAKEN_AT = "place_taken_at"  # participant.vars: when a room or session-wide link gave this place
HANDED_BACK = "places_handed_back"  # session.vars: one dict per place handed back
DEFAULT_CONSENT_WITHIN_S = 1800
CONSENT_PAGE_INDEX = 1  # oTree numbers pages from 1; every app's page_sequence starts with the consent page
_RESET = dict(
    label=None,
    visited=False,
    _index_in_pages=0,
    time_started_utc=None,
    _last_page_timestamp=None,
    _last_request_timestamp=None,
    _current_page_name=None,
    _current_app_name=None,
    _round_number=None,
    _current_form_page_url=None,
    _timeout_expiration_time=None,
    _timeout_page_index=None,
)


_budget: TokenBuckets | None = None


def budget() -> TokenBuckets:
    """New places per address and room (``_budget_key``): ``LAB_NEW_PARTICIPANTS_PER_ADDRESS`` at once, refilled
    over ``LAB_NEW_PARTICIPANTS_WINDOW_S`` (one more every window / number seconds), in the server's one limiter.

    >>> places = TokenBuckets(per_minute=2 * 60 / 60, capacity=2)  # 2 per minute: bursts of 2, then one every 30 s
    >>> places.wait_s("a r", now=0), places.take("a r", now=0), places.take("a r", now=0), places.wait_s("a r", now=0)
    (0.0, True, True, 30.0)
    >>> places.wait_s("b r", now=0), places.wait_s("a r", now=30)
    (0.0, 0.0)
    """
    global _budget
    if _budget is None:
        per_window = max(1, int(positive_setting("LAB_NEW_PARTICIPANTS_PER_ADDRESS")))
        window_s = positive_setting("LAB_NEW_PARTICIPANTS_WINDOW_S")
        _budget = TokenBuckets(per_minute=per_window * 60 / window_s, capacity=per_window)
    return _budget


def address_key(host: str) -> str:
    """The client a new-place budget is counted for: an IPv4 address, or an IPv6 address's /64 network (one client
    holds a whole /64 and could take a fresh address for every request).

    >>> address_key("203.0.113.7"), address_key("2001:db8:1:2:aaaa::1"), address_key("2001:db8:1:2::99")
    ('203.0.113.7', '2001:db8:1:2::/64', '2001:db8:1:2::/64')
    >>> address_key("::ffff:203.0.113.7"), address_key("unknown")
    ('203.0.113.7', 'unknown')
    """
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if address.version == 4:
        return str(address)
    if address.ipv4_mapped is not None:  # ::ffff:a.b.c.d is an IPv4 client
        return str(address.ipv4_mapped)
    return str(ipaddress.ip_network(f"{address}/64", strict=False))


def _budget_key(request, session, room_name: str | None) -> str:
    address = address_key(request.client.host) if request.client else "unknown"
    return f"{address} {room_name or session.code}"


def new_place_refusal(request, session, room_name: str | None):
    """The page refusing ``request`` a new place of ``session``, or None when it may take one."""
    wanted = session.config.get("prolific_study_id") or ""
    if wanted and request.query_params.get("STUDY_ID") != wanted:
        return refusal_page("wrong_study", session, status_code=403)
    # The server's own clock (monotonic), not the wall clock: a wall clock set back an hour (NTP, a VM resumed) left
    # every address's bucket unrefilled for that hour, a lab behind one address refused after its first burst.
    if budget().wait_s(_budget_key(request, session, room_name), now=time.monotonic()) > 0:
        return refusal_page("busy", session, status_code=429)
    return None


def place_taken(request, session, room_name: str | None, participant) -> None:
    """Count a new place given to ``participant`` against the address and remember when it was taken."""
    budget().take(_budget_key(request, session, room_name), now=time.monotonic())  # given: counted even past it
    participant.vars[PLACE_TAKEN_AT] = time.time()  # stored: the wall clock (hand_back_stale compares it with UTC)


def consent_within_s(session) -> float:
    value = session.config.get("consent_within_s")
    return DEFAULT_CONSENT_WITHIN_S if value is None else float(value)


def unconsented(participant) -> bool:
    """Whether a participant holds a place from a link and has not answered the consent page (nor been screened
    out, nor finished): ``ConsentPage.before_next_page`` stores ``consent_given`` in every case."""
    pvars = participant._vars or {}
    return bool(participant.visited and pvars.get(PLACE_TAKEN_AT) and "consent_given" not in pvars)


def may_be_stale(taken_before: float) -> tuple:
    """The SQL conditions on a participant whose place may be stale, so that a new visitor reads only those, not
    every participant of the session (each new visitor did: during a launch, everyone waiting on the consent page
    too): still on the first page, the consent page (an answer moves the participant on), and started before
    ``taken_before`` (oTree's ``time_started_utc``, written as UTC text when the place's link was first opened, a moment
    after the place was taken), or not started at all. ``unconsented`` then decides by what the place holds."""
    Participant = otree_internals.Participant
    started_before = str(datetime.datetime.fromtimestamp(taken_before, datetime.UTC).replace(tzinfo=None))
    not_started_or_long_ago = sqlalchemy.or_(
        Participant.time_started_utc.is_(None), Participant.time_started_utc < started_before
    )
    return Participant._index_in_pages <= CONSENT_PAGE_INDEX, not_started_or_long_ago


def hand_back_stale(session, *, now: float) -> int:
    """Hand back every place of ``session`` whose visitor did not answer the consent page within
    ``consent_within_s``; the number handed back."""
    limit = consent_within_s(session)
    if limit <= 0:
        return 0
    handed = []
    for participant in session.pp_set.filter_by(visited=True).filter(*may_be_stale(now - limit)):
        taken_at = (participant._vars or {}).get(PLACE_TAKEN_AT)
        if not unconsented(participant) or now - float(taken_at) < limit:
            continue
        handed.append(dict(pid=participant.label or "", taken_at=float(taken_at), handed_back_at=now))
        for name, value in _RESET.items():
            setattr(participant, name, value)
        participant._vars = {}
        participant.code = otree_internals.random_chars_8()
    if handed:
        session.vars[HANDED_BACK] = [*session.vars.get(HANDED_BACK, []), *handed]
    return len(handed)


def handed_back(session) -> list[dict]:
    return list((session.vars or {}).get(HANDED_BACK, []))


def install() -> None:
    budget()  # a bad LAB_NEW_PARTICIPANTS_* stops the server at start
