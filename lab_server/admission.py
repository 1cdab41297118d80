"""Admission: when the server is saturated, new arrivals wait on a light page instead of queueing with everyone.

oTree serves every page of a study under one lock in one process; this gate sets how fast new people come in
(docs/decisions/0008-admission-at-the-door.md says why):

- **Load.** The server's load is the number of HTTP requests in flight: received whole, waiting for oTree's page lock or
  being served, until their answer starts (a slow upload or a slow reader is a connection, not load). Static files count
  too: oTree serves them under its page lock. Websockets and the gate's own waiting pages do not. The server is
  saturated while it had a request in flight more than ``LAB_ADMIT_MAX_BUSY_PERCENT`` (default 50) percent of the time
  lately (``busy_share``): one request at a time, so every page's wait grows as 1 / (1 - share), and the share shows it
  before any queue forms. It is saturated too at ``LAB_ADMIT_MAX_IN_FLIGHT`` (default 8) or more in flight: at 30-80 ms
  of work per page step, eight requests in flight are a queue of a quarter to half a second. It is saturated too while
  participants' pages (``/p/...``, from request complete to answer) took longer than ``LAB_ADMIT_TARGET_MS`` (default
  150) on average over about the last 20 pages.
- **Who waits.** Only a *new arrival* waits: a ``GET`` of a room link (``/room/<room>``) or a session-wide link
  (``/join/<code>``), the requests that give out places. Everyone already inside (``/p/<code>/...``, their sockets,
  ``/InitializeParticipant/...``, static files, the admin pages) always passes, so their pages stay fast.
- **The waiting page** (``global/AdmissionWait.html``, texts ``admission_*`` in ``study_flow.MESSAGES``) is in the
  room's session language once the room has been entered (``remember_language``), else the browser's
  (``Accept-Language``, by its q-values), else English. It is rendered once per language and served from memory without
  oTree's page lock, the database or a template engine (HTTP 200, ``Cache-Control: no-store``). It reloads its own URL
  after half the arrival's expected wait (those ahead of it at the recent admission rate), 3-6 s near the head of the
  line and at most 30 s (jittered, the ``Refresh`` header: no script needed) with every query parameter kept
  (``PROLIFIC_PID``, ``STUDY_ID``, ``SESSION_ID``, ``participant_label``) plus the ticket ``lab_wait``; a link lets the
  participant retry at once.
- **Fairness.** The ticket is signed (``itsdangerous``, with a key of this process) for the entry link and the
  participant label it waits for (``waiting_for``: passed on with another PID it is a fresh arrival's, at the back of
  the line) and says when the arrival first waited. While
  anyone waits, a fresh arrival waits too (it queues behind them), and when room frees up the arrivals that have
  waited longest come in first (those within ``FAIR_WINDOW_S`` of the oldest waiting ticket; a ticket not seen for
  ``FORGET_AFTER_S`` is dropped, the tab was closed). Nobody is refused in the end: a ticket older than
  ``LAB_ADMIT_MAX_WAIT_S`` (default 300) is let in as soon as the server is not saturated, and on a saturated one
  still one every ``PAST_MAX_EVERY_S``. A forged ticket, one from before a restart
  (another key) or one older than ``LAB_ADMIT_MAX_WAIT_S`` and ``FORGET_AFTER_S`` (its waiter was let in by then: a
  replayed link) counts as a fresh arrival.
- **Once in, in.** An admitted arrival gets the cookie ``lab_admitted`` (10 minutes), so the next step of the same entry
  (the room's welcome page forwards to itself) and a reload are not held again. The cookie's signature covers the entry
  link and the participant label it admitted (``admitted_for``): with another PID or through another link it is no
  admission (the link and PID are the signature's salt), that arrival is new and waits like any other. The gate strips
  ``lab_wait`` before oTree sees the request; what oTree does with the link (its place, the Prolific checks of ``entry``
  and ``places``) is unchanged, so a waiting arrival keeps one place and its PID. A participant label let in through an
  entry link is remembered (in this process, up to ``MAX_INSIDE``): the same label through the same link later (a new
  tab, the Prolific link opened again after the cookie ran out) is someone returning to their place and passes.
- **For the researcher.** ``summary()`` (the study status page) and a log line when arrivals start waiting and when
  the last one is in: how many wait now, how many were let in after waiting, the longest wait.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import math
import random
import secrets
import time
from collections import deque
from urllib.parse import parse_qsl

from itsdangerous import BadData, URLSafeSerializer

from backend.core.rate_limit import TokenBuckets

BURST_S = 15.0  # this many seconds' worth of the arrival rate may come in at once (a class of 60 entering together)
PAST_MAX_EVERY_S = 2.0  # past the longest wait, on a saturated server: one person every this many seconds
LINE_BURST_S = 1.0  # while people wait in line, at most this many seconds' worth at once: one at a time, evenly
FAIR_WINDOW_S = 6.0  # one retry period at the head of the queue: a waiter this close to the oldest one is as old
RETRY_S = (3.0, 6.0)  # the retry delay near the head of the queue (jittered: the retries of many people spread out)
RETRY_MAX_S = 30.0  # the longest retry delay, far back in the queue (one reload per half a minute at most)
FORGET_AFTER_S = RETRY_MAX_S * 1.25 + 5  # a ticket not seen again for this long (its longest retry) is a closed tab
RATE_WINDOW = 50  # admissions after waiting over which the admission rate is measured
PAGE_WEIGHT = 0.05  # the moving average of page times follows about the last 20 pages
PAGE_STALE_S = 2.0  # a page-time average not fed for this long is out of date (nobody inside is asking for pages)
BUSY_WINDOW_S = 20.0  # the share of time the server was busy forgets with this time constant (about the last 20 s)
MAX_WAITING = 100_000  # tickets remembered at once (a flood of fresh arrivals must not grow the memory without bound)
MAX_INSIDE = 100_000  # (entry link, participant label) pairs let in, remembered so a returning participant passes
LABEL = "participant_label"
ADMITTED_FOR_S = 600  # an admitted arrival's cookie lets the rest of its entry (and reloads) through
TICKET = "lab_wait"
ADMITTED_COOKIE = "lab_admitted"
ENTRY_PREFIXES = ("/room/", "/join/")
WAIT_TEMPLATE = "global/AdmissionWait.html"
_URL_MARK = "https://lab-wait.invalid/retry-url"  # replaced by each request's own retry URL in the cached page
_EXPECTED_MARK = "LAB-EXPECTED-WAIT"  # replaced by each request's expected wait
logger = logging.getLogger(__name__)


def is_new_arrival(method: str, path: str) -> bool:
    """Whether a request may give out a place (a room link or a session-wide link), so it waits when busy.

    >>> is_new_arrival("GET", "/room/annotation_study"), is_new_arrival("GET", "/join/tipabuzo")
    (True, True)
    >>> is_new_arrival("GET", "/p/abc123/annotation/Rate/3"), is_new_arrival("POST", "/room/x")
    (False, False)
    """
    return method.upper() in ("GET", "HEAD") and path.startswith(ENTRY_PREFIXES)


def retry_query(query_string: bytes, ticket: str) -> str:
    """The query of the retry URL: every parameter as it came, in its order and encoding, with ``lab_wait`` replaced.

    >>> retry_query(b"participant_label=ab12&STUDY_ID=s1&lab_wait=old", "123.x.sig")
    'participant_label=ab12&STUDY_ID=s1&lab_wait=123.x.sig'
    >>> retry_query(b"", "1.x.s")
    'lab_wait=1.x.s'
    """
    parts = [part for part in query_string.decode("latin-1").split("&") if part and not part.startswith(TICKET + "=")]
    return "&".join([*parts, f"{TICKET}={ticket}"])


def without_ticket(query_string: bytes) -> bytes:
    """The query oTree sees: without ``lab_wait``.

    >>> without_ticket(b"participant_label=ab12&lab_wait=1.x.s&STUDY_ID=s1")
    b'participant_label=ab12&STUDY_ID=s1'
    """
    return b"&".join(part for part in query_string.split(b"&") if part and not part.startswith(TICKET.encode() + b"="))


def query_value(query_string: bytes, name: str) -> str | None:
    """The first value of ``name`` in a raw query (tickets and cookies hold only ``[0-9A-Za-z._-]``: no decoding
    needed).

    >>> query_value(b"a=1&lab_wait=5.ab.cd", "lab_wait"), query_value(b"a=1", "lab_wait")
    ('5.ab.cd', None)
    """
    prefix = name + "="
    for part in query_string.decode("latin-1").split("&"):
        if part.startswith(prefix):
            return part[len(prefix) :]
    return None


def label_of(query_string: bytes) -> str:
    """The participant label an entry link carries (decoded as oTree decodes it), or "". A label given twice is read
    as oTree reads it, the last one (the entry then refuses such a link): the gate never judges one PID while oTree
    gives a place to another.

    >>> label_of(b"STUDY_ID=s&participant_label=5f%20aa&lab_wait=1.a.b"), label_of(b"x=1")
    ('5f aa', '')
    >>> label_of(b"participant_label=old&participant_label=new")
    'new'
    """
    found = ""
    for name, value in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        if name == LABEL:
            found = value
    return found


def admitted_for(path: str, label: str) -> str:
    """What an admission cookie is signed for: the entry link and the participant label it let in (a cookie signed
    for one link and PID is no admission for another).

    >>> admitted_for("/room/r/", "5f00aa"), admitted_for("/join/abc", "")
    ('lab_admitted["/room/r", "5f00aa"]', 'lab_admitted["/join/abc", ""]')
    """
    return ADMITTED_COOKIE + json.dumps([path.rstrip("/"), label])


def waiting_for(path: str, label: str) -> str:
    """What a waiting ticket is signed for: the place in line of this label through this entry link (a ticket passed
    on with another PID, or to another link, is a fresh arrival's: it goes to the back of the line).

    >>> waiting_for("/room/r/", "5f00aa")
    'lab_wait["/room/r", "5f00aa"]'
    """
    return TICKET + json.dumps([path.rstrip("/"), label])


def cookie_value(headers, name: str) -> str | None:
    """The value of cookie ``name`` in an ASGI request's headers, or None."""
    for header, value in headers:
        if header == b"cookie":
            for part in value.decode("latin-1").split(";"):
                key, _, found = part.strip().partition("=")
                if key == name:
                    return found
    return None


class Gate:
    """The admission state of one server process (oTree serves every request from one process).

    >>> gate = Gate(max_in_flight=2, max_wait_s=60, key=b"k")
    >>> gate.in_flight = 2  # saturated
    >>> admitted, ticket = gate.decide(None, now=100.0)  # a fresh arrival waits and gets a ticket
    >>> admitted, gate.summary(now=100.0)["waiting"]
    (False, 1)
    >>> gate.decide(ticket, now=104.0)[0]  # still saturated: it waits on
    False
    >>> gate.in_flight = 0
    >>> gate.decide(None, now=105.0)[0]  # room again, but someone waits longer: the newcomer queues behind
    False
    >>> gate.decide(ticket, now=106.0)[0], gate.summary()["admitted_after_waiting"]  # the oldest comes in
    (True, 1)
    >>> gate.in_flight = 5
    >>> _, late = gate.decide(None, now=200.0)
    >>> gate.decide(late, now=255.0)[0], gate.decide(late, now=261.0)[0]  # past the bound (60 s): in, even saturated
    (False, True)
    >>> gate.decide("200000.ab.forged", now=261.0)[0]  # a forged ticket is a fresh arrival
    False
    >>> gate.decide(late, now=400.0)[0]  # a replay long after (a shared or bookmarked link) is a fresh arrival too
    False
    >>> gate.issued("1.ab.\xe9")  # a byte beyond ASCII (a mangled cookie): no ticket, not a server error

    New arrivals come in at most ``arrivals_per_s`` a second (a burst of ``BURST_S`` seconds' worth at once while
    nobody waits, a class entering together); once people wait in line they come in evenly, ``LINE_BURST_S``
    seconds' worth at once at most, though room frees up for all at once (a burst let in from the line brings its
    pages back together):

    >>> paced = Gate(max_in_flight=1, max_wait_s=60, arrivals_per_s=2, key=b"k")
    >>> paced.in_flight = 1
    >>> tickets = [paced.decide(None, now=10.0)[1] for _ in range(40)]
    >>> paced.in_flight = 0
    >>> sum(paced.decide(t, now=12.0)[0] for t in tickets)  # one second's worth at 2 a second, not 15 s worth
    2
    >>> sum(paced.decide(t, now=13.0)[0] for t in tickets)  # a second later: two more
    2
    >>> paced.decide(None, now=13.1)[0]  # a fresh arrival, nobody waiting, the server idle: still within the rate
    False
    """

    def __init__(
        self,
        *,
        max_in_flight: int,
        max_wait_s: float,
        target_s: float = 10**9,
        max_busy: float = 1.0,
        arrivals_per_s: float = 10**9,
        max_waiting_per_address: int = 10**9,
        key: bytes | None = None,
    ) -> None:
        if max_in_flight < 1 or max_wait_s <= 0 or target_s <= 0 or arrivals_per_s <= 0 or not 0 < max_busy <= 1:
            raise ValueError(
                "The admission gate needs at least one request in flight, a positive longest wait, a positive "
                "target time per page, a busy share between 0 and 1 and a positive rate at which new arrivals come in."
            )
        # New arrivals come in at most this many a second, whatever the load now: a person let in brings the load
        # of a whole study (their rating pages come minutes later), long after the page times could show it.
        self.arrivals_per_s = arrivals_per_s
        self._burst = max(1.0, arrivals_per_s * BURST_S)
        self._line_burst = max(1.0, arrivals_per_s * LINE_BURST_S)
        # The server's one limiter; a refusal costs nothing (the next arrival is let in as soon as the rate allows).
        self._arrivals = TokenBuckets(per_minute=arrivals_per_s * 60, capacity=self._burst, charge_refused=False)
        self.max_in_flight = max_in_flight
        self.target_s = target_s
        self.page_s = 0.0  # the recent time of participants' pages (a moving average), and when it was last fed
        self._page_seen = float("-inf")
        self.max_wait_s = max_wait_s
        self.in_flight = 0
        # Busy: the server has a request in flight (oTree serves one at a time, under its page lock).
        self.max_busy = max_busy
        self._busy, self._busy_seen = 0.0, None  # the busy share, and when it was last followed
        self._key = key or secrets.token_bytes(32)
        # ticket id -> [first waited, last seen, place in line, client address], in order of first wait
        self._waiting: dict[str, list] = {}
        self._by_address: dict[str, int] = {}  # client address -> its tickets in line
        self.max_waiting_per_address = max_waiting_per_address
        self._places_given = 0  # places in line handed out so far (a ticket's place minus the head's: those ahead)
        self._head_place = 0
        self._admitted_at: deque[float] = deque(maxlen=RATE_WINDOW)  # when waiting arrivals came in lately
        self._next_sweep = 0.0
        self.admitted_after_waiting = 0
        self._forced_at = float("-inf")  # when someone past the longest wait last came in on a saturated server
        self.longest_wait_s = 0.0
        self.waiting_pages = 0
        self._inside: set[tuple[str, str]] = set()  # (entry link, participant label) let in: their place exists

    def let_in(self, path: str, label: str) -> None:
        """Remember that ``label`` came in through the entry link ``path`` (bounded by ``MAX_INSIDE``; only a label
        oTree
        takes, ``study_flow.SAFE_LABEL``)."""
        import study_flow

        if label and study_flow.SAFE_LABEL.fullmatch(label) and len(self._inside) < MAX_INSIDE:
            self._inside.add((path.rstrip("/"), label))

    def inside(self, path: str, label: str) -> bool:
        """Whether ``label`` came in through ``path`` before (a participant returning to their place: never held).

        >>> gate = Gate(max_in_flight=1, max_wait_s=60, key=b"k")
        >>> gate.let_in("/room/r/", "5f00aa")
        >>> gate.inside("/room/r", "5f00aa"), gate.inside("/room/r", "other"), gate.inside("/room/r", "")
        (True, False, False)
        """
        return bool(label) and (path.rstrip("/"), label) in self._inside

    # -- tickets ------------------------------------------------------------------------------------------------
    def _signer(self, purpose: str) -> URLSafeSerializer:
        """Signs and reads tickets for ``purpose`` (the salt: a value signed for one purpose is none for another)."""
        return URLSafeSerializer(self._key, salt=purpose, signer_kwargs={"digest_method": hashlib.sha256})

    def ticket(self, *, now: float, purpose: str = TICKET) -> str:
        """A signed ticket saying this arrival first waited at ``now`` (``purpose`` ``admitted_for(link, label)``: that
        this link and PID were let in then); a ticket signed for one purpose is none for another (a waiting ticket is
        no admission, an admission of one PID none of another). The time is the gate's clock (``time.monotonic``, as
        every ``now`` here), carried in the signed payload with a random part that tells two tickets apart; how old
        a ticket may be is the caller's rule (``decide``, ``admits``)."""
        return self._signer(purpose).dumps([int(now * 1000), secrets.token_hex(4)])

    def issued(self, ticket: str | None, *, purpose: str = TICKET) -> float | None:
        """When a valid ticket (or admitted cookie, ``purpose`` ``admitted_for(link, label)``) was issued, in seconds;
        None when absent, malformed, forged or signed for another purpose.

        >>> gate = Gate(max_in_flight=1, max_wait_s=60, key=b"k")
        >>> waiting = gate.ticket(now=5.0)
        >>> gate.issued(waiting), gate.issued(waiting, purpose=ADMITTED_COOKIE)
        (5.0, None)

        An admission cookie names the link and the PID it let in (``admitted_for``); for any other it is none:

        >>> cookie = gate.ticket(now=7.0, purpose=admitted_for("/room/r", "aa01"))
        >>> gate.issued(cookie, purpose=admitted_for("/room/r", "aa01"))
        7.0
        >>> gate.issued(cookie, purpose=admitted_for("/room/r", "bb02"))  # another PID: no admission
        >>> gate.issued(cookie, purpose=admitted_for("/join/code", "aa01"))
        """
        if not ticket:
            return None
        try:
            milliseconds, _ = self._signer(purpose).loads(ticket)
        except (BadData, TypeError, ValueError):  # forged, tampered with, another key or purpose, or not ours
            return None
        return milliseconds / 1000 if isinstance(milliseconds, int) and milliseconds >= 0 else None

    def admits(self, cookie: str | None, path: str, label: str, *, now: float) -> bool:
        """Whether the cookie ``lab_admitted`` lets ``label`` in through the entry link ``path`` now: signed for that
        link and PID (``admitted_for``), by this process, less than ``ADMITTED_FOR_S`` ago.

        >>> gate = Gate(max_in_flight=1, max_wait_s=60, key=b"k")
        >>> cookie = gate.ticket(now=100.0, purpose=admitted_for("/room/r", "aa01"))
        >>> gate.admits(cookie, "/room/r/", "aa01", now=700.0), gate.admits(cookie, "/room/r", "bb02", now=101.0)
        (True, False)
        >>> gate.admits(cookie, "/room/r", "aa01", now=701.0)  # ADMITTED_FOR_S (600 s) later: expired
        False
        """
        passed = self.issued(cookie, purpose=admitted_for(path, label))
        return passed is not None and now - passed <= ADMITTED_FOR_S

    # -- the load -----------------------------------------------------------------------------------------------
    def started(self, *, now: float) -> None:
        """A request is whole and waits for (or holds) oTree's page lock."""
        self._follow_busy(now)
        self.in_flight += 1

    def finished(self, *, now: float) -> None:
        """A request's answer starts: it no longer needs the server."""
        self._follow_busy(now)
        self.in_flight -= 1

    def _follow_busy(self, now: float) -> None:
        """Fold the time since the last call into the busy share: busy throughout if a request was in flight."""
        if self._busy_seen is None or now > self._busy_seen:
            elapsed = 0.0 if self._busy_seen is None else now - self._busy_seen
            kept = math.exp(-elapsed / BUSY_WINDOW_S)
            self._busy = self._busy * kept + (1.0 - kept) * (1.0 if self.in_flight > 0 else 0.0)
            self._busy_seen = now

    def busy_share(self, *, now: float) -> float:
        """The share of time the server had a request in flight lately (0-1): a moving average that forgets with a
        time constant of ``BUSY_WINDOW_S`` (each second weighs ``exp(-age / BUSY_WINDOW_S)``).

        This is how close the server is to what it can serve, whatever the machine: oTree serves one request at a
        time, so at a share of 1 every new request queues, and the wait for every page inside grows with the share
        as 1 / (1 - share). Page times show it only once the queue is there.

        >>> gate = Gate(max_in_flight=8, max_wait_s=60, max_busy=0.7, key=b"k")
        >>> for second in range(60):  # 0.8 s of every second spent serving, for a minute
        ...     gate.started(now=second); gate.finished(now=second + 0.8)
        >>> round(gate.busy_share(now=60.0), 2), gate.saturated(now=60.0)
        (0.76, True)
        >>> for second in range(60, 120):  # then 0.3 s of every second
        ...     gate.started(now=second); gate.finished(now=second + 0.3)
        >>> round(gate.busy_share(now=120.0), 2), gate.saturated(now=120.0)
        (0.32, False)
        """
        self._follow_busy(now)
        return self._busy

    def page_served(self, seconds: float, *, now: float) -> None:
        """Feed the time a participant's page took (from its request complete to its answer starting, so the wait
        for oTree's lock included): ``page_s`` is the moving average over about the last ``1 / PAGE_WEIGHT`` pages.

        >>> gate = Gate(max_in_flight=8, max_wait_s=60, target_s=0.2, key=b"k")
        >>> for _ in range(30): gate.page_served(0.9, now=10.0)
        >>> round(gate.page_s, 2), gate.saturated(now=10.5), gate.saturated(now=10.0 + PAGE_STALE_S + 1)
        (0.71, True, False)
        """
        self.page_s += PAGE_WEIGHT * (seconds - self.page_s)
        self._page_seen = now

    def saturated(self, *, now: float) -> bool:
        """``LAB_ADMIT_MAX_IN_FLIGHT`` requests in flight, the server busy more than ``LAB_ADMIT_MAX_BUSY_PERCENT`` of
        the time lately, or participants' pages slower than ``LAB_ADMIT_TARGET_MS`` on average lately (an average
        older than ``PAGE_STALE_S`` says nothing: nobody inside asked for a page)."""
        if self.in_flight >= self.max_in_flight or self.busy_share(now=now) > self.max_busy:
            return True
        return self.page_s > self.target_s and now - self._page_seen < PAGE_STALE_S

    # -- the decision -------------------------------------------------------------------------------------------
    def _oldest_waiting(self, now: float) -> float | None:
        if now >= self._next_sweep:  # closed tabs anywhere in the queue
            for key in [key for key, entry in self._waiting.items() if now - entry[1] >= FORGET_AFTER_S]:
                self._leave(key)
            self._next_sweep = now + FORGET_AFTER_S / 2
        # Only the closed tabs ahead of the oldest open one are visited (no copy of the whole queue per arrival: a
        # flood of 5,000 fresh arrivals a second made each arrival copy tens of thousands of tickets).
        closed, oldest = [], None
        for key, (first, last_seen, place, _) in self._waiting.items():
            if now - last_seen < FORGET_AFTER_S:
                oldest, self._head_place = first, place
                break
            closed.append(key)
        for key in closed:
            self._leave(key)
        return oldest

    def _leave(self, key: str) -> list | None:
        """Take ticket ``key`` out of the line (let in, or its tab closed); its entry, or None."""
        entry = self._waiting.pop(key, None)
        if entry is not None:
            left = self._by_address.get(entry[3], 1) - 1
            if left > 0:
                self._by_address[entry[3]] = left
            else:
                self._by_address.pop(entry[3], None)
        return entry

    def decide(self, ticket: str | None, *, now: float, address: str = "", purpose: str = TICKET) -> tuple[bool, str]:
        """Whether a new arrival with ``ticket`` (the ``lab_wait`` it brought, or None) from client ``address`` comes
        in now; when it waits, the ticket its retry carries (the same one, or a new one for a fresh or forged ticket).
        ``purpose`` is what the ticket is signed for (``waiting_for(link, label)``): a ticket of another PID or link is
        a fresh arrival's. ``(False, "")``: refused, ``address`` already has ``max_waiting_per_address`` people
        waiting."""
        issued = self.issued(ticket, purpose=purpose)
        oldest = self._oldest_waiting(now)  # closed tabs (no reload for FORGET_AFTER_S) are out of the line first
        in_line = issued is not None and ticket.rpartition(".")[0] in self._waiting
        if issued is not None and now - issued > self.max_wait_s + FORGET_AFTER_S and not in_line:
            issued = None  # a replayed link (a shared or bookmarked retry URL); someone reloading keeps their place
        saturated = self.saturated(now=now)
        fair = issued is not None and (oldest is None or issued <= oldest + FAIR_WINDOW_S)  # among the oldest
        if issued is not None and now - issued >= self.max_wait_s and in_line:
            # Waited long enough: the longest waiting first, within the arrival rate, and even on a saturated server
            # one every PAST_MAX_EVERY_S, so that a load figure stuck too high never keeps anyone out for good. Not
            # at the full rate whatever the load: in a launch of 3,000 nearly everyone passed the longest wait, and
            # letting them in at the rate regardless made everyone's pages inside wait up to 10 s.
            trickle = now - self._forced_at >= PAST_MAX_EVERY_S
            if fair and (trickle or not saturated) and self._take_token(now):
                if saturated:
                    self._forced_at = now
                return self._admit(ticket, issued, now), ticket
        elif not saturated:
            fresh = oldest is None and issued is None
            if (fresh or fair) and self._take_token(now):
                return (True, "") if fresh else (self._admit(ticket, issued, now), ticket)
        if issued is None:
            ticket, issued = self.ticket(now=now, purpose=purpose), now
            if not self._waiting:
                logger.warning(
                    "The server is busy (%d requests in flight, LAB_ADMIT_MAX_IN_FLIGHT=%d; busy %.0f%% of the time "
                    "lately, LAB_ADMIT_MAX_BUSY_PERCENT=%.0f; participants' pages %.0f ms on average, "
                    "LAB_ADMIT_TARGET_MS=%.0f): new arrivals wait on the waiting page.",
                    self.in_flight,
                    self.max_in_flight,
                    100 * self.busy_share(now=now),
                    100 * self.max_busy,
                    1000 * self.page_s,
                    1000 * self.target_s,
                )
        key = ticket.rpartition(".")[0]
        if key in self._waiting:
            self._waiting[key][1] = now
        elif self._by_address.get(address, 0) >= self.max_waiting_per_address:
            return False, ""  # one client holding many places in line would keep everyone else out
        elif len(self._waiting) < MAX_WAITING:
            self._places_given += 1
            self._waiting[key] = [issued, now, self._places_given, address]
            self._by_address[address] = self._by_address.get(address, 0) + 1
        self.waiting_pages += 1
        return False, ticket

    def expected_wait(self, ticket: str, *, now: float) -> float:
        """Seconds until a waiting arrival's turn: those ahead of it in line at the rate people came in lately (at
        most ``LAB_ADMIT_ARRIVALS_PER_S``).

        >>> gate = Gate(max_in_flight=1, max_wait_s=600, arrivals_per_s=2, key=b"k")
        >>> gate.in_flight = 1
        >>> tickets = [gate.decide(None, now=0.0)[1] for _ in range(121)]
        >>> gate.expected_wait(tickets[0], now=0.0), gate.expected_wait(tickets[120], now=0.0)
        (0.0, 60.0)
        """
        entry = self._waiting.get(ticket.rpartition(".")[0])
        ahead = max(0, entry[2] - self._head_place) if entry else len(self._waiting)
        if len(self._admitted_at) >= 5 and now > self._admitted_at[0]:
            rate = min(self.arrivals_per_s, len(self._admitted_at) / (now - self._admitted_at[0]))
        else:
            rate = self.arrivals_per_s
        return ahead / rate

    def _take_token(self, now: float) -> bool:
        """One admission out of the arrival rate's budget, if there is one (a token bucket of ``BURST_S`` seconds,
        of ``LINE_BURST_S`` while people wait in line)."""
        return self._arrivals.take("arrivals", now=now, capacity=self._line_burst if self._waiting else self._burst)

    def retry_after(self, ticket: str, *, now: float, uniform=random.uniform) -> float:
        """Seconds until a waiting arrival should ask again: half its expected wait (those ahead of it in line at
        the recent admission rate), at least ``RETRY_S`` (near the head of the line) and at most ``RETRY_MAX_S``.

        >>> gate = Gate(max_in_flight=1, max_wait_s=600, arrivals_per_s=2, key=b"k")
        >>> gate.in_flight = 1
        >>> tickets = [gate.decide(None, now=0.0)[1] for _ in range(200)]
        >>> [round(gate.retry_after(tickets[n], now=0.0, uniform=lambda a, b: (a + b) / 2)) for n in (0, 20, 199)]
        [4, 5, 30]
        """
        low, high = RETRY_S
        return min(RETRY_MAX_S, max(uniform(low, high), uniform(0.4, 0.6) * self.expected_wait(ticket, now=now)))

    def _admit(self, ticket: str, issued: float, now: float) -> bool:
        if self._leave(ticket.rpartition(".")[0]) is None:
            return True  # a reload of a link already let in, or a ticket forgotten (its tab was closed a while)
        self.admitted_after_waiting += 1
        self._admitted_at.append(now)
        self.longest_wait_s = max(self.longest_wait_s, now - issued)
        if not self._waiting:
            self._admitted_at.clear()  # the line is empty: the next one's pace is its own
            logger.warning(
                "All waiting arrivals are in: %d let in after waiting so far, the longest wait %.0f s.",
                self.admitted_after_waiting,
                self.longest_wait_s,
            )
        return True

    def summary(self, *, now: float | None = None) -> dict:
        """What the researcher sees: arrivals waiting now, let in after waiting, the longest wait, the load."""
        now = time.monotonic() if now is None else now
        return dict(
            waiting=sum(1 for entry in self._waiting.values() if now - entry[1] < FORGET_AFTER_S),
            admitted_after_waiting=self.admitted_after_waiting,
            longest_wait_s=round(self.longest_wait_s, 1),
            in_flight=self.in_flight,
            max_in_flight=self.max_in_flight,
            busy_percent=round(100 * self.busy_share(now=now)),
            max_busy_percent=round(100 * self.max_busy),
            page_ms=round(1000 * self.page_s),
            target_ms=round(1000 * self.target_s),
            waiting_pages_served=self.waiting_pages,
        )


# -- the page -----------------------------------------------------------------------------------------------------
_pages: dict = {}  # language -> the waiting page (marks for the retry URL and expected wait); ("busy", language)
_languages: dict[str, str] = {}  # an entry path ("/room/x", "/join/code") -> its session's language


def remember_language(path: str, language: str | None) -> None:
    """Note the session language of an entry link (``entry`` calls this under oTree's lock, where it knows it), so
    the waiting page of that link is in the study's language."""
    if language and len(_languages) < 10_000:
        _languages[path] = language


def page_language(path: str, scope) -> str:
    """The study's language for this entry link when known, else the one the browser prefers of the shared pages'
    (``Accept-Language`` with its q-values, ``limits.accepted_language``), else English."""
    import study_flow

    from .limits import accepted_language

    language = _languages.get(path.rstrip("/"))
    return language if language in study_flow.MESSAGES else accepted_language(scope, study_flow.SHARED_LANGUAGES)


def expected_text(language: str, seconds: float) -> str:
    """The waiting page's line on the expected wait, in whole minutes rounded up.

    >>> expected_text("en", 20), expected_text("de", 130)
    ('Your turn is expected within a minute.', 'Sie sind voraussichtlich in etwa 3 Minuten an der Reihe.')
    """
    import study_flow

    texts = study_flow.messages(language)
    if seconds <= 60:
        return texts["admission_expected_soon"]
    return texts["admission_expected"].format(minutes=math.ceil(seconds / 60))


def waiting_page(language: str, retry_url: str, *, expected_s: float = 0.0) -> bytes:
    """The waiting page in ``language`` pointing at ``retry_url`` and saying the expected wait; the template is
    rendered once per language."""
    if language not in _pages:
        import study_flow

        from .otree_internals import render

        texts = study_flow.messages(language)
        context = dict(language=language, texts=texts, retry_url=_URL_MARK, expected=_EXPECTED_MARK)
        _pages[language] = render(WAIT_TEMPLATE, context).body.decode()
    page = _pages[language].replace(html.escape(_URL_MARK), html.escape(retry_url))
    return page.replace(_EXPECTED_MARK, html.escape(expected_text(language, expected_s))).encode()


async def send_waiting_page(scope, send, *, ticket: str, retry_s: float, expected_s: float, headers_for) -> None:
    path = scope.get("path", "")
    raw_path = scope.get("raw_path") or path.encode()
    retry_url = raw_path.decode("latin-1") + "?" + retry_query(scope.get("query_string", b""), ticket)
    body = waiting_page(page_language(path, scope), retry_url, expected_s=expected_s)
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        (b"refresh", f"{retry_s:.1f}; url={retry_url}".encode("latin-1")),
        # The retry comes on a new connection: no idle connection per waiting person is held for seconds, and no
        # retry meets the server closing an idle connection at that moment (uvicorn's keep-alive ends after 5 s).
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers_for(headers, path)})
    await send({"type": "http.response.body", "body": b"" if scope.get("method") == "HEAD" else body})


async def send_busy_page(scope, send, *, headers_for) -> None:
    """HTTP 429 with the entry's "too many new participants from your connection" page (``busy``), in the study's
    language: one client already has ``LAB_NEW_PARTICIPANTS_PER_ADDRESS`` people waiting."""
    import study_flow

    from .otree_internals import render

    path = scope.get("path", "")
    language = page_language(path, scope)
    if ("busy", language) not in _pages:
        body = render("global/EntryRefused.html", study_flow.entry_page_texts("busy", language=language)).body
        _pages[("busy", language)] = body.decode()
    body = _pages[("busy", language)].encode()
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 429, "headers": headers_for(headers, path)})
    await send({"type": "http.response.body", "body": b"" if scope.get("method") == "HEAD" else body})


GATE: Gate | None = None


def install() -> None:
    import lab_server.headers as headers
    import lab_server.places as places

    from .limits import positive_setting
    from .otree_internals import around_app

    global GATE

    GATE = gate = Gate(
        # one client brings at most this many new people (places) in ten minutes: more waiting is no use to it
        max_waiting_per_address=int(places.budget().capacity),
        max_in_flight=int(positive_setting("LAB_ADMIT_MAX_IN_FLIGHT")),
        max_wait_s=positive_setting("LAB_ADMIT_MAX_WAIT_S"),
        target_s=positive_setting("LAB_ADMIT_TARGET_MS") / 1000,
        max_busy=min(1.0, positive_setting("LAB_ADMIT_MAX_BUSY_PERCENT") / 100),
        arrivals_per_s=positive_setting("LAB_ADMIT_ARRIVALS_PER_S"),
    )
    secure, ancestors = headers.secure_cookies(), headers.configured_ancestors()

    def headers_for(found: list, path: str) -> list:
        return headers.response_headers(found, path=path, ancestors=ancestors, secure=secure)

    async def admitting(app, scope, receive, send):
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        path = scope.get("path", "")
        admitted_cookie = None
        if is_new_arrival(scope.get("method", "GET"), path):
            now = time.monotonic()
            label = label_of(scope.get("query_string", b""))
            # The cookie admits the link and the PID it was given for, no other (admitted_for).
            cookie = cookie_value(scope.get("headers", ()), ADMITTED_COOKIE)
            if gate.inside(path, label):  # a participant returning to their place (a new tab, the link again)
                pass
            elif not gate.admits(cookie, path, label, now=now):
                client = scope.get("client") or ("unknown", 0)
                ticket = query_value(scope.get("query_string", b""), TICKET)
                address = places.address_key(client[0])
                admitted, ticket = gate.decide(ticket, now=now, address=address, purpose=waiting_for(path, label))
                if not admitted and not ticket:
                    await send_busy_page(scope, send, headers_for=headers_for)
                    return
                if not admitted:
                    retry_s, expected_s = gate.retry_after(ticket, now=now), gate.expected_wait(ticket, now=now)
                    await send_waiting_page(
                        scope, send, ticket=ticket, retry_s=retry_s, expected_s=expected_s, headers_for=headers_for
                    )
                    return
                gate.let_in(path, label)
                admission = gate.ticket(now=now, purpose=admitted_for(path, label))
                cookie = f"{ADMITTED_COOKIE}={admission}; Max-Age={ADMITTED_FOR_S}; Path=/; HttpOnly; "
                admitted_cookie = (cookie + "SameSite=Lax").encode()
            scope = dict(scope, query_string=without_ticket(scope.get("query_string", b"")))

        # Counted from the moment the request is whole (limits reads every body before oTree's lock) until its
        # answer starts: a slow upload or a slow reader holds a connection, not the server, and is not load.
        state = {"counted": False, "done": False, "since": 0.0}
        participant_page = path.startswith("/p/")

        def count(step: int) -> None:
            if step > 0 and not state["counted"] and not state["done"]:
                state["counted"], state["since"] = True, time.monotonic()
                gate.started(now=state["since"])
            elif step < 0 and state["counted"]:
                state["counted"], state["done"] = False, True
                now = time.monotonic()
                gate.finished(now=now)
                if participant_page:
                    gate.page_served(now - state["since"], now=now)

        async def receive_counting():
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body"):
                count(+1)
            return message

        async def send_counting(message):
            if message["type"] == "http.response.start":
                count(-1)
                if admitted_cookie:
                    cookie = headers.secure_cookie(admitted_cookie) if secure else admitted_cookie
                    message = dict(message, headers=[*message.get("headers", ()), (b"set-cookie", cookie)])
            await send(message)

        try:
            await app(scope, receive_counting, send_counting)
        finally:
            count(-1)

    around_app(admitting, outside_page_lock=True)  # waiting pages never take oTree's page lock
