"""Prolific's side of a study, as pure rules: the study URL to paste, test participant IDs, the bulk-bonus file and
the review list (``lab_server/study_pages.py`` shows them; ``python -m backend bonus`` writes them from an export).

- **Study URL.** ``study_url(host, room=...)``: the room link with Prolific's placeholders, which Prolific fills per
  participant (24-hex-digit ids).
- **Test PID.** ``fresh_test_pid()``: a fresh, valid Prolific-shaped id (24 lowercase hex digits) for a researcher's own
  test run; the test link marks the participant as a test (``study_flow.test_data``).
- **Bonus file.** One line ``PID,amount`` per participant who finished, or was screened out under a rule that paid
  something, with a bonus above zero; the amount in the study's currency with two decimals, rounded half up; never two
  lines for one PID (Prolific would pay twice).
- **Review list.** Everyone who took a place: their status (finished, declined, screened out, returned, timed out,
  working),
  the reason, the completion code they were shown (if any) and their bonus, so the researcher knows whom to approve.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable, Mapping
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

PLACEHOLDERS = dict(participant_label="{{%PROLIFIC_PID%}}", STUDY_ID="{{%STUDY_ID%}}", SESSION_ID="{{%SESSION_ID%}}")
PROLIFIC_PID = re.compile(r"[0-9a-f]{24}")
# Statuses (backend.core.participant_status.STATUSES) whose bonus is paid; a screen-out is paid only when its rule
# gave a bonus above zero (e.g. a DoND partner who never arrived, when the pages say that is paid).
PAID_STATUSES = ("finished", "screened_out")
REVIEW_COLUMNS = ("prolific_pid", "status", "reason", "completion_code", "bonus", "participant_code", "session_code")


def study_url(host: str, *, room: str) -> str:
    """The URL to paste as the study URL on Prolific (``host`` with scheme, no trailing slash needed).

    >>> study_url("https://lab.example.org/", room="dond_study")
    'https://lab.example.org/room/dond_study?participant_label={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}'
    """
    if not re.fullmatch(r"https?://[^\s/?#]+/?", host or ""):
        raise ValueError(f"The host must be a URL like https://lab.example.org, not {host!r}.")
    if not re.fullmatch(r"[A-Za-z0-9_\-]+", room or ""):
        raise ValueError(f"The room name must be letters, digits, - or _, not {room!r}.")
    query = "&".join(f"{name}={value}" for name, value in PLACEHOLDERS.items())
    return f"{host.rstrip('/')}/room/{room}?{query}"


def fresh_test_pid() -> str:
    """A fresh Prolific-shaped participant id (24 lowercase hex digits) for a test run.

    >>> pid = fresh_test_pid(); bool(PROLIFIC_PID.fullmatch(pid)), pid == fresh_test_pid()
    (True, False)
    """
    return secrets.token_hex(12)


def money(amount, *, places: int = 2) -> Decimal:
    """An amount rounded half up to ``places`` decimals (Prolific takes two).

    >>> money(0.125), money("1.005"), money(2)
    (Decimal('0.13'), Decimal('1.01'), Decimal('2.00'))
    >>> money("lots")
    Traceback (most recent call last):
    ...
    ValueError: The amount 'lots' is not a number.
    """
    try:
        value = Decimal(str(amount))
    except InvalidOperation:
        raise ValueError(f"The amount {amount!r} is not a number.") from None
    if not value.is_finite():
        raise ValueError(f"The amount {amount!r} is not a finite number.")
    return value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def bonus_lines(people: Iterable[Mapping]) -> tuple[list[str], list[str]]:
    """Prolific's bulk-bonus lines (``PID,amount``) and, in plain words, whom they leave out and why.

    Each person is a mapping with ``prolific_pid``, ``status`` (a ``participant_status`` key) and ``bonus`` (money in
    the study's currency). A line is written for a finished or screened-out person with a valid PID and a bonus that
    rounds to at least 0.01; a PID seen twice gets one line, the sum, and a note (it should not happen: the entry lets
    a PID in once per study).

    >>> lines, notes = bonus_lines([
    ...     dict(prolific_pid="a" * 24, status="finished", bonus=0.755),
    ...     dict(prolific_pid="b" * 24, status="returned", bonus=0.4),
    ...     dict(prolific_pid="c" * 24, status="screened_out", bonus=0),
    ...     dict(prolific_pid="d" * 24, status="screened_out", bonus=0.5)])
    >>> lines
    ['aaaaaaaaaaaaaaaaaaaaaaaa,0.76', 'dddddddddddddddddddddddd,0.50']
    >>> notes
    ['bbbbbbbbbbbbbbbbbbbbbbbb: returned, not paid', 'cccccccccccccccccccccccc: screened out with no bonus']
    """
    totals: dict[str, Decimal] = {}
    notes = []
    for person in people:
        pid, status = str(person.get("prolific_pid") or ""), str(person.get("status") or "")
        amount = money(person.get("bonus") or 0)
        if status not in PAID_STATUSES:
            notes.append(f"{pid or '(no PID)'}: {status.replace('_', ' ') or 'no status'}, not paid")
        elif not PROLIFIC_PID.fullmatch(pid):
            notes.append(f"{pid or '(no PID)'}: not a Prolific ID, pay by hand if at all")
        elif amount <= 0:
            notes.append(f"{pid}: {status.replace('_', ' ')} with no bonus")
        elif pid in totals:
            totals[pid] += amount
            notes.append(f"{pid}: appears twice; one line with the sum")
        else:
            totals[pid] = amount
    return [f"{pid},{amount}" for pid, amount in totals.items()], notes


def review_row(person: Mapping, *, completion_code: str, screenout_code: str) -> dict[str, str]:
    """One line of the review list: who, their status and reason, the code they were shown, their bonus.

    The code shown: the completion code to whoever finished, the screen-out code to whoever reached the screen-out
    page (``screened_out``: a failed check, or declined consent, status *declined*: Prolific lists them as a
    screened-out submission), else none; a person's ``code_shown`` (stored when their page showed it) wins over both.

    >>> review_row(dict(prolific_pid="p1", status="declined", reason="declined consent", screened_out=True,
    ...                 bonus=0, participant_code="x1", session_code="s1"), completion_code="C1", screenout_code="S9")
    {'prolific_pid': 'p1', 'status': 'declined', 'reason': 'declined consent', 'completion_code': 'S9', 'bonus': '0.00', 'participant_code': 'x1', 'session_code': 's1'}
    >>> review_row(dict(status="finished", code_shown="OLD1"), completion_code="NEW2", screenout_code="S9")["completion_code"]
    'OLD1'
    """
    status = str(person.get("status") or "")
    code = completion_code if status == "finished" else screenout_code if person.get("screened_out") else ""
    if isinstance(person.get("code_shown"), str) and (status == "finished" or person.get("screened_out")):
        code = person["code_shown"]
    return dict(
        prolific_pid=str(person.get("prolific_pid") or ""),
        status=status.replace("_", " "),
        reason=str(person.get("reason") or ""),
        completion_code=code or "",
        bonus=str(money(person.get("bonus") or 0)),
        participant_code=str(person.get("participant_code") or ""),
        session_code=str(person.get("session_code") or ""),
    )
