"""Run one session config's bots against the database in DATABASE_URL (e.g. PostgreSQL).

`otree test` always uses an in-memory SQLite database; this runs the same bot runner without that override, so
the suite's bots exercise the real database. Usage (from the project folder):
``python -m harness.bots_on_database CONFIG [NUM_PARTICIPANTS] [EXPORT_DIR]``.
"""

from __future__ import annotations

import logging
import sys


def main(argv: list[str]) -> int:
    from lab_server.otree_internals import setup

    setup()
    from lab_server.otree_internals import (
        run_all_bots_for_session_config,
        save_sqlite_db,  # noqa: F401  (sets up the DB layer the same way the CLI does)
    )

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    config_name = argv[0]
    participants = int(argv[1]) if len(argv) > 1 and argv[1] else None
    export_path = argv[2] if len(argv) > 2 else None
    run_all_bots_for_session_config(config_name, participants, export_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
