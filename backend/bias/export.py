"""The export of bias tests: one row per respondent x test x version, the same columns for people and models.

The ``bias_tests`` app's export and ``backend.bias.runner``'s files are both built by ``export_row``, which checks an
answer against what was offered (``check_choice``, ``check_selection``, ``check_confidence``) and fills every one of
``EXPORT_COLUMNS``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from backend.bias.item_fields import is_finite_number
from backend.bias.items import ATTENTION_CHECK, BiasItem, Option, Presented
from backend.core.csvio import escape_text

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
    "cost",  # models: what the answer's calls cost by --prices; 0 when the response cache answered; empty unknown
    "cached_calls",  # models: how many of them the response cache (--cache) answered
)

# Columns added after the first release: files written before them are read with these cells empty.
IDENTIFIER_COLUMNS = ("participant_code", "prolific_pid", "study_id", "answered_at")
MODEL_ANSWER_COLUMNS = ("answer_mode", "answer_source", "problem", "reasoning")
COST_COLUMNS = ("cost", "cached_calls")  # issue 37
ADDED_COLUMNS = IDENTIFIER_COLUMNS + MODEL_ANSWER_COLUMNS + COST_COLUMNS
ESCAPED_COLUMNS = ("raw_reply", "problem", "reasoning")  # model text, kept on one line (backend.core.csvio.escape_text)


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
    if not is_finite_number(value):
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
