"""Text from outside never runs as script where it lands: the partner's page, a reloaded page, every app's pages.

oTree writes ``var js_vars = {...}`` as JSON inside a ``<script>`` element; ``</script>`` in any string of it ended the
script and ran what followed (lab_server/outputs.py now writes it script-safe). Each test puts a payload where an
attacker or a careless file can put one (a person's chat message to a partner, a model's reply, an item type in a
researcher's DoND instances file, an episode, a reasoning log, a bias item), opens the page in Chromium, and checks
that nothing ran (``window.__pwned`` stays undefined) and that the payload is shown as the text it is.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
import requests
import websockets

from backend.core.llm.fake_server import Reply
from harness import PROJECT_ROOT
from harness.participants import Person, Visitor, people
from harness.servers import create_session, run_async, session_start_links
from tests.support.live import chat_until_the_model_replies, next_state, pair_and_start

pytestmark = pytest.mark.browser

BREAKOUT = "</script><script>window.__pwned=1</script>"
IMAGE = '<img src=x onerror="window.__pwned=2">'
PAYLOAD = f"{BREAKOUT} and {IMAGE} ok?"


def assert_nothing_ran(page) -> None:
    assert page.evaluate("typeof window.__pwned") == "undefined", "a payload ran as script"
    assert page.locator("img[src='x']").count() == 0, "a payload became markup"


def open_bargain(page, url: str) -> None:
    """Load the Bargain page (scripts in it have run once ``goto`` returns), check nothing ran, wait for its chat."""
    page.goto(url)
    assert_nothing_ran(page)
    page.wait_for_function(
        "document.querySelector('#dond-status') && document.querySelector('#dond-status').textContent.length > 0"
    )


def chat_texts(page) -> list[str]:
    return page.locator(".dond-msg .dond-text").all_inner_texts()


def test_a_chat_message_does_not_run_on_the_partners_page_live_or_after_a_reload(otree_server, page):
    players = people(otree_server.url, "dond_human", 2)
    pair_and_start(players)
    speaker, listener = players if players[0].js_vars()["view"]["can_message"] else players[::-1]
    open_bargain(page, listener.url)

    async def send():
        async with websockets.connect(speaker.live_url(), max_size=None) as socket:
            await socket.send(json.dumps({"type": "message", "text": PAYLOAD}))
            while True:  # under load a state sent before the message was handled may come first (no chat yet)
                state = await next_state(socket, [])
                if state["chat"]:
                    return state

    assert run_async(send())["chat"][-1]["text"] == PAYLOAD
    # Live: the message arrives on the open page.
    page.wait_for_function(
        "[...document.querySelectorAll('.dond-msg .dond-text')].some(e => e.textContent.includes('__pwned'))"
    )
    assert PAYLOAD in chat_texts(page)
    assert_nothing_ran(page)
    # Reloaded: the chat now comes from js_vars inside the page's script.
    open_bargain(page, listener.url)
    assert "__pwned" in page.content() and PAYLOAD in chat_texts(page)
    assert_nothing_ran(page)
    assert page.evaluate("js_vars.view.chat[js_vars.view.chat.length - 1].text") == PAYLOAD


def test_a_model_reply_does_not_run_after_a_reload(otree_server, llm_server, page):
    llm_server.script(Reply(text=PAYLOAD))
    [person] = people(otree_server.url, "dond_llm", 1, llm_model="test-model", first_mover="human")
    person.advance_to("Bargain")
    assert {"who": "other", "text": PAYLOAD} in chat_until_the_model_replies(person, "What would you like?")
    open_bargain(page, person.url)
    assert PAYLOAD in chat_texts(page)
    assert_nothing_ran(page)


def instance_file(tmp_path: Path, **changes) -> str:
    """A valid DoND instances file (one instance with item types of its own and English words), changed."""
    entry = {
        "item_types": ["lamp", "stamp", "kite"],
        "counts": [2, 2, 1],
        "values_a": [1, 2, 4],
        "values_b": [3, 1, 2],
        "words": {"en": [["lamp", "stamp", "kite"], ["lamps", "stamps", "kites"]]},
    }
    entry.update(changes)
    path = tmp_path / "instances.json"
    path.write_text(json.dumps([entry]), encoding="utf-8")
    return str(path)


def test_item_words_with_markup_are_refused_and_item_types_with_a_payload_run_nowhere(otree_server, tmp_path, page):
    # Words are shown to people and sent to the model: dond refuses markup in them when the session is created.
    words = {"en": [["lamp", BREAKOUT[:30], "kite"], ["lamps", "stamps", "kites"]]}
    refused = requests.post(
        otree_server.url + "/api/sessions",
        json=dict(
            session_config_name="dond_llm",
            num_participants=1,
            modified_session_config_fields={"instances_file": instance_file(tmp_path, words=words)},
        ),
        timeout=30,
    )
    assert refused.status_code == 400 and "words.en" in refused.text
    # An item type is only an id, but it reaches js_vars: a payload there runs nowhere.
    item_type = "</script><script>__pwned=1</script>"
    path = instance_file(tmp_path, item_types=["lamp", item_type, "kite"])
    [person] = people(otree_server.url, "dond_llm", 1, instances_file=path, first_mover="human")
    person.advance_to("Bargain")
    assert item_type in [item["id"] for item in person.js_vars()["items"]]
    open_bargain(page, person.url)
    assert_nothing_ran(page)
    assert page.evaluate("js_vars.items.map(i => i.id)") == ["lamp", item_type, "kite"]


def test_an_episode_with_a_payload_is_shown_as_text_in_social_eval(otree_server, page):
    episode = json.loads((PROJECT_ROOT / "backend/social/data/episodes/used_car.json").read_text())
    episode["id"] = "payload-episode"
    episode["scenario"] = f"A scenario with {PAYLOAD}"
    episode["turns"][0]["text"] = f"A turn with {PAYLOAD}"
    session = create_session(
        otree_server.url,
        "social_eval",
        1,
        episodes="",
        episodes_json=json.dumps([episode]),
        annotators_per_episode=1,
        episodes_per_annotator=1,
        attention_checks=0,
    )
    person = Person(session_start_links(otree_server.url, session["code"])[0], session["code"]).advance_to("Rate")
    page.goto(person.url)
    page.get_by_text("A turn with").first.wait_for()
    assert f"A turn with {PAYLOAD}" in page.inner_text("body")
    assert f"A scenario with {PAYLOAD}" in page.inner_text("body")
    assert_nothing_ran(page)


def test_a_reasoning_log_with_a_payload_is_shown_as_text_in_payoff_reasoning_eval(otree_server, page):
    name = "demo-reasoner_pd_p1_1_5_0_3_0_1001.txt"
    log = (PROJECT_ROOT / "payoff_reasoning_eval/logs" / name).read_text()
    sentence = "So B never leaves me with less than 3$, which makes it the safer option."
    assert sentence in log
    log = log.replace(sentence, f"So B is safer {PAYLOAD}", 1)
    session = create_session(
        otree_server.url, "payoff_reasoning_eval", 1, logs_upload=json.dumps({name: log}), judges_per_log=1
    )
    person = Person(session_start_links(otree_server.url, session["code"])[0], session["code"]).advance_to("Judge")
    page.goto(person.url)
    page.get_by_text("So B is safer").first.wait_for()
    assert "So B is safer " + BREAKOUT in re.sub(r"\s+", " ", page.inner_text("body"))
    assert_nothing_ran(page)


def test_an_item_file_with_a_payload_is_shown_as_text_in_bias_tests(otree_server, tmp_path, page):
    items = json.loads((PROJECT_ROOT / "backend/bias/data/bias_items.json").read_text())
    for item in items["items"]:
        item["scenario"] = f"Scenario {item['id']}: {PAYLOAD}"
    path = tmp_path / "items.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    session = create_session(otree_server.url, "bias_tests", 1, item_file=str(path))
    person = Person(session_start_links(otree_server.url, session["code"])[0], session["code"])
    person.submit(dict(consent_given="True")).submit({})
    assert person.page in ("Choice", "Arguments"), person.url
    page.goto(person.url)
    page.get_by_text("Scenario ").first.wait_for()
    assert PAYLOAD in page.inner_text("body")
    assert_nothing_ran(page)


def test_the_session_monitor_gets_escaped_text():
    """Defence in depth for oTree's Session Monitor, whose script puts each row's values into innerHTML. Labels are
    limited to letters, digits, - and _ at entry (lab_server/entry.py), so no participant can reach it with markup
    today; should any other path store one, the row it is sent in carries it escaped."""
    from lab_server.outputs import monitor_row_escaped

    row = {
        "id_in_session": 1,
        "code": "ab12cd34",
        "label": IMAGE,
        "_current_page_of_total": [2, 5],
        "_current_app_name": "dond",
        "_monitor_note_json": json.dumps(["P2", BREAKOUT]),
        "_last_page_timestamp": 1764000000,
    }
    escaped = monitor_row_escaped(row)
    assert escaped["label"] == "&lt;img src=x onerror=&quot;window.__pwned=2&quot;&gt;"
    assert json.loads(escaped["_monitor_note_json"]) == [
        "P2",
        "&lt;/script&gt;&lt;script&gt;window.__pwned=1&lt;/script&gt;",
    ]
    unchanged = ("id_in_session", "code", "_current_page_of_total", "_current_app_name", "_last_page_timestamp")
    assert all(escaped[name] == row[name] for name in unchanged)


def test_the_admin_monitor_and_payments_pages_show_labels_as_text(otree_server, page):
    """oTree's own admin pages through the escaping wrappers: a label is shown as it is on the Monitor (rows come
    over its websocket) and on Payments, and markup in a label would be printed as text there."""
    from lab_server.outputs import LabelEscaped

    session = create_session(otree_server.url, "bias_tests", 1, participant_id_format="any")
    Visitor(otree_server.url, session["code"], "pilot-07_a")
    page.goto(f"{otree_server.url}/SessionMonitor/{session['code']}")
    page.locator("td[data-field='label']", has_text="pilot-07_a").wait_for()
    assert_nothing_ran(page)
    payments = requests.get(f"{otree_server.url}/SessionPayments/{session['code']}", timeout=30)
    assert payments.status_code == 200 and "<td>pilot-07_a</td>" in payments.text

    class Participant:
        label, code = IMAGE, "ab12cd34"

        def current_page_(self):
            return "Choice"

    shown = LabelEscaped(Participant())
    assert (shown.label, shown.code, shown.current_page_()) == (html.escape(IMAGE), "ab12cd34", "Choice")
