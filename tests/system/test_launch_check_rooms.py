"""What the researcher is told (issue 35), on a server set up as a lab deploys it (production mode, admin password;
a prodserver on PostgreSQL), with rooms of its own (a room is server-wide state):

- a new session that takes a room from a study under way is named in both sessions' launch checks and on the room's
  page (lab_server/creation.py records it when it happens; docs/decisions/0001-a-room-taken-from-a-live-study.md);
- the launch check catches an odd number of places in person-vs-person DoND, the same completion and screen-out
  code, a game or reservation time limit below its own workload estimate and a missing completion code, and each
  fix it offers (create the session again in its room) clears the finding;
- the room page offers only the room's configs and no bare room link (the entry refuses it); the Create-session form
  words social_eval's reservation key as a conversation's; places a tester took are not counted as the study's; the rating page never says "reserved for 0 minutes" (nor "1 minutes");
- a production admin lands on Sessions after login, not on the Demo page."""

from __future__ import annotations

import html
import re

import pytest
import requests

from harness.participants import Annotator, Visitor
from harness.servers import (
    base_env,
    create_session,
    deployment_mode,
    own_database,
    rest,
    running_server,
    session_start_links,
    uses_server_database,
)
from tests.support.admin import CSRF_TOKEN, logged_in
from tests.system.test_study_ops import findings_of

CODES = dict(completion_code="DONE1", screenout_code="OUT1")


@pytest.fixture(scope="module")
def lab():
    env = deployment_mode(base_env())
    with own_database(env) as env:
        kind = "prodserver" if uses_server_database(env) else "devserver"
        with running_server(kind=kind, env=env) as server:
            server.password = env["OTREE_ADMIN_PASSWORD"]
            yield server


@pytest.fixture(scope="module")
def admin(lab):
    return logged_in(lab.url, lab.password)


def check(lab, admin, code: str) -> list[tuple[str, str]]:
    return findings_of(admin.get(f"{lab.url}/LaunchCheck/{code}", timeout=60).text)


def test_a_room_taken_from_a_study_under_way_is_named_in_both_launch_checks_and_on_the_room_page(lab, admin):
    old = create_session(lab.url, "bias_tests", 4, room="bias_study", **CODES)["code"]
    Visitor(lab.url, old, "a" * 24).advance_to("Instructions")  # a real participant is working in it
    assert not any("taken" in what for _, what in check(lab, admin, old))

    new = create_session(lab.url, "bias_tests", 2, room="bias_study", **CODES)["code"]
    lost = check(lab, admin, old)
    (said,) = [what for severity, what in lost if severity == "problem" and "was taken by session" in what]
    assert new in said and "1 people had started, 1 of them still working, 3 places free" in said, lost
    took = check(lab, admin, new)
    assert any(s == "warning" and f"took room &#x27;bias_study&#x27; from session &#x27;{old}" in w for s, w in took)
    room = admin.get(f"{lab.url}/room_with_session/bias_study", timeout=30).text
    assert 'id="room-taken-from"' in room and old in room

    # Made again before anyone started in the new one (the launch check's own fix): the room changes hands from a
    # session nobody started in, but the study under way behind it still is, and the newest session names it.
    again = create_session(lab.url, "bias_tests", 2, room="bias_study", **CODES)["code"]
    (chain,) = [html.unescape(w) for s, w in check(lab, admin, again) if "took room" in w]
    assert f"from session '{new}' (0 people had started" in chain, chain
    assert f"which had taken it from session '{old}', a study under way" in chain, chain
    assert any(s == "warning" and "nobody had started here" in w for s, w in check(lab, admin, new))


def test_a_room_taken_twice_names_who_holds_it_now_and_the_chain_of_takeovers(lab, admin):
    """A live in the room, B made in it, then C (red team F8): A's check says C holds its room now (not B), C's
    says it took the room from B, which had taken it from A, a study with someone still working; so does the room."""
    first = create_session(lab.url, "bias_tests", 4, room="bias_study", **CODES)["code"]
    Visitor(lab.url, first, "c" * 24).advance_to("Instructions")
    second = create_session(lab.url, "bias_tests", 4, room="bias_study", **CODES)["code"]
    third = create_session(lab.url, "bias_tests", 4, room="bias_study", **CODES)["code"]

    (lost,) = [html.unescape(w) for s, w in check(lab, admin, first) if s == "problem" and "was taken by" in w]
    assert f"go to session '{third}', which holds the room now" in lost, lost
    assert f"from '{second}' to '{third}'" in lost, lost
    (moved,) = [html.unescape(w) for s, w in check(lab, admin, second) if "was taken by" in w]
    assert f"taken by session '{third}'" in moved and "go to that session" in moved, moved

    (took,) = [html.unescape(w) for s, w in check(lab, admin, third) if s == "warning" and "took room" in w]
    assert f"took room 'bias_study' from session '{second}' (0 people had started" in took, took
    assert f"which had taken it from session '{first}', a study under way (1 people had started" in took, took
    assert "1 still working now" in took, took
    room = html.unescape(admin.get(f"{lab.url}/room_with_session/bias_study", timeout=30).text)
    (said,) = re.findall(r'id="room-taken-from"[^>]*>(.*?)</div>', room, re.S)
    assert second in said and first in said, said


def test_partner_limits_and_codes_that_differ_only_in_case_are_caught(lab, admin):
    """Person-vs-person DoND with 10 s for a turn, a closed page and a partner's arrival, and codes ABC123 and
    abc123 (red team F7): each is a problem, and the values the fixes name clear them."""
    short = dict(turn_timeout_s=10, disconnect_timeout_s=10, pairing_timeout_s=10)
    bad = create_session(lab.url, "dond_human", 2, completion_code="ABC123", screenout_code="abc123", **short)["code"]
    problems = [html.unescape(w) for s, w in check(lab, admin, bad) if s == "problem"]
    for said in (
        "turn_timeout_s is 10 s",
        "disconnect_timeout_s is 10 s, but the Instructions page tells the server only every 20 s",
        "pairing_timeout_s is 10 s",
        "completion code and the screen-out code are the same ('ABC123' and 'abc123'",
    ):
        assert any(said in what for what in problems), (said, problems)
    fixes = re.findall(r'<td class="fix">(.*?)</td>', admin.get(f"{lab.url}/LaunchCheck/{bad}", timeout=60).text, re.S)
    fixed = {key: int(value) for key, value in re.findall(r"(\w+_timeout_s) of at least (\d+)", " ".join(fixes))}
    assert sorted(fixed) == sorted(short), fixes
    good = create_session(lab.url, "dond_human", 2, completion_code="ABC123", screenout_code="OUT1", **fixed)["code"]
    found = check(lab, admin, good)
    assert not [w for s, w in found if s != "ok" and ("timeout_s" in w or "same" in w)], found
    assert sum(s == "ok" and "The partner limit" in w for s, w in found) == 3, found


def test_each_misconfiguration_is_caught_and_each_fix_it_offers_clears_it(lab, admin):
    bad = create_session(
        lab.url, "dond_human", 3, room="dond_study", completion_code="SAME1", screenout_code="SAME1", game_timeout_s=45
    )["code"]
    found = check(lab, admin, bad)
    problems = " | ".join(what for severity, what in found if severity == "problem")
    assert "3 places for a game of two people" in problems, found
    assert "completion code and the screen-out code are the same" in problems, found
    assert "game_timeout_s is 45 s, but one game takes about 420 s" in problems, found
    fixes = re.findall(r'<td class="fix">(.*?)</td>', admin.get(f"{lab.url}/LaunchCheck/{bad}").text, re.S)
    assert all("cannot" in fix for fix in fixes if "Edit" in fix), fixes  # oTree's Edit sets none of these keys

    # The fixes say: create the session again in its room, with an even number of places, two codes, a longer limit.
    fixed = create_session(
        lab.url, "dond_human", 4, room="dond_study", completion_code="DONE1", screenout_code="OUT1", game_timeout_s=840
    )["code"]
    found = check(lab, admin, fixed)
    assert not [what for severity, what in found if severity == "problem"], found
    assert any(s == "ok" and "4 places pair up into 2 games" in w for s, w in found)
    assert any(s == "ok" and "Room &#x27;dond_study&#x27; runs config" in w for s, w in found)

    held = create_session(lab.url, "social_eval", 4, room="social_eval_study", reservation_timeout_s=60, **CODES)[
        "code"
    ]
    assert any(s == "problem" and "reservation_timeout_s is 60 s" in w for s, w in check(lab, admin, held))
    kept = create_session(lab.url, "social_eval", 4, room="social_eval_study", **CODES)["code"]
    assert not any("reservation_timeout_s" in w and s != "ok" for s, w in check(lab, admin, kept))

    uncoded = create_session(lab.url, "payoff_reasoning_eval", 3, room="payoff_reasoning_study")["code"]
    assert any(s == "problem" and w.startswith("No completion code") for s, w in check(lab, admin, uncoded))
    coded = create_session(lab.url, "payoff_reasoning_eval", 3, room="payoff_reasoning_study", **CODES)["code"]
    assert not any(w.startswith("No completion code") for _, w in check(lab, admin, coded))


def test_the_room_page_offers_only_its_configs_and_no_bare_room_link(lab, admin):
    held = admin.get(f"{lab.url}/room_with_session/payoff_reasoning_study", timeout=30)
    if "/room_with_session/" in held.url:  # another test made a session there: close the room, as on its page
        token = CSRF_TOKEN.search(held.text).group(1)
        admin.post(f"{lab.url}/CloseRoom/payoff_reasoning_study", data=dict(csrftoken=token), timeout=30)
    page = admin.get(f"{lab.url}/room_without_session/payoff_reasoning_study", timeout=30).text
    offered = re.findall(r'<option[^>]*value="([^"]+)"', page)
    assert offered == ["payoff_reasoning_eval"], offered
    assert 'id="config-bias_tests"' not in page and 'id="config-payoff_reasoning_eval"' in page
    bare = f"{lab.url}/room/payoff_reasoning_study"
    assert f">{bare}</a>" not in page and 'id="room-wide-note"' in page


def test_the_create_form_words_social_evals_reservation_as_a_conversations(lab, admin):
    page = admin.get(f"{lab.url}/create_session", timeout=30).text
    social = page.split('id="edit-config-table-social_eval"')[1].split('id="edit-config-table-')[0]
    payoff = page.split('id="edit-config-table-payoff_reasoning_eval"')[1].split('id="edit-config-table-')[0]
    assert "Hold a conversation (seconds)" in social and "Hold a log" not in social
    assert "Hold a log (seconds)" in payoff


def test_a_short_reservation_is_never_stated_as_zero_minutes(lab):
    code = create_session(lab.url, "social_eval", 2, reservation_timeout_s=20, **CODES)["code"]
    rating = Annotator(Visitor(lab.url, code, "b" * 24).url, code).to_rating_page()
    assert "for 0 minutes" not in rating.html and "reserved for you for 1 minute." in rating.html


def test_places_a_tester_took_are_not_counted_as_the_studys(lab, admin):
    code = create_session(lab.url, "dond_human", 4, **CODES)["code"]
    assert any(s == "ok" and "4 places pair up into 2 games" in w for s, w in check(lab, admin, code))
    tester = session_start_links(lab.url, code)[0].rsplit("/", 1)[-1]
    rest(lab.url, "POST", f"/api/participant_vars/{tester}", json={"vars": {"is_test": True}}).raise_for_status()
    (said,) = [w for s, w in check(lab, admin, code) if "game of two people" in w or "pair up" in w]
    assert said.startswith("3 places for a game of two people") and "1 place(s) taken by test participants" in said


def test_a_production_admin_lands_on_sessions_after_login_not_on_the_demo_page(lab):
    http = requests.Session()
    token = CSRF_TOKEN.search(http.get(lab.url + "/login", timeout=30).text).group(1)
    answer = http.post(
        lab.url + "/login", data=dict(username="admin", password=lab.password, csrftoken=token), timeout=30
    )
    assert answer.url == lab.url + "/sessions", answer.url
    assert http.get(lab.url + "/", timeout=30).url == lab.url + "/sessions"
