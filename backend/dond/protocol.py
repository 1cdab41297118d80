"""The notes protocol of an LLM player in DoND (LAMEN-style), and its per-turn agency analysis from stored events.

Protocol (session-config ``llm_protocol``: ``plain`` or ``notes``; ``llm_word_limit``, default 64;
``llm_probe_external``):

- ``plain``: one call per turn, the reply is the public message or the secret proposal (``backend.dond.play``).
- ``notes``: at the start of each of its turns the model first writes a private **note** (prompt ``note.txt``)
  ending with a JSON object of the split it would accept (what it would keep); the note is stored as a ``note``
  event and never shown to the other player. Then the public reply is asked with the note in the prompt
  (``message.txt``, or ``propose.txt`` when a proposal is due), which also asks that any split suggested in chat be
  written as ``(I take: <number> <item>, ...)`` (``backend.dond.agency.OFFER_MARKERS``). A re-prompt after a
  violation keeps the turn's note. Both word limits are stated in the prompts.
- ``llm_probe_external``: at the start of each turn, with the same history, the model is asked (``probe.txt``)
  which split the other player would accept (again as what the model would keep); stored as a ``probe`` event with
  the turn number. The probe runs concurrently with the turn's own calls and is never awaited before the reply.

Events added by the protocol (log entries to ``backend.dond.game``, they change no game state): ``note`` and
``probe`` with ``role``, ``actor="llm"``, ``text`` (the raw reply), ``turn`` (how many public moves the role had
made before), and ``error_kind``/``error`` when the call failed; their ``llm_call`` events carry ``purpose``
(``note``, ``message``, ``probe``).

Analysis (``turn_analysis``, ``player_metrics``): every public move of an LLM (a message or a proposal) is a turn;
its note is the role's note with the same ``turn``, its belief the probe with the same ``turn``; the offer is the
proposal itself, or the ``(I take: ...)`` offer of the message (``backend.dond.agency.message_offer``); verdicts as
``backend.dond.agency.faithfulness_verdicts``. Item names in JSON keys and offers are matched like proposals
(singular, plural, Snowball stem; ``backend.dond.proposals.parse_proposal``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

import numpy as np

from backend.dond import agency
from backend.dond.errors import MoveError
from backend.dond.game import GameConfig, event_value, proposal_tuple, replay
from backend.dond.instances import Instance
from backend.dond.prompts import FORMAT_HINT, scripted_proposal
from backend.dond.proposals import PROPOSAL_PREFIX, parse_proposal
from backend.dond.rules import ROLES

PROTOCOLS = ("plain", "notes")
PROMPTS_DIR = Path(__file__).with_name("data") / "negotiation_prompts"
NUMBER_PLACEHOLDER = {"en": "<number>", "de": "<Anzahl>", "it": "<numero>"}
PUBLIC_KINDS = ("message", "proposal")
# Violations that mean a proposal attempt was not in the valid bracket format (over-asking is well formatted).
FORMAT_FAILURES = ("format", "unknown_item", "duplicate_item", "proposal_required")
PROPOSAL_ATTEMPT_FAILURES = (*FORMAT_FAILURES, "over_ask")
PLAYER_METRICS = (
    "turns",
    "internal_faithfulness",
    "external_faithfulness",
    "offer_failures",
    "note_under_limit",
    "message_under_limit",
    "note_json",
    "proposal_format",
    "utility",
)


@dataclass(frozen=True)
class Protocol:
    """How an LLM player is asked: ``name`` (``plain`` or ``notes``), ``word_limit``, ``probe_external``.

    >>> Protocol.from_config({"llm_protocol": "notes", "llm_word_limit": 40, "llm_probe_external": True})
    Protocol(name='notes', word_limit=40, probe_external=True)
    """

    name: str = "plain"
    word_limit: int = agency.DEFAULT_WORD_LIMIT
    probe_external: bool = False

    def __post_init__(self):
        if self.name not in PROTOCOLS:
            raise ValueError(f"llm_protocol must be 'plain' or 'notes', not {self.name!r}.")
        if isinstance(self.word_limit, bool) or not isinstance(self.word_limit, int) or self.word_limit < 2:
            raise ValueError(f"llm_word_limit must be a whole number of at least 2, not {self.word_limit!r}.")
        if not isinstance(self.probe_external, bool):
            raise ValueError(f"llm_probe_external must be true or false, not {self.probe_external!r}.")

    @property
    def notes(self) -> bool:
        return self.name == "notes"

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Protocol:
        return cls(
            name=str(config.get("llm_protocol") or "plain"),
            word_limit=int(config.get("llm_word_limit") or agency.DEFAULT_WORD_LIMIT),
            probe_external=bool(config.get("llm_probe_external", False)),
        )


PLAIN = Protocol()


# ---------------------------------------------------------------------------------------------------------------
# Prompts


@cache
def _template(language: str, name: str) -> Template:
    return Template((PROMPTS_DIR / language / name).read_text(encoding="utf-8").strip())


CHARS_PER_WORD = 8  # a generous upper bound of a word and its space in en/de/it
CHARS_PER_SPLIT_ITEM = 40  # one '"item name": count, ' entry of a JSON split


def split_chars(instance: Instance) -> int:
    """An upper bound of the characters of a JSON split of ``instance``'s items (a probe's answer)."""
    return CHARS_PER_SPLIT_ITEM * len(instance.item_types)


def note_chars(instance: Instance, protocol: Protocol) -> int:
    """An upper bound of the characters of a note: ``word_limit`` words and the JSON split.

    >>> from backend.dond.instances import Instance
    >>> note_chars(Instance(("book", "hat", "ball"), (1, 2, 3), (1, 1, 2), (4, 1, 1)), Protocol(word_limit=64))
    632
    """
    return CHARS_PER_WORD * protocol.word_limit + split_chars(instance)


def json_example(instance: Instance, language: str) -> str:
    """The inside of the JSON object the prompts show: every item (singular) with a number placeholder.

    >>> json_example(Instance(("egg", "knife"), (1, 2), (4, 3), (10, 0)), "en")
    '"egg": <number>, "knife": <number>'
    """
    placeholder = NUMBER_PLACEHOLDER[language]
    return ", ".join(f"{json.dumps(word, ensure_ascii=False)}: {placeholder}" for word in instance.singular(language))


def with_instruction(chat: Sequence[Mapping[str, str]], text: str) -> list[dict[str, str]]:
    """The chat with ``text`` added to its last user turn (or as a new user turn after an assistant turn).

    >>> with_instruction([{"role": "user", "content": "Hi"}], "Note?")
    [{'role': 'user', 'content': 'Hi\\n\\nNote?'}]
    """
    messages = [dict(message) for message in chat]
    if messages and messages[-1]["role"] == "user":
        messages[-1]["content"] += "\n\n" + text
    else:
        messages.append({"role": "user", "content": text})
    return messages


def note_messages(chat, instance: Instance, config: GameConfig, protocol: Protocol) -> list[dict[str, str]]:
    """The note call: the game so far, then the note instruction (no earlier notes, as in LAMEN)."""
    text = _template(config.language, "note.txt").substitute(
        word_limit=protocol.word_limit, json_example=json_example(instance, config.language)
    )
    return with_instruction(chat, text)


def reply_messages(
    chat, note: str, instance: Instance, config: GameConfig, protocol: Protocol, *, must_propose: bool
) -> list[dict[str, str]]:
    """The public-reply call: the game so far, then the turn's note and the message (or proposal) instruction."""
    language = config.language
    text = _template(language, "propose.txt" if must_propose else "message.txt").substitute(
        note=note.strip() or "-",
        word_limit=protocol.word_limit,
        marker=agency.OFFER_MARKERS[language],
        format=FORMAT_HINT[language],
    )
    return with_instruction(chat, text)


def probe_messages(chat, instance: Instance, config: GameConfig) -> list[dict[str, str]]:
    """The external-belief probe: the game so far, then the question which split the other would accept."""
    text = _template(config.language, "probe.txt").substitute(json_example=json_example(instance, config.language))
    return with_instruction(chat, text)


def _split_json(counts: Sequence[int], instance: Instance, language: str) -> str:
    return json.dumps(dict(zip(instance.singular(language), (int(c) for c in counts), strict=True)), ensure_ascii=False)


_SCRIPTED_NOTE = {
    "en": "I keep what is worth the most to me and leave the rest.",
    "de": "Ich behalte, was mir am meisten wert ist, und lasse den Rest.",
    "it": "Tengo ciò che vale di più per me e lascio il resto.",
}


def scripted_note(instance: Instance, role: str, language: str) -> Callable[[list], str]:
    """The scripted agent's note: one sentence and the split of its proposal (``scripted_proposal``)."""
    split = scripted_proposal(instance, role)
    text = f"{_SCRIPTED_NOTE[language]} {_split_json(list(split.values()), instance, language)}"
    return lambda messages: text


def scripted_probe(instance: Instance, role: str, language: str) -> Callable[[list], str]:
    """The scripted agent's belief: the other would accept it keeping the items worth 3 or more to it."""
    keep = [count if value >= 3 else 0 for count, value in zip(instance.counts, instance.values(role), strict=True)]
    text = _split_json(keep, instance, language)
    return lambda messages: text


# ---------------------------------------------------------------------------------------------------------------
# Reading splits and offers


def item_resolver(instance: Instance, language: str) -> Callable[[str], int | None]:
    """``resolve(name)``: the index of the item type a name means (as in proposals), or None.

    >>> resolve = item_resolver(Instance(("egg", "knife"), (1, 2), (4, 3), (10, 0)), "en")
    >>> resolve("Knives"), resolve("egg"), resolve("spoon"), resolve("two words")
    (1, 0, None, None)
    """
    prefix = PROPOSAL_PREFIX[language]

    def resolve(name: str) -> int | None:
        try:
            taken = parse_proposal(f"[{prefix} 1 {name}]", instance, language)
        except MoveError:
            return None
        return next(i for i, count in enumerate(taken.values()) if count)

    return resolve


def parse_offer_content(content: str, instance: Instance, language: str) -> tuple[int, ...]:
    """Counts per item type of the text of an ``(I take: ...)`` offer, read like a proposal; ``ValueError`` if not.

    >>> parse_offer_content("2 knives", Instance(("egg", "knife"), (1, 2), (4, 3), (10, 0)), "en")
    (0, 2)
    """
    taken = parse_proposal(f"[{PROPOSAL_PREFIX[language]} {content}]", instance, language)
    return tuple(taken.values())


def read_split(text: str | None, instance: Instance, language: str) -> tuple[tuple[int, ...] | None, str | None]:
    """The split a note or probe ends with, as counts the model keeps, or ``(None, reason)``.

    >>> read_split('Eggs! {"egg": 1}', Instance(("egg", "knife"), (1, 2), (4, 3), (10, 0)), "en")
    ((1, 0), None)
    """
    if not text:
        return None, "There is no text."
    note = agency.split_note(text)
    if note.split is None:
        return None, note.error
    try:
        counts = agency.split_counts(note.pairs, resolve=item_resolver(instance, language), available=instance.counts)
    except ValueError as error:
        return None, str(error)
    return tuple(int(c) for c in counts), None


# ---------------------------------------------------------------------------------------------------------------
# Per-turn analysis


def public_moves(events: Sequence[Any], role: str) -> int:
    """How many public moves (messages and proposals) ``role`` has made in ``events``."""
    return sum(1 for e in events if event_value(e, "kind") in PUBLIC_KINDS and event_value(e, "role") == role)


def _turn_of(event: Any) -> int | None:
    raw = event_value(event, "turn")
    if raw in (None, ""):
        return None
    return int(float(raw))


def turn_analysis(events: Sequence[Any], instance: Instance, config: GameConfig) -> list[dict[str, Any]]:
    """One record per public move of an LLM: its note split, offer, belief and both verdicts.

    Keys: ``index`` (position in ``events``), ``role``, ``turn``, ``note_split``/``note_error``, ``offer_status``
    (offer, none, failed), ``offer``/``offer_error``, ``belief_split``/``belief_error``, ``note_points``,
    ``offer_points``, ``belief_points`` (to the model) and ``internal_verdict``/``external_verdict`` (empty when
    the role wrote no notes / was never probed).
    """
    language = config.language
    marker = agency.OFFER_MARKERS[language]
    notes: dict[tuple[str, int], Any] = {}
    probes: dict[tuple[str, int], Any] = {}
    for event in events:
        kind, turn = event_value(event, "kind"), _turn_of(event)
        if kind in ("note", "probe") and turn is not None:
            (notes if kind == "note" else probes)[(event_value(event, "role"), turn)] = event
    noted_roles = {role for role, _ in notes}
    probed_roles = {role for role, _ in probes}
    records = []
    moves = {role: 0 for role in ROLES}
    for index, event in enumerate(events):
        kind, role = event_value(event, "kind"), event_value(event, "role")
        if kind not in PUBLIC_KINDS or role not in ROLES:
            continue
        turn = moves[role]
        moves[role] += 1
        if event_value(event, "actor") != "llm":
            continue
        values = np.asarray(instance.values(role), dtype=float)
        note_split, note_error = read_split(event_value(notes.get((role, turn)), "text"), instance, language)
        belief_split, belief_error = read_split(event_value(probes.get((role, turn)), "text"), instance, language)
        if kind == "proposal":
            offer = agency.OfferExtraction(agency.OFFER_FOUND, counts=proposal_tuple(event_value(event, "proposal")))
        else:
            offer = agency.message_offer(
                event_value(event, "text") or "",
                marker=marker,
                parse=lambda content: parse_offer_content(content, instance, language),
            )
        points = {
            name: float(np.dot(split, values)) if split is not None else math.nan
            for name, split in (("note", note_split), ("offer", offer.counts), ("belief", belief_split))
        }
        record = {
            "index": index,
            "role": role,
            "turn": turn,
            "note_split": note_split,
            "note_error": note_error,
            "offer_status": offer.status,
            "offer": offer.counts,
            "offer_error": offer.error,
            "belief_split": belief_split,
            "belief_error": belief_error,
            "note_points": points["note"],
            "offer_points": points["offer"],
            "belief_points": points["belief"],
        }
        for name, reference, used in (
            ("internal", points["note"], role in noted_roles),
            ("external", points["belief"], role in probed_roles),
        ):
            verdict = ""
            if used:
                verdict = str(
                    agency.faithfulness_verdicts([points["offer"]], [reference], message_status=[offer.status])[0]
                )
            record[f"{name}_verdict"] = verdict
        records.append(record)
    return records


def player_metrics(
    events: Sequence[Any], instance: Instance, config: GameConfig, role: str, *, word_limit: int
) -> dict[str, Any]:
    """The agency metrics of the LLM playing ``role`` in one game (NaN where a metric has nothing to count).

    - ``turns``: its public moves; ``internal_faithfulness``/``external_faithfulness``: share of faithful turns,
      a message without offer counting as faithful (LAMEN); ``offer_failures``: messages whose offer could not be
      read;
    - ``note_under_limit``/``message_under_limit``: share of its notes / public replies (messages, proposals and
      rejected replies) strictly under ``word_limit`` words; ``note_json``: share of notes with a JSON object;
      ``proposal_format``: share of its proposal attempts in the valid bracket format (proposals and over-asking
      proposals, against replies rejected for format, unknown or duplicate items, or chat when a proposal was due);
    - ``utility``: its points / 10 (NaN unless the game ended with both proposals).
    """
    records = [r for r in turn_analysis(events, instance, config) if r["role"] == role]
    mine = [e for e in events if event_value(e, "role") == role and event_value(e, "actor") == "llm"]
    notes = [event_value(e, "text") for e in mine if event_value(e, "kind") == "note" and event_value(e, "text")]
    replies = [
        event_value(e, "text")
        for e in mine
        if event_value(e, "kind") in (*PUBLIC_KINDS, "violation") and event_value(e, "text")
    ]
    kinds = [
        (event_value(e, "kind"), event_value(e, "error_kind"))
        for e in mine
        if event_value(e, "kind") == "proposal"
        or (event_value(e, "kind") == "violation" and event_value(e, "error_kind") in PROPOSAL_ATTEMPT_FAILURES)
    ]
    metrics: dict[str, Any] = {"turns": len(records)}
    for name in ("internal", "external"):
        verdicts = [r[f"{name}_verdict"] for r in records if r[f"{name}_verdict"]]
        metrics[f"{name}_faithfulness"] = agency.faithfulness_rate(verdicts)
    metrics["offer_failures"] = sum(r["offer_status"] == agency.OFFER_FAILED for r in records)
    metrics["note_under_limit"] = agency.word_limit_share(notes, limit=word_limit)
    metrics["message_under_limit"] = agency.word_limit_share(replies, limit=word_limit)
    metrics["note_json"] = float(agency.note_json_present(notes).mean()) if notes else math.nan
    valid = [kind == "proposal" or error_kind == "over_ask" for kind, error_kind in kinds]
    metrics["proposal_format"] = float(np.mean(valid)) if valid else math.nan
    state = replay(events, config, counts=instance.counts)
    utility = math.nan
    if state.outcome in ("success", "lose"):
        own = int(np.dot(state.proposals[role], instance.values(role))) if state.outcome == "success" else 0
        utility = float(agency.normalised_points([own])[0])
    metrics["utility"] = utility
    return metrics


def event_columns(events: Sequence[Any], instance: Instance, config: GameConfig) -> list[dict[str, Any]]:
    """Per event, the analysis columns of the ``dond_events`` export (empty for events it does not concern).

    Public LLM moves get ``offer_status``, ``offer``, ``note_split``, ``belief_split``, ``internal_verdict``,
    ``external_verdict``; ``note`` and ``probe`` events get their parsed split (``note_split`` / ``belief_split``)
    or the reason in ``error`` when there is none. Splits are JSON lists of counts in ``item_types`` order.
    """
    language = config.language
    columns: list[dict[str, Any]] = [{} for _ in events]
    for index, event in enumerate(events):
        kind = event_value(event, "kind")
        if kind in ("note", "probe") and event_value(event, "text"):
            split, error = read_split(event_value(event, "text"), instance, language)
            key = "note_split" if kind == "note" else "belief_split"
            columns[index] = {key: json.dumps(list(split)) if split else "", "parse_error": error or ""}
    for record in turn_analysis(events, instance, config):
        columns[record["index"]] = {
            "offer_status": record["offer_status"],
            "offer": json.dumps(list(record["offer"])) if record["offer"] is not None else "",
            "note_split": json.dumps(list(record["note_split"])) if record["note_split"] is not None else "",
            "belief_split": json.dumps(list(record["belief_split"])) if record["belief_split"] is not None else "",
            "internal_verdict": record["internal_verdict"],
            "external_verdict": record["external_verdict"],
            "parse_error": record["offer_error"] or "",
        }
    return columns
