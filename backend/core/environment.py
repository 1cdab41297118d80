"""Every environment variable the product reads, as one pydantic model: each variable a field with its type, default,
group, who reads it and what it means. `environment()` fills it from ``os.environ`` in one place (a blank value counts
as unset) and words a refusal as a sentence naming the variable; the documentation's reference page is generated from
the fields (docs/generate.py), and tests/backend/test_docs_reference.py fails when the code reads a variable that is
not a field here. Pure: no oTree.

An environment variable is per server (its limits, secrets, model endpoint); a session key is per study (a config in
settings.py or the Create-session page; ``backend/core/session_keys.py``): docs/reference/environment.md says which is
which.

>>> environment({"LAB_SOCKETS_PER_PARTICIPANT": " 8 ", "OTREE_PRODUCTION": "0"}).LAB_SOCKETS_PER_PARTICIPANT
8.0
>>> environment({"LAB_MAX_FORM_BYTES": "-1", "LAB_INACTIVE_AFTER_S": "inf"})
Traceback (most recent call last):
...
ValueError: The environment variable LAB_MAX_FORM_BYTES must be a positive number, not '-1'. The environment variable LAB_INACTIVE_AFTER_S must be a finite number of seconds, not 'inf'.
>>> VARIABLES["OTREE_PRODUCTION"].default, sorted({v.group for v in VARIABLES.values()})
('unset (development)', ['Limits', 'Models', 'Release', 'Server', 'Tests'])
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError


def _stripped(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


# oTree's own reading of OTREE_PRODUCTION: set and not 0 is production.
Production = Annotated[bool, BeforeValidator(lambda value: str(value).strip() not in ("", "0"))]
Switch = Annotated[bool, BeforeValidator(lambda value: str(value).strip().lower() in ("1", "true", "yes", "on"))]
Positive = Annotated[float, BeforeValidator(_stripped), Field(gt=0, allow_inf_nan=False)]
Seconds = Annotated[float, BeforeValidator(_stripped), Field(allow_inf_nan=False)]
Count = Annotated[int, BeforeValidator(_stripped), Field(ge=1)]
Text = str | None
# What a refused value of each type must be, in the sentence that refuses it.
ALLOWED = {
    "Positive": "a positive number",
    "Seconds": "a finite number of seconds",
    "Count": "a whole number of at least 1",
}


def _var(default: Any, group: str, read_by: str, *, shown: str = "", key: str = "") -> Any:
    """A field: its default, its group on the reference page, who reads it, (when the default is not a plain value)
    how the page states the default, and the session key whose server-wide default it is, if any; what it means is
    the docstring under it."""
    extra = {"group": group, "read_by": read_by, "shown": shown or str(default), "session_key": key}
    return Field(default, json_schema_extra=extra)


class Environment(BaseModel):
    """The environment variables, typed; `environment()` fills it. Defaults: the typed value (``shown`` words it)."""

    model_config = ConfigDict(frozen=True, extra="ignore", use_attribute_docstrings=True)

    OTREE_PRODUCTION: Production = _var(False, "Server", "settings.py", shown="unset (development)")
    """1 in production (no debug pages); then OTREE_ADMIN_PASSWORD and SECRET_KEY are required."""
    OTREE_AUTH_LEVEL: Text = _var(None, "Server", "settings.py", shown="STUDY in production, none otherwise")
    """STUDY: admin pages, exports and the REST API need the password; DEMO opens the demo page."""
    OTREE_ADMIN_PASSWORD: Text = _var(None, "Server", "settings.py, backend/core/admin_client.py", shown="unset")
    """Admin password (user admin); the command-line tools that read a running server use it too."""
    OTREE_REST_KEY: Text = _var(None, "Server", "oTree", shown="unset")
    """Key for the REST API (header otree-rest-key) when an auth level is set."""
    SECRET_KEY: Text = _var(None, "Server", "settings.py", shown="a development-only key")
    """Signing key for participant links and cookies; a long random secret in production."""
    DATABASE_URL: Text = _var(None, "Server", "oTree", shown="SQLite db.sqlite3")
    """The database, e.g. postgres://user:pw@host/db in production."""
    PORT: Text = _var(None, "Server", "oTree (otree prodserver)", shown="8000")
    """The port the server listens on."""
    FORWARDED_ALLOW_IPS: Text = _var(None, "Server", "uvicorn", shown="127.0.0.1")
    """Behind a reverse proxy: the proxy's address (and only it), so limits count real clients, not the proxy."""
    LAB_SOCKETS_PER_PARTICIPANT: Positive = _var(6, "Limits", "lab_server/limits.py")
    """Open websockets per participant; more are refused at the handshake."""
    LAB_SOCKETS_PER_ADDRESS: Positive = _var(300, "Limits", "lab_server/limits.py")
    """Open websockets per client address (a lab behind one address still fits)."""
    LAB_MAX_WAITING_SOCKETS: Positive = _var(500, "Limits", "lab_server/limits.py")
    """Visitors waiting in all rooms for a session to open (20 per client address)."""
    LAB_LOGIN_FREE_ATTEMPTS: Positive = _var(5, "Limits", "lab_server/limits.py")
    """Failed admin logins (or wrong REST keys) per address before a lockout."""
    LAB_LOGIN_LOCKOUT_S: Positive = _var(30, "Limits", "lab_server/limits.py")
    """The first lockout's length in seconds, doubling up to an hour."""
    LAB_MAX_FORM_BYTES: Positive = _var(524288, "Limits", "lab_server/limits.py")
    """Largest participant form post or live-socket frame; larger posts get HTTP 413, larger frames close the socket."""
    LAB_INACTIVE_AFTER_S: Seconds = _var(3600, "Limits", "lab_server/admin_pages.py")
    """Seconds without a new page after which an unfinished participant counts as returned (left) on Study status."""
    LAB_LIVE_MESSAGES_PER_MINUTE: Positive = _var(
        60, "Limits", "lab_server/budgets.py", shown="60 (bursts of 10)", key="live_messages_per_minute"
    )
    """Live-socket messages per participant per minute, counted before oTree's lock, for sessions whose config sets no
    live_messages_per_minute (the one live budget; over it a live page says 'please wait')."""
    LAB_LIVE_MESSAGES_PER_ADDRESS_PER_MINUTE: Positive = _var(6000, "Limits", "lab_server/budgets.py")
    """Live-socket messages per client address per minute (a lab behind one address still fits)."""
    LAB_LIVE_BYTES_PER_MINUTE: Positive = _var(1048576, "Limits", "lab_server/budgets.py")
    """Live-socket bytes per participant per minute; over it the socket closes."""
    LAB_PAGE_REQUESTS_PER_MINUTE: Positive = _var(300, "Limits", "lab_server/budgets.py")
    """Plain page requests per participant per minute (bursts of a minute's worth), counted before oTree's page lock;
    over it the participant gets HTTP 429 with Retry-After and a short page in their language."""
    LAB_NEW_PARTICIPANTS_PER_ADDRESS: Positive = _var(60, "Limits", "lab_server/places.py")
    """New places one client address may take in one room at once, then one more every LAB_NEW_PARTICIPANTS_WINDOW_S
    divided by this number (a token bucket: up to twice the number within one window); more get a 'try later' page
    (HTTP 429). Also the page requests a minute one address may make for participant codes the server does not know
    (lab_server/budgets.py)."""
    LAB_NEW_PARTICIPANTS_WINDOW_S: Positive = _var(600, "Limits", "lab_server/places.py")
    """The seconds in which LAB_NEW_PARTICIPANTS_PER_ADDRESS places refill (one every window / number seconds)."""
    LAB_ADMIT_MAX_IN_FLIGHT: Positive = _var(8, "Limits", "lab_server/admission.py")
    """Requests in flight (waiting for or holding oTree's page lock) at which the server counts as saturated: new
    arrivals (room and session-wide links) then wait on a light page that lets them in as room frees up."""
    LAB_ADMIT_MAX_WAIT_S: Positive = _var(300, "Limits", "lab_server/admission.py")
    """The longest a new arrival waits on that page before coming in first: after it, the arrival is let in as soon as
    the server is not saturated (within LAB_ADMIT_ARRIVALS_PER_S), and on a saturated server still one every 2 s, so
    nobody waits for good."""
    LAB_ADMIT_TARGET_MS: Positive = _var(150, "Limits", "lab_server/admission.py")
    """Participants' pages slower than this on average (over about the last 20 pages) also make new arrivals wait."""
    LAB_ADMIT_MAX_BUSY_PERCENT: Positive = _var(50, "Limits", "lab_server/admission.py")
    """The server busy (a request in flight) more than this share of the last 20 s or so also makes new arrivals wait:
    oTree serves one request at a time, so the wait for every page inside grows as 1 / (1 - share). 100 turns this
    check off."""
    LAB_ADMIT_ARRIVALS_PER_S: Positive = _var(4, "Limits", "lab_server/admission.py")
    """New arrivals come in at most this many a second (15 s worth at once while nobody waits: a class entering
    together; one second's worth once people wait in line); more wait, on the waiting page, first come first in. An
    upper bound: below it, LAB_ADMIT_MAX_BUSY_PERCENT decides how many come in (bench/admission.py measures it;
    about 2 a second for social_eval on 2 cores)."""
    LAB_FRAME_ANCESTORS: Text = _var(None, "Server", "lab_server/headers.py", shown="unset (no framing)")
    """Origins that may frame participant pages (space-separated); admin pages can never be framed."""
    LAB_NO_TLS: Switch = _var(False, "Server", "lab_server/headers.py", shown="unset (cookies Secure in production)")
    """1 for a lab server without TLS: cookies lose Secure, so anyone on the network can read them
    (docs/security.md)."""
    LAB_LOCALE_DIRS: Text = _var(
        None, "Server", "backend/core/catalogues.py", shown="unset (the repository's locale/ only)"
    )
    """Folders of gettext catalogues (<folder>/<language>/LC_MESSAGES/<domain>.po), separated by : (; on Windows),
    searched before the repository's locale/: a language whose catalogues are complete there is offered to every
    session (docs/languages.md)."""
    LLM_MODEL: str = _var("scripted", "Models", "settings.py", key="llm_model")
    """Default for llm_model in every session config; scripted plays offline without any model server."""
    OPENAI_BASE_URL: Text = _var(None, "Models", "backend/core/llm/settings.py", shown="unset (OpenAI's own)")
    """Any OpenAI-compatible endpoint, e.g. http://127.0.0.1:8001/v1 for vLLM, llama.cpp or our fake server."""
    OPENAI_API_KEY: Text = _var(None, "Models", "backend/core/llm/client.py", shown="unset (no-key with a base URL)")
    """Key for the model endpoint (never shown in pages, exports or logs); not needed for scripted or a local server."""
    LLM_MAX_CONCURRENCY: Count = _var(32, "Models", "backend/core/llm/client.py")
    """Cap on concurrent model calls in the server process."""
    RELEASE_PSEUDONYM_KEY: Text = _var(None, "Release", "backend/core/release.py", shown="unset (release refuses)")
    """The secret (16 bytes or more) that turns participant IDs into pseudonyms in a data release; keep it to link
    later releases, never publish it."""
    XDG_CACHE_HOME: Text = _var(None, "Models", "backend/core/llm/serve.py", shown="~/.cache")
    """Where python -m backend.core.llm.serve keeps the llama.cpp server it builds and the small model."""
    DOND_BOT_EXPECT: Text = _var(None, "Tests", "dond/tests.py", shown="unset")
    """oTree bots only: the outcome the dond bots must reach."""
    DOND_BOT_EXPECT_VIOLATIONS: Text = _var(None, "Tests", "dond/tests.py", shown="unset")
    """oTree bots only: how many violations the dond bots must see."""
    TEST_DATABASE_URL: Text = _var(None, "Tests", "harness/servers.py", shown="unset (SQLite)")
    """Runs the test suite on PostgreSQL."""
    LAB_TEST_CLOCK_FILE: Text = _var(None, "Tests", "backend/core/clock.py", shown="unset (the real clock)")
    """Tests only: a file whose number of seconds moves the server's clock forward (game limits, partners gone,
    reservations, page countdowns). A production server refuses to start with it."""


def environment(environ: Mapping[str, str] | None = None) -> Environment:
    """The variables of ``environ`` (``os.environ`` when None), typed; a blank one takes its default. One ValueError
    names every variable at fault, each in a sentence."""
    environ = os.environ if environ is None else environ
    given = {name: environ[name] for name in Environment.model_fields if environ.get(name, "").strip()}
    try:
        return Environment.model_validate(given)
    except ValidationError as error:
        names = dict.fromkeys(str(problem["loc"][0]) for problem in error.errors())
        raise ValueError(" ".join(_refusal(name, given[name]) for name in names)) from None


def variable(name: str, environ: Mapping[str, str] | None = None) -> Any:
    """One variable, typed (only it is read, so another's mistake does not stop this one); ValueError as above.

    >>> variable("LLM_MAX_CONCURRENCY", {"LLM_MAX_CONCURRENCY": "0"})
    Traceback (most recent call last):
    ...
    ValueError: The environment variable LLM_MAX_CONCURRENCY must be a whole number of at least 1, not '0'.
    """
    environ = os.environ if environ is None else environ
    return getattr(environment({name: environ[name]} if name in environ else {}), name)


def _refusal(name: str, raw: str) -> str:
    return f"The environment variable {name} must be {ALLOWED[Environment.__annotations__[name]]}, not {raw!r}."


@dataclass(frozen=True)
class Variable:
    name: str
    group: str
    default: str
    read_by: str
    meaning: str
    session_key: str = ""  # the session key a study sets to override this server-wide default


def _variable(name: str) -> Variable:
    field = Environment.model_fields[name]
    extra = field.json_schema_extra or {}
    words = (
        extra["group"],
        extra["shown"],
        extra["read_by"],
        " ".join((field.description or "").split()),
        extra["session_key"],
    )
    return Variable(name, *words)  # type: ignore[arg-type]


# The reference page's rows (docs/generate.py), in the fields' order.
VARIABLES: dict[str, Variable] = {name: _variable(name) for name in Environment.model_fields}
