"""A study run from outside, as a researcher runs it (lab_server/study_pages.py), on a server set up as a lab deploys
it (production mode, admin password; a prodserver on PostgreSQL):

- the room page and the session's Study links page show the study URL to paste on Prolific; "Open as a test
  participant" starts the study through the room's real link with a fresh PID, marked as a test, and the test
  participant is left out of the review list and the bonus file;
- the launch check names a missing completion code, a model endpoint that answers as another model or not at all,
  too few places for the episodes, and pay per hour below the researcher's floor;
- the bonus file has one line per paid PID with exactly the bonus each person's own Results page stated, and the
  review list gives everyone's status, reason and the code they were shown."""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
import subprocess
import sys

import pytest
import requests

from backend.core.llm.fake_server import Reply
from harness import PROJECT_ROOT
from harness.participants import Person, Visitor
from harness.servers import (
    base_env,
    create_session,
    deployment_mode,
    own_database,
    rest,
    run_async,
    running_server,
    uses_server_database,
)
from tests.support.admin import logged_in
from tests.system.test_admin_pages import games_export, play


@pytest.fixture(scope="module")
def lab(_llm_server_instance):
    env = deployment_mode(
        base_env(OPENAI_BASE_URL=_llm_server_instance.base_url, OPENAI_API_KEY="sk-test-not-a-real-key")
    )
    with own_database(env) as env:
        kind = "prodserver" if uses_server_database(env) else "devserver"
        with running_server(kind=kind, env=env) as server:
            server.password = env["OTREE_ADMIN_PASSWORD"]
            yield server


def findings_of(page: str) -> list[tuple[str, str]]:
    """(severity, what) of every row of the launch check's table."""
    rows = re.findall(
        r'<tr class="severity-(\w+)">\s*<td class="severity">\w+</td>\s*<td class="what">(.*?)</td>', page, re.S
    )
    return [(severity, what.strip()) for severity, what in rows]


def what_the_scripted_model_leaves(server, code: str, person) -> dict[str, int]:
    """The items the scripted model does not ask for (it takes every item worth at least 2 to it)."""
    row = next(r for r in games_export(server, code) if person.code in (r["participant_a"], r["participant_b"]))
    other = "b" if row["participant_a"] == person.code else "a"
    items, counts, values = (json.loads(row[key]) for key in ("item_types", "counts", f"values_{other}"))
    return {item: count if value < 2 else 0 for item, count, value in zip(items, counts, values, strict=True)}


def command(server, *arguments, password: str | None = None) -> subprocess.CompletedProcess:
    """``python -m backend ARGUMENTS --server URL`` as a researcher runs it, the admin password in the environment."""
    env = {key: value for key, value in os.environ.items() if key != "OTREE_ADMIN_PASSWORD"}
    env["OTREE_ADMIN_PASSWORD"] = server.password if password is None else password
    line = [sys.executable, "-m", "backend", *arguments, "--server", server.url]
    return subprocess.run(line, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120)


def participant_vars(server, code: str, names: list[str]) -> dict[str, dict]:
    answer = rest(server.url, "POST", f"/api/get_session/{code}", json={"participant_vars": names})
    answer.raise_for_status()
    return {p["code"]: p for p in answer.json()["participants"]}


def test_study_links_show_the_prolific_url_and_open_a_marked_test_participant(lab, page):
    code = create_session(lab.url, "bias_tests", 3, room="bias_study", completion_code="C0MPL")["code"]
    admin = logged_in(lab.url, lab.password)
    pasted = "/room/bias_study?participant_label={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}"
    links = admin.get(f"{lab.url}/StudyLinks/{code}", timeout=30).text
    assert lab.url + pasted in links
    assert "works only with a Prolific ID" in links  # what the session-wide link needs, and what to use instead
    room = admin.get(f"{lab.url}/room_with_session/bias_study", timeout=30).text
    assert lab.url + pasted in room and f'href="/StudyLinks/{code}"' in room
    assert requests.get(f"{lab.url}/StudyLinks/{code}", allow_redirects=False, timeout=30).status_code in (302, 303)
    empty = admin.get(f"{lab.url}/room_without_session/payoff_reasoning_study", timeout=30).text
    assert lab.url + pasted.replace("bias_study", "payoff_reasoning_study") in empty and 'id="room-no-session"' in empty

    page.goto(lab.url + "/login")
    page.fill("input[name=username]", "admin")
    page.fill("input[name=password]", lab.password)
    page.get_by_role("button").click()
    page.goto(f"{lab.url}/StudyLinks/{code}")
    with page.context.expect_page() as opened:
        page.click("#open-test-participant")
    tester = opened.value
    tester.wait_for_url(re.compile(r"/p/\w+/bias_tests/Consent/"))

    found = participant_vars(lab, code, ["is_test", "prolific_pid", "entered_room", "study_id"])
    (tested,) = [p for p in found.values() if p.get("is_test")]
    assert re.fullmatch(r"[0-9a-f]{24}", tested["label"])
    assert tested["prolific_pid"] == tested["label"]  # arrived through the real entry, which stored the PID
    assert tested["entered_room"] == "bias_study" and tested["study_id"] == "test_link"
    assert sum(1 for p in found.values() if p.get("is_test")) == 1  # nobody else was marked

    review = admin.get(f"{lab.url}/ReviewList/{code}", timeout=30).text
    assert tested["label"] not in review and tested["code"] not in review
    status = admin.get(f"{lab.url}/StudyStatus/{code}", timeout=30).text
    assert f'href="/LaunchCheck/{code}"' in status and f'href="/PayAndReview/{code}"' in status


def test_the_launch_check_names_a_missing_code_a_wrong_or_dead_model_too_few_places_and_low_pay(lab, llm_server):
    admin = logged_in(lab.url, lab.password)
    code = create_session(lab.url, "dond_llm", 2, room="dond_study", llm_model="model-a", min_pay_per_hour=9)["code"]
    llm_server.script(Reply("ready", served_model="model-b"))
    found = findings_of(admin.get(f"{lab.url}/LaunchCheck/{code}", timeout=60).text)
    whats = " | ".join(what for _, what in found)
    assert ("problem", next(w for s, w in found if w.startswith("No completion code"))) in found
    assert any(
        s == "problem" and "answered as model &#x27;model-b&#x27;, not &#x27;model-a&#x27;" in w for s, w in found
    )
    assert any(s == "problem" and "below your floor of 9.00" in w for s, w in found), whats  # fee 0 for ~9 min
    assert any(s == "ok" and "Room &#x27;dond_study&#x27; runs config" in w for s, w in found), whats
    llm_server.script(Reply("ready", served_model="model-b"))
    printed = command(lab, "launch-check", "--session", code)
    assert printed.returncode == 1, printed.stderr  # a problem: the exit status says so
    assert "PROBLEM  No completion code" in printed.stdout and "answered as model 'model-b'" in printed.stdout
    refused = command(lab, "launch-check", "--session", code, password="wrong")
    assert refused.returncode == 2 and "login failed" in refused.stderr and "wrong" not in refused.stderr

    llm_server.script(Reply("ready"))
    fine = create_session(
        lab.url, "dond_llm", 2, llm_model="model-a", completion_code="C1", screenout_code="S1", participation_fee=3
    )["code"]
    found = findings_of(admin.get(f"{lab.url}/LaunchCheck/{fine}", timeout=60).text)
    assert not any(w.startswith("No completion code") or w.startswith("No screen-out") for _, w in found)
    assert any(s == "ok" and re.search(r"Model &#x27;model-a&#x27; answered in \d+\.\d\d s", w) for s, w in found)
    assert any(s == "warning" and "in no room" in w for s, w in found)

    llm_server.script(Reply(status=503), Reply(status=503))
    found = findings_of(admin.get(f"{lab.url}/LaunchCheck/{fine}", timeout=60).text)
    assert any(s == "problem" and "did not answer for model &#x27;model-a&#x27;" in w for s, w in found)

    few = create_session(lab.url, "social_eval", 1, completion_code="C1", annotators_per_episode=3)["code"]
    found = findings_of(admin.get(f"{lab.url}/LaunchCheck/{few}", timeout=60).text)
    assert any(s == "warning" and w.startswith("Too few places: 1 places") for s, w in found)

    logs = create_session(lab.url, "payoff_reasoning_eval", 60, completion_code="C1", judges_per_log=1)["code"]
    found = findings_of(admin.get(f"{lab.url}/LaunchCheck/{logs}", timeout=60).text)
    assert any(s == "warning" and w.startswith("More places than the logs can cover") for s, w in found)

    german = create_session(lab.url, "bias_tests", 2, language="de", completion_code="C1")["code"]
    found = findings_of(admin.get(f"{lab.url}/LaunchCheck/{german}", timeout=60).text)
    assert ("problem", "The session is in &#x27;de&#x27; but its material is not: bias items (en).") in found
    english = create_session(lab.url, "bias_tests", 2, completion_code="C1")["code"]
    assert not any("material is not" in w for _, w in findings_of(admin.get(f"{lab.url}/LaunchCheck/{english}").text))


def test_the_bonus_file_pays_what_each_results_page_said_and_the_review_list_names_everyone(lab):
    code = create_session(lab.url, "dond_llm", 4, llm_model="scripted", completion_code="DONE1", screenout_code="OUT1")[
        "code"
    ]
    pids = ["a" * 24, "b" * 24, "c" * 24]
    modest, greedy, declined = (Visitor(lab.url, code, pid) for pid in pids)
    declined.submit(dict(consent_given="False"))
    stated = {}
    for person in (modest, greedy):
        person.advance_to("Bargain")
        everything = {item["id"]: item["count"] for item in person.js_vars()["items"]}
        asked = what_the_scripted_model_leaves(lab, code, person) if person is modest else everything
        run_async(play(person.live_url(), asked))
        person.submit().advance_to("Results")
        bonus = re.search(r'<td id="bonus">\s*(.*?)\s*</td>', person.html, re.S).group(1)
        stated[person] = re.search(r"\d+\.\d\d", bonus.replace(",", ".")).group(0)
        person.advance_to("Completion")

    admin = logged_in(lab.url, lab.password)
    lines = admin.get(f"{lab.url}/BonusFile/{code}", timeout=30).text.splitlines()
    expected = sorted(
        f"{pid},{stated[p]}" for pid, p in zip(pids[:2], (modest, greedy), strict=True) if float(stated[p]) > 0
    )
    assert sorted(lines) == expected
    assert all(re.fullmatch(r"[0-9a-f]{24},\d+\.\d\d", line) for line in lines)
    assert float(stated[modest]) > 0 or not any(what_the_scripted_model_leaves(lab, code, modest).values())

    review = {
        row["prolific_pid"]: row for row in csv.DictReader(io.StringIO(admin.get(f"{lab.url}/ReviewList/{code}").text))
    }
    assert set(review) == set(pids)  # the fourth place was never taken
    assert review[pids[0]]["status"] == "finished" and review[pids[0]]["completion_code"] == "DONE1"
    assert review[pids[0]]["bonus"] == stated[modest]
    assert review[pids[2]]["status"] == "declined" and "declined consent" in review[pids[2]]["reason"]
    assert review[pids[2]]["completion_code"] == "OUT1"  # the screen-out page showed them the screen-out code
    assert "Bulk bonus payment" in admin.get(f"{lab.url}/PayAndReview/{code}", timeout=30).text
    assert command(lab, "bonus", "--session", code).stdout.splitlines() == lines  # the same from the command line
    printed = command(lab, "review", "--session", code).stdout
    assert {row["prolific_pid"]: row for row in csv.DictReader(io.StringIO(printed))} == review


def test_a_model_outage_pays_the_stated_failure_bonus_in_the_bonus_file(lab, llm_server):
    """The model answers with nothing a game can use (the fake server's default reply): the game ends early and the
    person is paid by the failure rule their pages stated; the bonus file pays exactly that."""
    code = create_session(lab.url, "dond_llm", 1, llm_model="broken-model", llm_max_retries=0)["code"]
    person = Visitor(lab.url, code, "e" * 24).advance_to("Bargain")
    run_async(play(person.live_url(), {}))
    person.submit().advance_to("Results")
    stated = re.search(r"\d+\.\d\d", re.search(r'<td id="bonus">\s*(.*?)\s*</td>', person.html, re.S).group(1))
    assert stated is not None and float(stated.group(0)) > 0  # half of the total value, as the rules said
    person.advance_to("Completion")
    lines = logged_in(lab.url, lab.password).get(f"{lab.url}/BonusFile/{code}", timeout=30).text.splitlines()
    assert lines == [f"{'e' * 24},{stated.group(0)}"]


def test_a_test_place_is_taken_before_the_redirect_so_a_real_arrival_in_between_gets_another(lab):
    code = create_session(lab.url, "bias_tests", 2)["code"]
    admin = logged_in(lab.url, lab.password)
    links = admin.get(f"{lab.url}/StudyLinks/{code}", timeout=30).text
    token = re.search(r'name="csrftoken" value="([^"]+)"', links).group(1)
    answer = admin.post(f"{lab.url}/TestParticipant/{code}", data={"csrftoken": token}, allow_redirects=False)
    assert answer.status_code == 303
    test_link = answer.headers["location"]
    assert "/join/" in test_link and "participant_label=" in test_link  # no room: the session-wide link

    real = Visitor(lab.url, code, "d" * 24)  # arrives before the researcher's browser follows the redirect
    found = participant_vars(lab, code, ["is_test"])
    assert found[real.code]["label"] == "d" * 24 and not found[real.code].get("is_test")
    (tested,) = [p for p in found.values() if p.get("is_test")]
    assert tested["code"] != real.code and tested["label"] in test_link
    assert admin.post(f"{lab.url}/TestParticipant/{code}", data={"csrftoken": token}).status_code == 409  # full
    assert admin.post(f"{lab.url}/TestParticipant/{code}", data={}).status_code == 403  # no CSRF token


@pytest.mark.parametrize(
    ("config_name", "language", "asked"),
    [
        (
            "social_eval",
            "en",
            "You rate 4 conversations, with 14 ratings for each; every rating needs an explanation of "
            "at least 20 characters. Expected time: about 32 minutes in all.",
        ),
        (
            "social_eval",
            "de",
            "Sie bewerten 4 Gespräche, mit je 14 Bewertungen; jede Bewertung braucht eine Begründung "
            "von mindestens 20 Zeichen. Erwartete Dauer: insgesamt etwa 32 Minuten.",
        ),
        ("bias_tests", "it", None),
        ("payoff_reasoning_eval", "de", None),
        (
            "dond_llm",
            "it",
            "Lei negozia una volta con un'altra parte; ogni parte può inviare fino a 5 messaggi. "
            "Durata prevista: circa 9 minuti in tutto.",
        ),
    ],
)
def test_consent_and_instructions_say_duration_pay_contact_and_what_is_asked(lab, page, config_name, language, asked):
    from harness.servers import next_page, session_start_links
    from study_flow import messages
    from tests.support.language_check import assert_no_english

    text = messages(language)
    fields = dict(language=language, participation_fee=2.5, researcher_contact="lab@example.org")
    code = create_session(lab.url, config_name, 1, llm_model="scripted", **fields)["code"]
    page.goto(session_start_links(lab.url, code)[0])
    consent = page.locator(".consent-text").inner_text()
    assert "2.50 GBP" in consent
    assert page.locator("#consent-contact").inner_text().strip() == text["consent_contact"].format(
        contact="lab@example.org"
    )
    assert re.search(text["consent_facts"].split("{minutes}")[0].strip() + r" \d+ ", consent), consent
    assert_no_english(page, language, where="consent")
    page.get_by_label(text["consent_yes"]).check()
    next_page(page, text["next"])
    workload = page.locator("#workload").inner_text().strip()
    if asked:
        assert workload == asked
    else:
        assert re.fullmatch(r"\D+ \d+ \D+ \d+ \D+", workload), workload  # a count and the minutes, in words around
    assert_no_english(page, language, where="instructions")


def test_once_three_have_finished_the_pay_check_uses_their_median_time(lab):
    code = create_session(lab.url, "dond_llm", 4, llm_model="scripted", participation_fee=1, min_pay_per_hour=6)
    code = code["code"]
    admin = logged_in(lab.url, lab.password)
    before = " ".join(w for _, w in findings_of(admin.get(f"{lab.url}/LaunchCheck/{code}", timeout=60).text))
    assert "Estimated 9 min for 1.00 GBP: 6.67 GBP per hour" in before and "default times" in before
    for pid in ("1" * 24, "2" * 24, "3" * 24):
        person = Visitor(lab.url, code, pid).advance_to("Bargain")
        run_async(play(person.live_url(), {}))
        person.submit().advance_to("Completion")
    after = " ".join(w for _, w in findings_of(admin.get(f"{lab.url}/LaunchCheck/{code}", timeout=60).text))
    assert "Estimated 1 min for 1.00 GBP: 60.00 GBP per hour" in after, after  # seconds each, rounded up to 1 min
    assert "the median of 3 finished participants (participants read 9 min)" in after


def test_in_the_browser_the_bonus_file_pays_what_the_results_page_shows(lab, page):
    """A participant plays DoND in chromium, asking for what the scripted model leaves; the bonus their Results page
    shows is their line in the bonus file."""
    from types import SimpleNamespace

    from tests.support.dond_pages import submit, to_bargain

    pid = "9" * 24
    keys = dict(llm_model="scripted", first_mover="human", completion_code="DONE9")
    code = create_session(lab.url, "dond_llm", 2, room="dond_study", **keys)["code"]
    query = f"participant_label={pid}&STUDY_ID=5f0000000000000000000009&SESSION_ID={'8' * 24}"
    page.goto(f"{lab.url}/room/dond_study?{query}")  # the welcome page forwards at once, as on Prolific
    page.locator("input[name=consent_given][value=True]").check()
    submit(page)
    page.wait_for_url("**/Instructions/**")
    to_bargain(page)
    person = SimpleNamespace(code=page.url.split("/p/")[1].split("/")[0])
    leftover = what_the_scripted_model_leaves(lab, code, person)
    boxes = page.locator("#dond-proposal-fields input")
    for index, count in enumerate(leftover.values()):
        boxes.nth(index).fill(str(count))
    page.locator("#dond-propose").click()
    page.locator("#dond-confirm-yes").click()
    page.wait_for_url("**/Results/**", timeout=30_000)
    shown = re.search(r"\d+\.\d\d", page.locator("#bonus").inner_text().replace(",", ".")).group(0)
    admin = logged_in(lab.url, lab.password)
    assert admin.get(f"{lab.url}/BonusFile/{code}", timeout=30).text == ""  # on Results: not finished yet
    submit(page)
    page.wait_for_url("**/Completion/**")

    lines = admin.get(f"{lab.url}/BonusFile/{code}", timeout=30).text.splitlines()
    assert lines == ([f"{pid},{shown}"] if float(shown) > 0 else [])
    assert float(shown) > 0 or not any(leftover.values())  # a deal on items the person values pays


def test_a_rate_edited_after_people_saw_their_bonus_changes_only_the_bonuses_not_yet_shown(lab):
    """Issue 35, finding 1: the Edit page's money per point, raised after one person's Results page stated their
    bonus, leaves that bonus as stated in the bonus file, the review list, Pay and review and oTree's Payments page;
    the person who reaches Results after the edit is told, and paid, the new rate."""
    code = create_session(
        lab.url, "dond_llm", 2, llm_model="scripted", completion_code="DONE2", real_world_currency_per_point=0.01
    )["code"]
    early, late = (Visitor(lab.url, code, pid) for pid in ("d" * 24, "e" * 24))
    for person in (early, late):  # both games end in a deal; the late one stays on the Bargain page for now
        person.advance_to("Bargain")
        run_async(play(person.live_url(), what_the_scripted_model_leaves(lab, code, person)))
    early.submit()
    assert early.page == "Results", early.url
    stated_early = re.search(r'<td id="bonus">\s*(.*?)\s*</td>', early.html, re.S).group(1)
    amount_early = re.search(r"\d+\.\d\d", stated_early).group(0)
    assert float(amount_early) > 0, stated_early

    admin = logged_in(lab.url, lab.password)
    form = admin.get(f"{lab.url}/SessionEditProperties/{code}", timeout=30).text
    token = re.search(r'name="csrftoken" value="([^"]+)"', form)
    edited = admin.post(
        f"{lab.url}/SessionEditProperties/{code}",
        data=dict(
            participation_fee="0",
            real_world_currency_per_point="0.02",
            label="",
            comment="",
            **({"csrftoken": token.group(1)} if token else {}),
        ),
        timeout=30,
    )
    assert edited.status_code < 400, edited.text[:500]

    paid_before = re.search(r'<p id="dond-paid">(.*?)</p>', early.html, re.S).group(1)
    early.reload()  # the page states the same amount again, and the same money per point beside it
    assert re.search(r'<td id="bonus">\s*(.*?)\s*</td>', early.html, re.S).group(1) == stated_early
    assert re.search(r'<p id="dond-paid">(.*?)</p>', early.html, re.S).group(1) == paid_before
    early.advance_to("Completion")
    late.submit()
    assert late.page == "Results", late.url
    amount_late = re.search(r"\d+\.\d\d", re.search(r'<td id="bonus">\s*(.*?)\s*</td>', late.html, re.S).group(1))
    late.advance_to("Completion")

    lines = dict(line.split(",") for line in admin.get(f"{lab.url}/BonusFile/{code}", timeout=30).text.splitlines())
    assert lines["d" * 24] == amount_early  # as stated, not doubled by the edit
    assert lines["e" * 24] == amount_late.group(0)  # stated after the edit, at the new rate
    review = {r["prolific_pid"]: r for r in csv.DictReader(io.StringIO(admin.get(f"{lab.url}/ReviewList/{code}").text))}
    assert review["d" * 24]["bonus"] == amount_early
    pay_page = admin.get(f"{lab.url}/PayAndReview/{code}", timeout=30).text
    sources = re.search(r"<ul id=\"pay-sources\">(.*?)</ul>", pay_page, re.S)
    assert sources and "2 of 2 bonuses are the amounts their pages stated" in sources.group(1), pay_page[-3000:]
    assert "(money per point then: 0.01, 0.02)" in sources.group(1), sources.group(1)
    payments = admin.get(f"{lab.url}/SessionPayments/{code}", timeout=30).text  # oTree's own page
    row = next(r for r in re.findall(r"<tr>.*?</tr>", payments, re.S) if early.code in r)
    cells = re.findall(r"<td>\s*(.*?)\s*</td>", row, re.S)
    assert any(cell.endswith(amount_early) for cell in cells), cells  # the stated bonus, not oTree's new figure
    assert not any(cell.endswith(f"{2 * float(amount_early):.2f}") for cell in cells), cells


def edit_session(admin, server, code: str, **fields) -> None:
    """Save the session's Edit page (oTree's SessionEditProperties) with ``fields``."""
    form = admin.get(f"{server.url}/SessionEditProperties/{code}", timeout=30).text
    token = re.search(r'name="csrftoken" value="([^"]+)"', form)
    data = dict(participation_fee="0", real_world_currency_per_point="0.01", label="", comment="")
    data.update({key: str(value) for key, value in fields.items()}, **({"csrftoken": token.group(1)} if token else {}))
    edited = admin.post(f"{server.url}/SessionEditProperties/{code}", data=data, timeout=30)
    assert edited.status_code < 400, edited.text[:500]


def payments_rows(admin, server, code: str) -> tuple[dict[str, list[str]], dict[str, str]]:
    """oTree's Payments page: (participant code -> the row's cells, heading -> cell of the Session and Summary
    tables)."""
    page = admin.get(f"{server.url}/SessionPayments/{code}", timeout=30).text
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", page, re.S):
        cells = [re.sub(r"\s+", " ", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        heading = re.search(r"<th>\s*(.*?)\s*</th>", row, re.S)
        if heading and cells:
            rows[heading.group(1)] = cells[0]
        elif len(cells) == 6:
            rows[cells[0]] = cells
    people = {key: value for key, value in rows.items() if isinstance(value, list)}
    return people, {key: value for key, value in rows.items() if isinstance(value, str)}


def amount(text: str) -> str:
    return re.search(r"\d+\.\d\d", text).group(0)


def test_the_payments_page_marks_the_tester_and_leaves_them_out_of_the_total_and_mean(lab):
    """Finding F6: oTree's Payments page counted a test-link participant in its rows and totals, while Pay and review
    leaves them out. The tester's row says "(test)" beside the label; the total and mean are the real people's."""
    code = create_session(lab.url, "bias_tests", 2, participation_fee=2.5)["code"]
    real = Visitor(lab.url, code, "1" * 24)
    admin = logged_in(lab.url, lab.password)
    links = admin.get(f"{lab.url}/StudyLinks/{code}", timeout=30).text
    token = re.search(r'name="csrftoken" value="([^"]+)"', links).group(1)
    test_link = admin.post(f"{lab.url}/TestParticipant/{code}", data={"csrftoken": token}, allow_redirects=False)
    tester = Person(lab.url + test_link.headers["location"], code)
    for person in (real, tester):
        person.advance_to("Instructions")

    people, summary = payments_rows(admin, lab, code)
    assert people[tester.code][1].endswith("(test)") and "(test)" not in people[real.code][1], people
    assert amount(people[tester.code][5]) == amount(people[real.code][5]) == "2.50"  # each row as it is
    assert amount(summary["Total payments"]) == "2.50", summary  # the real person's alone, not 5.00
    assert amount(summary["Mean payment"]) == "2.50", summary
    assert "1 test participant left out" in summary["Total payments"], summary


def test_an_edited_fee_leaves_what_a_consent_page_stated_on_the_payments_page_and_pay_and_review_says_it(lab):
    """Finding F9: the consent page states the participation fee ("You receive 2.50 GBP for taking part"); an edit
    of the session's fee afterwards changed what oTree's Payments page said that person gets. The fee is stored when
    the consent page states it: the Payments page pays it, and Pay and review says which fees people were shown; the
    person who reaches the consent page after the edit is told, and paid, the new fee."""
    code = create_session(lab.url, "bias_tests", 2, completion_code="DONE9", participation_fee=2.5)["code"]
    early = Visitor(lab.url, code, "6" * 24)
    assert early.page == "Consent" and "You receive 2.50 GBP for taking part" in early.html
    early.reload()
    assert "You receive 2.50 GBP for taking part" in early.html
    early.advance_to("Instructions")

    admin = logged_in(lab.url, lab.password)
    edit_session(admin, lab, code, participation_fee="1.00")
    late = Visitor(lab.url, code, "7" * 24)
    assert "You receive 1.00 GBP for taking part" in late.html
    late.advance_to("Instructions")

    people, summary = payments_rows(admin, lab, code)
    assert amount(people[early.code][5]) == "2.50", people[early.code]  # as stated, not the edited 1.00
    assert amount(people[late.code][5]) == "1.00", people[late.code]
    assert amount(summary["Total payments"]) == "3.50", summary
    assert "shown another fee" in summary["Participation fee"], summary
    pay_page = admin.get(f"{lab.url}/PayAndReview/{code}", timeout=30).text
    sources = html.unescape(re.search(r"<ul id=\"pay-sources\">(.*?)</ul>", pay_page, re.S).group(1))
    assert (
        "2 of 2 were shown a participation fee on their consent page (1.00: 1 person; 2.50: 1 person); each is owed "
        "the fee they were shown (the session's fee is now 1.00)."
    ) in sources, sources
