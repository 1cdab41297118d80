"""How a participant arrives from Prolific and leaves for it: the participant ID's shape, the refusal pages' texts,
the study ids the welcome page keeps in a cookie, the identifiers exports join on, and the completion URL.

A Prolific link lands on the room's welcome page (``_templates/global/RoomWelcome.html``), which keeps
``STUDY_ID`` and ``SESSION_ID`` in a short-lived cookie (oTree's room redirect drops every query parameter but the
label) and forwards at once, without a click. The first page the participant sees, ``Consent``, copies the cookie
into participant fields on its first request (``record_arrival``). ``lab_server/entry.py`` checks the label before
oTree gives out a slot.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote, unquote

from .texts import MESSAGES

PROLIFIC_COMPLETION_URL = "https://app.prolific.com/submissions/complete?cc={code}"
STUDY_IDS_COOKIE = "study_ids"
# Prolific's study and session ids, completion codes and the "any" participant ID format share one shape.
ID_PATTERN = re.compile(r"[A-Za-z0-9_\-]{1,64}")
CODE_PATTERN = f"(?:{ID_PATTERN.pattern})?"  # a completion or screen-out code, or none

# The session key ``participant_id_format``: the shape a participant label (Prolific's PROLIFIC_PID) must have.
# ``prolific``: Prolific's IDs, 24 lowercase hex digits. ``any``: 1-64 letters, digits, - or _ (pilots, other panels).
PARTICIPANT_ID_FORMATS = {
    "prolific": re.compile(r"[0-9a-f]{24}"),
    "any": ID_PATTERN,
}
# No label outside this shape is ever stored, whatever the entry path (oTree's own column holds 100 characters).
SAFE_LABEL = re.compile(r"[A-Za-z0-9_\-]{1,100}")
# The texts (keys of MESSAGES) of the page shown instead of the study: its title, then its paragraphs.
ENTRY_PAGES = {
    "missing": ("entry_title", "entry_missing_id", "entry_retry", "entry_researcher"),
    "malformed": ("entry_title", "entry_malformed_id", "entry_retry", "entry_researcher"),
    "full": ("full_title", "full_body", "full_return", "full_contact"),
    "wrong_study": ("entry_title", "entry_wrong_study", "entry_retry"),
    "busy": ("busy_title", "busy_body", "full_contact"),
}


def participant_id_problem(label: str | None, *, id_format: str = "prolific") -> str | None:
    """What is wrong with a participant label for ``id_format``: ``"missing"``, ``"malformed"`` or None (fine).

    >>> participant_id_problem("5f3c2a1b9d8e7f6a5b4c3d2e")
    >>> participant_id_problem("")
    'missing'
    >>> participant_id_problem('"><script>alert(1)</script>')
    'malformed'
    >>> participant_id_problem("pilot_07", id_format="any"), participant_id_problem("pilot_07")
    (None, 'malformed')
    """
    if id_format not in PARTICIPANT_ID_FORMATS:
        raise ValueError(
            f"The participant ID format must be one of {', '.join(PARTICIPANT_ID_FORMATS)}, not {id_format!r}."
        )
    if not label:
        return "missing"
    return None if PARTICIPANT_ID_FORMATS[id_format].fullmatch(label) else "malformed"


def entry_page_texts(reason: str, *, language: str | None) -> dict[str, Any]:
    """The title and paragraphs of the page shown instead of the study when a link cannot start it.

    ``reason`` is a result of ``participant_id_problem``, ``"full"`` (every place of the session is taken),
    ``"wrong_study"`` (the link's ``STUDY_ID`` is not the session's ``prolific_study_id``) or ``"busy"`` (too many new
    places from one address: ``lab_server/places.py``).

    >>> page = entry_page_texts("full", language="de")
    >>> page["title"], len(page["paragraphs"]), page["language"]
    ('Alle Plätze sind vergeben', 3, 'de')
    >>> entry_page_texts("missing", language="fr")["language"]
    'en'
    """
    if reason not in ENTRY_PAGES:
        raise ValueError(f"The entry page reason must be one of {', '.join(ENTRY_PAGES)}, not {reason!r}.")
    language = language if language in MESSAGES else "en"
    title, *paragraphs = (MESSAGES[language][key] for key in ENTRY_PAGES[reason])
    return dict(title=title, paragraphs=paragraphs, language=language, reason=reason)


def completion_url(code: str) -> str:
    """Prolific's completion URL for a completion or screen-out code.

    >>> completion_url("C1A2B3")
    'https://app.prolific.com/submissions/complete?cc=C1A2B3'
    """
    if not code or not ID_PATTERN.fullmatch(code):
        raise ValueError(f"The completion code {code!r} must be 1-64 letters, digits, '-' or '_'.")
    return PROLIFIC_COMPLETION_URL.format(code=quote(code))


def parse_study_ids_cookie(raw: str | None, *, participant_label: str | None) -> dict[str, str]:
    """Read the IDs the welcome page stored, if they belong to this participant.

    The cookie holds JSON ``{"pid": ..., "study_id": ..., "session_id": ...}`` (URL-encoded). It is ignored when its
    PID differs from the participant's label (a stale cookie from another study in the same browser) and any value
    that is not a plain identifier is dropped.

    >>> raw = '%7B%22pid%22%3A%22abc%22%2C%22study_id%22%3A%22S1%22%2C%22session_id%22%3A%22X9%22%7D'
    >>> parse_study_ids_cookie(raw, participant_label="abc")
    {'study_id': 'S1', 'prolific_session_id': 'X9'}
    >>> parse_study_ids_cookie(raw, participant_label="someone-else")
    {}
    >>> parse_study_ids_cookie("[" * 5000, participant_label="abc")  # a forged cookie nested too deep to parse
    {}
    """
    if not raw:
        return {}
    try:
        data = json.loads(unquote(raw))
    except (ValueError, RecursionError):  # a cookie is the participant's to forge, nesting included
        return {}
    if not isinstance(data, dict) or (data.get("pid") or "") != (participant_label or ""):
        return {}
    found = {}
    for source, target in (("study_id", "study_id"), ("session_id", "prolific_session_id")):
        value = data.get(source)
        if isinstance(value, str) and ID_PATTERN.fullmatch(value):
            found[target] = value
    return found


def record_arrival(participant, cookies: dict[str, str]) -> None:
    """Store the Prolific IDs on the participant once, on the first page's first request."""
    participant_vars = participant.vars
    if participant_vars.get("prolific_pid") is None:
        participant_vars["prolific_pid"] = participant.label or ""
    if not participant_vars.get("study_id"):
        found = parse_study_ids_cookie(cookies.get(STUDY_IDS_COOKIE), participant_label=participant.label)
        participant_vars.update(found)
        participant_vars.setdefault("study_id", "")
        participant_vars.setdefault("prolific_session_id", "")


def identifiers(participant) -> dict[str, str]:
    """The identifiers a researcher joins exports on, for one participant (empty where Prolific gave none).

    >>> from types import SimpleNamespace
    >>> identifiers(SimpleNamespace(code="ab12", label="5f3c", vars={"study_id": "S1"}))
    {'participant_code': 'ab12', 'prolific_pid': '5f3c', 'study_id': 'S1', 'prolific_session_id': ''}
    """
    participant_vars = participant.vars
    return dict(
        participant_code=participant.code,
        prolific_pid=participant_vars.get("prolific_pid") or participant.label or "",
        study_id=participant_vars.get("study_id") or "",
        prolific_session_id=participant_vars.get("prolific_session_id") or "",
    )
