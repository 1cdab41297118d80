"""The assignment policy's tallies kept in the server's process (study_flow/tallies.py): the same choice as the policy
over the stored rows, after commits, rollbacks and a request's own uncommitted changes, without reading the rows.

The pure part is checked against ``choose_item`` over the same rows (hypothesis); the ORM part in a fresh interpreter
on a session a real server created, against ``choose_item`` over ``policy_rows`` (what the server chose before).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.core.assignment import choose_item
from harness.servers import script_on_server_session
from study_flow.tallies import Tallies, from_tallies
from tests.support import examples

ITEMS = ["e1", "e2", "e3", "e4"]
STATE = st.tuples(
    st.sampled_from([*ITEMS, "gone"]),
    st.sampled_from(["p1", "p2", "p3"]),
    st.sampled_from(["reserved", "done", "released", "lost"]),
    st.one_of(st.floats(0, 100), st.just(float("nan"))),
)


def as_rows(states: dict) -> list[dict]:
    from study_flow.assignments import policy_can_read

    return [
        dict(item_id=item, participant=who, status=status, reserved_at=at)
        for _, (item, who, status, at) in sorted(states.items())
        if policy_can_read(status, at)
    ]


@settings(max_examples=examples(300), deadline=None)
@given(
    committed=st.dictionaries(st.integers(1, 12), STATE, max_size=12),
    pending=st.dictionaries(st.integers(1, 16), st.one_of(st.none(), STATE), max_size=4),
    per_item=st.one_of(st.none(), st.integers(1, 3)),
    participant=st.sampled_from(["p1", "p2", "p9"]),
    now=st.floats(0, 150),
)
def test_the_kept_tallies_choose_what_the_policy_chooses_over_the_rows(committed, pending, per_item, participant, now):
    tallies = Tallies(loaded_at=0.0)
    for row_id, state in committed.items():
        tallies.apply(row_id, state)
    changes = {row_id: None if state is None else (7, *state) for row_id, state in pending.items()}
    final = dict(committed)
    for row_id, state in pending.items():
        final.pop(row_id, None) if state is None else final.__setitem__(row_id, state)
    expected = choose_item(ITEMS, as_rows(final), participant=participant, per_item=per_item, now=now, timeout_s=30)
    found = from_tallies(tallies, changes, ITEMS, participant=participant, per_item=per_item, now=now, timeout_s=30)
    assert found == expected
    for row_id, state in pending.items():  # committed: the tallies take the changes in and choose the same again
        tallies.apply(row_id, state)
    assert from_tallies(tallies, {}, ITEMS, participant=participant, per_item=per_item, now=now, timeout_s=30) == found


CHECK = r"""
import json, sys, time
from lab_server.otree_internals import setup
setup()
from lab_server import otree_internals as internals
internals.save_sqlite_db  # noqa: B018 (sets up the database layer as oTree's command line does)
import sqlalchemy
from backend.core.assignment import choose_item
from study_flow import assignments, tallies
from social_eval import Assignment, Subsession
from social_eval import study as social_study

db, Session = internals.db, internals.Session
db.new_session()
session = db.query(Session).filter_by(code=sys.argv[1]).one()
root = db.query(Subsession).filter_by(session_id=session.id, round_number=1).one().id
items = social_study.study(session)["regular_ids"]
table_reads = [0]
def reading(conn, cursor, statement, *args):
    if statement.lstrip().upper().startswith("SELECT") and "social_eval_assignment" in statement:
        table_reads[0] += 1
sqlalchemy.event.listen(db._db.get_bind(), "before_cursor_execute", reading)

def both(participant, now):
    # what the server chose before (every row read) and what the kept tallies choose
    rows = assignments.policy_rows(Assignment, root)
    expected = choose_item(items, rows, participant=participant, per_item=2, now=now, timeout_s=600)
    reads = table_reads[0]
    found = tallies.choose(
        db._db, Assignment, root, items, owner=session.code, participant=participant, per_item=2, now=now, timeout_s=600
    )
    return [found, expected, table_reads[0] - reads]

result, now = {"steps": []}, time.time()
for step in range(12):
    participant = f"p{step % 5}"
    pair = both(participant, now + step)
    result["steps"].append(pair)
    if pair[0] is None:
        continue
    row = assignments.reserve(Assignment, root, item_id=pair[0], participant_code=participant, round_number=1, now=now + step)
    if step % 3 == 0:
        assignments.finish([row], now=now + step)  # and the next choice, in the same request, sees it done
        result["steps"].append(both(participant, now + step))
    if step % 4 == 1:
        db.rollback()  # the request failed: its reservation never was
        db.new_session()
    else:
        db.commit()
        db.new_session()

# tallies read again while the request has changed rows (every pick after a finished rating page): as stored, the
# request's own changes counted once
tallies.REFRESH_S = 0.0
result["refreshed"] = []
for step in range(6):
    participant = f"q{step}"
    found, expected, _ = both(participant, now + 20 + step)
    if found is None:
        break
    row = assignments.reserve(Assignment, root, item_id=found, participant_code=participant, round_number=1, now=now)
    assignments.finish([row], now=now + 20 + step)
    result["refreshed"].append(both(participant, now + 20 + step))
    db.commit()
    db.new_session()
# a new oTree session that got a deleted one's ids (SQLite) is never chosen for from the old session's tallies
tallies.REFRESH_S = 60.0
before = table_reads[0]
tallies.choose(db._db, Assignment, root, items, owner="anothersession", participant="p0", per_item=2, now=now, timeout_s=600)
result["new_owner_reads"] = table_reads[0] - before
print(json.dumps(result))
"""


@pytest.mark.slow
def test_commits_rollbacks_and_a_request_s_own_changes_choose_as_the_stored_rows_do():
    result, _ = script_on_server_session("social_eval", 5, CHECK)
    steps = result["steps"]
    assert len(steps) >= 14
    assert all(found == expected for found, expected, _ in steps), steps
    assert any(found is not None for found, _, _ in steps)
    # the rows are read for the first choice only (and not while a request's own changes are not committed)
    reads = [read for _, _, read in steps]
    assert reads[0] == 1 and sum(reads[1:]) == 0, reads
    # read again after REFRESH_S while the request had changed rows: as stored, its own changes counted once
    assert len(result["refreshed"]) >= 3
    assert all(found == expected and read == 1 for found, expected, read in result["refreshed"]), result["refreshed"]
    assert result["new_owner_reads"] == 1  # another session's tallies are never used
