"""The page shown instead of the study when an entry link cannot give a place (the entry's checks: ``entry``; the
places' budgets: ``places``), in the session's language."""

from __future__ import annotations

import study_flow

REFUSED_TEMPLATE = "global/EntryRefused.html"


def refusal_page(reason: str, session, *, status_code: int):
    """The page shown instead of the study: ``reason`` is one of ``study_flow.entry_page_texts``' reasons
    (``missing``, ``malformed``, ``full``, ``wrong_study``, ``busy``, ...)."""
    from .otree_internals import render

    language = session.config.get("language") if session is not None else None
    response = render(REFUSED_TEMPLATE, study_flow.entry_page_texts(reason, language=language))
    response.status_code = status_code
    return response
