"""Which sessions and participants are tests, not study data: the one rule every export and report follows.

A participant is a test when their session was made from oTree's demo page (``session.is_demo``) or when they
arrived through a researcher's test link (``participant.vars["is_test"]``, set by the entry). Exports carry the
answer as the ``is_test`` column and leave tests out unless asked.

Which exports keep tests: an export asked for ONE session (oTree's ``?session_code=`` and the admin reports'
download buttons) holds every participant of that session, tests marked; an export of all sessions (admin → Data, the
API without ``session_code``) leaves tests out. A researcher who tries their own session reads it by its code; a
study's data is never mixed with demo sessions. ``lab_server.outputs`` says which kind of export is running
(``one_session``), and applies the same rule to oTree's own exports (wide, per app, page times, chat).

Which views count tests: none. The study status page lists them, marked, without counting them; Pay and review and
the launch check's pilot times leave them out; oTree's Payments page lists them marked "(test)" and leaves them out of
its total and mean (``lab_server.outputs``); an app's admin report leaves their rows out of its figures
(``report_rows``) and says how many it left out, except in a demo session, where everyone is a test: its report
shows them and says so.
"""

from __future__ import annotations

import contextlib
import contextvars

TEST_VAR = "is_test"  # participant.vars key set when a participant arrives through a test link

_ONE_SESSION = contextvars.ContextVar("export_of_one_session", default=False)


def is_test_session(session) -> bool:
    """True for a session made from oTree's demo page."""
    return bool(getattr(session, "is_demo", False))


def is_test(participant) -> bool:
    """True for a participant of a demo session or one who arrived through a test link."""
    return is_test_session(participant.session) or bool((participant.vars or {}).get(TEST_VAR))


@contextlib.contextmanager
def one_session(asked: bool = True):
    """Within this block, exports were asked for one session: they keep that session's tests (marked)."""
    token = _ONE_SESSION.set(bool(asked))
    try:
        yield
    finally:
        _ONE_SESSION.reset(token)


def keeps_tests() -> bool:
    """Whether the export running now keeps tests (it was asked for one session)."""
    return _ONE_SESSION.get()


def exported(players) -> list:
    """The players an export writes: all of them for an export of one session (`one_session`), else the non-tests."""
    players = list(players)
    if keeps_tests():
        return players
    return [player for player in players if not is_test(player.participant)]


def session_cells(session, participant=None) -> dict:
    """The columns every custom export starts with: session code, config name, language, and whether it is a test
    (``is_test`` 1/0: the participant's when given, else the session's)."""
    config = getattr(session, "config", None) or {}
    test = is_test(participant) if participant is not None else is_test_session(session)
    return dict(
        session_code=session.code,
        config_name=str(config.get("name") or ""),
        language=str(config.get("language") or "en"),
        is_test=int(test),
    )


def codes_of_testers(session) -> set[str]:
    """The participant codes of the session's tests (`is_test`)."""
    return {participant.code for participant in session.get_participants() if is_test(participant)}


def report_rows(session, rows, codes_of) -> tuple[list, int]:
    """(the rows an admin report counts, how many test rows it left out): rows whose people (``codes_of(row)``: their
    participant codes) include a test are left out, except in a demo session (everyone is a test; all are kept).

    >>> from types import SimpleNamespace as NS
    >>> real, tester = NS(code="r1", vars={}), NS(code="t1", vars={"is_test": True})
    >>> session = NS(is_demo=False, get_participants=lambda: [real, tester])
    >>> real.session = tester.session = session
    >>> report_rows(session, [("r1", ""), ("t1", ""), ("r1", "t1")], codes_of=lambda row: row)
    ([('r1', '')], 2)
    """
    rows = list(rows)
    if is_test_session(session):
        return rows, 0
    tests = codes_of_testers(session)
    kept = [row for row in rows if not tests & set(filter(None, codes_of(row)))]
    return kept, len(rows) - len(kept)
