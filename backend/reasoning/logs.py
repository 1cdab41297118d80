"""Reasoning logs of an LLM playing a 2x2 game with a Prolog check of its claims: parse, write, summarise.

One log holds 1-5 attempts. Each attempt starts with a header line ``###ATTEMPT##<n>~`` (n = 0, 1, ...) and has
these sections, in this order, each a header line followed by text that ends with ``~``::

    RESPONSE##            the model's reasoning, ending with its choice in braces: {R} or {B}
    PREDICATES##          the claims translated into Prolog queries, one per line
    FAILED QUERIES##      the queries Prolog rejected, one per line (empty on success; absent when no predicates)
    CORRECTING PROMPT##   feedback sent back to the model (present only when queries failed)

Reading is tolerant of CRLF line ends, trailing whitespace and a missing ``~``; anything else that does not fit raises
`LogParseError`, which names the file and the line. `format_log` writes the same format; parsing what it writes
gives back the same log (lines lose trailing whitespace, blank lines around a section's text are dropped).

The file name ``<model>_<game>_<prompt>_<UL>_<UR>_<DL>_<DR>_<rep>_<rand>.txt`` carries the game code and the row
player's payoffs for the profiles RR, RB, BR, BB (e.g. ``gpt-4o-2024-05-13_pd_p1_1_5_0_3_7_4242.txt``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath

from backend.reasoning.games import Game
from backend.reasoning.log_files import read_log_texts

ATTEMPT_PREFIX = "###ATTEMPT##"
# Section header -> attribute name, in the order the sections appear in an attempt.
SECTION_HEADERS = {
    "RESPONSE##": "response",
    "PREDICATES##": "predicates",
    "FAILED QUERIES##": "failed_queries",
    "CORRECTING PROMPT##": "correcting_prompt",
}
_SECTION_ORDER = list(SECTION_HEADERS.values())
_ATTEMPT_LINE = re.compile(r"^###ATTEMPT##(\d+)~?$")
_CHOICE = re.compile(r"\{([RB])\}")
_NUMBER = r"-?\d+(?:\.\d+)?"
_FILE_NAME = re.compile(
    rf"^(?P<model>.+)_(?P<game>[A-Za-z][A-Za-z0-9]*)_(?P<prompt>[A-Za-z0-9]+)"
    rf"_(?P<ul>{_NUMBER})_(?P<ur>{_NUMBER})_(?P<dl>{_NUMBER})_(?P<dr>{_NUMBER})_(?P<rep>\d+)_(?P<tag>\w+)\.txt$"
)


class LogParseError(ValueError):
    """A reasoning log that does not fit the format; ``filename`` and ``line`` (1-based) say where."""

    def __init__(self, message: str, *, filename: str | None = None, line: int | None = None):
        self.message = message
        self.filename = filename
        self.line = line
        where = filename or "<log>"
        if line is not None:
            where += f", line {line}"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Attempt:
    """One attempt. ``predicates``, ``failed_queries`` (tuples of lines) and ``correcting_prompt`` are None when
    their section is absent, and empty when the section is present but empty."""

    index: int
    response: str
    predicates: tuple[str, ...] | None = None
    failed_queries: tuple[str, ...] | None = None
    correcting_prompt: str | None = None

    @property
    def choice(self) -> str | None:
        """The last ``{R}`` or ``{B}`` in the response (``"R"``/``"B"``), None when there is none."""
        found = _CHOICE.findall(self.response)
        return found[-1] if found else None

    @property
    def check_passed(self) -> bool:
        """The automated check passed: no query failed (also when no query could be checked)."""
        return not self.failed_queries


@dataclass(frozen=True)
class LogName:
    """What a log's file name says: ``payoffs`` = the row player's (UL, UR, DL, DR) = profiles (RR, RB, BR, BB)."""

    model: str
    game: str
    prompt: str
    payoffs: tuple[float, float, float, float]
    repetition: int
    tag: str


@dataclass(frozen=True)
class ReasoningLog:
    """A parsed log: its attempts in order, plus what is known of its origin (None when unknown)."""

    attempts: tuple[Attempt, ...]
    filename: str | None = None
    model: str | None = None
    game: str | None = None
    payoffs: tuple[float, float, float, float] | None = None

    @property
    def orig_choice(self) -> str | None:
        return self.attempts[0].choice

    @property
    def final_choice(self) -> str | None:
        return self.attempts[-1].choice

    @property
    def check_passed(self) -> bool:
        """The protocol's ``orig_cor_pred``: attempt 0 had no failed queries."""
        return self.attempts[0].check_passed

    @property
    def final_check_passed(self) -> bool:
        """The protocol's ``fin_cor_pred``: the last attempt had no failed queries."""
        return self.attempts[-1].check_passed


def parse_log_name(filename: str) -> LogName | None:
    """Read model, game, prompt id, payoffs, repetition and tag from a log's file name; None if it does not fit.

    >>> parse_log_name("logs/gpt-4o-2024-05-13_hd_p1_0_5_1_3_14_6585.txt")
    LogName(model='gpt-4o-2024-05-13', game='hd', prompt='p1', payoffs=(0, 5, 1, 3), repetition=14, tag='6585')
    >>> parse_log_name("log_1.txt") is None
    True
    """
    match = _FILE_NAME.match(PurePath(filename).name)
    if match is None:
        return None
    payoffs = tuple(_number(match[key]) for key in ("ul", "ur", "dl", "dr"))
    return LogName(
        model=match["model"],
        game=match["game"].lower(),
        prompt=match["prompt"],
        payoffs=payoffs,
        repetition=int(match["rep"]),
        tag=match["tag"],
    )


def _number(text: str) -> float:
    value = float(text)
    return int(value) if value.is_integer() else value


def _section_header(line: str) -> tuple[str, str] | None:
    for header, name in SECTION_HEADERS.items():
        if line.startswith(header):
            return name, line[len(header) :].strip()
    return None


def _section_text(lines: list[str]) -> str:
    """The text of a section: blank lines around it dropped, and its closing ``~`` (if any) removed."""
    text = "\n".join(lines).strip("\n")
    if text.endswith("~"):
        text = text[:-1].rstrip()
    return text


def _query_lines(text: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in text.split("\n") if line.strip())


def parse_log(
    text: str,
    filename: str | None = None,
    *,
    game: str | None = None,
    payoffs: Iterable[float] | None = None,
    require_choice: bool = True,
) -> ReasoningLog:
    """Parse the text of one reasoning log.

    ``game`` and ``payoffs`` come from ``filename`` when it follows the naming scheme, else from the arguments
    (a session-config default); when both are known they must agree. With ``require_choice``, every RESPONSE must
    contain a choice ``{R}`` or ``{B}``.

    >>> log = parse_log("###ATTEMPT##0~\\nRESPONSE##\\nR pays 5 at most. {B}~\\n\\nPREDICATES##\\n"
    ...                 "higher(5, 3).\\n~\\n\\nFAILED QUERIES##\\n~\\n", "m_pd_p1_1_5_0_3_0_1.txt")
    >>> log.game, len(log.attempts), log.orig_choice, log.attempts[0].predicates, log.check_passed
    ('pd', 1, 'B', ('higher(5, 3).',), True)
    """
    if not isinstance(text, str):
        raise ValueError(f"The log text must be a string, got {type(text).__name__}.")
    name = PurePath(filename).name if filename else None
    origin = parse_log_name(name) if name else None
    game, payoffs = _resolve_origin(origin, game, payoffs, name)

    attempts: list[Attempt] = []
    current: dict | None = None  # {"index", "line", "sections": {name: [lines]}, "section_lines": {name: line}}
    section: str | None = None

    def fail(message: str, line: int | None) -> LogParseError:
        return LogParseError(message, filename=name, line=line)

    def finish() -> None:
        if current is None:
            return
        sections = current["sections"]
        if "response" not in sections:
            raise fail(f"attempt {current['index']} has no RESPONSE## section.", current["line"])
        response = _section_text(sections["response"])
        attempt = Attempt(
            index=current["index"],
            response=response,
            predicates=_query_lines(_section_text(sections["predicates"])) if "predicates" in sections else None,
            failed_queries=(
                _query_lines(_section_text(sections["failed_queries"])) if "failed_queries" in sections else None
            ),
            correcting_prompt=(
                _section_text(sections["correcting_prompt"]) if "correcting_prompt" in sections else None
            ),
        )
        if require_choice and attempt.choice is None:
            raise fail(
                f"the RESPONSE of attempt {attempt.index} contains no choice {{R}} or {{B}}.",
                current["section_lines"]["response"],
            )
        attempts.append(attempt)

    for number, raw in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        line = raw.rstrip()
        if line.startswith(ATTEMPT_PREFIX):
            match = _ATTEMPT_LINE.match(line)
            if match is None:
                raise fail(f"malformed attempt header {line!r}; expected '###ATTEMPT##<number>~'.", number)
            finish()
            index = int(match[1])
            if index != len(attempts):
                raise fail(f"attempt {index} where attempt {len(attempts)} was expected.", number)
            current = {"index": index, "line": number, "sections": {}, "section_lines": {}}
            section = None
            continue
        header = _section_header(line)
        if header is not None:
            section, rest = header
            if current is None:
                raise fail(f"section {line.split('##')[0]}## before the first '###ATTEMPT##0~' line.", number)
            if section in current["sections"]:
                raise fail(f"a second {_header_of(section)} section in attempt {current['index']}.", number)
            later = [name for name in current["sections"] if _SECTION_ORDER.index(name) > _SECTION_ORDER.index(section)]
            if later:
                raise fail(f"{_header_of(section)} after {_header_of(later[0])} in attempt {current['index']}.", number)
            current["sections"][section] = [rest] if rest else []
            current["section_lines"][section] = number
            continue
        if current is None or section is None:
            if line:
                where = "the first '###ATTEMPT##0~' line" if current is None else "the RESPONSE## header"
                raise fail(f"text before {where}: {line[:60]!r}.", number)
            continue
        current["sections"][section].append(line)
    finish()
    if not attempts:
        raise fail("the log is empty: no '###ATTEMPT##0~' line.", 1)
    return ReasoningLog(
        attempts=tuple(attempts),
        filename=name,
        model=origin.model if origin else None,
        game=game,
        payoffs=payoffs,
    )


def _header_of(section: str) -> str:
    return next(header for header, name in SECTION_HEADERS.items() if name == section)


def _resolve_origin(origin: LogName | None, game, payoffs, name) -> tuple[str | None, tuple | None]:
    if payoffs is not None:
        payoffs = tuple(payoffs)
        if len(payoffs) != 4:
            raise ValueError(f"payoffs must be the four row payoffs (UL, UR, DL, DR), got {payoffs!r}.")
    if origin is None:
        return game, payoffs
    if game is not None and game != origin.game:
        raise LogParseError(f"the file name says game {origin.game!r}, but game {game!r} was given.", filename=name)
    if payoffs is not None and payoffs != origin.payoffs:
        raise LogParseError(f"the file name says payoffs {origin.payoffs}, but {payoffs} were given.", filename=name)
    return origin.game, origin.payoffs


def format_log(log: ReasoningLog) -> str:
    """Write a log in the file format (LF line ends, every section closed by ``~`` and a blank line).

    >>> print(format_log(ReasoningLog((Attempt(0, "So {R}", ("higher(5, 3).",), ()),))), end="")
    ###ATTEMPT##0~
    RESPONSE##
    So {R}~
    <BLANKLINE>
    PREDICATES##
    higher(5, 3).~
    <BLANKLINE>
    FAILED QUERIES##
    ~
    <BLANKLINE>
    """
    if not log.attempts:
        raise ValueError("A log needs at least one attempt to be written.")
    parts = []
    for position, attempt in enumerate(log.attempts):
        if attempt.index != position:
            raise ValueError(f"Attempt indices must run 0, 1, ...; attempt {position} has index {attempt.index}.")
        parts.append(f"{ATTEMPT_PREFIX}{attempt.index}~\n")
        for header, name in SECTION_HEADERS.items():
            value = getattr(attempt, name)
            if value is None:
                continue
            if isinstance(value, tuple):
                for query in value:
                    if not query or query != query.strip() or "\n" in query:
                        raise ValueError(f"A query must be one non-empty line without surrounding spaces: {query!r}.")
                value = "\n".join(value)
            _check_writable(value, header, attempt.index)
            parts.append(f"{header}\n{value}~\n\n")
    return "".join(parts)


def _check_writable(text: str, header: str, index: int) -> None:
    for line in text.split("\n"):
        if line.startswith(ATTEMPT_PREFIX) or _section_header(line) is not None:
            raise ValueError(
                f"The {header} text of attempt {index} has a line that reads as a header ({line[:40]!r}); "
                "the log format cannot hold it."
            )


def failed_queries_field(log: ReasoningLog) -> str:
    """The protocol's ``failed_queries`` cell: ``<attempt>#<queries concatenated>`` per attempt with failures,
    joined by ``:``; empty when no query failed.

    >>> failed_queries_field(ReasoningLog((Attempt(0, "{B}", (), ("q1.", "q2.")), Attempt(1, "{B}", (), ()),
    ...                                    Attempt(2, "{R}", (), ("q3.",)))))
    '0#q1.q2.:2#q3.'
    """
    return ":".join(f"{a.index}#{''.join(a.failed_queries)}" for a in log.attempts if a.failed_queries)


_FAILED_BLOCK = re.compile(r"(?:^|(?<=\.):)(\d+)#")


def parse_failed_queries_field(field: str) -> dict[int, str]:
    """Invert `failed_queries_field`: attempt index -> its failed queries, concatenated.

    >>> parse_failed_queries_field("0#q(1, 'R').q2.:2#q3.")
    {0: "q(1, 'R').q2.", 2: 'q3.'}
    >>> parse_failed_queries_field("")
    {}
    """
    if field is None or field != field or not str(field).strip():  # None, NaN or blank
        return {}
    field = str(field).strip()
    starts = list(_FAILED_BLOCK.finditer(field))
    if not starts or starts[0].start() != 0:
        raise ValueError(f"A failed_queries cell must look like '0#q1.q2.:1#q3.', got {field[:60]!r}.")
    blocks = {}
    for position, match in enumerate(starts):
        end = starts[position + 1].start() if position + 1 < len(starts) else len(field)
        blocks[int(match[1])] = field[match.end() : end]
    return blocks


def confusion_label(orig_cor: int | bool, check_passed: int | bool) -> str:
    """Confusion-matrix cell of the automated check against a person; positive = "reasoning correct".

    Truth = ``orig_cor`` (the judge's verdict on attempt 0), prediction = ``check_passed`` (no failed query on
    attempt 0): 1/1 -> TP, 1/0 -> FN, 0/1 -> FP, 0/0 -> TN.

    >>> [confusion_label(truth, passed) for truth in (1, 0) for passed in (True, False)]
    ['TP', 'FN', 'FP', 'TN']
    """
    for name, value in (("orig_cor", orig_cor), ("check_passed", check_passed)):
        if value not in (0, 1):  # True/False compare equal to 1/0
            raise ValueError(f"{name} must be 0 or 1, got {value!r}.")
    if orig_cor:
        return "TP" if check_passed else "FN"
    return "FP" if check_passed else "TN"


_LIST_MARKER = re.compile(r"^\s*(?:[-*+>]|#{1,6}|\d{1,2}[.)])\s+")
# A sentence ends at . ! or ? (plus closing quotes, brackets or emphasis) before a space and a non-lowercase letter,
# unless the dot ends a common abbreviation ("vs.", "e.g.").
_SENTENCE_END = re.compile(
    r"(?<!\b[Vv]s)(?<!\b[Ee]\.g)(?<!\b[Ii]\.e)(?<!\b[Aa]pprox)[.!?]+[\"'”’)\]*_]*(?=\s+[^\sa-z])"
)


def sentence_lines(text: str) -> list[tuple[str, list[str]]]:
    """Each non-blank line of ``text`` as (its list or heading marker, its sentences).

    A ``#`` inside a sentence becomes ``＃`` (fullwidth) so that the export field, which joins sentences with
    ``#``, can be split again.

    >>> sentence_lines("1. If both choose R, I get 1. That is low!\\n\\n- B gives 3 vs. 5 e.g. here. {B}")
    [('1. ', ['If both choose R, I get 1.', 'That is low!']), ('- ', ['B gives 3 vs. 5 e.g. here.', '{B}'])]
    """
    result = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        marker_match = _LIST_MARKER.match(line)
        marker = marker_match.group(0).lstrip() if marker_match else ""
        body = line[marker_match.end() :] if marker_match else line
        sentences, start = [], 0
        for end in _SENTENCE_END.finditer(body):
            sentences.append(body[start : end.end()])
            start = end.end()
        sentences.append(body[start:])
        cleaned = [sentence.strip().replace("#", "＃") for sentence in sentences if sentence.strip()]
        if cleaned:
            result.append((marker, cleaned))
    return result


def split_sentences(text: str) -> list[str]:
    """The sentences of a response, in order (see `sentence_lines`).

    >>> split_sentences("I get 5$. They get 0$.\\nSo {R}")
    ['I get 5$.', 'They get 0$.', 'So {R}']
    """
    return [sentence for _, sentences in sentence_lines(text) for sentence in sentences]


def check_log_against_games(log: ReasoningLog, games: Mapping[str, Game]) -> None:
    """Raise `LogParseError` unless the log's game is one of ``games`` with the payoffs its file name states."""
    if log.game is None:
        raise LogParseError(
            "the game is unknown: name the file '<model>_<game>_<prompt>_<UL>_<UR>_<DL>_<DR>_<rep>_<rand>.txt' "
            "or set a default game.",
            filename=log.filename,
        )
    if log.game not in games:
        raise LogParseError(
            f"unknown game {log.game!r}; known games: {', '.join(sorted(games))}.", filename=log.filename
        )
    expected = games[log.game].row_payoffs()
    if log.payoffs is not None and tuple(log.payoffs) != tuple(expected):
        raise LogParseError(
            f"the file name gives payoffs {tuple(log.payoffs)}, but game {log.game!r} has row payoffs {expected}.",
            filename=log.filename,
        )


def parse_log_texts(
    texts: Mapping[str, str], *, games: Mapping[str, Game], default_game: str | None = None
) -> tuple[list[ReasoningLog], list[LogParseError]]:
    """Parse many logs (file name -> text) and check each against ``games``; return (logs, errors).

    Every log that fails lands in ``errors`` with its file and line, so all problems can be reported at once.
    ``default_game`` applies to files whose names do not state a game.
    """
    logs, errors = [], []
    for filename in sorted(texts):
        try:
            origin = parse_log_name(filename)
            log = parse_log(texts[filename], filename, game=None if origin else default_game)
            check_log_against_games(log, games)
        except LogParseError as error:
            errors.append(error)
            continue
        logs.append(log)
    return logs, errors


def read_log_folder(
    folder: str | Path, *, games: Mapping[str, Game], default_game: str | None = None
) -> tuple[list[ReasoningLog], list[ValueError]]:
    """Read every ``*.txt`` file of ``folder`` (not recursive) as a session does (`backend.reasoning.log_files`:
    within the bounds, UTF-8) and parse them with `parse_log_texts`; return (logs, problems of the files that
    could not be read or parsed)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"The log folder {folder} does not exist or is not a folder.")
    texts, unreadable = read_log_texts(folder, what=f"The log folder {folder}")
    logs, errors = parse_log_texts(texts, games=games, default_game=default_game)
    return logs, [ValueError(problem) for problem in unreadable] + errors
