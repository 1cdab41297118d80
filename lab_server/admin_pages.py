"""Researcher pages beyond oTree's own admin: a status page per study (session) and, for DoND, every game's transcript.

- ``/StudyStatus/<session code>`` (template ``_templates/admin/StudyStatus.html``): every participant who opened a
  page, with the Prolific ID, a status (working, finished, screened out, returned, timed out) and its reason, progress
  as a meaning (``item 3 of 10``, ``page Bargain (dond)``, a percentage) and the last page opened; slots nobody
  opened are counted as *not started*. The rules: ``backend/core/participant_status.py``; what an app adds (a DoND
  pairing or game timeout, an expired annotation reservation) comes from here. Someone who opened no page for
  ``LAB_INACTIVE_AFTER_S`` seconds (default 3600) without finishing counts as returned (left); someone whose page's
  own time limit ran out with no page opened since (a tab closed mid-game) as timed out. Test participants (test
  links, demo sessions: ``study_flow.test_data.is_test``, the one rule every export and view reads) are listed,
  marked *test*, and left out of the counts, as Pay and review leaves them out.
- An app's own researcher page (DoND: ``/DondTranscripts/<session code>``, every game's transcript), registered by
  the app with `register_app_page`, with what the app says about its participants (``participant_status``).

Both are oTree admin session pages (``AdminSessionPage``): oTree's login guards them wherever ``AUTH_LEVEL`` is set
(``STUDY``, and also ``DEMO``, where oTree leaves its Monitor open: these pages show PIDs). Every session page links
to them from the top bar (``_templates/otree/includes/navbar.html``). Every text shown is escaped by the templates.
oTree has no hook for routes of a project, so the routes are added to oTree's router on the first request that passes
its outermost middleware (``otree_internals.PATCHED``).
"""

from __future__ import annotations

import functools
import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass

import backend.core.environment as environment
import lab_server.otree_internals as otree_internals
from backend.core.participant_status import STATUSES, classify, duration, progress
from study_flow import test_data

DEFAULT_INACTIVE_AFTER_S = 3600


@dataclass(frozen=True)
class AppPage:
    """An app's researcher page beside Study status, and what the app says about each of its participants.

    ``view``: the page's name and URL (``/<view>/<session code>``); ``template``: its template; ``context(session)``:
    its template variables; ``participant_status(player)``: ``dict(status, detail, last_active)`` (``status``
    ``timed_out`` or None: the shared flow decides)."""

    view: str
    title: str
    template: str
    context: Callable
    participant_status: Callable


APP_PAGES: dict[str, AppPage] = {}  # app name -> its page: filled by the apps (`register_app_page`), never imported


def register_app_page(app: str, page: AppPage) -> None:
    """Called by an app when it is imported (before the first request builds the routes: `views`)."""
    APP_PAGES[app] = page


def inactive_after_s() -> float:
    """``LAB_INACTIVE_AFTER_S`` (`backend.core.environment`); 0 or less is the default; a value that is not a finite
    number stops the server (docs/decisions/0007-typed-settings.md)."""
    try:
        value = environment.variable("LAB_INACTIVE_AFTER_S")
    except ValueError as error:
        raise SystemExit(str(error)) from None
    return value if value > 0 else DEFAULT_INACTIVE_AFTER_S


def _app_of(subsession) -> str:
    return type(subsession).__module__.split(".")[0]


def _reservation_status(app_module, subsession, session, now: float) -> dict[str, dict]:
    """Participant code -> timed-out status for an annotation app whose reservation expired (study_flow.assignments)."""
    Assignment = getattr(app_module, "Assignment", None)
    timeout_s = session.config.get("reservation_timeout_s")
    if Assignment is None or not timeout_s:
        return {}
    from study_flow import assignments

    found = {}
    for row in Assignment.filter(subsession=subsession):
        if assignments.is_expired(row, now=now, timeout_s=float(timeout_s)):
            detail = f"reservation of {row.item_id} expired {duration(now - row.reserved_at - float(timeout_s))} ago"
            found[row.participant_code] = dict(status="timed_out", detail=detail, last_active=None)
    return found


def merged(first: dict, second: dict) -> dict:
    """What two apps of one session say about a participant, both kept: timed out if either says so, both details,
    the later activity.

    >>> merged(dict(status="timed_out", detail="a", last_active=1.0), dict(status=None, detail="b", last_active=2.0))
    {'status': 'timed_out', 'detail': 'a; b', 'last_active': 2.0}
    """
    return dict(
        status=first.get("status") or second.get("status"),
        detail="; ".join(part for part in (first.get("detail"), second.get("detail")) if part),
        last_active=max(filter(None, (first.get("last_active"), second.get("last_active"))), default=None),
    )


def app_statuses(session, now: float) -> dict[str, dict]:
    """Participant code -> what the participant's apps say (status, detail, last_active), round 1 of each app."""
    statuses: dict[str, dict] = {}
    for subsession in session.get_subsessions():
        if subsession.round_number != 1:
            continue
        app = _app_of(subsession)
        page = APP_PAGES.get(app)
        if page is not None:
            for player in subsession.get_players():
                found = page.participant_status(player)
                if found.get("status") or found.get("detail"):
                    code = player.participant.code
                    statuses[code] = merged(statuses[code], found) if code in statuses else found
        for code, found in _reservation_status(importlib.import_module(app), subsession, session, now).items():
            statuses.setdefault(code, found)
    return statuses


def page_deadline(participant) -> float | None:
    """When the participant's current page's time limit ends (epoch seconds), or None when it has none: oTree's
    countdown of the page they are on (``_timeout_expiration_time`` of ``_timeout_page_index``, in ``USED``)."""
    if participant._timeout_page_index != participant._index_in_pages:
        return None
    return participant._timeout_expiration_time or None


def participant_rows(session, now: float) -> tuple[list[dict], dict[str, int]]:
    """The status page's rows (plain text values) of everyone who opened a page, and the count per status of those
    who are not tests (each row says ``test``; ``counts["test"]`` is how many tests there are, whatever their
    status)."""
    inactive_after = inactive_after_s()
    statuses = app_statuses(session, now)
    rows, counts = [], dict.fromkeys(STATUSES, 0)
    counts["test"] = 0
    for participant in session.get_participants():
        pvars = participant.vars
        found = statuses.get(participant.code, {})
        page = participant._current_page_name or ""
        last_active = max(filter(None, (participant._last_page_timestamp, found.get("last_active"))), default=None)
        test = test_data.is_test(participant)
        facts = dict(
            visited=bool(participant.visited),
            completed=bool(pvars.get("completed")),
            page=page,
            screened_out=bool(pvars.get("screened_out")),
            screenout_reason=str(pvars.get("screenout_reason") or ""),
            app_status=found.get("status"),
            app_detail=found.get("detail") or "",
            last_active=last_active,
            deadline=page_deadline(participant),
        )
        status, reason = classify(facts, now=now, inactive_after=inactive_after)
        counts["test" if test else status] += 1
        if status == "not_started":
            continue
        text, percent = progress(
            pvars,
            status=status,
            page=page,
            app=participant._current_app_name or "",
            index=participant._index_in_pages or 0,
            pages=participant._max_page_index or 0,
        )
        details = [part for part in (reason, found.get("detail") or "") if part]
        rows.append(
            dict(
                pid=str(pvars.get("prolific_pid") or participant.label or "") or "—",
                code=participant.code,
                status=status,
                status_text=STATUSES[status] + (" (test)" if test else ""),
                test=test,
                detail="; ".join(dict.fromkeys(details)),
                progress=text,
                percent=percent,
                last_active=f"{duration(now - last_active)} ago" if last_active else "",
            )
        )
    order = list(STATUSES)
    rows.sort(key=lambda row: (order.index(row["status"]), row["pid"], row["code"]))
    return rows, counts


def study_vars(session, now: float) -> dict:
    rows, counts = participant_rows(session, now)
    apps = session.config.get("app_sequence") or []
    return dict(
        rows=rows,
        counts=[dict(key=key, text=STATUSES[key], n=counts[key]) for key in STATUSES],
        n_tests=counts["test"],
        app_pages=[dict(view=APP_PAGES[app].view, title=APP_PAGES[app].title) for app in apps if app in APP_PAGES],
        inactive_after=duration(inactive_after_s()),
        **places_vars(session),
        admission=admission_vars(),
        model_costs=costs_vars(session),
        generated=time.strftime("%H:%M:%S UTC", time.gmtime(now)),
    )


def costs_vars(session) -> dict:
    """What the session's model calls cost so far and its spending cap (``study_flow.spending``); {} for a session
    whose apps call no model (no llm_model key)."""
    from study_flow import spending

    if "llm_model" not in session.config:
        return {}
    try:
        return dict(spending.status(session), problem="")
    except ValueError as error:  # a price table gone or broken since creation: said, never a failed page
        return dict(problem=str(error))


def places_vars(session) -> dict:
    """The places handed back for want of a consent answer, and those held without one now (``places``)."""
    import lab_server.places as places

    limit = places.consent_within_s(session)
    return dict(
        n_handed_back=len(places.handed_back(session)),
        n_unconsented=sum(1 for participant in session.get_participants() if places.unconsented(participant)),
        consent_within=duration(limit) if limit > 0 else "never (consent_within_s = 0)",
    )


def admission_vars() -> dict:
    """The admission gate's counts for the whole server (``admission``): arrivals waiting now, let in after waiting,
    the longest wait, the threshold."""
    import lab_server.admission as admission

    gate = admission.GATE
    return gate.summary() if gate is not None else {}


@functools.cache
def views() -> tuple[type, ...]:
    """The admin views, made on first use (oTree's view classes can be imported only inside a project)."""
    base = otree_internals.AdminSessionPage

    class StudyStatus(base):
        def get_template_name(self):
            return "admin/StudyStatus.html"

        def vars_for_template(self):
            return study_vars(self.session, time.time())

    def app_view(page: AppPage) -> type:
        class AppView(base):
            def get_template_name(self):
                return page.template

            def vars_for_template(self):
                return page.context(self.session)

        AppView.__name__ = AppView.__qualname__ = page.view  # oTree takes the URL and the route's name from it
        return AppView

    found = (StudyStatus, *(app_view(page) for page in APP_PAGES.values()))
    auth_level = getattr(otree_internals.otree_settings, "AUTH_LEVEL", None)
    for view in found:
        view._requires_login = auth_level in ("STUDY", "DEMO")
    return found


def add_routes(app) -> None:
    """Put the views' routes first in the router of oTree's app ``app`` (once per app)."""
    if app is None or getattr(app, "lab_admin_pages", False):
        return
    from starlette.routing import Route

    for view in views():
        app.router.routes.insert(0, Route(view.url_pattern(), view, name=view.__name__))
    app.lab_admin_pages = True


def install() -> None:
    from .otree_internals import around_app

    inactive_after_s()  # a bad LAB_INACTIVE_AFTER_S stops the server at start, not a page later

    async def routing(app, scope, receive, send):
        if scope["type"] == "http":
            add_routes(scope.get("app"))
        await app(scope, receive, send)

    around_app(routing)
