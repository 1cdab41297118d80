"""One study on several servers: their exports read as one, with every server's codes kept apart.

oTree keeps a session in one process, so a study too large for one server runs as one room and one session on each of
several servers (docs/multi-server.md). Each server issues its own session and participant codes, 8 random
characters: two servers can issue the same code, and a report that reads both exports as they are would count two
people as one (the social report keeps one rating per annotator and episode, so the second server's "same" annotator
would silently vanish). ``label_export`` writes a copy of one server's export in which every code is prefixed with the
server's name and a colon, as if one server had issued all codes. The codes are the cells of the columns that hold a participant or session code (``participant_code``,
``participant_a``/``_b``, ``annotator``, ``session_code``, whatever their case: ``backend.core.release.identifier_kind``),
and every occurrence of one of them in any cell is prefixed: a person's ``respondent_id`` (bias tests), a game id
``<session code>-<number>``, a code quoted in text (so that a release pseudonymises it with the rest).

Model judges (``model:…``), model respondents and every other cell stay as they are, so every figure of the report
over the labelled copies is the figure of one server holding all the rows. Prolific IDs are not changed: they name
the person, whichever server they came to. ``people_on_several_servers`` lists each Prolific ID found on more than one
server (a participant who came back through the study link and was sent elsewhere): the report still counts each
server's participant apart, and says so.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "a.csv").write_text("session_code,game_id,participant_code,prolific_pid,rating\\n"
...                                   "ab12cd34,ab12cd34-1,p1x2y3z4,5f00aa,7\\n")
>>> labelled = label_export(folder / "a.csv", folder / "out", server="lab1")
>>> labelled.read_text().splitlines()[1]
'lab1:ab12cd34,lab1:ab12cd34-1,lab1:p1x2y3z4,5f00aa,7'
>>> _ = (folder / "b.csv").write_text("session_code,participant_code,prolific_pid\\nab12cd34,zz99yy88,5f00aa\\n")
>>> people_on_several_servers({"lab1": [folder / "a.csv"], "lab2": [folder / "b.csv"]})
['Prolific ID 5f00aa came to 2 servers: lab1 (participant p1x2y3z4), lab2 (participant zz99yy88); the report counts them as 2 participants.']
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from backend.core.csvio import restore_cell, sniff_separator, truthy_cell
from backend.core.release import identifier_kind, is_model_identifier

SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
SEPARATOR = ":"
CODE_KINDS = ("participant", "session")  # identifier kinds a server issues (Prolific's IDs are the person's own)
TEST_COLUMN = "is_test"  # backend.core.report_rows
MIN_CODE_CHARS = 4  # as backend.core.release: a shorter value (a stray "1") is not searched for inside cells


def check_servers(names: Sequence[str], *, files: int) -> list[str]:
    """The server names, one per CSV file in order; ValueError for a wrong count or name.

    >>> check_servers(["lab1", "lab2"], files=2)
    ['lab1', 'lab2']
    >>> check_servers(["lab1"], files=2)
    Traceback (most recent call last):
    ValueError: --servers names 1 server but 2 CSV files are given: name the server of every CSV file, in order (a name may repeat when one server gave several files).
    """
    names = [str(name).strip() for name in names]
    if len(names) != files:
        raise ValueError(
            f"--servers names {len(names)} server{'s' * (len(names) != 1)} but {files} CSV file"
            f"{'s are' if files != 1 else ' is'} given: name the server of every CSV file, in order (a name may "
            "repeat when one server gave several files)."
        )
    for name in names:
        if not SERVER_NAME.match(name):
            raise ValueError(
                f"The server name {name!r} is not usable: use 1 to 32 letters, digits, '_', '.' or '-', starting "
                "with a letter or digit (e.g. lab1)."
            )
    return names


def _read(path: Path) -> tuple[list[str], list[str], list[list[str]], str]:
    """(raw header, header names, rows, separator) of a CSV export, cells as written."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            text = handle.read()
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path} is not UTF-8 text (byte {error.start + 1} cannot be read): pass the file as the server exported it."
        ) from None
    separator = sniff_separator(text[: 64 * 1024])
    rows = list(csv.reader(text.splitlines(keepends=True), delimiter=separator)) or [[]]
    names = [str(restore_cell(name)).strip() for name in rows[0]]
    return rows[0], names, rows[1:], separator


def _code_columns(names: Sequence[str]) -> list[int]:
    return [at for at, name in enumerate(names) if identifier_kind(name) in CODE_KINDS]


def _codes(names: Sequence[str], rows: Sequence[Sequence[str]]) -> tuple[set[str], set[str]]:
    """(participant codes, session codes) the export holds."""
    people, sessions = set(), set()
    for at in _code_columns(names):
        kind = identifier_kind(names[at])
        for row in rows:
            cell = row[at].strip() if at < len(row) else ""
            if not cell or is_model_identifier(cell):
                continue
            (sessions if kind == "session" else people).add(cell)
    return people, sessions


def label_export(path: Path, out_dir: Path, *, server: str) -> Path:
    """A copy of ``path`` in ``out_dir`` (named ``<server>-<file name>``) with every occurrence of this server's codes
    prefixed by ``<server>:`` (see the module docstring); Prolific columns and the header are copied as written."""
    (server,) = check_servers([server], files=1)
    header, names, rows, separator = _read(path)
    people, sessions = _codes(names, rows)
    codes = sorted((code for code in people | sessions if len(code) >= MIN_CODE_CHARS), key=len, reverse=True)
    pattern = re.compile("|".join(map(re.escape, codes))) if codes else None
    kept = {at for at, name in enumerate(names) if identifier_kind(name) == "prolific"}
    labelled = [header]
    for row in rows:
        if pattern is not None:
            row = [
                cell if at in kept else pattern.sub(lambda m: f"{server}{SEPARATOR}{m.group(0)}", cell)
                for at, cell in enumerate(row)
            ]
        labelled.append(row)
    out_dir.mkdir(parents=True, exist_ok=True)
    copy = out_dir / f"{server}-{path.name}"
    with copy.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle, delimiter=separator, lineterminator="\n").writerows(labelled)
    return copy


def people_on_several_servers(
    files_by_server: Mapping[str, Sequence[Path]], *, include_tests: bool = False
) -> list[str]:
    """One sentence per Prolific ID (``prolific_pid``, ``prolific_pid_a``/``_b``, any case) found on more than one
    server, naming the servers and the participant codes there; sorted by Prolific ID. Test rows (``is_test``) are
    not looked at unless ``include_tests``, as the report leaves them out."""
    seen: dict[str, dict[str, set[str]]] = {}
    for server, paths in files_by_server.items():
        for path in paths:
            _, names, rows, _ = _read(Path(path))
            lower = [name.lower() for name in names]
            test_at = lower.index(TEST_COLUMN) if TEST_COLUMN in lower and not include_tests else None
            rows = [row for row in rows if test_at is None or test_at >= len(row) or not truthy_cell(row[test_at])]
            for at, name in enumerate(lower):
                if identifier_kind(name) != "prolific":
                    continue
                suffix = name.removeprefix("prolific_pid")  # "", "_a", "_b": whose code stands beside it
                code_name = "participant" + suffix if suffix else "participant_code"
                if code_name not in lower and not suffix and "annotator" in lower:
                    code_name = "annotator"  # social_eval's exports name the participant code so
                code_at = lower.index(code_name) if code_name in lower else None
                for row in rows:
                    pid = row[at].strip() if at < len(row) else ""
                    if pid:
                        code = row[code_at].strip() if code_at is not None and code_at < len(row) else ""
                        seen.setdefault(pid, {}).setdefault(server, set()).add(code)
    notes = []
    for pid, servers in sorted(seen.items()):
        if len(servers) > 1:
            where = ", ".join(
                f"{server} (participant {', '.join(sorted(c for c in codes if c)) or 'without a code'})"
                for server, codes in sorted(servers.items())
            )
            notes.append(
                f"Prolific ID {pid} came to {len(servers)} servers: {where}; the report counts them as "
                f"{sum(len(codes) for codes in servers.values())} participants."
            )
    return notes


def pairs_problem(servers: Sequence[str], sessions: Sequence[str]) -> str | None:
    """What is wrong with the ``--server``/``--session`` pairs, or None: not in pairs, or a pair given twice (its URL
    however written: case, a slash at the end), whose bonus lines would be summed with themselves (`one_bonus_file`):
    everyone paid twice.

    >>> pairs_problem(["https://lab.example.org", "HTTPS://Lab.Example.org/"], ["abc123", "abc123"])
    'https://lab.example.org (session abc123) is given twice.'
    >>> pairs_problem(["https://lab.example.org", "https://lab.example.org"], ["abc123", "def456"])
    >>> pairs_problem(["https://lab.example.org"], ["abc123", "def456"])
    'give --server and --session in pairs: 1 servers, 2 sessions'
    """
    from urllib.parse import urlsplit

    if len(servers) != len(sessions):
        return f"give --server and --session in pairs: {len(servers)} servers, {len(sessions)} sessions"
    given = set()
    for server, session in zip(servers, sessions, strict=True):
        parts = urlsplit(server.strip())
        pair = (f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}", session.strip())
        if pair in given:
            return f"{pair[0]} (session {pair[1]}) is given twice."
        given.add(pair)
    return None


def one_bonus_file(files: Sequence[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """Prolific's bulk-bonus lines of several servers as one file, from (server, the server's bonus file) pairs; and
    a sentence for each Prolific ID that has a line on more than one server. Prolific takes one line per ID: such a
    person gets one line, the sum of what each server pays them (each server's own line is what its pages stated).

    >>> lines, flags = one_bonus_file([("lab1", "a" * 24 + ",0.50\\n" + "b" * 24 + ",1.00\\n"),
    ...                                 ("lab2", "c" * 24 + ",0.25\\n" + "a" * 24 + ",0.30\\n")])
    >>> lines
    ['aaaaaaaaaaaaaaaaaaaaaaaa,0.80', 'bbbbbbbbbbbbbbbbbbbbbbbb,1.00', 'cccccccccccccccccccccccc,0.25']
    >>> flags
    ['Prolific ID aaaaaaaaaaaaaaaaaaaaaaaa has a bonus on 2 servers: lab1 0.50, lab2 0.30; one line pays the sum, 0.80.']
    """
    from decimal import Decimal

    from backend.core.prolific import money

    paid: dict[str, list[tuple[str, Decimal]]] = {}
    for server, text in files:
        for line in text.splitlines():
            if line.strip():
                pid, _, amount = line.strip().partition(",")
                paid.setdefault(pid, []).append((server, money(amount)))
    lines, flags = [], []
    for pid, amounts in sorted(paid.items()):
        total = sum((amount for _, amount in amounts), Decimal("0"))
        lines.append(f"{pid},{total}")
        if len(amounts) > 1:
            each = ", ".join(f"{server} {amount}" for server, amount in amounts)
            flags.append(
                f"Prolific ID {pid} has a bonus on {len(amounts)} servers: {each}; one line pays the sum, {total}."
            )
    return lines, flags


def one_review_list(files: Sequence[tuple[str, str]]) -> str:
    """The review lists (CSV) of several servers as one, from (server, the server's review list) pairs: a first
    column ``server`` naming each row's server, the header once, every cell as the server wrote it (a participant's
    code is looked up on its server).

    >>> print(one_review_list([("lab1", "prolific_pid,status\\naa,finished\\n"), ("lab2", "prolific_pid,status\\nbb,returned\\n")]), end="")
    server,prolific_pid,status
    lab1,aa,finished
    lab2,bb,returned
    """
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    header: list[str] | None = None
    for server, text in files:
        rows = list(csv.reader(io.StringIO(text)))
        if not rows:
            continue
        if header is None:
            header = rows[0]
            writer.writerow(["server", *header])
        elif rows[0] != header:
            raise ValueError(f"The review list of {server} has other columns than the first server's: {rows[0]}.")
        writer.writerows([server, *row] for row in rows[1:])
    return out.getvalue()
