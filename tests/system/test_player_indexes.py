"""The index oTree's player tables lack (lab_server/indexes.py): a participant's player row of a round is found by
the index, not by reading the whole table, on a new database and on one created before the index existed."""

from __future__ import annotations

import contextlib

import sqlalchemy

from harness.servers import base_env, own_database, scratch_project, start_server

INDEX = "social_eval_player_participant_round"
QUERY = "SELECT id FROM social_eval_player WHERE participant_id = 1 AND round_number = 2"


def engine_of(env, folder):
    """The server's database (oTree keeps SQLite in db.sqlite3 of its folder, whatever DATABASE_URL names)."""
    url = env["DATABASE_URL"]
    return sqlalchemy.create_engine(url if not url.startswith("sqlite") else f"sqlite:///{folder}/db.sqlite3")


def indexes(engine, table="social_eval_player"):
    return {index["name"] for index in sqlalchemy.inspect(engine).get_indexes(table)}


@contextlib.contextmanager
def started_once():
    """A database a production server made its tables in (started and stopped once): (engine, env, folder)."""
    folder = scratch_project("otree-indexes-")
    env = base_env()
    if not env.get("DATABASE_URL"):
        env["DATABASE_URL"] = f"sqlite:///{folder}/db.sqlite3"
    with own_database(env) as env:
        start_server(kind="prodserver", env=env, folder=folder).stop()
        engine = engine_of(env, folder)
        try:
            yield engine, env, folder
        finally:
            engine.dispose()


def plan_of(engine, query: str) -> str:
    """SQLite's plan for ``query`` (which index it uses)."""
    with engine.connect() as connection:
        return " ".join(str(row) for row in connection.execute(sqlalchemy.text(f"EXPLAIN QUERY PLAN {query}")))


def test_the_player_of_a_round_is_found_by_the_index_also_in_an_older_database():
    with started_once() as (engine, env, folder):
        assert INDEX in indexes(engine)
        assert "otree_participant_label" in indexes(engine, "otree_participant")  # a Prolific ID's earlier places
        if engine.url.get_backend_name() == "sqlite":
            assert INDEX in plan_of(engine, QUERY)
        with engine.begin() as connection:  # a database from before the index: its tables exist without it
            connection.execute(sqlalchemy.text(f"DROP INDEX {INDEX}"))
        assert INDEX not in indexes(engine)
        start_server(kind="prodserver", env=env, folder=folder).stop()
        assert INDEX in indexes(engine)


# The ExtraModel lookups of every rating page (study_flow.lookups.index): an annotator's assignment row, the episode.
ASKED = {
    "social_eval_assignment": (
        "social_eval_assignment_subsession_id_participant_code_item_id",
        "SELECT id FROM social_eval_assignment WHERE subsession_id = 1 AND participant_code = 'p' AND item_id = 'e' "
        "AND round_number = 2",
    ),
    "social_eval_storedepisode": (
        "social_eval_storedepisode_subsession_id_episode_id",
        "SELECT data FROM social_eval_storedepisode WHERE subsession_id = 1 AND episode_id = 'e'",
    ),
    "payoff_reasoning_eval_assignment": (
        "payoff_reasoning_eval_assignment_subsession_id_partici_20d68748",  # 63 characters at most (PostgreSQL)
        "SELECT id FROM payoff_reasoning_eval_assignment WHERE subsession_id = 1 AND participant_code = 'p' "
        "AND item_id = 'e'",
    ),
}


def test_the_rows_a_rating_page_looks_up_are_found_by_an_index():
    with started_once() as (engine, _, _):
        for table, (index, query) in ASKED.items():
            assert index in indexes(engine, table)
            if engine.url.get_backend_name() == "sqlite":
                assert index in plan_of(engine, query)
