"""Each seat's record says what that person did (issue 35, findings 2-4), over a real server whose clock the tests move
forward (``server_clock``: no test waits for a timer).

- Person vs person: a partner who owes the first move and is still reading the Instructions is not taken for gone;
  their turn's clock starts when their Bargain page first connects, and once it runs out the game ends as their
  ``partner_timeout``. Study status, the review list's reasons and the transcript then say who stopped answering:
  the one who left reads "left the game", the one left behind "the other person stopped answering"; the one who left,
  back on their page, reads that they did not answer in time.
- Person vs model: a game where the model opens and the person's page never connects (websockets blocked, scripts
  off) is never paid as the model's failure: the model was never asked; the game ends as ``no_connection`` and pays
  by the mode's goal (no bonus), and the Results page says why.
"""

from __future__ import annotations

import json
import re

import requests
import websockets

from harness.participants import people
from harness.servers import export_rows, rest_headers, run_async
from tests.support.admin import advance_slowest
from tests.support.live import pair_and_start, payload_of, receive, send_until

TURN_S = 10  # turn_timeout_s: the key's minimum
FIRST = "You write the first message.</li>"  # the rules list (the debug table below quotes every text)


def ping(person) -> dict:
    """The state the person's Bargain page receives for a ping (the partner check runs on it)."""

    async def once():
        async with websockets.connect(person.live_url(), max_size=None) as socket:
            await socket.send(json.dumps({"type": "ping"}))
            while True:
                payload = payload_of(await receive(socket, timeout_s=30))
                if payload.get("type") == "state":
                    return payload

    return run_async(once())


def outcome(person) -> str:
    """The Results page's sentence on how the game ended."""
    return re.search(r'<p id="dond-outcome"[^>]*>(.*?)</p>', person.html, re.S).group(1)


def status_row(server_url: str, session_code: str, participant_code: str) -> str:
    """The Study status page's row of one participant, as text."""
    page = requests.get(f"{server_url}/StudyStatus/{session_code}", timeout=30).text
    rows = re.findall(r"<tr\b.*?</tr>", page, re.S)
    (row,) = [row for row in rows if participant_code in row]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row))


def test_a_partner_reading_the_instructions_is_not_gone_and_the_one_who_left_is_named(otree_server, server_clock):
    players = people(otree_server.url, "dond_human", 2, turn_timeout_s=TURN_S)
    for player in players:
        player.advance_to("Pairing")
    for player in players:
        run_async(send_until(player.live_url(), {"type": "wait"}, until=lambda p: True))
    for player in players:
        player.advance_to("Instructions")
    (opener,) = [p for p in players if FIRST in p.html]
    (other,) = [p for p in players if p is not opener]
    other.advance_to("Bargain")

    server_clock.advance(3 * TURN_S)  # the opener reads on, well past a turn's time, their page still open
    assert not ping(other)["finished"], "a partner still reading the Instructions was taken for gone"

    opener.advance_to("Bargain")
    assert ping(opener)["can_message"]  # their page connects: from now on their turn's clock runs
    server_clock.advance(TURN_S - 2)
    assert not ping(other)["finished"]
    server_clock.advance(3)
    end = ping(other)
    assert end["finished"] and end["outcome"] == "aborted", end
    assert "did not answer in time" in " ".join(item.get("text", "") for item in end["chat"]), end["chat"]

    code = otree_server.url, opener.session_code
    (game,) = export_rows(otree_server.url, "dond", "custom_export_dond_games", session_code=opener.session_code)
    role = game["aborted_by"]
    assert game["abort_reason"] == "partner_timeout" and game[f"participant_{role.lower()}"] == opener.code, game

    left = status_row(*code, opener.code)
    behind = status_row(*code, other.code)
    assert "timed out" in left and "left the game: stopped answering on their turn" in left, left
    assert "the other person stopped answering" in behind and "left the game" not in behind, behind
    transcript = requests.get(f"{otree_server.url}/DondTranscripts/{opener.session_code}", timeout=30).text
    assert f"player {role} stopped answering on their turn" in transcript
    assert "the other person" not in transcript  # the researcher's page names seats, never "the other"

    opener.reload()
    opener.submit()
    assert opener.page == "Results", opener.url
    assert "you did not answer in time on your turn" in outcome(opener)  # their own record, not the partner's
    assert "you left the game before it ended, so no bonus is paid" in opener.html
    other.reload()
    other.submit()
    assert "did not answer in time." in outcome(other) and "you did not answer" not in outcome(other)


def test_a_game_whose_page_never_connected_is_not_paid_as_a_model_failure(otree_server, server_clock, llm_server):
    [person] = people(otree_server.url, "dond_llm", 1, llm_model="never-asked", first_mover="llm", game_timeout_s=30)
    person.advance_to("Bargain")  # the model opens; the page's script never connects its live socket
    server_clock.advance(31)
    person.submit({"timeout_happened": "True"})  # the page's countdown posts the form
    assert person.page == "Results", person.url
    assert "your page could not connect to the game" in outcome(person), outcome(person)
    assert "AI model" not in re.search(r'<p id="dond-paid">(.*?)</p>', person.html, re.S).group(1)
    assert llm_server.requests == []  # the model was never asked

    (game,) = export_rows(otree_server.url, "dond", "custom_export_dond_games", session_code=person.session_code)
    assert game["abort_reason"] == "no_connection" and game["pay_rule"] == "mode_goal", game
    assert float(game["bonus_points"] or 0) == 0, game
    transcript = requests.get(
        f"{otree_server.url}/DondTranscripts/{person.session_code}", headers=rest_headers(), timeout=30
    ).text
    assert "never connected (the model was never asked)" in transcript


def test_the_admins_advance_after_a_partner_left_names_the_one_who_left_and_pays_the_one_left_behind(
    otree_server, server_clock
):
    """Red team F2: the Monitor's "Advance slowest" moved a person whose partner had left on: the game was stored as
    the admin's advance and the one left behind was paid nothing. The partner check runs first: the game ends as the
    partner's leaving, and the person left behind is paid by ``partner_left_pay``."""
    players = people(otree_server.url, "dond_human", 2, disconnect_timeout_s=10, partner_left_pay="half_total")
    pair_and_start(players)
    (opener,) = [p for p in players if p.js_vars()["view"]["can_message"]]
    (leaver,) = [p for p in players if p is not opener]
    ping(leaver)  # their page connects once, then closes
    run_async(send_until(opener.live_url(), {"type": "message", "text": "Hello?"}, until=lambda p: True))
    server_clock.advance(12)  # longer than disconnect_timeout_s: the leaver's page sent nothing since
    advance_slowest(otree_server.url, None, opener.session_code, log=otree_server.log)

    (game,) = export_rows(otree_server.url, "dond", "custom_export_dond_games", session_code=opener.session_code)
    assert game["abort_reason"] == "partner_left", game  # not advanced_by_admin
    assert game[f"participant_{game['aborted_by'].lower()}"] == leaver.code, game
    opener.reload()
    if opener.page == "Bargain":
        opener.submit()
    assert opener.page == "Results", opener.url
    assert "left the game" in outcome(opener), outcome(opener)
    assert re.search(r"[1-9]", re.search(r'<td id="bonus">(.*?)</td>', opener.html).group(1))  # half the total
    left = status_row(otree_server.url, opener.session_code, leaver.code)
    assert "left the game" in left, left
