"""The evaluation form of the payoff-reasoning protocol: its columns, error types, verdict rules and CSV reading.

One form row = one judge's verdict on one log. The judge fills ``orig_cor`` (attempt 0 correct: 1/0), ``fin_cor``
(last attempt correct; equals ``orig_cor`` when there is one attempt), ``err_type`` (codes joined by ``#``),
``sentence`` (the faulty sentences joined by ``#``) and ``remarks``; the rest is filled from the log, ``con_mat``
from ``orig_cor`` and the automated check (see `backend.reasoning.logs.confusion_label`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

from backend.core.csvio import escape_text, neutralise_cell, read_csv_any
from backend.reasoning.logs import ReasoningLog, confusion_label, failed_queries_field

PROTOCOL_COLUMNS = (
    "file",
    "game",
    "attempts",
    "orig_choice",
    "final_choice",
    "orig_cor",
    "fin_cor",
    "err_type",
    "sentence",
    "con_mat",
    "remarks",
    "failed_queries",
)

# Error types of the protocol: code -> (name, what it means, an example). Wording and examples are ours.
ERROR_TYPES: Mapping[str, tuple[str, str, str]] = {
    "pa": (
        "Payoff assignment",
        "A payoff is attached to the wrong pair of choices, or to the wrong player.",
        "The response says that choosing B while the other picks R earns 3, but the table gives 0 for that cell.",
    ),
    "rga": (
        "Risk / gain assessment",
        "An action is said to secure a better worst case (or to offer a better best case) than another action, "
        "and the table shows it does not.",
        "'R is the safe option because its lowest payoff is higher', when R's lowest payoff is actually the smaller.",
    ),
    "pc": (
        "Payoff comparison",
        "Two amounts are compared the wrong way round.",
        "'Getting 1 here is better than the 3 I would get otherwise.'",
    ),
    "u": (
        "Unclassified",
        "Any other mistake about the payoffs that fits none of the three types above.",
        "The response adds up or averages payoffs incorrectly.",
    ),
}


def split_hash_field(cell: object) -> list[str]:
    """The items of a ``#``-joined cell, stripped, blanks dropped (NaN and None give []).

    >>> split_hash_field(" pa#rga# ")
    ['pa', 'rga']
    """
    if cell is None or cell != cell:  # None or NaN
        return []
    return [item.strip() for item in str(cell).split("#") if item.strip()]


def join_hash_field(items: Iterable[str]) -> str:
    """Join items with ``#``; an item must not contain ``#`` itself (it could not be split again).

    >>> join_hash_field(["First.", "Second."])
    'First.#Second.'
    """
    items = list(items)
    for item in items:
        if "#" in item:
            raise ValueError(f"An item of a '#'-joined field cannot contain '#': {item[:60]!r}.")
    return "#".join(items)


def verdict_errors(
    *, orig_cor: int, fin_cor: int, n_attempts: int, err_types: Iterable[str], sentences: Iterable[str]
) -> list[str]:
    """The reasons a judge's verdict breaks the protocol's rules, as sentences for the judge; [] when it is valid.

    Rules: verdicts are 0/1; with one attempt ``fin_cor`` equals ``orig_cor``; error types are known codes; a verdict
    that finds either attempt incorrect names at least one error type and one sentence; an all-correct verdict names
    none.

    >>> verdict_errors(orig_cor=0, fin_cor=1, n_attempts=2, err_types=["pa"], sentences=["I get 5."])
    []
    >>> verdict_errors(orig_cor=1, fin_cor=1, n_attempts=1, err_types=["pa"], sentences=[])
    ['A reasoning judged correct has no error types; untick them or mark the reasoning incorrect.']
    """
    err_types, sentences = list(err_types), [s for s in sentences if s.strip()]
    problems = []
    for name, value in (("orig_cor", orig_cor), ("fin_cor", fin_cor)):
        if value not in (0, 1):
            problems.append(f"The verdict {name} must be 0 or 1, got {value!r}.")
    if n_attempts < 1:
        problems.append(f"A log has at least one attempt, got {n_attempts}.")
    if problems:
        return problems
    if n_attempts == 1 and fin_cor != orig_cor:
        problems.append("With a single attempt, the final verdict must equal the first one.")
    unknown = [code for code in err_types if code not in ERROR_TYPES]
    if unknown:
        problems.append(f"Unknown error type(s) {', '.join(map(repr, unknown))}; use {', '.join(ERROR_TYPES)}.")
    if orig_cor == 0 or fin_cor == 0:
        if not err_types:
            problems.append("A reasoning judged incorrect needs at least one error type.")
        if not sentences:
            problems.append("A reasoning judged incorrect needs at least one marked sentence.")
    else:
        if err_types:
            problems.append(
                "A reasoning judged correct has no error types; untick them or mark the reasoning incorrect."
            )
        if sentences:
            problems.append("A reasoning judged correct has no faulty sentences; unmark them or mark it incorrect.")
    return problems


def protocol_row(
    log: ReasoningLog,
    *,
    orig_cor: int,
    fin_cor: int,
    err_types: Iterable[str] = (),
    sentences: Iterable[str] = (),
    remarks: str = "",
) -> dict[str, object]:
    """One row of the form (keys = `PROTOCOL_COLUMNS`, in order) for a judge's valid verdict on ``log``.

    >>> from backend.reasoning.logs import Attempt
    >>> log = ReasoningLog((Attempt(0, "I get 5. {R}", (), ("q.",)), Attempt(1, "{B}", (), ())), "x.txt", game="pd")
    >>> row = protocol_row(log, orig_cor=0, fin_cor=1, err_types=["pa"], sentences=["I get 5."])
    >>> row["attempts"], row["orig_choice"], row["final_choice"], row["con_mat"], row["failed_queries"]
    (2, 'R', 'B', 'TN', '0#q.')
    """
    err_types, sentences = list(err_types), list(sentences)
    problems = verdict_errors(
        orig_cor=orig_cor, fin_cor=fin_cor, n_attempts=len(log.attempts), err_types=err_types, sentences=sentences
    )
    if problems:
        raise ValueError(" ".join(problems))
    return {
        "file": log.filename or "",
        "game": log.game or "",
        "attempts": len(log.attempts),
        "orig_choice": log.orig_choice or "",
        "final_choice": log.final_choice or "",
        "orig_cor": int(orig_cor),
        "fin_cor": int(fin_cor),
        "err_type": join_hash_field(err_types),
        "sentence": join_hash_field(sentences),
        "con_mat": confusion_label(orig_cor, log.check_passed),
        "remarks": remarks or "",
        "failed_queries": failed_queries_field(log),
    }


def _binary(value: str, *, column: str, path: Path, row: int) -> int:
    try:
        number = float(value)
    except ValueError:
        number = None
    if number not in (0.0, 1.0):
        raise ValueError(f"{path.name}, data row {row}: {column} must be 0 or 1, got {value!r}.")
    return int(number)


def read_protocol_form(path: str | Path) -> pd.DataFrame:
    """Read a filled form whatever its separator (``;`` or ``,``), line ends or extra index column.

    Returns the `PROTOCOL_COLUMNS` in order, as text, except ``attempts``, ``orig_cor`` and ``fin_cor`` as integers
    (``1.0`` becomes 1); blank cells are empty strings.
    """
    path = Path(path)
    frame = read_csv_any(path, dtype=str, keep_default_na=False)
    frame = frame.drop(columns=[column for column in frame.columns if str(column).startswith("Unnamed:")])
    frame.columns = [str(column).strip() for column in frame.columns]
    missing = [column for column in PROTOCOL_COLUMNS if column not in frame.columns]
    if missing:
        raise ValueError(f"{path.name} lacks the protocol column(s) {missing}; it has {list(frame.columns)}.")
    frame = frame[list(PROTOCOL_COLUMNS)].copy()
    for column in ("file", "game", "orig_choice", "final_choice", "con_mat", "failed_queries"):
        frame[column] = frame[column].str.strip()
    for column in ("orig_cor", "fin_cor"):
        frame[column] = [
            _binary(value.strip(), column=column, path=path, row=row) for row, value in enumerate(frame[column], 1)
        ]
    import pandas as pd

    frame["attempts"] = pd.to_numeric(frame["attempts"], errors="raise").astype(int)
    return frame


SEPARATORS = (";", ",", "\t", "|")
# How the report joins several judges' verdicts on one log (backend.reasoning.report; session key aggregation_rule).
RULES = ("unanimity", "majority")


def export_cell(column: str, value: object) -> object:
    """A protocol cell as every export writes it: None as empty; ``remarks``, the only free multi-line text, with
    line breaks kept as ``\\n`` (`backend.core.csvio.escape_text` with ``line_breaks_only``: the protocol's form).

    >>> export_cell("remarks", "a\\r\\nb"), export_cell("fin_cor", None), export_cell("orig_cor", 1)
    ('a\\\\nb', '', 1)
    """
    if value is None:
        return ""
    return escape_text(str(value), line_breaks_only=True) if column == "remarks" else value


def protocol_csv(rows: Iterable[Mapping[str, object]], *, separator: str = ";") -> str:
    """The form as CSV text: the `PROTOCOL_COLUMNS` header, then one line per row (cells quoted when needed).

    Cells as `export_cell` gives them (``remarks`` keep their line breaks as ``\\n``). Text that a spreadsheet
    would run as a formula (a model's sentence or a remark starting with ``=``, ``+``, ``-``,
    ``@``) gets a ``'`` in front (`backend.core.csvio.neutralise_cell`); `read_protocol_form` takes it off again.

    >>> print(protocol_csv([{"file": "a.txt", "remarks": "x; y", "sentence": "=1+1", "orig_cor": 0}]), end="")
    file;game;attempts;orig_choice;final_choice;orig_cor;fin_cor;err_type;sentence;con_mat;remarks;failed_queries
    a.txt;;;;;0;;;'=1+1;;"x; y";
    """
    if separator not in SEPARATORS:
        raise ValueError(f"separator must be one of {SEPARATORS!r}, got {separator!r}.")
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=separator, lineterminator="\n")
    writer.writerow(PROTOCOL_COLUMNS)
    for row in rows:
        writer.writerow(neutralise_cell(export_cell(column, row.get(column))) for column in PROTOCOL_COLUMNS)
    return buffer.getvalue()
