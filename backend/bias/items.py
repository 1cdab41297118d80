"""Cognitive-bias test items: the item file, what a respondent sees, and the order of tests.

The same module serves the ``bias_tests`` app (people) and ``backend.bias.runner`` (models), so both ask the same
questions (and both write the columns of ``backend.bias.export``). The readers of single fields (text, numbers,
option lists, format texts) are in ``backend.bias.item_fields``.

Item file (JSON; the bundled ``backend/bias/data/bias_items.json`` was written for this project, a researcher can pass
their own through the session config key ``item_file`` or ``--items``)::

    {"name": "...", "title": "...", "language": "en", "items": [ITEM, ...]}

``language`` (optional) declares the file's language (`backend.core.material_language`): a session whose pages are in
another language refuses the file unless ``allow_material_language_mismatch`` confirms it; without it the file is
undeclared and accepted in any session.

Every item has ``id`` (letters, digits, ``_``/``-``), ``bias`` and ``scenario``; the rest depends on the bias:

- ``anchoring`` (control + treatment): ``question``, ``options`` (at least two distinct numbers), optional
  ``option_format`` (``"{value} %"``), ``anchor_sentence`` (shown in the treatment only; holds exactly one number)
  and ``anchor`` (that number).
- ``halo`` (control + treatment): ``experience`` (``positive`` or ``negative``), ``experience_sentence`` (both
  versions), ``question``, ``options`` (numbers ordered from the most optimistic to the most pessimistic, so strictly
  monotone), optional ``option_format``, ``treatment_sentence`` (treatment only).
- ``loss_aversion`` (treatment only): ``amount`` X > 0, ``lambda`` > 0, ``question`` holding ``{gain}`` (lambda * X)
  and ``{loss}`` (X), optional ``money_format`` (``"{amount:,.0f} euros"``). Answers: 1 = accept, 0 = decline.
- ``confirmation``: ``statement``; control ``control_question`` (default: do you agree?) answered 1 = agree,
  0 = disagree; treatment ``treatment_question`` with ``arguments`` [{"id", "stance": "pro"|"con", "text"}], as many
  pro as con (the reference uses 4 + 4), shown in a seeded shuffled order; at least one must be selected.
- ``attention_check`` (one ``check`` version): ``question``, ``options`` (labels), ``correct`` (one of them).

Problems raise ``ItemFileError`` (a ``ValueError``) naming the file, the item and the field. Validation builds every
formatted text once, so what a respondent or model will see later is known to work when the file is accepted:
every option goes through its ``option_format``, the gain and the loss through ``money_format``, the question
through ``{gain}``/``{loss}``. Texts must be plain text (no control characters) of
sane length, and numbers sane in size.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.bias.item_fields import (
    MAX_LABEL_CHARS,
    MAX_OPTIONS,
    MAX_TEXT_CHARS,
    ItemFileError,
    filled,
    number_field,
    numeric_options,
    plain_text,
    template_field,
    text_field,
)
from backend.core import researcher_files
from backend.core.material_language import declared_language

DEFAULT_ITEMS_PATH = Path(__file__).resolve().parent / "data" / "bias_items.json"

BIASES = ("anchoring", "halo", "loss_aversion", "confirmation")
ATTENTION_CHECK = "attention_check"
CONTROL, TREATMENT, CHECK = "control", "treatment", "check"
VERSIONS = {
    "anchoring": (CONTROL, TREATMENT),
    "halo": (CONTROL, TREATMENT),
    "loss_aversion": (TREATMENT,),
    "confirmation": (CONTROL, TREATMENT),
    ATTENTION_CHECK: (CHECK,),
}
DEFAULT_AGREE_QUESTION = "Do you agree with this statement?"
DEFAULT_ARGUMENTS_QUESTION = "Which of the following arguments would you take into account? Select all that apply."
ACCEPT_LABELS = ((1, "Yes, accept"), (0, "No, decline"))
AGREE_LABELS = ((1, "Yes, I agree"), (0, "No, I do not agree"))

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
MAX_LAMBDA = 100
MAX_ARGUMENTS = 20
MAX_ITEMS = 200


@dataclass(frozen=True)
class Argument:
    id: str
    stance: str  # pro | con
    text: str


@dataclass(frozen=True)
class Option:
    value: float | int
    label: str


@dataclass(frozen=True)
class BiasItem:
    id: str
    bias: str
    scenario: str
    question: str = ""
    options: tuple = ()
    option_format: str = "{value}"
    anchor: float | None = None
    anchor_sentence: str = ""
    experience: str = ""
    experience_sentence: str = ""
    treatment_sentence: str = ""
    amount: float | None = None
    loss_lambda: float | None = None
    money_format: str = "{amount:,.0f}"
    statement: str = ""
    control_question: str = DEFAULT_AGREE_QUESTION
    treatment_question: str = DEFAULT_ARGUMENTS_QUESTION
    arguments: tuple[Argument, ...] = ()
    correct: str = ""

    @property
    def versions(self) -> tuple[str, ...]:
        return VERSIONS[self.bias]

    def argument(self, argument_id: str) -> Argument:
        for argument in self.arguments:
            if argument.id == argument_id:
                return argument
        raise ValueError(f"argument {argument_id!r} is not one of item {self.id!r}'s arguments.")


@dataclass(frozen=True)
class ItemSet:
    name: str
    title: str
    language: str | None  # the declared language; None when the file declares none
    items: tuple[BiasItem, ...]
    source: str = "<mapping>"
    by_id: dict[str, BiasItem] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        self.by_id.update({item.id: item for item in self.items})

    def item(self, item_id: str) -> BiasItem:
        try:
            return self.by_id[item_id]
        except KeyError:
            raise ValueError(f"item_id {item_id!r} is not in the item set {self.name!r}.") from None


@dataclass(frozen=True)
class Presented:
    """What a respondent sees for one test version: paragraphs, a question, and options or arguments."""

    item_id: str
    bias: str
    version: str
    paragraphs: tuple[str, ...]
    question: str
    options: tuple[Option, ...] = ()
    arguments: tuple[Argument, ...] = ()

    @property
    def kind(self) -> str:
        return "arguments" if self.arguments else "choice"

    def option_values(self) -> list:
        return [option.value for option in self.options]


# --- loading and validation ----------------------------------------------------------------------------------------
def load_items(path: str | Path | None = None, *, what: str | None = None) -> ItemSet:
    """Read and validate an item file (the bundled sample when ``path`` is None).

    ``what`` names the file in messages about reading it (default: ``The item file '<name>'``); a UTF-8 byte-order
    mark is accepted, other encodings and bad JSON are refused with the line (``backend.core.researcher_files``).

    >>> items = load_items()
    >>> sorted({item.bias for item in items.items})
    ['anchoring', 'attention_check', 'confirmation', 'halo', 'loss_aversion']
    """
    path = Path(path) if path is not None else DEFAULT_ITEMS_PATH
    what = what or f"The item file {path.name!r}"
    try:
        text = researcher_files.read_text(path, what=what)
    except ValueError as error:
        raise ItemFileError(str(error)) from None
    return parse_items_text(text, source=path.name, what=what)


def parse_items_text(text: str, *, source: str, what: str | None = None) -> ItemSet:
    """Validate the text of an item file (JSON) and return the ``ItemSet``; ``source`` names the file in messages.

    >>> parse_items_text('{"items": [}', source="mine.json")
    Traceback (most recent call last):
    ...
    backend.bias.item_fields.ItemFileError: mine.json is not valid JSON: line 1, column 12: Expecting value.
    """
    try:
        data = researcher_files.parse_json(text, what=what or source)
    except ValueError as error:
        raise ItemFileError(str(error)) from None
    return parse_items(data, source=source)


def parse_items(data: Any, *, source: str = "<mapping>") -> ItemSet:
    """Validate an item mapping (the parsed JSON of an item file) and return the ``ItemSet``.

    Every text a respondent will see is built once here (each option through ``option_format``, the gain and the
    loss through ``money_format``, the loss question with both), so an item that would fail in front of a respondent
    is refused now, with the file, the item, the field and the value:

    >>> item = {"id": "a1", "bias": "anchoring", "scenario": "S.", "question": "Q?", "options": [1, 2.5],
    ...         "option_format": "{value:d} units", "anchor": 7, "anchor_sentence": "It was 7."}
    >>> parse_items({"items": [item]}, source="mine.json")
    Traceback (most recent call last):
    ...
    backend.bias.item_fields.ItemFileError: mine.json: items[0] (a1).option_format: '{value:d} units' cannot show the option 2.5 (Unknown format code 'd' for object of type 'float'). Write a format that suits every option, such as '{value} units' or '{value:g} units'.
    """
    if not isinstance(data, Mapping):
        raise ItemFileError(f"{source}: must be a JSON object with an 'items' list.")
    raw_items = data.get("items")
    if not isinstance(raw_items, list) or not raw_items:
        raise ItemFileError(f"{source}: items: must be a non-empty list.")
    if len(raw_items) > MAX_ITEMS:
        raise ItemFileError(f"{source}: items: holds {len(raw_items)} items; at most {MAX_ITEMS} are allowed.")
    items = [_parse_item(raw, f"{source}: items[{index}]") for index, raw in enumerate(raw_items)]
    seen: set[str] = set()
    for index, item in enumerate(items):
        if item.id in seen:
            raise ItemFileError(f"{source}: items[{index}].id: {item.id!r} is used by another item.")
        seen.add(item.id)
    if not any(item.bias in BIASES for item in items):
        raise ItemFileError(f"{source}: items: holds no bias test, only attention checks.")
    name = data.get("name", Path(source).stem)
    if not isinstance(name, str) or not _ID.match(name):
        raise ItemFileError(f"{source}: name: must be a short identifier (letters, digits, _ or -), got {name!r}.")
    title = data.get("title", name)
    if not isinstance(title, str) or not title.strip():
        raise ItemFileError(f"{source}: title: must be a non-empty text.")
    plain_text(title, f"{source}: title", max_chars=MAX_LABEL_CHARS, line_breaks=False)
    try:
        language = declared_language(data, what=source)  # None: undeclared (backend.core.material_language)
    except ValueError as error:
        raise ItemFileError(str(error)) from None
    return ItemSet(name=name, title=title, language=language, items=tuple(items), source=source)


def _option_labels(fields: dict[str, Any], where: str) -> None:
    """Format every option with the item's ``option_format``, as the respondent will see it."""
    template, field = fields["option_format"], f"{where}.option_format"
    example = re.sub(r"\{value[^}]*\}", "{value}", template)
    hint = (
        f"Write a format that suits every option, such as {example!r} or {example.replace('{value}', '{value:g}')!r}."
    )
    labels: dict[str, Any] = {}
    for value in fields["options"]:
        label = filled(template, field, f"the option {value!r}", hint, value=_plain_number(value))
        if len(label) > MAX_LABEL_CHARS:
            raise ItemFileError(
                f"{field}: shows the option {value!r} in {len(label)} characters; at most {MAX_LABEL_CHARS}."
            )
        if label in labels:
            raise ItemFileError(
                f"{field}: {template!r} shows the options {labels[label]!r} and {value!r} both as {label!r}, so "
                "respondents could not tell them apart."
            )
        labels[label] = value


def _money_texts(fields: dict[str, Any], where: str) -> None:
    """Format the gain (lambda x amount) and the loss (amount) with ``money_format``, then the question with both."""
    template, field = fields["money_format"], f"{where}.money_format"
    gain, loss = fields["loss_lambda"] * fields["amount"], fields["amount"]
    hint = "Write {amount} where the sum goes, optionally with a number format, e.g. '{amount:,.0f} euros'."
    gain_text = filled(template, field, f"the gain {gain!r} (lambda x amount)", hint, amount=gain)
    loss_text = filled(template, field, f"the loss {loss!r} (the amount)", hint, amount=loss)
    filled(
        fields["question"],
        f"{where}.question",
        f"the gain {gain_text!r} and the loss {loss_text!r}",
        "Write {gain} and {loss} where the two sums go, without a number format (money_format formats them).",
        gain=gain_text,
        loss=loss_text,
    )


def _parse_item(raw: Any, where: str) -> BiasItem:
    if not isinstance(raw, Mapping):
        raise ItemFileError(f"{where}: must be a JSON object.")
    item_id = raw.get("id")
    if not isinstance(item_id, str) or not _ID.match(item_id):
        raise ItemFileError(f"{where}.id: must be letters, digits, _ or - (at most 64), got {item_id!r}.")
    where = f"{where} ({item_id})"
    bias = raw.get("bias")
    if bias not in VERSIONS:
        raise ItemFileError(f"{where}.bias: must be one of {', '.join(VERSIONS)}, got {bias!r}.")
    fields: dict[str, Any] = dict(id=item_id, bias=bias, scenario=text_field(raw, "scenario", where))
    if bias in ("anchoring", "halo"):
        fields["question"] = text_field(raw, "question", where)
        fields["options"] = numeric_options(raw, where)
        fields["option_format"] = template_field(raw, "option_format", where, default="{value}", placeholders=["value"])
        _option_labels(fields, where)
    if bias == "anchoring":
        fields["anchor"] = number_field(raw, "anchor", where)
        sentence = fields["anchor_sentence"] = text_field(raw, "anchor_sentence", where)
        numbers = [float(match.replace(",", "")) for match in _NUMBER.findall(sentence)]
        if len(numbers) != 1 or numbers[0] != abs(fields["anchor"]):
            raise ItemFileError(
                f"{where}.anchor_sentence: must hold exactly one number, the anchor {fields['anchor']!r}; "
                f"found {numbers}."
            )
    elif bias == "halo":
        if raw.get("experience") not in ("positive", "negative"):
            raise ItemFileError(f"{where}.experience: must be 'positive' or 'negative', got {raw.get('experience')!r}.")
        fields["experience"] = raw["experience"]
        fields["experience_sentence"] = text_field(raw, "experience_sentence", where)
        fields["treatment_sentence"] = text_field(raw, "treatment_sentence", where)
        steps = [b - a for a, b in zip(fields["options"], fields["options"][1:], strict=False)]
        if not (all(step > 0 for step in steps) or all(step < 0 for step in steps)):
            raise ItemFileError(f"{where}.options: must run from most optimistic to most pessimistic (monotone).")
    elif bias == "loss_aversion":
        fields["amount"] = number_field(raw, "amount", where, positive=True)
        fields["loss_lambda"] = number_field(raw, "lambda", where, positive=True, maximum=MAX_LAMBDA)
        fields["money_format"] = template_field(
            raw, "money_format", where, default="{amount:,.0f}", placeholders=["amount"]
        )
        fields["question"] = template_field(
            raw, "question", where, default="", placeholders=["gain", "loss"], max_chars=MAX_TEXT_CHARS
        ).strip()
        _money_texts(fields, where)
    elif bias == "confirmation":
        fields["statement"] = text_field(raw, "statement", where)
        fields["control_question"] = text_field(raw, "control_question", where, default=DEFAULT_AGREE_QUESTION)
        fields["treatment_question"] = text_field(raw, "treatment_question", where, default=DEFAULT_ARGUMENTS_QUESTION)
        fields["arguments"] = _arguments(raw.get("arguments"), where)
    else:
        fields["question"] = text_field(raw, "question", where)
        options = raw.get("options")
        if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) and o for o in options):
            raise ItemFileError(f"{where}.options: must list at least two option texts.")
        if len(options) > MAX_OPTIONS:
            raise ItemFileError(f"{where}.options: lists {len(options)} texts; at most {MAX_OPTIONS} are allowed.")
        for index, option in enumerate(options):
            plain_text(option, f"{where}.options[{index}]", max_chars=MAX_LABEL_CHARS, line_breaks=False)
        if len(set(options)) != len(options):
            raise ItemFileError(f"{where}.options: must not repeat an option.")
        fields["options"] = tuple(options)
        if raw.get("correct") not in options:
            raise ItemFileError(f"{where}.correct: must be one of the options, got {raw.get('correct')!r}.")
        fields["correct"] = raw["correct"]
    return BiasItem(**fields)


def _arguments(raw: Any, where: str) -> tuple[Argument, ...]:
    if not isinstance(raw, list) or len(raw) < 2:
        raise ItemFileError(f"{where}.arguments: must list at least two arguments.")
    if len(raw) > MAX_ARGUMENTS:
        raise ItemFileError(f"{where}.arguments: lists {len(raw)} arguments; at most {MAX_ARGUMENTS} are allowed.")
    arguments = []
    for index, entry in enumerate(raw):
        here = f"{where}.arguments[{index}]"
        if not isinstance(entry, Mapping):
            raise ItemFileError(f"{here}: must be an object with id, stance and text.")
        argument_id = entry.get("id")
        if not isinstance(argument_id, str) or not _ID.match(argument_id):
            raise ItemFileError(f"{here}.id: must be letters, digits, _ or -, got {argument_id!r}.")
        if entry.get("stance") not in ("pro", "con"):
            raise ItemFileError(f"{here}.stance: must be 'pro' or 'con', got {entry.get('stance')!r}.")
        arguments.append(Argument(argument_id, entry["stance"], text_field(entry, "text", here)))
    if len({argument.id for argument in arguments}) != len(arguments):
        raise ItemFileError(f"{where}.arguments: ids must be unique.")
    pro = sum(argument.stance == "pro" for argument in arguments)
    if pro * 2 != len(arguments):
        raise ItemFileError(
            f"{where}.arguments: must hold as many pro as con arguments, got {pro} pro and {len(arguments) - pro} con."
        )
    return tuple(arguments)


# --- presentation --------------------------------------------------------------------------------------------------
def _plain_number(value: float | int) -> float | int:
    return int(value) if float(value).is_integer() else value


def format_money(item: BiasItem, amount: float) -> str:
    return item.money_format.format(amount=amount)


def gain_and_loss(item: BiasItem) -> tuple[float, float]:
    """(lambda * X, X) of a loss-aversion item."""
    return item.loss_lambda * item.amount, item.amount


def present(item: BiasItem, version: str, *, argument_order: Sequence[str] | None = None) -> Presented:
    """The texts and options of one version of an item (``argument_order``: argument ids, default as in the file).

    >>> item = load_items().item("anchoring_training")
    >>> shown = present(item, "treatment")
    >>> shown.paragraphs[-1].startswith("In the lift"), [option.label for option in shown.options][:2]
    (True, ['10 %', '25 %'])
    """
    if version not in item.versions:
        raise ValueError(f"version must be one of {item.versions} for item {item.id!r}, got {version!r}.")
    common = dict(item_id=item.id, bias=item.bias, version=version)
    if item.bias in ("anchoring", "halo"):
        paragraphs = [item.scenario]
        if item.bias == "anchoring" and version == TREATMENT:
            paragraphs.append(item.anchor_sentence)
        if item.bias == "halo":
            paragraphs.append(item.experience_sentence)
            if version == TREATMENT:
                paragraphs.append(item.treatment_sentence)
        options = tuple(Option(v, item.option_format.format(value=_plain_number(v))) for v in item.options)
        return Presented(paragraphs=tuple(paragraphs), question=item.question, options=options, **common)
    if item.bias == "loss_aversion":
        gain, loss = gain_and_loss(item)
        question = item.question.format(gain=format_money(item, gain), loss=format_money(item, loss))
        options = tuple(Option(value, label) for value, label in ACCEPT_LABELS)
        return Presented(paragraphs=(item.scenario,), question=question, options=options, **common)
    if item.bias == "confirmation":
        paragraphs = (item.scenario, f"Statement: \u201c{item.statement}\u201d")
        if version == CONTROL:
            options = tuple(Option(value, label) for value, label in AGREE_LABELS)
            return Presented(paragraphs=paragraphs, question=item.control_question, options=options, **common)
        order = list(argument_order) if argument_order is not None else [argument.id for argument in item.arguments]
        if sorted(order) != sorted(argument.id for argument in item.arguments):
            raise ValueError(f"argument_order must list each argument of item {item.id!r} once, got {order}.")
        arguments = tuple(item.argument(argument_id) for argument_id in order)
        return Presented(paragraphs=paragraphs, question=item.treatment_question, arguments=arguments, **common)
    options = tuple(Option(index, label) for index, label in enumerate(item.options))
    return Presented(paragraphs=(item.scenario,), question=item.question, options=options, **common)


# --- order of tests ------------------------------------------------------------------------------------------------
def build_sequence(items: Iterable[BiasItem], *, seed: Any, max_attempts: int = 200) -> list[tuple[str, str]]:
    """The order in which one respondent meets the tests: every control version first, then every treatment version.

    Both parts are shuffled with ``random.Random(seed)`` (so the same seed gives the same order); attention checks go
    to random places after the first test. A test's two versions never follow each other directly: the shuffle of the
    treatments is redrawn until the last control and the first treatment belong to different items.

    >>> items = load_items().items
    >>> order = build_sequence(items, seed="P1")
    >>> order == build_sequence(items, seed="P1"), len(order)
    (True, 16)
    >>> versions = [version for _, version in order if version != "check"]
    >>> versions.index("treatment") == versions.count("control")
    True
    """
    items = list(items)
    if not items:
        raise ValueError("items must hold at least one item.")
    rng = random.Random(seed)
    controls = [(item.id, CONTROL) for item in items if CONTROL in item.versions]
    treatments = [(item.id, TREATMENT) for item in items if TREATMENT in item.versions]
    checks = [(item.id, CHECK) for item in items if CHECK in item.versions]
    rng.shuffle(controls)
    for _ in range(max_attempts):
        rng.shuffle(treatments)
        sequence = controls + treatments
        for check in checks:
            sequence.insert(rng.randint(1, len(sequence)) if sequence else 0, check)
        if not _has_back_to_back(sequence):
            return sequence
    raise ValueError("items cannot be ordered without showing a test's two versions back to back; add another item.")


def _has_back_to_back(sequence: Sequence[tuple[str, str]]) -> bool:
    return any(first[0] == second[0] for first, second in zip(sequence, sequence[1:], strict=False))


def argument_order(item: BiasItem, *, seed: Any) -> list[str]:
    """The shuffled display order of a confirmation item's arguments for one respondent (seeded).

    >>> item = load_items().item("confirmation_home_office")
    >>> argument_order(item, seed="P1") == argument_order(item, seed="P1")
    True
    """
    order = [argument.id for argument in item.arguments]
    random.Random(f"{seed}:{item.id}").shuffle(order)
    return order
