"""A session whose material is declared in another language than its pages, as a researcher meets it on a
production-mode server: the REST API and the admin's Create-session page refuse it with a sentence naming the file and
the confirming key, create nothing, and accept it once the key confirms the mismatch; a German session with nothing but
``language`` set gets our German rubric and episodes."""

from __future__ import annotations

import shutil

import pytest

from backend.core.material_language import MISMATCH_KEY
from harness.servers import rest, session_codes

pytestmark = pytest.mark.slow
ENGLISH = "backend/social/data/episodes"


@pytest.fixture(scope="module")
def server(production_server):
    """The production-mode server the suite shares (tests/conftest.py): these tests use only their own sessions."""
    return production_server


def _post(server, **config):
    payload = dict(session_config_name="social_eval", num_participants=1, modified_session_config_fields=config)
    return rest(server.url, "POST", "/api/sessions", json=payload)


def test_a_german_session_on_english_episodes_is_refused_unless_the_key_confirms_it(server):
    before = session_codes(server.url)
    refused = _post(server, language="de", episodes=ENGLISH)
    assert refused.status_code == 400
    assert (
        "The session's pages are in German (language 'de'), but its material declares another language ("
        in refused.text
    )
    assert "the episodes in 'used_car.json': English ('en')" in refused.text
    assert f"set the session key '{MISMATCH_KEY}' to True" in refused.text
    assert session_codes(server.url) == before
    accepted = _post(server, language="de", episodes=ENGLISH, **{MISMATCH_KEY: True})
    assert accepted.status_code in (200, 201), accepted.text[:2000]
    assert _post(server, language="it").status_code in (200, 201)  # our Italian material, nothing else set
    assert len(session_codes(server.url)) == len(before) + 2


@pytest.mark.browser
def test_the_create_session_page_shows_the_key_and_the_refusal(server, page):
    before = session_codes(server.url)
    page.goto(server.url + "/login")
    page.fill("input[name=username]", "admin")
    page.fill("input[name=password]", server.admin_password)
    page.locator("form").locator("button, input[type=submit]").first.click()
    page.goto(server.url + "/create_session")
    page.select_option("select[name=session_config]", "social_eval")
    page.fill("input[name=num_participants]", "1")
    page.click("#edit-config-social_eval a")
    page.fill("input[name='social_eval.language']", "de")
    page.fill("input[name='social_eval.episodes']", ENGLISH)
    assert page.locator(f"input[name='social_eval.{MISMATCH_KEY}']").count() == 1
    page.click("#btn-create-session")
    error = page.locator("#create-session-error")
    error.wait_for(state="visible")
    assert "': English ('en')" in error.inner_text() and MISMATCH_KEY in error.inner_text()
    assert session_codes(server.url) == before


def test_a_bias_item_file_and_a_payoff_log_set_in_english_are_refused_for_german_pages(server, tmp_path):
    from backend.bias.items import DEFAULT_ITEMS_PATH
    from harness import PROJECT_ROOT

    items = tmp_path / "items.json"
    items.write_text(DEFAULT_ITEMS_PATH.read_text(encoding="utf-8"), encoding="utf-8")  # declares "en"
    logs = tmp_path / "logs"
    shutil.copytree(PROJECT_ROOT / "payoff_reasoning_eval" / "logs", logs)  # language.json declares "en"
    before = session_codes(server.url)
    for config_name, fields, named in (
        ("bias_tests", {"item_file": str(items)}, "items.json"),
        ("payoff_reasoning_eval", {"logs_folder": str(logs)}, "logs_folder"),
    ):
        payload = dict(session_config_name=config_name, num_participants=2)
        refused = rest(
            server.url,
            "POST",
            "/api/sessions",
            json={**payload, "modified_session_config_fields": {**fields, "language": "de"}},
        )
        assert refused.status_code == 400, (config_name, refused.text[:500])
        assert named in refused.text and "English ('en')" in refused.text and MISMATCH_KEY in refused.text
        assert session_codes(server.url) == before
        confirmed = {**fields, "language": "de", MISMATCH_KEY: "true"}
        accepted = rest(
            server.url, "POST", "/api/sessions", json={**payload, "modified_session_config_fields": confirmed}
        )
        assert accepted.status_code in (200, 201), (config_name, accepted.text[:500])
        before = session_codes(server.url)
