"""What the reasoning judge is asked and how its reply is read (`backend.reasoning.judge` runs it).

The model sees what a person sees on the Judge page (`backend.reasoning.task.judging_view`): the game's table and
the first (and, with more than one attempt, the last) response split into sentences labelled ``f0, f1, ...`` and
``l0, l1, ...``; never the Prolog predicates nor the failed queries. It answers with one JSON object::

    {"orig_cor": 0|1, "fin_cor": 0|1, "err_type": ["pa", ...], "sentences": ["f2", ...], "remarks": "..."}

(``fin_cor`` only when the log has more than one attempt). `parse_judgement` reads it and checks it as the page
checks a person's verdict (`backend.reasoning.task.check_verdict`); `token_budget` is the longest judgement the
protocol allows; `scripted_judgement` is the offline judge (the automated check's verdict).
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from backend.core.llm import reply_budget
from backend.core.llm.replies import RepeatedKeyError, echoed_placeholder, json_objects
from backend.reasoning import task
from backend.reasoning.games import ACTIONS, Game
from backend.reasoning.logs import ReasoningLog
from backend.reasoning.protocol import ERROR_TYPES

PROMPTS_PATH = Path(__file__).resolve().parent / "data" / "reasoning_judge_prompts"
# A judge's remark is a sentence or two; the form's own bound (MAX_REMARKS_CHARS) is there for pasted text, and a
# token budget sized for it would cost every call of a small local model most of its context.
DEFAULT_REMARK_CHARS = 500
REMARKS_PLACEHOLDER = "text or empty"  # the reply form's placeholder; remarks repeating it are refused
JSON_LAYOUT_TOKENS = 32  # a model's indentation, line breaks and code fence around the JSON object
_KEYS = {  # accepted spellings of the reply's keys (lower case), canonical first
    "orig_cor": ("orig_cor", "first_correct"),
    "fin_cor": ("fin_cor", "last_correct", "final_correct"),
    "err_type": ("err_type", "err_types", "error_types", "error_type"),
    "sentences": ("sentences", "marked", "marked_sentences", "sentence_ids"),
    "remarks": ("remarks", "remark"),
}
_VERDICT_WORDS = {"correct": 1, "incorrect": 0}


class JudgementParseError(ValueError):
    """A reply that holds no usable judgement: unreadable, ambiguous, or breaking the protocol's rules."""


@dataclass(frozen=True)
class Judgement:
    """A verdict as the Judge page receives it: ``fin_cor`` None for a single attempt; ``marked`` sentence ids."""

    orig_cor: int
    fin_cor: int | None
    err_types: tuple[str, ...]
    marked: tuple[str, ...]
    remarks: str = ""


# --- prompts -------------------------------------------------------------------------------------------------------
@cache
def _template(name: str) -> string.Template:
    return string.Template((PROMPTS_PATH / f"{name}.txt").read_text(encoding="utf-8").strip("\n"))


def check_remark_chars(remark_chars: int) -> None:
    if not 0 <= remark_chars <= task.MAX_REMARKS_CHARS:
        raise ValueError(
            f"The remark length must be from 0 to the form's {task.MAX_REMARKS_CHARS:,} characters, got {remark_chars}."
        )


def _reply_form(log: ReasoningLog) -> str:
    second = ' "fin_cor": 0 or 1,' if len(log.attempts) > 1 else ""
    return (
        f'{{"orig_cor": 0 or 1,{second} "err_type": [error type codes], "sentences": [sentence ids], '
        f'"remarks": "{REMARKS_PLACEHOLDER}"}}'
    )


def _labelled(text: str, prefix: str) -> str:
    """A response as the page shows it, one line per paragraph, each sentence behind its id: ``[f0] ...``."""
    return "\n".join(
        paragraph["marker"] + " ".join(f"[{item['id']}] {item['text']}" for item in paragraph["sentences"])
        for paragraph in task.sentence_paragraphs(text, prefix)
    )


def _table_text(game: Game) -> str:
    header = " | ".join(["model's letter \\ other's letter", *(game.label(action) for action in ACTIONS)])
    return "\n".join([header, *(" | ".join([row["label"], *row["cells"]]) for row in game.table())])


def build_messages(log: ReasoningLog, game: Game, *, remark_chars: int = DEFAULT_REMARK_CHARS) -> list[dict]:
    """The chat messages that ask for a judgement of ``log`` (system: the protocol; user: the page's content).

    >>> from backend.reasoning.games import GAMES
    >>> from backend.reasoning.logs import Attempt
    >>> log = ReasoningLog((Attempt(0, "R pays 5. So {R}"),), "m_pd_p1_1_5_0_3_0_1.txt", game="pd")
    >>> messages = build_messages(log, GAMES["pd"])
    >>> "[f0] R pays 5. [f1] So {R}" in messages[1]["content"], '"fin_cor"' in messages[0]["content"]
    (True, False)
    """
    check_remark_chars(remark_chars)
    error_types = "\n".join(
        f"- {code} ({name}): {definition} Example: {example}"
        for code, (name, definition, example) in ERROR_TYPES.items()
    )
    system = _template("system").substitute(
        error_types=error_types, remark_chars=remark_chars, reply_form=_reply_form(log)
    )
    several = len(log.attempts) > 1
    last_section = (
        "\n"
        + _template("last_section").substitute(
            attempts=len(log.attempts), last_response=_labelled(log.attempts[-1].response, "l")
        )
        if several
        else ""
    )
    user = _template("judge").substitute(
        game_name=game.name,
        game_table=_table_text(game),
        attempts_note=f" (of {len(log.attempts)} attempts)" if several else "",
        first_response=_labelled(log.attempts[0].response, "f"),
        last_section=last_section,
        which="first and the last response" if several else "response",
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def reprompt_message(problem: str) -> dict[str, str]:
    """The follow-up user message after a reply that gave no usable judgement, naming the problem."""
    return {"role": "user", "content": _template("reprompt").substitute(problem=problem)}


def judgement_schema(log: ReasoningLog) -> dict[str, Any]:
    """The JSON schema of a judgement of ``log`` (structured output): the verdicts, codes and ids it may hold.

    Only keywords that strict structured output accepts everywhere (no ``maxLength``, ``uniqueItems``); the
    parser checks the rest.

    >>> from backend.reasoning.logs import Attempt
    >>> schema = judgement_schema(ReasoningLog((Attempt(0, "I get 5. {R}"),)))
    >>> schema["required"], schema["properties"]["sentences"]["items"]["enum"]
    (['orig_cor', 'err_type', 'sentences', 'remarks'], ['f0', 'f1'])
    """
    verdict = {"type": "integer", "enum": [0, 1]}
    properties: dict[str, Any] = {"orig_cor": verdict}
    if len(log.attempts) > 1:
        properties["fin_cor"] = verdict
    properties["err_type"] = {"type": "array", "items": {"type": "string", "enum": list(ERROR_TYPES)}}
    properties["sentences"] = {"type": "array", "items": {"type": "string", "enum": list(task.sentence_index(log))}}
    properties["remarks"] = {"type": "string"}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def token_budget(log: ReasoningLog, *, remark_chars: int = DEFAULT_REMARK_CHARS) -> int:
    """``max_tokens`` of a judgement of ``log``: `reply_budget` of the longest judgement the protocol allows (every
    error type, every sentence id, a remark of ``remark_chars``) with `JSON_LAYOUT_TOKENS` for its layout.

    >>> from backend.reasoning.logs import Attempt
    >>> log = ReasoningLog((Attempt(0, "I get 5. {R}"),))  # longest: 95 characters of JSON + 500 of remarks
    >>> token_budget(log), token_budget(log, remark_chars=0)
    (330, 80)
    """
    check_remark_chars(remark_chars)
    longest = {"orig_cor": 0, "err_type": list(ERROR_TYPES), "sentences": list(task.sentence_index(log))}
    if len(log.attempts) > 1:
        longest["fin_cor"] = 0
    longest["remarks"] = ""
    return reply_budget(len(json.dumps(longest)) + remark_chars, overhead_tokens=JSON_LAYOUT_TOKENS)


# --- reading a reply -----------------------------------------------------------------------------------------------
def _field(data: Mapping[str, Any], name: str) -> tuple[bool, Any]:
    present = [key for key in _KEYS[name] if key in data]
    if len(present) > 1:
        raise JudgementParseError(f"the JSON object gives {name} twice (as {', '.join(present)}).")
    return (True, data[present[0]]) if present else (False, None)


def _verdict(value: Any, name: str) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("0", "1"):
            return int(text)
        if text in _VERDICT_WORDS:
            return _VERDICT_WORDS[text]
    raise JudgementParseError(f"{name} must be 0 (incorrect) or 1 (correct), got {value!r}.")


def _items(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = task.split_codes(value)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise JudgementParseError(f"{name} must be a list of strings, got {value!r}.")
    items = []
    for item in value:
        item = item.strip().strip("[]").strip().lower()
        if item and item not in items:
            items.append(item)
    return items


def parse_judgement(reply: str, log: ReasoningLog) -> Judgement:
    """The judgement in ``reply``, checked as the Judge page checks a person's; `JudgementParseError` otherwise.

    Reads the JSON object (in a code fence or text too; keys in any case; verdicts as 0/1, true/false or
    "correct"/"incorrect"; codes and ids as a list or a ``#``-joined string, case and brackets ignored). Refuses a
    reply with no JSON object, two different judgements, an unknown code or sentence id, a missing verdict, a
    second verdict on a single attempt that differs from the first, and every breach of the protocol's rules.

    >>> from backend.reasoning.logs import Attempt
    >>> log = ReasoningLog((Attempt(0, "I get 5. {R}"),))
    >>> parse_judgement('```json\\n{"orig_cor": 0, "err_type": "PA", "sentences": ["[f0]"]}\\n```', log)
    Judgement(orig_cor=0, fin_cor=None, err_types=('pa',), marked=('f0',), remarks='')
    >>> parse_judgement('{"orig_cor": 0, "err_type": [], "sentences": []}', log)
    Traceback (most recent call last):
    ...
    backend.reasoning.judge_prompts.JudgementParseError: A reasoning judged incorrect needs at least one error type. ...
    """
    if not isinstance(reply, str) or not reply.strip():
        raise JudgementParseError("the reply is empty.")
    candidates = []
    try:
        objects = json_objects(reply)
    except RepeatedKeyError as error:
        raise JudgementParseError(f"{error}.") from None
    for data in objects:
        lowered = {str(key).strip().lower(): value for key, value in data.items()}
        if any(key in lowered for names in _KEYS.values() for key in names):
            judgement = _judgement(lowered, log)
            if judgement not in candidates:
                candidates.append(judgement)
    if not candidates:
        raise JudgementParseError('the reply holds no JSON object with "orig_cor".')
    if len(candidates) > 1:
        raise JudgementParseError(f"the reply holds {len(candidates)} different judgements; give exactly one.")
    return candidates[0]


def _judgement(data: Mapping[str, Any], log: ReasoningLog) -> Judgement:
    has_orig, orig = _field(data, "orig_cor")
    if not has_orig:
        raise JudgementParseError('the JSON object has no "orig_cor" (the verdict on the first response).')
    orig_cor = _verdict(orig, "orig_cor")
    has_fin, fin = _field(data, "fin_cor")
    if len(log.attempts) > 1:
        if not has_fin:
            raise JudgementParseError('the JSON object has no "fin_cor" (the verdict on the last response).')
        fin_cor = _verdict(fin, "fin_cor")
    else:
        if has_fin and fin is not None and _verdict(fin, "fin_cor") != orig_cor:
            raise JudgementParseError("there is a single response, so fin_cor must equal orig_cor (or be left out).")
        fin_cor = None
    err_types = _items(_field(data, "err_type")[1], "err_type")
    marked = _items(_field(data, "sentences")[1], "sentences")
    remarks = _field(data, "remarks")[1]
    if remarks is None:
        remarks = ""
    if not isinstance(remarks, str):
        raise JudgementParseError(f"remarks must be text, got {remarks!r}.")
    if echoed_placeholder(remarks, [REMARKS_PLACEHOLDER]):
        raise JudgementParseError(
            f"the remarks only repeat the placeholder {REMARKS_PLACEHOLDER!r}: write a remark or leave them empty."
        )
    problems = task.check_verdict(
        log, orig_cor=orig_cor, fin_cor=fin_cor, err_type="#".join(err_types), marked="#".join(marked), remarks=remarks
    )
    if problems:
        raise JudgementParseError(" ".join(problems))
    index = list(task.sentence_index(log))
    ordered_codes = [code for code in ERROR_TYPES if code in err_types]
    return Judgement(orig_cor, fin_cor, tuple(ordered_codes), tuple(sorted(marked, key=index.index)), remarks.strip())


# --- the scripted judge ---------------------------------------------------------------------------------------------
def _first_numeric_sentence(log: ReasoningLog, prefix: str) -> str:
    ids = [sentence_id for sentence_id in task.sentence_index(log) if sentence_id.startswith(prefix)]
    index = task.sentence_index(log)
    return next((sentence_id for sentence_id in ids if re.search(r"\d", index[sentence_id])), ids[0])


def scripted_judgement(log: ReasoningLog) -> str:
    """The offline judge's reply: the automated check's verdicts (attempt 0, last attempt); an incorrect response
    gets type ``u`` on its first sentence with a number (else its first sentence).

    >>> from backend.reasoning.logs import Attempt
    >>> print(scripted_judgement(ReasoningLog((Attempt(0, "Hm. I get 5. {R}", (), ("q.",)), Attempt(1, "{B}", (), ())))))
    {"orig_cor": 0, "fin_cor": 1, "err_type": ["u"], "sentences": ["f1"], "remarks": "Scripted: the automated check."}
    """
    orig_cor = int(log.check_passed)
    judgement: dict[str, Any] = {"orig_cor": orig_cor}
    marked = [] if orig_cor else [_first_numeric_sentence(log, "f")]
    if len(log.attempts) > 1:
        judgement["fin_cor"] = int(log.final_check_passed)
        if not judgement["fin_cor"]:
            marked.append(_first_numeric_sentence(log, "l"))
    judgement["err_type"] = ["u"] if marked else []
    judgement["sentences"] = marked
    judgement["remarks"] = "Scripted: the automated check."
    return json.dumps(judgement)
