"""Cognitive-bias test items: the item file, what a respondent sees, the order of tests, and the export columns.

The same module serves the ``bias_tests`` app (people) and ``backend.bias.runner`` (models), so both ask the same
questions and write the same columns (``EXPORT_COLUMNS``, one row per respondent x test x version).

Item file (JSON; the bundled ``backend/bias/data/bias_items.json`` was written for this project, a researcher can pass
their own through the session config key ``item_file`` or ``--items``)::

    {"name": "...", "title": "...", "language": "en", "items": [ITEM, ...]}

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

import json
import math
import random
import re
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.core import researcher_files
from backend.core.csvio import escape_text

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

# One row per respondent x test x version; the app's export and the LLM runner write exactly these columns.
EXPORT_COLUMNS = (
    "respondent_kind",  # person | model
    "respondent_id",  # participant code, or "<model>#<run>"
    "model",  # empty for people
    "run",  # repeat number of a model run; empty for people
    "session_code",
    "participant_code",  # people: the oTree participant code; empty for models
    "prolific_pid",  # people: the Prolific participant ID; empty for models
    "study_id",  # people: the Prolific study ID; empty for models
    "item_set",
    "item_id",
    "bias",  # anchoring | halo | loss_aversion | confirmation | attention_check
    "version",  # control | treatment | check
    "position",  # 1-based place in the respondent's sequence
    "status",  # answered | unparseable | error
    "answer",  # option value; 1/0 for accept or agree; option index for the attention check; empty for arguments
    "answer_label",
    "confidence",  # 0..1 in the chosen answer; empty when not asked
    "option_probabilities",  # JSON list aligned with "options" (models); empty otherwise
    "confidence_source",  # slider (people) | stated | logprobs (models); empty without confidence
    "options",  # JSON list of the option values offered
    "anchor",
    "lambda",
    "experience",
    "arguments_shown",  # JSON list of argument ids in display order
    "arguments_selected",  # JSON list of argument ids
    "pro_selected",
    "con_selected",
    "n_arguments",
    "is_correct",  # attention check only: 1/0
    "seconds",  # time on the page (people) or model latency
    "answered_at",  # ISO-8601 UTC time of the answer (backend.core.csvio.iso_utc)
    "attempts",  # model calls spent (models)
    "raw_reply",  # the model's last reply, line breaks escaped (backend.core.csvio.escape_text)
    "answer_mode",  # models: stated | structured | logprobs (how the runner asked); empty for people
    "answer_source",  # models: how the answer was read (backend.bias.replies.ANSWER_SOURCES); empty for people
    "problem",  # models: why a reply was not an answer (unparseable, error), or what a fallback replaced
    "reasoning",  # models: a reasoning model's thinking, kept apart from the reply and never parsed
)

# Columns added after the first release: files written before them are read with these cells empty.
IDENTIFIER_COLUMNS = ("participant_code", "prolific_pid", "study_id", "answered_at")
MODEL_ANSWER_COLUMNS = ("answer_mode", "answer_source", "problem", "reasoning")
ADDED_COLUMNS = IDENTIFIER_COLUMNS + MODEL_ANSWER_COLUMNS
ESCAPED_COLUMNS = ("raw_reply", "problem", "reasoning")  # model text, kept on one line (backend.core.csvio.escape_text)

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
# Control characters (C0, DEL, C1) and the bidirectional overrides that make text display differently than it reads.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile(r"[\t\n]")
MAX_TEXT_CHARS = 2000  # a scenario, sentence, question, statement or argument
MAX_LABEL_CHARS = 200  # an option as shown, a format, the title
MAX_MAGNITUDE = 1e12  # numbers in an item file (options, anchor, amount)
MAX_LAMBDA = 100
MAX_OPTIONS = 20  # models answer with the letters A, B, ...
MAX_ARGUMENTS = 20
MAX_ITEMS = 200
MAX_FORMAT_WIDTH = 100  # a width or precision in a format such as {value:>8.2f}


class ItemFileError(ValueError):
    """An item file or mapping that does not follow the documented layout."""


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
    language: str
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
    backend.bias.items.ItemFileError: mine.json is not valid JSON: line 1, column 12: Expecting value.
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
    backend.bias.items.ItemFileError: mine.json: items[0] (a1).option_format: '{value:d} units' cannot show the option 2.5 (Unknown format code 'd' for object of type 'float'). Write a format that suits every option, such as '{value} units' or '{value:g} units'.
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
    language = data.get("language", "en")
    for key, value, max_chars in (("title", title, MAX_LABEL_CHARS), ("language", language, 16)):
        if not isinstance(value, str) or not value.strip():
            raise ItemFileError(f"{source}: {key}: must be a non-empty text.")
        _plain(value, f"{source}: {key}", max_chars=max_chars, line_breaks=False)
    return ItemSet(name=name, title=title, language=language, items=tuple(items), source=source)


def _plain(value: str, field: str, *, max_chars: int, line_breaks: bool) -> str:
    """``value`` when it is plain text of at most ``max_chars`` characters (tabs and newlines if ``line_breaks``)."""
    if len(value) > max_chars:
        raise ItemFileError(f"{field}: is {len(value):,} characters long; at most {max_chars:,} are allowed.")
    bad = _CONTROL.search(_LINE_BREAKS.sub(" ", value) if line_breaks else value)
    if bad:
        raise ItemFileError(
            f"{field}: holds the control character U+{ord(bad.group()):04X} at character {bad.start() + 1}; "
            "item texts must be plain text."
        )
    return value


def _text(raw: Mapping, key: str, where: str, *, default: str | None = None, max_chars: int = MAX_TEXT_CHARS) -> str:
    value = raw.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise ItemFileError(f"{where}.{key}: must be a non-empty text.")
    return _plain(value.strip(), f"{where}.{key}", max_chars=max_chars, line_breaks=True)


def _number(raw: Mapping, key: str, where: str, *, positive: bool = False, maximum: float = MAX_MAGNITUDE) -> float:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ItemFileError(f"{where}.{key}: must be a finite number, got {value!r}.")
    if positive and value <= 0:
        raise ItemFileError(f"{where}.{key}: must be positive, got {value!r}.")
    if abs(value) > maximum:
        raise ItemFileError(f"{where}.{key}: must not exceed {maximum:,g} in size, got {value!r}.")
    return value


def _numeric_options(raw: Mapping, where: str) -> tuple:
    options = raw.get("options")
    if not isinstance(options, list) or len(options) < 2:
        raise ItemFileError(f"{where}.options: must list at least two numbers.")
    if len(options) > MAX_OPTIONS:
        raise ItemFileError(f"{where}.options: lists {len(options)} numbers; at most {MAX_OPTIONS} are allowed.")
    for value in options:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ItemFileError(f"{where}.options: must hold finite numbers only, got {value!r}.")
        if abs(value) > MAX_MAGNITUDE:
            raise ItemFileError(f"{where}.options: {value!r} is too large; at most {MAX_MAGNITUDE:,g} in size.")
    if len(set(options)) != len(options):
        raise ItemFileError(f"{where}.options: must not repeat a value, got {options}.")
    return tuple(options)


def _template(
    raw: Mapping, key: str, where: str, *, default: str, placeholders: Sequence[str], max_chars: int = MAX_LABEL_CHARS
) -> str:
    """A format text (``option_format``, ``money_format``, the loss question) checked for its shape alone.

    Every placeholder must be one of ``placeholders`` (all of them present), without attribute or index access, and
    widths and precisions stay small (``{value:999999999}`` would build a gigabyte label).
    """
    field = f"{where}.{key}"
    template = raw.get(key, default)
    if not isinstance(template, str) or not template.strip():
        raise ItemFileError(f"{field}: must be a non-empty text, got {template!r}.")
    _plain(template, field, max_chars=max_chars, line_breaks=key == "question")
    allowed = " and ".join("{" + name + "}" for name in placeholders)
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as error:
        raise ItemFileError(
            f"{field}: {template!r} is not a valid format ({error}). Only {allowed} may stand in braces; "
            "write a brace that should be shown as {{ or }}."
        ) from None
    used = set()
    for _, name, spec, _ in parts:
        if name is None:
            continue
        if name not in placeholders:
            raise ItemFileError(
                f"{field}: {template!r} uses {{{name}}}, but only {allowed} may stand in braces here; "
                "write a brace that should be shown as {{ or }}."
            )
        if "{" in spec:
            raise ItemFileError(f"{field}: {template!r} has a placeholder inside a format; write a fixed format.")
        sizes = [int(digits) for digits in re.findall(r"\d+", spec)]
        if sizes and max(sizes) > MAX_FORMAT_WIDTH:
            raise ItemFileError(
                f"{field}: {template!r} asks for a width or precision of {max(sizes)}; at most {MAX_FORMAT_WIDTH}."
            )
        used.add(name)
    for name in placeholders:
        if name not in used:
            raise ItemFileError(f"{field}: must contain {{{name}}}, got {template!r}.")
    return template


def _filled(template: str, field: str, what: str, hint: str, **values: Any) -> str:
    """``template`` with ``values`` filled in, or a plain message naming the field, the value and what to write."""
    try:
        shown = template.format(**values)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError) as error:
        raise ItemFileError(f"{field}: {template!r} cannot show {what} ({error}). {hint}") from None
    if not shown.strip():
        raise ItemFileError(f"{field}: {template!r} shows {what} as an empty text.")
    return _plain(shown, f"{field} (showing {what})", max_chars=MAX_TEXT_CHARS, line_breaks=True)


def _option_labels(fields: dict[str, Any], where: str) -> None:
    """Format every option with the item's ``option_format``, as the respondent will see it."""
    template, field = fields["option_format"], f"{where}.option_format"
    example = re.sub(r"\{value[^}]*\}", "{value}", template)
    hint = (
        f"Write a format that suits every option, such as {example!r} or {example.replace('{value}', '{value:g}')!r}."
    )
    labels: dict[str, Any] = {}
    for value in fields["options"]:
        label = _filled(template, field, f"the option {value!r}", hint, value=_plain_number(value))
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
    gain_text = _filled(template, field, f"the gain {gain!r} (lambda x amount)", hint, amount=gain)
    loss_text = _filled(template, field, f"the loss {loss!r} (the amount)", hint, amount=loss)
    _filled(
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
    fields: dict[str, Any] = dict(id=item_id, bias=bias, scenario=_text(raw, "scenario", where))
    if bias in ("anchoring", "halo"):
        fields["question"] = _text(raw, "question", where)
        fields["options"] = _numeric_options(raw, where)
        fields["option_format"] = _template(raw, "option_format", where, default="{value}", placeholders=["value"])
        _option_labels(fields, where)
    if bias == "anchoring":
        fields["anchor"] = _number(raw, "anchor", where)
        sentence = fields["anchor_sentence"] = _text(raw, "anchor_sentence", where)
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
        fields["experience_sentence"] = _text(raw, "experience_sentence", where)
        fields["treatment_sentence"] = _text(raw, "treatment_sentence", where)
        steps = [b - a for a, b in zip(fields["options"], fields["options"][1:], strict=False)]
        if not (all(step > 0 for step in steps) or all(step < 0 for step in steps)):
            raise ItemFileError(f"{where}.options: must run from most optimistic to most pessimistic (monotone).")
    elif bias == "loss_aversion":
        fields["amount"] = _number(raw, "amount", where, positive=True)
        fields["loss_lambda"] = _number(raw, "lambda", where, positive=True, maximum=MAX_LAMBDA)
        fields["money_format"] = _template(raw, "money_format", where, default="{amount:,.0f}", placeholders=["amount"])
        fields["question"] = _template(
            raw, "question", where, default="", placeholders=["gain", "loss"], max_chars=MAX_TEXT_CHARS
        ).strip()
        _money_texts(fields, where)
    elif bias == "confirmation":
        fields["statement"] = _text(raw, "statement", where)
        fields["control_question"] = _text(raw, "control_question", where, default=DEFAULT_AGREE_QUESTION)
        fields["treatment_question"] = _text(raw, "treatment_question", where, default=DEFAULT_ARGUMENTS_QUESTION)
        fields["arguments"] = _arguments(raw.get("arguments"), where)
    else:
        fields["question"] = _text(raw, "question", where)
        options = raw.get("options")
        if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) and o for o in options):
            raise ItemFileError(f"{where}.options: must list at least two option texts.")
        if len(options) > MAX_OPTIONS:
            raise ItemFileError(f"{where}.options: lists {len(options)} texts; at most {MAX_OPTIONS} are allowed.")
        for index, option in enumerate(options):
            _plain(option, f"{where}.options[{index}]", max_chars=MAX_LABEL_CHARS, line_breaks=False)
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
        arguments.append(Argument(argument_id, entry["stance"], _text(entry, "text", here)))
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


# --- answers -------------------------------------------------------------------------------------------------------
def check_choice(presented: Presented, value: Any) -> Option:
    """The offered option whose value equals ``value``; ``ValueError`` when it is not one of them."""
    for option in presented.options:
        if value is not None and not isinstance(value, bool) and option.value == value:
            return option
    raise ValueError(f"answer must be one of {presented.option_values()}, got {value!r}.")


def check_selection(presented: Presented, selected: Sequence[str]) -> list[str]:
    """Validated argument ids: at least one, each offered, none twice."""
    offered = [argument.id for argument in presented.arguments]
    selected = list(selected)
    if not selected:
        raise ValueError("arguments_selected must hold at least one argument.")
    unknown = [argument_id for argument_id in selected if argument_id not in offered]
    if unknown:
        raise ValueError(f"arguments_selected holds {unknown}, which were not offered.")
    if len(set(selected)) != len(selected):
        raise ValueError("arguments_selected must not name an argument twice.")
    return selected


def check_confidence(value: Any, *, scale: float = 1.0) -> float:
    """A confidence in [0, scale] as a fraction in [0, 1] (``scale=100`` for the 0-100 slider)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"confidence must be a number, got {value!r}.")
    if not 0 <= value <= scale:
        raise ValueError(f"confidence must lie between 0 and {scale:g}, got {value!r}.")
    return value / scale


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def export_row(
    item: BiasItem,
    presented: Presented,
    *,
    respondent_kind: str,
    respondent_id: str,
    item_set: str,
    position: int,
    status: str = "answered",
    answer: Any = None,
    selected: Sequence[str] | None = None,
    confidence: float | None = None,
    option_probabilities: Sequence[float] | None = None,
    confidence_source: str = "",
    **extra: Any,
) -> dict[str, Any]:
    """One export row (all ``EXPORT_COLUMNS``; empty text where a column does not apply).

    ``answer`` is an offered option value (choice pages) and ``selected`` the chosen argument ids (argument page);
    both are checked against what was offered. ``extra`` fills the remaining columns (model, run, seconds, ...).
    """
    unknown = set(extra) - set(EXPORT_COLUMNS)
    if unknown:
        raise ValueError(f"export_row got unknown columns {sorted(unknown)}.")
    if respondent_kind not in ("person", "model"):
        raise ValueError(f"respondent_kind must be 'person' or 'model', got {respondent_kind!r}.")
    if status not in ("answered", "unparseable", "error"):
        raise ValueError(f"status must be answered, unparseable or error, got {status!r}.")
    row: dict[str, Any] = dict.fromkeys(EXPORT_COLUMNS, "")
    row.update(
        respondent_kind=respondent_kind,
        respondent_id=respondent_id,
        item_set=item_set,
        item_id=item.id,
        bias=item.bias,
        version=presented.version,
        position=int(position),
        status=status,
    )
    if presented.kind == "choice":
        row["options"] = _json(presented.option_values())
    if item.bias == "anchoring":
        row["anchor"] = item.anchor
    elif item.bias == "loss_aversion":
        row["lambda"] = item.loss_lambda
    elif item.bias == "halo":
        row["experience"] = item.experience
    if presented.kind == "arguments":
        row["arguments_shown"] = _json([argument.id for argument in presented.arguments])
        row["n_arguments"] = len(presented.arguments)
    if status == "answered":
        if presented.kind == "choice":
            option = check_choice(presented, answer)
            row["answer"], row["answer_label"] = option.value, option.label
            if item.bias == ATTENTION_CHECK:
                row["is_correct"] = int(option.label == item.correct)
        else:
            chosen = check_selection(presented, selected or [])
            stances = [item.argument(argument_id).stance for argument_id in chosen]
            row["arguments_selected"] = _json(chosen)
            row["pro_selected"], row["con_selected"] = stances.count("pro"), stances.count("con")
        if confidence is not None:
            row["confidence"] = check_confidence(confidence)
        if option_probabilities is not None:
            if len(option_probabilities) != len(presented.options):
                raise ValueError("option_probabilities must give one probability per offered option.")
            row["option_probabilities"] = _json([float(p) for p in option_probabilities])
        if confidence is not None or option_probabilities is not None:
            if confidence_source not in ("slider", "stated", "logprobs"):
                raise ValueError(f"confidence_source must be slider, stated or logprobs, got {confidence_source!r}.")
            row["confidence_source"] = confidence_source
    row.update(extra)
    for column in ESCAPED_COLUMNS:
        if isinstance(row[column], str):
            row[column] = escape_text(row[column])
    return row
