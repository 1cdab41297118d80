"""Limits with clear refusals: websockets per participant, admin login and REST-key guessing, participant form size.

oTree serves everything from one process, so the counts below live in that process (the login lockout:
``backend.core.rate_limit.AttemptThrottle``, beside the server's one limiter). What each limit answered:
docs/decisions/0010-limits-before-otree-s-lock.md.

- **Sockets per participant.** A participant's page needs one or two sockets (``/live``, ``/auto_advance``, a wait page,
  ``/chat``); a few open tabs need a few more. At most ``LAB_SOCKETS_PER_PARTICIPANT`` (default 6) sockets per
  participant are open at once; one more is refused at the handshake (HTTP 403, nothing is accepted or allocated) and
  each closed socket frees its slot, also when the connection breaks. A socket naming a participant that does not exist
  is refused the same way (so made-up codes do not each get a cap of their own); a participant is counted by its id as a
  number, so ``1``, ``01`` and ``001`` are one participant. Visitors who are not participants yet (a room's waiting
  page, browser bots) hold at most ``LAB_MAX_WAITING_SOCKETS`` (default 500, about 70 MB) sockets together, six per room
  and label and ``WAITING_SOCKETS_PER_ADDRESS`` per client address, so one client cannot fill the waiting room. A room
  that does not exist gets none. One client address holds at most ``LAB_SOCKETS_PER_ADDRESS`` (default 300: a lab's
  shared address still fits its class) sockets of either kind.
- **Admin login and REST key.** After ``LAB_LOGIN_FREE_ATTEMPTS`` (default 5) failed logins from one address, that
  address gets HTTP 429 "Too many failed attempts, try again in N s" for ``LAB_LOGIN_LOCKOUT_S`` (default 30) seconds,
  doubling with each further failure (at most an hour); the right password is refused too until the lockout expires,
  so guessing cannot continue. Failures from all addresses together (guessing from many addresses) lock the login
  after 100 times as many, for at most a minute, so a flood from many addresses cannot keep the researcher out for
  long. A success clears the count; failures older than 15 minutes are forgotten. Every request that carries an
  ``otree-rest-key`` header, whatever its path (oTree checks the key outside ``/api/`` too), is throttled the same
  way on wrong keys, counted separately. HTTP methods are compared in upper case: oTree's views accept ``post`` too.
- **Frame size.** A participant socket's frame above ``LAB_MAX_FORM_BYTES`` (what a participant may send at once,
  by form or by socket) closes the socket (code 1009) before oTree parses it.
- **Slow bodies.** Every request body is read whole before oTree takes its global page lock (``around_app(...,
  outside_page_lock=True)``): oTree reads it under that lock. A body not complete within ``BODY_TIMEOUT_S`` (60 s)
  gets HTTP 408.
- **Body size.** A participant's form post (``/p/...``) larger than ``LAB_MAX_FORM_BYTES`` (default 512 KiB) gets HTTP
  413 before oTree reads it (real pages post a few kilobytes); a REST request (``/api/...``, where a session may
  carry its reasoning logs) larger than ``MAX_REST_BODY_BYTES`` (32 MiB), and any other request (login, room links,
  admin forms) larger than ``MAX_OTHER_BODY_BYTES`` (1 MiB), likewise.
"""

from __future__ import annotations

import asyncio
import hmac
import html
import os
import re
import time
from urllib.parse import parse_qs

from werkzeug.datastructures import LanguageAccept
from werkzeug.http import parse_accept_header

import backend.core.environment as environment
import study_flow
from backend.core.rate_limit import AttemptThrottle

# Websocket paths a participant's pages open, and the query parameter that names the participant there.
PARTICIPANT_SOCKET_PATHS = frozenset(
    {"/live", "/trial", "/auto_advance", "/wait_page", "/subsession_wait_page", "/group_by_arrival_time", "/chat"}
)
_PARTICIPANT_PARAMETERS = ("participant_code", "participant_id")
OVERALL_FACTOR = 100
LONGEST_OVERALL_LOCKOUT_S = 60
WAITING_SOCKETS_PER_ADDRESS = 20
MAX_REST_BODY_BYTES = 32 * 1024 * 1024
MAX_OTHER_BODY_BYTES = 1024 * 1024
MAX_ACCEPT_LANGUAGE_CHARS = 256  # of Accept-Language read (a browser sends under 100; see accepted_language)
BODY_TIMEOUT_S = 60  # a request body not complete within this gets HTTP 408 (a slow client holds a connection)
WAITING = "all waiting visitors"  # the key counting every socket of a visitor who is not a participant yet


def positive_setting(name: str) -> float:
    """A positive number from the environment variable ``name`` (its type and default: `backend.core.environment`);
    a bad value stops the server with the sentence naming it."""
    try:
        return environment.variable(name)
    except ValueError as error:
        raise SystemExit(str(error)) from None


def participant_socket_key(path: str, query_string: bytes) -> str | None:
    """The participant a websocket belongs to (``None`` for sockets that are not a participant's).

    >>> participant_socket_key("/live", b"session_code=s1&participant_code=abc123&page_index=2")
    'participant_code=abc123'
    >>> participant_socket_key("/wait_page", b"session_pk=1&participant_id=7&page_index=3&group_id=2")
    'participant_id=7'
    >>> participant_socket_key("/chat", b"channel=x&participant_id=7.Xy0sig")
    'participant_id=7'
    >>> participant_socket_key("/wait_page", b"participant_id=007"), participant_socket_key("/live", b"x=1")
    ('participant_id=7', '')
    >>> participant_socket_key("/wait_page", b"participant_id=%D9%A1")  # an Arabic-Indic one: no such participant
    ''
    >>> participant_socket_key("/session_monitor/s1", b"") is None
    True

    ``""`` names no possible participant (the socket is refused).
    """
    if path not in PARTICIPANT_SOCKET_PATHS:
        return None
    query = parse_qs(query_string.decode("latin-1"))
    for name in _PARTICIPANT_PARAMETERS:
        values = query.get(name)
        if values:
            # A signed id (the chat's "7.signature") counts as its id, so changing the signature gains nothing.
            value = values[0].split(".")[0]
            if name == "participant_id":
                # By number: "1", "01" and "001" are one participant, each under one cap.
                return f"{name}={int(value)}" if re.fullmatch(r"[0-9]{1,12}", value) else ""
            return f"{name}={value}" if re.fullmatch(r"[A-Za-z0-9]{1,40}", value) else ""
    return ""


def waiting_socket_key(path: str, query_string: bytes) -> str | None:
    """The visitor a socket of someone not yet a participant belongs to: a room's waiting page (by room and label)
    or a browser bot's; ``""`` for a room that does not exist; ``None`` for every other socket.

    >>> waiting_socket_key("/wait_for_session_in_room", b"room_name=dond_study&participant_label=abc&tab_unique_id=t")
    'room=dond_study:abc'
    >>> waiting_socket_key("/browser_bot_wait", b""), waiting_socket_key("/live", b"participant_code=x")
    ('browser bot', None)
    """
    if path == "/wait_for_session_in_room":
        from .otree_internals import ROOM_DICT

        query = parse_qs(query_string.decode("latin-1"))
        room = (query.get("room_name") or [""])[0]
        if room not in ROOM_DICT:
            return ""
        # Without a label each visitor is anonymous: only the overall count applies.
        label = (query.get("participant_label") or [""])[0] or (query.get("tab_unique_id") or [""])[0]
        return f"room={room}:{label}"
    if path == "/browser_bot_wait" or path.startswith("/browser_bots_client/"):
        return "browser bot"
    return None


def _frames_bounded(receive, send, *, limit: int):
    """``receive`` that closes the socket (code 1009, "too big") instead of handing oTree a frame above ``limit``
    bytes: its live handler would parse a frame up to the server's own 1 MiB ceiling before any of the app's checks,
    as often as a client sends one."""

    async def bounded():
        message = await receive()
        if message["type"] == "websocket.receive":
            size = len(message.get("text") or "") + len(message.get("bytes") or b"")
            if size > limit:
                await send({"type": "websocket.close", "code": 1009})
                return {"type": "websocket.disconnect", "code": 1009}
        return message

    return bounded


def storable_form_body(body: bytes) -> bytes:
    """A form body with every NUL (raw, or URL-encoded as ``%00``) turned into U+FFFD, which any database stores.

    >>> storable_form_body(b"remarks=a%00b&x=1"), storable_form_body(b"a\\x00b")
    (b'remarks=a%EF%BF%BDb&x=1', b'a\\xef\\xbf\\xbdb')
    """
    return body.replace(b"%00", b"%EF%BF%BD").replace(b"\x00", "\ufffd".encode())


async def refuse_socket(receive, send) -> None:
    """Close before accepting: the handshake is answered with HTTP 403 and nothing of oTree's runs."""
    await receive()  # websocket.connect
    await send({"type": "websocket.close", "code": 1008})


def client_address(scope) -> str:
    client = scope.get("client")
    return client[0] if client else "unknown"


def accepted_language(scope, available) -> str:
    """The language of ``available`` that the request's ``Accept-Language`` prefers most, by its q-values (werkzeug's
    ``LanguageAccept.best_match``: an exact tag first, else a regional variant's language), else English.

    >>> def asking(header): return {"headers": [(b"accept-language", header.encode())]}
    >>> accepted_language(asking("en;q=0.1, de;q=0.9"), ("en", "de", "it"))
    'de'
    >>> accepted_language(asking("de-CH, fr;q=0.5"), ("en", "de", "it")), accepted_language(asking("fr"), ("en", "it"))
    ('de', 'en')
    >>> accepted_language(asking("fr, it;q=0.3, de;q=0"), ("en", "de", "it")), accepted_language({}, ("en", "de"))
    ('it', 'en')

    Only the header's first ``MAX_ACCEPT_LANGUAGE_CHARS`` are read, up to the last whole language in them: werkzeug
    weighs every language named against every available one, and a 16 KB header of 8,000 made-up languages cost
    65 ms of the server's one process per refusal page (the pages a flood gets):

    >>> accepted_language(asking("x," * 8000 + "de"), ("en", "de")), accepted_language(asking("it;q=0.5," * 40), ("en", "it"))
    ('en', 'it')
    """
    header = ",".join(value.decode("latin-1") for name, value in scope.get("headers", ()) if name == b"accept-language")
    if len(header) > MAX_ACCEPT_LANGUAGE_CHARS:
        header = header[: MAX_ACCEPT_LANGUAGE_CHARS + 1].rpartition(",")[0]
    return parse_accept_header(header, LanguageAccept).best_match(list(available), default="en")


async def _send_page(send, status: int, text: str, *, headers: dict[str, str] | None = None) -> None:
    body = f"<!DOCTYPE html><html><body><p>{html.escape(text)}</p></body></html>".encode()
    extra = [(name.lower().encode(), value.encode()) for name, value in (headers or {}).items()]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(body)).encode())]
            + extra,
        }
    )
    await send({"type": "http.response.body", "body": body})


class Limits:
    """The counters and settings of one server process."""

    def __init__(self) -> None:
        self.sockets_per_participant = int(positive_setting("LAB_SOCKETS_PER_PARTICIPANT"))
        self.waiting_sockets = int(positive_setting("LAB_MAX_WAITING_SOCKETS"))
        self.max_form_bytes = int(positive_setting("LAB_MAX_FORM_BYTES"))
        self.sockets_per_address = int(positive_setting("LAB_SOCKETS_PER_ADDRESS"))
        free = int(positive_setting("LAB_LOGIN_FREE_ATTEMPTS"))
        lockout = positive_setting("LAB_LOGIN_LOCKOUT_S")
        # Read with .get: a defaultdict read in a refused handshake's checks left an entry of 0 per made-up code.
        self.open_sockets: dict[str, int] = {}
        self.known_participants: set[str] = set()
        self.throttles = {
            kind: (
                AttemptThrottle(free_attempts=free, lockout_s=lockout),
                AttemptThrottle(
                    free_attempts=free * OVERALL_FACTOR, lockout_s=lockout, longest_lockout_s=LONGEST_OVERALL_LOCKOUT_S
                ),
            )
            for kind in ("login", "rest key")
        }

    async def websocket(self, app, scope, receive, send) -> None:
        path, query = scope.get("path", ""), scope.get("query_string", b"")
        address = f"address={client_address(scope)}"
        key = participant_socket_key(path, query)
        if key is not None:
            if (
                not key  # names no possible participant
                or self.open_sockets.get(key, 0) >= self.sockets_per_participant
                or self.open_sockets.get(address, 0) >= self.sockets_per_address
                or not await self._participant_exists(key)
            ):
                await refuse_socket(receive, send)
                return
            bounded = _frames_bounded(receive, send, limit=self.max_form_bytes)
            await self._counted(app, scope, bounded, send, keys=[key, address])
            return
        waiting = waiting_socket_key(path, query)
        if waiting is None:
            await app(scope, receive, send)
            return
        waiting_here = f"waiting {address}"
        if (
            waiting == ""  # a room that does not exist
            or self.open_sockets.get(waiting, 0) >= self.sockets_per_participant
            or self.open_sockets.get(WAITING, 0) >= self.waiting_sockets
            or self.open_sockets.get(waiting_here, 0) >= WAITING_SOCKETS_PER_ADDRESS
            or self.open_sockets.get(address, 0) >= self.sockets_per_address
        ):
            await refuse_socket(receive, send)
            return
        await self._counted(app, scope, receive, send, keys=[waiting, WAITING, waiting_here, address])

    async def _counted(self, app, scope, receive, send, *, keys: list[str]) -> None:
        """Serve a socket while it counts against ``keys``; its slots are freed however it ends."""
        for key in keys:
            self.open_sockets[key] = self.open_sockets.get(key, 0) + 1
        try:
            await app(scope, receive, send)
        finally:
            for key in keys:
                left = self.open_sockets.get(key, 0) - 1
                if left > 0:
                    self.open_sockets[key] = left
                else:
                    self.open_sockets.pop(key, None)

    async def _participant_exists(self, key: str) -> bool:
        """Whether the participant a socket names exists (oTree accepts a socket for any made-up code and keeps it
        open)."""
        if key in self.known_participants:
            return True
        from .otree_internals import Participant, page_lock, session_scope

        name, _, value = key.partition("=")
        criteria = {"id": int(value)} if name == "participant_id" else {"code": value}
        async with page_lock:  # as oTree's own socket handlers read the database
            with session_scope():
                exists = Participant.objects_exists(**criteria)
        if exists:
            if len(self.known_participants) > 200_000:
                self.known_participants.clear()
            self.known_participants.add(key)
        return exists

    async def http(self, app, scope, receive, send) -> None:
        # oTree's views dispatch on the lower-cased method, so "post" is a POST too.
        path, method = scope.get("path", ""), scope.get("method", "GET").upper()
        app = self._size_limited(app, limit=self._body_limit(path, scope), storable=path.startswith("/p/"))
        if path == "/login" and method == "POST":
            await self._throttled(app, scope, receive, send, kind="login", failed=lambda status: status == 200)
        elif any(name == b"otree-rest-key" for name, _ in scope.get("headers", ())):
            await self._throttled(app, scope, receive, send, kind="rest key", failed=lambda status: status == 403)
        else:
            await app(scope, receive, send)

    def _body_limit(self, path: str, scope) -> int:
        if path.startswith("/p/"):
            return self.max_form_bytes
        if path.startswith("/api/") and _rest_key_matches(scope):
            return MAX_REST_BODY_BYTES
        return MAX_OTHER_BODY_BYTES

    async def _throttled(self, app, scope, receive, send, *, kind: str, failed) -> None:
        """Refuse a locked-out address (or everyone, after a flood); else pass on and count the outcome.

        A wrong password re-renders the login form (200); a right one redirects. A wrong REST key is a 403.
        """
        per_address, overall = self.throttles[kind]
        address, now = client_address(scope), time.monotonic()
        wait_s = max(per_address.retry_after(address, now=now), overall.retry_after("all", now=now))
        if wait_s:
            what = "login attempts" if kind == "login" else "requests with a wrong REST key"
            text = f"Too many failed {what}. Try again in {wait_s} s."
            await _send_page(send, 429, text, headers={"Retry-After": str(wait_s)})
            return

        async def send_counting_the_outcome(message):
            # Counted before the answer leaves: a client that sends its next guess the moment it reads this answer
            # must already meet the count (counting after the app returned let one extra guess through).
            if message["type"] == "http.response.start":
                if failed(message["status"]):
                    per_address.failed(address, now=time.monotonic())
                    overall.failed("all", now=time.monotonic())
                elif message["status"] < 400:
                    per_address.succeeded(address)
                    overall.succeeded("all")
            await send(message)

        await app(scope, receive, send_counting_the_outcome)

    @staticmethod
    def _size_limited(app, *, limit: int, storable: bool = False):
        """``app`` behind a body-size check: a body above ``limit`` bytes is refused (HTTP 413, in the participant's
        language) by its Content-Length at once, else while it is read, before oTree sees any of it. With
        ``storable`` (participant forms), a NUL in the body becomes U+FFFD (`storable_form_body`): PostgreSQL cannot
        store NUL, and the form would have failed with HTTP 500 and lost the participant's answer."""

        async def limited(scope, receive, send) -> None:
            texts = study_flow.messages(accepted_language(scope, study_flow.SHARED_LANGUAGES))
            refusal = texts["refused_form"]
            for name, value in scope.get("headers", ()):
                if name == b"content-length" and (not value.isdigit() or int(value) > limit):
                    await _send_page(send, 413, refusal)
                    return
            messages, size = [], 0
            deadline = time.monotonic() + BODY_TIMEOUT_S
            while True:
                try:
                    message = await asyncio.wait_for(receive(), max(0.0, deadline - time.monotonic()))
                except TimeoutError:
                    await _send_page(send, 408, texts["slow_body"])
                    return
                messages.append(message)
                if message["type"] != "http.request":
                    break
                size += len(message.get("body", b""))
                if size > limit:
                    await _send_page(send, 413, refusal)
                    return
                if not message.get("more_body"):
                    break
            if storable and any(b"\x00" in m.get("body", b"") or b"%00" in m.get("body", b"") for m in messages):
                body = storable_form_body(b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request"))
                headers = [(n, v) for n, v in scope.get("headers", ()) if n != b"content-length"]
                scope = dict(scope, headers=[*headers, (b"content-length", str(len(body)).encode())])
                messages = [{"type": "http.request", "body": body, "more_body": False}]
            replay = iter(messages)

            async def receive_replayed():
                return next(replay, None) or await receive()

            await app(scope, receive_replayed, send)

        return limited


def install() -> None:
    from .otree_internals import around_app

    limits = Limits()

    async def limiting(app, scope, receive, send):
        if scope["type"] == "websocket":
            await limits.websocket(app, scope, receive, send)
        elif scope["type"] == "http":
            await limits.http(app, scope, receive, send)
        else:
            await app(scope, receive, send)

    around_app(limiting, outside_page_lock=True)  # a body is read whole before oTree takes its page lock


def _rest_key_matches(scope) -> bool:
    """Whether the request carries the server's REST key (or the server has none, so its API is open): only then may
    a REST body be large (an uploaded log set or episodes file); bodies are read before oTree checks the key, so an
    anonymous 32 MiB upload, many at once, would otherwise fill the memory."""
    expected = os.environ.get("OTREE_REST_KEY", "")
    if not expected:
        return True
    given = next((value for name, value in scope.get("headers", ()) if name == b"otree-rest-key"), b"")
    return hmac.compare_digest(given, expected.encode())
