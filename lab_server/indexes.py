"""Database indexes oTree does not create: a participant's player row of a round, found without reading the table.

oTree finds the player of every page request by participant and round (``Player.objects_get(participant=...,
round_number=...)`` in its page view; ``in_round``, ``in_rounds``, ``in_previous_rounds`` and
``participant.get_players`` the same way), but its player tables have no index on ``participant_id``: SQLite and
PostgreSQL read the app's whole player table for each such query, a row per participant and round (social_eval:
15 rounds, so 45,000 rows in a session of 3,000). The time of a page step grew with the size of the session.

``install`` adds one index per app's player table, ``<table>_participant_round`` on ``(participant_id,
round_number)``, right after oTree creates its tables at start-up (``CREATE INDEX IF NOT EXISTS``: a database
created before this change gets it at its next start; SQLite and PostgreSQL alike). An index changes no row and no
result, only how rows are found. Measured in docs/performance.md (``bench/annotation_load.py --baseline``).
"""

from __future__ import annotations

from sqlalchemy import event, text

COLUMNS = ("participant_id", "round_number")


def statements(tables) -> list[str]:
    """The ``CREATE INDEX`` statements for the player tables among ``tables`` (objects with ``name`` and ``c``).

    >>> from types import SimpleNamespace as T
    >>> player = T(name="social_eval_player", c=dict(participant_id=1, round_number=2))
    >>> statements([player, T(name="otree_session", c=dict(id=1))])
    ['CREATE INDEX IF NOT EXISTS social_eval_player_participant_round ON social_eval_player (participant_id, round_number)']
    """
    return [
        f"CREATE INDEX IF NOT EXISTS {table.name}_participant_round ON {table.name} ({', '.join(COLUMNS)})"
        for table in tables
        if table.name.endswith("_player") and all(column in table.c for column in COLUMNS)
    ]


def create(metadata, connection, **_) -> None:
    """After oTree's ``create_all``: the indexes of every player table (idempotent)."""
    for statement in statements(metadata.tables.values()):
        connection.execute(text(statement))


def install() -> None:
    from .otree_internals import AnyModel

    if not event.contains(AnyModel.metadata, "after_create", create):
        event.listen(AnyModel.metadata, "after_create", create)
