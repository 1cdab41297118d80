"""Which rows of an export ``python -m backend report`` reads: test rows out by default, only the sessions asked for.

An export's ``is_test`` column (``study_flow.test_data``: demo sessions, test links) marks test rows; a file without
the column has no test rows. ``sessions`` keeps only rows whose ``session_code`` is one of them; a file without that
column cannot be selected by session and is refused. Kept rows are copied cell for cell (as the server wrote them,
neutralised cells included), so the report reads the kept rows exactly as it would read the whole file.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Collection
from pathlib import Path

from backend.core.csvio import restore_cell, sniff_separator, truthy_cell

TEST_COLUMN = "is_test"
SESSION_COLUMN = "session_code"


def keep_rows(
    path: Path, out_dir: Path, *, sessions: Collection[str] = (), include_tests: bool = False
) -> tuple[Path, list[str]]:
    """Copy ``path`` into ``out_dir`` with only the rows the report should read; (the copy, what was left out).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "x.csv").write_text("session_code,is_test,v\\nS1,False,1\\nS1,True,2\\nS2,0,3\\n")
    >>> kept, notes = keep_rows(folder / "x.csv", folder / "out", sessions=["S1"])
    >>> kept.read_text().splitlines(), notes
    (['session_code,is_test,v', 'S1,False,1'], ['x.csv: 1 test row left out (--include-tests puts them back)', 'x.csv: 1 row of other sessions left out (S2)'])
    """
    with path.open(encoding="utf-8-sig", newline="") as handle:
        text = handle.read()
    if not text.strip():
        return path, []
    rows = list(csv.reader(text.splitlines(keepends=True), delimiter=sniff_separator(text[: 64 * 1024])))
    header, body = rows[0], rows[1:]
    names = [str(restore_cell(name)).strip() for name in header]
    test_at = names.index(TEST_COLUMN) if TEST_COLUMN in names else None
    session_at = names.index(SESSION_COLUMN) if SESSION_COLUMN in names else None
    if sessions and session_at is None:
        raise ValueError(f"{path} has no session_code column, so --session cannot select its rows.")
    tests, others, kept = 0, Counter(), [header]
    for row in body:
        if not include_tests and test_at is not None and test_at < len(row) and truthy_cell(row[test_at]):
            tests += 1
        elif sessions and (code := row[session_at] if session_at < len(row) else "") not in sessions:
            others[code] += 1
        else:
            kept.append(row)
    notes = []
    if tests:
        notes.append(f"{path.name}: {tests} test row{'s' * (tests != 1)} left out (--include-tests puts them back)")
    if others:
        n = sum(others.values())
        notes.append(f"{path.name}: {n} row{'s' * (n != 1)} of other sessions left out ({', '.join(sorted(others))})")
    if not notes:
        return path, []
    out_dir.mkdir(parents=True, exist_ok=True)
    copy = out_dir / path.name
    with copy.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle, delimiter=sniff_separator(text[: 64 * 1024]), lineterminator="\n").writerows(kept)
    return copy, notes
