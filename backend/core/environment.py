"""Every environment variable the product reads, defined once as data: its name, default, who reads it and what it
means. The documentation's reference page is generated from `VARIABLES` (docs/generate.py), and
tests/backend/test_docs_reference.py fails when the code reads a variable that is not listed here. Pure: no oTree.

>>> VARIABLES["OTREE_PRODUCTION"].default
'unset (development)'
>>> sorted(group for group in {v.group for v in VARIABLES.values()})
['Limits', 'Models', 'Release', 'Server', 'Tests']
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variable:
    name: str
    group: str
    default: str
    read_by: str
    meaning: str


_TABLE = (
    # name, group, default, read by, meaning
    (
        "OTREE_PRODUCTION",
        "Server",
        "unset (development)",
        "settings.py",
        "1 in production (no debug pages); then OTREE_ADMIN_PASSWORD and SECRET_KEY are required.",
    ),
    (
        "OTREE_AUTH_LEVEL",
        "Server",
        "STUDY in production, none otherwise",
        "settings.py",
        "STUDY: admin pages, exports and the REST API need the password; DEMO opens the demo page.",
    ),
    (
        "OTREE_ADMIN_PASSWORD",
        "Server",
        "unset",
        "settings.py, backend/core/admin_client.py",
        "Admin password (user admin); the command-line tools that read a running server use it too.",
    ),
    (
        "OTREE_REST_KEY",
        "Server",
        "unset",
        "oTree",
        "Key for the REST API (header otree-rest-key) when an auth level is set.",
    ),
    (
        "SECRET_KEY",
        "Server",
        "a development-only key",
        "settings.py",
        "Signing key for participant links and cookies; a long random secret in production.",
    ),
    (
        "DATABASE_URL",
        "Server",
        "SQLite db.sqlite3",
        "oTree",
        "The database, e.g. postgres://user:pw@host/db in production.",
    ),
    ("PORT", "Server", "8000", "oTree (otree prodserver)", "The port the server listens on."),
    (
        "FORWARDED_ALLOW_IPS",
        "Server",
        "127.0.0.1",
        "uvicorn",
        "Behind a reverse proxy: the proxy's address (and only it), so limits count real clients, not the proxy.",
    ),
    (
        "LAB_SOCKETS_PER_PARTICIPANT",
        "Limits",
        "6",
        "lab_server/limits.py",
        "Open websockets per participant; more are refused at the handshake.",
    ),
    (
        "LAB_SOCKETS_PER_ADDRESS",
        "Limits",
        "300",
        "lab_server/limits.py",
        "Open websockets per client address (a lab behind one address still fits).",
    ),
    (
        "LAB_MAX_WAITING_SOCKETS",
        "Limits",
        "500",
        "lab_server/limits.py",
        "Visitors waiting in all rooms for a session to open (20 per client address).",
    ),
    (
        "LAB_LOGIN_FREE_ATTEMPTS",
        "Limits",
        "5",
        "lab_server/limits.py",
        "Failed admin logins (or wrong REST keys) per address before a lockout.",
    ),
    (
        "LAB_LOGIN_LOCKOUT_S",
        "Limits",
        "30",
        "lab_server/limits.py",
        "The first lockout's length in seconds, doubling up to an hour.",
    ),
    (
        "LAB_MAX_FORM_BYTES",
        "Limits",
        "524288",
        "lab_server/limits.py",
        "Largest participant form post or live-socket frame; larger posts get HTTP 413, larger frames close the socket.",
    ),
    (
        "LAB_INACTIVE_AFTER_S",
        "Limits",
        "3600",
        "lab_server/admin_pages.py",
        "Seconds without a new page after which an unfinished participant counts as returned (left) on Study status.",
    ),
    (
        "LAB_LIVE_MESSAGES_PER_MINUTE",
        "Limits",
        "60 (bursts of 10)",
        "lab_server/budgets.py",
        "Live-socket messages per participant per minute, counted before oTree's lock, for sessions whose config sets "
        "no live_messages_per_minute (the one live budget; over it a live page says 'please wait').",
    ),
    (
        "LAB_LIVE_MESSAGES_PER_ADDRESS_PER_MINUTE",
        "Limits",
        "6000",
        "lab_server/budgets.py",
        "Live-socket messages per client address per minute (a lab behind one address still fits).",
    ),
    (
        "LAB_LIVE_BYTES_PER_MINUTE",
        "Limits",
        "1048576",
        "lab_server/budgets.py",
        "Live-socket bytes per participant per minute; over it the socket closes.",
    ),
    (
        "LAB_PAGE_REQUESTS_PER_MINUTE",
        "Limits",
        "300",
        "lab_server/budgets.py",
        "Plain page requests per participant per minute (bursts of a minute's worth), counted before oTree's page "
        "lock; over it the participant gets HTTP 429 with Retry-After and a short page in their language.",
    ),
    (
        "LAB_NEW_PARTICIPANTS_PER_ADDRESS",
        "Limits",
        "60",
        "lab_server/places.py",
        "New places one client address may take in one room per window; more get a 'try later' page (HTTP 429). "
        "Also the page requests a minute one address may make for participant codes the server does not know "
        "(lab_server/budgets.py).",
    ),
    (
        "LAB_NEW_PARTICIPANTS_WINDOW_S",
        "Limits",
        "600",
        "lab_server/places.py",
        "The window, in seconds, of LAB_NEW_PARTICIPANTS_PER_ADDRESS.",
    ),
    (
        "LAB_ADMIT_MAX_IN_FLIGHT",
        "Limits",
        "8",
        "lab_server/admission.py",
        "Requests in flight (waiting for or holding oTree's page lock) at which the server counts as saturated: new "
        "arrivals (room and session-wide links) then wait on a light page that lets them in as room frees up.",
    ),
    (
        "LAB_ADMIT_MAX_WAIT_S",
        "Limits",
        "300",
        "lab_server/admission.py",
        "The longest a new arrival waits on that page before coming in first: after it, the arrival is let in as "
        "soon as the server is not saturated (within LAB_ADMIT_ARRIVALS_PER_S), and on a saturated server still one "
        "every 2 s, so nobody waits for good.",
    ),
    (
        "LAB_ADMIT_TARGET_MS",
        "Limits",
        "150",
        "lab_server/admission.py",
        "Participants' pages slower than this on average (over about the last 20 pages) also make new arrivals wait.",
    ),
    (
        "LAB_ADMIT_MAX_BUSY_PERCENT",
        "Limits",
        "50",
        "lab_server/admission.py",
        "The server busy (a request in flight) more than this share of the last 20 s or so also makes new arrivals "
        "wait: oTree serves one request at a time, so the wait for every page inside grows as 1 / (1 - share). "
        "100 turns this check off.",
    ),
    (
        "LAB_ADMIT_ARRIVALS_PER_S",
        "Limits",
        "4",
        "lab_server/admission.py",
        "New arrivals come in at most this many a second (15 s worth at once while nobody waits: a class entering "
        "together; one second's worth once people wait in line); more wait, on the waiting page, first come first "
        "in. An upper bound: below it, LAB_ADMIT_MAX_BUSY_PERCENT decides how many come in (bench/admission.py "
        "measures it; about 2 a second for social_eval on 2 cores).",
    ),
    (
        "LAB_FRAME_ANCESTORS",
        "Server",
        "unset (no framing)",
        "lab_server/headers.py",
        "Origins that may frame participant pages (space-separated); admin pages can never be framed.",
    ),
    (
        "LAB_NO_TLS",
        "Server",
        "unset (cookies Secure in production)",
        "lab_server/headers.py",
        "1 for a lab server without TLS: cookies lose Secure, so anyone on the network can read them (docs/security.md).",
    ),
    (
        "LLM_MODEL",
        "Models",
        "scripted",
        "settings.py",
        "Default for llm_model in every session config; scripted plays offline without any model server.",
    ),
    (
        "OPENAI_BASE_URL",
        "Models",
        "unset (OpenAI's own)",
        "backend/core/llm/settings.py",
        "Any OpenAI-compatible endpoint, e.g. http://127.0.0.1:8001/v1 for vLLM, llama.cpp or our fake server.",
    ),
    (
        "OPENAI_API_KEY",
        "Models",
        "unset (no-key with a base URL)",
        "backend/core/llm/client.py",
        "Key for the model endpoint (never shown in pages, exports or logs); not needed for scripted or a local server.",
    ),
    (
        "LLM_MAX_CONCURRENCY",
        "Models",
        "32",
        "backend/core/llm/client.py",
        "Cap on concurrent model calls in the server process.",
    ),
    (
        "RELEASE_PSEUDONYM_KEY",
        "Release",
        "unset (release refuses)",
        "backend/core/release.py",
        "The secret (16 bytes or more) that turns participant IDs into pseudonyms in a data release; keep it to link "
        "later releases, never publish it.",
    ),
    (
        "XDG_CACHE_HOME",
        "Models",
        "~/.cache",
        "backend/core/llm/serve.py",
        "Where python -m backend.core.llm.serve keeps the llama.cpp server it builds and the small model.",
    ),
    ("DOND_BOT_EXPECT", "Tests", "unset", "dond/tests.py", "oTree bots only: the outcome the dond bots must reach."),
    (
        "DOND_BOT_EXPECT_VIOLATIONS",
        "Tests",
        "unset",
        "dond/tests.py",
        "oTree bots only: how many violations the dond bots must see.",
    ),
    ("TEST_DATABASE_URL", "Tests", "unset (SQLite)", "tests/support/harness.py", "Runs the test suite on PostgreSQL."),
    (
        "LAB_TEST_CLOCK_FILE",
        "Tests",
        "unset (the real clock)",
        "backend/core/clock.py",
        "Tests only: a file whose number of seconds moves the server's clock forward (game limits, partners gone, "
        "reservations, page countdowns). A production server refuses to start with it.",
    ),
)
VARIABLES: dict[str, Variable] = {row[0]: Variable(*row) for row in _TABLE}
