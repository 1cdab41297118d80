"""Every use of oTree's internals (anything outside ``otree.api``), in one place, each with the reason we need it.

oTree's public API is ``otree.api``; whatever else this project touches is listed here and nowhere else:

- ``USED``: names we read or call, reachable as attributes of this module (``from lab_server.otree_internals import
  db, page_lock``). They are imported on first use, not when this module is imported: oTree's modules can only be
  imported once its settings are found (inside the project folder), after the import of this module may happen.
- ``PATCHED``: the places where ``lab_server`` puts a guard around oTree's own code. A guard is installed with
  ``replace(where, wrap)``, which refuses any place not listed here.

``tests/system/test_otree_internals.py`` fails when oTree renames, removes or changes the kind or the parameters of
any of them, so an oTree upgrade shows here first, not in a field study.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass

from backend.core import clock


@dataclass(frozen=True)
class Internal:
    """Where oTree keeps a name (``"module:Attr.attr"``), what it is, the parameters we rely on, and why we use it.

    ``kind`` is ``module``, ``class``, ``function``, ``coroutine function``, ``attribute`` (present on a class) or
    the name of the value's type. ``params``: the leading parameter names, in order, that we call or wrap it with.
    """

    where: str
    kind: str
    reason: str
    params: tuple[str, ...] = ()


USED: dict[str, Internal] = {
    # -- the database ------------------------------------------------------------------------------------------
    "db": Internal(
        "otree.database:db",
        "DBWrapper",
        "the request's database session: dond commits a move before it answers; creation and entry roll back a "
        "refused request; social_eval's bots expire what they changed",
    ),
    "DBWrapper._db": Internal(
        "otree.database:DBWrapper._db",
        "attribute",
        "the SQLAlchemy session behind `db` for the current request (it changes per request: read it through "
        "request_session(), never cache it): dond commits a move without expiring the rows its live call loaded",
    ),
    "session_scope": Internal(
        "otree.database:session_scope",
        "function",
        "a database session outside a page request (limits checks a socket's participant before oTree sees it)",
    ),
    "AnyModel": Internal(
        "otree.database:AnyModel",
        "class",
        "the base of oTree's models, whose metadata creates the tables at start-up: indexes adds the index oTree's "
        "player tables lack (a participant's row of a round), page_cost puts a SQLite file in write-ahead mode, "
        "right after",
    ),
    "IN_MEMORY": Internal(
        "otree.database:IN_MEMORY",
        "bool",
        "whether oTree serves from memory (its devserver): page_cost leaves that database's journal alone",
    ),
    "page_lock": Internal(
        "otree.middleware:lock2",
        "Lock",
        "held by oTree around every page request and socket handler: dond's live turns and limits' database reads "
        "take it so they never interleave with a page",
    ),
    # -- models, beyond what otree.api exposes ---------------------------------------------------------------
    "Participant": Internal(
        "otree.models:Participant",
        "class",
        "entry finds a returning PID's earlier participant and guards set_label; limits checks a socket's code",
    ),
    "Session": Internal(
        "otree.models:Session",
        "class",
        "creation deletes a half-made session; entry finds the session of a session-wide link",
    ),
    "Participant.time_started_utc": Internal(
        "otree.models:Participant.time_started_utc",
        "attribute",
        "places reads only the places opened long enough ago to be handed back (UTC text, as oTree writes it)",
    ),
    "Participant._vars": Internal(
        "otree.models:Participant._vars",
        "attribute",
        "entry reads a participant's vars without marking them changed (reading .vars marks them)",
    ),
    "Participant._start_url": Internal(
        "otree.models:Participant._start_url",
        "function",
        "entry sends a returning PID back to where they were",
        ("self",),
    ),
    "random_chars_8": Internal(
        "otree.common:random_chars_8",
        "function",
        "places gives a handed-back place a new participant code the way oTree makes one",
    ),
    "Session._anonymous_code": Internal(
        "otree.models:Session._anonymous_code",
        "attribute",
        "entry finds the session a session-wide link (/join/<anonymous_code>) belongs to; study_pages shows that link "
        "and sends a test participant through it",
    ),
    "ROOM_DICT": Internal(
        "otree.room:ROOM_DICT",
        "dict",
        "the rooms of settings.py by name: entry and limits look up the room of a link or a waiting socket",
    ),
    # -- pages, responses and errors --------------------------------------------------------------------------
    "render": Internal(
        "otree.templating:render",
        "function",
        "entry renders its refusal page (global/EntryRefused.html) outside any app's page",
        ("template_name", "context"),
    ),
    "template_loader": Internal(
        "otree.templating.loader:ibis_loader",
        "FileLoader",
        "page_cost renders a page's fragment once (social_eval's rating form rows, the same on every rating page of "
        "a session) with the loader oTree renders its pages with",
    ),
    # tests/apps/test_template_escaping.py reads every template as oTree does, so that no output is taken for a tag
    "template_lexer": Internal(
        "otree.templating.compiler:Lexer",
        "class",
        "the template escaping scan cuts each template into oTree's own tokens (text, comments, tags and outputs)",
        ("template_string", "template_id"),
    ),
    "template_tags": Internal(
        "otree.templating.nodes:instruction_keywords",
        "dict",
        "the template escaping scan tells a tag ({{ next_button }}, {% block %}) from an output by oTree's tag names",
    ),
    "template_end_tags": Internal(
        "otree.templating.nodes:instruction_endwords",
        "list",
        "the template escaping scan tells a closing tag ({% endblock %}) from an output by oTree's closing names",
    ),
    "template_split": Internal(
        "otree.templating.utils:splitc",
        "function",
        "the template escaping scan splits an output into its value and its filters as oTree does (|escape last)",
        ("s", "delimiter", "strip"),
    ),
    "template_split_branches": Internal(
        "otree.templating.utils:splitre",
        "function",
        "the template escaping scan splits an output into the branches oTree prints (a ?? b :: c, a or b)",
        ("s", "delimiters", "keepdels"),
    ),
    # outputs.py: |escape takes any value (oTree's raises on None or a number, so a page would fail on one)
    "template_filters": Internal(
        "otree.templating.filters:filtermap",
        "dict",
        "the |escape filter is replaced by one that prints a number or None as oTree prints it raw, then escapes",
    ),
    "template_class": Internal(
        "otree.templating.template:Template",
        "class",
        "tests render a template string with oTree's engine, as a page is rendered (|escape of any value)",
        ("template_string", "template_id", "template_type"),
    ),
    "template_localize": Internal(
        "otree.templating.nodes:localize",
        "function",
        "how oTree prints a raw output (numbers formatted, anything else str()): |escape prints a non-text value so",
        ("v",),
    ),
    "no_participants_left_http_response": Internal(
        "otree.views.participant:no_participants_left_http_response",
        "function",
        "entry recognises oTree's 'Session is full.' answer to replace it with a page in the study's language",
    ),
    "CreateSessionInvalidArgs": Internal(
        "otree.session:CreateSessionInvalidArgs",
        "class",
        "the error oTree shows as 'Failed to create session: ...' (admin) and answers with HTTP 400 (REST)",
    ),
    # -- admin_pages.py: the per-study status page and the DoND transcripts -----------------------------------
    "AdminSessionPage": Internal(
        "otree.views.cbv:AdminSessionPage",
        "class",
        "admin_pages' views are oTree admin session pages: the same login check, redirect and session lookup",
    ),
    "otree_settings": Internal(
        "otree.settings",
        "module",
        "admin_pages reads AUTH_LEVEL as oTree resolved it, to require the login exactly where oTree's pages do; "
        "headers reads DEBUG (production mode: Secure cookies)",
    ),
    "Participant._current_app_name": Internal(
        "otree.models:Participant._current_app_name",
        "attribute",
        "the study status page shows the app a participant is in (oTree's Monitor reads it too)",
    ),
    "Participant._current_page_name": Internal(
        "otree.models:Participant._current_page_name",
        "attribute",
        "the study status page shows the page a participant is on, by name",
    ),
    "Participant._index_in_pages": Internal(
        "otree.models:Participant._index_in_pages",
        "attribute",
        "the study status page turns the page index into a percentage where an app sets no item progress; places "
        "reads only the places still on the consent page",
    ),
    "Participant._max_page_index": Internal(
        "otree.models:Participant._max_page_index",
        "attribute",
        "the number of pages of the session, for that percentage",
    ),
    "Participant._timeout_expiration_time": Internal(
        "otree.models:Participant._timeout_expiration_time",
        "attribute",
        "when the current page's countdown ends: dond tells a time limit that ran out from the admin's advance",
    ),
    "Participant._timeout_page_index": Internal(
        "otree.models:Participant._timeout_page_index",
        "attribute",
        "which page that countdown belongs to (page_timer_ran_out)",
    ),
    "Participant._last_page_timestamp": Internal(
        "otree.models:Participant._last_page_timestamp",
        "attribute",
        "the study status page shows when a participant last opened a page and marks the long inactive as left",
    ),
    # -- running oTree outside its command line (harness/bots_on_database.py) --------------------------
    "setup": Internal("otree.main:setup", "function", "loads settings.py and the apps as `otree test` does"),
    "run_all_bots_for_session_config": Internal(
        "otree.bots.runner:run_all_bots_for_session_config",
        "function",
        "runs a config's bots against the database in DATABASE_URL (`otree test` forces in-memory SQLite)",
        ("session_config_name", "num_participants", "export_path"),
    ),
    "save_sqlite_db": Internal(
        "otree.database:save_sqlite_db",
        "function",
        "importing it sets up the database layer the same way oTree's command line does",
    ),
    # -- the codebook of oTree's own exports (backend/codebook/otree.py; tests/apps/test_otree_codebook.py) -------
    "get_fields_for_csv": Internal(
        "otree.export:get_fields_for_csv",
        "function",
        "the fields oTree's exports write of a model: every one must have a codebook entry",
        ("Model",),
    ),
}

PATCHED: dict[str, Internal] = {
    # -- __init__.py: the test clock (LAB_TEST_CLOCK_FILE; refused in production) ------------------------------
    "otree.views.abstract:time": Internal(
        "otree.views.abstract:time",
        "module",
        "a page's time limit (its countdown and the check of a timed-out post) follows backend.core.clock in tests",
    ),
    # -- creation.py: all-or-nothing session creation -----------------------------------------------------------
    "otree.session:SessionConfig.clean": Internal(
        "otree.session:SessionConfig.clean",
        "function",
        "oTree's check of a config before any row exists: our validation runs first",
        ("self",),
    ),
    "otree.session:run_creating_session_functions": Internal(
        "otree.session:run_creating_session_functions",
        "function",
        "the first moment the session's code is known: remembered so a failure can delete its rows",
        ("session", "progress_message_fxn"),
    ),
    "otree.session:create_session": Internal(
        "otree.session:create_session",
        "function",
        "a failure anywhere in creation deletes the half-made session",
        ("session_config_name",),
    ),
    "otree.views.rest:create_session": Internal(
        "otree.views.rest:create_session",
        "function",
        "the REST API imported create_session before we wrapped it",
        ("session_config_name",),
    ),
    "otree.channels.consumers:WSCreateSession.send_response_to_browser": Internal(
        "otree.channels.consumers:WSCreateSession.send_response_to_browser",
        "coroutine function",
        "the Create-session page writes a failure's traceback as HTML: escaped first",
        ("self", "event"),
    ),
    "otree.channels.consumers:WSCreateDemoSession.send_response_to_browser": Internal(
        "otree.channels.consumers:WSCreateDemoSession.send_response_to_browser",
        "coroutine function",
        "the same for the demo page",
        ("self", "event"),
    ),
    # -- entry.py: Prolific entry ------------------------------------------------------------------------------
    "otree.views.participant:AssignVisitorToRoom.get": Internal(
        "otree.views.participant:AssignVisitorToRoom.get",
        "function",
        "a room link: the PID's shape and one participation per PID, before oTree gives out a slot",
        ("self", "request"),
    ),
    "otree.views.participant:SessionWideLink.get": Internal(
        "otree.views.participant:SessionWideLink.get",
        "function",
        "a session-wide link: the same checks, and no slot without a PID in a Prolific study",
        ("self", "request"),
    ),
    "otree.views.participant:InitializeParticipant.get": Internal(
        "otree.views.participant:InitializeParticipant.get",
        "function",
        "a per-participant link: a label it carries is checked too",
        ("self", "request"),
    ),
    "otree.models:Participant.set_label": Internal(
        "otree.models:Participant.set_label",
        "function",
        "the backstop: no label outside letters, digits, - and _ is ever stored",
        ("self", "label"),
    ),
    # -- outputs.py: outside text where oTree prints it ----------------------------------------------------
    "otree.views.abstract:json_dumps": Internal(
        "otree.views.abstract:json_dumps",
        "function",
        "renders js_vars into a <script>: made script-safe",
        ("obj",),
    ),
    "otree.templating.filters:json_dumps": Internal(
        "otree.templating.filters:json_dumps",
        "function",
        "the |json template filter: made script-safe",
        ("obj",),
    ),
    "otree.export:get_rows_for_monitor": Internal(
        "otree.export:get_rows_for_monitor",
        "function",
        "the admin Monitor's rows: labels and vars HTML-escaped",
        ("participants",),
    ),
    "otree.views.admin:SessionPayments.vars_for_template": Internal(
        "otree.views.admin:SessionPayments.vars_for_template",
        "function",
        "the Payments page prints labels unescaped: escaped",
        ("self",),
    ),
    "otree.views.admin:Sessions.vars_for_template": Internal(
        "otree.views.admin:Sessions.vars_for_template",
        "function",
        "the Sessions list prints each session's label (REST or Edit, typed by a researcher) unescaped: escaped",
        ("self",),
    ),
    "otree.export:get_rows_for_wide_csv": Internal(
        "otree.export:get_rows_for_wide_csv",
        "function",
        "the wide export copies every session config key: long values shortened; a participant.is_test column, "
        "and test rows left out of an export of all sessions",
        ("session_code",),
    ),
    "otree.export:get_rows_for_csv": Internal(
        "otree.export:get_rows_for_csv",
        "function",
        "an app's export: a participant.is_test column, and test rows left out of an export of all sessions",
        ("app_name", "session_code"),
    ),
    "otree.export:_export_csv": Internal(
        "otree.export:_export_csv",
        "function",
        "every wide, per-app and custom export writes through it: text cells neutralised",
        ("fp", "rows"),
    ),
    "otree.session:SessionConfig.editable_field_html": Internal(
        "otree.session:SessionConfig.editable_field_html",
        "function",
        "the Create-session form shows each key by its raw name: its label and help are added",
        ("self", "field_name"),
    ),
    "otree.export:custom_export_app": Internal(
        "otree.export:custom_export_app",
        "function",
        "a custom export by URL: asked for one session (session_code), it keeps that session's tests, marked",
        ("app_name", "fp", "session_code", "function_name"),
    ),
    "otree.views.export:ExportIndex.vars_for_template": Internal(
        "otree.views.export:ExportIndex.vars_for_template",
        "function",
        "the Data page lists custom export function names: each gets what one row is (the codebook)",
        ("self",),
    ),
    "otree.export:export_page_times": Internal(
        "otree.export:export_page_times",
        "function",
        "page times have a writer of their own: neutralised, and test rows left out (oTree exports them only for all "
        "sessions)",
        ("fp",),
    ),
    "otree.export:export_chat": Internal(
        "otree.export:export_chat",
        "function",
        "chat has a writer of its own: neutralised, an is_test column, test rows left out of all sessions' chat",
        ("fp", "session_code"),
    ),
    # -- study_pages.py: the researcher's links, launch check, pay and review -------------------------------------
    "otree.views.room:get_room_shared_context": Internal(
        "otree.views.room:get_room_shared_context",
        "function",
        "the admin room page's context: the Prolific study URL and the link to the session's test links added",
        ("room", "request"),
    ),
    "otree.views.room:RoomWithoutSession.get_context_data": Internal(
        "otree.views.room:RoomWithoutSession.get_context_data",
        "function",
        "a room's Create-session form offers only the room's configs (oTree lists every config)",
        ("self",),
    ),
    "otree.views.admin:Login.form_valid": Internal(
        "otree.views.admin:Login.form_valid",
        "function",
        "a production server's admin lands on Sessions after login, not one click from a demo session",
        ("self", "form"),
    ),
    "otree.urls:HomeRedirect.get": Internal(
        "otree.urls:HomeRedirect.get",
        "coroutine function",
        "the same for the server's root (/) in production (replaced on the first request: the module builds oTree's "
        "routes when imported)",
        ("self", "request"),
    ),
    # -- languages.py: oTree's own words in the session's language -------------------------------------------
    "otree.templating.nodes:NextButton.wrender": Internal(
        "otree.templating.nodes:NextButton.wrender",
        "function",
        "{{ next_button }} says Next in the server's language: the session's language instead",
        ("self", "context", "label"),
    ),
    "otree.views.abstract:FormPageOrInGameWaitPage.get_context_data": Internal(
        "otree.views.abstract:FormPageOrInGameWaitPage.get_context_data",
        "function",
        "every page's context: oTree's English timer, wait-page, form-error and footer words in the session's language",
        ("self",),
    ),
    # -- page_cost.py: what oTree does again on every page request, done once ------------------------------------
    "otree.database:AnyModel.objects_get": Internal(
        "otree.database:AnyModel.objects_get",
        "function",
        "how oTree finds the player, session and subsession of every page: the same lookup compiled once",
        ("args", "kwargs"),
    ),
    "otree.database:AnyModel.objects_exists": Internal(
        "otree.database:AnyModel.objects_exists",
        "function",
        "oTree asks on every live message whether the sender is a browser bot: compiled once",
        ("args", "kwargs"),
    ),
    "otree.database:DBWrapper.get_or_404": Internal(
        "otree.database:DBWrapper.get_or_404",
        "function",
        "how oTree finds the participant of every page request: compiled once",
        ("self", "Model", "msg"),
    ),
    "otree.templating.compiler:compile": Internal(
        "otree.templating.compiler:compile",
        "function",
        "{{ formfield }} compiles the same inline template on every field of every page: compiled once",
        ("template_string", "template_id", "is_page_template"),
    ),
    "otree.templating.nodes:url_of_static_file": Internal(
        "otree.templating.nodes:url_of_static_file",
        "function",
        "{% static %} checks the disk and asks the router on every page: a found URL is kept",
        ("path",),
    ),
    # -- limits.py: sockets and logins -----------------------------------------------------------------------
    "otree.middleware:PerfMiddleware": Internal(
        "otree.middleware:PerfMiddleware",
        "class",
        "the outermost middleware oTree builds its app with: our limits run around it, and admin_pages "
        "adds its routes to the app's router on the first request through it",
        ("app",),
    ),
    "otree.middleware:CommitTransactionMiddleware": Internal(
        "otree.middleware:CommitTransactionMiddleware",
        "class",
        "oTree's outermost middleware, which takes the global page lock: limits reads request bodies before it",
        ("app",),
    ),
}


def locate(where: str):
    """The object oTree keeps at ``where`` (``"module:Attr.attr"`` or ``"module"``)."""
    module_name, _, path = where.partition(":")
    value = importlib.import_module(module_name)
    for part in filter(None, path.split(".")):
        value = getattr(value, part)
    return value


def replace(where: str, wrap: Callable):
    """Put ``wrap(original)`` where oTree keeps ``where`` (a key of ``PATCHED``); return what was put there."""
    if where not in PATCHED:
        raise KeyError(f"{where} is not listed in lab_server.otree_internals.PATCHED; list it there with its reason.")
    module_name, _, path = where.partition(":")
    owner_path, _, attribute = path.rpartition(".")
    owner = locate(f"{module_name}:{owner_path}")
    replacement = wrap(getattr(owner, attribute))
    setattr(owner, attribute, replacement)
    return replacement


def around_app(handle: Callable, *, outside_page_lock: bool = False) -> None:
    """Run ``await handle(app, scope, receive, send)`` around oTree's whole ASGI app, for every request and socket.

    The guard wraps ``PerfMiddleware`` (in ``PATCHED``), so guards installed one after another chain; when oTree built
    its app before the guard, its middleware stack is built again. ``handle`` passes the request on with ``await
    app(scope, receive, send)``. oTree's outermost middleware, ``CommitTransactionMiddleware``, takes its global page
    lock around every HTTP request before ``PerfMiddleware`` runs: a guard that waits on the client (reading a body)
    must run before it, with ``outside_page_lock`` (a slow request body under the page lock stops every page).
    """
    where = "otree.middleware:CommitTransactionMiddleware" if outside_page_lock else "otree.middleware:PerfMiddleware"

    def wrap(inner_class):
        class GuardMiddleware:
            def __init__(self, app, **options):
                self.app = inner_class(app=app, **options)

            async def __call__(self, scope, receive, send):
                await handle(self.app, scope, receive, send)

        return GuardMiddleware

    replace(where, wrap)
    app = built_asgi_app()
    if app is not None:  # the stack was built before us: build it again
        app.middleware_stack = app.build_middleware_stack()


def request_session():
    """The current request's SQLAlchemy session behind oTree's ``db`` wrapper (``DBWrapper._db``, listed in USED)."""
    return sys.modules[__name__].db._db


def page_timer_ran_out(participant, *, slack_s: float = 2.0) -> bool:
    """Whether oTree's countdown of the participant's current page has run out (within ``slack_s``), as oTree itself
    checks it (``Participant._timeout_expiration_time`` / ``_timeout_page_index``, listed in USED): a page submitted
    by its timer, not by the admin's "Advance slowest participants", which oTree also submits as a timeout."""
    expires = participant._timeout_expiration_time
    return (
        participant._timeout_page_index == participant._index_in_pages
        and expires is not None
        and expires - clock.now() < slack_s  # oTree's own check reads this clock too (PATCHED, in tests)
    )


def built_asgi_app():
    """oTree's ASGI app if it has been built already (``otree.asgi`` imported), else None; importing it would build
    it. limits rebuilds its middleware stack when the app was built before the guard was installed."""
    asgi = sys.modules.get("otree.asgi")
    return getattr(asgi, "app", None)


def __getattr__(name: str):
    internal = USED.get(name)
    if internal is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = locate(internal.where)
    globals()[name] = value  # found once; later reads (dond's page lock on every move) are a plain lookup
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | {name for name in USED if name.isidentifier()})
