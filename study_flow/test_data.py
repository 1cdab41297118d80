"""Which sessions and participants are tests, not study data: the one rule every export and report follows.

A participant is a test when their session was made from oTree's demo page (``session.is_demo``) or when they
arrived through a researcher's test link (``participant.vars["is_test"]``, set by the entry). Exports carry the
answer as the ``is_test`` column and leave tests out unless asked.
"""

from __future__ import annotations

TEST_VAR = "is_test"  # participant.vars key set when a participant arrives through a test link


def is_test_session(session) -> bool:
    """True for a session made from oTree's demo page."""
    return bool(getattr(session, "is_demo", False))


def is_test(participant) -> bool:
    """True for a participant of a demo session or one who arrived through a test link."""
    return is_test_session(participant.session) or bool((participant.vars or {}).get(TEST_VAR))
