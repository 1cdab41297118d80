"""Budgets before locks: live-socket messages counted per participant and per client address before oTree sees them.

``limits`` caps sockets, not messages. Every frame of a participant's socket (``limits.PARTICIPANT_SOCKET_PATHS``),
and every handshake of one, is counted here in token buckets (the server's one limiter,
``backend.core.rate_limit.TokenBuckets``), before oTree decodes it or takes any lock (why:
docs/decisions/0010-limits-before-otree-s-lock.md). This is the one limit on live messages
(docs/decisions/0004-one-limit-on-live-messages.md): no app keeps a second one.

- Per participant, ``live_messages_per_minute`` of their session where its config sets it (any app; learned when
  one of their pages is drawn, ``remember_live_budget``), else ``LAB_LIVE_MESSAGES_PER_MINUTE`` (default 60); in
  bursts of a sixth of it (10), at least ``MIN_BURST`` (5: a page's opening). A new socket costs one message. An
  honest page sends less: Pairing one message every 3 s (20 a minute), Bargain a ping every 5 s (12) plus what the
  person types, each page opening two sockets (its live and auto-advance ones).
- ``LAB_LIVE_MESSAGES_PER_ADDRESS_PER_MINUTE`` (default 6,000, bursts of 1,000) per client address, so a class of a
  hundred on Pairing behind one NAT address (2,000 a minute) fits three times over.
- ``LAB_LIVE_BYTES_PER_MINUTE`` (default 1 MiB) per participant, with bursts of one largest frame
  (``LAB_MAX_FORM_BYTES``); an honest page sends a few kilobytes a minute.

A message of a live page (``/live``) over the participant's budget is dropped and answered, on that socket, as the
page's own live method answers a refusal: ``{"type": "rejected", "kind": "rate_limited", "message": ...}``, "please
wait N seconds" in the participant's language (the DoND page shows it and puts the unsent text back); the socket
stays open. Only a client that sends ``REFUSALS_BEFORE_CLOSE`` (10) more after being told to wait, with none
passing in between, has its socket closed (code 1008, "policy violation"); so does a frame over the address or byte
budget, and any frame over budget on the other participant sockets (wait pages, chat), which have no live method to
answer. A handshake over budget is refused (HTTP 403) without anything of oTree running. Trying over a
participant's budget costs budget too (down to minus one burst), so a client that keeps flooding stays shut out
until it pauses; the address budget is not charged for refused messages, so one flooding participant does not shut
out a lab behind the same address. oTree's page script reopens a closed socket, which waits for the budget to refill.

oTree sends a synchronous live method's reply to every socket of the participant while it holds its page lock. A send to
a participant socket that cannot complete within ``SEND_TIMEOUT_S`` (0.5 s; a browser reads at once) drops that socket,
and nothing more is sent to a socket once it closes. The counts live in the server process (oTree serves from one); a
bucket that is full again is forgotten.

**Page requests.** A participant's plain page requests (``/p/<code>/...`` and ``/InitializeParticipant/<code>``, any
method) are counted too, in the same token buckets, before anything else runs (the outermost guard, outside oTree's page
lock and before the admission gate counts the request as load): ``LAB_PAGE_REQUESTS_PER_MINUTE`` (default 300, five a
second) per participant code, with bursts of a minute's worth. An honest participant asks for two or three requests per
page step (the form, the redirect, the next page) and a walk through the longest app (bias tests, 40 rounds) fits in one
burst. A request over budget gets HTTP 429 at once, with ``Retry-After`` and a ``Refresh`` back to the page, and a short
page in the participant's language (the session's, noted when one of their pages was drawn; else the browser's), and
takes no place in oTree's queue; trying over budget costs budget, so a client that keeps flooding stays shut out until
it pauses. oTree's own bots in ``otree test`` (in the process, not over the network: ``server`` ``testserver``) are not
counted.

**Every route of oTree that names a participant.** oTree's routes whose path names a participant code, open to anyone
(``otree/urls.py``, ``ALWAYS_UNRESTRICTED``): ``/p/<code>/<app>/<Page>/<index>`` (every page and wait page),
``/InitializeParticipant/<code>`` and ``/OutOfRangeNotification/<code>`` (shown after the last page). The others name no
participant (``/MTurkStart/<code>`` and ``/join/<code>`` name a session, ``/room/`` a room; ``MTurkLandingPage`` is a
name in that list with no route in oTree 6; ``/api/participant_vars/<code>`` is behind the REST key and its throttle;
the admin pages are behind the login; sockets are counted above). All three are counted, in one bucket per participant.

Codes are counted without regard to case (oTree's codes are lower-case letters and digits, ``SESSION_CODE_CHARSET``): a
participant's code with letters upper-cased counts against that participant's bucket. A code the server has not learned
yet costs one request of its client address's budget for unknown codes, which is charged before oTree sees anything:
``LAB_NEW_PARTICIPANTS_PER_ADDRESS`` requests a minute (default 60), in bursts of as many; then the code is looked up
once (under oTree's page lock, as oTree's own views read the database) and, when it names a participant, every code of
that participant's session is learned. An arrival through a room or session-wide link is learned from the redirect oTree
answers with (``/InitializeParticipant/<code>``). So an honest person costs that budget at most one request: their
first, only when the server has not seen their session since it started; a lab behind one address fits even when a whole
class of that size comes back at once after a restart (that number is what one address may bring into a room at once,
docs/security.md). A script of made-up codes reaches oTree at most once a second after its burst. Refused requests are
not charged to the address (one flooder behind a lab's address does not lock the address out for longer than it floods).
"""

from __future__ import annotations

import asyncio
import html
import json
import math
import re
import time
from urllib.parse import urlsplit

from backend.core.rate_limit import MAX_TRACKED, TokenBuckets

from .limits import accepted_language, client_address, participant_socket_key, positive_setting, refuse_socket

MESSAGES_PER_MINUTE = 60
MESSAGES_PER_ADDRESS_PER_MINUTE = 6000
BYTES_PER_MINUTE = 1024 * 1024
BURST_FRACTION = 1 / 6  # a bucket holds ten seconds' worth of its rate
CLOSE_CODE = 1008  # policy violation
SEND_TIMEOUT_S = 0.5  # longest wait for room in a participant socket's buffer (an honest browser reads at once)
_PARTICIPANT_PAGE = re.compile(r"/(?:p|InitializeParticipant|OutOfRangeNotification)/([^/]+)")
_ENTRY_LINKS = ("/room/", "/join/")  # oTree answers them with a redirect to the new participant's start link
MAX_KNOWN = 200_000  # participant codes known to exist at once (then forgotten all together, and learned again)
MAX_LANGUAGES = 100_000  # participant codes whose page language is remembered at once
LIVE_KEY = "live_messages_per_minute"  # the session key (study_flow.config) that sets a session's live budget
REFUSALS_BEFORE_CLOSE = 10  # polite refusals in a row on a live page before its socket is closed
CLOSE = math.inf  # LiveBudgets.check: the socket is closed, not answered
MIN_BURST = 5  # a page's opening fits any session's budget: its two sockets, its first message and two more


class LiveBudgets:
    """The live-socket budgets of one server process (settings read once, at start).

    ``check(participant, address, size=..., now=...)`` spends one message (and ``size`` bytes): None when it passes;
    else the seconds the participant should wait (their message budget is spent: the page is told so), or ``CLOSE``
    (an address or byte budget is spent, or the participant was refused ``REFUSALS_BEFORE_CLOSE`` times in a row).
    A participant whose session sets ``live_messages_per_minute`` (``remember_live_budget``) has that rate, in
    bursts of a sixth of it (at least ``MIN_BURST``); every other participant has the server's.

    >>> budgets = LiveBudgets(per_minute=60)
    >>> remember_live_budget("slow", {"live_messages_per_minute": 6})  # bursts of 5
    >>> [budgets.check("participant_code=slow", "a", now=0.0) for _ in range(7)][-3:]  # a refusal costs one too
    [None, 20.0, 30.0]
    >>> [budgets.check("participant_code=fast", "a", now=0.0) for _ in range(11)][-2:]  # the server's: bursts of 10
    [None, 2.0]
    >>> [budgets.check("participant_code=slow", "a", now=0.0) for _ in range(9)][-2:]  # told to wait 10 times
    [60.0, inf]
    >>> budgets.check("participant_code=slow", "a", now=60.0)  # it paused: the count starts again
    """

    def __init__(self, *, per_minute: float | None = None) -> None:
        self.per_minute = per_minute or positive_setting("LAB_LIVE_MESSAGES_PER_MINUTE")
        per_address = positive_setting("LAB_LIVE_MESSAGES_PER_ADDRESS_PER_MINUTE")
        bytes_per_minute = positive_setting("LAB_LIVE_BYTES_PER_MINUTE")
        largest_frame = positive_setting("LAB_MAX_FORM_BYTES")
        self._messages: dict[float, TokenBuckets] = {}  # per rate: one bucket set per distinct per-minute figure
        self.messages = self.messages_at(self.per_minute)
        # Not charged when refused: one flooding participant must not shut out a whole lab behind its address.
        self.address_messages = TokenBuckets(
            per_minute=per_address, capacity=max(1.0, per_address * BURST_FRACTION), charge_refused=False
        )
        self.bytes = TokenBuckets(per_minute=bytes_per_minute, capacity=max(largest_frame, bytes_per_minute / 6))
        self._refused: dict[str, int] = {}  # participant -> messages refused in a row

    def messages_at(self, per_minute: float) -> TokenBuckets:
        """The message buckets of participants whose budget is ``per_minute`` (bursts of a sixth, ``MIN_BURST`` at
        least)."""
        if per_minute not in self._messages:
            capacity = max(MIN_BURST, per_minute * BURST_FRACTION)
            self._messages[per_minute] = TokenBuckets(per_minute=per_minute, capacity=capacity)
        return self._messages[per_minute]

    def messages_of(self, participant: str) -> TokenBuckets:
        """The message buckets of ``participant`` (a socket key): their session's rate, else the server's."""
        code = participant.partition("participant_code=")[2]
        per_minute = _live_rates.get(code) if code else None
        return self.messages_at(per_minute) if per_minute else self.messages

    def check(self, participant: str, address: str, *, size: int = 0, now: float | None = None) -> float | None:
        now = time.monotonic() if now is None else now
        messages = self.messages_of(participant)
        if not messages.take(participant, now=now):
            refused = self._refused.get(participant, 0) + 1
            if len(self._refused) >= MAX_TRACKED:
                self._refused.clear()
            self._refused[participant] = refused
            return CLOSE if refused > REFUSALS_BEFORE_CLOSE else max(1.0, messages.wait_s(participant, now=now))
        self._refused.pop(participant, None)
        if not self.address_messages.take(address, now=now):
            return CLOSE
        # A frame above the largest allowed is limits' to refuse (close code 1009): it costs one full bucket here.
        if size and not self.bytes.take(participant, min(size, self.bytes.capacity), now=now):
            return CLOSE
        return None

    def allows(self, participant: str, address: str, *, size: int = 0) -> bool:
        """Spend one message (and ``size`` bytes) of the participant's and the address's budgets, if both have it."""
        return self.check(participant, address, size=size) is None

    async def websocket(self, app, scope, receive, send) -> None:
        participant = participant_socket_key(scope.get("path", ""), scope.get("query_string", b""))
        if not participant:  # not a participant's socket, or one limits refuses anyway
            await app(scope, receive, send)
            return
        address = f"address={client_address(scope)}"
        if not self.allows(participant, address):
            await refuse_socket(receive, send)
            return

        closing = False
        polite = scope.get("path") == "/live"  # a live page: its script shows a refusal (other sockets have none)

        def language() -> str:
            import study_flow

            code = participant.partition("participant_code=")[2]
            return _languages.get(code) or accepted_language(scope, study_flow.SHARED_LANGUAGES)

        async def budgeted():
            nonlocal closing
            if closing:  # a send to this socket timed out: its client reads nothing, so it is dropped
                return {"type": "websocket.disconnect", "code": CLOSE_CODE}
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    return message
                size = len(message.get("text") or "") + len(message.get("bytes") or b"")
                wait_s = self.check(participant, address, size=size)
                if wait_s is None:
                    return message
                if polite and wait_s != CLOSE:  # answered as the page's live method answers a refusal
                    await bounded_send({"type": "websocket.send", "text": live_refusal(language(), wait_s)})
                    if not closing:
                        continue
                closing = True
                await send({"type": "websocket.close", "code": CLOSE_CODE})
                return {"type": "websocket.disconnect", "code": CLOSE_CODE}

        async def bounded_send(message):
            nonlocal closing
            if message["type"] == "websocket.send":
                # oTree sends a live method's reply to every socket of the participant while it holds its page lock.
                # A send to a closing socket waits for the close handshake and one to a client that reads nothing
                # waits for room in its buffer: either stalled every page of the server for 10-30 s.
                if closing:
                    return
                try:
                    await asyncio.wait_for(send(message), SEND_TIMEOUT_S)
                except TimeoutError:
                    closing = True
                return
            if message["type"] == "websocket.close":
                closing = True
            await send(message)

        await app(scope, budgeted, bounded_send)


def page_participant(path: str) -> str | None:
    """The participant code a plain page request names (``/p/<code>/...``, ``/InitializeParticipant/<code>``,
    ``/OutOfRangeNotification/<code>``), in lower case (oTree's codes are; an upper-cased copy is the same key), or
    None for any other request.

    >>> page_participant("/p/abc123/bias_tests/Choice/4"), page_participant("/InitializeParticipant/abc123")
    ('abc123', 'abc123')
    >>> page_participant("/OutOfRangeNotification/abc123"), page_participant("/p/AbC123/bias_tests/Choice/4")
    ('abc123', 'abc123')
    >>> page_participant("/room/bias_study"), page_participant("/static/x.css"), page_participant("/p/")
    (None, None, None)
    """
    found = _PARTICIPANT_PAGE.match(path)
    return found.group(1).lower() if found else None


def started_participant(location: str) -> str | None:
    """The participant code of a start link (``/InitializeParticipant/<code>``, as oTree's room and session-wide
    links redirect to it, absolute or not), or None.

    >>> started_participant("/InitializeParticipant/abc123?participant_label=x")
    'abc123'
    >>> started_participant("https://lab.example/InitializeParticipant/abc123"), started_participant("/p/abc/x/Y/1")
    ('abc123', None)
    """
    path = urlsplit(location).path
    return page_participant(path) if path.startswith("/InitializeParticipant/") else None


async def session_codes(code: str) -> set[str]:
    """Every participant code of the session of the participant ``code`` names (empty: it names none), read under
    oTree's page lock as oTree's own views read the database."""
    from .otree_internals import Participant, page_lock, session_scope

    async with page_lock:
        with session_scope():
            participant = Participant.objects_filter(code=code).first()
            if participant is None:
                return set()
            return {found for (found,) in participant.session.pp_set.with_entities(Participant.code)}


_languages: dict[str, str] = {}  # participant code -> the language of the page last drawn for them


def remember_language(code: str, language: str) -> None:
    """Note the language of a participant's pages (``languages`` calls this when it draws one), so their 429 page is
    in it."""
    if _languages.get(code) != language:
        if len(_languages) >= MAX_LANGUAGES:
            _languages.clear()
        _languages[code] = language


_live_rates: dict[str, float] = {}  # participant code -> the live_messages_per_minute of their session


def remember_live_budget(code: str, config) -> None:
    """Note the ``live_messages_per_minute`` of the session ``config`` of participant ``code`` (``languages`` calls
    this when it draws one of their pages), so their live messages are counted at that rate; a session that sets
    none leaves them at the server's.

    >>> remember_live_budget("abc", {"live_messages_per_minute": 12}); _live_rates["abc"]
    12.0
    >>> remember_live_budget("abc", {}); "abc" in _live_rates
    False
    """
    found = (config or {}).get(LIVE_KEY)
    try:
        per_minute = float(found) if found not in (None, "") else None
    except (TypeError, ValueError):  # checked at creation; a row that should not hold this is read as unset
        per_minute = None
    if per_minute is None or not per_minute > 0 or per_minute == math.inf:
        _live_rates.pop(code, None)
    elif _live_rates.get(code) != per_minute:
        if len(_live_rates) >= MAX_LANGUAGES:
            _live_rates.clear()
        _live_rates[code] = per_minute


def live_refusal(language: str, wait_s: float) -> str:
    """The frame that answers a live message over budget: oTree's live reply, with the refusal a page's live method
    would give (``{"type": "rejected", "kind": "rate_limited", "message": ...}``), in ``language``.

    >>> json.loads(live_refusal("de", 2.4))["live_method_payload"]["message"]
    'Sie senden zu schnell. Bitte warten Sie 3 Sekunden und versuchen Sie es erneut.'
    """
    import study_flow

    message = study_flow.messages(language)["live_too_fast"].format(seconds=max(1, math.ceil(wait_s)))
    payload = {"type": "rejected", "kind": "rate_limited", "message": message}
    return json.dumps({"otree_success": True, "live_method_payload": payload})


def too_many_requests_page(language: str, again_url: str) -> bytes:
    """The short page a participant over their page budget sees, in ``language`` (``requests_*`` texts).

    >>> page = too_many_requests_page("de", "/p/abc/x/Rate/3")
    >>> '<html lang="de">' in page.decode(), "Zu viele Anfragen" in page.decode()
    (True, True)
    """
    import study_flow

    texts = study_flow.messages(language)
    return (
        f'<!DOCTYPE html><html lang="{html.escape(language)}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(texts['requests_title'])}</title></head>"
        f'<body><main style="max-width:40rem;margin:3rem auto;font-family:sans-serif;padding:0 1rem">'
        f'<h1 id="requests-title">{html.escape(texts["requests_title"])}</h1>'
        f"<p>{html.escape(texts['requests_body'])}</p>"
        f'<p><a href="{html.escape(again_url)}">{html.escape(texts["requests_again"])}</a></p>'
        "</main></body></html>"
    ).encode()


class PageBudgets:
    """Plain page requests per participant (``LAB_PAGE_REQUESTS_PER_MINUTE``, bursts of a minute's worth), counted
    before oTree's page lock; over budget: HTTP 429 at once. A code not known to name a participant (`learn`) costs
    its client address's budget for unknown codes instead (``unknown_per_minute``, bursts of as many), until a
    lookup finds it.

    >>> budgets = PageBudgets(per_minute=60, unknown_per_minute=2)
    >>> budgets.learn({"abc", "other"})
    >>> [budgets.allows("/p/abc/app/Page/1", now=0.0) for _ in range(61)][-2:]  # a minute's worth at once, not more
    [True, False]
    >>> budgets.allows("/p/ABC/app/Page/1", now=0.0)  # the same participant, upper-cased
    False
    >>> budgets.allows("/p/other/app/Page/1", now=0.0), budgets.allows("/room/study", now=0.0)  # others: their own
    (True, True)
    >>> round(budgets.retry_after("/p/abc/app/Page/1", now=0.0))  # the refused tries cost one more each
    3
    >>> [budgets.allows(f"/p/made{n}/app/Page/1", address="1.2.3.4", now=0.0) for n in range(3)]  # unknown codes
    [True, True, False]
    >>> budgets.allows("/OutOfRangeNotification/made9", address="5.6.7.8", now=0.0)  # another address: its own
    True
    """

    def __init__(self, *, per_minute: float, unknown_per_minute: float) -> None:
        self.requests = TokenBuckets(per_minute=per_minute, capacity=max(1.0, per_minute))
        # Not charged when refused: one flooder behind a lab's address must not keep the lab's people out for longer.
        self.unknown = TokenBuckets(
            per_minute=unknown_per_minute, capacity=max(1.0, unknown_per_minute), charge_refused=False
        )
        self.known: set[str] = set()

    def learn(self, codes) -> None:
        """Note ``codes`` as participant codes that exist (in lower case)."""
        codes = {str(code).lower() for code in codes}
        if len(self.known) + len(codes) > MAX_KNOWN:
            self.known.clear()
        self.known |= codes

    def allows(self, path: str, *, address: str = "", now: float) -> bool:
        code = page_participant(path)
        if code is None:
            return True
        if code in self.known:
            return self.requests.take(code, now=now)
        return self.unknown.take(f"address={address}", now=now)

    def retry_after(self, path: str, *, address: str = "", now: float) -> float:
        code = page_participant(path) or ""
        if code in self.known:
            return self.requests.wait_s(code, now=now)
        return self.unknown.wait_s(f"address={address}", now=now)

    async def http(self, app, scope, receive, send, *, headers_for) -> None:
        path = scope.get("path", "")
        server = scope.get("server") or ("", 0)
        if server[0] == "testserver":  # oTree's bots run in the process
            await app(scope, receive, send)
            return
        if path.startswith(_ENTRY_LINKS):
            await app(scope, receive, self._learning_from_redirects(send))
            return
        code, address = page_participant(path), client_address(scope)
        known = code is None or code in self.known
        if self.allows(path, address=address, now=time.monotonic()):
            if not known and (found := await session_codes(code)):
                self.learn(found)
                self.requests.take(code, now=time.monotonic())  # this request counts for the participant too
            await app(scope, receive, send)
            return
        import study_flow

        wait_s = max(1, math.ceil(self.retry_after(path, address=address, now=time.monotonic())))
        code = page_participant(path) or ""
        language = _languages.get(code) or accepted_language(scope, study_flow.SHARED_LANGUAGES)
        raw_path = (scope.get("raw_path") or path.encode()).decode("latin-1")
        query = scope.get("query_string", b"").decode("latin-1")
        again_url = raw_path + ("?" + query if query else "")
        body = too_many_requests_page(language, again_url)
        headers = [
            (b"content-type", b"text/html; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            (b"cache-control", b"no-store"),
            (b"retry-after", str(wait_s).encode()),
            (b"refresh", f"{wait_s}; url={again_url}".encode("latin-1")),
            (b"connection", b"close"),  # a flooding client reconnects for each try: it cannot pipeline its flood
        ]
        await send({"type": "http.response.start", "status": 429, "headers": headers_for(headers, path)})
        await send({"type": "http.response.body", "body": b"" if scope.get("method") == "HEAD" else body})

    def _learning_from_redirects(self, send):
        """``send`` that learns the participant a room or session-wide link's redirect starts (oTree just gave them
        the place), so their first page costs their address nothing."""

        async def learning(message):
            if message["type"] == "http.response.start" and 300 <= message.get("status", 0) < 400:
                for name, value in message.get("headers", ()):
                    if name.lower() == b"location" and (code := started_participant(value.decode("latin-1"))):
                        self.learn({code})
            await send(message)

        return learning


def install() -> None:
    import lab_server.headers as headers

    from .otree_internals import around_app

    budgets = LiveBudgets()

    async def budgeting(app, scope, receive, send):
        if scope["type"] == "websocket":
            await budgets.websocket(app, scope, receive, send)
        else:
            await app(scope, receive, send)

    around_app(budgeting)

    pages = PageBudgets(
        per_minute=positive_setting("LAB_PAGE_REQUESTS_PER_MINUTE"),
        # What one address may bring into a room at once, as requests a minute for codes not learned yet: a
        # whole class behind one address, coming back at once after a restart, fits (docs/security.md).
        unknown_per_minute=positive_setting("LAB_NEW_PARTICIPANTS_PER_ADDRESS"),
    )
    secure, ancestors = headers.secure_cookies(), headers.configured_ancestors()

    def headers_for(found: list, path: str) -> list:
        return headers.response_headers(found, path=path, ancestors=ancestors, secure=secure)

    async def page_budgeting(app, scope, receive, send):
        if scope["type"] == "http":
            await pages.http(app, scope, receive, send, headers_for=headers_for)
        else:
            await app(scope, receive, send)

    # Outside oTree's page lock and installed after admission, so outermost: an over-budget request costs neither the
    # lock nor the body's reading, and the admission gate never counts it as load.
    around_app(page_budgeting, outside_page_lock=True)
