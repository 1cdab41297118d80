"""Bias test items (file validation, presentation, order, export rows) and the parsing of model replies."""

from __future__ import annotations

import copy
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.bias.export import EXPORT_COLUMNS, export_row
from backend.bias.items import (
    DEFAULT_ITEMS_PATH,
    ItemFileError,
    argument_order,
    build_sequence,
    load_items,
    parse_items,
    present,
)
from backend.bias.prompts import build_messages, reprompt_message, scripted_reply
from backend.bias.replies import ReplyParseError, option_probabilities_from_logprobs, parse_choice, parse_selection
from tests.support import examples

SAMPLE = json.loads(DEFAULT_ITEMS_PATH.read_text(encoding="utf-8"))
ITEMS = load_items()


def _index(item_id: str) -> int:
    return next(index for index, item in enumerate(SAMPLE["items"]) if item["id"] == item_id)


# --- the bundled item file -----------------------------------------------------------------------------------------
def test_sample_items_follow_the_reference_structures():
    by_bias: dict[str, list] = {}
    for item in ITEMS.items:
        by_bias.setdefault(item.bias, []).append(item)
    assert set(by_bias) == {"anchoring", "halo", "loss_aversion", "confirmation", "attention_check"}
    for item in by_bias["anchoring"]:
        assert len(item.options) == 4 and str(item.anchor) in item.anchor_sentence
    assert {item.experience for item in by_bias["halo"]} == {"positive", "negative"}
    assert all(item.loss_lambda > 1 for item in by_bias["loss_aversion"])
    for item in by_bias["confirmation"]:
        stances = [argument.stance for argument in item.arguments]
        assert len(stances) == 8 and stances.count("pro") == 4
    assert by_bias["loss_aversion"][0].versions == ("treatment",)


def test_presentation_puts_the_manipulation_in_the_treatment_only():
    anchoring = ITEMS.item("anchoring_bakery")
    assert anchoring.anchor_sentence not in present(anchoring, "control").paragraphs
    assert present(anchoring, "treatment").paragraphs[-1] == anchoring.anchor_sentence
    halo = ITEMS.item("halo_linen_supplier")
    control, treatment = present(halo, "control"), present(halo, "treatment")
    assert halo.experience_sentence in control.paragraphs and halo.experience_sentence in treatment.paragraphs
    assert halo.treatment_sentence in treatment.paragraphs and halo.treatment_sentence not in control.paragraphs
    assert [option.label for option in control.options] == ["2 weeks", "4 weeks", "6 weeks", "8 weeks"]


def test_loss_aversion_question_states_lambda_times_x_and_x():
    shown = present(ITEMS.item("loss_trade_fair"), "treatment")  # X = 20,000, lambda = 1.5
    assert "30,000 euros" in shown.question and "20,000 euros" in shown.question
    assert [option.value for option in shown.options] == [1, 0]
    with pytest.raises(ValueError, match="version must be one of"):
        present(ITEMS.item("loss_trade_fair"), "control")


def test_confirmation_arguments_follow_the_given_order():
    item = ITEMS.item("confirmation_home_office")
    order = argument_order(item, seed="someone")
    shown = present(item, "treatment", argument_order=order)
    assert [argument.id for argument in shown.arguments] == order
    assert sorted(order) == sorted(argument.id for argument in item.arguments)
    assert shown.kind == "arguments" and present(item, "control").kind == "choice"
    with pytest.raises(ValueError, match="argument_order must list each argument"):
        present(item, "treatment", argument_order=order[:-1])
    orders = {tuple(argument_order(item, seed=seed)) for seed in range(20)}
    assert len(orders) > 10


# --- item-file validation ------------------------------------------------------------------------------------------
def _mutated(item_id: str | None, change) -> dict:
    data = copy.deepcopy(SAMPLE)
    change(data["items"][_index(item_id)] if item_id else data)
    return data


BAD_FILES = {
    "no items": (lambda d: d.update(items=[]), None, "items: must be a non-empty list"),
    "only checks": (lambda d: d.update(items=[SAMPLE["items"][-1]]), None, "holds no bias test"),
    "duplicate id": (lambda d: d["items"].append(copy.deepcopy(d["items"][0])), None, "used by another item"),
    "bad id": (lambda i: i.update(id="has space"), "anchoring_bakery", r"\.id: must be letters"),
    "unknown bias": (lambda i: i.update(bias="framing"), "anchoring_bakery", r"\.bias: must be one of"),
    "no scenario": (lambda i: i.pop("scenario"), "halo_linen_supplier", r"\.scenario: must be a non-empty text"),
    "two numbers in anchor": (
        lambda i: i.update(anchor_sentence="Van 380 and bus 12."),
        "anchoring_bakery",
        "exactly one number",
    ),
    "anchor mismatch": (lambda i: i.update(anchor=381), "anchoring_bakery", "exactly one number, the anchor 381"),
    "one option": (lambda i: i.update(options=[150]), "anchoring_bakery", "at least two numbers"),
    "text option": (lambda i: i.update(options=[1, "two"]), "anchoring_bakery", "finite numbers only"),
    "repeated option": (lambda i: i.update(options=[1, 1, 2]), "anchoring_bakery", "must not repeat"),
    "bad option format": (
        lambda i: i.update(option_format="{amount}"),
        "anchoring_bakery",
        r"'\{amount\}' uses \{amount\}, but only \{value\} may stand in braces",
    ),
    "no value in option format": (
        lambda i: i.update(option_format="loaves"),
        "anchoring_bakery",
        r"option_format: must contain \{value\}",
    ),
    # {value:d} suits whole numbers only: a single non-integer option would fail in front of every participant
    "integer format, fractional option": (
        lambda i: i.update(options=[150, 250.5, 350], option_format="{value:d} loaves"),
        "anchoring_bakery",
        r"option_format: '\{value:d\} loaves' cannot show the option 250\.5 \(Unknown format code 'd'.*"
        r"such as '\{value\} loaves'",
    ),
    "attribute in format": (
        lambda i: i.update(option_format="{value.real} %"),
        "anchoring_bakery",
        r"uses \{value\.real\}, but only \{value\}",
    ),
    "unbalanced brace": (lambda i: i.update(option_format="{value} {"), "anchoring_bakery", r"is not a valid format"),
    "gigabyte width": (
        lambda i: i.update(option_format="{value:999999999}"),
        "anchoring_bakery",
        r"width or precision of 999999999",
    ),
    "labels that look alike": (
        lambda i: i.update(options=[1.2, 1.4, 2.6], option_format="{value:.0f} weeks"),
        "halo_linen_supplier",
        r"shows the options 1\.2 and 1\.4 both as '1 weeks'",
    ),
    "integer money format": (
        lambda i: i.update(money_format="{amount:d} euros"),
        "loss_app_promotion",
        r"money_format: '\{amount:d\} euros' cannot show the gain 12000\.0 \(lambda x amount\) "
        r"\(Unknown format code 'd' for object of type 'float'\)\. Write \{amount\} where the sum goes",
    ),
    "money format without amount": (
        lambda i: i.update(money_format="{value} euros"),
        "loss_app_promotion",
        r"money_format: '\{value\} euros' uses \{value\}, but only \{amount\}",
    ),
    "question formats money again": (
        lambda i: i.update(question="Earn {gain:.2f} or lose {loss}?"),
        "loss_app_promotion",
        r"question: 'Earn \{gain:\.2f\} or lose \{loss\}\?' cannot show the gain '12,000 euros'.*"
        r"without a number format",
    ),
    "unknown placeholder in question": (
        lambda i: i.update(question="Earn {gain} or lose {loss} in {year}?"),
        "loss_app_promotion",
        r"uses \{year\}, but only \{gain\} and \{loss\}",
    ),
    "escape code in scenario": (
        lambda i: i.update(scenario="A \x1b[31mred\x1b[0m scenario."),
        "halo_linen_supplier",
        r"\.scenario: holds the control character U\+001B at character 3",
    ),
    "bidi override in argument": (
        lambda i: i["arguments"][0].update(text="Cheaper \u202eevil"),
        "confirmation_home_office",
        r"arguments\[0\]\.text: holds the control character U\+202E",
    ),
    "newline in an option text": (
        lambda i: i.update(options=["Always", "Never\nagain", "Sometimes"]),
        "attention_reading",
        r"options\[1\]: holds the control character U\+000A",
    ),
    "overlong scenario": (
        lambda i: i.update(scenario="x" * 2001),
        "halo_linen_supplier",
        r"\.scenario: is 2,001 characters long; at most 2,000",
    ),
    "too many options": (lambda i: i.update(options=list(range(21))), "anchoring_bakery", r"at most 20 are allowed"),
    "huge lambda": (lambda i: i.update(**{"lambda": 1e6}), "loss_app_promotion", r"\.lambda: must not exceed 100"),
    "huge amount": (lambda i: i.update(amount=1e300), "loss_app_promotion", r"\.amount: must not exceed"),
    "halo not monotone": (lambda i: i.update(options=[2, 6, 4, 8]), "halo_linen_supplier", "monotone"),
    "halo experience": (lambda i: i.update(experience="neutral"), "halo_linen_supplier", "'positive' or 'negative'"),
    "lambda zero": (lambda i: i.update(**{"lambda": 0}), "loss_app_promotion", r"\.lambda: must be positive"),
    "lambda text": (lambda i: i.update(**{"lambda": "1.5"}), "loss_app_promotion", r"\.lambda: must be a finite"),
    "no gain placeholder": (lambda i: i.update(question="Lose {loss}?"), "loss_app_promotion", r"contain \{gain"),
    "unbalanced arguments": (
        lambda i: i["arguments"][0].update(stance="con"),
        "confirmation_home_office",
        "as many pro as con",
    ),
    "duplicate argument": (
        lambda i: i["arguments"][1].update(id=i["arguments"][0]["id"]),
        "confirmation_home_office",
        "ids must be unique",
    ),
    "bad stance": (lambda i: i["arguments"][0].update(stance="maybe"), "confirmation_home_office", "'pro' or 'con'"),
    "wrong correct": (lambda i: i.update(correct="Never"), "attention_reading", r"\.correct: must be one of"),
}


@pytest.mark.parametrize("case", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_item_file_errors_name_the_file_item_and_field(case):
    change, item_id, message = case
    with pytest.raises(ItemFileError, match=message) as raised:
        parse_items(_mutated(item_id, change), source="mine.json")
    assert str(raised.value).startswith("mine.json: ")
    if item_id:
        assert f"items[{_index(item_id)}]" in str(raised.value)


def test_item_file_must_exist_be_utf8_and_json_and_a_windows_bom_is_accepted(tmp_path):
    with pytest.raises(ItemFileError, match=r"The item file 'missing.json' was not found \(looked for /"):
        load_items(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x",\n "items": [,]}', encoding="utf-8")
    with pytest.raises(ItemFileError, match=r"The item file 'broken.json' is not valid JSON: line 2, column 12"):
        load_items(broken)
    latin = tmp_path / "latin.json"
    latin.write_bytes(json.dumps(SAMPLE, ensure_ascii=False).replace("café", "cafe").encode() + b'\n"caf\xe9"')
    with pytest.raises(ItemFileError, match=r"'latin.json' is not UTF-8 text: byte 0xe9 at line 2, position \d+"):
        load_items(latin, what="The item file 'latin.json'")
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(SAMPLE).encode())  # as Notepad and Excel save "UTF-8"
    assert load_items(bom) == ITEMS.__class__(**{**ITEMS.__dict__, "source": "bom.json"})


def test_every_shown_text_of_an_accepted_file_can_be_shown():
    """Whole-number formats work with whole-number options (2.0 counts as 2); a literal brace can be doubled."""
    data = _mutated("anchoring_bakery", lambda i: i.update(options=[150, 250.0, 350], option_format="{value:d} {{x}}"))
    items = parse_items(data, source="mine.json")
    labels = [option.label for option in present(items.item("anchoring_bakery"), "control").options]
    assert labels == ["150 {x}", "250 {x}", "350 {x}"]


def test_researcher_file_with_other_sizes_loads(tmp_path):
    data = copy.deepcopy(SAMPLE)
    data["name"] = "mine"
    confirmation = data["items"][_index("confirmation_early_payment")]
    confirmation["arguments"] = confirmation["arguments"][:2] + confirmation["arguments"][4:6]
    data["items"][_index("anchoring_bakery")]["options"] = [100, 200, 300, 400, 500, 600]
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    items = load_items(path)
    assert items.name == "mine" and len(items.item("confirmation_early_payment").arguments) == 4
    assert len(present(items.item("anchoring_bakery"), "control").options) == 6


# --- order of tests ------------------------------------------------------------------------------------------------
@settings(max_examples=examples(200), deadline=None)
@given(st.text(max_size=12), st.sets(st.sampled_from([item.id for item in ITEMS.items]), min_size=2))
def test_sequence_has_controls_first_and_never_a_tests_two_versions_back_to_back(seed, chosen_ids):
    items = [item for item in ITEMS.items if item.id in chosen_ids]
    sequence = build_sequence(items, seed=seed)  # any second item (or check) can separate two versions
    assert sorted(sequence) == sorted((item.id, version) for item in items for version in item.versions)
    versions = [version for _, version in sequence if version != "check"]
    assert versions == sorted(versions)  # "control" < "treatment"
    assert all(first[0] != second[0] for first, second in zip(sequence, sequence[1:], strict=False))
    assert sequence == build_sequence(items, seed=seed)


def test_sequence_differs_between_respondents_and_rejects_impossible_sets():
    orders = {tuple(build_sequence(ITEMS.items, seed=f"P{number}")) for number in range(10)}
    assert len(orders) == 10
    single = [ITEMS.item("anchoring_bakery")]
    with pytest.raises(ValueError, match="back to back"):
        build_sequence(single, seed=1)
    with pytest.raises(ValueError, match="at least one item"):
        build_sequence([], seed=1)


# --- export rows ---------------------------------------------------------------------------------------------------
def _row(item_id, version, **answer):
    item = ITEMS.item(item_id)
    shown = present(item, version)
    return export_row(item, shown, respondent_kind="person", respondent_id="abc", item_set="s", position=3, **answer)


def test_export_rows_have_every_column_and_the_test_parameters():
    row = _row("anchoring_bakery", "treatment", answer=350, confidence=0.7, confidence_source="slider")
    assert tuple(row) == EXPORT_COLUMNS
    assert (row["answer"], row["answer_label"], row["anchor"], row["confidence"]) == (350, "350 loaves", 380, 0.7)
    assert row["confidence_source"] == "slider" and _row("anchoring_bakery", "control", answer=150)["confidence"] == ""
    assert json.loads(row["options"]) == [150, 250, 350, 450]
    loss = _row("loss_pilot_route", "treatment", answer=0)
    assert loss["lambda"] == 2.5 and loss["answer_label"] == "No, decline"
    check = _row("attention_reading", "check", answer=2)
    assert check["is_correct"] == 1 and _row("attention_reading", "check", answer=0)["is_correct"] == 0


def test_export_row_counts_selected_pro_and_con_arguments():
    row = _row("confirmation_home_office", "treatment", selected=["commute", "focus", "mentoring"])
    assert (row["pro_selected"], row["con_selected"], row["n_arguments"]) == (2, 1, 8)
    assert json.loads(row["arguments_selected"]) == ["commute", "focus", "mentoring"]
    assert len(json.loads(row["arguments_shown"])) == 8 and row["answer"] == ""


def test_export_row_keeps_unparseable_replies_without_an_answer():
    item = ITEMS.item("halo_cyclist_campaign")
    row = export_row(
        item,
        present(item, "control"),
        respondent_kind="model",
        respondent_id="m#1",
        item_set="s",
        position=1,
        status="unparseable",
        raw_reply="I think\nmaybe C",
        model="m",
        run=1,
    )
    assert row["answer"] == "" and row["status"] == "unparseable" and row["raw_reply"] == "I think\\nmaybe C"


@pytest.mark.parametrize(
    "item_id, version, answer, message",
    [
        ("anchoring_bakery", "control", {"answer": 300}, "answer must be one of"),
        ("anchoring_bakery", "control", {}, "answer must be one of"),
        ("loss_app_promotion", "treatment", {"answer": True}, "answer must be one of"),
        ("confirmation_home_office", "treatment", {"selected": ["commute", "invented"]}, "were not offered"),
        ("confirmation_home_office", "treatment", {"selected": []}, "at least one argument"),
        ("confirmation_home_office", "treatment", {"selected": ["focus", "focus"]}, "twice"),
        ("halo_linen_supplier", "control", {"answer": 2, "confidence": 1.5}, "confidence must lie between"),
        ("halo_linen_supplier", "control", {"answer": 2, "confidence": math.nan}, "confidence must be a number"),
        ("halo_linen_supplier", "control", {"answer": 2, "option_probabilities": [1]}, "one probability per"),
        ("halo_linen_supplier", "control", {"answer": 2, "confidence": 0.5}, "confidence_source must be"),
    ],
)
def test_export_row_rejects_answers_that_were_not_offered(item_id, version, answer, message):
    with pytest.raises(ValueError, match=message):
        _row(item_id, version, **answer)


# --- model replies -------------------------------------------------------------------------------------------------
LABELS = ["150 loaves", "250 loaves", "350 loaves", "450 loaves"]


@pytest.mark.parametrize(
    "reply, index, probabilities",
    [
        ('{"answer": "C", "probabilities": {"A": 0.1, "B": 0.2, "C": 0.6, "D": 0.1}}', 2, (0.1, 0.2, 0.6, 0.1)),
        ('Sure!\n```json\n{"answer": "b", "probabilities": [10, 60, 20, 10]}\n```', 1, (0.1, 0.6, 0.2, 0.1)),
        ('{"Answer": "(A)", "probabilities": {"A": "70%", "B": "30%"}}', 0, (0.7, 0.3, 0, 0)),
        ('{"answer": "D", "confidence": 0.7}', 3, (0.1, 0.1, 0.1, 0.7)),
        ('{"answer": "450 loaves"}', 3, None),
        ("After thinking it over, my answer is B.", 1, None),
        ("  D. ", 3, None),
    ],
)
def test_parse_choice_reads_the_answer_and_stated_probabilities(reply, index, probabilities):
    parsed = parse_choice(reply, LABELS)
    assert parsed.index == index
    if probabilities is None:
        assert parsed.probabilities is None and parsed.confidence is None
    else:
        assert parsed.probabilities == pytest.approx(probabilities)
        assert parsed.confidence == pytest.approx(probabilities[index])


@pytest.mark.parametrize(
    "reply, message",
    [
        ("", "empty"),
        ("I would rather not say.", "names no option"),
        ('{"answer": "E"}', "not one of the letters"),
        ('{"choice_made": "A"}', 'no "answer"'),
        ('{"answer": "A", "probabilities": {"A": 0.5, "Z": 0.5}}', "do not exist"),
        ('{"answer": "A", "probabilities": {"A": 0.2, "B": 0.2}}', "add up to 0.4"),
        ('{"answer": "A", "probabilities": {"A": -0.5, "B": 1.5}}', "non-negative"),
        ('{"answer": "A", "probabilities": "high"}', "neither"),
    ],
)
def test_parse_choice_refuses_to_guess(reply, message):
    with pytest.raises(ReplyParseError, match=message):
        parse_choice(reply, LABELS)


ACCEPT = ["Yes, accept", "No, decline"]


@pytest.mark.parametrize(
    "reply, labels, index, source",
    [
        ("A. 150 loaves", LABELS, 0, "letter"),
        ("B) I would expect about that many.", LABELS, 1, "letter"),
        ("(C)", LABELS, 2, "letter"),
        ("**D**", LABELS, 3, "letter"),
        ("Answer: B", LABELS, 1, "answer_line"),
        ("The answer is: D.", LABELS, 3, "answer_line"),  # SmolLM2's most frequent shape
        ("The answer is (C) because the street is busy.", LABELS, 2, "answer_line"),
        ("250 loaves.", LABELS, 1, "option_text"),
        ("Yes, I agree.", ["Yes, I agree", "No, I do not agree"], 0, "option_text"),
        ("No. The risk is too high for a small firm.", ACCEPT, 1, "yes_no"),
        ("yes", ACCEPT, 0, "yes_no"),
    ],
)
def test_parse_choice_reads_the_common_unambiguous_shapes(reply, labels, index, source):
    parsed = parse_choice(reply, labels)
    assert (parsed.index, parsed.source) == (index, source)


@pytest.mark.parametrize(
    "reply, labels",
    [
        ("A or B, hard to say.", LABELS),  # no marker at all
        ("A. 250 loaves", LABELS),  # the letter and the text name different options
        ("(A) or (B)", LABELS),
        ("Answer: A\nAnswer: C", LABELS),
        ("Yes. Answer: B", ACCEPT),  # yes names A, the answer line B
        ("A good question; I would say 350.", LABELS),  # 'A' is a word here, not a marker
        ("Yes", LABELS),  # yes/no only for accept and agree tests
        ("I think it depends.", ACCEPT),
    ],
)
def test_parse_choice_refuses_ambiguous_or_unmarked_text(reply, labels):
    with pytest.raises(ReplyParseError):
        parse_choice(reply, labels)


def test_parse_choice_can_require_probabilities():
    with pytest.raises(ReplyParseError, match="no JSON object"):
        parse_choice("Answer: B", LABELS, require_probabilities=True)
    with pytest.raises(ReplyParseError, match='no "probabilities"'):
        parse_choice('{"answer": "B"}', LABELS, require_probabilities=True)


def test_parse_selection_accepts_json_or_a_line_and_checks_the_range():
    assert parse_selection('Here: {"selected": ["3", 7]}', 8) == [3, 7]
    assert parse_selection("Selected: 2 and 4", 8) == [2, 4]
    for reply, message in [
        ('{"selected": []}', "selects no argument"),
        ('{"selected": [0, 9]}', "only arguments 1 to 8"),
        ('{"selected": [2, 2]}', "twice"),
        ('{"selected": "all"}', 'no "selected" list'),
        ("All of them.", "no list of argument numbers"),
        ('{"selected": [1.5]}', "not an argument number"),
    ]:
        with pytest.raises(ReplyParseError, match=message):
            parse_selection(reply, 8)


def test_probabilities_from_logprobs_use_the_answer_tokens_alternatives():
    def token(text, probability, alternatives=()):
        top = [{"token": t, "logprob": math.log(p)} for t, p in alternatives]
        return {"token": text, "logprob": math.log(probability), "top_logprobs": top}

    content = [
        token("{", 1.0),
        token('"', 1.0, [("A", 0.001)]),  # a letter before the "answer" key is not the answer
        token("answer", 1.0),
        token('":', 1.0),
        token(' "', 1.0),
        token("C", 0.5, [("C", 0.5), (" A", 0.2), ("a", 0.1), ("B", 0.1), ("maybe", 0.1)]),
        token('"}', 1.0),
    ]
    probabilities = option_probabilities_from_logprobs({"content": content}, 4)
    assert probabilities == pytest.approx((0.3 / 0.9, 0.1 / 0.9, 0.5 / 0.9, 0.0))
    # the chosen token missing from its own alternatives still counts
    lone = option_probabilities_from_logprobs({"content": [token("B", 0.8, [("A", 0.2)])]}, 2)
    assert lone == pytest.approx((0.2, 0.8))
    assert option_probabilities_from_logprobs(None, 4) is None
    assert option_probabilities_from_logprobs({"content": [token("Hello", 1.0)]}, 4) is None


def test_prompts_list_the_options_and_arguments_and_the_scripted_model_answers_them():
    for item in ITEMS.items:
        for version in item.versions:
            shown = present(item, version, argument_order=argument_order(item, seed=1) if item.arguments else None)
            messages = build_messages(shown)
            prompt = messages[-1]["content"]
            assert all(paragraph in prompt for paragraph in shown.paragraphs) and shown.question in prompt
            reply = scripted_reply(messages)
            assert reply == scripted_reply(messages)
            if shown.kind == "arguments":
                assert all(f"{n}. {argument.text}" in prompt for n, argument in enumerate(shown.arguments, 1))
                assert parse_selection(reply, len(shown.arguments))
            else:
                assert all(option.label in prompt for option in shown.options)
                assert parse_choice(reply, [o.label for o in shown.options], require_probabilities=True)
    follow_up = reprompt_message("the reply names no option letter")
    assert follow_up["role"] == "user" and "names no option letter" in follow_up["content"]


SPECS = st.sampled_from(["", ":d", ":,d", ":,.0f", ":.2f", ":>8", ":x", ":c", ":%", ":e", ":s", "!r", ":>200"])
TEXT = st.text(alphabet="ab €%{}", max_size=3)


def _format_text(*names: str):
    """A format a researcher might write: text around placeholders, each with a format spec that may not suit."""
    pieces = [st.tuples(TEXT, st.sampled_from([name, name, "value", "amount"]), SPECS) for name in names]
    return st.tuples(*pieces, TEXT).map(
        lambda parts: "".join(f"{before}{{{name}{spec}}}" for before, name, spec in parts[:-1]) + parts[-1]
    )


NUMBER = st.one_of(st.integers(-(10**6), 10**6), st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: round(x, 3)))


@settings(max_examples=examples(300), deadline=None)
@given(
    option_format=_format_text("value"),
    options=st.lists(NUMBER, min_size=2, max_size=5, unique=True),
    money_format=_format_text("amount"),
    question=_format_text("gain", "loss"),
    amount=st.floats(0.01, 1e6, allow_nan=False),
    loss_lambda=st.floats(0.01, 10, allow_nan=False),
)
def test_an_accepted_item_file_can_show_every_version(
    option_format, options, money_format, question, amount, loss_lambda
):
    """Whatever formats a researcher writes, a file is either refused with ItemFileError or every version of every
    item can be shown and asked (what used to fail mid-study with HTTP 500 fails at validation instead)."""
    data = copy.deepcopy(SAMPLE)
    data["items"][_index("anchoring_bakery")].update(options=options, option_format=option_format)
    data["items"][_index("loss_app_promotion")].update(
        money_format=money_format, question=question, amount=amount, **{"lambda": loss_lambda}
    )
    try:
        items = parse_items(data, source="mine.json")
    except ItemFileError:
        return
    for item in items.items:
        for version in item.versions:
            shown = present(item, version, argument_order=None)
            build_messages(shown)
            assert all(0 < len(option.label) <= 200 for option in shown.options)
