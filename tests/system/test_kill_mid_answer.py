"""kill -9 of the server while a participant's answer is in flight, on a bias test and on a social_eval rating page
(issue 23, "the untried cases"); on SQLite, and on PostgreSQL when TEST_DATABASE_URL names one (CI's second run).

The participant answers one item, sends the next answer, and the server process is killed (SIGKILL) a moment
later, while that request may be anywhere between arriving and being committed. The server is started again on the
same database; the participant reloads and goes on to the end. Then: every answer given before the kill is stored as
given, nothing is stored twice (one answer per item, one set of ratings per episode), and the participant finished.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import signal
import threading
import time

import pytest
import requests

from backend.core.csvio import unescape_text
from backend.social import forms as social_forms
from harness.participants import Annotator, Person
from harness.servers import (
    base_env,
    create_session,
    export_rows,
    own_database,
    scratch_project,
    session_start_links,
    start_server,
)
from tests.support.social import RUBRIC

pytestmark = pytest.mark.slow

KILL_AFTER_S = (0.05, 0.2)  # the answer being handled, about to be committed (or already)


def bias_answer(person: Person) -> dict:
    offered = re.findall(r'class="form-check-input bias-argument"[^>]*value="([^"]+)"', person.html)
    return {"selected_arguments": ",".join(offered[:2])} if offered else {"choice": "1", "confidence": "70"}


def rating_form(reason: str) -> dict:
    values = {}
    for agent in social_forms.AGENTS:
        for slot, dimension in enumerate(RUBRIC.dimensions, start=1):
            values[social_forms.rating_field(agent, slot)] = dimension.max
            values[social_forms.reason_field(agent, slot)] = reason
    return values


class Restartable:
    """A production server on a database that outlives it (a file, or the PostgreSQL database of the run)."""

    def __init__(self, env: dict, folder) -> None:
        self.env, self.folder = env, folder
        self.server = start_server(kind="prodserver", env=env, folder=folder)
        self.port = int(self.server.url.rsplit(":", 1)[1])

    @property
    def url(self) -> str:
        return self.server.url

    def kill_during(self, send, *, after_s: float) -> None:
        """Call ``send()`` in a thread and kill the server with SIGKILL ``after_s`` seconds later; then start it again."""
        sender = threading.Thread(target=lambda: _ignoring_errors(send), daemon=True)
        sender.start()
        time.sleep(after_s)
        self.server.stop(signal.SIGKILL)
        sender.join(timeout=60)
        self.server = start_server(kind="prodserver", env=self.env, folder=self.folder, port=self.port)


def _ignoring_errors(send) -> None:
    with contextlib.suppress(requests.RequestException):  # the server died under the request, as a browser sees it
        send()


def restartable_env(folder) -> dict:
    env = base_env()
    if not env.get("DATABASE_URL"):
        env["DATABASE_URL"] = f"sqlite:///{folder}/killed.sqlite3"
    return env


@pytest.mark.parametrize("after_s", KILL_AFTER_S)
def test_a_bias_test_answer_in_flight_when_the_server_is_killed(after_s):
    folder = scratch_project("otree-kill-bias-")
    with own_database(restartable_env(folder)) as env:
        servers = Restartable(env, folder)
        try:
            session = create_session(servers.url, "bias_tests", 1)
            person = Person(session_start_links(servers.url, session["code"])[0], session["code"])
            person.advance_to("Choice")
            first_answer = bias_answer(person)
            person.submit(first_answer)
            answer, url = bias_answer(person), person.url
            servers.kill_during(lambda: person.http.post(url, data=answer, timeout=30), after_s=after_s)

            person.reload()  # the browser's reload after the outage: the page it should be on
            for _ in range(60):
                if "Thank you!" in person.html:
                    break
                person.submit(bias_answer(person))
            assert "Thank you!" in person.html, person.url

            rows = export_rows(servers.url, "bias_tests", session_code=session["code"])
            answered = [row for row in rows if row["player.answered_at"]]
            items = [(row["player.item_id"], row["player.version"]) for row in answered]
            assert len(items) == len(set(items)), f"an item (and version) answered twice: {items}"
            assert len(answered) == len([row for row in rows if row["player.item_id"]]), "an item left unanswered"
            first = min(answered, key=lambda row: int(row["subsession.round_number"]))
            for field, value in first_answer.items():
                assert first[f"player.{field}"] == value, (field, first)
        finally:
            servers.server.stop()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("after_s", KILL_AFTER_S)
def test_a_rating_in_flight_when_the_server_is_killed(after_s):
    folder = scratch_project("otree-kill-rating-")
    with own_database(restartable_env(folder)) as env:
        servers = Restartable(env, folder)
        try:
            session = create_session(
                servers.url, "social_eval", 1, annotators_per_episode=1, episodes_per_annotator=3, attention_checks=0
            )
            rater = Annotator(session_start_links(servers.url, session["code"])[0], session["code"]).to_rating_page()
            before = rater.episode_id
            rater.submit(rating_form("Rated before the crash,\non two lines."))
            in_flight, url = rater.episode_id, rater.url
            form = rating_form("Sent as the server died.")
            servers.kill_during(lambda: rater.http.post(url, data=form, timeout=30), after_s=after_s)

            rater.reload()
            rated = [before]
            for _ in range(10):
                if rater.page != "Rate":
                    break
                rated.append(rater.episode_id)
                rater.submit(rating_form("Rated after the restart."))
            assert rater.page == "Completion", rater.url

            ratings = export_rows(
                servers.url, "social_eval", "custom_export_ratings_long", session_code=session["code"]
            )
            per_episode = {}
            for row in ratings:
                per_episode.setdefault(row["episode_id"], []).append(row)
            per_form = len(social_forms.AGENTS) * len(RUBRIC.dimensions)
            assert all(len(rows) == per_form for rows in per_episode.values()), {
                episode: len(rows) for episode, rows in per_episode.items()
            }
            assert len(per_episode) == 3 and before in per_episode and in_flight in per_episode
            reasons = {unescape_text(row["reasoning"]) for row in per_episode[before]}
            assert reasons == {"Rated before the crash,\non two lines."}
            done = [
                row
                for row in export_rows(
                    servers.url, "social_eval", "custom_export_assignments", session_code=session["code"]
                )
                if row["status"] == "done"
            ]
            assert sorted(row["episode_id"] for row in done) == sorted(per_episode), done
        finally:
            servers.server.stop()
    shutil.rmtree(folder, ignore_errors=True)
