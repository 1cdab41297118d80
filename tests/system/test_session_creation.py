"""Session creation is all or nothing (lab_server/creation.py), checked as a hurried researcher meets it.

A refused creation must leave no session, participant or row behind, and every export of every other session must keep
working. Two ways a creation fails: a key the checks refuse before anything exists, and an error inside an app's
``creating_session`` after oTree has already committed the session and its participants. The second is staged with a
throwaway app in a scratch copy of the project, because every real app now refuses its bad keys before that point.
"""

from __future__ import annotations

import csv
import io
import shutil

import pytest
import requests

from harness.servers import (
    app_source,
    base_env,
    create_session,
    deployment_mode,
    own_database,
    project_with_app,
    rest,
    session_codes,
    start_server,
)

pytestmark = pytest.mark.slow

BROKEN_APP = app_source(
    "broken_setup",
    doc="A throwaway app whose creating_session fails after oTree has committed the session and its participants.",
    preamble="\nimport lab_server\n\nlab_server.install()\n",
    body="""\
def creating_session(subsession: Subsession):
    for player in subsession.get_players():
        player.participant.vars["touched"] = True
    raise RuntimeError("a bug in creating_session")


class Only(Page):
    pass


page_sequence = [Only]
""",
)


@pytest.fixture(scope="module")
def server():
    folder = project_with_app("broken_setup", {"__init__.py": BROKEN_APP}, prefix="otree-creation-")
    env = deployment_mode(base_env())
    with own_database(env) as env:
        running = start_server(kind="prodserver", env=env, folder=folder)
        running.admin_password = env["OTREE_ADMIN_PASSWORD"]
        try:
            yield running
        finally:
            running.stop()
            shutil.rmtree(folder, ignore_errors=True)


def _wide_export(server) -> list[dict]:
    response = rest(server.url, "GET", "/api/export_wide")
    assert response.status_code == 200, response.text[:2000]
    return list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))


def _post_session(server, config_name: str, participants: int, **config) -> requests.Response:
    payload = dict(session_config_name=config_name, num_participants=participants)
    if config:
        payload["modified_session_config_fields"] = config
    return rest(server.url, "POST", "/api/sessions", json=payload)


def test_a_failing_creating_session_leaves_nothing_and_other_exports_keep_working(server):
    kept = create_session(server.url, "bias_tests", 2)["code"]
    before = session_codes(server.url)

    response = _post_session(server, "broken_setup", 3)

    assert response.status_code >= 400
    assert session_codes(server.url) == before  # no orphan session with participants and no players
    rows = _wide_export(server)
    assert {row["session.code"] for row in rows} == {kept}
    assert len(rows) == 2
    app_export = rest(server.url, "GET", "/api/export_app", params={"app": "bias_tests"})
    assert app_export.status_code == 200, app_export.text[:2000]


@pytest.mark.parametrize(
    ("config_name", "fields", "named"),
    [
        ("dond_llm", {"language": "fr"}, "'language'"),
        ("bias_tests", {"completion_code": "=HYPERLINK(1)"}, "'completion_code'"),
        ("social_eval", {"llm_temperature": "warm"}, "'llm_temperature'"),
        ("social_eval", {"episodes_json": "[" * 100_000}, "episodes_json"),  # RecursionError in the JSON parser
        ("bias_tests", {"participation_fee": []}, "'participation_fee'"),  # oTree's own clean() failed bare on it
        ("dond_llm", {"real_world_currency_per_point": 1e308}, "'real_world_currency_per_point'"),
    ],
)
def test_a_refused_key_is_named_and_leaves_nothing(server, config_name, fields, named):
    before = session_codes(server.url)

    response = _post_session(server, config_name, 2, **fields)

    assert response.status_code == 400
    assert "was not created" in response.text and named in response.text
    assert session_codes(server.url) == before
    _wide_export(server)


@pytest.mark.browser
def test_the_admin_page_names_the_refused_key_and_creates_nothing(server, page):
    before = session_codes(server.url)
    page.goto(server.url + "/login")
    page.fill("input[name=username]", "admin")
    page.fill("input[name=password]", server.admin_password)
    page.locator("form").locator("button, input[type=submit]").first.click()
    page.goto(server.url + "/create_session")
    page.select_option("select[name=session_config]", "dond_llm")
    page.fill("input[name=num_participants]", "2")
    page.click("#edit-config-dond_llm a")
    page.fill("input[name='dond_llm.language']", "<img src=x onerror=window.__pwned=1>")
    page.click("#btn-create-session")

    error = page.locator("#create-session-error")
    error.wait_for(state="visible")
    assert "'language'" in error.inner_text()
    assert "was not created" in error.inner_text()
    assert "<img src=x onerror=window.__pwned=1>" in error.inner_text()  # shown as text, not run
    assert page.evaluate("window.__pwned") is None
    assert session_codes(server.url) == before


def test_a_room_refuses_a_config_not_tied_to_it_and_names_the_right_room(server):
    before = session_codes(server.url)

    response = rest(
        server.url,
        "POST",
        "/api/sessions",
        json=dict(session_config_name="bias_tests", num_participants=2, room_name="dond_study"),
    )

    assert response.status_code == 400
    assert "runs only the configs dond_llm, dond_llm_notes, dond_human, not 'bias_tests'" in response.text
    assert "create it in the room bias_study" in response.text
    assert session_codes(server.url) == before
    assert create_session(server.url, "bias_tests", 2, room="bias_study")["code"] not in before


@pytest.mark.browser
def test_the_create_form_describes_each_config_with_the_allowed_values(server, page):
    page.goto(server.url + "/login")
    page.fill("input[name=username]", "admin")
    page.fill("input[name=password]", server.admin_password)
    page.locator("form").locator("button, input[type=submit]").first.click()
    page.goto(server.url + "/create_session")
    page.select_option("select[name=session_config]", "dond_human")
    shown = page.locator("#config-dond_human").inner_text()
    assert "Two participants, paired by arrival" in shown
    assert "mode: semi, coop, comp" in shown and "language: en, de, it" in shown
    page.click("#edit-config-dond_human a")
    fields = page.locator("#edit-config-table-dond_human").inner_text()
    assert "language" in fields and "llm_" not in fields  # no model keys where no model plays
