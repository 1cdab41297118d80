"""Database indexes oTree does not create: a participant's player row of a round, and a participant by Prolific ID,
found without reading the table.

oTree finds the player of every page request by participant and round (``Player.objects_get(participant=...,
round_number=...)`` in its page view; ``in_round``, ``in_rounds``, ``in_previous_rounds`` and
``participant.get_players`` the same way), but its player tables have no index on ``participant_id``: SQLite and
PostgreSQL read the app's whole player table for each such query, a row per participant and round (social_eval:
15 rounds, so 45,000 rows in a session of 3,000), so without an index a page step's time grows with the session.

``install`` adds one index per app's player table, ``<table>_participant_round`` on ``(participant_id, round_number)``,
right after oTree creates its tables at start-up (``CREATE INDEX IF NOT EXISTS``: a database made without it gets it at
its next start; SQLite and PostgreSQL alike). An index changes no row and no result, only how rows are found. Measured
in docs/performance.md (``bench/annotation_load.py --baseline``).

The same for the columns an app's lookup of every page step asks by in an ExtraModel's table, which oTree indexes
not at all: an app asks for them with ``study_flow.lookups.index`` (social_eval: an annotator's assignment row, by
participant and episode, on every rating page; the episode to show, by its id), and ``statements`` adds them.

The same for ``otree_participant (label)``: a new arrival by a room link looks its Prolific ID up among every
participant of the database (``entry``: a returning PID is sent back to its place), oTree's own session-wide link
among the session's.
"""

from __future__ import annotations

import hashlib

from sqlalchemy import event, text

from study_flow import lookups

COLUMNS = ("participant_id", "round_number")
PARTICIPANTS = "otree_participant"


def index_name(name: str) -> str:
    """``name`` if it fits PostgreSQL's 63 characters, else its first 54, ``_`` and 8 hex digits of its SHA-1 (the same
    name on every database: PostgreSQL would cut a longer one, SQLite would not).

    >>> index_name("social_eval_storedepisode_subsession_id_episode_id")
    'social_eval_storedepisode_subsession_id_episode_id'
    >>> index_name("payoff_reasoning_eval_assignment_subsession_id_participant_code_item_id")
    'payoff_reasoning_eval_assignment_subsession_id_partici_20d68748'
    """
    if len(name) <= 63:
        return name
    return f"{name[:54]}_{hashlib.sha1(name.encode()).hexdigest()[:8]}"


def statements(tables) -> list[str]:
    """The ``CREATE INDEX`` statements for the player tables among ``tables`` (objects with ``name`` and ``c``), and
    for the participants' labels (their Prolific IDs: each new arrival by a room link looks its PID up among all
    participants, to send a returning one back to their place).

    and for the columns an app asked for (``study_flow.lookups.index``, kept in the table's ``info``).

    >>> from types import SimpleNamespace as T
    >>> player = T(name="social_eval_player", c=dict(participant_id=1, round_number=2))
    >>> stored = T(name="social_eval_storedepisode", c={}, info={lookups.INDEXED: [("subsession_id", "episode_id")]})
    >>> tables = [player, T(name="otree_session", c=dict(id=1)), stored, T(name=PARTICIPANTS, c={})]
    >>> for statement in statements(tables):
    ...     print(statement)
    CREATE INDEX IF NOT EXISTS social_eval_player_participant_round ON social_eval_player (participant_id, round_number)
    CREATE INDEX IF NOT EXISTS social_eval_storedepisode_subsession_id_episode_id ON social_eval_storedepisode (subsession_id, episode_id)
    CREATE INDEX IF NOT EXISTS otree_participant_label ON otree_participant (label)
    """
    found = []
    for table in tables:
        if table.name.endswith("_player") and all(column in table.c for column in COLUMNS):
            found.append(
                f"CREATE INDEX IF NOT EXISTS {table.name}_participant_round ON {table.name} ({', '.join(COLUMNS)})"
            )
        for columns in getattr(table, "info", {}).get(lookups.INDEXED, ()):
            name = index_name(f"{table.name}_{'_'.join(columns)}")
            found.append(f"CREATE INDEX IF NOT EXISTS {name} ON {table.name} ({', '.join(columns)})")
    if any(table.name == PARTICIPANTS for table in tables):
        found.append(f"CREATE INDEX IF NOT EXISTS {PARTICIPANTS}_label ON {PARTICIPANTS} (label)")
    return found


def create(metadata, connection, **_) -> None:
    """After oTree's ``create_all``: the indexes of every player table (idempotent)."""
    for statement in statements(metadata.tables.values()):
        connection.execute(text(statement))


def install() -> None:
    from .otree_internals import AnyModel

    if not event.contains(AnyModel.metadata, "after_create", create):
        event.listen(AnyModel.metadata, "after_create", create)
