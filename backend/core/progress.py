"""What the model runners report while and after they run: a one-line progress bar
(``[#########.....................] 9/30 answered 8 error 1``, rewritten in place on a stream, stderr, or nothing
when the stream is None: ``--quiet``, tests) and the tally of a run (planned, kept from before, finished by status)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TextIO

FAILED_CALLS_HINT = "Some calls failed; run the same command again to ask them again."


@dataclass(kw_only=True)
class RunTally:
    """A resumable run: units ``planned``, ``kept`` from an earlier run, and the new ones finished, by status.
    A run is complete when no call failed for good (status ``error``): those are asked again next time.

    >>> tally = RunTally(planned=3, kept=1)
    >>> tally.counts.update(["answered", "error"])
    >>> tally.counts_text(), tally.complete
    ('1 answered, 1 error', False)
    """

    planned: int = 0
    kept: int = 0
    counts: Counter = field(default_factory=Counter)

    @property
    def complete(self) -> bool:
        return self.counts["error"] == 0

    def counts_text(self) -> str:
        return ", ".join(f"{count} {status}" for status, count in sorted(self.counts.items())) or "nothing new"

    def finish(self, headline: str) -> int:
        """Print the run's summary line (and how to ask failed calls again); return the command's exit status."""
        print(headline)
        if not self.complete:
            print(FAILED_CALLS_HINT)
        return 0 if self.complete else 1


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
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} {details}")
        self.stream.flush()

    def close(self) -> None:
        if self.stream is not None:
            self.stream.write("\n")
            self.stream.flush()
