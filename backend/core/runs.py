"""What every resumable runner shares (bias tests, model annotators, the reasoning judge, DoND self-play).

A run's output files are its state: rows are appended, neutralised for spreadsheets (``backend.core.csvio``), as
each unit finishes, and flushed, so a crash keeps everything done so far. Running again reads the rows back exactly
(``read_rows``), keeps the finished ones, rewrites the file with only those (``write_rows``, atomically: a reader sees
the old or the new file, never half of one) and asks only for the rest (``run_each``). ``add_run_options`` gives every
runner the same ``--out``, ``--concurrency``, ``--parse-retries`` and ``--quiet``.

Costs (``backend.core.run_costs``): ``run_command`` sets the run's cost plan and cap; ``run_each`` estimates the
work before its first call and refuses a run whose estimate passes ``--max-cost``.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import re
import sys
import time
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO, TypeVar

from backend.core import run_costs
from backend.core.csvio import neutralise_row, restore_row
from backend.core.llm import cache, costs
from backend.core.progress import ProgressBar

Unit = TypeVar("Unit")
Result = TypeVar("Result")


def read_rows(
    path: str | Path, *, columns: Sequence[str], optional: Collection[str] = (), what: str
) -> list[dict[str, str]]:
    """The rows of an earlier run's CSV, every cell restored as it was before neutralisation; ``[]`` without a file.

    The header must hold ``columns`` in any order, of which those in ``optional`` (columns added in a later version)
    may be missing; a missing one reads as ``""``. Any other header is refused, naming ``what`` the file should be,
    so a run never appends to a foreign file. A UTF-8 BOM (Excel's "CSV UTF-8") is accepted. A last record cut off
    by a crash (the file does not end with a line break) is removed from the file first (``drop_cut_record``): it
    was never finished, and the next row appended would run into it.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_rows(folder / "out.csv", [{"id": "1", "text": "=1+1"}], columns=["id", "text"])
    >>> read_rows(folder / "out.csv", columns=["id", "text", "note"], optional=["note"], what="a test export")
    [{'id': '1', 'text': '=1+1', 'note': ''}]
    """
    path = Path(path)
    if not path.exists():
        return []
    drop_cut_record(path)
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        names = list(reader.fieldnames or [])
        if len(set(names)) != len(names) or not set(columns) - set(optional) <= set(names) <= set(columns):
            raise ValueError(f"{path} exists but does not have the columns of {what}; move it away or pick --out.")
        rows = [restore_row(row) for row in reader]
    return [dict.fromkeys(columns, "") | row for row in rows]


def drop_cut_record(path: str | Path) -> bool:
    """Remove the last record of a CSV file that does not end with a line break (a write cut off by a crash); a
    record may span lines inside quotes. Returns whether anything was removed.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "run.csv"
    >>> _ = path.write_text('id,reply\\r\\n1,"two\\r\\nlines"\\r\\n2,"cut off\\r\\nin the mid', encoding="utf-8")
    >>> drop_cut_record(path), path.read_text(encoding="utf-8").splitlines()
    (True, ['id,reply', '1,"two', 'lines"'])
    """
    path = Path(path)
    text = path.read_bytes().decode("utf-8", errors="surrogateescape")
    if not text or text.endswith("\n"):
        return False
    lines = re.findall(r"[^\n]*\n|[^\n]+$", text)
    reader = csv.reader(lines)
    record_ends = [0]
    for _ in reader:
        record_ends.append(reader.line_num)
    kept = "".join(lines[: record_ends[-2] if len(record_ends) > 1 else 0])
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(kept.encode("utf-8", errors="surrogateescape"))
    os.replace(temporary, path)
    return True


def write_rows(path: str | Path, rows: Iterable[Mapping[str, Any]], *, columns: Sequence[str]) -> None:
    """Write a header and ``rows`` (neutralised) to ``path`` through a temporary file and ``os.replace``."""
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows(neutralise_row(dict(row)) for row in rows)
    os.replace(temporary, path)


def write_text_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and ``os.replace``: readers see the old or the new file."""
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


class RowAppender:
    """Append rows to a run's CSV (a header first when the file is new), neutralised and flushed row by row.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "calls.csv"
    >>> with RowAppender(path, columns=["id", "reply"]) as out:
    ...     out.write([{"id": 1, "reply": "@SUM(A1)"}])
    >>> path.read_text().splitlines()
    ['id,reply', "1,'@SUM(A1)"]
    """

    def __init__(self, path: str | Path, *, columns: Sequence[str]):
        self.path = Path(path)
        self.columns = list(columns)
        self._handle: TextIO | None = None
        self._writer: csv.DictWriter | None = None

    def __enter__(self) -> RowAppender:
        new = not self.path.exists() or self.path.stat().st_size == 0
        self._handle = self.path.open("a", encoding="utf-8", newline="")
        self._writer = csv.DictWriter(self._handle, fieldnames=self.columns)
        if new:
            self._writer.writeheader()
        return self

    def write(self, rows: Iterable[Mapping[str, Any]]) -> None:
        if self._writer is None or self._handle is None:
            raise ValueError("RowAppender.write is only possible inside its `with` block.")
        self._writer.writerows(neutralise_row(dict(row)) for row in rows)
        self._handle.flush()  # a crash keeps every unit finished so far

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            self._handle.close()
        self._handle = self._writer = None


class AdaptiveLimit:
    """How many units may be in flight: slow start, then additive increase and multiplicative decrease (AIMD) on
    latency, as TCP's congestion control does on loss. A server that answers one request at a time
    (llama-cpp-python) makes every call wait for those ahead of it, so its latency grows with the number in flight
    while its throughput does not.

    The rule, after each finished unit with latency L (seconds from start to result):

    - *baseline* B = the lowest latency seen so far; the run starts with one unit in flight, so B is a unit that did
      not queue;
    - L > ``LATENCY_FACTOR`` * B + ``LATENCY_SLACK_S`` (the unit queued): the limit halves, at least to 1, at most
      once per ``limit`` finished units (the units already in flight were started under the old limit);
    - otherwise, before the first halving (*slow start*): the limit grows by 1 per finished unit, doubling per round;
      after it: by 1/limit per finished unit (one more per round); never above ``maximum``.

    Worked example, maximum 8, B = 1 s: fast units raise the limit 1, 2, 3, ... to 8; units finishing after 5 s then
    halve it to 4, and (4 units later) to 2; once latencies are back under 2 * 1 + 0.5 s, three fast units bring it
    to 3, three more to 4, and so on.

    >>> limit = AdaptiveLimit(8)
    >>> for _ in range(7): limit.finished(1.0)
    >>> limit.allowed
    8
    >>> limit.finished(5.0); limit.allowed
    4
    >>> for _ in range(5): limit.finished(1.0)
    >>> limit.allowed, limit.lowest
    (5, 4)
    """

    LATENCY_FACTOR = 2.0
    LATENCY_SLACK_S = 0.5

    def __init__(self, maximum: int):
        check_concurrency(maximum)
        self.maximum, self.limit = maximum, 1.0
        self.baseline: float | None = None
        self.slow_start = True
        self._since_decrease = 0
        self.lowest = maximum  # the lowest limit a halving left (runs and tests read it)

    @property
    def allowed(self) -> int:
        return max(1, int(self.limit))

    def finished(self, seconds: float) -> None:
        self.baseline = seconds if self.baseline is None else min(self.baseline, seconds)
        self._since_decrease += 1
        if seconds > self.LATENCY_FACTOR * self.baseline + self.LATENCY_SLACK_S:
            if self.slow_start or self._since_decrease >= self.allowed:
                self.limit, self._since_decrease, self.slow_start = max(1.0, self.limit / 2), 0, False
                self.lowest = min(self.lowest, self.allowed)
        else:
            self.limit = min(float(self.maximum), self.limit + (1 if self.slow_start else 1 / self.limit))


async def run_each(
    units: Sequence[Unit],
    work: Callable[[Unit], Awaitable[Result]],
    *,
    concurrency: int,
    progress: TextIO | None,
    on_done: Callable[[Unit, Result], str],
    limit: AdaptiveLimit | None = None,
) -> None:
    """Await ``work(unit)`` for every unit, at most ``concurrency`` at once and fewer while the endpoint's latency
    grows (``AdaptiveLimit``; pass ``limit`` to read what it did); ``on_done(unit, result)`` stores the result as it
    arrives and returns its status, which the progress bar (on ``progress``, if any) counts.

    >>> async def square(n): return n * n
    >>> seen = []
    >>> asyncio.run(run_each([1, 2, 3], square, concurrency=2, progress=None,
    ...                      on_done=lambda n, r: seen.append(r) or "answered"))
    >>> sorted(seen)
    [1, 4, 9]
    """
    check_concurrency(concurrency)
    plan = run_costs.PLAN.get()
    if plan is not None and plan.estimate is None:
        plan.estimate = await run_costs.estimate_work(units, work, plan)
        if progress is not None:
            progress.write(f"Estimated cost: {plan.estimate.text()}\n")
        if refusal := costs.over_cap(plan.estimate, plan.limit):
            raise run_costs.CostCapExceeded(refusal)
        if plan.estimate_only:
            raise run_costs.EstimateOnly(plan.estimate.text())
    limit = limit or AdaptiveLimit(concurrency)
    bar = ProgressBar(len(units), progress)
    bar.show()
    changed = asyncio.Condition()
    in_flight = 0

    async def one(unit: Unit) -> None:
        nonlocal in_flight
        async with changed:
            await changed.wait_for(lambda: in_flight < limit.allowed)
            in_flight += 1
        started = time.monotonic()
        try:
            result = await work(unit)
        finally:
            async with changed:
                in_flight -= 1
                limit.finished(time.monotonic() - started)
                changed.notify_all()
        bar.step(on_done(unit, result))

    try:
        await asyncio.gather(*(one(unit) for unit in units))
    finally:
        bar.close()


def add_run_options(
    parser: argparse.ArgumentParser, *, unit: str, out_help: str = "output folder (its files are resumed if present)"
) -> None:
    """The options every runner shares: ``--out`` (required), ``--concurrency`` (4), ``--parse-retries`` (2) and
    ``--quiet``; ``unit`` names what runs at once in the help text (e.g. "calls", "games")."""
    parser.add_argument("--out", type=Path, required=True, help=out_help)
    parser.add_argument("--concurrency", type=int, default=4, help=f"{unit} in flight at once")
    parser.add_argument("--parse-retries", type=int, default=2, help="re-asks after an unusable reply")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    run_costs.add_cost_options(parser)


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The run's keyword arguments from the options of ``add_run_options``: ``out_dir``, ``concurrency`` and
    ``parse_retries``, checked before a file is touched."""
    check_concurrency(args.concurrency)
    check_parse_retries(args.parse_retries)
    return dict(out_dir=args.out, concurrency=args.concurrency, parse_retries=args.parse_retries)


def safe_name(text: str, *, empty: str = "model") -> str:
    """``text`` as part of a file name: every run of characters other than ``A-Z a-z 0-9 . _ -`` becomes one ``_``.

    >>> safe_name("org/model:7b"), safe_name("///"), safe_name("my episodes", empty="x")
    ('org_model_7b', 'model', 'my_episodes')
    """
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or empty


def run_command(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    start: Callable[[argparse.Namespace, TextIO | None], Awaitable[Any]],
    finish: Callable[[Any, float], int],
    *,
    refused: tuple[type[Exception], ...] = (ValueError,),
) -> int:
    """A runner's ``main``: parse ``argv``, run ``start(args, progress)`` (progress is stderr unless ``--quiet``) and
    return ``finish(summary, seconds)``, the exit status. A refused input (``refused``) exits with the parser's usage
    error (status 2) and its sentence, before anything is asked. With ``add_cost_options`` (every runner): the run's
    cost plan and cap are set first; a run whose estimate passes ``--max-cost`` exits ``COST_CAP_EXIT`` with the
    sentence saying by how much, before its first call; the summary ends with the cost line and the run is added to
    ``--out``'s ``run_manifest.json``."""
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        plan = run_costs.cost_plan(args)
    except ValueError as error:
        parser.error(str(error))

    async def planned() -> Any:
        if plan is not None:  # set in the run's own task: every task it starts inherits both
            run_costs.PLAN.set(plan)
            costs.SPENDING.set(plan.cap)
            cache.CACHE.set(plan.cache)  # --cache DIR, else None: nothing is cached
        return await start(args, None if getattr(args, "quiet", False) else sys.stderr)

    try:
        summary = asyncio.run(planned())
    except run_costs.CostCapExceeded as error:
        print(f"Refused: {error}", file=sys.stderr)
        return run_costs.COST_CAP_EXIT
    except run_costs.EstimateOnly as estimate:
        print(f"Estimated cost: {estimate}")
        return 0
    except refused as error:
        parser.error(str(error))
    status = finish(summary, time.monotonic() - started)
    if plan is not None:
        print(run_costs.cost_summary(plan))
        if getattr(args, "out", None):
            run_costs.write_manifest(args.out, plan, argv, time.monotonic() - started)
    return status


def check_concurrency(concurrency: int) -> None:
    """Refuse fewer than one unit in flight with a sentence.

    >>> check_concurrency(0)
    Traceback (most recent call last):
    ...
    ValueError: concurrency must be at least 1, got 0.
    """
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency!r}.")


def check_parse_retries(parse_retries: int) -> None:
    """Refuse a negative number of re-asks with a sentence.

    >>> check_parse_retries(-1)
    Traceback (most recent call last):
    ...
    ValueError: parse_retries must be 0 or more, got -1.
    """
    if isinstance(parse_retries, bool) or not isinstance(parse_retries, int) or parse_retries < 0:
        raise ValueError(f"parse_retries must be 0 or more, got {parse_retries!r}.")
