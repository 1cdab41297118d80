"""The launch check's rules (backend/core/launch_check.py) for the misconfigurations a red team met on a production
server (issue 35): codes that are the same, an odd number of places in person-vs-person DoND, time limits far below
the check's own workload estimate, fixes that name a page that cannot make them, and a room taken from a study under
way. The server side (facts gathered, records written at creation) is tests/system/test_launch_check_rooms.py."""

from __future__ import annotations

import re

from backend.core import assignment, launch_check, room_check, workload
from study_flow.config import key_words


def severities(found: list[dict]) -> list[str]:
    return [item["severity"] for item in found]


def test_the_same_code_for_finishing_and_screening_out_is_a_problem():
    found = launch_check.codes_findings(completion_code="DONE1", screenout_code="DONE1", can_screen_out=True)
    assert severities(found) == ["problem"]
    assert "same" in found[0]["what"] and "DONE1" in found[0]["what"]
    assert severities(launch_check.codes_findings(completion_code="A1", screenout_code="B1", can_screen_out=True)) == [
        "ok"
    ]


def test_no_fix_points_to_the_edit_page_for_a_key_it_cannot_set():
    found = launch_check.codes_findings(completion_code="", screenout_code="", can_screen_out=True)
    found += launch_check.codes_findings(completion_code="C1", screenout_code="C1", can_screen_out=True)
    found += launch_check.time_limit_findings(limits={"game_timeout_s": 45}, unit_s=420, unit="game")
    found += launch_check.pairing_findings(places=7, two_people=True)
    for item in found:
        fix = item["fix"]
        assert "create the session again" in fix.lower(), fix
        assert "(Edit" not in fix and "Edit, on" not in fix, fix  # oTree's Edit sets the fee, label, comment only


def test_an_odd_number_of_places_in_a_game_of_two_people_is_a_problem():
    (odd,) = launch_check.pairing_findings(places=5, two_people=True)
    assert odd["severity"] == "problem" and "never comes" in odd["what"] and "6" in odd["fix"]
    assert severities(launch_check.pairing_findings(places=6, two_people=True)) == ["ok"]
    assert launch_check.pairing_findings(places=5, two_people=False) == []


def test_a_time_limit_far_below_the_workload_estimate_is_a_problem():
    limits = workload.time_limits("dond", {"game_timeout_s": 45})
    (cut,) = launch_check.time_limit_findings(limits=limits, unit_s=workload.DEFAULT_SECONDS["dond"], unit="game")
    assert cut["severity"] == "problem"
    assert "45 s" in cut["what"] and "420 s" in cut["what"] and "840" in cut["fix"]
    social = workload.time_limits("social_eval", {"reservation_timeout_s": 60})
    (held,) = launch_check.time_limit_findings(limits=social, unit_s=workload.DEFAULT_SECONDS["social_eval"], unit="c")
    assert held["severity"] == "problem" and "reservation_timeout_s" in held["what"]
    # The defaults of every app pass their own estimate.
    for app, keys in workload.TIME_LIMITS.items():
        defaults = {key: 1800 for key in keys}
        found = launch_check.time_limit_findings(
            limits=workload.time_limits(app, defaults), unit_s=workload.DEFAULT_SECONDS[app], unit="u"
        )
        assert severities(found) == ["ok"] * len(keys), (app, found)


def test_a_room_taken_from_a_study_under_way_is_named_in_both_sessions_checks():
    counts = dict(started=3, working=2, free=4)
    lost = room_check.room_findings(
        room=None, config="dond_llm", room_configs=None, taken_by=dict(room="dond_study", session="newone", **counts)
    )
    assert severities(lost) == ["problem"]
    assert "newone" in lost[0]["what"] and "2 of them still working" in lost[0]["what"]
    assert "4 places free" in lost[0]["what"] and "in no room" in lost[0]["what"]
    took = room_check.room_findings(
        room="dond_study",
        config="dond_llm",
        room_configs=("dond_llm",),
        taken_from=dict(room="dond_study", session="oldone", **counts),
    )
    assert severities(took) == ["warning", "ok"] and "oldone" in took[0]["what"]
    # A session nobody had started in (the researcher made it again before launch): nothing to warn the new one of.
    quiet = dict(room="dond_study", session="oldone", started=0, working=0, free=4)
    assert severities(
        room_check.room_findings(room="dond_study", config="dond_llm", room_configs=None, taken_from=quiet)
    ) == ["ok"]
    # A full session whose people still work: a warning, its places are not lost.
    full = dict(room="dond_study", session="n", started=4, working=1, free=0)
    assert severities(room_check.room_findings(room=None, config="c", room_configs=None, taken_by=full)) == ["warning"]


def test_a_record_the_check_did_not_write_is_read_as_nothing_under_way():
    for strange in ({"started": "many"}, {"started": None}, {}, {"started": 2, "working": [1]}):
        found = room_check.room_findings(room=None, config="c", room_configs=None, taken_by=dict(room="r", **strange))
        assert severities(found) == ["warning"], strange
    assert launch_check.live_study("not a record") is False


def test_without_a_record_a_roomless_session_names_the_session_its_room_holds():
    (found,) = room_check.room_findings(
        room=None, config="dond_llm", room_configs=None, home_holder=("dond_study", "abc123")
    )
    assert found["severity"] == "warning" and "abc123" in found["what"] and "dond_study" in found["what"]


def test_a_reservation_is_never_stated_as_zero_minutes():
    assert [assignment.minutes_shown(s) for s in (1, 20, 59, 60, 61, 1800)] == [1, 1, 1, 1, 2, 30]


def test_each_app_words_a_shared_key_its_own_way():
    assert key_words(["social_eval"])["reservation_timeout_s"][0] == "Hold a conversation (seconds)"
    assert key_words(["payoff_reasoning_eval"])["reservation_timeout_s"][0] == "Hold a log (seconds)"
    assert key_words(["social_eval"])["completion_code"] == key_words()["completion_code"]  # shared keys stay


def test_codes_that_differ_only_in_case_are_the_same_code():
    (same,) = launch_check.codes_findings(completion_code="ABC123", screenout_code="abc123", can_screen_out=True)
    assert same["severity"] == "problem" and "'ABC123' and 'abc123'" in same["what"], same
    assert "create the session again" in same["fix"].lower()


HEARTBEATS = {
    "Instructions": 20,
    "Bargain": 5,
}  # dond/pairing.py INSTRUCTIONS_HEARTBEAT_S, dond/views.py BARGAIN_PING_S


def partner_check(**limits) -> list[dict]:
    return launch_check.partner_limit_findings(
        limits=workload.partner_limits("dond", limits),
        message_s=workload.MESSAGE_S["dond"],
        heartbeats_s=HEARTBEATS,
        start_s=workload.START_S,
    )


def test_partner_limits_far_below_what_a_person_needs_are_problems():
    turn, closed, pairing = partner_check(turn_timeout_s=10, disconnect_timeout_s=10, pairing_timeout_s=10)
    assert [turn["severity"], closed["severity"], pairing["severity"]] == ["problem"] * 3
    assert "turn_timeout_s is 10 s" in turn["what"] and "35 s" in turn["what"] and "partner_timeout" in turn["what"]
    assert "Instructions page" in closed["what"] and "every 20 s" in closed["what"] and "partner_left" in closed["what"]
    assert "pairing_timeout_s is 10 s" in pairing["what"] and "unpaired" in pairing["what"]
    # Each fix is a value that clears the finding, made as every key's fix is: create the session again.
    for item in (turn, closed, pairing):
        assert "create the session again" in item["fix"].lower(), item
    fixed = {
        key: float(re.search(rf"{key} of at least (\d+)", item["fix"]).group(1))
        for key, item in zip(workload.PARTNER_LIMITS["dond"], (turn, closed, pairing), strict=True)
    }
    assert severities(partner_check(**fixed)) == ["ok"] * 3, fixed
    # One heartbeat is not enough either; the DoND defaults (300, 90, 600) pass.
    assert severities(partner_check(disconnect_timeout_s=20)) == ["problem"]
    assert (
        severities(partner_check(turn_timeout_s=100, disconnect_timeout_s=40, pairing_timeout_s=200)) == ["warning"] * 3
    )
    assert severities(partner_check(turn_timeout_s=300, disconnect_timeout_s=90, pairing_timeout_s=600)) == ["ok"] * 3


def test_a_room_taken_twice_names_who_holds_it_now_and_the_whole_chain():
    a_then = dict(room="bias_study", session="AAAA", started=1, working=1, free=3)
    # A lost the room to B, and B to C: A's check says C holds the room now, not B.
    (lost,) = room_check.room_findings(
        room=None,
        config="bias_tests",
        room_configs=None,
        taken_by=dict(a_then, session="BBBB"),
        later=["CCCC"],
        holder_now="CCCC",
    )
    assert lost["severity"] == "problem" and "go to session 'CCCC', which holds the room now" in lost["what"], lost
    assert "from 'BBBB' to 'CCCC'" in lost["what"]
    # C took it from B (nobody had started there), which had taken it from A, a study with someone working now.
    b_then = dict(room="bias_study", session="BBBB", started=0, working=0, free=4, working_now=0)
    took = room_check.room_findings(
        room="bias_study",
        config="bias_tests",
        room_configs=None,
        taken_from=b_then,
        earlier=[dict(a_then, working_now=1)],
    )
    assert severities(took) == ["warning", "ok"], took
    said = took[0]["what"]
    assert "from session 'BBBB'" in said and "which had taken it from session 'AAAA', a study under way" in said
    assert "1 still working now" in said and "'AAAA' was full or over" in took[0]["fix"]
    # A room closed since: nobody holds it, and A's check says so.
    (closed,) = room_check.room_findings(
        room=None, config="bias_tests", room_configs=None, taken_by=dict(a_then, session="BBBB"), holder_now=""
    )
    assert "holds no session now" in closed["what"]
