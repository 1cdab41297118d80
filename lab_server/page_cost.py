"""What oTree does again on every page request although its answer never changes: done once (no guard).

oTree serves every page of a study in one process, one page at a time, so what a page step costs the server decides
how many people can click at once. Each cut here changes how a result is found, never the result;
``bench/annotation_load.py --baseline`` measures each side by side (docs/performance.md gives the figures;
docs/decisions/0009-a-page-step-costs-the-same-at-any-size.md says why):

- **Lookups compiled once.** ``Model.objects_get(**equalities)`` and ``db.get_or_404(Model, **equalities)`` are how
  oTree finds the participant, the player of the round, the session and the subsession of every page it serves or walks
  through; ``Model.objects_exists(**equalities)`` how it asks, on every live message, whether the sender is a browser
  bot. With SQLAlchemy 1.3 (which oTree pins) each call builds an ORM query and compiles its SQL afresh. Here the same
  lookups are compiled once (``study_flow/lookups.py``, SQLAlchemy's "baked" queries): the query and its SQL are built
  once per model and set of names, and each call only binds its values. Same session, same identity map, same autoflush,
  same exceptions (``one()``). A lookup that can only name one row (a primary key, a unique code, a player's participant
  and round) is asked once per request or live message: oTree looks the same player up for every page it walks through.
  A keyword that is not a plain column or a many-to-one link to a stored row (``participant=<Participant>``), or a value
  None (``IS NULL`` in oTree's query), goes through oTree's own code, unchanged.
- **oTree's form-field snippet compiled once.** ``{{ formfield }}`` and ``{{ formfields }}`` compile the same small
  template text on every field of every page (28 fields: 28 compilations per page). ``compile`` remembers the
  compiled tree of such inline templates (oTree's ``template_id`` ``UNIDENTIFIED``; a template file is already kept
  by oTree's loader). A compiled tree holds no state of a rendering, which is why oTree's loader shares one tree
  between all requests already.
- **A page's fragment rendered once.** ``fragment(template, key, context)`` renders a template file into text once per
  ``key``, which its caller makes of everything the text depends on (social_eval's rating form: the session and the
  agent). A template oTree loads anew (its devserver reloads an edited file) is rendered anew.
- **Static URLs found once.** ``{% static 'x.js' %}`` checks that the file exists on disk and asks the router for its
  URL on every page; the answer for a path that exists is kept (a missing file still fails every time).
- **SQLite commits without a disk flush each.** A page step ends with a commit, and SQLite's default rollback journal
  flushes the disk (fsync) several times per commit. In write-ahead-log mode with ``synchronous=NORMAL`` a commit
  writes to the log without a flush; the log is flushed at checkpoints. A crash of the server process loses
  nothing; a power loss or an operating-system crash may lose the last commits before it, never the database's
  consistency (SQLite's documentation, "Write-Ahead Logging"). Only for a SQLite file (``otree prodserver`` without
  ``DATABASE_URL`` to PostgreSQL), never oTree's in-memory devserver. The database is then three files,
  ``db.sqlite3`` with ``-wal`` and ``-shm``: back it up with ``sqlite3 db.sqlite3 ".backup copy.sqlite3"``
  (docs/deploying.md), not by copying the file alone while the server runs.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from contextvars import ContextVar

import sqlalchemy
from sqlalchemy.orm import interfaces
from sqlalchemy.orm.exc import NoResultFound
from sqlalchemy.orm.properties import ColumnProperty
from sqlalchemy.orm.relationships import RelationshipProperty

from study_flow import lookups

logger = logging.getLogger(__name__)

INLINE_TEMPLATE_ID = "UNIDENTIFIED"  # what oTree's Template calls a template made from a string in code
MAX_INLINE_TEMPLATES = 64  # inline template texts remembered (oTree has two; more would be a template built per call)
MAX_STATIC_PATHS = 4096  # static paths remembered
MAX_FRAGMENTS = 512  # rendered fragments remembered, the least recently used dropped first (social_eval: ~30 kB each)


# -- lookups compiled once ------------------------------------------------------------------------------------------
def bindable(model, equalities: dict) -> tuple[tuple[str, ...], dict] | None:
    """The column attribute names and values that ``model``'s lookup by ``equalities`` compares, or None when one of
    them cannot be a bound value (oTree's own query then runs).

    A plain column compares its value; a many-to-one link compares its column with the primary key of a stored row
    (``participant=<Participant 7>`` is ``participant_id = 7``). None is left to oTree (``IS NULL``), as are a row
    not yet stored (no key yet: oTree's query flushes it first), a link of another shape and an unknown name.
    """
    mapper = sqlalchemy.inspect(model)
    names, values = [], {}
    for name, value in sorted(equalities.items()):
        prop = mapper.attrs.get(name)
        if value is None or prop is None:
            return None
        if isinstance(prop, ColumnProperty) and len(prop.columns) == 1:
            names.append(name)
            values[name] = value
            continue
        if not isinstance(prop, RelationshipProperty) or prop.direction is not interfaces.MANYTOONE:
            return None
        pairs = prop.local_remote_pairs
        if len(pairs) != 1 or not pairs[0][1].primary_key:
            return None
        identity = getattr(sqlalchemy.inspect(value, raiseerr=False), "identity", None)
        if not identity or len(identity) != 1:
            return None
        local_name = mapper.get_property_by_column(pairs[0][0]).key
        names.append(local_name)
        values[local_name] = identity[0]
    return tuple(names), values


def names_one_row(model, names: tuple[str, ...]) -> bool:
    """Whether equal values of ``names`` can belong to one row of ``model`` only: its primary key, a column declared
    unique (a participant's or session's ``code``), or a player's participant and round (oTree makes one player per
    participant and round, and never changes either).

    >>> from types import SimpleNamespace as T
    >>> player = T(__table__=T(name="social_eval_player", c=dict(id=T(unique=None), round_number=T(unique=None))))
    >>> [names_one_row(player, names) for names in [("id",), ("participant_id", "round_number"), ("round_number",)]]
    [True, True, False]
    """
    table = model.__table__
    if names == ("id",) or names == ("participant_id", "round_number") and table.name.endswith("_player"):
        return True
    return len(names) == 1 and names[0] in table.c and bool(table.c[names[0]].unique)


MEMO = "lab_page_cost_rows"  # the key of the request's rows found by a unique lookup, in its SQLAlchemy session's info
# Set while oTree serves a request or a socket (oTree gives each request and each live message a session of its own):
# only then is a row kept for the rest of the session. A session that lives across requests (oTree's bots keep one
# beside the requests they make) must see another request's changes, as oTree's own query shows them once nothing
# holds the old row (SQLAlchemy keeps rows weakly).
SERVING: ContextVar[bool] = ContextVar("lab_serving", default=False)


def one(session, model, names: tuple[str, ...], values: dict):
    """The one row of ``model`` with these values (``NoResultFound`` or ``MultipleResultsFound`` as ``Query.one``).

    A row found by a lookup that names one row (``names_one_row``) while a request is served (``SERVING``) is the
    same row for the rest of the request: oTree looks the same player up for every page it walks through (seven after
    a social_eval rating page). It is asked again if the row was deleted or its looked-up values changed since.
    """
    key = None
    if SERVING.get() and names_one_row(model, names):
        try:
            key = (model, names, *(values[name] for name in names))
            found = session.info.get(MEMO, {}).get(key)
        except TypeError:  # a value that cannot be a key (oTree's query decides what it means)
            key = found = None
        if found is not None and _still(found, session, names, values):
            return found
    found = lookups.compiled(model, names)(session).params(**lookups.bound(values)).one()
    if key is not None:
        session.info.setdefault(MEMO, {})[key] = found
    return found


def _still(row, session, names: tuple[str, ...], values: dict) -> bool:
    """Whether ``row`` is still stored in ``session`` with these values."""
    state = sqlalchemy.inspect(row)
    if state.session is not session or state.deleted or state.detached or row in session.deleted:
        return False
    if state.expired_attributes.intersection(names):
        return False  # expired by a commit: oTree's query asks the database again (a row deleted since is a 404)
    return all(getattr(row, name) == values[name] for name in names)


def _fast_objects_get(original):
    original_function = original.__func__  # the classmethod as found on AnyModel is bound to AnyModel

    def objects_get(cls, *args, **kwargs):
        found = None if args or not kwargs else bindable(cls, kwargs)
        if found is None:
            return original_function(cls, *args, **kwargs)
        from .otree_internals import request_session

        return one(request_session(), cls, *found)

    return classmethod(objects_get)


def _fast_objects_exists(original):
    original_function = original.__func__

    def objects_exists(cls, *args, **kwargs):
        found = None if args or not kwargs else bindable(cls, kwargs)
        if found is None:
            return original_function(cls, *args, **kwargs)
        from .otree_internals import request_session

        names, values = found
        params = lookups.bound(values)
        return lookups.compiled(cls, names)(request_session()).params(**params).first() is not None

    return classmethod(objects_exists)


def _fast_get_or_404(original):
    def get_or_404(self, Model, msg="Not found (maybe the session was deleted)", **kwargs):
        found = bindable(Model, kwargs) if kwargs else None
        if found is None:
            return original(self, Model, msg, **kwargs)
        try:
            return one(self._db, Model, *found)
        except NoResultFound:
            return original(self, Model, msg, **kwargs)  # oTree's own answer to a row that is not there (a 404)

    return get_or_404


# -- inline templates, fragments and static URLs found once ------------------------------------------------------------
def _remembering_compile(original):
    compiled = {}

    def compile(template_string, template_id, is_page_template):  # noqa: A001 (oTree's name)
        if template_id != INLINE_TEMPLATE_ID or is_page_template:
            return original(template_string, template_id, is_page_template)
        key = template_string
        if key not in compiled:
            tree = original(template_string, template_id, is_page_template)
            if len(compiled) >= MAX_INLINE_TEMPLATES:
                return tree
            compiled[key] = tree
        return compiled[key]

    return compile


def _remembering_static_url(original):
    urls = {}

    def url_of_static_file(path):
        if path not in urls:
            url = original(path)  # raises for a file that does not exist: not remembered
            if len(urls) >= MAX_STATIC_PATHS:
                return url
            urls[path] = url
        return urls[path]

    return url_of_static_file


FRAGMENTS: OrderedDict = OrderedDict()  # (template name, key) -> (the template as loaded, its text)


def fragment(template_name: str, key, context: dict) -> str:
    """The text of template file ``template_name`` rendered with ``context``, rendered once per hashable ``key``: the
    caller's key names everything the text depends on (the context is not compared). Rendered again when oTree's
    loader gives another template (a file its devserver reloaded after an edit)."""
    import lab_server.otree_internals as otree_internals

    template = otree_internals.template_loader.load(template_name)
    found = FRAGMENTS.get((template_name, key))
    if found is not None and found[0] is template:
        FRAGMENTS.move_to_end((template_name, key))
        return found[1]
    text = template.render(context)
    FRAGMENTS[(template_name, key)] = (template, text)
    if len(FRAGMENTS) > MAX_FRAGMENTS:
        FRAGMENTS.popitem(last=False)
    return text


# -- SQLite ---------------------------------------------------------------------------------------------------------
def write_ahead(connection) -> str:
    """Switch a SQLite database (a DB-API connection to it) to write-ahead logging, ``synchronous=NORMAL`` for this
    connection; the journal mode now in force (``wal``, or what SQLite kept when it refused).

    >>> import sqlite3, tempfile, pathlib
    >>> write_ahead(sqlite3.connect(pathlib.Path(tempfile.mkdtemp()) / "db.sqlite3"))
    'wal'
    >>> write_ahead(sqlite3.connect(":memory:"))  # a database in memory has no journal file to speak of
    'memory'
    """
    mode = str(connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]).lower()
    if mode == "wal":
        connection.execute("PRAGMA synchronous=NORMAL")
    return mode


def sqlite_file_write_ahead(metadata, connection, **_) -> None:
    """After oTree creates its tables at start-up: a SQLite database file goes to write-ahead logging."""
    import lab_server.otree_internals as otree_internals

    if connection.engine.url.get_backend_name() != "sqlite" or otree_internals.IN_MEMORY:
        return
    try:
        mode = write_ahead(connection.connection)
    except Exception as error:  # a read-only folder, say: the server works as before, each commit flushing the disk
        logger.warning("SQLite stays in its journal mode (%s): each commit flushes the disk.", error)
        return
    if mode != "wal":
        logger.warning(
            "SQLite kept journal mode %s instead of write-ahead logging: each commit flushes the disk.", mode
        )


async def _serving(app, scope, receive, send):
    token = SERVING.set(True)
    try:
        await app(scope, receive, send)
    finally:
        SERVING.reset(token)


def install() -> None:
    import lab_server.otree_internals as otree_internals

    otree_internals.replace("otree.database:AnyModel.objects_get", _fast_objects_get)
    otree_internals.replace("otree.database:AnyModel.objects_exists", _fast_objects_exists)
    otree_internals.replace("otree.database:DBWrapper.get_or_404", _fast_get_or_404)
    otree_internals.around_app(_serving)
    otree_internals.replace("otree.templating.compiler:compile", _remembering_compile)
    otree_internals.replace("otree.templating.nodes:url_of_static_file", _remembering_static_url)
    if not sqlalchemy.event.contains(otree_internals.AnyModel.metadata, "after_create", sqlite_file_write_ahead):
        sqlalchemy.event.listen(otree_internals.AnyModel.metadata, "after_create", sqlite_file_write_ahead)
