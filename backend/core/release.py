"""A dataset release of the product's exports: one typed table per record kind, identifiers replaced by keyed
pseudonyms, test rows left out, free text masked or dropped (``python -m backend release``; the card:
``backend.core.data_card``; the command: ``backend.core.release_cli``).

Record kinds (recognised by columns only that export has; checked in this order):

| kind | exports |
|---|---|
| events | dond ``custom_export_dond_events``, the self-play runner's ``dond_events.csv`` |
| games | dond ``custom_export_dond_games``, the self-play runner's ``dond_games.csv`` |
| ratings | social_eval ``custom_export_ratings_long`` |
| judgements | payoff_reasoning_eval ``custom_export`` / ``custom_export_protocol_with_ids``, the judge runner's protocol |
| bias_answers | bias_tests ``custom_export``, the bias runner's CSV |
| model_calls | the social annotator's and the payoff judge's per-call files |

Pseudonym = ``<prefix>-`` + the first 16 hex digits of HMAC-SHA256(key, "<kind>:<value>"), prefix P (participant
code), X (Prolific ID), Q (Prolific session), T (study), S (session). The key comes from the environment
(``RELEASE_KEY_VARIABLE``) and is never written: without it nobody can recompute a pseudonym from an ID, so the
bundle does not carry the IDs (GDPR pseudonymisation), while one key gives one person one pseudonym in every
table and every release. Every occurrence of a known identifier in any cell (free text, JSON) is replaced too.

>>> pseudonym("abc12345", kind="participant", key=b"k")
'P-805fc03c53fdc587'
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from backend.core.csvio import read_csv_any, truthy_cell
from backend.core.text_view import ViewPattern

RELEASE_KEY_VARIABLE = "RELEASE_PSEUDONYM_KEY"
MIN_KEY_BYTES = 16
FREE_TEXT_MODES = ("mask", "drop", "keep")  # FREE_TEXT_RULES says what each does
MODEL_JUDGE_PREFIX = "model:"  # backend.reasoning.report: a model judge's participant_code, no person

KIND_COLUMNS = {  # checked in order: the first whose columns a file has names its kind
    "events": {"game_id", "seq", "kind", "actor"},
    "games": {"game_id", "mode", "outcome", "values_a", "values_b"},
    "ratings": {"episode_id", "agent_index", "dimension", "rating", "annotator"},
    "judgements": {"file", "game", "orig_choice", "final_choice", "orig_cor", "fin_cor", "err_type"},
    "bias_answers": {"respondent_kind", "item_id", "bias", "version", "pro_selected"},
    "model_calls": {"status", "answer_source", "attempts", "latency_s"},
}
# The custom exports (backend.codebook) whose columns each record kind releases; the runners' files of a kind write
# the same columns (and their own model-only ones, which the codebook does not describe).
KIND_EXPORTS = {
    "events": (("dond", "custom_export_dond_events"),),
    "games": (("dond", "custom_export_dond_games"),),
    "ratings": (("social_eval", "custom_export_ratings_long"),),
    "judgements": (
        ("payoff_reasoning_eval", "custom_export"),
        ("payoff_reasoning_eval", "custom_export_protocol_with_ids"),
    ),
    "bias_answers": (("bias_tests", "custom_export"),),
    "model_calls": (),
}
# The columns the release adds to every table: (unit, meaning).
RELEASE_COLUMNS = {
    "source_file": ("", "The export file the row came from (its name; a session code in it is pseudonymised)."),
    "source_row": ("", "The row's place among the data rows of that file (1 = first)."),
}
# What the release makes of an identifier column and of a free-text column (per --free-text mode).
PSEUDONYM_NOTE = "keyed pseudonym ({prefix}-…, HMAC-SHA256), not the original ID"
FREE_TEXT_RULES = {
    "mask": "kept, with e-mail addresses, phone numbers and Prolific IDs (24 hex digits, also typed in groups) masked",
    "drop": "left out",
    "keep": "kept as written (identifiers of the exports replaced by their pseudonyms)",
}
# Identifier columns and the kind of identifier they hold (kind, pseudonym prefix).
IDENTIFIER_KINDS = {"participant": "P", "prolific": "X", "prolific_session": "Q", "study": "T", "session": "S"}
IDENTIFIER_COLUMNS = {
    "participant_code": "participant",
    "participant_a": "participant",
    "participant_b": "participant",
    "annotator": "participant",
    "prolific_pid": "prolific",
    "prolific_pid_a": "prolific",
    "prolific_pid_b": "prolific",
    "prolific_session_id": "prolific_session",
    "study_id": "study",
    "session_code": "session",
}
FREE_TEXT_COLUMNS = {
    "text",
    "llm_messages",
    "llm_reply",
    "llm_reasoning",
    "reasoning",
    "model_thinking",
    "remarks",
    "raw_reply",
    "reply",
    "problem",
    "sentence",
    "error",  # a model call's error message can quote the prompt or the reply
    "parse_error",
}
MIN_IDENTIFIER_CHARS = 4  # shorter values (a stray "1") are not searched for inside other cells


EMAIL = ViewPattern(re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"))
PHONE = ViewPattern(re.compile(r"(?<![\w.])\+?\d(?:[\s/().-]?\d){6,14}(?![\w.])"))
PROLIFIC_ID = ViewPattern(re.compile(r"\b[0-9a-fA-F]{24}\b"))
# A Prolific ID typed in groups ("5f3c 2a1b 9d8e ...", "5F3C–2A1B–...", "5f3c, 2a1b, ...", split across lines): 24 to
# 32 hex digits, any of them parted by a gap (``ID_GAP``: up to 16 spaces or line breaks, with up to three of
# ``- . _ , / : ; | + · • * ~`` among them), standing alone (no letter or digit glued to either end), and not a release
# pseudonym (``P-`` and 16 hex digits). Whether a run is an ID: ``_grouped_id`` (letters and digits both).
ID_GAP = r"(?>\s{0,16}(?:[-._,/:;|+\u00b7\u2022*~]{1,3}\s{0,16})?)"
GROUPED_ID = ViewPattern(
    re.compile(
        r"(?<![0-9A-Za-z])(?!(?<=[PXQTS]-)[0-9a-f]{16}(?![0-9A-Za-z]))"
        rf"[0-9a-fA-F](?:{ID_GAP}[0-9a-fA-F]){{23,31}}(?![0-9A-Za-z])"
    )
)
MASKS = ((EMAIL, "[email]"), (PROLIFIC_ID, "[id]"), (GROUPED_ID, lambda found: _grouped_id(found)), (PHONE, "[phone]"))
# A Prolific ID glued to a word ("myid5f1a...", "ID5F1A..."): a run of 24 to 32 hex digits (a 40-digit hash is
# longer) inside a longer word; the whole word is masked when the run holds letters and digits (``_glued_id``).
GLUED_ID = ViewPattern(
    re.compile(r"(?<![0-9A-Za-z])[0-9A-Za-z]*?(?<![0-9A-Fa-f])(?P<hex>[0-9A-Fa-f]{24,32})(?![0-9A-Fa-f])[0-9A-Za-z]*")
)
INTEGER = re.compile(r"^-?(?:0|[1-9]\d*)$")


def pseudonym(value: str, *, kind: str, key: bytes) -> str:
    """The keyed pseudonym of an identifier (see the module docstring); empty stays empty."""
    if kind not in IDENTIFIER_KINDS:
        raise ValueError(f"kind must be one of {sorted(IDENTIFIER_KINDS)}, not {kind!r}.")
    if value == "":
        return ""
    digest = hmac.new(key, f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()
    return f"{IDENTIFIER_KINDS[kind]}-{digest[:16]}"


def key_from(environ: Mapping[str, str]) -> bytes:
    """The pseudonym key from the environment; ValueError when it is missing or shorter than 16 bytes."""
    key = environ.get(RELEASE_KEY_VARIABLE, "")
    if len(key.encode()) < MIN_KEY_BYTES:
        raise ValueError(
            f"Set the environment variable {RELEASE_KEY_VARIABLE} to a secret of at least {MIN_KEY_BYTES} "
            "characters (e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`), kept apart from the "
            "data: it makes the pseudonyms, and the same key gives each person the same pseudonym in every release."
        )
    return key.encode()


def _grouped_id(found: re.Match) -> str:
    """``[id]`` for a run of hex digits typed in groups that holds letters and digits both (a Prolific ID has both
    but for about 1 in 75,000; a run of digits alone is a number or a phone number, a run of letters alone words such
    as "a bad cafe"); else the run as it was.

    >>> _grouped_id(GROUPED_ID.search("5f3c 2a1b 9d8e 7c6b 5a4f 3e2d")), _grouped_id(GROUPED_ID.search("1" * 24))
    ('[id]', '111111111111111111111111')
    """
    digits = [char for char in found.group(0) if char.isalnum()]
    has_letter, has_digit = any(c.isalpha() for c in digits), any(c.isdigit() for c in digits)
    return "[id]" if has_letter and has_digit else found.group(0)


def _glued_id(found: re.Match) -> str:
    """``[id]`` for a word holding a run of 24 to 32 hex digits with letters and digits both (``GLUED_ID``); else the
    word as it was.

    >>> _glued_id(GLUED_ID.search("myid5f1a2b3c4d5e6f7a8b9c0d1e")), _glued_id(GLUED_ID.search("x" + "1" * 24))
    ('[id]', 'x111111111111111111111111')
    """
    run = found.group("hex")
    return "[id]" if any(c.isalpha() for c in run) and any(c.isdigit() for c in run) else found.group(0)


def mask_text(text: str) -> str:
    """Free text with e-mail addresses, 24-hex IDs (Prolific's, also typed in groups: ``GROUPED_ID``, or glued to a
    word: ``GLUED_ID``) and phone numbers masked, as they read in the text's matching view (``backend.core.text_view``:
    any dash, zero-width characters, full-width digits).

    >>> mask_text("write to a.b@uni.de or +49 30 1234567, id 5f1a2b3c4d5e6f7a8b9c0d1e")
    'write to [email] or [phone], id [id]'
    >>> mask_text("my ID: 5F1A 2b3c-4D5E.6f7a 8b9c\\n0d1e, thanks")
    'my ID: [id], thanks'
    >>> mask_text("ID 5f1a\u20132b3c\u20144d5e, 6f7a/8b9c\u200b0d1e and myid5f1a2b3c4d5e6f7a8b9c0d1e")
    'ID [id] and [id]'
    """
    for pattern, mask in MASKS:
        text = pattern.sub(mask, text)
    return GLUED_ID.sub(lambda found: _glued_id(found), text)


def record_kind(columns: Iterable[str]) -> str | None:
    """The record kind of an export header, or None.

    >>> record_kind(["game_id", "seq", "kind", "actor", "text"]), record_kind(["a"])
    ('events', None)
    """
    names = {str(column).strip() for column in columns}
    return next((kind for kind, needed in KIND_COLUMNS.items() if needed <= names), None)


def is_model_identifier(value: str) -> bool:
    """A model judge's "participant code" names a model, not a person."""
    return value.startswith(MODEL_JUDGE_PREFIX)


@dataclass
class Pseudonymiser:
    """Every identifier of the exports with its pseudonym, and the replacement of them anywhere in a cell."""

    key: bytes
    mapping: dict[str, str] = field(default_factory=dict)

    def collect(self, frame: pd.DataFrame) -> None:
        for column in frame.columns:
            kind = identifier_kind(column)
            if kind is not None:
                for value in frame[column].unique():
                    if value and not is_model_identifier(value) and value not in self.mapping:
                        self.mapping[value] = pseudonym(value, kind=kind, key=self.key)

    def pattern(self) -> re.Pattern | None:
        values = sorted((v for v in self.mapping if len(v) >= MIN_IDENTIFIER_CHARS), key=len, reverse=True)
        return re.compile("|".join(map(re.escape, values))) if values else None

    def replace(self, text: str, *, server: str | None = None) -> str:
        """``text`` with every known identifier in it replaced by its pseudonym. ``server``: the text is a file name
        of that server's export, written before its codes were labelled ``<server>:<code>``
        (``backend.core.servers``), so a bare code in it is that server's code.

        >>> ids = Pseudonymiser(b"k", {"sess0001": "S-1", "lab1:abcd9999": "S-2"})
        >>> ids.replace("export_sess0001.csv"), ids.replace("lab1-export_abcd9999.csv", server="lab1")
        ('export_S-1.csv', 'lab1-export_S-2.csv')
        """
        mapping = dict(self.mapping)
        if server is not None:
            prefix = f"{server}:"
            mapping |= {
                value[len(prefix) :]: alias for value, alias in self.mapping.items() if value.startswith(prefix)
            }
        values = sorted((v for v in mapping if len(v) >= MIN_IDENTIFIER_CHARS), key=len, reverse=True)
        if not values or not text:
            return mapping.get(text, text)
        return re.sub("|".join(map(re.escape, values)), lambda m: mapping[m.group(0)], text)


@dataclass(frozen=True)
class Table:
    """One released table: its kind, the typed frame, and which source files it came from."""

    kind: str
    frame: pd.DataFrame
    sources: list[str]
    dropped_test_rows: int


def read_export(path: str | Path) -> tuple[str, pd.DataFrame]:
    """An export as text cells (neutralised cells restored) with its record kind; ValueError for other files."""
    try:
        frame = read_csv_any(path, dtype=str, keep_default_na=False)
    except Exception as error:  # pandas raises several kinds for a file that is no CSV
        raise ValueError(f"{path} cannot be read as a CSV export ({type(error).__name__}: {error}).") from None
    kind = record_kind(frame.columns)
    if kind is None:
        raise ValueError(
            f"{path} is no export the release publishes (its columns start {list(frame.columns)[:6]}); give the "
            f"exports of record kinds {', '.join(KIND_COLUMNS)} (assignment logs and oTree's own exports hold "
            "identifiers and no results)."
        )
    return kind, frame


def without_tests(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows whose ``is_test`` cell is not true (a missing column: no test rows)."""
    if "is_test" not in frame:
        return frame
    return frame[~frame["is_test"].map(truthy_cell)]


def typed_column(values: pd.Series) -> pd.Series:
    """Text cells as their type: all whole numbers → Int64, all numbers → float64, true/false → boolean, else
    string; empty cells are missing.

    >>> [str(typed_column(pd.Series(cells)).dtype) for cells in (["1", ""], ["1.5", "2"], ["True", "false"], ["a"])]
    ['Int64', 'float64', 'boolean', 'string']
    """
    present = values[values != ""]
    if present.empty:
        return pd.Series(pd.NA, index=values.index, dtype="string")
    if present.map(lambda v: bool(INTEGER.match(v)) and len(v) < 18).all():
        return pd.to_numeric(values.replace("", None)).astype("Int64")
    if present.str.lower().isin({"true", "false"}).all():
        return values.str.lower().map({"true": True, "false": False}).astype("boolean")
    try:
        numbers = [float(v) for v in present]
    except ValueError:
        return values.replace("", None).astype("string")
    if all(math.isfinite(n) for n in numbers):
        return pd.to_numeric(values.replace("", None)).astype("float64")
    return values.replace("", None).astype("string")


def identifier_kind(column: str) -> str | None:
    """The kind of identifier a column holds, whatever the case of its name (a researcher's ``Prolific_PID``), or
    None.

    >>> identifier_kind("Prolific_PID"), identifier_kind(" participant_CODE "), identifier_kind("rating")
    ('prolific', 'participant', None)
    """
    return IDENTIFIER_COLUMNS.get(str(column).strip().lower())


def column_definition(kind: str, column: str, *, codebook: Callable[[str], Iterable] | None = None):
    """(unit, meaning) of a released column of a record kind: the codebook's, else the one the release adds
    (``RELEASE_COLUMNS``); None when neither defines it (a researcher's own column, a runner's model-only one).

    ``codebook(kind)`` gives the described columns of the kind's exports (``KIND_EXPORTS``): objects with
    ``matches(name)``, ``unit`` and ``meaning``. The project's is ``backend.codebook.release_columns``, which the
    command line passes; the release itself knows no domain.

    >>> from types import SimpleNamespace
    >>> spent = SimpleNamespace(matches=lambda name: name == "seconds_spent", unit="seconds", meaning="Time on it.")
    >>> column_definition("ratings", "seconds_spent", codebook=lambda kind: [spent])
    ('seconds', 'Time on it.')
    >>> column_definition("games", "source_row")
    ('', "The row's place among the data rows of that file (1 = first).")
    >>> column_definition("bias_answers", "option_probabilities") is None
    True
    """
    name = str(column).strip()
    found = next((c for c in (codebook(kind) if codebook else ()) if c.matches(name)), None)
    if found is not None:
        return found.unit, found.meaning
    return RELEASE_COLUMNS.get(name)


def is_free_text(column: str) -> bool:
    """Columns of free text (people's reasons, model replies and messages, error messages), whatever the case of
    their name.

    >>> is_free_text("reason_1_2"), is_free_text("LLM_Reply"), is_free_text("parse_error"), is_free_text("rating")
    (True, True, True, False)
    """
    name = str(column).strip().lower()
    return name in FREE_TEXT_COLUMNS or name.startswith("reason_")


def clean_frame(frame: pd.DataFrame, ids: Pseudonymiser, *, free_text: str, source: str) -> pd.DataFrame:
    """Text cells with identifiers pseudonymised everywhere, free text masked/dropped/kept, provenance added
    (``source_file``, ``source_row``: the file name and the 1-based data row it came from); ``is_test`` removed."""
    if free_text not in FREE_TEXT_MODES:
        raise ValueError(f"free_text must be one of {FREE_TEXT_MODES}, not {free_text!r}.")
    pattern = ids.pattern()
    out = {"source_file": [source] * len(frame), "source_row": [str(n) for n in frame.index + 1]}
    for column in frame.columns:
        if column == "is_test" or (is_free_text(column) and free_text == "drop"):
            continue
        cells = frame[column].map(lambda v: ids.mapping.get(v, v))
        if pattern is not None:
            cells = cells.map(lambda v: pattern.sub(lambda m: ids.mapping[m.group(0)], v) if v else v)
        if is_free_text(column) and free_text == "mask":
            cells = cells.map(mask_text)
        out[column] = cells.tolist()
    return pd.DataFrame(out)


def typed_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Every column typed (``typed_column``); identifier and free-text columns stay text."""
    return pd.DataFrame(
        {
            column: (
                frame[column].replace("", None).astype("string")
                if identifier_kind(column) is not None or is_free_text(column) or column == "source_file"
                else typed_column(frame[column])
            )
            for column in frame.columns
        }
    )


@dataclass(frozen=True)
class Release:
    """What ``build_release`` made: the tables, the name each input is released under (in the order given: its file
    name with every identifier in it pseudonymised) and the pseudonyms, to take identifiers out of any other text
    that is published with the tables (``Pseudonymiser.replace``)."""

    tables: dict[str, Table]
    names: list[str]
    ids: Pseudonymiser


def build_tables(
    paths: Sequence[str | Path], *, key: bytes, free_text: str = "mask", servers: Sequence[str] | None = None
) -> dict[str, Table]:
    """The released tables of ``paths`` (every file read and checked before anything is built); see
    ``build_release``."""
    return build_release(paths, key=key, free_text=free_text, servers=servers).tables


def build_release(
    paths: Sequence[str | Path], *, key: bytes, free_text: str = "mask", servers: Sequence[str] | None = None
) -> Release:
    """The released tables of ``paths`` and the names the inputs are released under. ``servers``: the server whose
    codes each file holds labelled (``backend.core.servers.label_export``), so a code in a file's name is pseudonymised
    as that server's."""
    if not paths:
        raise ValueError("Give at least one export to release.")
    names = [Path(path).name for path in paths]
    if len(set(names)) != len(names):
        raise ValueError(f"Two inputs share a file name ({names}); rename one so every row's source is clear.")
    read = [(Path(path), *read_export(path)) for path in paths]
    ids = Pseudonymiser(key)
    for _, _, frame in read:
        ids.collect(frame)
    parts: dict[str, list[tuple[str, pd.DataFrame, int]]] = {}
    released = []
    for index, (path, kind, frame) in enumerate(read):
        kept = without_tests(frame)
        # a per-session download is named after its session code: the name is pseudonymised like every cell
        name = ids.replace(path.name, server=servers[index] if servers is not None else None)
        released.append(name)
        cleaned = clean_frame(kept, ids, free_text=free_text, source=name)
        parts.setdefault(kind, []).append((name, cleaned, len(frame) - len(kept)))
    tables = {}
    for kind, items in parts.items():
        frames = [frame for _, frame, _ in items]
        combined = pd.concat(frames, ignore_index=True).fillna("")
        tables[kind] = Table(kind, typed_frame(combined), [name for name, _, _ in items], sum(n for _, _, n in items))
    return Release(tables, released, ids)
