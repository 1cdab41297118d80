"""A person plays a whole DoND game in Chromium against the test-server LLM: chat, streamed reply, proposal confirmed
in the page, results page with both proposals and the chart. Tests write nothing into docs/ (screenshots come from
an explicit script)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from backend.core.llm.fake_server import Reply
from harness.servers import create_session, export_rows, next_page, session_start_links

pytestmark = pytest.mark.browser

LLM_CHAT = "Hello! The apples matter little to me, but I would really like the other items. What about you?"


def responder(request):
    messages = request["messages"]
    if len(messages) > 1 and "secret proposal" in messages[-1]["content"]:
        return Reply(text="Deal. [Proposal:]", chunk_delay_s=0.05)
    return Reply(text=LLM_CHAT, chunk_delay_s=0.12)


def test_person_plays_a_full_game_against_the_streaming_llm(otree_server, llm_server, page):
    llm_server.responder = responder
    session = create_session(otree_server.url, "dond_llm", 1, llm_model="test-model", first_mover="human")
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(session_start_links(otree_server.url, session["code"])[0])
    page.get_by_label("I have read the information above and agree to take part.").check()
    next_page(page)
    # count() does not wait for the next page; expect() does (a busy CI machine read the consent page).
    expect(page.locator("#dond-items tbody tr").nth(2)).to_be_attached()
    next_page(page, "Continue")
    page.wait_for_url("**/Bargain/**")

    typed = "I'd like <b>all</b> the apples <script>window.__injected = 1</script>"
    page.locator("#dond-input").fill(typed)
    page.locator("#dond-input").press("Enter")
    mine = page.locator(".dond-msg.me .dond-text").first
    mine.wait_for()
    assert mine.inner_text() == typed  # shown as typed, not as HTML
    assert page.evaluate("window.__injected") is None

    # The reply streams: the typing bubble grows before the stored message replaces it.
    # Each read is one script run: the bubble can be replaced between a count() and an inner_text() (it was, on CI).
    bubble = "document.querySelector('.dond-msg.typing .dond-text')?.textContent || null"
    first = page.wait_for_function(bubble).json_value()
    page.wait_for_timeout(400)
    later = page.evaluate(bubble) or LLM_CHAT  # the stored message replaced the bubble: the whole reply
    assert len(first) < len(later) <= len(LLM_CHAT) and LLM_CHAT.startswith(later)
    page.locator(".dond-msg.other:not(.typing) .dond-text").first.wait_for()
    assert page.locator(".dond-msg.other:not(.typing) .dond-text").first.inner_text() == LLM_CHAT

    boxes = page.locator("#dond-proposal-fields input")
    boxes.first.fill("1")
    page.locator("#dond-propose").click()
    assert "Submit this secret proposal?" in page.locator("#dond-confirm-text").inner_text()
    page.locator("#dond-confirm-yes").click()
    page.wait_for_url("**/Results/**", timeout=30_000)
    assert dialogs == []  # confirmed in the page, never by a browser dialog
    assert "Deal!" in page.locator("#dond-outcome").inner_text()
    assert page.locator("#dond-proposals tbody tr").first.locator("td").nth(2).inner_text() == "1"
    assert page.locator("#dond-paid").inner_text().startswith("Bonus rule applied: the deal is scored by your goal")
    assert page.locator("#main-score").inner_text().endswith("/ 100")
    page.wait_for_function("window.dondChart && window.dondChart.data.datasets.length === 3")
    points = page.evaluate("window.dondChart.data.datasets[0].data.length")
    assert points >= 3

    games = export_rows(otree_server.url, "dond", "custom_export_dond_games", session_code=session["code"])
    assert len(games) == 1 and games[0]["outcome"] == "success" and games[0]["model"] == "test-model"
    events = export_rows(otree_server.url, "dond", "custom_export_dond_events", session_code=session["code"])
    kinds = [event["kind"] for event in events]
    assert kinds.count("llm_call") == 2 and kinds.count("proposal") == 2
    assert [event["text"] for event in events if event["kind"] == "message"][0] == typed
    calls = [event for event in events if event["kind"] == "llm_call"]
    assert all(float(call["latency_s"]) > 0 and call["model"] == "test-model" for call in calls)


def test_a_refused_message_goes_back_into_the_input_with_the_reason(otree_server, llm_server, page):
    session = create_session(
        otree_server.url, "dond_llm", 1, llm_model="test-model", first_mover="human", live_messages_per_minute=1
    )
    page.goto(session_start_links(otree_server.url, session["code"])[0])
    page.get_by_label("I have read the information above and agree to take part.").check()
    next_page(page)
    next_page(page, "Continue")
    page.wait_for_url("**/Bargain/**")
    page.wait_for_function("document.querySelector('#dond-status').textContent.length > 0")  # the page's load
    # The page's two sockets, its load and these pings spend the least burst of a session's budget (5).
    page.evaluate("for (let n = 0; n < 3; n++) { liveSend({type: 'ping'}); }")
    typed = "Could I have the two apples?"
    page.locator("#dond-input").fill(typed)
    page.locator("#dond-input").press("Enter")  # over the budget of one a minute: refused
    page.wait_for_function("document.querySelector('#dond-error').textContent.length > 0")
    assert "too quickly" in page.locator("#dond-error").inner_text()
    assert page.locator("#dond-input").input_value() == typed  # nothing the person typed is lost
    assert page.locator(".dond-msg.me").count() == 0 and not llm_server.requests


def test_a_late_answer_to_the_page_load_does_not_lose_a_message_that_is_then_refused(otree_server, llm_server, page):
    """On a busy server the answer to the page's own load can arrive after the person sent a message; a refusal that
    follows must still put the message back (CI once lost it this way)."""
    session = create_session(otree_server.url, "dond_llm", 1, llm_model="test-model", first_mover="human")
    page.goto(session_start_links(otree_server.url, session["code"])[0])
    page.get_by_label("I have read the information above and agree to take part.").check()
    next_page(page)
    next_page(page, "Continue")
    page.wait_for_url("**/Bargain/**")
    page.wait_for_function("document.querySelector('#dond-status').textContent.length > 0")
    page.evaluate("window.liveSend = function () {}")  # the server's answers are played by hand, in the late order
    typed = "Could I have the two apples?"
    page.locator("#dond-input").fill(typed)
    page.locator("#dond-input").press("Enter")
    assert page.locator("#dond-input").input_value() == ""  # sent
    page.evaluate("liveRecv(Object.assign({}, js_vars.view, {type: 'state'}))")  # the load's answer, late
    assert page.locator("#dond-input").is_disabled()  # still waiting for the message's own answer
    page.evaluate("liveRecv({type: 'rejected', message: 'Too quickly.'})")
    assert page.locator("#dond-input").input_value() == typed
    assert page.locator("#dond-error").inner_text() == "Too quickly."


def test_when_the_messages_run_out_the_person_waits_for_the_opening_model_to_propose_first(
    otree_server, llm_server, page
):
    """The model opened: after the person's last message the page says the other proposes first, shows no proposal
    form and no "make your proposal" status while the model proposes; then it asks the person for theirs."""

    def slow_proposer(request):
        asked = request["messages"][-1]["content"].rstrip().endswith("]")  # the notices end with the format
        return Reply(text="[Proposal:]", delay_s=2.0) if asked else Reply(text="Which items matter to you?")

    llm_server.responder = slow_proposer
    session = create_session(otree_server.url, "dond_llm", 1, llm_model="test-model", first_mover="llm", max_messages=1)
    page.goto(session_start_links(otree_server.url, session["code"])[0])
    page.get_by_label("I have read the information above and agree to take part.").check()
    next_page(page)
    next_page(page, "Continue")
    page.wait_for_url("**/Bargain/**")
    page.locator(".dond-msg.other:not(.typing) .dond-text").first.wait_for()
    page.locator("#dond-input").fill("The apples, please.")
    page.locator("#dond-input").press("Enter")
    waiting = page.locator("#dond-chat", has_text="makes a secret proposal first")
    waiting.wait_for(timeout=15_000)
    # no usable proposal form (it stays in place, disabled, so the page does not jump) and nothing to write
    proposal = page.locator("#dond-proposal")
    assert (
        not proposal.is_visible()
        or page.locator("#dond-proposal button[type=submit], #dond-proposal button").first.is_disabled()
    )
    assert not page.locator("#dond-compose").is_visible() or page.locator("#dond-input").is_disabled()
    assert "Please make your secret proposal now." not in page.locator("#dond-status").inner_text()
    page.locator("#dond-chat", has_text="has made a secret proposal. Please make yours now.").wait_for(timeout=15_000)
    expect(page.locator("#dond-proposal")).to_be_visible()
    expect(page.locator("#dond-proposal button").first).to_be_enabled()
    assert page.locator("#dond-status").inner_text() == "Please make your secret proposal now."
