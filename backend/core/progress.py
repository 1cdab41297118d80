"""What the model runners report while and after they run: a one-line progress bar
(``[#########.....................] 9/30 answered 8 error 1``, rewritten in place on a stream, stderr, or nothing
when the stream is None: ``--quiet``, tests) and the tally of a run (planned, kept from before, finished by status)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TextIO

from backend.core.llm import costs

FAILED_CALLS_HINT = "Some calls failed; run the same command again to ask them again."


FAILED_STATUSES = ("unparseable", "error")  # a unit that produced nothing usable
MOSTLY_FAILED_EXIT = 3  # the exit status of a run in which most units asked failed (``RunTally.mostly_failed``)
SOME_CALLS_FAILED_EXIT = 1  # the exit status of a run with calls that failed for good (ask them again)


@dataclass(kw_only=True)
class RunTally:
    """A resumable run: units ``planned``, ``kept`` from an earlier run, and the new ones finished, by status, with
    the problems of those that failed (``record``). A run is complete when no call failed for good (status
    ``error``): those are asked again next time.

    *Most units failed* when more than half of the units asked in this run (kept ones not counted) ended
    ``unparseable`` or ``error``: 6 of 10 is most, 5 of 10 is not. Such a run (a model that rates nothing, an
    endpoint that refuses every call) ends with a summary of its problems and exit status ``MOSTLY_FAILED_EXIT``
    (3), even when its files were written; a run with some failed calls exits ``SOME_CALLS_FAILED_EXIT`` (1).

    >>> tally = RunTally(planned=3, kept=1)
    >>> tally.record("answered"); tally.record("error", "timeout: no reply in 60 s")
    >>> tally.counts_text(), tally.complete, tally.mostly_failed
    ('1 answered, 1 error', False, False)
    >>> tally.record("unparseable", "goal: the rating 11 is outside the range 0 to 10"); tally.mostly_failed
    True
    """

    planned: int = 0
    kept: int = 0
    counts: Counter = field(default_factory=Counter)
    problems: Counter = field(default_factory=Counter)

    def record(self, status: str, problem: str = "") -> None:
        """Count one finished unit; a failed one's problem is kept for the summary."""
        self.counts[status] += 1
        if status in FAILED_STATUSES:
            self.problems[str(problem or "(no reason given)").strip()[:200]] += 1

    @property
    def complete(self) -> bool:
        return self.counts["error"] == 0

    @property
    def mostly_failed(self) -> bool:
        asked = sum(self.counts.values())
        return 2 * sum(self.counts[status] for status in FAILED_STATUSES) > asked

    def counts_text(self) -> str:
        return ", ".join(f"{count} {status}" for status, count in sorted(self.counts.items())) or "nothing new"

    def problems_text(self, *, limit: int = 5) -> str:
        """The most frequent problems of failed units, one per line: ``  4 x goal: the rating 11 is outside ...``."""
        return "\n".join(f"  {count} x {problem}" for problem, count in self.problems.most_common(limit))

    def finish(self, headline: str) -> int:
        """Print the run's summary line, the problems of failed units, and how to ask failed calls again; return
        the command's exit status (0, ``SOME_CALLS_FAILED_EXIT`` or ``MOSTLY_FAILED_EXIT``)."""
        print(headline)
        failed = sum(self.counts[status] for status in FAILED_STATUSES)
        if failed:
            print(
                f"{failed} of {sum(self.counts.values())} units asked in this run failed; the most frequent problems:"
            )
            print(self.problems_text())
        if not self.complete:
            print(FAILED_CALLS_HINT)
        if self.mostly_failed:
            print(
                "Most units failed (more than half of those asked): the output holds little or nothing usable. "
                "Check the model, the endpoint and the token budget (--context-tokens) before using these files."
            )
            return MOSTLY_FAILED_EXIT
        return 0 if self.complete else SOME_CALLS_FAILED_EXIT


class ProgressBar:
    """Count finished units by status and redraw the line after each.

    >>> import io
    >>> stream = io.StringIO()
    >>> bar = ProgressBar(4, stream, width=8)
    >>> bar.step("answered"); bar.step("error")
    >>> stream.getvalue().split("\\r")[-1]
    '[####....] 2/4 answered 1 error 1'

    A unit made of several steps (a game of many turns) moves the bar as it goes: ``advance(key, fraction)``
    records how much of the unfinished unit ``key`` is done (below 1; its ``step`` replaces it) and counts one
    ``turns``. The bar fills by ``width × (finished + Σ fractions) / total``:

    >>> bar = ProgressBar(2, stream, width=8)
    >>> bar.advance("game 1", 0.5); bar.advance("game 2", 0.25)
    >>> stream.getvalue().split("\\r")[-1]
    '[###.....] 0/2 turns 2'
    >>> bar.step("success", key="game 1")
    >>> stream.getvalue().split("\\r")[-1]
    '[#####...] 1/2 success 1 turns 2'
    """

    def __init__(self, total: int, stream: TextIO | None, *, width: int = 30):
        if total < 0 or width < 1:
            raise ValueError(
                f"A progress bar needs a total of 0 or more and a width of 1 or more, got {total}, {width}."
            )
        self.total, self.stream, self.width, self.done = total, stream, width, 0
        self.counts: Counter = Counter()
        self.parts: dict = {}  # unfinished unit -> the fraction of it done
        self.turns = 0

    def step(self, status: str, *, key=None) -> None:
        """One unit finished with ``status`` (``key``: the unit whose partial progress it replaces)."""
        self.parts.pop(key, None)
        self.done += 1
        self.counts[status] += 1
        self.show()

    def advance(self, key, fraction: float) -> None:
        """One more turn of the unfinished unit ``key``, which is now ``fraction`` done (clipped to 0..0.99)."""
        self.parts[key] = min(max(float(fraction), 0.0), 0.99)
        self.turns += 1
        self.show()

    def show(self) -> None:
        if self.stream is None:
            return
        progress = self.done + sum(self.parts.values())
        filled = min(int(self.width * progress / self.total), self.width) if self.total else self.width
        details = " ".join(f"{status} {count}" for status, count in sorted(self.counts.items()))
        if self.turns:
            details = f"{details} turns {self.turns}".strip()
        cap = costs.SPENDING.get()
        if cap is not None and cap.calls:  # a runner's cap counts what the run's calls cost so far
            details = f"{details} spent {cap.counted().text()}".strip()
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} {details}")
        self.stream.flush()

    def close(self) -> None:
        if self.stream is not None:
            self.stream.write("\n")
            self.stream.flush()
