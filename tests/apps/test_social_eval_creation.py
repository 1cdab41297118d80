"""social_eval session creation as a hurried researcher meets it, on a production-mode server.

Every bad key or researcher file is refused through the REST API with a message naming the key or the file (with its
line and field), no session is left behind, and the exports of the other sessions keep working. A session copies its
rubric and episodes at creation: editing or deleting the files afterwards changes nothing for its participants.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from pathlib import Path

import pytest
import requests

from backend.social.episodes import load_episodes
from backend.social.rubrics import DEFAULT_RUBRIC_PATH
from harness import PROJECT_ROOT
from harness.participants import Annotator
from harness.servers import (
    create_session,
    rest,
    session_codes,
    session_start_links,
)

SAMPLES = {episode.id: episode for episode in load_episodes(PROJECT_ROOT / "backend" / "social" / "data" / "episodes")}
GOLD = SAMPLES["gold-concert-tickets"].as_dict()


@pytest.fixture(scope="module")
def server(production_server):
    """The production-mode server the suite shares (tests/conftest.py): these tests use only their own sessions."""
    return production_server


@pytest.fixture(scope="module")
def kept(server):
    """A session made before the refused ones, with one finished annotation, whose exports must keep working."""
    session = create_session(server.url, "social_eval", 1, episodes_per_annotator=1, attention_checks=0)
    annotator = Annotator(session_start_links(server.url, session["code"])[0]).to_rating_page()
    annotator.submit(_rating_form(DEFAULT_RUBRIC_PATH))
    assert annotator.page == "Completion"
    return session["code"]


def _csv(response: requests.Response) -> list[dict]:
    assert response.status_code == 200, response.text[:2000]
    return list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))


def _rubric(tmp_path, *, name="rubric.json", **changes) -> str:
    data = json.loads(DEFAULT_RUBRIC_PATH.read_text(encoding="utf-8"))
    data["dimensions"][0].update(changes)
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def _rating_form(rubric_path) -> dict:
    data = json.loads(Path(rubric_path).read_text(encoding="utf-8"))
    form = {}
    for agent in (1, 2):
        for slot, dimension in enumerate(data["dimensions"], start=1):
            form[f"rating_{agent}_{slot}"] = dimension["max"]
            form[f"reason_{agent}_{slot}"] = "A reason long enough for the form."
    return form


def _episode_file(tmp_path, text: str, name: str = "episodes.json") -> str:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return str(path)


CASES = {
    "malformed episodes_json": (
        lambda tmp: dict(episodes_json='{"id": "x1",\n "scenario": }'),
        "session config episodes_json is not valid JSON: line 2, column 14: Expecting value.",
    ),
    "episodes_json without agents": (
        lambda tmp: dict(episodes_json='{"id": "x1", "scenario": "s", "agents": []}'),
        "session config episodes_json: agents: must be a list of exactly two agents",
    ),
    "gold rating off the scale": (
        lambda tmp: dict(
            episodes_json=json.dumps(
                {**GOLD, "id": "g9", "agents": [{**GOLD["agents"][0], "gold_ratings": {"goal": 40}}, GOLD["agents"][1]]}
            )
        ),
        "session config episodes_json: agents[0].gold_ratings.goal: must lie within 0..10, got 40.",
    ),
    "language fr": (lambda tmp: dict(language="fr"), "The session key 'language' must be one of en, de, it, not 'fr'."),
    "missing rubric_file": (
        lambda tmp: dict(rubric_file="nowhere/rubric.json"),
        "The rubric_file 'nowhere/rubric.json' was not found",
    ),
    "rubric max 1e300": (
        lambda tmp: dict(rubric_file=_rubric(tmp, max=1e300)),
        "rubric.json': dimensions[0].max: must be a whole number from -1000 to 1000, got 10000000... (301 digits).",
    ),
    "rubric max 200000": (
        lambda tmp: dict(rubric_file=_rubric(tmp, max=200000)),
        "rubric.json': dimensions[0].max: must be a whole number from -1000 to 1000, got 200000.",
    ),
    "rubric of 22 points": (
        lambda tmp: dict(rubric_file=_rubric(tmp, min=-11, max=10)),
        "dimensions[0].max: the scale -11..10 has 22 points, but a rating scale may have at most 21",
    ),
    "rubric of 11 dimensions": (
        lambda tmp: dict(rubric_file=_eleven_dimensions(tmp)),
        "eleven.json': dimensions: the form has room for 10 dimensions, the rubric has 11.",
    ),
    "an episode id twice": (
        lambda tmp: dict(episodes_json=json.dumps(SAMPLES["sample-used-car"].as_dict())),
        "The episode ids ['sample-used-car'] occur twice (in 'episodes' and 'episodes_json').",
    ),
    "missing episodes folder": (
        lambda tmp: dict(episodes="backend/data/nowhere"),
        "The session key 'episodes' names a file that cannot be used: ",
    ),
    "episodes file with a JSON error": (
        lambda tmp: dict(episodes=_episode_file(tmp, '[\n  {"id": "a",}\n]')),
        "The session key 'episodes' names a file that cannot be used: episodes.json is not valid JSON: line 2, "
        "column 14: Expecting property name enclosed in double quotes.",
    ),
    "annotators_per_episode 0": (
        lambda tmp: dict(annotators_per_episode=0),
        "The session key 'annotators_per_episode' must be a whole number from 1 to 100, not 0.",
    ),
    "annotators_per_episode text": (
        lambda tmp: dict(annotators_per_episode="two"),
        "The session key 'annotators_per_episode' must be a whole number from 1 to 100, not 'two'.",
    ),
    "episodes_per_annotator 20": (
        lambda tmp: dict(episodes_per_annotator=20),
        "The session key 'episodes_per_annotator' must be a whole number from 1 to 15, not 20.",
    ),
    "attention_checks beyond the gold episodes": (
        lambda tmp: dict(attention_checks=3),
        "The session key 'attention_checks' (3) exceeds the 2 gold episodes",
    ),
    "negative gold_tolerance": (
        lambda tmp: dict(gold_tolerance=-1),
        "The session key 'gold_tolerance' must be a number from 0 to 2000, not -1.",
    ),
    "reservation_timeout_s 0": (
        lambda tmp: dict(reservation_timeout_s=0),
        "The session key 'reservation_timeout_s' must be a number from 1 to 604800, not 0.",
    ),
    "min_reasoning_chars text": (
        lambda tmp: dict(min_reasoning_chars="twenty"),
        "The session key 'min_reasoning_chars' must be a whole number from 0 to 2000, not 'twenty'.",
    ),
    "qualification_mode maybe": (
        lambda tmp: dict(qualification_mode="maybe"),
        "The session key 'qualification_mode' must be true or false, not 'maybe'.",
    ),
    "comprehension without questions": (
        lambda tmp: dict(comprehension_check=True, rubric_file=_plain(tmp)),
        "The session key 'comprehension_check' needs 1 to 6 comprehension questions in the rubric, which has 0.",
    ),
}


def _eleven_dimensions(tmp_path) -> str:
    data = json.loads(DEFAULT_RUBRIC_PATH.read_text(encoding="utf-8"))
    data.pop("worked_example")
    data["dimensions"] = [dict(data["dimensions"][0], key=f"dimension_{n}") for n in range(11)]
    path = tmp_path / "eleven.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def _plain(tmp_path) -> str:
    data = json.loads(DEFAULT_RUBRIC_PATH.read_text(encoding="utf-8"))
    data.pop("comprehension")
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_key_or_file_is_refused_by_name_and_leaves_nothing(server, kept, tmp_path, case):
    make_fields, message = CASES[case]
    before = session_codes(server.url)

    response = rest(
        server.url,
        "POST",
        "/api/sessions",
        json=dict(
            session_config_name="social_eval", num_participants=2, modified_session_config_fields=make_fields(tmp_path)
        ),
    )

    assert response.status_code == 400, response.text[:2000]
    assert "The session 'social_eval' was not created." in response.text
    assert message in response.text
    assert "Traceback" not in response.text
    assert session_codes(server.url) == before
    # The shared server may hold other modules' sessions: the refused one left no row, the kept one is whole.
    wide = _csv(rest(server.url, "GET", "/api/export_wide"))
    assert kept in {row["session.code"] for row in wide} <= set(before)
    ratings = _csv(
        rest(
            server.url,
            "GET",
            "/api/export_app_custom",
            params=dict(app="social_eval", function_name="custom_export_ratings_long"),
        )
    )
    assert {row["session_code"] for row in ratings} <= set(before)
    assert sum(row["session_code"] == kept for row in ratings) == 14


def test_a_non_utf8_rubric_names_the_byte_and_line(server, tmp_path):
    path = tmp_path / "latin.json"
    path.write_bytes(b'{\n "name": "Fran\xe7ais"}')
    response = rest(
        server.url,
        "POST",
        "/api/sessions",
        json=dict(
            session_config_name="social_eval",
            num_participants=1,
            modified_session_config_fields={"rubric_file": str(path)},
        ),
    )
    assert response.status_code == 400
    assert (
        f"The rubric_file '{path}' is not UTF-8 text: byte 0xe7 at line 2, position 17 cannot be read" in response.text
    )


def test_every_problem_is_listed_at_once(server):
    response = rest(
        server.url,
        "POST",
        "/api/sessions",
        json=dict(
            session_config_name="social_eval",
            num_participants=1,
            modified_session_config_fields=dict(annotators_per_episode=0, reservation_timeout_s="soon"),
        ),
    )
    assert response.status_code == 400
    assert "'annotators_per_episode'" in response.text and "'reservation_timeout_s'" in response.text


def test_a_session_keeps_its_rubric_and_episodes_when_the_files_change(server, tmp_path):
    rubric_path = _rubric(tmp_path, label="Credibility as first written", min=0, max=20)
    episode = {**SAMPLES["sample-used-car"].as_dict(), "id": "own-1", "scenario": "As first written: a bike sale."}
    episodes_path = _episode_file(tmp_path, json.dumps([episode]))
    session = create_session(
        server.url,
        "social_eval",
        2,
        rubric_file=rubric_path,
        episodes=episodes_path,
        annotators_per_episode=2,
        episodes_per_annotator=1,
        attention_checks=0,
    )
    first, second = session_start_links(server.url, session["code"])
    annotator = Annotator(first).to_rating_page()
    assert "As first written: a bike sale." in annotator.html

    # The researcher edits both files, then moves them away, while the study runs.
    edited = json.loads(Path(rubric_path).read_text(encoding="utf-8"))
    edited["dimensions"][0].update(label="Edited label", max=5)
    Path(rubric_path).write_text(json.dumps(edited), encoding="utf-8")
    Path(episodes_path).write_text(json.dumps([{**episode, "scenario": "Edited scenario."}]), encoding="utf-8")
    os.rename(rubric_path, rubric_path + ".moved")
    os.rename(episodes_path, episodes_path + ".moved")

    later = Annotator(second).to_rating_page()
    assert "As first written: a bike sale." in later.html and "Edited scenario." not in later.html
    assert "Credibility as first written" in later.html and "Edited label" not in later.html
    assert len(re.findall(r'name="rating_1_1"', later.html)) == 21  # the 0..20 scale as created
    later.submit(_rating_form(rubric_path + ".moved") | {"rating_1_1": 20, "rating_2_1": 20})
    assert later.page == "Completion"
