"""Prolific entry: who may take a slot of a session, checked before oTree gives one out.

oTree's entry views (``/room/<room>``, ``/join/<code>``, ``/InitializeParticipant/<code>``) accept any
``participant_label`` up to 100 characters, mark a slot visited before they look at it, and print it unescaped on the
admin's Session Monitor and Payments pages; a visit without a label takes a slot too, and a returning PID in a new
session of the same room starts the study again (docs/decisions/0011-places-go-to-real-participants.md). So each of
those views is wrapped here, and the wrapper runs first:

1. **Shape.** The label must have the session's ``participant_id_format`` (``prolific``: 24 lowercase hex digits, the
   default; ``any``: 1-64 letters, digits, ``-`` or ``_``). A room link must carry one, and so must ``/join`` for a
   session that is not a demo and asks for Prolific IDs; ``/InitializeParticipant`` (the admin's per-participant
   links, bots) and the demo page keep working without one, but a label they carry is checked too. A
   refused link gets a page in the session's language (``global/EntryRefused.html``, HTTP 400) and no slot.
2. **Once per study.** Entering through a room records the room on the participant (``participant.vars``). A PID that
   entered the same room before, in any session, is sent back to that participant's start URL, which shows wherever
   they were (their completion page and code included); it never gets a second slot.
3. **Welcome.** The room's welcome page (``global/RoomWelcome.html``) is in the language of the room's session.
4. **Full session.** oTree's bare 404 "Session is full." becomes a page in the session's language saying what to do
   (return the study on Prolific, contact the researcher); it still takes no slot and stays a 404.
5. **Real participants** (``places``): a new place needs the session's ``prolific_study_id`` as ``STUDY_ID`` when
   the session names one, and fits the address's budget of new places; places whose visitor never answered the
   consent page are handed back first.
6. **Backstop.** ``Participant.set_label`` refuses any label outside letters, digits, ``-`` and ``_`` and rolls the
   request's changes back, so a label oTree might store by another path can never mark a slot used or reach a page.

The wrappers run inside oTree's request: under its page lock and in its database session, in the devserver, the
prodserver and ``otree test`` alike. Texts: ``study_flow.MESSAGES`` (``entry_*``, ``full_*``).
"""

from __future__ import annotations

import functools

import lab_server.admission as admission
import lab_server.places as places
import study_flow

from .refusals import refusal_page

# participant.vars key: the room a participant entered through (the study a PID may do once).
ROOM_VAR = "entered_room"
WELCOME_TEMPLATE = "global/RoomWelcome.html"


def _id_format(session) -> str:
    # Without a session (a room still waiting for one) only the shape every format shares is known.
    if session is None:
        return "any"
    return session.config.get("participant_id_format") or "prolific"


def welcome_page(session):
    """A room link's first stop (``global/RoomWelcome.html``), in the language of the room's session (English while
    the room has none): it keeps Prolific's study ids in a cookie and forwards at once."""
    from .otree_internals import render

    language = session.config.get("language") if session is not None else None
    language = language if language in study_flow.MESSAGES else "en"
    return render(WELCOME_TEMPLATE, dict(language=language, study_text=study_flow.messages(language)))


def _is_session_full(response) -> bool:
    from .otree_internals import no_participants_left_http_response

    return response.status_code == 404 and response.body == no_participants_left_http_response().body


def _earlier_participant(label: str, room_name: str):
    """The first participant that entered ``room_name`` with ``label``, in any session, or None."""
    from .otree_internals import Participant

    for participant in Participant.objects_filter(label=label).order_by("id"):
        # _vars, not vars: reading must not mark every candidate's vars as changed.
        if (participant._vars or {}).get(ROOM_VAR) == room_name:
            return participant
    return None


def _enter(session, room_name: str | None, label: str, let_otree_assign, request):
    """Resume an earlier participation of ``label`` in ``room_name``, or let oTree assign a slot and record the room."""
    from starlette.responses import RedirectResponse

    own = session.pp_set.filter_by(label=label).first()
    if own is None and room_name:
        earlier = _earlier_participant(label, room_name)
        if earlier is not None:
            return RedirectResponse(earlier._start_url(), status_code=302)
    if own is None:
        refusal = _new_place_refusal(request, session, room_name)
        if refusal is not None:
            return refusal
    response = let_otree_assign()
    if _is_session_full(response):
        return refusal_page("full", session, status_code=404)
    if response.status_code < 400:
        participant = own or session.pp_set.filter_by(label=label).first()
        if room_name and participant is not None and (participant._vars or {}).get(ROOM_VAR) != room_name:
            participant.vars[ROOM_VAR] = room_name
        if own is None and participant is not None:
            places.place_taken(request, session, room_name, participant)
    return response


def _new_place_refusal(request, session, room_name: str | None):
    """The study id and the address budget (``places``), checked first (they are cheap: a refused request costs no
    scan of the session); then the places of visitors who never answered the consent page are handed back."""
    import time

    refusal = places.new_place_refusal(request, session, room_name)
    if refusal is None:
        places.hand_back_stale(session, now=time.time())
    return refusal


def _remember_language(path: str, session) -> None:
    """The waiting page of a busy server (``admission``) speaks the language of the session behind this link."""
    if session is not None:
        from .languages import session_language

        admission.remember_language(path, session_language(session))


def _label_problem(request, label: str, session) -> str | None:
    """Why an entry link's participant label gives no place (``study_flow.participant_id_problem``), or None. A link
    that carries the label twice is malformed: the admission gate and oTree must never read two different PIDs."""
    if len(request.query_params.getlist("participant_label")) > 1:
        return "malformed"
    return study_flow.participant_id_problem(label, id_format=_id_format(session))


def _guard_room_link(original):
    @functools.wraps(original)
    def get(self, request):
        from .otree_internals import ROOM_DICT

        room = ROOM_DICT.get(request.path_params.get("room_name"))
        if room is None:
            return original(self, request)  # oTree's 404
        session = room.get_session()
        _remember_language(f"/room/{room.name}", session)
        if not request.query_params.get("welcome_page_ok"):
            if room.welcome_page != WELCOME_TEMPLATE:
                return original(self, request)
            return welcome_page(session)  # it forwards at once, with the label
        label = request.query_params.get("participant_label", "")
        problem = _label_problem(request, label, session)
        if problem:
            return refusal_page(problem, session, status_code=400)
        if session is None:
            return original(self, request)  # oTree's wait page until the researcher opens a session
        return _enter(session, room.name, label, lambda: original(self, request), request)

    return get


def _guard_session_wide_link(original):
    @functools.wraps(original)
    def get(self, request):
        from .otree_internals import Session

        session = Session.objects_filter(_anonymous_code=request.path_params.get("anonymous_code")).first()
        if session is None:
            return original(self, request)  # oTree's own 404
        _remember_language(f"/join/{session._anonymous_code}", session)
        label = request.query_params.get("participant_label")
        if not label and not session.is_demo and _id_format(session) == "prolific":
            # A Prolific study's session-wide link without a PID would hand out a place to anyone who has the link.
            return refusal_page("missing", session, status_code=400)
        if not label:  # the demo page, and cookie-based links of sessions that ask for no Prolific ID
            response = original(self, request)
            return refusal_page("full", session, status_code=404) if _is_session_full(response) else response
        problem = _label_problem(request, label, session)
        if problem:
            return refusal_page(problem, session, status_code=400)
        room = session.get_room()
        return _enter(session, room.name if room else None, label, lambda: original(self, request), request)

    return get


def _guard_initialize_participant(original):
    @functools.wraps(original)
    def get(self, request):
        from .otree_internals import Participant

        label = request.query_params.get("participant_label")
        if label:
            participant = Participant.objects_filter(code=request.path_params.get("code")).first()
            session = participant.session if participant is not None else None
            problem = _label_problem(request, label, session)
            if problem:
                return refusal_page(problem, session, status_code=400)
        return original(self, request)

    return get


def _guard_set_label(original):
    @functools.wraps(original)
    def set_label(self, label):
        if label and not study_flow.SAFE_LABEL.fullmatch(label):
            from starlette.exceptions import HTTPException

            from .otree_internals import db

            db.rollback()  # oTree marked the slot visited just before; a 4xx response would commit that
            raise HTTPException(400, "A participant label may hold only letters, digits, - and _ (1-100 of them).")
        return original(self, label)

    return set_label


def install() -> None:
    from .otree_internals import replace

    replace("otree.views.participant:AssignVisitorToRoom.get", _guard_room_link)
    replace("otree.views.participant:SessionWideLink.get", _guard_session_wide_link)
    replace("otree.views.participant:InitializeParticipant.get", _guard_initialize_participant)
    replace("otree.models:Participant.set_label", _guard_set_label)
