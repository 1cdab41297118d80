"""Pilot mode on a real server (session key ``pilot_overlap``): two annotators of social_eval rate the same episodes,
two judges of payoff_reasoning_eval judge the same logs, and the admin reports show their agreement."""

from __future__ import annotations

import html
import re

import requests

from backend.social import forms as social_forms
from harness.participants import Annotator, Person
from harness.servers import create_session, export_rows, session_start_links
from tests.support.social import RUBRIC, SAMPLES

PILOT = dict(pilot_overlap=True, episodes_per_annotator=2, attention_checks=0, annotators_per_episode=1)


def rating_form(shift: int = 0) -> dict:
    """Every rating at the dimension's top, ``shift`` below it."""
    values = {}
    for agent in social_forms.AGENTS:
        for slot, dimension in enumerate(RUBRIC.dimensions, start=1):
            values[social_forms.rating_field(agent, slot)] = dimension.max - shift
            values[social_forms.reason_field(agent, slot)] = "A considered reason, long enough to pass."
    return values


def episode_id(annotator: Annotator) -> str:
    """The episode on the annotator's Rate page, found by its scenario."""
    scenario = html.unescape(re.search(r'<p id="scenario"[^>]*>(.*?)</p>', annotator.html, re.S).group(1))
    (found,) = [e.id for e in SAMPLES.values() if e.scenario == scenario]
    return found


def rate_all(annotator: Annotator, shift: int) -> list[str]:
    """Rate every episode the annotator is given; the episode ids in order."""
    seen = []
    annotator.to_rating_page()
    while annotator.page == "Rate":
        seen.append(episode_id(annotator))
        annotator.submit(rating_form(shift))
    return seen


def quality_cells(report: str) -> list[list[str]]:
    table = re.search(r'<table class="table table-sm" id="quality-table">(.*?)</table>', report, re.S).group(1)
    body = table.split("<tbody>")[1]
    return [re.findall(r"<td>(.*?)</td>", row, re.S) for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]


def test_two_annotators_of_a_social_pilot_rate_the_same_episodes_and_agree_as_computed(otree_server):
    session = create_session(otree_server.url, "social_eval", 2, **PILOT)
    first, second = (Annotator(link) for link in session_start_links(otree_server.url, session["code"]))
    # annotators_per_episode = 1 would give the second person other episodes; the pilot gives the same two
    seen_first = rate_all(first, shift=0)
    seen_second = rate_all(second, shift=1)
    assert len(seen_first) == 2 and sorted(seen_first) == sorted(seen_second)
    rows = export_rows(otree_server.url, "social_eval", "custom_export_ratings_long", session_code=session["code"])
    by_person = {}
    for row in rows:
        by_person.setdefault(row["annotator"], set()).add(row["episode_id"])
    assert len(by_person) == 2 and len(set(map(frozenset, by_person.values()))) == 1

    report = requests.get(f"{otree_server.url}/AdminReport/{session['code']}", timeout=60).text
    assert 'id="pilot-note"' in report and "the same 2 regular" in report
    cells = quality_cells(report)
    assert len(cells) == 2
    for row in cells:
        # 2 episodes, 2 items each person; 2 episodes x 2 agents x 7 dimensions shared; every rating one apart;
        # the second person's ratings are the first's minus one, so r = 1
        assert row[1] == "2" and row[5] == str(2 * 2 * len(RUBRIC.dimensions)), row
        assert (row[6], row[7]) == ("1.00", "1.00"), row


def test_two_judges_of_a_payoff_pilot_judge_the_same_logs(otree_server):
    session = create_session(otree_server.url, "payoff_reasoning_eval", 2, pilot_overlap=True, logs_per_judge=2)
    judges = [Person(link, session["code"]) for link in session_start_links(otree_server.url, session["code"])]
    for verdict, judge in zip((1, 0), judges, strict=True):
        judge.submit(dict(consent_given="True"))
        judge.advance_to("Judge")
        while judge.page == "Judge":
            fields = dict(orig_cor=verdict, fin_cor=verdict, err_type="", marked_sentences="", remarks="")
            if verdict == 0:
                fields.update(err_type="rga", marked_sentences="f0#l1")
            judge.submit(fields)
    rows = export_rows(
        otree_server.url, "payoff_reasoning_eval", "custom_export_assignments", session_code=session["code"]
    )
    done = {}
    for row in rows:
        if row["status"] == "done":
            done.setdefault(row["participant_code"], set()).add(row["file"])
    assert len(done) == 2 and len(set(map(frozenset, done.values()))) == 1 and len(next(iter(done.values()))) == 2
    report = requests.get(f"{otree_server.url}/AdminReport/{session['code']}", timeout=60).text
    cells = quality_cells(report)
    assert len(cells) == 2
    for row in cells:
        assert row[1] == "2" and row[4] == "–"  # no gold logs in this app
        assert row[6] == "1.00"  # one said correct, the other incorrect, on every shared verdict
