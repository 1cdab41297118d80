"""Queries compiled once: the same lookup by the same columns, asked on every page step, builds its SQL once.

With SQLAlchemy 1.3 (which oTree pins) every ORM query builds its SQL afresh, and for oTree's wide rows that was a
large part of a page step (docs/performance.md). A query here is an SQLAlchemy "baked" query: built and compiled
once per model and set of column names, each call binding only the values. ``lab_server/page_cost.py`` finds oTree's
own lookups (participant, player, session) this way; the apps find their rows with ``rows``.
"""

from __future__ import annotations

import sqlalchemy
from sqlalchemy.ext import baked

INDEXED = "lab_indexed"  # a table's info: the column tuples its lookups ask by (lab_server/indexes.py indexes them)
BAKERY_SIZE = 1000  # compiled queries kept: one per model, set of names and order (a few dozen in practice)

_bakery = baked.bakery(size=BAKERY_SIZE)
_queries: dict[tuple, baked.BakedQuery] = {}  # (model, names, ordered by id) -> its baked query


def compiled(model, names: tuple[str, ...], *, ordered: bool = False) -> baked.BakedQuery:
    """The baked query of ``model``'s rows whose columns ``names`` equal the bound values ``lab_<name>`` (in the
    order of their ids when ``ordered``)."""
    key = (model, names, ordered)
    if key not in _queries:

        def everything(session):
            return session.query(model)

        def where(query):
            query = query.filter(*[getattr(model, name) == sqlalchemy.bindparam(f"lab_{name}") for name in names])
            return query.order_by(model.id) if ordered else query

        _queries[key] = _bakery(everything, model).with_criteria(where, names, ordered)
    return _queries[key]


def bound(values: dict) -> dict:
    """The bound values of a compiled query, by column name.

    >>> bound({"code": "ab12"})
    {'lab_code': 'ab12'}
    """
    return {f"lab_{name}": value for name, value in values.items()}


def rows(session, model, *, ordered: bool = True, **equalities) -> list:
    """``model``'s rows in ``session`` whose columns equal ``equalities`` (plain values, none None), in id order."""
    names = tuple(sorted(equalities))
    return compiled(model, names, ordered=ordered)(session).params(**bound(equalities)).all()


def index(model, *columns: str) -> None:
    """Ask for an index of ``model``'s table on ``columns``, the columns a lookup of every page step asks by (oTree
    indexes no column of an ExtraModel: its table is read whole for each such lookup); ``lab_server/indexes.py``
    creates it when oTree creates its tables at start-up.

    >>> from types import SimpleNamespace as T
    >>> model = T(__table__=T(info={}))
    >>> index(model, "subsession_id", "episode_id")
    >>> model.__table__.info[INDEXED]
    [('subsession_id', 'episode_id')]
    """
    wanted = model.__table__.info.setdefault(INDEXED, [])
    if tuple(columns) not in wanted:
        wanted.append(tuple(columns))
