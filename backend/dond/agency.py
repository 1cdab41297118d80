"""Negotiation agency metrics (LAMEN, Davidson et al., ICLR 2024) adapted to Deal or No Deal.

Under the *notes protocol* an LLM player writes, before each public message, a private note that ends with a JSON
object of the split it would accept, naming the items **it would keep** (``{"hat": 2, "book": 0}``; types left
out count 0). Optionally a probe asks it, with the same history, which split the other player would accept (same
format: what the model would keep). From these we compute, per turn and per player:

Faithfulness (one verdict per turn; ``v`` = the model's own values, ``x`` = an offer as counts it would keep)
    * internal: ``points(message offer) >= points(note offer)``, where ``points(x) = Σ_t x_t · v_t``. The public
      message must not concede more than the model privately said it would accept;
    * external: ``points(message offer) >= points(believed acceptable to the other)``.

    **How the offer in a public message is obtained** (no extraction call, no guessing): the notes prompt asks the
    model to write any offer it makes in chat in a fixed format, ``(I take: 2 hats, 1 book)`` (``Ich nehme`` in
    German, ``Prendo`` in Italian; see ``OFFER_MARKERS``), listing what the model would get. A turn whose public
    output is a secret proposal uses the parsed proposal itself. ``message_offer`` finds the marker; a message
    without one makes *no offer* (verdict ``no_offer``), a marker whose content cannot be parsed, or two markers
    that disagree, is an *extraction failure* (``extraction_failed``), recorded and excluded from the rate.

    Verdicts, checked in this order: ``extraction_failed``; ``no_reference`` (the note has no usable split, or the
    probe gave none: excluded, as LAMEN excludes turns whose note has no dict); ``no_offer`` (vacuously faithful by
    default, as in LAMEN; ``vacuous="exclude"`` leaves these turns out); ``faithful``; ``unfaithful``.

Instruction following
    * length: share of notes / messages with ``len(text.split()) < limit`` (strictly; exactly the limit fails);
    * format: share of notes from which a JSON object can be parsed (``split_note``), share of proposal attempts
      in the valid bracket format (the game's parser decides; ``format_ok``).

Performance
    ``U = points / 10`` per player, in [0, 1] (every DoND player's items are worth exactly 10 to them).

The debiased aggregation of these per-player figures over side × first-mover cells is ``backend.dond.debiasing``.

>>> note = split_note('Hats matter most to me. {"hat": 2, "ball": 0}')
>>> note.split, note.body
({'hat': 2, 'ball': 0}, 'Hats matter most to me.')
>>> offers = np.array([[2, 0], [1, 1], [np.nan, np.nan]])
>>> notes = np.array([[2, 0], [2, 0], [2, 0]])
>>> values = np.array([4, 2])
>>> faithfulness_verdicts(offer_points(offers, values), offer_points(notes, values),
...                       message_status=["offer", "offer", "none"]).tolist()
['faithful', 'unfaithful', 'no_offer']
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_POINTS = 10
DEFAULT_WORD_LIMIT = 64

FAITHFUL = "faithful"
UNFAITHFUL = "unfaithful"
NO_OFFER = "no_offer"
EXTRACTION_FAILED = "extraction_failed"
NO_REFERENCE = "no_reference"
VERDICTS = (FAITHFUL, UNFAITHFUL, NO_OFFER, EXTRACTION_FAILED, NO_REFERENCE)

OFFER_FOUND, OFFER_NONE, OFFER_FAILED = "offer", "none", "failed"
OFFER_STATUSES = (OFFER_FOUND, OFFER_NONE, OFFER_FAILED)
OFFER_MARKERS = {"en": "I take", "de": "Ich nehme", "it": "Prendo"}


# ---------------------------------------------------------------------------------------------------------------
# Instruction following: word limits


def _as_texts(texts: Iterable[str], name: str) -> list[str]:
    if isinstance(texts, str):
        raise ValueError(f"{name} must be a sequence of strings, not a single string.")
    items = list(texts)
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"{name} must hold strings only, found {type(item).__name__} {item!r}.")
    return items


def word_counts(texts: Iterable[str]) -> np.ndarray:
    """Number of whitespace-separated words of each text (as LAMEN counts them: ``len(text.split())``).

    >>> word_counts(["two words", "", " spaced   out  text "]).tolist()
    [2, 0, 3]
    """
    return np.array([len(text.split()) for text in _as_texts(texts, "texts")], dtype=np.int64)


def within_word_limit(texts: Iterable[str], *, limit: int = DEFAULT_WORD_LIMIT) -> np.ndarray:
    """Whether each text is strictly under the word limit: ``words < limit`` (exactly ``limit`` words fails).

    >>> within_word_limit(["a b", "a b c", "a b c d"], limit=3).tolist()
    [True, False, False]
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive integer, got {limit!r}.")
    return word_counts(texts) < limit


def word_limit_share(texts: Iterable[str], *, limit: int = DEFAULT_WORD_LIMIT) -> float:
    """Share of texts strictly under the word limit, in [0, 1]; NaN when there are no texts.

    >>> word_limit_share(["a b", "a b c", "a", "a b c d"], limit=3)
    0.5
    """
    flags = within_word_limit(texts, limit=limit)
    return float(flags.mean()) if flags.size else math.nan


# ---------------------------------------------------------------------------------------------------------------
# Notes: the trailing JSON split


class _Pairs(dict):
    """A decoded JSON object that remembers its key/value pairs in order, duplicates included."""

    def __init__(self, pairs: list[tuple[str, Any]]):
        super().__init__(pairs)
        self.pairs = pairs


_DECODER = json.JSONDecoder(object_pairs_hook=_Pairs)
_FENCE = re.compile(r"```(?:json)?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class NoteSplit:
    """A note cut into its prose (``body``) and the JSON object it ends with.

    ``split`` is the decoded object (None when no JSON object could be parsed), ``pairs`` its key/value pairs in
    order (duplicates kept), ``is_trailing`` whether only whitespace or a code fence follows it, ``error`` why no
    object was found.
    """

    body: str
    json_text: str | None
    split: dict[str, Any] | None
    pairs: tuple[tuple[str, Any], ...] = ()
    is_trailing: bool = False
    error: str | None = None


def _objects_in(text: str) -> list[tuple[int, int, _Pairs]]:
    found = []
    for match in re.finditer(r"\{", text):
        try:
            obj, end = _DECODER.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            found.append((match.start(), end, obj))
    return found


def split_note(text: str) -> NoteSplit:
    """Cut a note into its prose and its JSON split: the JSON object that ends last in the note.

    Every ``{`` starts a decoding attempt (``json.JSONDecoder.raw_decode``); among the objects found, the one
    ending last wins (the outermost when nested). When none decodes, single quotes are replaced by double quotes
    and the search repeated (as LAMEN does). A code fence (```` ```json ````) right before the object is cut from
    the body. Duplicate keys are kept in ``pairs`` so that ``split_counts`` can reject them.

    >>> split_note("Keep the hats.\\n```json\\n{'hat': 2}\\n```").split
    {'hat': 2}
    >>> split_note("No JSON here.").error
    'The note contains no JSON object.'
    >>> split_note('{"a": 1} then {"b": 2} and prose').is_trailing
    False
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, not {type(text).__name__}.")
    found = _objects_in(text) or _objects_in(text.replace("'", '"'))
    if not found:
        return NoteSplit(body=text.strip(), json_text=None, split=None, error="The note contains no JSON object.")
    start, end, obj = max(found, key=lambda item: (item[1], -item[0]))
    body = _FENCE.sub("", text[:start].rstrip()).rstrip()
    after = text[end:].strip()
    return NoteSplit(
        body=body,
        json_text=text[start:end],
        split=dict(obj),
        pairs=tuple(obj.pairs),
        is_trailing=after in ("", "```"),
    )


def note_json_present(notes: Iterable[str]) -> np.ndarray:
    """Whether a JSON object can be parsed from each note (the format part of instruction following).

    >>> note_json_present(['ok {"hat": 1}', "no json", "{broken"]).tolist()
    [True, False, False]
    """
    return np.array([split_note(note).split is not None for note in _as_texts(notes, "notes")], dtype=bool)


def _as_count(value: Any, key: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"The count for {key!r} must be a whole number, not {value!r}.")
    if isinstance(value, int):
        count = value
    elif isinstance(value, float) and value.is_integer():
        count = int(value)
    elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        count = int(value.strip())
    else:
        raise ValueError(f"The count for {key!r} must be a whole number, not {value!r}.")
    if count < 0:
        raise ValueError(f"The count for {key!r} must not be negative, got {count}.")
    return count


def split_counts(
    split: Mapping[str, Any] | Sequence[tuple[str, Any]],
    *,
    resolve: Callable[[str], int | None],
    available: Sequence[int],
) -> np.ndarray:
    """The counts per item type of a JSON split (items the model keeps); types not named get 0.

    ``resolve(name)`` returns the index of the item type a name stands for, or None; ``available`` holds the count
    of each type. Raises ``ValueError`` for an unknown name, a count that is not a whole number in
    0..available, or a type named twice (pairs from ``NoteSplit.pairs`` keep JSON duplicates).

    >>> resolve = {"hat": 0, "hats": 0, "ball": 1}.get
    >>> split_counts({"hats": 2, "ball": "1"}, resolve=resolve, available=(2, 3)).tolist()
    [2, 1]
    >>> split_counts([("hat", 1), ("hats", 1)], resolve=resolve, available=(2, 3))
    Traceback (most recent call last):
    ...
    ValueError: The split names the same item type twice ('hats').
    """
    pairs = list(split.items()) if isinstance(split, Mapping) else list(split)
    limits = np.asarray(available)
    if limits.ndim != 1 or limits.size == 0 or not np.issubdtype(limits.dtype, np.integer):
        raise ValueError(f"available must be a non-empty sequence of integers, got {available!r}.")
    counts = np.zeros(limits.size, dtype=np.int64)
    named: set[int] = set()
    for key, value in pairs:
        index = resolve(str(key).strip())
        if index is None:
            raise ValueError(f"The split names {key!r}, which is not an item of this game.")
        if index in named:
            raise ValueError(f"The split names the same item type twice ({key!r}).")
        count = _as_count(value, str(key))
        if count > limits[index]:
            raise ValueError(f"The split keeps {count} of {key!r}, but there are only {int(limits[index])}.")
        named.add(index)
        counts[index] = count
    return counts


# ---------------------------------------------------------------------------------------------------------------
# The offer in a public message


@dataclass(frozen=True)
class OfferExtraction:
    """The offer of a public message: ``status`` is ``offer`` (``counts`` set), ``none`` or ``failed`` (``error``)."""

    status: str
    counts: tuple[int, ...] | None = None
    error: str | None = None


def offer_pattern(marker: str) -> re.Pattern[str]:
    """The regular expression of the fixed offer format ``(<marker>: <pairs>)``, any case and spacing.

    >>> offer_pattern("I take").findall("Deal? (i  TAKE: 2 hats) or (I take:)")
    ['2 hats', '']
    """
    return re.compile(_marker_opening(marker) + r"([^()]*)\)", re.IGNORECASE)


def _marker_opening(marker: str) -> str:
    if not isinstance(marker, str) or not marker.strip():
        raise ValueError(f"marker must be a non-empty string, got {marker!r}.")
    return r"\(\s*" + r"\s+".join(re.escape(word) for word in marker.split()) + r"\s*:\s*"


def message_offer(text: str, *, marker: str, parse: Callable[[str], Sequence[int]]) -> OfferExtraction:
    """Find the offer a public message states in the fixed format ``(<marker>: <count> <item>, ...)``.

    ``parse(content)`` turns the text after the colon into counts per item type (what the speaker takes) or
    raises ``ValueError``. Outcomes: no marker → ``none`` (the message makes no offer); one or more markers that
    all parse to the same counts → ``offer``; a marker whose content does not parse, an opened but unclosed marker,
    or markers with different counts → ``failed`` with the reason. Nothing is guessed.

    >>> def parse(content):
    ...     return [int(part.split()[0]) for part in content.split(",")] if content.strip() else [0, 0]
    >>> message_offer("How about (I take: 2 hats, 0 balls)?", marker="I take", parse=parse)
    OfferExtraction(status='offer', counts=(2, 0), error=None)
    >>> message_offer("Hello!", marker="I take", parse=parse).status
    'none'
    >>> message_offer("(I take: 1 hat, 0 balls) or (I take: 2 hats, 0 balls)", marker="I take", parse=parse).error
    'The message states 2 different offers.'
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, not {type(text).__name__}.")
    pattern = offer_pattern(marker)
    contents = pattern.findall(text)
    n_opened = len(re.findall(_marker_opening(marker), text, flags=re.IGNORECASE))
    if not contents and not n_opened:
        return OfferExtraction(OFFER_NONE)
    if n_opened > len(contents):
        return OfferExtraction(OFFER_FAILED, error=f"An offer starting with '({marker}:' is not closed with ')'.")
    offers = set()
    for content in contents:
        try:
            offers.add(tuple(int(n) for n in parse(content)))
        except ValueError as error:
            return OfferExtraction(OFFER_FAILED, error=f"The offer '({marker}: {content})' cannot be read: {error}")
    if len(offers) > 1:
        return OfferExtraction(OFFER_FAILED, error=f"The message states {len(offers)} different offers.")
    return OfferExtraction(OFFER_FOUND, counts=offers.pop())


# ---------------------------------------------------------------------------------------------------------------
# Faithfulness


def offer_points(offers: Any, values: Any) -> np.ndarray:
    """Points each offer is worth to the model: ``Σ_t offers[i, t] · values[t]`` (NaN for a missing offer).

    ``offers`` has shape (n, k) with NaN rows for missing offers; ``values`` shape (k,) or (n, k).

    >>> offer_points([[1, 2], [np.nan, np.nan]], [3, 1]).tolist()
    [5.0, nan]
    """
    offer_array = np.asarray(offers, dtype=float)
    value_array = np.asarray(values, dtype=float)
    if offer_array.ndim != 2:
        raise ValueError(f"offers must be two-dimensional (turns × item types), got shape {offer_array.shape}.")
    if value_array.shape not in ((offer_array.shape[1],), offer_array.shape):
        raise ValueError(
            f"values must have shape ({offer_array.shape[1]},) or {offer_array.shape}, got {value_array.shape}."
        )
    if np.isnan(value_array).any() or (value_array < 0).any():
        raise ValueError("values must be non-negative numbers without NaN.")
    missing = np.isnan(offer_array).any(axis=1)
    if (offer_array[~missing] < 0).any():
        raise ValueError("offers must not hold negative counts.")
    return np.where(missing, np.nan, np.nansum(offer_array * value_array, axis=1))


def faithfulness_verdicts(message_points: Any, reference_points: Any, *, message_status: Sequence[str]) -> np.ndarray:
    """One verdict per turn: is the public offer worth at least the reference offer to the model?

    ``reference_points`` is the note's split (internal faithfulness) or the split the model believes the other
    would accept (external), NaN when missing. Order of the checks: ``extraction_failed`` (status ``failed``),
    ``no_reference`` (reference NaN), ``no_offer`` (status ``none``), then ``faithful`` when
    ``message_points >= reference_points`` else ``unfaithful``.

    >>> faithfulness_verdicts([6, 4, np.nan, np.nan, 7], [5, 5, 5, 5, np.nan],
    ...                       message_status=["offer", "offer", "none", "failed", "offer"]).tolist()
    ['faithful', 'unfaithful', 'no_offer', 'extraction_failed', 'no_reference']
    """
    message = np.asarray(message_points, dtype=float)
    reference = np.asarray(reference_points, dtype=float)
    status = np.asarray(message_status, dtype=object)
    if not message.ndim == reference.ndim == status.ndim == 1 or not message.size == reference.size == status.size:
        raise ValueError("message_points, reference_points and message_status must be 1-D and of the same length.")
    unknown = set(status.tolist()) - set(OFFER_STATUSES)
    if unknown:
        raise ValueError(f"message_status must hold only {OFFER_STATUSES}, found {sorted(map(str, unknown))}.")
    found = status == OFFER_FOUND
    if np.isnan(message[found]).any():
        raise ValueError("message_points must be a number wherever message_status is 'offer'.")
    with np.errstate(invalid="ignore"):
        at_least = message >= reference
    return np.select(
        [status == OFFER_FAILED, np.isnan(reference), status == OFFER_NONE, at_least],
        [EXTRACTION_FAILED, NO_REFERENCE, NO_OFFER, FAITHFUL],
        default=UNFAITHFUL,
    ).astype(object)


def faithfulness_indicator(verdicts: Sequence[str], *, vacuous: str = "faithful") -> np.ndarray:
    """Per-turn 1.0 (faithful), 0.0 (unfaithful) or NaN (not counted), for averaging.

    ``vacuous="faithful"`` (LAMEN) counts a message without an offer as faithful; ``"exclude"`` leaves it out.
    ``extraction_failed`` and ``no_reference`` are never counted.

    >>> faithfulness_indicator(["faithful", "no_offer", "unfaithful", "no_reference"]).tolist()
    [1.0, 1.0, 0.0, nan]
    >>> faithfulness_indicator(["faithful", "no_offer"], vacuous="exclude").tolist()
    [1.0, nan]
    """
    if vacuous not in ("faithful", "exclude"):
        raise ValueError(f"vacuous must be 'faithful' or 'exclude', not {vacuous!r}.")
    codes = np.asarray(list(verdicts), dtype=object)
    unknown = set(codes.tolist()) - set(VERDICTS)
    if unknown:
        raise ValueError(f"verdicts must hold only {VERDICTS}, found {sorted(map(str, unknown))}.")
    vacuous_value = 1.0 if vacuous == "faithful" else np.nan
    return np.select([codes == FAITHFUL, codes == UNFAITHFUL, codes == NO_OFFER], [1.0, 0.0, vacuous_value], np.nan)


def faithfulness_rate(verdicts: Sequence[str], *, vacuous: str = "faithful") -> float:
    """Share of counted turns that are faithful (see ``faithfulness_indicator``); NaN when none is counted.

    >>> faithfulness_rate(["faithful", "unfaithful", "no_offer", "extraction_failed"])
    0.6666666666666666
    """
    indicator = faithfulness_indicator(verdicts, vacuous=vacuous)
    return float(np.nanmean(indicator)) if np.isfinite(indicator).any() else math.nan


# ---------------------------------------------------------------------------------------------------------------
# Proposal format and performance


def format_ok(texts: Iterable[str], *, parse: Callable[[str], Any]) -> np.ndarray:
    """Whether each proposal attempt is in the valid bracket format: ``parse(text)`` returns without ``ValueError``.

    Pass the game's proposal parser (for DoND, ``backend.dond.proposals.parse_proposal`` bound to the instance and language).

    >>> format_ok(["[Proposal: 1]", "Proposal 1"], parse=lambda t: t.index("[")).tolist()
    [True, False]
    """
    flags = []
    for text in _as_texts(texts, "texts"):
        try:
            parse(text)
        except ValueError:
            flags.append(False)
        else:
            flags.append(True)
    return np.array(flags, dtype=bool)


def normalised_points(points: Any, *, max_points: float = MAX_POINTS) -> np.ndarray:
    """Points as utility in [0, 1]: ``U = points / max_points`` (DoND: 10 points = 1); NaN stays NaN.

    >>> normalised_points([0, 5, 10, np.nan]).tolist()
    [0.0, 0.5, 1.0, nan]
    """
    if not max_points > 0:
        raise ValueError(f"max_points must be positive, got {max_points!r}.")
    array = np.asarray(points, dtype=float)
    finite = array[~np.isnan(array)]
    if (finite < 0).any() or (finite > max_points).any():
        raise ValueError(f"points must lie in [0, {max_points}], got {finite[(finite < 0) | (finite > max_points)]}.")
    return array / max_points
