"""A researcher in Chromium: from a session's Monitor to its study status page (top bar link) and on to the DoND
transcripts, at desktop and phone width. A hostile PID and hostile model text render as text: no script runs, no
element they name is created."""

from __future__ import annotations

import json

import pytest
import requests
import websockets
from playwright.sync_api import expect

from backend.core.llm.fake_server import Reply
from backend.dond.demo_responder import demo as demo_responder
from harness.participants import Person
from harness.servers import create_session, rest, run_async, session_start_links
from tests.support.live import payload_of

pytestmark = pytest.mark.browser

HOSTILE_PID = "<img src=x onerror=alert(1)>"
HOSTILE_TEXT = "<img src=y onerror=alert(2)><script>alert(3)</script> I want the hats."


def responder(request):
    """The demo model, whose first message is hostile markup."""
    if not any(message["role"] == "assistant" for message in request["messages"]):
        return Reply(text=HOSTILE_TEXT)
    return demo_responder(request)


async def play_to_the_end(live_url: str) -> None:
    """One message, then a proposal of nothing, each when it is the person's turn."""
    sent = 0
    async with websockets.connect(live_url, max_size=None, open_timeout=30) as socket:
        await socket.send(json.dumps({"type": "load"}))
        while True:
            payload = payload_of(json.loads(await socket.recv()))
            if payload.get("type") != "state" or payload.get("waiting_for_other"):
                continue
            if payload.get("finished"):
                return
            mine = sum(1 for m in payload["chat"] if m.get("who") == "me" or m.get("notice") == "you_proposed")
            if mine != sent:
                continue
            can_talk = payload.get("can_message") and not payload.get("must_propose") and sent < 1
            move = {"type": "message", "text": "Hello"} if can_talk else {"type": "proposal", "counts": {}}
            await socket.send(json.dumps(move))
            sent += 1


@pytest.mark.parametrize("viewport", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_researcher_reaches_status_and_transcripts_and_nothing_hostile_runs(
    otree_server, llm_server, browser, viewport
):
    llm_server.responder = responder
    session = create_session(otree_server.url, "dond_llm", 2, llm_model="demo-model", first_mover="human")
    code = session["code"]
    person = Person(session_start_links(otree_server.url, code)[0], code)
    rest(otree_server.url, "POST", f"/api/participant_vars/{person.code}", json={"vars": {"prolific_pid": HOSTILE_PID}})
    person.advance_to("Bargain")
    run_async(play_to_the_end(person.live_url()))

    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    page = context.new_page()
    page.set_default_timeout(20_000)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    try:
        page.goto(f"{otree_server.url}/SessionMonitor/{code}")
        page.locator("#nav-study-status").first.evaluate("link => link.click()")  # collapsed menu on a phone
        page.wait_for_url(f"**/StudyStatus/{code}")
        row = page.locator("#study-status tbody tr").first
        expect(row.locator(".pid")).to_have_text(HOSTILE_PID)  # the PID as text
        expect(row.locator(".status")).to_have_text("working")
        expect(row.locator(".progress-text")).to_have_text("page Bargain (dond)")
        assert page.locator("#study-status img").count() == 0
        expect(page.locator("#status-counts")).to_contain_text("not started: 1")
        assert page.locator("html").get_attribute("lang") == "en"  # _templates/otree/BaseAdminAll.html

        page.locator("#link-DondTranscripts").click()
        page.wait_for_url(f"**/DondTranscripts/{code}")
        expect(page.locator(".transcript .text").filter(has_text="I want the hats.")).to_have_text(HOSTILE_TEXT)
        assert page.locator(".transcript img, .transcript script").count() == 0
        expect(page.locator(".result .outcome").first).to_have_text("deal: the proposals fit together")
        expect(page.locator(".transcript").first).to_contain_text("secret proposal: nothing")
        page.wait_for_timeout(300)  # an injected handler would have fired by now
        assert dialogs == []
        assert requests.get(f"{otree_server.url}/StudyStatus/{code}", timeout=30).status_code == 200
    finally:
        context.close()
