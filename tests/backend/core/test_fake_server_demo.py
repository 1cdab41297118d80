"""The offline demo's model (``python -m backend.core.llm.fake_server``): DoND games it plays end in a deal or a
no-deal, never an abort, in every language and protocol, through the real openai client; its German and Italian
messages address the other player formally; other requests still get the echo."""

from __future__ import annotations

import csv
import subprocess
import sys
import time

import pytest
import requests

from backend.core.llm.fake_server import default_responder
from backend.dond import demo_responder as dond_demo
from backend.dond.demo_responder import demo as demo_responder
from backend.dond.game import GameConfig
from backend.dond.instances import generate_instance
from backend.dond.prompts import initial_prompt, llm_messages, notice
from backend.dond.proposals import parse_proposal
from backend.dond.protocol import Protocol
from backend.dond.selfplay import run_selfplay
from harness import PROJECT_ROOT
from harness.servers import free_port, run_async


@pytest.mark.parametrize("language", ["en", "de", "it"])
@pytest.mark.parametrize("protocol", [Protocol(), Protocol(name="notes", probe_external=True)], ids=["plain", "notes"])
def test_demo_model_games_end_in_a_deal_or_no_deal_never_an_abort(llm_server, tmp_path, language, protocol):
    llm_server.responder = demo_responder
    summary = run_async(
        run_selfplay(
            model_a="demo-a",
            model_b="demo-b",
            instances=3,
            mode="semi",
            language=language,
            out_dir=tmp_path,
            llm_reprompts=0,  # one refused reply would abort: the demo must never be refused
            protocol=protocol,
            settings_options=dict(base_url=llm_server.base_url, timeout_s=5.0, max_retries=0),
        )
    )
    assert summary.played == 12
    assert set(summary.outcomes) <= {"success", "lose"}, summary.outcomes
    with (tmp_path / "dond_games.csv").open(encoding="utf-8") as file:
        games = list(csv.DictReader(file))
    assert {g["violations_a"] for g in games} == {g["violations_b"] for g in games} == {"0"}
    assert all(g["proposal_a"] and g["proposal_b"] for g in games)
    assert {g["messages_a"] for g in games} == {"2"}  # it talks before it proposes
    if protocol.notes:
        assert {g["note_json_a"] for g in games} == {"1.0"}  # its notes end in the JSON split the protocol asks for


def test_german_and_italian_messages_use_the_formal_address():
    instance = generate_instance(5)
    for language, formal, informal in (("de", "Ihnen", (" dir", " du ", " dein")), ("it", "Lei", (" te", " tu "))):
        chat = [{"role": "user", "content": initial_prompt(instance, "A", GameConfig(mode="semi", language=language))}]
        opening = dond_demo.respond({"messages": chat})
        assert formal in opening and not any(word in opening.lower() + " " for word in informal), opening
        chat += [{"role": "assistant", "content": opening}, {"role": "user", "content": "?"}]
        closing = dond_demo.respond({"messages": chat})
        assert not any(word in closing.lower() + " " for word in informal), closing


def test_it_proposes_at_once_when_the_other_has_proposed_and_its_proposal_parses():
    instance = generate_instance(11)
    config = GameConfig(mode="coop", language="it", opener="B")
    events = [dict(kind="proposal", role="B", actor="human", text="", proposal=[0] * len(instance.counts))]
    chat = llm_messages(events, "A", instance, config)
    assert notice("other_proposed", config) in chat[-1]["content"]
    reply = dond_demo.respond({"messages": chat})
    assert parse_proposal(reply, instance, "it")  # a valid bracket proposal, not a message
    own = dict(zip(instance.item_types, instance.values_a, strict=True))
    assert all(own[item] >= 2 for item, count in parse_proposal(reply, instance, "it").items() if count)


def test_other_requests_still_get_the_echo():
    request = {"messages": [{"role": "user", "content": "Rate this conversation in three words."}]}
    assert demo_responder(request) == default_responder(request) == "I read 6 words."


def test_the_command_line_server_plays_dond_by_default_and_echoes_on_request():
    prompt = initial_prompt(generate_instance(2), "B", GameConfig(mode="semi", language="en"))
    body = {"model": "demo", "messages": [{"role": "user", "content": prompt}]}
    for option, expected in (([], "Hello!"), (["--responder", "echo"], "I read")):
        port = free_port()
        command = [sys.executable, "-m", "backend.core.llm.fake_server", "--port", str(port), "--latency", "0.1"]
        process = subprocess.Popen(command + option, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True)
        try:
            assert "Fake OpenAI-compatible server" in process.stdout.readline()
            began = time.monotonic()
            answer = requests.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body, timeout=10).json()
            assert time.monotonic() - began >= 0.1  # --latency holds
            assert answer["choices"][0]["message"]["content"].startswith(expected)
        finally:
            process.terminate()
            process.wait(timeout=10)


def test_it_reads_its_own_values_when_the_prompt_also_shows_the_others():
    from backend.dond.treatments import LLMView

    instance = generate_instance(4)
    for language in ("en", "de", "it"):
        view = LLMView(sees_other=True, other_sees=True, description="expert")
        prompt = initial_prompt(instance, "B", GameConfig(mode="semi", language=language), view)
        game = dond_demo.read_game(prompt)
        assert (game.language, game.instance.counts, game.instance.values_a) == (
            language,
            instance.counts,
            instance.values_b,
        )
