"""The admin Monitor's "Advance slowest participants" (and a page timeout, which oTree submits the same way) never
makes a server error and never records an answer the person did not give (issue #17).

Driven for real: the participants are plain-HTTP Persons on a devserver, the advance is the Monitor's own request
(``POST /AdvanceSession/<code>``, which runs oTree's ``advance_last_place_participants``: the page's form is posted
empty with the timeout flag).
"""

from __future__ import annotations

import requests

from backend.core.llm.fake_server import Reply
from harness.participants import people
from harness.servers import export_rows, run_async
from tests.support.admin import advance_slowest
from tests.support.live import send_until


def no_server_error(server, before: str) -> None:
    new = server.log()[len(before) :]
    assert "Traceback" not in new and "500 Internal" not in new, new[-3000:]


def test_advancing_a_judge_releases_the_log_and_records_no_verdict(otree_server):
    [judge] = people(otree_server.url, "payoff_reasoning_eval", 1)
    judge.advance_to("Judge")
    first_index = judge.index
    before = otree_server.log()
    advance_slowest(otree_server.url, None, judge.session_code, log=otree_server.log)
    no_server_error(otree_server, before)
    judge.reload()  # the person's page follows the advance (the Monitor moved them on)
    assert judge.page == "Judge" and judge.index > first_index, judge.url
    code = judge.session_code
    assert (
        export_rows(otree_server.url, "payoff_reasoning_eval", "custom_export_protocol_with_ids", session_code=code)
        == []
    )
    log = export_rows(otree_server.url, "payoff_reasoning_eval", "custom_export_assignments", session_code=code)
    assert [row["status"] for row in log][:1] == ["released"], log  # the log goes back to the pool, not "done"
    assert "done" not in {row["status"] for row in log}


def test_advancing_a_bias_test_marks_it_unanswered_and_moves_on(otree_server):
    [person] = people(otree_server.url, "bias_tests", 1)
    person.advance_to("Instructions").submit()
    for _ in range(3):  # a Choice and (in the sample file) Arguments pages: each advanced with nothing given
        page, index = person.page, person.index
        assert page in ("Choice", "Arguments"), person.url
        before = otree_server.log()
        advance_slowest(otree_server.url, None, person.session_code, log=otree_server.log)
        no_server_error(otree_server, before)
        person.reload()
        assert person.index != index or person.page != page, person.url
    rows = export_rows(otree_server.url, "bias_tests", session_code=person.session_code)
    advanced = [row for row in rows if row["player.item_id"] and row["subsession.round_number"] in ("1", "2", "3")]
    assert len(advanced) == 3
    for row in advanced:
        assert row["player.choice"] == "" and row["player.answer"] == "" and row["player.selected_arguments"] == ""
        assert row["player.answered_at"] == "", row  # not an answer: no answer time either


def test_advancing_a_rater_releases_the_episode_and_counts_nothing(otree_server):
    [rater] = people(otree_server.url, "social_eval", 1, comprehension_check=False)
    rater.advance_to("Rate")
    index = rater.index
    before = otree_server.log()
    advance_slowest(otree_server.url, None, rater.session_code, log=otree_server.log)
    no_server_error(otree_server, before)
    rater.reload()
    assert rater.index > index, rater.url
    code = rater.session_code
    log = export_rows(otree_server.url, "social_eval", "custom_export_assignments", session_code=code)
    assert log and log[0]["status"] == "released", log
    assert "done" not in {row["status"] for row in log}
    assert export_rows(otree_server.url, "social_eval", "custom_export_ratings_long", session_code=code) == []


def test_advancing_the_comprehension_check_is_not_a_failed_check(otree_server):
    [rater] = people(otree_server.url, "social_eval", 1, comprehension_check=True)
    rater.advance_to("Comprehension")
    before = otree_server.log()
    advance_slowest(otree_server.url, None, rater.session_code, log=otree_server.log)
    no_server_error(otree_server, before)
    rater.reload()
    assert rater.page == "ScreenOut", rater.url  # never checked: no rating without the check, but no failure either
    row = export_rows(otree_server.url, "social_eval", session_code=rater.session_code)[0]
    assert row["player.comprehension_attempts"] == "0"
    assert all(row[f"player.quiz_{n}"] == "" for n in range(1, 7))
    status = requests.get(f"{otree_server.url}/StudyStatus/{rater.session_code}", timeout=30).text
    assert '<td class="detail">comprehension not answered</td>' in status and "failed comprehension" not in status


def advance_until(server, person, last_page: str, *, limit: int = 8) -> list[str]:
    """Advance the person page by page (the Monitor's button) until ``last_page``; the pages they were on."""
    pages = [person.page]
    for _ in range(limit):
        if person.page == last_page:
            return pages
        before = server.log()
        advance_slowest(server.url, None, person.session_code, log=server.log)
        no_server_error(server, before)
        person.reload()
        pages.append(person.page)
    raise AssertionError(f"never reached {last_page}: {pages}")


def test_advancing_a_person_through_a_dond_game_against_the_model(otree_server):
    [person] = people(otree_server.url, "dond_llm", 1, llm_model="demo-model", first_mover="human")
    person.advance_to("Instructions")
    pages = advance_until(otree_server, person, "Completion")
    assert pages == ["Instructions", "Bargain", "Results", "Completion"], pages
    [game] = export_rows(otree_server.url, "dond", "custom_export_dond_games", session_code=person.session_code)
    assert game["outcome"] == "aborted" and game["abort_reason"] == "advanced_by_admin", game  # not "time_limit"


def test_advancing_unpaired_people_in_a_person_vs_person_session(otree_server):
    first, second = people(otree_server.url, "dond_human", 2)
    first.advance_to("Pairing")
    pages = advance_until(otree_server, first, "Completion")
    assert "Bargain" not in pages, pages  # nobody to play with: marked unpaired, never a game
    rows = export_rows(otree_server.url, "dond", session_code=first.session_code)
    assert rows[0]["player.is_unpaired"] == "1", rows[0]


def test_a_time_limit_is_the_time_limit_or_the_models_failure_by_who_owed_the_move(
    otree_server, server_clock, llm_server
):
    """Three games run out their 30 s countdown (the server's clock moved forward): where the person owed the first
    message it is the time limit (paid by the mode's goal: nothing without a deal); where only the model owed it (it
    opens, was asked on the page's first live message, and is still answering), it is the model's failure, paid by
    model_failure_pay (half_total: the person is never left with 0); where the page never connected, the model was
    never asked: ``no_connection``, paid by the mode's goal."""
    llm_server.responder = lambda request: Reply(text="Let me think about it.", delay_s=3)
    config = dict(llm_model="demo-model", game_timeout_s=30)
    [person_owes] = people(otree_server.url, "dond_llm", 1, first_mover="human", **config)
    [model_owes] = people(otree_server.url, "dond_llm", 1, first_mover="llm", **config)
    [never_connected] = people(otree_server.url, "dond_llm", 1, first_mover="llm", **config)
    for person in (person_owes, model_owes, never_connected):
        person.advance_to("Bargain")
    for person in (person_owes, model_owes):  # the page's script connects and sends "load"
        run_async(send_until(person.live_url(), {"type": "load"}, until=lambda payload: True))
    server_clock.advance(31)  # oTree's countdown runs out; the page's script then posts the form with the timeout flag
    games = {}
    for name, person in (("person", person_owes), ("model", model_owes), ("never", never_connected)):
        person.submit(dict(timeout_happened="True"))
        assert person.page == "Results", person.url
        [games[name]] = export_rows(
            otree_server.url, "dond", "custom_export_dond_games", session_code=person.session_code
        )
    assert games["person"]["abort_reason"] == "time_limit", games["person"]
    assert games["person"]["pay_rule"] == "mode_goal" and games["person"]["bonus_points"] == "0"
    assert games["model"]["abort_reason"] == "llm_time_limit", games["model"]
    assert games["model"]["pay_rule"] == "model_failure_half_total" and int(games["model"]["bonus_points"]) > 0
    assert games["never"]["abort_reason"] == "no_connection", games["never"]
    assert games["never"]["pay_rule"] == "mode_goal" and games["never"]["bonus_points"] == "0"
    results = model_owes.reload().html
    assert "while the AI model was still to answer" in results, results[-3000:]


def test_advancing_the_consent_page_is_not_a_declined_consent(otree_server):
    [person] = people(otree_server.url, "bias_tests", 1)
    assert person.page == "Consent"
    before = otree_server.log()
    advance_slowest(otree_server.url, None, person.session_code, log=otree_server.log)
    no_server_error(otree_server, before)
    person.reload()
    assert person.page == "ScreenOut", person.url  # no task without consent
    [row] = export_rows(otree_server.url, "bias_tests", session_code=person.session_code)[:1]
    assert row["player.consent_given"] == "", row  # not False: the person never declined
    status = requests.get(f"{otree_server.url}/StudyStatus/{person.session_code}", timeout=30).text
    assert '<td class="detail">consent not given</td>' in status, status  # "screened out", not "returned"


def test_a_person_advanced_past_an_unseen_results_page_is_paid_its_bonus(otree_server, llm_server):
    """The bonus is stored when the Results page is shown; a person the admin moves past Results without it ever
    being shown (a closed tab) is paid the same bonus, never 0 (found by the hostile review)."""
    import csv
    import io

    from backend.core.llm.fake_server import Reply
    from harness.servers import run_async
    from tests.support.live import send_until

    llm_server.responder = lambda request: Reply(status=500)  # the model fails: model_failure_pay applies
    [person] = people(otree_server.url, "dond_llm", 1, llm_model="m", first_mover="human", llm_max_retries=0)
    person.advance_to("Bargain")
    message = {"type": "message", "text": "Hello, what matters to you?"}
    run_async(send_until(person.live_url(), message, until=lambda payload: payload.get("finished")))
    for _ in range(2):  # Bargain -> Results -> Completion, Results never loaded
        advance_slowest(otree_server.url, None, person.session_code, log=otree_server.log)
    assert person.reload().page == "Completion", person.url
    [game] = export_rows(otree_server.url, "dond", "custom_export_dond_games", session_code=person.session_code)
    assert game["abort_reason"].startswith("llm_error") and float(game["bonus_points"]) > 0, game
    review = requests.get(f"{otree_server.url}/ReviewList/{person.session_code}", timeout=60).text
    [row] = list(csv.DictReader(io.StringIO(review)))
    assert float(row["bonus"]) == round(float(game["bonus_points"]) * 0.01, 2), (row, game)
