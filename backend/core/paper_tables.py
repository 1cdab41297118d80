"""Paper tables: a report's numbers laid out as the papers we reproduce print them, as LaTeX (booktabs) or Markdown;
and the one escaping function of each output format the product writes (``latex_escape``, ``markdown_escape``,
``html_escape``), used by every writer of that format: these tables, the release's data card
(``backend.core.data_card``) and the figures on admin pages (``backend.core.figures``).

A ``Table`` holds text cells already formatted (numbers with their intervals and counts). Every cell and caption is
escaped for its format, since names come from researchers and model endpoints (a model called ``gpt_4o & 50%``,
``<script>``, a label with a line break): a line break becomes a space in every format (it would end a Markdown row
and, as a blank line, stop a LaTeX table from compiling), other control characters are dropped.

>>> table = Table("t", "Scores", ["model", "score"], [["a_b & c", "1.0 [0.5, 1.5]"]])
>>> print(to_latex(table).splitlines()[6])
a\\_b \\& c & 1.0 [0.5, 1.5] \\\\
>>> print(to_markdown(table).splitlines()[2])
| a_b &amp; c | 1.0 \\[0.5, 1.5\\] |
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Characters Python reads as line breaks (str.splitlines), and the other control characters (tab aside).
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
CONTROLS = "".join(chr(code) for code in [*range(32), 127] if chr(code) not in LINE_BREAKS + "\t")
FLATTENED = {**{char: " " for char in LINE_BREAKS}, **{char: "" for char in CONTROLS}}
LATEX_SPECIALS = {
    **FLATTENED,
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
    "<": r"\textless{}",  # OT1 (LaTeX's default font encoding) prints < > | as other glyphs
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
# A cell's first character that the command before it would read as its own: ``\\[2pt]`` (a row's end, and
# ``\toprule``, take an optional argument in brackets), ``\\*``.
LATEX_LEADING = ("[", "*")
MARKDOWN_SPECIALS = {
    **FLATTENED,
    **{char: "\\" + char for char in "\\`*_[]|~#$"},  # emphasis, code, links, table cells, headings' #s, math
    "&": "&amp;",  # raw HTML and entities: text, never markup
    "<": "&lt;",
    ">": "&gt;",
}
MARKDOWN_NAME = re.compile(r"[\w .:/+-]+")  # shown as inline code as it is: no character code spans treat specially


@dataclass(frozen=True)
class Table:
    """One table: file stem, caption, column headers, rows of text cells."""

    name: str
    caption: str
    columns: list[str]
    rows: list[list[str]]


def latex_escape(text: Any) -> str:
    r"""``text`` as LaTeX text that prints it: special characters escaped, line breaks as spaces (a blank line ends
    the paragraph: the table no longer compiles), a leading ``[`` or ``*`` guarded by ``{}``.

    >>> latex_escape("50% of {x}_1 & $y")
    '50\\% of \\{x\\}\\_1 \\& \\$y'
    >>> latex_escape("[a]\n\n<b>")
    '{}[a]  \\textless{}b\\textgreater{}'
    """
    escaped = _latex_characters(text)
    return "{}" + escaped if escaped.lstrip().startswith(LATEX_LEADING) else escaped


def _latex_characters(text: Any) -> str:
    return "".join(LATEX_SPECIALS.get(char, char) for char in str(text))


def markdown_escape(text: Any, *, code: bool = False) -> str:
    r"""``text`` as Markdown (GitHub's, CommonMark) that shows it as written, in a table cell or in running text: raw
    HTML and entities as text (``&lt;script&gt;``), the characters of emphasis, code, links, strikethrough, headings,
    table cells and GitHub's math (``$x$``) backslash-escaped (an ``_`` between two letters or digits is never
    emphasis and stays), line breaks as spaces. ``code``: inline code when the text is a plain name (letters, digits,
    ``_ . : / + -``, spaces), else the escaped text.

    >>> markdown_escape("<img src=x onerror=alert(1)> *a*|b\nc")
    '&lt;img src=x onerror=alert(1)&gt; \\*a\\*\\|b c'
    >>> markdown_escape("gpt_4o"), markdown_escape("_x_"), markdown_escape("rating_1", code=True)
    ('gpt_4o', '\\_x\\_', '`rating_1`')
    >>> print(markdown_escape("$x$ costs $5"))
    \$x\$ costs \$5
    """
    text = "".join(FLATTENED.get(char, char) for char in str(text))
    if code and MARKDOWN_NAME.fullmatch(text) and text.strip():
        return f"`{text}`"
    out = []
    for at, char in enumerate(text):
        inside_word = 0 < at < len(text) - 1 and text[at - 1].isalnum() and text[at + 1].isalnum()
        out.append(char if char == "_" and inside_word else MARKDOWN_SPECIALS.get(char, char))
    return "".join(out)


def html_escape(text: Any) -> str:
    """``text`` as HTML text or an attribute's value (quoted): ``& < > " '`` as entities.

    >>> html_escape('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
    """
    return html.escape(str(text), quote=True)


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
        return "| " + " | ".join(markdown_escape(cell) for cell in cells) + " |"

    rule = "| " + " | ".join(["---"] * len(table.columns)) + " |"
    return "\n".join([line(table.columns), rule, *map(line, table.rows)]) + f"\n\n{markdown_escape(table.caption)}\n"


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
