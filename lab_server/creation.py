"""Session creation is all or nothing.

oTree creates the session row, then its participants, subsessions and players, committing as it goes, and only then
runs each app's ``creating_session``; an error there would leave a session with participants and no players
(docs/decisions/0011-places-go-to-real-participants.md). So:

1. **Check first.** oTree calls ``SessionConfig.clean()`` on the session's config before it writes anything. We extend
   it: the shared keys (``study_flow.validate_shared_config``) and then, for each app in ``app_sequence``, the
   app's own ``validate_session_config(config)`` run there. A hook raises ``ValueError`` with a sentence that names the
   key or the file (and its line and field); it may also normalise values in place (``"5"`` -> ``5``). Every problem
   of every app is collected into one ``CreateSessionInvalidArgs``, which the admin page shows as "Failed to create
   session: ..." and the REST API answers with HTTP 400.
2. **Show it as text.** oTree's Create-session page writes the failure's traceback into the page as HTML, and our
   messages quote the refused value (from a key or a researcher's file, which may come from anywhere): the traceback
   is HTML-escaped before it is sent.
3. **The room's own configs.** ``settings.ROOM_CONFIGS`` ties each room to its configs; a session of another config
   is refused in that room, naming the room's configs and the config's own room.
4. **Clean up anyway.** Should anything still fail during creation, every row of the half-made session is deleted in
   a transaction of its own, so no orphan survives.
5. **A room never changes hands silently.** oTree gives a room to each session created in it, taking it from the
   session it held. When that happens, both sessions record it (``session.vars``: ``ROOM_TAKEN_FROM`` on the new one,
   ``ROOM_TAKEN_BY`` on the old one: the room, the other session, when, and the old session's counts at that moment:
   people who had started, those still working, places free). The launch check of both reads the records
   (``backend/core/room_check.room_findings``), and the room's page names the session it was taken from. Creation
   is not refused: docs/decisions/0001-a-room-taken-from-a-live-study.md says why.
"""

from __future__ import annotations

import html
import importlib
import logging
import threading
import time

import lab_server.otree_internals as otree_internals

logger = logging.getLogger(__name__)
_creating = threading.local()
ROOM_TAKEN_FROM = "lab_room_taken_from"  # on the session that took a room: from which session, and its counts then
ROOM_TAKEN_BY = "lab_room_taken_by"  # on the session that lost its room: to which session, and its own counts then


def validate_session_config(config: dict) -> None:
    """Run the shared and every app's checks on ``config``; raise one ``CreateSessionInvalidArgs`` naming them all."""
    import study_flow

    from .otree_internals import CreateSessionInvalidArgs

    problems = []
    try:
        study_flow.validate_shared_config(config)
    except ValueError as error:
        problems.append(str(error))
    for app_name in config.get("app_sequence", ()):
        hook = getattr(importlib.import_module(app_name), "validate_session_config", None)
        if hook is None:
            continue
        try:
            hook(config)
        except ValueError as error:
            problems.append(f"{app_name}: {error}")
        except Exception as error:  # e.g. RecursionError from a file nested 5,000 deep: still a refusal, not a 500
            problems.append(f"{app_name}: the session config could not be checked ({type(error).__name__}: {error}).")
    if problems:
        name = config.get("name", "?")
        raise CreateSessionInvalidArgs(f"The session '{name}' was not created. " + " ".join(problems))


def room_problem(config_name: str, room_name: str | None, room_configs: dict) -> str | None:
    """Why a session of ``config_name`` may not be created in ``room_name`` (settings.ROOM_CONFIGS ties each room to
    its configs), or None when it may (or no room is given).

    >>> rooms = {"dond_study": ("dond_llm", "dond_human"), "bias_study": ("bias_tests",)}
    >>> room_problem("bias_tests", "dond_study", rooms)
    "The room 'dond_study' runs only the configs dond_llm, dond_human, not 'bias_tests'; create it in the room bias_study."
    >>> room_problem("dond_llm", "dond_study", rooms), room_problem("bias_tests", None, rooms)
    (None, None)
    """
    if not room_name or room_name not in room_configs or config_name in room_configs[room_name]:
        return None
    homes = [room for room, names in room_configs.items() if config_name in names]
    where = f"create it in the room {', '.join(homes)}" if homes else "it belongs to no room: create it without one"
    return (
        f"The room '{room_name}' runs only the configs {', '.join(room_configs[room_name])}, not '{config_name}'; "
        f"{where}."
    )


def configs_of_rooms() -> dict:
    """``ROOM_CONFIGS`` of the project's settings, as oTree loaded them (``otree.settings`` holds every name of
    settings.py): read through oTree, so ``lab_server`` never imports the layer above it."""
    return getattr(otree_internals.otree_settings, "ROOM_CONFIGS", {}) or {}


def _check_room(args, kwargs) -> None:
    from .otree_internals import CreateSessionInvalidArgs

    config_name = kwargs.get("session_config_name", args[0] if args else "")
    problem = room_problem(config_name, kwargs.get("room_name"), configs_of_rooms())
    if problem:
        raise CreateSessionInvalidArgs(f"The session '{config_name}' was not created. {problem}")


def _room_session(room_name: str | None):
    """The session ``room_name`` holds now (None without a room or a session in it)."""
    if not room_name:
        return None
    from .otree_internals import ROOM_DICT, request_session

    room = ROOM_DICT.get(room_name)
    held = room.get_session() if room is not None else None
    # oTree's room.set_session deletes the room's row by a bulk query and adds a new one: the row loaded here would
    # stay in the identity map and SQLAlchemy would warn (and replace it) when the new row takes its key.
    loaded = request_session()
    for row in [obj for obj in loaded.identity_map.values() if type(obj).__name__ == "RoomToSession"]:
        loaded.expunge(row)
    return held


def session_counts(session) -> dict[str, int]:
    """People (not tests) who took a place of ``session``, those of them still working (neither finished nor screened
    out), and the places nobody took."""
    from study_flow import test_data

    started = working = free = 0
    for participant in session.get_participants():
        if not participant.visited:
            free += 1
        elif not test_data.is_test(participant):
            started += 1
            pvars = participant.vars
            working += not (pvars.get("completed") or pvars.get("screened_out"))
    return dict(started=started, working=working, free=free)


def _record_room_taken(room_name: str, old, new) -> None:
    """Write on both sessions that ``new`` took ``room_name`` from ``old`` (their counts now), and log it."""
    from backend.core import launch_check

    from .otree_internals import db

    counts = session_counts(old)
    at = time.time()
    new.vars[ROOM_TAKEN_FROM] = dict(room=room_name, session=old.code, at=at, **counts)
    old.vars[ROOM_TAKEN_BY] = dict(room=room_name, session=new.code, at=at, **counts)
    db.commit()
    log = logger.warning if launch_check.live_study(counts) else logger.info
    log(
        "Session %s took the room %s from session %s (%d started, %d still working, %d places free there).",
        new.code,
        room_name,
        old.code,
        counts["started"],
        counts["working"],
        counts["free"],
    )


def _purge(session_code: str) -> None:
    """Delete every row of a half-made session (participants, players, groups, subsessions, app rows) and commit."""
    from .otree_internals import Session, db

    try:
        db.rollback()
        Session.objects_filter(Session.code == session_code).delete(synchronize_session=False)
        db.commit()
    except Exception:  # the original error matters more; leave a trace of this one
        logger.exception("Could not remove the half-made session %s", session_code)


def _validating_first(clean):
    def clean_then_validate(self):
        # Ours first: oTree's clean() turns participation_fee into a currency and fails with a bare error on [] or 1e308.
        validate_session_config(self)
        clean(self)

    return clean_then_validate


def _remembering_the_code(run_creating_session_functions):
    def remember_then_run(session, progress_message_fxn):
        _creating.code = session.code
        return run_creating_session_functions(session, progress_message_fxn)

    return remember_then_run


def _all_or_nothing(create_session):
    def create_session_or_nothing(*args, **kwargs):
        _creating.code = None
        _check_room(args, kwargs)
        room_name = kwargs.get("room_name")
        held = _room_session(room_name)
        try:
            session = create_session(*args, **kwargs)
        except Exception:
            if _creating.code:
                _purge(_creating.code)
            raise
        finally:
            _creating.code = None
        if held is not None and held.code != session.code:
            try:
                _record_room_taken(room_name, held, session)
            except Exception:  # the session exists and has the room: say so in the log rather than fail its creation
                logger.exception("Could not record that session %s took the room %s", session.code, room_name)
        return session

    return create_session_or_nothing


def _escaping_tracebacks(send):
    async def send_escaped(self, event: dict):
        if isinstance(event.get("traceback"), str):
            event = dict(event, traceback=html.escape(event["traceback"]))
        await send(self, event)

    return send_escaped


def install() -> None:
    from .otree_internals import replace

    replace("otree.session:SessionConfig.clean", _validating_first)
    replace("otree.session:run_creating_session_functions", _remembering_the_code)
    create_session_or_nothing = replace("otree.session:create_session", _all_or_nothing)
    for consumer in ("WSCreateSession", "WSCreateDemoSession"):
        replace(f"otree.channels.consumers:{consumer}.send_response_to_browser", _escaping_tracebacks)
    # The REST API imported the name before we wrapped it.
    replace("otree.views.rest:create_session", lambda _unwrapped: create_session_or_nothing)
