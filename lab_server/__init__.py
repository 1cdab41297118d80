"""Guards around oTree's own server: what oTree itself serves, stores and exports, made safe for a field study.

oTree owns the room links, the admin pages, the exports, the login and the websockets; the apps cannot reach these
through oTree's API. This package adapts them when ``install()`` is called: every app calls it when oTree imports
the app (once per process), so they are in force in the devserver, the prodserver and ``otree test``. It reaches
oTree only through ``otree_internals``, each concern in its own module:

| module | what it guards |
|---|---|
| ``creation`` | session creation is all or nothing: every key and researcher file is checked before a row exists |
| ``entry`` | Prolific links: the PID's shape, no slot for invalid visits, one participation per PID, the full session |
| ``outputs`` | outside text where oTree prints it: ``js_vars`` in a script, the admin Monitor, every CSV export |
| ``limits`` | live sockets per participant, admin login attempts |
| ``admission`` | a saturated server: new arrivals wait on a light page in their language, those inside keep fast pages |
| ``budgets`` | live-socket messages and bytes, and plain page requests, per participant, before oTree's lock |
| ``refusals`` | the page shown instead of the study when an entry link gives no place (no guard) |
| ``places`` | new places: the study's Prolific id, new places per address, places without consent handed back |
| ``headers`` | no framing (admin pages never), no sniffing, no referrers, ``Secure`` cookies in production |
| ``languages`` | oTree's own words (Next, the timer, wait pages) in the session's language |
| ``indexes`` | the index oTree's player tables lack: a page step's cost stays flat in the session's size (no guard) |
| ``page_cost`` | what oTree repeats on every page request with the same answer, done once (no guard) |
| ``session_form`` | the Create-session form: each key's label and one line of help (no guard) |
| ``admin_pages`` | researcher pages behind oTree's login: study status per session, DoND transcripts (no guard) |
| ``study_pages`` | researcher pages: Prolific URL and test links, launch check, bonus file and review list (no guard) |
| (test clock) | with ``LAB_TEST_CLOCK_FILE`` only (tests; refused in production): oTree's page countdowns read ``backend.core.clock`` |
| ``otree_internals`` | every name the project uses from oTree beyond ``otree.api``, with its reason (no guard) |

Nothing here changes what an app stores; each guard is documented in docs/security/index.md.
"""

from __future__ import annotations

_installed = False


def install() -> None:
    """Apply every guard once (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    from . import (
        admin_pages,
        admission,
        budgets,
        creation,
        entry,
        headers,
        indexes,
        languages,
        limits,
        outputs,
        page_cost,
        places,
        session_form,
        study_pages,
    )

    for module in (
        creation,
        entry,
        places,
        outputs,
        limits,
        admission,  # after limits: a waiting page is served before anything else of oTree's runs
        budgets,  # after admission: the page budget is the outermost guard (an over-budget request is no load)
        headers,
        languages,
        indexes,
        page_cost,
        admin_pages,
        study_pages,
        session_form,
    ):
        module.install()
    from backend.core import clock

    if clock.clock_file():  # tests move the clock forward instead of waiting (refused in production: settings.py)
        from . import otree_internals

        otree_internals.replace("otree.views.abstract:time", lambda original: clock.TestTime())
