"""What a codebook entry is (`Column`, `Export`) and the columns many exports share (who, which session, a test?).

Every export's columns are listed once, as data, in this package (one module per app); the export writes its header
from the list and the codebook (``backend.codebook.codebook``) reads the same list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TYPES = ("text", "integer", "number", "0/1", "time", "JSON")


@dataclass(frozen=True)
class Column:
    """One column: its ``name`` (``<...>`` marks a part that varies, e.g. ``<dimension>_<agent>``), ``type`` (one of
    `TYPES`; ``time`` is ISO-8601 UTC text), ``unit`` ("" where none) and what it means, in a researcher's words.

    >>> Column("rating", "integer", "scale points", "The rating given.").matches("rating")
    True
    >>> Column("<dimension>_<agent>", "integer", "", "A rating.").matches("goal_2")
    True
    """

    name: str
    type: str
    unit: str
    meaning: str

    def __post_init__(self):
        if self.type not in TYPES:
            raise ValueError(f"The column {self.name!r} has the type {self.type!r}; a type is one of {TYPES}.")
        if not self.meaning.strip():
            raise ValueError(f"The column {self.name!r} needs a meaning.")

    @property
    def is_pattern(self) -> bool:
        return "<" in self.name

    def matches(self, header_name: str) -> bool:
        if not self.is_pattern:
            return header_name == self.name
        pattern = "".join(
            ".+?" if part.startswith("<") else re.escape(part) for part in re.split(r"(<[^>]+>)", self.name)
        )
        return re.fullmatch(pattern, header_name) is not None


@dataclass(frozen=True)
class Export:
    """One custom export: the app, oTree's function name, what one row is, and its columns in file order."""

    app: str
    function: str
    row: str
    columns: tuple[Column, ...]

    def names(self) -> list[str]:
        """The header the export writes (pattern columns, e.g. a rubric's dimensions, are left out: the export adds
        the ones its data has)."""
        return [column.name for column in self.columns if not column.is_pattern]


UNDESCRIBED = "(not described in the codebook yet)"


def pick(known: dict[str, Column], names) -> tuple[Column, ...]:
    """The columns ``names`` from ``known``. A name without a definition gets the meaning `UNDESCRIBED` rather than an
    error, so an export never fails over its codebook; tests/backend/test_codebook.py fails on it instead.

    >>> [column.meaning for column in pick(by_name(Column("a", "text", "", "A.")), ["a", "b"])]
    ['A.', '(not described in the codebook yet)']
    """
    return tuple(known.get(name) or Column(name, "text", "", UNDESCRIBED) for name in names)


def by_name(*columns: Column) -> dict[str, Column]:
    return {column.name: column for column in columns}


# Every custom export starts with these (study_flow.test_data.session_cells fills them).
STUDY = (
    Column("session_code", "text", "", "The oTree session the row belongs to."),
    Column("config_name", "text", "", "The session config the session was made from (settings.py SESSION_CONFIGS)."),
    Column(
        "language", "text", "", "The session's language, that of the people's pages: en, de, it or one a lab added."
    ),
    Column(
        "is_test",
        "0/1",
        "",
        "1 for test data: a session from oTree's demo page or a participant who came through a test link. Exports "
        "of all sessions leave tests out; an export of one session keeps them, marked here.",
    ),
)
STUDY_NAMES = tuple(column.name for column in STUDY)

PEOPLE = (
    Column("participant_code", "text", "", "oTree's code of the participant (links rows across exports)."),
    Column(
        "prolific_pid",
        "text",
        "",
        "The participant's Prolific ID (the room link's participant_label); empty for a link without one.",
    ),
    Column(
        "study_id",
        "text",
        "",
        "Prolific's STUDY_ID from the link; empty when the link carried none (a test, or a link made by hand).",
    ),
    Column("prolific_session_id", "text", "", "Prolific's SESSION_ID from the link; empty when it carried none."),
)

INTEGRITY = Column(
    "integrity",
    "text",
    "",
    "Empty for a sound row. Otherwise what was found wrong with the stored row (e.g. 'rating: not a number'); the "
    "row's readable cells are still filled, the unreadable ones left empty.",
)
