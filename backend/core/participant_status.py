"""A study participant's status and progress as a researcher reads them (the study status page,
``lab_server/admin_pages.py``), from plain facts about the participant.

Statuses (`STATUSES`), first match wins: *not started* (no page opened), *finished* (reached the completion page;
a timeout on the way shows as its reason), *declined* (declined consent: they were shown the screen-out code, and
Prolific lists them as a screened-out submission, not a return), *screened out* (any other screen-out reason, e.g. a
failed comprehension check), *timed out* (the app says so: a DoND pairing or game time limit, an annotation
reservation that expired; or the current page's own time limit, ``deadline``, ran out with no page opened since:
someone who closed the tab mid-game), *returned* (no page opened for longer than ``inactive_after`` seconds: they
left), else *working*. Progress is ``item 3 of 10`` where the app counts items (``study_flow.set_progress``), else
``page Bargain (dond)`` with the share of the session's pages passed; finished is 100 %.
"""

from __future__ import annotations

STATUSES = {
    "working": "working",
    "finished": "finished",
    "declined": "declined consent (screened out)",
    "screened_out": "screened out",
    "returned": "returned",
    "timed_out": "timed out",
    "not_started": "not started",
}
SCREENOUT_REASONS = {"failed_comprehension": "failed the comprehension check", "declined_consent": "declined consent"}


def duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``2 h 05 min``.

    >>> duration(45), duration(720), duration(7500)
    ('45 s', '12 min', '2 h 05 min')
    """
    seconds = int(max(seconds, 0))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def classify(facts: dict, *, now: float, inactive_after: float) -> tuple[str, str]:
    """A participant's status and its reason from plain facts: ``visited``, ``completed``, ``page``,
    ``screened_out``, ``screenout_reason``, ``app_status`` (``timed_out`` or None), ``app_detail`` and
    ``last_active`` (epoch seconds) and, when the current page has a time limit, ``deadline`` (epoch seconds it
    ends; missing or None when it has none).

    >>> base = dict(visited=True, completed=False, page="Bargain", screened_out=False, screenout_reason="",
    ...             app_status=None, app_detail="", last_active=1000.0)
    >>> classify(base, now=1100, inactive_after=3600)
    ('working', '')
    >>> classify(dict(base, screened_out=True, screenout_reason="declined_consent"), now=1100, inactive_after=3600)
    ('declined', 'declined consent')
    >>> classify(dict(base, app_status="timed_out", app_detail="no partner"), now=1100, inactive_after=3600)
    ('timed_out', 'no partner')
    >>> classify(base, now=9000, inactive_after=3600)
    ('returned', 'left: no page opened for 2 h 13 min')
    >>> classify(dict(base, deadline=1060.0), now=1100, inactive_after=3600)
    ('timed_out', "the page's time limit ran out 40 s ago; no page opened since")
    >>> classify(dict(base, page="Completion", app_status="timed_out"), now=9000, inactive_after=3600)
    ('finished', '')
    """
    if not facts["visited"]:
        return "not_started", ""
    if facts["completed"] or facts["page"] == "Completion":
        return "finished", facts["app_detail"] if facts["app_status"] else ""
    if facts["screened_out"]:
        reason = facts["screenout_reason"] or ""
        text = SCREENOUT_REASONS.get(reason, reason.replace("_", " "))
        return ("declined" if reason == "declined_consent" else "screened_out"), text
    if facts["app_status"] == "timed_out":
        return "timed_out", facts["app_detail"]
    last, deadline = facts["last_active"], facts.get("deadline")
    if deadline and now > deadline and not (last and last > deadline):
        return "timed_out", f"the page's time limit ran out {duration(now - deadline)} ago; no page opened since"
    if last and now - last > inactive_after:
        return "returned", f"left: no page opened for {duration(now - last)}"
    return "working", ""


def progress(participant_vars: dict, *, status: str, page: str, app: str, index: int, pages: int) -> tuple[str, int]:
    """Progress as a meaning and a percentage.

    >>> progress({"progress_done": 2, "progress_total": 10}, status="working", page="Rate", app="x", index=9, pages=40)
    ('item 3 of 10', 20)
    >>> progress({}, status="working", page="Bargain", app="dond", index=4, pages=7)
    ('page Bargain (dond)', 57)
    >>> progress({}, status="finished", page="Completion", app="dond", index=7, pages=7)
    ('finished', 100)
    """
    if status == "finished":
        return "finished", 100
    if status == "not_started":
        return "not started", 0
    total = int(participant_vars.get("progress_total") or 0)
    if total > 0:
        done = min(int(participant_vars.get("progress_done") or 0), total)
        return f"item {min(done + 1, total)} of {total}", round(100 * done / total)
    percent = round(100 * index / pages) if pages else 0
    return f"page {page or '?'} ({app})" if app else f"page {page or '?'}", min(percent, 100)
