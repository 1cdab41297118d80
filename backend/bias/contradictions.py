"""Replies that say two things: the letter names one option, the reply's own words another.

A model asked for a letter may write more than the letter: "A. 150 loaves" agrees with option A (150 loaves);
"A. 250 loaves" names A by its letter and B by its words. ``contradiction`` compares the text after the letter with
what the chosen option says, and returns the reason (empty when the reply agrees or says nothing more):

- *another option's words*: the text is exactly another option's label ("A. 250 loaves", A = 150 loaves);
- *a number*: the text writes numbers, the chosen option's label writes numbers, and none of the text's numbers is
  one of the option's ("A. 15%", A = 20 %); a text that also writes the option's own number agrees ("A, 150, not
  250"); numbers are compared as values ("1,000" = "1000", "2,5" = "2.5");
- *yes or no*: the chosen option starts with yes (no) and the text starts with the other word ("A. No", A = Yes),
  in English, German and Italian (yes/ja/sì, no/nein).

A row with a contradiction is recorded with the letter's answer and ``problem`` starting with
``CONTRADICTION`` ("contradiction: ..."); reports leave it out of the metrics unless asked to include it
(``backend.bias.report``), and count it.

>>> contradiction("A. 250 loaves", ["150 loaves", "250 loaves"], 0)
"the letter A is '150 loaves', but the reply says '250 loaves' (option B)"
>>> contradiction("A. 15%", ["20 %", "25 %"], 0)
"the letter A is '20 %', but the reply writes 15, not a number of that option"
>>> contradiction("A. No", ["Yes", "No"], 0)
"the letter A is 'Yes', but the reply starts with 'No'"
>>> contradiction("A. 150 loaves", ["150 loaves", "250 loaves"], 0), contradiction("B", ["Yes", "No"], 1)
('', '')
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from backend.bias.prompts import LETTERS

CONTRADICTION = "contradiction"  # the first word of a row's ``problem`` when its reply contradicts itself
YES_WORDS = ("yes", "ja", "sì", "si")
NO_WORDS = ("no", "nein")

_EMPHASIS = re.compile(r"[*_`#]+")
_MARKER = re.compile(r"^\s*(?:answer\s*[:=-]?\s*)?(?:option\s+)?[\(\[]?([A-Z])(?:[\)\].:,]|\s|$)", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_FIRST_WORD = re.compile(r"^\W*([^\W\d_]+)")


def is_contradiction(problem: str) -> bool:
    """Whether a row's ``problem`` records a contradiction (``contradiction: ...``)."""
    return str(problem or "").strip().casefold().startswith(CONTRADICTION)


def flagged(reason: str) -> str:
    """The ``problem`` text of a contradiction: ``contradiction: <reason>``."""
    return f"{CONTRADICTION}: {reason}"


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().strip(".!,;:\"'").strip().casefold()


def _value(number: str) -> float:
    """A written number's value: '1,000' and '1.000' with groups of three are thousands; '2,5' is 2.5."""
    if re.fullmatch(r"\d{1,3}(?:[.,]\d{3})+", number) and len(set(re.findall(r"[.,]", number))) == 1:
        return float(re.sub(r"[.,]", "", number))
    return float(number.replace(",", "."))


def _numbers(text: str) -> set[float]:
    return {_value(number) for number in _NUMBER.findall(text)}


def _yes_no(text: str) -> str | None:
    match = _FIRST_WORD.match(text)
    word = match.group(1).casefold() if match else ""
    return "yes" if word in YES_WORDS else "no" if word in NO_WORDS else None


def contradiction(reply: str, labels: Sequence[str], index: int) -> str:
    """Why ``reply``'s own words contradict option ``index`` (0-based) of ``labels``; "" when they do not.

    Only the text after the first option letter is compared (a reply without a leading letter is compared whole);
    the rules are the module's. ``index`` outside the options raises ``ValueError``.
    """
    if not 0 <= index < len(labels):
        raise ValueError(f"index must name one of the {len(labels)} options, got {index}.")
    text = _EMPHASIS.sub("", str(reply or "")).strip()
    marker = _MARKER.match(text)
    if marker and marker.group(1).upper() in LETTERS[: len(labels)]:
        text = text[marker.end() :]
    text = text.strip()
    if not text:
        return ""
    letter, chosen = LETTERS[index], labels[index]
    own_word, said_word = _yes_no(chosen), _yes_no(text)
    if own_word and said_word and own_word != said_word:
        return f"the letter {letter} is {chosen!r}, but the reply starts with {_FIRST_WORD.match(text).group(1)!r}"
    plain = [_plain(label) for label in labels]
    said = _plain(text.splitlines()[0])
    if said != plain[index] and said in plain:
        other = plain.index(said)
        return f"the letter {letter} is {chosen!r}, but the reply says {labels[other]!r} (option {LETTERS[other]})"
    written, own = _numbers(text), _numbers(chosen)
    if written and own and not written & own:
        shown = ", ".join(f"{number:g}" for number in sorted(written))
        return f"the letter {letter} is {chosen!r}, but the reply writes {shown}, not a number of that option"
    return ""
