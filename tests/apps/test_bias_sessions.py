"""bias_tests sessions as a hurried researcher creates them and as a researcher reads their export.

Bad item files and keys are refused through the REST API before a session exists, with messages that name the key,
the file, the item and the field; nothing is left behind and other sessions' exports keep working. A file saved with
a Windows byte-order mark is accepted. The session keeps its own copy of the item file: editing or removing the file
afterwards changes nothing for its participants. Export rows carry participant code, Prolific PID, study id, session
code and the answer's ISO-8601 UTC time, and a neutralised cell reads back exactly.
"""

from __future__ import annotations

import copy
import csv
import datetime
import io
import json
import re
from urllib.parse import quote

import pytest
import requests

from backend.bias import report as bias_report
from backend.bias.items import DEFAULT_ITEMS_PATH
from bias_tests.exports import PERSON_COLUMNS
from harness.servers import create_session, export_rows, rest, session_codes, session_start_links

SAMPLE = json.loads(DEFAULT_ITEMS_PATH.read_text(encoding="utf-8"))
PID = "6a1b2c3d4e5f60718293a4b5"  # the shape of a Prolific ID: 24 hex digits


def _index(item_id: str) -> int:
    return next(index for index, item in enumerate(SAMPLE["items"]) if item["id"] == item_id)


def _items(change=None) -> dict:
    data = copy.deepcopy(SAMPLE)
    if change:
        change(data)
    return data


def _small(scenario: str, *, option_format: str = "{value} weeks") -> dict:
    """Two halo items and an attention check: 5 test versions, the first item's scenario and format as given."""

    def change(data):
        data["name"] = "small_set"
        data["items"] = [item for item in data["items"] if item["bias"] in ("halo", "attention_check")]
        data["items"][0].update(scenario=scenario, option_format=option_format)

    return _items(change)


def _play(server, session_code: str, *, cookies: dict | None = None, label: str | None = None) -> list[str]:
    """One participant through the whole session with plain requests; returns the HTML of every test page."""
    link = session_start_links(server.url, session_code)[0]
    pages = []
    with requests.Session() as browser:
        for name, value in (cookies or {}).items():
            browser.cookies.set(name, value)
        page = browser.get(link, params={"participant_label": label} if label else None, timeout=30)
        assert page.status_code == 200, page.text[:2000]
        page = browser.post(page.url, data={"consent_given": "True"}, timeout=30)
        page = browser.post(page.url, data={}, timeout=30)  # instructions
        while "Thank you!" not in page.text:
            assert page.status_code == 200, page.text[-3000:]
            assert len(pages) < 50
            pages.append(page.text)
            offered = re.findall(r'class="form-check-input bias-argument"[^>]*value="([^"]+)"', page.text)
            form = {"selected_arguments": ",".join(offered[:2])} if offered else {"choice": "1", "confidence": "70"}
            page = browser.post(page.url, data=form, timeout=30)
    return pages


# --- refused before a session exists ------------------------------------------------------------------------------
def _bad_file_bytes(data: dict) -> bytes:
    return json.dumps(data).encode("utf-8")


BAD_CREATIONS = {
    "missing item file": (
        None,
        {},
        ["(session key 'item_file') was not found", "nowhere/items.json"],
    ),
    "whole-number format, fractional option": (
        _bad_file_bytes(
            _items(lambda d: d["items"][0].update(options=[150, 250.5, 350], option_format="{value:d} loaves"))
        ),
        {},
        [
            "items.json: items[0] (anchoring_bakery).option_format: '{value:d} loaves' cannot show the option 250.5",
            "Write a format that suits every option",
        ],
    ),
    "whole-number money format": (
        _bad_file_bytes(_items(lambda d: d["items"][_index("loss_app_promotion")].update(money_format="{amount:d} €"))),
        {},
        [
            f"items.json: items[{_index('loss_app_promotion')}] (loss_app_promotion).money_format: '{{amount:d}} €' "
            "cannot show the gain 12000.0 (lambda x amount)",
            "Write {amount} where the sum goes",
        ],
    ),
    "not UTF-8": (
        _bad_file_bytes(SAMPLE).replace(b"bakery chain", b"boulangerie \xe0 chain"),
        {},
        ["(session key 'item_file') is not UTF-8 text: byte 0xe0 at line 1, position"],
    ),
    "not JSON": (
        b'{"name": "x",\n  "items": [\n    {"id": "a",}\n  ]\n}',
        {},
        ["(session key 'item_file') is not valid JSON: line 3, column 16"],
    ),
    "control character": (
        _bad_file_bytes(_items(lambda d: d["items"][0].update(question="How many?\u0007"))),
        {},
        ["items.json: items[0] (anchoring_bakery).question: holds the control character U+0007"],
    ),
    "bad keys": (
        _bad_file_bytes(SAMPLE),
        {"ask_confidence": "perhaps", "order_seed": "first"},
        ["The session key 'ask_confidence' must be true or false", "The session key 'order_seed' must be a whole"],
    ),
}


@pytest.fixture(scope="module")
def kept_session(otree_server):
    """A session that must stay whole and exportable whatever another creation does."""
    session = create_session(otree_server.url, "bias_tests", 1, order_seed=3)
    _play(otree_server, session["code"])
    return session["code"]


@pytest.mark.parametrize("case", BAD_CREATIONS.values(), ids=BAD_CREATIONS.keys())
def test_a_bad_item_file_or_key_is_refused_by_name_and_leaves_nothing(otree_server, kept_session, tmp_path, case):
    content, keys, named = case
    path = tmp_path / "nowhere" / "items.json"
    if content is not None:
        path = tmp_path / "items.json"
        path.write_bytes(content)
    before = session_codes(otree_server.url)

    payload = dict(session_config_name="bias_tests", num_participants=2)
    payload["modified_session_config_fields"] = {"item_file": str(path), **keys}
    response = rest(otree_server.url, "POST", "/api/sessions", json=payload)

    assert response.status_code == 400, response.text[:2000]
    assert "The session 'bias_tests' was not created." in response.text
    for fragment in named:
        assert fragment in response.text, response.text
    assert session_codes(otree_server.url) == before
    wide = rest(otree_server.url, "GET", "/api/export_wide")
    assert wide.status_code == 200, wide.text[:2000]
    assert kept_session in wide.text
    rows = export_rows(otree_server.url, "bias_tests", "custom_export", session_code=kept_session)
    assert len(rows) == 16


# --- the session's own copy of the file ---------------------------------------------------------------------------
def test_a_bom_file_is_accepted_and_later_edits_or_removal_change_nothing(otree_server, tmp_path):
    path = tmp_path / "items.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(_small("The original scenario.")).encode())  # Notepad's "UTF-8"
    first = create_session(otree_server.url, "bias_tests", 1, item_file=str(path))["code"]

    # The researcher edits the file mid-study: a new session uses the edit, the running one does not.
    path.write_text(json.dumps(_small("The edited scenario.")), encoding="utf-8")
    second = create_session(otree_server.url, "bias_tests", 1, item_file=str(path))["code"]
    path.unlink()  # ... and then moves it away

    first_pages, second_pages = _play(otree_server, first), _play(otree_server, second)
    assert len(first_pages) == len(second_pages) == 5
    assert sum("The original scenario." in page for page in first_pages) == 2  # the item's control and treatment
    assert not any("The edited scenario." in page for page in first_pages)
    assert sum("The edited scenario." in page for page in second_pages) == 2
    assert len(export_rows(otree_server.url, "bias_tests", "custom_export", session_code=first)) == 5


# --- identifiers in the export ------------------------------------------------------------------------------------
def test_export_rows_carry_the_identifiers_a_researcher_joins_on(otree_server, tmp_path):
    path = tmp_path / "items.json"
    path.write_text(json.dumps(_small("A scenario.", option_format="={value} weeks")), encoding="utf-8")
    session = create_session(otree_server.url, "bias_tests", 1, item_file=str(path))["code"]
    # What the room's welcome page stores for the first page (study_flow.parse_study_ids_cookie).
    ids = quote(json.dumps({"pid": PID, "study_id": "STUDY123", "session_id": "SESS456"}))
    started = datetime.datetime.now(datetime.UTC)
    _play(otree_server, session, cookies={"study_ids": ids}, label=PID)
    finished = datetime.datetime.now(datetime.UTC)

    response = rest(
        otree_server.url,
        "GET",
        "/api/export_app_custom",
        params={"app": "bias_tests", "function_name": "custom_export", "session_code": session},
    )
    response.raise_for_status()
    text = response.content.decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert text.splitlines()[0] == ",".join(PERSON_COLUMNS)  # without the runner's model-only columns
    assert len(rows) == 5
    participant_code = rows[0]["participant_code"]
    assert re.fullmatch(r"[a-z0-9]{8}", participant_code)
    for row in rows:
        assert (row["participant_code"], row["respondent_id"]) == (participant_code, participant_code)
        assert (row["prolific_pid"], row["study_id"], row["session_code"]) == (PID, "STUDY123", session)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", row["answered_at"]), row["answered_at"]
        answered = datetime.datetime.fromisoformat(row["answered_at"].replace("Z", "+00:00"))
        assert started - datetime.timedelta(seconds=1) <= answered <= finished + datetime.timedelta(seconds=1)
    times = [row["answered_at"] for row in sorted(rows, key=lambda row: int(row["position"]))]
    assert times == sorted(times)

    # An option shown as "=4 weeks" is a formula to a spreadsheet: the cell is neutralised and the report reads it
    # back exactly.
    labels = {row["answer_label"] for row in rows if row["bias"] == "halo" and row["item_id"] == "halo_linen_supplier"}
    assert labels == {"'=4 weeks"}
    saved = tmp_path / "export.csv"
    saved.write_text(text, encoding="utf-8")
    read = bias_report.read_rows([saved])
    assert set(read.loc[read["item_id"] == "halo_linen_supplier", "answer_label"]) == {"=4 weeks"}
    assert set(read["prolific_pid"]) == {PID}
