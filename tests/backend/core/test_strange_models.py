"""The LLM layer attacked by the strangest model and the most careless researcher.

Written by a hostile review as failing tests of what it broke (thinking shown or parsed, ambiguous replies read as
answers, odd log-probabilities, unrelated errors taken for schema refusals, text that did not round-trip), kept as
the proof of each fix; the other tests pin down attacks that were tried and held.
"""

from __future__ import annotations

import csv
import math

import pytest

from backend.bias import report as bias_report
from backend.bias.items import load_items
from backend.bias.replies import ReplyParseError, letter_scores, parse_choice, parse_selection, text_answer
from backend.bias.runner import run_tests
from backend.core.llm import LLMSettings, complete, split_reasoning, stream
from backend.core.llm.fake_server import Reply
from backend.core.llm.reasoning import ReasoningSplitter
from backend.dond import selfplay
from backend.dond.game import GameConfig
from backend.reasoning.judge import JudgementParseError, parse_judgement
from backend.reasoning.logs import Attempt, ReasoningLog
from harness.servers import run_async
from tests.support.dond_turns import run_turns

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
LOAVES = ["150 loaves", "250 loaves", "350 loaves", "450 loaves"]
ACCEPT_DECLINE = ["Yes, accept", "No, decline"]


def settings_for(server, **changes) -> LLMSettings:
    values = dict(model="strange-model", base_url=server.base_url, max_retries=0, backoff_s=0.01, timeout_s=10)
    values.update(changes)
    return LLMSettings(**values)


def play_one_turn(llm_server, monkeypatch, reasoning_tokens: int = 0, **options):
    """The model's turn after the person's 'Hi' in a semi game: (progress items, stored events)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    events = [{"kind": "message", "role": "A", "text": "Hi"}]
    config = GameConfig(mode="semi", language="en", llm_reprompts=2)
    settings = settings_for(llm_server, reasoning_tokens=reasoning_tokens)
    return run_turns(events, "B", config, settings, **options), events


def previews(items) -> str:
    return "".join(item["text"] for item in items if item["type"] == "delta")


# --- Claim 1: reasoning never reaches a participant's page -------------------------------------------------------


def test_thinking_opened_by_the_chat_template_never_streams_when_the_model_is_declared(llm_server, monkeypatch):
    # DeepSeek-R1 and Qwen3 templates end the prompt with '<think>\n': the content starts inside the block, which
    # can only be told at its closing tag. A declared reasoning model (llm_reasoning_tokens) streams nothing early.
    secret = "They value the knife most, so I will pretend that the eggs matter to me."
    llm_server.script(Reply(text=f"{secret}</think>Hello! Shall we split the apples?"))
    items, events = play_one_turn(llm_server, monkeypatch, reasoning_tokens=500)
    message = next(event for event in events if event["kind"] == "message" and event["role"] == "B")
    assert message["text"] == "Hello! Shall we split the apples?"
    assert "pretend" not in previews(items)


def test_an_undeclared_template_opened_thinker_is_flagged_once_and_then_held(llm_server, monkeypatch):
    secret = "They value the knife most, so I will pretend that the eggs matter to me."
    llm_server.script(*[Reply(text=f"{secret}</think>Hello! Shall we split the apples?")] * 2)
    items, events = play_one_turn(llm_server, monkeypatch)
    call = next(event for event in events if event["kind"] == "llm_call")
    assert call["reasoning_shown"] is True  # the first reply was previewed as it came: the data says so
    items, events = play_one_turn(llm_server, monkeypatch)
    assert "pretend" not in previews(items)  # the endpoint is known now: its text is held until complete
    assert next(event for event in events if event["kind"] == "llm_call")["reasoning_shown"] is False


def test_upper_case_think_tags_are_reasoning(llm_server, monkeypatch):
    llm_server.script(Reply(text="<THINK>I could ask for all of it: [Proposal: 3 apples, 2 knives, 1 egg]</THINK>Hi!"))
    items, events = play_one_turn(llm_server, monkeypatch)
    assert [event["kind"] for event in events[1:]][:2] == ["llm_call", "message"]
    assert events[2]["text"] == "Hi!"
    assert "I could ask" in events[1]["llm_reasoning"]


def test_mistral_think_brackets_are_reasoning(llm_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm_server.script(Reply(text="[THINK]The answer is A, surely.[/THINK]B"))
    record = run_async(complete([{"role": "user", "content": "Pick A or B."}], settings_for(llm_server), max_tokens=50))
    assert record.ok and record.reply == "B"
    assert record.reasoning == "The answer is A, surely."


TRICKY_REPLY = "Hi <think>two </think>  apples</think> <think>x</think>Deal. [Proposal: 1 egg]<think>never"


def test_think_tags_split_at_every_position_give_the_same_reply_and_never_stream_reasoning():
    """Holds: every cut of a reply with a block not at the start, two blocks, a stray closing tag and an unclosed
    block gives the same split as the whole text, and no streamed piece holds reasoning."""
    whole = split_reasoning(TRICKY_REPLY)
    assert whole[0] == "Deal. [Proposal: 1 egg]" and "never" in whole[1] and "two" in whole[1]
    for cut in range(len(TRICKY_REPLY) + 1):
        for second in range(cut, len(TRICKY_REPLY) + 1):
            splitter = ReasoningSplitter()
            pieces = [TRICKY_REPLY[:cut], TRICKY_REPLY[cut:second], TRICKY_REPLY[second:]]
            shown = "".join(splitter.feed(piece) for piece in pieces) + splitter.finish()
            assert splitter.visible.strip() == whole[0]
            assert "never" not in shown and "<" not in shown.replace("<think>", "")


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_a_reasoning_field_with_a_script_end_and_a_proposal_is_never_the_move(llm_server, monkeypatch, field):
    """Holds: the separate field and a think tag together, holding '</script>' and a proposal, stay reasoning."""
    thought = "</script><script>alert(1)</script> [Proposal: 3 apples, 2 knives, 1 egg] " * 200
    llm_server.script(
        Reply(text="<think>[Proposal: 0 apples]</think>Hello there.", reasoning=thought, reasoning_field=field)
    )
    items, events = play_one_turn(llm_server, monkeypatch)
    assert "script" not in previews(items) and "Proposal" not in previews(items)
    assert events[2] == {**events[2], "kind": "message", "text": "Hello there."}
    assert "alert(1)" in events[1]["llm_reasoning"] and "[Proposal: 0 apples]" in events[1]["llm_reasoning"]


# --- Claim 2: every request carries a token limit -----------------------------------------------------------------


def test_selfplay_takes_the_token_options_every_runner_has(tmp_path):
    argv = ["--model-a", "scripted", "--instances", "1", "--out", str(tmp_path), "--quiet"]
    try:
        code = selfplay.main([*argv, "--reasoning-tokens", "2000", "--max-tokens", "300"])
    except SystemExit as error:  # argparse refuses an unknown option
        code = error.code
    assert code == 0


# --- Claim 3: the bias text parser never guesses ------------------------------------------------------------------


def reading(reply: str, labels: list[str]) -> int | None:
    try:
        return text_answer(reply, labels)[0]
    except ReplyParseError:
        return None


@pytest.mark.parametrize(
    ("reply", "labels", "acceptable"),
    [
        # A correction: the first line's letter wins, the correction is not seen.
        ("A. Wait, no: C.", LOAVES, {None, 2}),
        # A list of verdicts: 'A: no' counts as a letter marker for A.
        ("A: no, B: yes", LOAVES[:2], {None, 1}),
        # A conditional answer is no answer.
        ("The answer is A if the street is busy, otherwise B.", LOAVES, {None}),
        # yes/no from the first word alone.
        ("Yes, I decline the offer.", ACCEPT_DECLINE, {None, 1}),
        ("No doubt about it: I accept.", ACCEPT_DECLINE, {None, 0}),
        ("No idea; I cannot judge this.", ACCEPT_DECLINE, {None}),
        ("Yes and no.", ACCEPT_DECLINE, {None}),
    ],
)
def test_the_text_parser_refuses_or_reads_what_a_careful_human_reads(reply, labels, acceptable):
    assert reading(reply, labels) in acceptable


@pytest.mark.parametrize(
    ("reply", "labels", "acceptable"),
    [
        ("Not A. B.", LOAVES, {None, 1}),
        ("A is wrong; the answer is B", LOAVES, {None, 1}),  # refused: two letters written
        ("I'd say A. Actually B.", LOAVES, {None, 1}),
        ("I'd say A.\nActually B.", LOAVES, {None, 1}),
        ("The answer is not A.", LOAVES, {None}),
        ("Definitely not B.", LOAVES, {None}),
        ("A or B", LOAVES, {None}),
        ("- A\n- B", LOAVES, {None}),
        ("(A) is tempting but wrong; (B)", LOAVES, {None, 1}),
        ("Neither A nor B: C", LOAVES, {None, 2}),
        ("The answer is B, not A.", LOAVES, {None, 1}),
        ("Answer: I don't know", LOAVES, {None}),
        ("A: no\nB: yes\nC: no", LOAVES[:3], {None, 1}),
    ],
)
def test_negations_corrections_and_lists_that_hold(reply, labels, acceptable):
    """Holds: these replies are refused or read as a careful human reads them."""
    assert reading(reply, labels) in acceptable


@pytest.mark.parametrize(
    "reply",
    [
        'Draft: {"answer": "A", "probabilities": {"A": 0.6, "B": 0.4}} '
        'Final: {"answer": "B", "probabilities": {"A": 0.3, "B": 0.7}}',
        'The format is {"answer": "A", "probabilities": {"A": 0.5, "B": 0.5}}; my answer is {"answer": "B"}.',
        '{"answer": "A", "Answer": "B", "probabilities": {"A": 0.5, "B": 0.5}}',
        '{"answer": "A", "answer": "B"}',
    ],
)
def test_a_json_reply_naming_two_answers_is_refused(reply):
    with pytest.raises(ReplyParseError):
        parse_choice(reply, LOAVES[:2])


def test_a_reply_with_two_different_selections_is_refused():
    with pytest.raises(ReplyParseError):
        parse_selection('First {"selected": [1]}, on reflection {"selected": [2, 3]}', 4)


@pytest.mark.parametrize(
    "reply",
    [
        '{"orig_cor": 1, "orig_cor": 0, "err_type": ["pa"], "sentences": ["f0"]}',
        '{"orig_cor": 0, "err_type": ["pa"], "sentences": ["f0"], "ORIG_COR": 1, "ERR_TYPE": [], "SENTENCES": []}',
    ],
)
def test_the_judge_refuses_two_verdicts_in_one_object(reply):
    log = ReasoningLog((Attempt(0, "I get 5. {R}"),))
    with pytest.raises(JudgementParseError):
        parse_judgement(reply, log)


def logprob_entry(token: str, logprob: float, alternatives: dict[str, float] | None = None) -> dict:
    top = [{"token": name, "logprob": value} for name, value in (alternatives or {token: logprob}).items()]
    return {"token": token, "logprob": logprob, "top_logprobs": top}


def test_letter_scores_names_the_problem_of_a_positive_logprob_instead_of_raising():
    payload = {"content": [logprob_entry("A", 800.0, {"A": 800.0, "B": -1.0})]}
    probabilities, position, problem = letter_scores(payload, 2)
    assert problem  # a log-probability above 0 is no probability: say so, as for NaN


def test_letter_scores_does_not_turn_an_unlikely_alternative_into_the_answer():
    payload = {
        "content": [
            logprob_entry("The", math.log(0.993), {"The": math.log(0.993), "A": math.log(0.007)}),
            logprob_entry(" answer", -0.01),
            logprob_entry(" is", -0.01),
            logprob_entry(" B", math.log(0.9), {" B": math.log(0.9), " A": math.log(0.1)}),
        ]
    }
    probabilities, position, problem = letter_scores(payload, 2)
    assert problem or probabilities[0] < 0.5  # the model wrote B; it never chose A


def test_logprobs_mode_never_scores_a_letter_inside_the_thinking(llm_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    tokens = [
        logprob_entry("<think>", -0.01),
        logprob_entry("A", math.log(0.8), {"A": math.log(0.8), "B": math.log(0.2)}),
        logprob_entry(" looks", -0.1),
        logprob_entry(" tempting", -0.1),
        logprob_entry("</think>", -0.01),
        logprob_entry("B", math.log(0.95), {"B": math.log(0.95), "A": math.log(0.05)}),
    ]
    llm_server.responder = lambda request: Reply(text="<think>A looks tempting</think>B", logprobs={"content": tokens})
    items = load_items()
    summary = run_async(
        run_tests(items, settings_for(llm_server, reasoning_tokens=64), out_dir=tmp_path, answer_mode="logprobs")
    )
    with summary.path.open(encoding="utf-8", newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["raw_reply"] == "B"]
    assert rows and all(row["reasoning"] == "A looks tempting" for row in rows)  # the reasoning is kept apart
    for row in rows:  # ...but the letter inside it is the answer scored
        probabilities = [float(p) for p in row["option_probabilities"].strip("[]").split(",")]
        assert probabilities[1] > 0.5, row["option_probabilities"]


# --- Claim 4: structured-output fallback --------------------------------------------------------------------------


def test_an_unrelated_400_does_not_turn_structured_output_off_for_later_calls(llm_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    settings = settings_for(llm_server)
    messages = [{"role": "user", "content": "Rate it."}]
    # A prompt too long for the context window: nothing to do with the schema.
    llm_server.script(Reply(status=400), '{"answer": "fine"}', '{"answer": "fine"}')
    run_async(complete(messages, settings, max_tokens=50, response_schema=SCHEMA))
    later = run_async(complete(messages, settings, max_tokens=50, response_schema=SCHEMA))
    assert later.ok
    assert llm_server.requests[-1]["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize(("status", "kind"), [(401, "http_error"), (429, "rate_limit"), (500, "server_error")])
def test_real_failures_are_not_schema_refusals(llm_server, monkeypatch, status, kind):
    """Holds: 401, 429 and a 500 that does not name response_format are errors, the schema shape stays."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm_server.script(Reply(status=status))
    record = run_async(
        complete([{"role": "user", "content": "x"}], settings_for(llm_server), max_tokens=20, response_schema=SCHEMA)
    )
    assert not record.ok and record.error_kind == kind and record.reply == ""
    assert len(llm_server.requests) == 1
    run_async(
        complete([{"role": "user", "content": "x"}], settings_for(llm_server), max_tokens=20, response_schema=SCHEMA)
    )
    assert llm_server.requests[-1]["response_format"]["type"] == "json_schema"


def test_a_refusing_endpoint_is_asked_at_most_three_times_and_only_it_forgets_the_schema(llm_server, monkeypatch):
    """Holds: the fallback ends (json_schema, json_object, none) and another model on the endpoint keeps its schema."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm_server.refuse_response_format = True
    record = run_async(
        complete([{"role": "user", "content": "x"}], settings_for(llm_server), max_tokens=20, response_schema=SCHEMA)
    )
    assert record.ok and record.structured is False and len(llm_server.requests) == 3
    llm_server.refuse_response_format = False
    other = settings_for(llm_server, model="other-model")
    run_async(complete([{"role": "user", "content": "x"}], other, max_tokens=20, response_schema=SCHEMA))
    assert llm_server.requests[-1]["response_format"]["type"] == "json_schema"
    assert all("max_tokens" in request for request in llm_server.requests)


def test_a_streamed_reply_of_reasoning_only_is_an_empty_reply_and_shows_nothing(llm_server, monkeypatch):
    """Holds: reasoning alone, or a whitespace reply after it, is a failed call and no piece is shown."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm_server.script(Reply(text=" \n ", reasoning="x" * 50_000), Reply(text="<think>only thinking</think>  "))

    async def collect():
        shown = []
        for _ in range(2):
            async for item in stream([{"role": "user", "content": "x"}], settings_for(llm_server), max_tokens=9):
                shown.append(item)
        return shown

    items = run_async(collect())
    records = [item for item in items if hasattr(item, "error_kind")]
    assert [record.error_kind for record in records] == ["empty_reply", "empty_reply"]
    assert "".join(item.text for item in items if hasattr(item, "text")).strip() == ""


# --- Claim 5: exports -------------------------------------------------------------------------------------------


def test_a_multi_line_reasoning_starting_with_a_formula_round_trips_through_the_bias_export(
    llm_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    thought = '=HYPERLINK("http://evil.example")\nFirst, C:\\temp\\new\n\tthen -1+2'
    four = '{"answer": "B", "probabilities": {"A": 0.1, "B": 0.7, "C": 0.1, "D": 0.1}}'
    two = '{"answer": "B", "probabilities": {"A": 0.3, "B": 0.7}}'

    def responder(request):
        prompt = request["messages"][1]["content"]
        text = '{"selected": [1]}' if "\nArguments:\n" in prompt else four if "\nD. " in prompt else two
        return Reply(text=text, reasoning=thought)

    llm_server.responder = responder
    summary = run_async(run_tests(load_items(), settings_for(llm_server), out_dir=tmp_path))
    with summary.path.open(encoding="utf-8", newline="") as handle:
        raw_cells = [row["reasoning"] for row in csv.DictReader(handle)]
    assert raw_cells and all(cell.startswith("'=HYPERLINK") for cell in raw_cells)  # neutralised (this part holds)
    rows = bias_report.read_rows([summary.path])
    assert set(rows["reasoning"]) == {thought}
