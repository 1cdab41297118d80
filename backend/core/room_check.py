"""The launch check's room rule (``backend/core/launch_check.py`` holds the others): a session in no room or in a
room tied to other configs, and a room that changed hands while a study was under way, once or again and again.

``lab_server/creation.py`` records each takeover on both sessions when it happens (the room, the other session, the
old session's counts then); ``lab_server/study_pages.py`` reads, for a session that lost its room, the sessions the
room passed to and who holds it now (live), and for a session that holds a room, the chain of takeovers behind it,
each with its people still working now. docs/decisions/0001-a-room-taken-from-a-live-study.md says why.
"""

from __future__ import annotations

from backend.core.launch_check import finding, live_study


def _counts(record: dict) -> str:
    return (
        f"{record.get('started', '?')} people had started, {record.get('working', '?')} of them still working, "
        f"{record.get('free', '?')} places free"
    )


def _session_words(record: dict) -> str:
    """One session of a room's takeovers: its code, whether a study was under way when the room was taken from it
    (the recorded counts), and how many of its people still work now where the reader counted them."""
    now = record.get("working_now")
    if record.get("gone"):
        now_said = "; it is no longer on this server"
    elif isinstance(now, int) and not isinstance(now, bool):
        now_said = f"; {now} still working now" if now else "; nobody working there now"
    else:
        now_said = ""
    under_way = ", a study under way" if live_study(record) else ""
    loop = " (its records loop back to a later session: read no further)" if record.get("loop") else ""
    return f"session {record.get('session')!r}{under_way} ({_counts(record)} when the room was taken{now_said}){loop}"


def takeover_words(chain: list[dict]) -> str:
    """The sessions a room was taken from, newest first: ``chain[0]`` is the record of the session this one took
    the room from, ``chain[1]`` the record of the session that one had taken it from, and so on.

    >>> chain = [dict(session="B", started=0, working=0, free=4, working_now=0),
    ...          dict(session="A", started=1, working=1, free=3, working_now=1)]
    >>> print(takeover_words(chain))  # doctest: +NORMALIZE_WHITESPACE
    session 'B' (0 people had started, 0 of them still working, 4 places free when the room was taken; nobody working
    there now), which had taken it from session 'A', a study under way (1 people had started, 1 of them still
    working, 3 places free when the room was taken; 1 still working now)
    """
    said = [_session_words(record) for record in chain if isinstance(record, dict)]
    return ", which had taken it from ".join(said)


def room_findings(
    *,
    room: str | None,
    config: str,
    room_configs: tuple[str, ...] | None,
    taken_by: dict | None = None,
    taken_from: dict | None = None,
    home_holder: tuple[str, str] | None = None,
    earlier: list[dict] | None = None,
    later: list[str] | None = None,
    holder_now: str | None = None,
) -> list[dict]:
    """The session's room: none, one tied to other configs, taken from this session by a newer one (``taken_by``),
    or taken by this session from an older one (``taken_from``). Both records are written when the room changes
    hands (``lab_server/creation.py``: room, session, the other session's counts then); ``home_holder`` is (room,
    session) when this session is in no room and its config's room holds another session (read also where no record
    exists, e.g. for sessions made before the records).

    A room can change hands more than once; the records say each step, the room says who holds it now:

    - ``earlier``: the records before ``taken_from``, newest first (the session this one took the room from had
      itself taken it from another, ...), each with ``working_now`` (that session's people still working, counted
      when the check runs) where the reader counted them. A study under way anywhere in the chain is named.
    - ``later``, ``holder_now``: for a session that lost its room, the sessions the room passed to after
      ``taken_by`` (by their own records) and the session the room holds now, read live ("" for none; None when not
      read): new arrivals go there, not to ``taken_by`` once the room has moved on.

    >>> room_findings(room="bias_study", config="dond_llm", room_configs=("bias_tests",))[0]["severity"]
    'problem'
    >>> room_findings(room=None, config="dond_llm", room_configs=None)[0]["severity"]
    'warning'
    >>> lost = dict(room="dond_study", session="new1", started=2, working=1, free=3)
    >>> room_findings(room=None, config="dond_llm", room_configs=None, taken_by=lost)[0]["what"][:60]
    "Room 'dond_study' was taken by session 'new1', created while"
    >>> "go to session 'new2', which holds the room now" in room_findings(room=None, config="dond_llm",
    ...     room_configs=None, taken_by=lost, later=["new2"], holder_now="new2")[0]["what"]
    True
    >>> took = dict(room="dond_study", session="old1", started=2, working=1, free=3)
    >>> [f["severity"] for f in room_findings(room="dond_study", config="dond_llm", room_configs=("dond_llm",),
    ...                                       taken_from=took)]
    ['warning', 'ok']
    >>> quiet = dict(room="dond_study", session="mid1", started=0, working=0, free=4)
    >>> [f["severity"] for f in room_findings(room="dond_study", config="dond_llm", room_configs=None,
    ...                                       taken_from=quiet, earlier=[took])]
    ['warning', 'ok']
    """
    found = []
    if room is None and isinstance(taken_by, dict):
        now_there = f"Room {taken_by.get('room')!r} was taken by session {taken_by.get('session')!r}, created while "
        moved = _where_arrivals_go(taken_by, later or [], holder_now)
        if live_study(taken_by):
            found.append(
                finding(
                    "problem" if int(taken_by.get("free") or 0) > 0 else "warning",
                    now_there + f"this study was under way ({_counts(taken_by)}): this session is in no room now, "
                    f"{moved}, and this session's free places are never filled. People already here go on by their "
                    "own links; a PID that started here resumes here.",
                    "If the new session was meant (this one was full or is over), nothing to do. If not: oTree "
                    "cannot put a session back into a room, so go on with the session that holds the room (it has "
                    "the same room link) and check it is the same config and keys, or close the room (its page) to "
                    "stop new arrivals.",
                )
            )
        else:
            found.append(
                finding(
                    "warning",
                    now_there + f"nobody had started here ({_counts(taken_by)}): this session is in no room; {moved}.",
                    "Use the session that holds the room; this one has no Prolific link.",
                )
            )
        return found
    if room is None:
        if home_holder:
            where, holder = home_holder
            return [
                finding(
                    "warning",
                    f"The session is in no room: room {where!r}, the room of its config, holds session {holder!r}, "
                    "and the room's Prolific link starts that session.",
                    f"Use session {holder!r} for the study, or create this config's session again in room {where!r}.",
                )
            ]
        return [
            finding(
                "warning",
                "The session is in no room: there is no Prolific link for it, only per-participant links.",
                "Create the session from its room's page (Rooms) so the room's link starts it.",
            )
        ]
    if room_configs is not None and config not in room_configs:
        return [
            finding(
                "problem",
                f"Room {room!r} is tied to {', '.join(room_configs)}, not to this session's config {config!r}.",
                "Close the room and create the session in the room of its config.",
            )
        ]
    chain = [record for record in [taken_from, *(earlier or [])] if isinstance(record, dict)]
    if isinstance(taken_from, dict) and any(live_study(record) for record in chain):
        under_way = [repr(record.get("session")) for record in chain if live_study(record)]
        found.append(
            finding(
                "warning",
                f"This session took room {room!r} from {takeover_words(chain)}: new arrivals through the room's "
                "link come here now; a PID that started in one of those sessions resumes there.",
                f"If {', '.join(under_way)} was full or over, nothing to do. If not, this session now carries the "
                "study: keep its config and keys the same as there, and count the places of all of them on "
                "Prolific.",
            )
        )
    found.append(finding("ok", f"Room {room!r} runs config {config!r}."))
    return found


def _where_arrivals_go(taken_by: dict, later: list[str], holder_now: str | None) -> str:
    """Where new arrivals through a lost room's link go: the session that took it, unless the room moved on since.

    >>> _where_arrivals_go(dict(session="B"), ["C"], "C")
    "new arrivals through the room's link go to session 'C', which holds the room now (it passed from 'B' to 'C')"
    >>> _where_arrivals_go(dict(session="B"), [], "")
    'the room holds no session now (it was closed): new arrivals through its link start no study'
    """
    taker = taken_by.get("session")
    if holder_now is None or holder_now == taker:
        return "new arrivals through the room's link go to that session"
    if holder_now == "":
        return "the room holds no session now (it was closed): new arrivals through its link start no study"
    path = " to ".join(repr(code) for code in [taker, *later, *([] if holder_now in later else [holder_now])])
    return (
        f"new arrivals through the room's link go to session {holder_now!r}, which holds the room now (it passed "
        f"from {path})"
    )
