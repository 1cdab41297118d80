"""The quality view of social_eval's admin report on a real server: per annotator the episodes, time, episodes faster
than quality_floor_s, gold accuracy and agreement, as computed by hand from what two annotators typed."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import requests
from playwright.sync_api import expect

from backend.social import forms as social_forms
from harness.participants import Annotator
from harness.servers import create_session, export_rows, session_start_links
from tests.apps.test_pilot_overlap import episode_id, quality_cells
from tests.support.social import RUBRIC, SAMPLES

# A pilot: the same regular episode for both annotators, plus one gold episode each (attention check).
CONFIG = dict(pilot_overlap=True, episodes_per_annotator=1, attention_checks=1, quality_floor_s=600)


def form(episode, *, regular_shift: int, hit_gold: bool) -> dict:
    """Regular episode: every rating ``regular_shift`` below the top. Gold episode: the gold rating (``hit_gold``)
    or the scale end farthest from it (off by at least half the scale, beyond the tolerance of 2)."""
    values = {}
    for agent_index, agent in enumerate(episode.agents, start=1):
        for slot, dimension in enumerate(RUBRIC.dimensions, start=1):
            if episode.is_gold and dimension.key in agent.gold_ratings:
                gold = agent.gold_ratings[dimension.key]
                far = dimension.min if gold - dimension.min > dimension.max - gold else dimension.max
                rating = gold if hit_gold else far
            elif episode.is_gold:
                rating = dimension.max
            else:
                rating = dimension.max - regular_shift
            values[social_forms.rating_field(agent_index, slot)] = int(rating)
            values[social_forms.reason_field(agent_index, slot)] = "A considered reason, long enough to pass."
    return values


def rate_all(annotator: Annotator, *, shift: int, hit_gold: bool) -> None:
    annotator.to_rating_page()
    while annotator.page == "Rate":
        annotator.submit(form(SAMPLES[episode_id(annotator)], regular_shift=shift, hit_gold=hit_gold))


def test_the_quality_view_shows_what_each_annotator_did(otree_server):
    session = create_session(otree_server.url, "social_eval", 2, **CONFIG)
    careful, careless = (Annotator(link) for link in session_start_links(otree_server.url, session["code"]))
    rate_all(careful, shift=0, hit_gold=True)
    rate_all(careless, shift=2, hit_gold=False)
    rows = export_rows(otree_server.url, "social_eval", "custom_export_qualified", session_code=session["code"])
    passed = {row["participant_code"]: row["gold_passed"] for row in rows}
    assert sorted(passed.values()) == ["0", "1"]  # the gold check as the app records it

    report = requests.get(f"{otree_server.url}/AdminReport/{session['code']}", timeout=60).text
    assert "quality_floor_s = 600 s" in report
    cells = {row[0]: row for row in quality_cells(report)}
    assert set(cells) == set(passed)
    for code, row in cells.items():
        n_items, median, fast, gold, shared, distance, correlation = row[1:8]
        assert n_items == "2" and float(median) < 600 and fast == "2"  # both episodes under the 600 s floor
        assert gold == ("1 of 1 (100%)" if passed[code] == "1" else "0 of 1 (0%)")
        # the regular episode: 2 agents x 7 dimensions shared, ratings 2 apart, one the other's shift: r = 1
        assert (shared, distance, correlation) == (str(2 * len(RUBRIC.dimensions)), "2.00", "1.00")
    assert report.count('class="table-warning"') == 2  # both flagged: fast episodes (and one failed gold check)


@pytest.mark.parametrize("key, value", [("quality_floor_s", -1), ("quality_floor_s", "soon"), ("pilot_overlap", 3)])
def test_a_bad_quality_key_is_refused_at_creation(otree_server, key, value):
    response = requests.post(
        otree_server.url + "/api/sessions",
        json=dict(session_config_name="social_eval", num_participants=1, modified_session_config_fields={key: value}),
        timeout=30,
    )
    assert response.status_code >= 400 and key in response.text


@pytest.mark.browser
def test_a_researcher_sees_the_quality_table_and_downloads_one_sessions_ratings_in_chromium(otree_server, page):
    sessions = [create_session(otree_server.url, "social_eval", 1, **CONFIG) for _ in range(2)]
    for session in sessions:
        [link] = session_start_links(otree_server.url, session["code"])
        rate_all(Annotator(link), shift=0, hit_gold=True)
    code = sessions[1]["code"]
    page.goto(f"{otree_server.url}/AdminReport/{code}")
    table = page.locator("#quality-table")
    expect(table).to_be_visible()
    expect(table.locator("tbody tr")).to_have_count(1)
    expect(table.locator("tbody tr td").nth(4)).to_have_text("1 of 1 (100%)")
    with page.expect_download() as download:
        page.get_by_role("button", name="Ratings, one row per rating (long) (CSV)").click()
    assert download.value.suggested_filename == f"social_eval_ratings_long_{code}.csv"
    rows = list(csv.DictReader(Path(download.value.path()).read_text(encoding="utf-8").splitlines()))
    assert len(rows) == 2 * 2 * len(RUBRIC.dimensions)  # one regular and one gold episode, 2 agents x 7 dimensions
    assert {row["session_code"] for row in rows} == {code}
