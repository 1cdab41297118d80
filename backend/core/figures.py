"""Publication figures: one definition per figure, the same for ``python -m backend report --figures`` and for screens.

A figure is a ``FigureSpec``: a file name, a title, ``data`` (every number the figure draws, taken from the report's
JSON data, so a test can compare them with what the text report prints) and a ``draw(figure, data)`` function.
Drawing uses matplotlib's object API (``matplotlib.figure.Figure`` with the Agg canvas: no pyplot, no display, no
network, matplotlib's own DejaVu fonts). Colours are the Okabe-Ito palette (distinguishable with the common colour
vision deficiencies); every series also has its own hatch or marker, so a black-and-white print keeps them apart.

Intervals are drawn as error bars from ``low`` to ``high``; a missing bound (None or NaN) draws no bar.

>>> spec = FigureSpec("demo", "Demo", {"labels": ["a", "b"], "values": [1.0, 2.0]}, lambda fig, d: fig.subplots())
>>> svg_text(spec).startswith("<?xml")
True
"""

from __future__ import annotations

import io
import json
import math
import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.core.paper_tables import html_escape

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Okabe & Ito (2008), "Color Universal Design": orange, sky blue, bluish green, yellow, blue, vermillion, purple.
PALETTE = ["#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442", "#000000"]
HATCHES = ["", "//", "..", "xx", "\\\\", "++", "oo", "--"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
FORMATS = ("svg", "png")
PAGE_SVG_CACHE = 512  # inline SVGs kept for admin pages (least recently used dropped first)
_PAGE_SVGS: OrderedDict[str, str] = OrderedDict()
STYLE = {
    "svg.hashsalt": "backend-figures",  # the same ids in every run: identical files for identical data
    "svg.fonttype": "path",  # text as outlines: the SVG shows the same without matplotlib's fonts installed
    "text.parse_math": False,  # labels come from the data (model, game names): "$10 of $100" is text, never mathtext
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "hatch.linewidth": 0.6,
}


@dataclass(frozen=True)
class FigureSpec:
    """One figure: ``name`` is the file stem, ``data`` the numbers drawn, ``draw(figure, data)`` draws them."""

    name: str
    title: str
    data: dict[str, Any]
    draw: Callable[[Figure, dict[str, Any]], Any]
    size: tuple[float, float] = (6.0, 3.6)  # inches


def style(index: int) -> dict[str, str]:
    """Colour, hatch and marker of the ``index``-th series (cycling).

    >>> style(1)
    {'color': '#56B4E9', 'hatch': '//', 'marker': 's'}
    """
    return {
        "color": PALETTE[index % len(PALETTE)],
        "hatch": HATCHES[index % len(HATCHES)],
        "marker": MARKERS[index % len(MARKERS)],
    }


def number(value: Any) -> float:
    """A drawable float: None and non-numbers become NaN.

    >>> number(None), number("x"), number(2)
    (nan, nan, 2.0)
    """
    try:
        return math.nan if value is None else float(value)
    except (TypeError, ValueError):
        return math.nan


def error_lengths(values: Sequence[Any], lows: Sequence[Any], highs: Sequence[Any]) -> list[list[float]]:
    """matplotlib's ``yerr``/``xerr`` ([below], [above]) from interval bounds; 0 where a bound is missing.

    below = value - low, above = high - value, never negative.

    >>> error_lengths([5, 2], [4, None], [7, 3])
    [[1.0, 0.0], [2.0, 1.0]]
    """
    below, above = [], []
    for value, low, high in zip(values, lows, highs, strict=True):
        v, lo, hi = number(value), number(low), number(high)
        below.append(0.0 if math.isnan(v) or math.isnan(lo) else max(v - lo, 0.0))
        above.append(0.0 if math.isnan(v) or math.isnan(hi) else max(hi - v, 0.0))
    return [below, above]


def panel_grid(count: int, *, per_row: int = 3) -> tuple[int, int]:
    """(rows, columns) of a grid of ``count`` panels, at most ``per_row`` per row: columns = min(count, per_row),
    rows = ceil(count / columns).

    >>> panel_grid(1), panel_grid(4), panel_grid(4, per_row=2)
    ((1, 1), (2, 3), (2, 2))
    """
    if count < 1 or per_row < 1:
        raise ValueError(f"A grid needs at least one panel and one panel per row, not {count} and {per_row}.")
    columns = min(count, per_row)
    return math.ceil(count / columns), columns


def panel_axes(figure: Figure, count: int, *, per_row: int = 3, **options: Any) -> list:
    """The axes of ``count`` panels in a ``panel_grid`` on ``figure`` (``options`` go to ``subplots``, e.g.
    ``sharey=True``); the grid's unused places are hidden."""
    rows, columns = panel_grid(count, per_row=per_row)
    axes = figure.subplots(rows, columns, squeeze=False, **options).ravel()
    for ax in axes[count:]:
        ax.set_visible(False)
    return list(axes[:count])


def grouped_bars(ax, categories: Sequence[str], series: Sequence[dict[str, Any]], *, ylabel: str) -> None:
    """Bars side by side per category; each series is ``{"label", "values", "lows", "highs"}`` (bounds optional)."""
    width = 0.8 / max(len(series), 1)
    for index, one in enumerate(series):
        look = style(index)
        xs = [position + (index - (len(series) - 1) / 2) * width for position in range(len(categories))]
        values = [number(value) for value in one["values"]]
        ax.bar(
            xs,
            [0.0 if math.isnan(v) else v for v in values],
            width,
            label=one["label"],
            color=look["color"],
            hatch=look["hatch"],
            edgecolor="black",
            linewidth=0.6,
        )
        if one.get("lows") is not None:
            errors = error_lengths(values, one["lows"], one["highs"])
            ax.errorbar(xs, values, yerr=errors, fmt="none", ecolor="black", elinewidth=0.8, capsize=3)
    ax.set_xticks(range(len(categories)), categories, rotation=20 if len(categories) > 3 else 0, ha="right")
    ax.set_ylabel(ylabel)
    if len(series) > 1:
        ax.legend(frameon=False, fontsize=8)


def forest(ax, labels: Sequence[str], values, lows, highs, *, xlabel: str, reference: float | None = 0.0) -> None:
    """A forest plot: one row per label, the estimate as a square and its interval as a line; a dashed line at
    ``reference`` (None: none)."""
    ys = list(range(len(labels)))[::-1]
    errors = error_lengths(values, lows, highs)
    ax.errorbar([number(v) for v in values], ys, xerr=errors, fmt="s", color="black", ecolor="black", capsize=3)
    if reference is not None:
        ax.axvline(reference, color=PALETTE[4], linestyle="--", linewidth=0.8)
    ax.set_yticks(ys, labels)
    ax.set_xlabel(xlabel)


def render(spec: FigureSpec) -> Figure:
    """The matplotlib figure of ``spec`` (title on top, layout tightened)."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context(STYLE):
        figure = Figure(figsize=spec.size, layout="constrained")
        spec.draw(figure, spec.data)
        figure.suptitle(spec.title, fontsize=10)
    return figure


def _save(spec: FigureSpec, target, fmt: str) -> None:
    from matplotlib import rc_context

    with rc_context(STYLE):
        metadata = {"Date": None} if fmt == "svg" else {"Software": None}
        render(spec).savefig(target, format=fmt, dpi=300, metadata=metadata)


def svg_text(spec: FigureSpec) -> str:
    """The figure as an SVG document (for a page: inline it, it carries no script)."""
    buffer = io.StringIO()
    _save(spec, buffer, "svg")
    return buffer.getvalue()


def inline_svg(spec: FigureSpec) -> str:
    """The figure as an ``<svg>`` element for a page: no XML declaration, DOCTYPE or comments (matplotlib escapes
    text in comments; labels are drawn as outlines, so no text of the data is markup), scaled to its container.
    A screen reader reads it as one image named by its title (``role="img"``, ``aria-label``, escaped): the outlines
    carry no text for it to read (docs/accessibility.md).

    >>> spec = FigureSpec("demo", 'Demo "A" & B', {}, lambda fig, d: fig.subplots())
    >>> inline_svg(spec).startswith("<svg") and "<!--" not in inline_svg(spec)
    True
    >>> 'role="img" aria-label="Demo &quot;A&quot; &amp; B"' in inline_svg(spec)
    True
    """
    key = json.dumps(
        [spec.name, spec.title, spec.size, _drawer(spec.draw), spec.data],
        sort_keys=True,
        default=str,
    )
    if key in _PAGE_SVGS:  # an admin page reloads with the same data: draw it once (about 0.5 s a figure)
        _PAGE_SVGS.move_to_end(key)
        return _PAGE_SVGS[key]
    text = svg_text(spec)
    text = re.sub(r"<!--.*?-->", "", text[text.index("<svg") :], flags=re.S)
    sized = r'<svg([^>]*?) width="[^"]*" height="[^"]*"'
    label = html_escape(spec.title)
    _PAGE_SVGS[key] = re.sub(
        sized,
        lambda found: f'<svg{found.group(1)} style="max-width:100%;height:auto" role="img" aria-label="{label}"',
        text,
        count=1,
    )
    while len(_PAGE_SVGS) > PAGE_SVG_CACHE:
        _PAGE_SVGS.popitem(last=False)
    return _PAGE_SVGS[key]


def _drawer(draw: Callable) -> str:
    """Which function draws a figure (module, name and line: two lambdas differ)."""
    code = getattr(draw, "__code__", None)
    where = f"{code.co_filename}:{code.co_firstlineno}" if code else ""
    return f"{getattr(draw, '__module__', '')}.{getattr(draw, '__qualname__', repr(draw))}@{where}"


def page_figures(specs: Sequence[FigureSpec]) -> list[dict[str, str]]:
    """What an admin page shows of each figure: ``name``, ``title`` and the inline ``svg``."""
    return [{"name": spec.name, "title": spec.title, "svg": inline_svg(spec)} for spec in specs]


def write_figures(specs: Sequence[FigureSpec], folder: str | Path, *, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Write every figure as ``folder/<name>.<format>``; returns the files written (the folder is created)."""
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise ValueError(f"Two figures share a file name ({sorted(names)}); each figure needs its own name.")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for spec in specs:
        for fmt in formats:
            path = folder / f"{spec.name}.{fmt}"
            _save(spec, path, fmt)
            written.append(path)
    return written
