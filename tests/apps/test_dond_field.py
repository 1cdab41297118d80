"""DoND as a hurried researcher and a failing model endpoint meet it (issue 14): every bad session key and instances
file is refused before a session exists, with a message naming it, and leaves nothing behind that could break another
session's exports; the instances file is the session's own copy from creation on; a model that cannot be reached is
an LLM error, never a rule violation, and the participant is told so; the exports carry the identifiers researchers
join on."""

from __future__ import annotations

import json
import os
import re
import urllib.parse

import pytest
import requests

from backend.core.llm.fake_server import Reply
from harness.dond_live_client import advance_to_bargain, on_bargain, play
from harness.servers import create_session, export_rows, run_async, session_start_links

# Two instances with their own words (the second also has German ones): games 0-3 play the first, game 4 the second.
FIRST = {
    "item_types": ["gizmo", "widget", "sprocket"],
    "counts": [2, 2, 1],
    "values_a": [1, 2, 4],
    "values_b": [3, 1, 2],
    "words": {"en": [["gizmo", "widget", "sprocket"], ["gizmos", "widgets", "sprockets"]]},
}
SECOND = {
    "item_types": ["apple", "egg", "pen"],
    "counts": [1, 3, 2],
    "values_a": [4, 2, 0],
    "values_b": [1, 1, 3],
}
PID = "5f0c1e2d3b4a59687a6b5c4d"  # the shape of a Prolific ID
STUDY = "6a7b8c9d0e1f2a3b4c5d6e7f"


def try_create(server_url: str, **config) -> requests.Response:
    payload = dict(session_config_name="dond_llm", num_participants=1, modified_session_config_fields=config)
    return requests.post(server_url + "/api/sessions", json=payload, headers=rest_headers(), timeout=30)


def rest_headers() -> dict[str, str]:
    return {"otree-rest-key": os.environ.get("OTREE_REST_KEY", "")}  # as harness.servers.create_session sends it


def session_codes(server_url: str) -> set[str]:
    response = requests.get(server_url + "/api/sessions", headers=rest_headers(), timeout=30)
    response.raise_for_status()
    return {session["code"] for session in response.json()}


@pytest.fixture(scope="module")
def played_session(otree_server):
    """A session whose one participant has exchanged a message with the scripted model (a game and events)."""
    session = create_session(otree_server.url, "dond_llm", 1, first_mover="human")
    run_async(play(advance_to_bargain(session_start_links(otree_server.url, session["code"])[0]), 1))
    return session["code"]


def write(folder, name, content) -> str:
    path = folder / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False), "utf-8")
    return str(path)


BAD_KEYS = [
    (dict(max_message_chars=0), "'max_message_chars' must be a whole number from 1 to 20000, not 0"),
    (dict(max_message_chars="a lot"), "'max_message_chars'"),
    (dict(mode="friendly"), "'mode' must be one of semi, coop, comp"),
    (dict(opponent="robot"), "'opponent' must be one of llm, human"),
    (dict(first_mover="whoever"), "'first_mover'"),
    (dict(max_messages=0), "'max_messages'"),
    (dict(llm_reprompts=-1), "'llm_reprompts'"),
    (dict(instance_seed=-5), "'instance_seed'"),
    (dict(game_timeout_s="soon"), "'game_timeout_s'"),
    (dict(turn_timeout_s=0), "'turn_timeout_s'"),
    (dict(disconnect_timeout_s=1e12), "'disconnect_timeout_s'"),
    (dict(pairing_timeout_s=-1), "'pairing_timeout_s'"),
    (dict(llm_protocol="secret"), "'llm_protocol'"),
    (dict(llm_word_limit=0), "'llm_word_limit'"),
    (dict(llm_probe_external="perhaps"), "'llm_probe_external' must be true or false"),
    (dict(llm_blocking="perhaps"), "'llm_blocking'"),
    (dict(live_messages_per_minute=0), "'live_messages_per_minute'"),
    (dict(llm_requests_per_game=True), "'llm_requests_per_game'"),
    (dict(instances_file="data/\x00.json"), "'instances_file'"),
    (dict(value_visibility="all"), "'value_visibility' must be one of own, llm_sees_other, person_sees_llm, both"),
    (dict(opponent="human", value_visibility="llm_sees_other"), "must be own or both when opponent is human"),
    (dict(agent_description="genius"), "'agent_description' must be one of none, average, expert, awful"),
    (dict(disclose_description="perhaps"), "'disclose_description'"),
    (dict(opponent_intro="robot"), "'opponent_intro' must be one of auto, ai, person, neutral"),
    (dict(model_failure_pay="all"), "'model_failure_pay' must be one of half_total, zero"),
    (dict(llm_context_tokens="8k"), "'llm_context_tokens' must be a whole number from 256 to 10000000, not '8k'"),
    (dict(llm_context_tokens=100), "'llm_context_tokens' must be a whole number from 256 to 10000000, not 100"),
]

ITEMS = ["gizmo", "widget", "sprocket"]
BAD_FILES = [
    ("short.json", [dict(FIRST, words={"en": [ITEMS[:2], ["gizmos", "widgets"]]})], "instance 1 (line 1), words.en"),
    (
        "unknown.json",
        [dict(SECOND, item_types=["apple", "egg", "unicorn"])],
        "instance 1 (line 1), item_types: 'unicorn'",
    ),
    ("other_language.json", [FIRST], "no words for 'de'"),
    ("control.json", [dict(FIRST, words={"en": [["gi\x07zmo", *ITEMS[1:]], ["gizmos", "widgets", "x"]]})], "words.en"),
    ("long.json", [dict(FIRST, words={"en": [["g" * 41, *ITEMS[1:]], ["gizmos", "widgets", "x"]]})], "words.en"),
    ("markup.json", [dict(FIRST, words={"en": [["</script>", *ITEMS[1:]], ["a", "b", "c"]]})], "words.en"),
    (
        "rules.json",
        f"[\n{json.dumps(SECOND)},\n{json.dumps(dict(SECOND, values_a=[4, 2, 1]))}\n]",
        "instance 2 (line 3): does not follow the game's rules",
    ),
    ("empty.json", [], "at least one instance"),
    ("typo.json", [dict(SECOND, word={})], "instance 1 (line 1): unknown field(s) word"),
    ("latin1.json", json.dumps([SECOND]).replace("apple", "äpple").encode("latin-1"), "is not UTF-8 text"),
    ("broken.json", '[\n  {"item_types": ["apple"],\n   "counts": [1,]}\n]', "is not valid JSON: line 3, column"),
]


@pytest.mark.parametrize(("config", "named"), BAD_KEYS, ids=[next(reversed(c)) for c, _ in BAD_KEYS])
def test_a_bad_key_is_refused_before_a_session_exists(otree_server, played_session, config, named):
    check_refused(otree_server.url, config, named)


@pytest.mark.parametrize(("name", "content", "named"), BAD_FILES, ids=[name for name, _, _ in BAD_FILES])
def test_a_bad_instances_file_is_refused_with_file_instance_and_field(
    otree_server, played_session, tmp_path, name, content, named
):
    path = write(tmp_path, name, content)
    message = check_refused(otree_server.url, dict(instances_file=path, language="de"), named)
    assert f"instances_file {path!r}" in message


def test_a_missing_instances_file_is_refused(otree_server, played_session, tmp_path):
    path = str(tmp_path / "moved_away.json")
    message = check_refused(otree_server.url, dict(instances_file=path), "was not found")
    assert f"instances_file {path!r}" in message


def check_refused(server_url: str, config: dict, named: str) -> str:
    """Creation is refused with HTTP 400 naming the problem; no session is left and every export still works."""
    before = session_codes(server_url)
    response = try_create(server_url, **config)
    assert response.status_code == 400, response.text[:500]
    assert named in response.text and "was not created" in response.text, response.text
    assert session_codes(server_url) == before
    wide = requests.get(server_url + "/api/export_wide", headers=rest_headers(), timeout=60)
    assert wide.status_code == 200 and "dond.1.player.game_id" in wide.text
    for function in ("custom_export_dond_games", "custom_export_dond_events"):
        assert export_rows(server_url, "dond", function), function  # the played session's rows, unbroken
    return response.text


def bargain_page(link: str) -> requests.Response:
    """Consent and instructions by HTTP, as harness.dond_live_client.advance_to_bargain does; the Bargain page."""
    browser = requests.Session()
    page = browser.get(link, timeout=60)
    page = browser.post(page.url, data={"consent_given": "True"}, timeout=60)
    page = browser.post(page.url, data={}, timeout=60)
    assert page.status_code == 200 and "/Bargain/" in page.url, (page.status_code, page.url)
    return page


def test_the_instances_file_is_copied_at_creation_edits_and_moves_change_nothing(otree_server, tmp_path):
    path = write(tmp_path, "instances.json", "\ufeff" + json.dumps([FIRST, SECOND]))  # a BOM, as Windows writes it
    session = create_session(otree_server.url, "dond_llm", 5, instances_file=path, language="en")
    links = session_start_links(otree_server.url, session["code"])
    assert "sprockets" in bargain_page(links[0]).text  # the file's own words

    # Mid-study the researcher edits the file, then moves it away: the running session keeps its copy.
    write(tmp_path, "instances.json", [SECOND, SECOND])
    for link in links[1:4]:
        assert "sprockets" in bargain_page(link).text
    (tmp_path / "instances.json").rename(tmp_path / "elsewhere.json")
    bargain_page(links[4])

    games = export_rows(otree_server.url, "dond", "custom_export_dond_games", session_code=session["code"])
    played = [(game["item_types"], game["counts"], game["values_a"]) for game in sorted(games, key=game_number)]
    as_played = [
        tuple(json.dumps(entry[name]) for name in ("item_types", "counts", "values_a")) for entry in (FIRST, SECOND)
    ]
    assert played == [as_played[0]] * 4 + [as_played[1]]


def game_number(game: dict) -> int:
    return int(game["game_id"].rsplit("-", 1)[1])


# How the notices name the opponent, per opponent_intro: never the AI when the person was told of a person.
UNREACHABLE = [("auto", "Die KI"), ("person", "Die andere Person"), ("neutral", "Die Gegenseite")]


def shown_text(page) -> str:
    """What the person sees of the page: its text without oTree's devserver debug panel, which lists every template
    variable (e.g. the texts of a partner takeover, which only a person-vs-person game shows)."""
    return page.evaluate(
        "() => { const b = document.body.cloneNode(true); b.querySelectorAll('.debug-info').forEach(e => e.remove());"
        " document.documentElement.append(b); const t = b.innerText; b.remove(); return t; }"
    )


@pytest.mark.parametrize(("intro", "named"), UNREACHABLE, ids=[row[0] for row in UNREACHABLE])
def test_a_model_that_cannot_be_reached_is_an_llm_error_the_participant_is_told(
    otree_server, llm_server, page, intro, named
):
    llm_server.responder = lambda request: Reply(status=500)
    session = create_session(
        otree_server.url,
        "dond_llm",
        1,
        llm_model="test-model",
        language="de",
        opponent_intro=intro,
        first_mover="human",
        llm_max_retries=0,
        llm_reprompts=2,
    )
    page.goto(session_start_links(otree_server.url, session["code"])[0])
    page.locator("input[name=consent_given][value=True]").check()
    page.locator(".otree-btn-next").click()
    page.locator(".otree-btn-next").click()
    page.wait_for_url("**/Bargain/**")
    page.wait_for_function("document.querySelector('#dond-status').textContent.length > 0")
    page.locator("#dond-input").fill("Hallo, was ist dir wichtig?")
    page.locator("#dond-input").press("Enter")
    page.locator("#dond-finished").wait_for(state="visible", timeout=30_000)

    chat = page.locator("#dond-chat").inner_text()
    assert chat.count(f"{named} war nicht erreichbar") == 2  # two more tries, the person told each time
    assert f"{named} war wegen eines technischen Problems auf unserer Seite nicht erreichbar" in chat  # why it ended
    if intro == "person":  # told of a person: no notice gives the AI away
        assert not re.search(r"\b(KI|AI|IA)\b|KI-", shown_text(page)), chat
    assert "Spielregel" not in chat and "Spielregeln" not in chat  # never "broke a rule"
    assert len(llm_server.requests) == 3
    page.locator("#dond-next").click()
    page.wait_for_url("**/Results/**")
    results = page.locator("body").inner_text()
    assert "Bitte wählen Sie „Weiter“" in results and named in results  # what happens next, and who failed
    if intro == "person":
        assert not re.search(r"\b(KI|AI|IA)\b|KI-", shown_text(page)), results

    game = export_rows(otree_server.url, "dond", "custom_export_dond_games", session_code=session["code"])[0]
    llm_side = "b" if game["focal_role"] == "A" else "a"
    assert game["violations_a"] == game["violations_b"] == "0" and game["reprompts"] == "0"
    assert game[f"llm_errors_{llm_side}"] == "3" and game["abort_reason"] == "llm_error: server_error"
    events = export_rows(otree_server.url, "dond", "custom_export_dond_events", session_code=session["code"])
    kinds = [event["kind"] for event in events]
    assert "violation" not in kinds and kinds.count("llm_error") == 3
    page.goto(f"{otree_server.url}/AdminReport/{session['code']}")  # the researcher's view of the session
    summary = page.locator("tr", has=page.locator("td", has_text="test-model")).first
    cells = summary.locator("td").all_inner_texts()
    assert cells[4:6] == ["1.00", "1.00 / 0.00"]  # aborted; of which LLM error / rules


ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def test_exports_carry_participant_code_pid_study_id_session_and_iso_times(otree_server, llm_server):
    session = create_session(otree_server.url, "dond_llm", 1, first_mover="human")
    link = session_start_links(otree_server.url, session["code"])[0]
    browser = requests.Session()
    browser.cookies.set("study_ids", urllib.parse.quote(json.dumps({"pid": PID, "study_id": STUDY})))
    page = browser.get(f"{link}?participant_label={PID}", timeout=60)
    page = browser.post(page.url, data={"consent_given": "True"}, timeout=60)
    page = browser.post(page.url, data={}, timeout=60)
    run_async(play(on_bargain(page.url, page.text), 1))  # one exchange with the scripted model
    participant_code = link.rstrip("/").rsplit("/", 1)[-1]

    game = export_rows(otree_server.url, "dond", "custom_export_dond_games", session_code=session["code"])[0]
    focal = game["focal_role"].lower()
    assert game["session_code"] == session["code"] and game["participant_code"] == participant_code
    assert game[f"participant_{focal}"] == participant_code
    assert game["prolific_pid"] == game[f"prolific_pid_{focal}"] == PID and game["study_id"] == STUDY
    assert ISO_UTC.fullmatch(game["started_at"]) and game["ended_at"] == ""  # still running
    events = export_rows(otree_server.url, "dond", "custom_export_dond_events", session_code=session["code"])
    assert {"llm", "human"} <= {event["actor"] for event in events}
    for event in events:  # the LLM's events too: each row joins to the person of the game
        assert (event["session_code"], event["participant_code"]) == (session["code"], participant_code)
        assert (event["prolific_pid"], event["study_id"]) == (PID, STUDY)
        assert ISO_UTC.fullmatch(event["created_at"]), event["created_at"]


OTHER_VALUES = "What each item is worth to the other player"
EXPERT = "You are highly experienced at negotiating and regularly reach good deals."


@pytest.mark.parametrize(
    ("treatment", "sees_other", "described"),
    [
        (dict(), False, "You negotiate in this game as a representative.\n\n"),
        (
            dict(value_visibility="llm_sees_other", agent_description="expert", opponent_intro="neutral"),
            True,
            EXPERT,
        ),
        (dict(value_visibility="person_sees_llm", model_failure_pay="zero"), False, "as a representative.\n\n"),
    ],
    ids=["default", "model_sees_person", "person_sees_model"],
)
def test_the_treatment_reaches_the_models_prompt_the_export_and_the_admin_report(
    otree_server, llm_server, treatment, sees_other, described
):
    llm_server.responder = lambda request: Reply(text="Let us see.")
    session = create_session(otree_server.url, "dond_llm", 1, first_mover="human", llm_model="test-model", **treatment)
    run_async(play(advance_to_bargain(session_start_links(otree_server.url, session["code"])[0]), 1))
    first = llm_server.requests[0]["messages"][0]["content"]
    assert (OTHER_VALUES in first) is sees_other and described in first
    game = export_rows(otree_server.url, "dond", "custom_export_dond_games", session_code=session["code"])[0]
    expected = dict(value_visibility="own", agent_description="none", disclose_description="0")
    expected.update(opponent_intro="auto", model_failure_pay="half_total")
    expected.update({key: str(value) for key, value in treatment.items()})
    assert {key: game[key] for key in expected} == expected
    report = requests.get(f"{otree_server.url}/AdminReport/{session['code']}", timeout=60).text
    assert f"{expected['value_visibility']} / {expected['agent_description']} / {expected['opponent_intro']}" in report
    assert "Treatments: figures per condition" not in report  # figures count finished games only


def test_the_results_bonus_follows_the_pay_rule_of_the_game():
    import types

    from backend.dond import export as dond_export
    from backend.dond.game import GameConfig
    from backend.dond.instances import Instance
    from backend.dond.treatments import Treatment
    from dond import exports

    instance = Instance(("egg", "knife"), (1, 2), (4, 3), (10, 0))
    abort = {"kind": "abort", "role": "B", "actor": "system", "text": "llm_invalid: over_ask"}
    for pay, bonus in (("half_total", 5), ("zero", 0)):
        game = types.SimpleNamespace(
            mode="semi",
            language="de",
            opponent="llm",
            instance_json=json.dumps(instance.to_dict()),
            treatment_json=Treatment(model_failure_pay=pay).to_json(),
        )
        row = dond_export.game_row(
            [abort],
            instance,
            GameConfig("semi", "de"),
            session_code="s",
            game_id="s-1",
            opponent="llm",
            model="m",
            cell=1,
            focal_role="A",
            treatment=Treatment(model_failure_pay=pay),
        )
        assert exports.bonus_of(game, row, "A") == bonus == row["bonus_points"]
        statement = exports.failure_pay_statement(game, "A")
        assert statement.endswith(".") and ("erhalten Sie" in statement) is (pay == "half_total")
    assert exports.failure_pay_statement(types.SimpleNamespace(opponent="human"), "A") == ""
