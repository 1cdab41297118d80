"""What oTree repeats on every page request, done once (lab_server/page_cost.py): the same answers as oTree's own
code, and the repeated work really gone.

A real server creates a social_eval session and stops; a fresh interpreter in its folder then loads that database
as the server does (lab_server installed) and compares each lookup with oTree's own query (the oracle: a plain
SQLAlchemy ``filter_by(...).one()``, what oTree ran before), counting the SQL compilations.
"""

from __future__ import annotations

import sqlite3

import pytest

from harness.servers import script_on_server_session

pytestmark = pytest.mark.slow

CHECK = r"""
import json, sys
from lab_server.otree_internals import setup
setup()
from lab_server import otree_internals as internals
internals.save_sqlite_db  # noqa: B018 (sets up the database layer as oTree's command line does)
import sqlalchemy
from sqlalchemy.sql import compiler
from social_eval import Player, Subsession

db, Participant, Session = internals.db, internals.Participant, internals.Session
from lab_server import page_cost
serving = page_cost.SERVING.set(True)  # as while oTree serves a request
compiles = [0]
compile_sql = compiler.SQLCompiler.__init__
def counting(self, *args, **kwargs):
    compiles[0] += 1
    compile_sql(self, *args, **kwargs)
compiler.SQLCompiler.__init__ = counting

def plain(model, **equalities):  # oTree's own lookup before page_cost: the oracle
    return db.query(model).filter_by(**equalities).one()

def plain_first(model, **equalities):
    return db.query(model).filter_by(**equalities).first() is not None

kept = []  # SQLAlchemy's identity map holds rows weakly: kept alive, the same row must be the same object

def outcome(call):
    try:
        found = call()
        kept.append(found)
    except Exception as error:
        status = getattr(error, "status_code", "")
        return f"{type(error).__name__}{status}"
    return f"{type(found).__name__}:{found.id}:{id(found)}"

db.new_session()
session = db.query(Session).filter_by(code=sys.argv[1]).one()
participants = db.query(Participant).filter_by(session_id=session.id).order_by(Participant.id).all()
first = participants[0]
cases = {
    "participant by code": (lambda: Participant.objects_get(code=first.code), lambda: plain(Participant, code=first.code)),
    "participant page lookup": (lambda: db.get_or_404(Participant, code=first.code), lambda: plain(Participant, code=first.code)),
    "session by id": (lambda: Session.objects_get(id=session.id), lambda: plain(Session, id=session.id)),
    "no such participant": (lambda: Participant.objects_get(code="nobody00"), lambda: plain(Participant, code="nobody00")),
    "no such page": (lambda: db.get_or_404(Participant, code="nobody00"), None),  # oTree answers 404
    "several players": (lambda: Player.objects_get(round_number=1), lambda: plain(Player, round_number=1)),
    "a null link (left to oTree)": (lambda: Player.objects_get(participant=first, group=None), lambda: plain(Player, participant=first, group=None)),
}
for participant in participants:
    for round_number in (1, 2, 15):
        cases[f"player {participant.id} round {round_number}"] = (
            lambda p=participant, r=round_number: Player.objects_get(participant=p, round_number=r),
            lambda p=participant, r=round_number: plain(Player, round_number=r, participant=p),
        )
        cases[f"player {participant.id} round {round_number} by column"] = (
            lambda p=participant, r=round_number: Player.objects_get(round_number=r, participant_id=p.id),
            lambda p=participant, r=round_number: plain(Player, participant_id=p.id, round_number=r),
        )
subsession_ids = [s.id for s in db.query(Subsession).filter_by(session_id=session.id)]
for subsession_id in subsession_ids:
    cases[f"subsession {subsession_id}"] = (
        lambda i=subsession_id: Subsession.objects_get(id=i), lambda i=subsession_id: plain(Subsession, id=i)
    )
fast = [name for name in cases if "left to oTree" not in name and "no such page" not in name]

result = {"fast": {}, "oracle": {}}
for name, (lookup, oracle) in cases.items():
    result["fast"][name] = outcome(lookup)
    result["oracle"][name] = outcome(oracle) if oracle else "HTTPException404"
exists = {  # objects_exists: the baked query's answer, and oTree's own (a plain query's first row)
    "participant": (Participant.objects_exists(code=first.code), plain_first(Participant, code=first.code)),
    "browser bot": (
        Participant.objects_exists(code=first.code, is_browser_bot=True),
        plain_first(Participant, code=first.code, is_browser_bot=True),
    ),
    "nobody": (Participant.objects_exists(code="nobody00"), plain_first(Participant, code="nobody00")),
}
result["exists"] = {name: list(answers) for name, answers in exists.items()}

executions = [0]
def executing(*args):
    executions[0] += 1

db.new_session()  # the next request: its lookups are queries again, their SQL already compiled
sqlalchemy.event.listen(db._db.get_bind(), "before_cursor_execute", executing)
compiles[0] = executions[0] = 0
for name in fast:
    outcome(cases[name][0])
Participant.objects_exists(code=first.code, is_browser_bot=True)
result["compiled_again"], result["queries"] = compiles[0], executions[0]
executions[0] = 0
for name in fast:  # the same request again: a lookup that names one row is not asked twice
    outcome(cases[name][0])
result["queries_again"] = executions[0]
compiles[0] = 0
for name in fast:
    outcome(cases[name][1])
result["oracle_compiled"] = compiles[0]
result["lookups"] = len(fast)

# a row found once and then renamed or deleted in the same request is not found by its old values
second, third = Participant.objects_get(code=participants[1].code), participants[2]
old_code = second.code
second.code = "renamed1"
result["renamed"] = [outcome(lambda: Participant.objects_get(code=old_code)), outcome(lambda: plain(Participant, code=old_code))]
result["renamed_found"] = Participant.objects_get(code="renamed1") is second
doomed = Player.objects_get(participant=third, round_number=15)
db.delete(doomed)
result["deleted"] = [
    outcome(lambda: Player.objects_get(participant=third, round_number=15)),
    outcome(lambda: plain(Player, participant=third, round_number=15)),
]
db.rollback()

# a new arrival reads only the places that may be handed back: on the consent page, and taken long ago
import datetime, time
from lab_server import places
for position, participant in enumerate(db.query(Participant).filter_by(session_id=session.id).order_by(Participant.id)):
    participant.visited = True
    if position == 0:  # answered the consent page and is further on
        participant._index_in_pages = 6
        participant.vars.update(place_taken_at=1.0, consent_given=True)
    elif position == 1:  # on the consent page, its place taken a moment ago
        participant._index_in_pages = 1
        participant.time_started_utc = str(datetime.datetime.utcnow())
        participant.vars.update(place_taken_at=time.time())
    else:  # on the consent page since long ago, never answered it
        participant._index_in_pages = 1
        participant.time_started_utc = "2020-01-01 00:00:00.000001"
        participant.vars.update(place_taken_at=1.0)
db.commit()
db.new_session()
loaded = [0]
def counting_load(target, context):
    loaded[0] += 1
sqlalchemy.event.listen(Participant, "load", counting_load)
result["handed_back"] = places.hand_back_stale(Session.objects_get(id=session.id), now=time.time())
result["participants_read"] = loaded[0]
db.rollback()

# {{ formfield }}'s inline template, compiled once: the same text renders each context anew
compiler_module = internals.locate("otree.templating.compiler")
Template = internals.locate("otree.templating.template:Template")
parses = [0]
parse = compiler_module.Parser.parse
def counting_parse(self):
    parses[0] += 1
    return parse(self)
compiler_module.Parser.parse = counting_parse
inline = "<b>{{ x }}</b>{% if y %}!{% endif %}"
result["inline_outputs"] = [Template(inline).render(dict(x=n, y=n % 2)) for n in range(3)]
result["inline_parses"] = parses[0]
parses[0] = 0
for _ in range(2):
    Template(inline, "page_cost/Page.html")  # a template file's text: the loader keeps it, not this
result["file_parses"] = parses[0]

# {% static %}: a found URL is kept; a missing file fails every time
router = internals.locate("otree.asgi:app").router
checks = [0]
url_path_for = router.url_path_for
def counting_url_path_for(*args, **kwargs):
    checks[0] += 1
    return url_path_for(*args, **kwargs)
router.url_path_for = counting_url_path_for
static_url = internals.locate("otree.templating.nodes:url_of_static_file")
result["static_urls"] = [str(static_url("global/drafts.js")) for _ in range(3)]
result["static_checks"] = checks[0]
result["missing_static"] = [outcome(lambda: static_url("global/no-such-file.js")) for _ in range(2)]

# outside a request (oTree's bots keep a session of their own beside the requests they make), no row is kept: a row
# another request changed is read again, as oTree's own query reads a row nothing holds any more
page_cost.SERVING.reset(serving)
db.new_session()
bot_session = db._db
Participant.objects_get(code=first.code).label  # the bot looks at its participant and lets go of it
db.new_session()
Participant.objects_get(code=first.code).label = "changed1"  # a page request changes it and commits
db.commit()
db._db = bot_session
result["outside_a_request"] = Participant.objects_get(code=first.code).label
print(json.dumps(result))
"""


@pytest.fixture(scope="module")
def checked() -> dict:
    result, folder = script_on_server_session("social_eval", 3, CHECK)
    with sqlite3.connect(folder / "db.sqlite3") as connection:  # oTree's SQLite file (empty on PostgreSQL)
        result["journal_mode"] = connection.execute("PRAGMA journal_mode").fetchone()[0]
        result["sqlite_tables"] = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    return result


def test_lookups_find_what_otree_finds_and_compile_their_sql_once(checked):
    result = checked
    assert result["fast"] == result["oracle"]
    assert result["fast"]["no such participant"] == "NoResultFound"
    assert result["fast"]["no such page"] == "HTTPException404"
    assert result["fast"]["several players"] == "MultipleResultsFound"
    assert result["fast"]["participant page lookup"].startswith("Participant:")
    # oTree's own query compiles its SQL on every call; the same lookups in the next request compile nothing
    assert result["oracle_compiled"] >= result["lookups"]
    assert result["compiled_again"] == 0
    # one query per row: 3 participants x 3 rounds of players (each found by link and by column), 1 participant (by
    # objects_get and by the page's get_or_404), 1 session, 15 subsessions, and the 2 lookups that find no one row
    # (and the browser-bot question oTree asks on every live message: one query, compiled before)
    assert (result["lookups"], result["queries"]) == (38, 9 + 1 + 1 + 15 + 2 + 1)
    assert result["exists"] == {"participant": [True, True], "browser bot": [False, False], "nobody": [False, False]}
    # and in the same request, only the lookups that do not name one row ask the database again
    assert result["queries_again"] == 2  # "several players" and "no such participant"


def test_a_row_renamed_or_deleted_in_the_request_is_not_found_by_its_old_values(checked):
    assert checked["renamed"] == ["NoResultFound", "NoResultFound"]
    assert checked["renamed_found"] is True
    assert checked["deleted"] == ["NoResultFound", "NoResultFound"]


def test_inline_templates_and_static_urls_are_found_once(checked):
    assert checked["inline_outputs"] == ["<b>0</b>", "<b>1</b>!", "<b>2</b>"]
    assert checked["inline_parses"] == 1  # oTree's {{ formfield }}: once per field of every page before
    assert checked["file_parses"] == 2  # template files are kept by oTree's loader, not here
    assert checked["static_urls"] == ["/static/global/drafts.js"] * 3
    assert checked["static_checks"] == 1  # the router asked once, not on every page
    assert checked["missing_static"] == ["FileNotFoundError"] * 2


def test_a_sqlite_database_file_commits_to_a_write_ahead_log(checked):
    if checked["server_database"]:  # PostgreSQL: oTree's SQLite file stays the empty file oTree opens, untouched
        assert (checked["journal_mode"], checked["sqlite_tables"]) == ("delete", 0)
    else:  # the server's data went through the log, and the second process above read it back
        assert checked["journal_mode"] == "wal" and checked["sqlite_tables"] > 10
        assert checked["fast"]["participant by code"].startswith("Participant:")


def test_a_new_arrival_reads_only_the_places_that_may_be_handed_back(checked):
    # of three places (answered, on the consent page a moment ago, on it since long ago) only the last is read, and
    # handed back
    assert (checked["handed_back"], checked["participants_read"]) == (1, 1)


def test_outside_a_request_a_row_another_request_changed_is_read_again(checked):
    assert checked["outside_a_request"] == "changed1"  # oTree's bots: kept for the session, it was the old row
