"""Queries compiled once: the same lookup by the same columns, asked on every page step, builds its SQL once.

With SQLAlchemy 1.3 (which oTree pins) every ORM query builds its SQL afresh, and for oTree's wide rows that was a
large part of a page step (docs/performance.md). A query here is an SQLAlchemy "baked" query: built and compiled
once per model and set of column names, each call binding only the values. ``lab_server/page_cost.py`` finds oTree's
own lookups (participant, player, session) this way; the apps find their rows with ``rows``.
"""

from __future__ import annotations

import sqlalchemy
from sqlalchemy.ext import baked

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
