"""Asking a model the bias tests and reading its replies: prompts, reply parsers, log-probabilities, scripted model.

A choice test is asked with lettered options (A, B, ...); the model replies with a JSON object
``{"answer": "B", "probabilities": {"A": 0.1, "B": 0.7, ...}}`` (its stated probability for each option). An
argument test lists numbered arguments; the reply is ``{"selected": [2, 5]}``. The parsers accept small deviations
(a code fence, text around the object, percentages, an ``Answer: B`` line) and raise ``ReplyParseError`` for
anything they cannot read unambiguously; they never guess.

When the endpoint returns token log-probabilities, ``option_probabilities_from_logprobs`` turns the alternatives
of the answer letter's token into option probabilities (softmax restricted to the option letters).

Prompt templates live in ``backend/data/bias_prompts/*.txt`` (``string.Template`` with ``$name``).
"""

from __future__ import annotations

import json
import math
import re
import string
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from backend.bias_items import Presented

PROMPTS_PATH = Path(__file__).resolve().parent / "data" / "bias_prompts"
LETTERS = string.ascii_uppercase
PROBABILITY_SUM_TOLERANCE = 0.2  # stated probabilities must add up to 1 +- this (after reading percentages)


class ReplyParseError(ValueError):
    """A model reply that does not answer in the requested form."""


@dataclass(frozen=True)
class ChoiceReply:
    index: int  # 0-based option index
    probabilities: tuple[float, ...] | None = None  # normalised, aligned with the options

    @property
    def confidence(self) -> float | None:
        return self.probabilities[self.index] if self.probabilities is not None else None


# --- prompts -------------------------------------------------------------------------------------------------------
@cache
def _template(name: str) -> string.Template:
    return string.Template((PROMPTS_PATH / f"{name}.txt").read_text(encoding="utf-8").strip())


def build_messages(presented: Presented) -> list[dict[str, str]]:
    """The chat messages that ask a model one test version (system prompt + the test).

    >>> from backend.bias_items import load_items, present
    >>> messages = build_messages(present(load_items().item("anchoring_training"), "control"))
    >>> [message["role"] for message in messages], "B. 25 %" in messages[1]["content"]
    (['system', 'user'], True)
    """
    context = "\n\n".join(presented.paragraphs)
    if presented.kind == "arguments":
        listed = "\n".join(f"{number}. {argument.text}" for number, argument in enumerate(presented.arguments, 1))
        user = _template("arguments").substitute(context=context, question=presented.question, arguments=listed)
    else:
        letters = LETTERS[: len(presented.options)]
        listed = "\n".join(
            f"{letter}. {option.label}" for letter, option in zip(letters, presented.options, strict=True)
        )
        keys = ", ".join(f'"{letter}": <p>' for letter in letters)
        user = _template("choice").substitute(
            context=context, question=presented.question, options=listed, probability_keys=keys
        )
    return [{"role": "system", "content": _template("system").template}, {"role": "user", "content": user}]


def reprompt_message(problem: str) -> dict[str, str]:
    """The follow-up user message after an unreadable reply."""
    return {"role": "user", "content": _template("reprompt").substitute(problem=problem)}


# --- parsing -------------------------------------------------------------------------------------------------------
def _json_object(reply: str) -> dict | None:
    """The first JSON object in the reply (code fences and surrounding text allowed), or None."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", reply):
        try:
            value, _ = decoder.raw_decode(reply[match.start() :])
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


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


def _probabilities(raw: Any, n_options: int, chosen: int) -> tuple[float, ...]:
    letters = LETTERS[:n_options]
    if isinstance(raw, Mapping):
        unknown = [key for key in raw if str(key).strip().upper() not in letters]
        if unknown:
            raise ReplyParseError(f"the probabilities name options that do not exist: {unknown}")
        values = [raw.get(letter, raw.get(letter.lower(), 0)) for letter in letters]
    elif isinstance(raw, list) and len(raw) == n_options:
        values = list(raw)
    elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
        scale = 100.0 if raw > 1 else 1.0
        confidence = raw / scale
        if not 0 <= confidence <= 1:
            raise ReplyParseError(f"the confidence {raw!r} is not between 0 and 1")
        return tuple(confidence if k == chosen else (1 - confidence) / (n_options - 1) for k in range(n_options))
    else:
        raise ReplyParseError("the probabilities are neither one number per option nor a single confidence")
    numbers = []
    for value in values:
        if isinstance(value, str):
            value = value.strip().rstrip("%")
            try:
                value = float(value)
            except ValueError:
                raise ReplyParseError(f"the probability {value!r} is not a number") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ReplyParseError(f"the probability {value!r} is not a non-negative number")
        numbers.append(float(value))
    total = sum(numbers)
    if total > 1 + PROBABILITY_SUM_TOLERANCE:  # percentages
        numbers = [value / 100 for value in numbers]
        total /= 100
    if abs(total - 1) > PROBABILITY_SUM_TOLERANCE:
        raise ReplyParseError(f"the probabilities add up to {total:g}, not 1")
    return tuple(value / total for value in numbers)


def parse_choice(reply: str, labels: Sequence[str], *, require_probabilities: bool = False) -> ChoiceReply:
    """The chosen option (and stated probabilities, if any) of a reply to a choice test.

    ``labels`` are the option texts in the order shown (letters A, B, ... in the prompt). Reads the JSON object
    ``{"answer": ..., "probabilities": ...}`` (probabilities as a letter mapping, a list, percentages, or a single
    confidence in the chosen option); without JSON, an ``Answer: B`` line or a bare letter.

    >>> parse_choice('```json\\n{"answer": "B", "probabilities": {"A": 20, "B": 80}}\\n```', ["yes", "no"])
    ChoiceReply(index=1, probabilities=(0.2, 0.8))
    >>> parse_choice("Answer: (A)", ["yes", "no"]).index
    0
    """
    n_options = len(labels)
    if n_options < 2:
        raise ValueError(f"labels must hold at least two options, got {n_options}.")
    if not isinstance(reply, str) or not reply.strip():
        raise ReplyParseError("the reply is empty")
    data = _json_object(reply)
    if data is not None:
        lowered = {str(key).strip().lower(): value for key, value in data.items()}
        answer = next((lowered[key] for key in ("answer", "choice", "option") if key in lowered), None)
        if answer is None:
            raise ReplyParseError('the JSON object has no "answer"')
        index = _letter_index(answer, n_options, labels)
        raw = next((lowered[key] for key in ("probabilities", "confidence", "probability") if key in lowered), None)
        if raw is None:
            if require_probabilities:
                raise ReplyParseError('the JSON object has no "probabilities"')
            return ChoiceReply(index)
        return ChoiceReply(index, _probabilities(raw, n_options, index))
    if require_probabilities:
        raise ReplyParseError("the reply holds no JSON object")
    match = re.search(r"\banswer\b\W{0,3}(?:is\s+)?(?:option\s+)?[\(\[\"']?([A-Za-z])\b", reply, flags=re.IGNORECASE)
    if match is None:
        match = re.fullmatch(r"\W*([A-Za-z])\W*", reply.strip())
    if match is None:
        raise ReplyParseError("the reply names no option letter")
    return ChoiceReply(_letter_index(match.group(1), n_options, labels))


def parse_selection(reply: str, n_arguments: int) -> list[int]:
    """The 1-based numbers of the arguments a reply selects (at least one, each offered, none twice).

    >>> parse_selection('{"selected": [5, 2]}', 8)
    [5, 2]
    >>> parse_selection("Selected: 1, 3", 8)
    [1, 3]
    """
    if not isinstance(reply, str) or not reply.strip():
        raise ReplyParseError("the reply is empty")
    data = _json_object(reply)
    if data is not None:
        lowered = {str(key).strip().lower(): value for key, value in data.items()}
        raw = next((lowered[key] for key in ("selected", "arguments", "selection") if key in lowered), None)
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
    tokens = logprobs["content"]
    text = "".join(str(entry.get("token", "")) for entry in tokens if isinstance(entry, Mapping))
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


# --- the offline "scripted" model ----------------------------------------------------------------------------------
def scripted_reply(messages: Sequence[Mapping[str, str]]) -> str:
    """A deterministic reply in the requested format (a function of the last user message): the scripted model.

    >>> reply = scripted_reply([{"role": "user", "content": "Q\\n\\nOptions:\\nA. 1\\nB. 2\\n\\nReply ..."}])
    >>> parse_choice(reply, ["1", "2"]).probabilities is not None
    True
    """
    prompt = next((m["content"] for m in reversed(messages) if m.get("role") == "user" and "\n" in m["content"]), "")
    digest = zlib.crc32(prompt.encode("utf-8"))
    numbered = re.findall(r"^(\d+)\. ", prompt, flags=re.MULTILINE)
    if "Arguments:" in prompt and numbered:
        count = len(numbered)
        chosen = sorted({digest % count + 1, (digest // count) % count + 1, (digest // 7) % count + 1})
        return json.dumps({"selected": chosen})
    letters = re.findall(r"^([A-Z])\. ", prompt, flags=re.MULTILINE) or ["A", "B"]
    index = digest % len(letters)
    rest = 0.4 / (len(letters) - 1)
    probabilities = {letter: round(0.6 if k == index else rest, 4) for k, letter in enumerate(letters)}
    return json.dumps({"answer": letters[index], "probabilities": probabilities})
