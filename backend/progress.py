"""The runners' one-line progress bar: ``[#########.....................] 9/30 answered 8 error 1``, rewritten in
place on a stream (stderr), or nothing at all when the stream is None (``--quiet``, tests)."""

from __future__ import annotations

from collections import Counter
from typing import TextIO


class ProgressBar:
    """Count finished units by status and redraw the line after each.

    >>> import io
    >>> stream = io.StringIO()
    >>> bar = ProgressBar(4, stream, width=8)
    >>> bar.step("answered"); bar.step("error")
    >>> stream.getvalue().split("\\r")[-1]
    '[####....] 2/4 answered 1 error 1'
    """

    def __init__(self, total: int, stream: TextIO | None, *, width: int = 30):
        if total < 0 or width < 1:
            raise ValueError(
                f"A progress bar needs a total of 0 or more and a width of 1 or more, got {total}, {width}."
            )
        self.total, self.stream, self.width, self.done = total, stream, width, 0
        self.counts: Counter = Counter()

    def step(self, status: str) -> None:
        self.done += 1
        self.counts[status] += 1
        self.show()

    def show(self) -> None:
        if self.stream is None:
            return
        filled = self.width * self.done // self.total if self.total else self.width
        details = " ".join(f"{status} {count}" for status, count in sorted(self.counts.items()))
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} {details}")
        self.stream.flush()

    def close(self) -> None:
        if self.stream is not None:
            self.stream.write("\n")
            self.stream.flush()
