"""Reading a model's replies to the bias tests: the reply parsers and the log-probabilities of option letters.

A choice test is asked with lettered options (A, B, ...); the model replies with a JSON object
``{"answer": "B", "probabilities": {"A": 0.1, "B": 0.7, ...}}`` (its stated probability for each option). An
argument test lists numbered arguments; the reply is ``{"selected": [2, 5]}``. The parsers accept small deviations
(a code fence, text around the object, percentages, an ``Answer: B`` line) and raise ``ReplyParseError`` for
anything they cannot read unambiguously; they never guess.

When the endpoint returns token log-probabilities, ``option_probabilities_from_logprobs`` turns the alternatives
of the answer letter's token into option probabilities (softmax restricted to the option letters).

The prompts that ask for these replies are in ``backend.bias.prompts``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from backend.bias.prompts import LETTERS
from backend.core.llm.reasoning import THINK_CLOSE, THINK_OPEN
from backend.core.llm.replies import RepeatedKeyError, json_objects

PROBABILITY_SUM_TOLERANCE = 0.2  # stated probabilities must add up to 1 +- this (after reading percentages)


ANSWER_KEYS = ("answer", "choice", "option")  # the keys of a choice answer in a JSON reply, the first found counts
SELECTION_KEYS = ("selected", "arguments", "selection")  # the same for an argument selection


class ReplyParseError(ValueError):
    """A model reply that does not answer in the requested form."""


# How a model's answer was read (the export's ``answer_source``).
ANSWER_SOURCES = {
    "json": "a JSON object in the reply",
    "structured": "a JSON object the endpoint constrained to the schema",
    "answer_line": "an 'Answer: B' line",
    "letter": "an option letter as the reply or its first marker: 'B', 'B.', 'B)', '(B)'",
    "option_text": "the exact text of one option",
    "yes_no": "a reply starting with yes or no, for an accept/decline or agree/disagree test",
    "letter_logprob": "the log-probabilities of the option letters at the first letter the model wrote",
    "letter_logprob_alternatives": "the same at the first token whose alternatives hold option letters, when the "
    "model wrote no letter",
    "letter_logprob_per_argument": "one yes/no letter scored by log-probability per argument",
}


@dataclass(frozen=True)
class ChoiceReply:
    index: int  # 0-based option index
    probabilities: tuple[float, ...] | None = None  # normalised, aligned with the options
    source: str = "json"  # a key of ANSWER_SOURCES

    @property
    def confidence(self) -> float | None:
        return self.probabilities[self.index] if self.probabilities is not None else None


# --- parsing -------------------------------------------------------------------------------------------------------
def _letter_index(value: Any, n_options: int, labels: Sequence[str]) -> int:
    if isinstance(value, str):
        text = value.strip()
        for index, label in enumerate(labels):
            if text.casefold() == label.casefold():
                return index
        match = re.fullmatch(r"(?:option\s*)?[\(\[\"']?\s*([A-Za-z])\s*[\)\]\"'.:]?", text, flags=re.IGNORECASE)
        if match and match.group(1).upper() in LETTERS[:n_options]:
            return LETTERS.index(match.group(1).upper())
    raise ReplyParseError(f"the answer {value!r} is not one of the letters {', '.join(LETTERS[:n_options])}")


def read_confidences(values: Sequence[Any]) -> tuple[float, ...]:
    """Stated confidences as probabilities that add up to 1: the one rule for every answer mode.

    The rule: every value must be a non-negative number (a string may carry a ``%`` sign). The values are
    percentages when any of them carries a ``%`` sign or is above 1 (no probability is), otherwise probabilities;
    the scale is decided by the values alone, never by their sum. Read on that scale, the values must add up to
    1 (100 %) within ``PROBABILITY_SUM_TOLERANCE`` (0.2, i.e. 20 points), and are then divided by their sum.

    Worked examples: (20, 80) are percentages, (0.2, 0.8). (0.2, 1.4, 3.6, 5.8) hold values above 1, so they are
    percentages adding up to 11 % and are refused. (0.2, 1) are probabilities adding up to 1.2, within the
    tolerance, read as (1/6, 5/6); (0.25, 1) add up to 1.25 and are refused; ("30%", 0.7) are percentages adding up
    to 30.7 % and are refused.

    >>> read_confidences([20, "80 %"])
    (0.2, 0.8)
    >>> read_confidences([0.2, 1.0])
    (0.16666666666666669, 0.8333333333333334)
    >>> read_confidences([0.2, 1.4, 3.6, 5.8])
    Traceback (most recent call last):
    backend.bias.replies.ReplyParseError: the probabilities add up to 11 % (read as percentages, as a value is above 1 or carries %), not 100 %
    >>> read_confidences([0.25, 1])
    Traceback (most recent call last):
    backend.bias.replies.ReplyParseError: the probabilities add up to 1.25, not 1
    """
    numbers, percent = _on_one_scale(values)
    total = sum(numbers)
    if abs(total - 1) > PROBABILITY_SUM_TOLERANCE:
        if percent:
            raise ReplyParseError(
                f"the probabilities add up to {total * 100:g} % (read as percentages, as a value is above 1 or "
                "carries %), not 100 %"
            )
        raise ReplyParseError(f"the probabilities add up to {total:g}, not 1")
    return tuple(value / total for value in numbers)


def _on_one_scale(values: Sequence[Any]) -> tuple[list[float], bool]:
    """The values as fractions (percentages divided by 100, by ``read_confidences``'s rule), and whether they were
    read as percentages; ``ReplyParseError`` for a value that is no non-negative number."""
    numbers, percent = [], False
    for value in values:
        if isinstance(value, str):
            text = value.strip()
            percent = percent or text.endswith("%")
            try:
                value = float(text.rstrip("%").strip())
            except ValueError:
                raise ReplyParseError(f"the probability {text!r} is not a number") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ReplyParseError(f"the probability {value!r} is not a non-negative number")
        numbers.append(float(value))
    percent = percent or any(value > 1 for value in numbers)
    return ([value / 100 for value in numbers] if percent else numbers), percent


def _probabilities(raw: Any, n_options: int, chosen: int) -> tuple[float, ...]:
    """The option probabilities of a reply's "probabilities": a letter mapping, a list, or a single confidence in
    the chosen option (spread evenly over the others), all read by ``read_confidences``."""
    letters = LETTERS[:n_options]
    if isinstance(raw, Mapping):
        unknown = [key for key in raw if str(key).strip().upper() not in letters]
        if unknown:
            raise ReplyParseError(f"the probabilities name options that do not exist: {unknown}")
        return read_confidences([raw.get(letter, raw.get(letter.lower(), 0)) for letter in letters])
    if isinstance(raw, list) and len(raw) == n_options:
        return read_confidences(raw)
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        (confidence,), _ = _on_one_scale([raw])  # 0.7 and 70 alike
        if not 0 <= confidence <= 1:
            raise ReplyParseError(f"the confidence {raw!r} is not between 0 and 1 (or 0 % and 100 %)")
        return tuple(confidence if k == chosen else (1 - confidence) / (n_options - 1) for k in range(n_options))
    raise ReplyParseError("the probabilities are neither one number per option nor a single confidence")


def parse_choice(
    reply: str, labels: Sequence[str], *, require_probabilities: bool = False, read_probabilities: bool = True
) -> ChoiceReply:
    """The chosen option (and stated probabilities, if any) of a reply to a choice test.

    ``labels`` are the option texts in the order shown (letters A, B, ... in the prompt). Reads the JSON object
    ``{"answer": ..., "probabilities": ...}`` (probabilities as a letter mapping, a list, percentages, or a single
    confidence in the chosen option); without JSON, an ``Answer: B`` line or a bare letter.

    >>> parse_choice('```json\\n{"answer": "B", "probabilities": {"A": 20, "B": 80}}\\n```', ["yes", "no"])
    ChoiceReply(index=1, probabilities=(0.2, 0.8), source='json')
    >>> parse_choice("Answer: (A)", ["yes", "no"]).index
    0
    """
    n_options = len(labels)
    if n_options < 2:
        raise ValueError(f"labels must hold at least two options, got {n_options}.")
    if not isinstance(reply, str) or not reply.strip():
        raise ReplyParseError("the reply is empty")
    data = _the_json_object(reply, ANSWER_KEYS)
    if data is not None:
        answer = _first_of(data, ANSWER_KEYS)
        if answer is None:
            raise ReplyParseError('the JSON object has no "answer"')
        index = _letter_index(answer, n_options, labels)
        raw = _first_of(data, ("probabilities", "confidence", "probability"))
        if not read_probabilities:  # the answer alone, after the stated probabilities could not be read
            return ChoiceReply(index)
        if raw is None:
            if require_probabilities:
                raise ReplyParseError('the JSON object has no "probabilities"')
            return ChoiceReply(index)
        return ChoiceReply(index, _probabilities(raw, n_options, index))
    if require_probabilities:
        raise ReplyParseError("the reply holds no JSON object")
    index, source = text_answer(reply, labels)
    return ChoiceReply(index, source=source)


def _first_of(data: Mapping[str, Any], keys: Sequence[str]) -> Any:
    """The value of the first of ``keys`` that ``data`` holds (None when it holds none)."""
    return next((data[key] for key in keys if key in data), None)


def _the_json_object(reply: str, answer_keys: Sequence[str]) -> dict | None:
    """The one JSON object of a reply that answers (holds one of ``answer_keys``), keys lower-cased; None when the
    reply holds no object. Two objects that answer differently (a draft and a final answer, an example and the
    answer) are refused; the same object twice is one answer."""
    try:
        objects = [{str(key).strip().lower(): value for key, value in data.items()} for data in json_objects(reply)]
    except RepeatedKeyError as error:
        raise ReplyParseError(str(error)) from None
    if not objects:
        return None
    answering = [data for data in objects if any(key in data for key in answer_keys)]
    distinct = {json.dumps(data, sort_keys=True): data for data in answering}
    if len(distinct) > 1:
        raise ReplyParseError("the reply holds more than one JSON answer, and they differ")
    return next(iter(distinct.values()), objects[0])


_EMPHASIS = re.compile(r"[*_`#]+")
_ANSWER_LINE = re.compile(
    r"\b(?:final\s+)?answer\b(?:\s+is)?\s*[:=-]?\s*(?:option\s+)?[\(\[\"']?([A-Za-z])\b(?![\w'-])", flags=re.IGNORECASE
)
# An option letter as a marker: alone, or followed by '.', ')' or ':', or in brackets; at the start of a line.
_LETTER_MARKER = re.compile(r"^\s*(?:option\s+)?[\(\[]?([A-Z])(?:[\)\]]|[.:](?=\s|$)|(?=\s*$))", flags=re.MULTILINE)
_BRACKETED_LETTER = re.compile(r"[\(\[]([A-Z])[\)\]]")
_YES_NO = re.compile(r"^\W*(yes|no)\b", flags=re.IGNORECASE)
_YES_NO_IDIOM = re.compile(r"^\W*(?:yes|no)\W+(?:idea|doubt|way|matter|problem|wonder|question)\b", re.IGNORECASE)
_STANDALONE_CAPITAL = re.compile(r"(?<![\w'’-])([A-Z])(?![\w'’-])")


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().strip(".!,;:\"'").strip().casefold()


def text_answer(reply: str, labels: Sequence[str]) -> tuple[int, str]:
    """The option a free-text reply names, and how (``ANSWER_SOURCES``); ``ReplyParseError`` unless exactly one
    option is named. Every shape found is collected first, so a reply naming two options is refused, not read.

    >>> text_answer("A. 150 loaves", ["150 loaves", "250 loaves"])
    (0, 'letter')
    >>> text_answer("Yes, I agree.", ["Yes, I agree", "No, I do not agree"])
    (0, 'option_text')
    >>> text_answer("No. The risk is too high.", ["Yes, accept", "No, decline"])
    (1, 'yes_no')
    >>> text_answer("250 loaves", ["150 loaves", "250 loaves"])
    (1, 'option_text')
    """
    letters = LETTERS[: len(labels)]
    text = _EMPHASIS.sub("", reply).strip()
    found: dict[int, str] = {}  # option index -> the first shape that named it

    def name(index: int, source: str) -> None:
        found.setdefault(index, source)

    for match in _ANSWER_LINE.finditer(text):
        letter = match.group(1).upper()
        if letter not in letters:
            raise ReplyParseError(f"the answer {letter!r} is not one of the letters {', '.join(letters)}")
        name(letters.index(letter), "answer_line")
    for pattern in (_LETTER_MARKER, _BRACKETED_LETTER):
        for match in pattern.finditer(text):
            if match.group(1) in letters:
                name(letters.index(match.group(1)), "letter")
    # The option's own text: the whole reply, or what follows a letter marker on the first line ('A. 150 loaves').
    first_line = text.splitlines()[0] if text else ""
    after_marker = re.sub(r"^\s*[\(\[]?[A-Z][\)\].:]\s*", "", first_line)
    plain_labels = [_plain(label) for label in labels]
    for candidate in {_plain(text), _plain(after_marker)}:
        if candidate in plain_labels and plain_labels.count(candidate) == 1:
            name(plain_labels.index(candidate), "option_text")
    yes_no = _yes_no_answer(text, labels)
    if yes_no is not None:
        name(yes_no, "yes_no")
    if not found:
        raise ReplyParseError("the reply names no option (no letter, no option text)")
    # Every option letter the reply writes as a word counts: 'A. Wait, no: C.' or '... A if ..., otherwise B.'
    written = {letters.index(letter) for letter in _STANDALONE_CAPITAL.findall(text) if letter in letters}
    if len(found) > 1 or written - set(found):
        named = ", ".join(letters[index] for index in sorted(set(found) | written))
        raise ReplyParseError(f"the reply names more than one option ({named})")
    index, source = next(iter(found.items()))
    return index, source


def _yes_no_answer(text: str, labels: Sequence[str]) -> int | None:
    """The option a reply starting with yes or no names, for a test whose two options start with Yes and No; None
    when the test is no such test or the reply says more than yes or no can carry: both words, an idiom ('no
    doubt', 'no idea'), or the other option's own words ('Yes, I decline')."""
    opening = _YES_NO.match(text)
    starts = [re.match(r"^(yes|no)\b", label.strip(), flags=re.IGNORECASE) for label in labels]
    if not opening or len(labels) != 2 or not all(starts) or {m.group(1).lower() for m in starts} != {"yes", "no"}:
        return None
    index = [m.group(1).lower() for m in starts].index(opening.group(1).lower())
    words = set(re.findall(r"[\w']+", text.casefold()))
    own, other = (set(re.findall(r"[\w']+", labels[k].casefold())) for k in (index, 1 - index))
    other_rest = _plain(re.sub(r"^\W*(yes|no)\W*", "", labels[1 - index], flags=re.IGNORECASE))
    if {"yes", "no"} <= words or _YES_NO_IDIOM.match(text):
        return None
    if {word for word in other - own if len(word) >= 3} & words or (other_rest and other_rest in _plain(text)):
        return None
    return index


def parse_selection(reply: str, n_arguments: int) -> list[int]:
    """The 1-based numbers of the arguments a reply selects (at least one, each offered, none twice).

    >>> parse_selection('{"selected": [5, 2]}', 8)
    [5, 2]
    >>> parse_selection("Selected: 1, 3", 8)
    [1, 3]
    """
    if not isinstance(reply, str) or not reply.strip():
        raise ReplyParseError("the reply is empty")
    data = _the_json_object(reply, SELECTION_KEYS)
    if data is not None:
        raw = _first_of(data, SELECTION_KEYS)
        if not isinstance(raw, list):
            raise ReplyParseError('the JSON object has no "selected" list')
        numbers = []
        for value in raw:
            if isinstance(value, str) and value.strip().isdigit():
                value = int(value.strip())
            if isinstance(value, bool) or not isinstance(value, int):
                raise ReplyParseError(f"the selection {value!r} is not an argument number")
            numbers.append(value)
    else:
        match = re.search(r"\bselect(?:ed|ion)?\b\W{0,3}((?:\d+\s*(?:,|and)?\s*)+)", reply, flags=re.IGNORECASE)
        if match is None:
            raise ReplyParseError("the reply holds no list of argument numbers")
        numbers = [int(number) for number in re.findall(r"\d+", match.group(1))]
    if not numbers:
        raise ReplyParseError("the reply selects no argument")
    outside = [number for number in numbers if not 1 <= number <= n_arguments]
    if outside:
        raise ReplyParseError(f"the reply selects {outside}, but only arguments 1 to {n_arguments} were offered")
    if len(set(numbers)) != len(numbers):
        raise ReplyParseError("the reply selects an argument twice")
    return numbers


def _token_letter(token: str, n_options: int) -> str | None:
    text = token.strip().strip("\"'()[]{}.:,*").strip()
    return text.upper() if len(text) == 1 and text.upper() in LETTERS[:n_options] else None


def option_probabilities_from_logprobs(logprobs: Mapping | None, n_options: int) -> tuple[float, ...] | None:
    """Option probabilities from the top log-probabilities at the answer letter's token, or None.

    ``logprobs`` is the chat-completions ``choices[0].logprobs`` object: ``{"content": [{"token", "logprob",
    "top_logprobs": [{"token", "logprob"}, ...]}, ...]}``. The answer token is the first single-letter option token
    after the text "answer" (or the first one at all when the reply has no such key). p_k is proportional to the sum
    of exp(logprob) of the alternatives that spell letter k; letters not among the alternatives get 0.

    >>> content = [{"token": '{"answer": "', "logprob": 0.0, "top_logprobs": []},
    ...            {"token": "B", "logprob": -0.2, "top_logprobs": [{"token": "B", "logprob": math.log(0.6)},
    ...                                                           {"token": "A", "logprob": math.log(0.2)}]}]
    >>> [round(p, 3) for p in option_probabilities_from_logprobs({"content": content}, 3)]
    [0.25, 0.75, 0.0]
    """
    if not isinstance(logprobs, Mapping) or not isinstance(logprobs.get("content"), list):
        return None
    tokens = [entry for _, entry in _after_thinking(logprobs["content"])]
    text = "".join(str(entry.get("token", "")) for entry in tokens)
    seen_answer = "answer" not in text.lower()
    so_far = ""
    for entry in tokens:
        if not isinstance(entry, Mapping):
            continue
        token = str(entry.get("token", ""))
        if seen_answer and _token_letter(token, n_options):
            weights = [0.0] * n_options
            alternatives = list(entry.get("top_logprobs") or [])
            if not any(str(alt.get("token", "")) == token for alt in alternatives if isinstance(alt, Mapping)):
                alternatives.append({"token": token, "logprob": entry.get("logprob")})
            for alternative in alternatives:
                letter = _token_letter(str(alternative.get("token", "")), n_options)
                logprob = alternative.get("logprob")
                if letter and isinstance(logprob, (int, float)) and math.isfinite(logprob):
                    weights[LETTERS.index(letter)] += math.exp(logprob)
            total = sum(weights)
            return tuple(weight / total for weight in weights) if total > 0 else None
        so_far += token
        if not seen_answer and "answer" in so_far.lower():
            seen_answer = True
    return None


def _after_thinking(tokens: Sequence[Any]) -> list[tuple[int, Mapping]]:
    """``(position, entry)`` of the generated tokens after the last closing thinking tag (all of them when the reply
    has none; none when a thinking block is left open): letters inside thinking are never the answer."""
    entries = [(position, entry) for position, entry in enumerate(tokens) if isinstance(entry, Mapping)]
    text, starts = "", []
    for _, entry in entries:
        starts.append(len(text))
        text += str(entry.get("token", ""))
    closings = list(THINK_CLOSE.finditer(text))
    if closings:
        end = closings[-1].end()
        return [item for item, start in zip(entries, starts, strict=True) if start >= end]
    if THINK_OPEN.search(text):
        return []
    return entries


def _usable_logprob(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value <= 0


def _letter_weights(alternatives: Sequence[Mapping], n_options: int) -> list[float]:
    weights = [0.0] * n_options
    for alternative in alternatives:
        letter = _token_letter(str(alternative.get("token", "")), n_options)
        if letter:
            weights[LETTERS.index(letter)] += math.exp(alternative["logprob"])
    return weights


def letter_scores(logprobs: Mapping | None, n_options: int) -> tuple[tuple[float, ...], int, str]:
    """The option probabilities of a letter-only reply from its token log-probabilities.

    The answer position is the first token the model wrote that spells an option letter, after any thinking. When
    it wrote none ("I'm not sure…"), it is the first position whose alternatives include an option letter, as
    multiple-choice evaluations score the answer token; the note then says how much of that token's probability
    the letters held. p_k = sum of exp(logprob) over the position's alternatives (``top_logprobs`` and the token
    itself) that spell letter k (``"B"``, ``" B"``, ``"(B"``), normalised over the option letters.

    Returns ``(probabilities, position, note)``: no probabilities when the scores are unusable, the note saying why
    (no log-probabilities, none above 0 … no letter at all); with probabilities, the note is "" or the fallback's.

    >>> content = [{"token": "B", "logprob": math.log(0.6), "top_logprobs": [
    ...     {"token": "B", "logprob": math.log(0.6)}, {"token": "A", "logprob": math.log(0.3)},
    ...     {"token": "The", "logprob": math.log(0.1)}]}]
    >>> probabilities, position, note = letter_scores({"content": content}, 3)
    >>> [round(p, 3) for p in probabilities], position, note
    ([0.333, 0.667, 0.0], 0, '')
    """
    if not isinstance(logprobs, Mapping) or not isinstance(logprobs.get("content"), list) or not logprobs["content"]:
        return (), -1, "the endpoint returned no log-probabilities"
    positions, seen = [], []
    for position, entry in _after_thinking(logprobs["content"]):
        alternatives = [alt for alt in entry.get("top_logprobs") or [] if isinstance(alt, Mapping)]
        if not any(str(alt.get("token", "")) == str(entry.get("token", "")) for alt in alternatives):
            alternatives.append({"token": entry.get("token", ""), "logprob": entry.get("logprob")})
        seen.extend(repr(str(alt.get("token", ""))) for alt in alternatives)
        odd = [alt.get("logprob") for alt in alternatives if not _usable_logprob(alt.get("logprob"))]
        if odd:
            return (), position, f"the endpoint returned log-probabilities that are not probabilities ({odd[:3]})"
        positions.append((position, str(entry.get("token", "")), alternatives))
    written = [item for item in positions if _token_letter(item[1], n_options)]
    offered = [item for item in positions if any(_letter_weights(item[2], n_options))]
    if written:
        position, _, alternatives = written[0]
        note = ""
    elif offered:
        position, token, alternatives = offered[0]
        mass = sum(_letter_weights(alternatives, n_options))
        note = f"the model wrote {token!r}; the option letters held {mass:.1%} of that token's probability"
    else:
        shown = ", ".join(dict.fromkeys(seen)) or "none"
        return (), -1, f"no option letter among the tokens the model wrote or their alternatives ({shown[:300]})"
    weights = _letter_weights(alternatives, n_options)
    total = sum(weights)
    return tuple(weight / total for weight in weights), position, note
