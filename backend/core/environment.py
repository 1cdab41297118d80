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


VARIABLES: dict[str, Variable] = {
    v.name: v
    for v in (
        Variable(
            "OTREE_PRODUCTION",
            "Server",
            "unset (development)",
            "settings.py",
            "Set to 1 on a live server: debug pages off, admin login required; the server refuses to start "
            "without OTREE_ADMIN_PASSWORD and SECRET_KEY.",
        ),
        Variable(
            "OTREE_ADMIN_PASSWORD",
            "Server",
            "unset",
            "settings.py, backend/core/admin_client.py",
            "The admin's password; the command-line tools that read a running server use it too.",
        ),
        Variable(
            "SECRET_KEY",
            "Server",
            "a development-only key",
            "settings.py",
            "Signs sessions and cookies; a long random secret in production.",
        ),
        Variable(
            "OTREE_AUTH_LEVEL",
            "Server",
            "STUDY in production, none otherwise",
            "settings.py",
            "oTree's access level: STUDY (participant links only) or DEMO.",
        ),
        Variable(
            "DATABASE_URL",
            "Server",
            "SQLite db.sqlite3",
            "oTree",
            "The database, e.g. postgres://user:password@localhost/otree; PostgreSQL in production.",
        ),
        Variable("PORT", "Server", "8000", "oTree (otree prodserver)", "The port the server listens on."),
        Variable(
            "LAB_INACTIVE_AFTER_S",
            "Limits",
            "3600",
            "lab_server/admin_pages.py",
            "Study status page: seconds without a page load after which a participant counts as inactive.",
        ),
        Variable(
            "LAB_SOCKETS_PER_PARTICIPANT",
            "Limits",
            "6",
            "lab_server/limits.py",
            "Live connections one participant may hold open.",
        ),
        Variable(
            "LAB_MAX_WAITING_SOCKETS",
            "Limits",
            "500",
            "lab_server/limits.py",
            "Live connections of visitors who are not participants yet, all together.",
        ),
        Variable(
            "LAB_MAX_FORM_BYTES",
            "Limits",
            "524288",
            "lab_server/limits.py",
            "The largest page form a participant may send (bytes); larger is refused with a message.",
        ),
        Variable(
            "LAB_SOCKETS_PER_ADDRESS",
            "Limits",
            "300",
            "lab_server/limits.py",
            "Live connections from one network address; behind a proxy every participant may share one, "
            "so raise it or let the proxy pass the client's address.",
        ),
        Variable(
            "LAB_LOGIN_FREE_ATTEMPTS",
            "Limits",
            "5",
            "lab_server/limits.py",
            "Failed admin logins from one address before it is locked out for a while.",
        ),
        Variable(
            "LAB_LOGIN_LOCKOUT_S",
            "Limits",
            "30",
            "lab_server/limits.py",
            "The first lockout after those failures (seconds); it doubles with each further failure.",
        ),
        Variable(
            "LLM_MODEL",
            "Models",
            "scripted",
            "settings.py",
            "The model the demo configs use; scripted plays offline without any model server.",
        ),
        Variable(
            "OPENAI_BASE_URL",
            "Models",
            "unset (OpenAI's own)",
            "backend/core/llm/settings.py",
            "The OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 for a local llama.cpp server.",
        ),
        Variable(
            "OPENAI_API_KEY",
            "Models",
            "unset (no-key with a base URL)",
            "backend/core/llm/client.py",
            "The key sent to the model server; never shown in pages, exports or logs.",
        ),
        Variable(
            "LLM_MAX_CONCURRENCY",
            "Models",
            "unlimited",
            "backend/core/llm/client.py",
            "The most model calls in flight at once per server process.",
        ),
        Variable(
            "RELEASE_PSEUDONYM_KEY",
            "Release",
            "unset (release refuses)",
            "backend/core/release.py",
            "The secret (16 bytes or more) that turns participant IDs into pseudonyms in a data release; "
            "keep it to link later releases, never publish it.",
        ),
        Variable(
            "DOND_BOT_EXPECT",
            "Tests",
            "unset",
            "dond/tests.py",
            "oTree bots only: the outcome the dond bots must reach.",
        ),
        Variable(
            "DOND_BOT_EXPECT_VIOLATIONS",
            "Tests",
            "unset",
            "dond/tests.py",
            "oTree bots only: how many violations the dond bots must see.",
        ),
        Variable("TEST_DATABASE_URL", "Tests", "unset (SQLite)", "tests/", "Runs the test suite on PostgreSQL."),
    )
}
