"""Response headers: no framing, no sniffing, no referrers, and ``Secure`` cookies in production.

Every HTTP response gets, unless it set the header itself (docs/decisions/0012-what-otree-prints-and-sends.md says
why):

- ``X-Content-Type-Options: nosniff`` (a browser never runs an upload or a CSV as a script or a page);
- ``Referrer-Policy: no-referrer``: participant URLs hold the participant code and room links the PID, and no link
  or resource a page loads may carry them to another site (or to our own logs);
- ``X-Frame-Options: DENY`` and ``Content-Security-Policy: frame-ancestors 'none'`` on every page. Participant pages
  (``PARTICIPANT_PREFIXES``) may be framed by the origins named in ``LAB_FRAME_ANCESTORS`` (space-separated, e.g.
  ``https://survey.example.org``, for a study that embeds the task in a survey); they then get
  ``frame-ancestors <those origins>`` and no ``X-Frame-Options`` (which cannot name an origin). Admin pages are never
  framed.
- In production (``OTREE_PRODUCTION`` set) every cookie the server sets is marked ``Secure``: the browser sends it
  only over HTTPS. Behind a TLS proxy (nginx, Caddy, a cloud load balancer) that is all it takes: the browser talks
  HTTPS to the proxy and the cookie is Secure whatever the proxy speaks to the server. (Set uvicorn's
  ``FORWARDED_ALLOW_IPS`` to the proxy's address, so the server also trusts the proxy's ``X-Forwarded-Proto`` and
  ``X-Forwarded-For``: redirects then say ``https`` and the per-address limits count real clients.) A lab without TLS
  sets ``LAB_NO_TLS=1``: cookies are then sent without ``Secure``, which costs this: anyone on the lab's network can
  read the admin's login cookie and the participants' pages in transit and act as them. Browsers treat
  ``http://localhost`` as secure, so a researcher's own machine works either way.

A bad ``LAB_FRAME_ANCESTORS`` stops the server at start with a sentence.
"""

from __future__ import annotations

import re

import backend.core.environment as environment

PARTICIPANT_PREFIXES = ("/p/", "/room/", "/join/", "/InitializeParticipant/", "/static/")
_ORIGIN = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?|'self'")
ALWAYS = ((b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"))
NO_FRAMING = ((b"x-frame-options", b"DENY"), (b"content-security-policy", b"frame-ancestors 'none'"))


def frame_ancestors(raw: str) -> tuple[str, ...]:
    """The origins of ``LAB_FRAME_ANCESTORS`` (space-separated), each checked.

    >>> frame_ancestors(" https://survey.example.org  'self' ")
    ('https://survey.example.org', "'self'")
    >>> frame_ancestors("")
    ()
    >>> frame_ancestors("https://a.org; script-src *")
    Traceback (most recent call last):
    ...
    ValueError: LAB_FRAME_ANCESTORS must list origins such as https://survey.example.org (or 'self'), separated by spaces, not 'https://a.org;'.
    """
    origins = tuple(raw.split())
    for origin in origins:
        if not _ORIGIN.fullmatch(origin):
            raise ValueError(
                "LAB_FRAME_ANCESTORS must list origins such as https://survey.example.org (or 'self'), "
                f"separated by spaces, not {origin!r}."
            )
    return origins


def secure_cookie(value: bytes) -> bytes:
    """A ``Set-Cookie`` value marked ``Secure`` (unchanged if it is already).

    >>> secure_cookie(b"session=abc; path=/; httponly; samesite=lax")
    b'session=abc; path=/; httponly; samesite=lax; Secure'
    >>> secure_cookie(b"session=abc; Secure; HttpOnly")
    b'session=abc; Secure; HttpOnly'
    """
    if any(part.strip().lower() == b"secure" for part in value.split(b";")[1:]):
        return value
    return value + b"; Secure"


def response_headers(headers: list, *, path: str, ancestors: tuple[str, ...], secure: bool) -> list:
    """``headers`` (an ASGI response's) with the headers above added where the response did not set them.

    >>> added = response_headers([(b"set-cookie", b"s=1; path=/")], path="/SessionMonitor/x", ancestors=(),
    ...                          secure=True)
    >>> dict(added)[b"x-frame-options"], dict(added)[b"set-cookie"]
    (b'DENY', b's=1; path=/; Secure')
    >>> added = response_headers([], path="/p/abc/dond/Bargain/4", ancestors=("https://s.org",), secure=False)
    >>> b"x-frame-options" in dict(added), dict(added)[b"content-security-policy"]
    (False, b'frame-ancestors https://s.org')
    """
    present = {name.lower() for name, _ in headers}
    if secure:
        headers = [(name, secure_cookie(value) if name.lower() == b"set-cookie" else value) for name, value in headers]
    framing = NO_FRAMING
    if ancestors and path.startswith(PARTICIPANT_PREFIXES):
        framing = ((b"content-security-policy", b"frame-ancestors " + " ".join(ancestors).encode()),)
    for name, value in (*ALWAYS, *framing):
        if name not in present:
            headers.append((name, value))
    return headers


def secure_cookies() -> bool:
    """Whether cookies are marked ``Secure``: in production, unless ``LAB_NO_TLS`` is set."""
    from .otree_internals import otree_settings

    return not otree_settings.DEBUG and not environment.variable("LAB_NO_TLS")


def configured_ancestors() -> tuple[str, ...]:
    """The origins of ``LAB_FRAME_ANCESTORS``; a bad value stops the server with its sentence."""
    try:
        return frame_ancestors(environment.variable("LAB_FRAME_ANCESTORS") or "")
    except ValueError as error:
        raise SystemExit(str(error)) from None


def install() -> None:
    from .otree_internals import around_app

    ancestors = configured_ancestors()
    secure = secure_cookies()

    async def with_headers(app, scope, receive, send):
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        path = scope.get("path", "")

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = response_headers(
                    list(message.get("headers", ())), path=path, ancestors=ancestors, secure=secure
                )
                message = dict(message, headers=headers)
            await send(message)

        await app(scope, receive, send_with_headers)

    around_app(with_headers)
