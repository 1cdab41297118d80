"""Paper tables: a report's numbers laid out as the papers we reproduce print them, as LaTeX (booktabs) or Markdown.

A ``Table`` holds text cells already formatted (numbers with their intervals and counts); ``to_latex`` escapes
LaTeX's special characters in every cell (model names such as ``gpt_4o`` or ``50%``), ``to_markdown`` escapes ``|``.

>>> table = Table("t", "Scores", ["model", "score"], [["a_b & c", "1.0 [0.5, 1.5]"]])
>>> print(to_latex(table).splitlines()[6])
a\\_b \\& c & 1.0 [0.5, 1.5] \\\\
>>> print(to_markdown(table).splitlines()[2])
| a_b & c | 1.0 [0.5, 1.5] |
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


@dataclass(frozen=True)
class Table:
    """One table: file stem, caption, column headers, rows of text cells."""

    name: str
    caption: str
    columns: list[str]
    rows: list[list[str]]


def latex_escape(text: Any) -> str:
    r"""``text`` with LaTeX's special characters escaped.

    >>> latex_escape("50% of {x}_1 & $y")
    '50\\% of \\{x\\}\\_1 \\& \\$y'
    """
    return "".join(LATEX_SPECIALS.get(char, char) for char in str(text))


def fmt(value: Any, digits: int = 2) -> str:
    """A number with ``digits`` decimals; "–" for None and NaN.

    >>> fmt(0.5), fmt(None), fmt(float("nan")), fmt(3, 0)
    ('0.50', '–', '–', '3')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{float(value):.{digits}f}"


def with_interval(value: Any, low: Any, high: Any, digits: int = 2) -> str:
    """``value [low, high]``, or the value alone when the interval is missing.

    >>> with_interval(1, 0.5, 1.5), with_interval(1, None, None)
    ('1.00 [0.50, 1.50]', '1.00')
    """
    if low is None and high is None:
        return fmt(value, digits)
    return f"{fmt(value, digits)} [{fmt(low, digits)}, {fmt(high, digits)}]"


def to_latex(table: Table) -> str:
    """A booktabs ``table`` environment (needs ``\\usepackage{booktabs}``); the caption escaped too."""
    spec = "l" + "r" * (len(table.columns) - 1)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(latex_escape(column) for column in table.columns) + r" \\",
        *[" & ".join(latex_escape(cell) for cell in row) + r" \\" for row in table.rows],
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{latex_escape(table.caption)}}}",
        rf"\label{{tab:{table.name}}}",
        r"\end{table}",
    ]
    lines.insert(5, r"\midrule")
    return "\n".join(lines) + "\n"


def to_markdown(table: Table) -> str:
    """A GitHub-flavoured Markdown table with the caption above it."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(cell).replace("|", r"\|") for cell in cells) + " |"

    return "\n".join([line(table.columns), line(["---"] * len(table.columns)), *map(line, table.rows)]) + (
        f"\n\n{table.caption}\n"
    )


def write_tables(tables: Sequence[Table], folder: str | Path, *, kind: str) -> list[Path]:
    """Write every table as ``folder/<name>.tex`` (kind "latex") or ``.md`` (kind "markdown")."""
    if kind not in ("latex", "markdown"):
        raise ValueError(f"kind must be 'latex' or 'markdown', not {kind!r}.")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for table in tables:
        path = folder / f"{table.name}.{'tex' if kind == 'latex' else 'md'}"
        path.write_text(to_latex(table) if kind == "latex" else to_markdown(table), encoding="utf-8")
        written.append(path)
    return written
