"""Reading a session's log files within bounds: a folder of ``*.txt`` logs, a ``.zip`` of them, or an upload's sizes.

Logs are bounded before they are read (`MAX_LOGS` files, `MAX_LOG_BYTES` each, `MAX_TOTAL_LOG_BYTES` together; a
``.zip`` at most `MAX_ARCHIVE_BYTES` with `MAX_ARCHIVE_ENTRIES` entries, each entry judged by its declared size and
then read in chunks that stop at the bound), so a crafted archive or upload cannot fill the server's memory. Files
are UTF-8 (a byte-order mark is fine); anything else is refused with the file and line. `check_sizes` is the one
check of the bounds: folders, archives and ``logs_upload`` (`backend.reasoning.task`) all go through it.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path, PurePath

from backend.core.material_language import declared_language
from backend.core.researcher_files import decode_text, parse_json, read_text

# Bounds on what a session's logs may be: the shipped logs are a few KB each and a study judges a few hundred, so
# these leave ample room while keeping a crafted upload or zip from filling the server's memory.
MAX_LOGS = 2000
MAX_LOG_BYTES = 1_000_000
MAX_TOTAL_LOG_BYTES = 20_000_000
MAX_ARCHIVE_ENTRIES = 5000  # every entry of a .zip, folders and other files included
MAX_ARCHIVE_BYTES = 20_000_000  # the .zip file itself
MAX_LOG_NAME_CHARS = 200
_READ_CHUNK = 64 * 1024
# A log set declares its language in this file beside the logs (a folder's file, or a .zip's top-level entry):
# {"language": "en"} (backend.core.material_language); without it the set is undeclared.
LANGUAGE_FILE = "language.json"
_MAX_LANGUAGE_FILE_BYTES = 10_000


class LogLoadError(ValueError):
    """The session's logs cannot be used; the message lists every problem, one per line, with file and line."""


def check_sizes(sizes: Mapping[str, int], *, what: str, unit: str, units: str) -> None:
    """Refuse before reading anything: more than `MAX_LOGS` logs, any log over `MAX_LOG_BYTES`, or all of them over
    `MAX_TOTAL_LOG_BYTES`. ``sizes`` maps each log's name to its bytes; ``unit``/``units`` name one and many.

    >>> check_sizes({"a.txt": 10, "b.txt": 2_000_000}, what="The upload", unit="log", units="logs")
    Traceback (most recent call last):
    ...
    backend.reasoning.log_files.LogLoadError: The upload was not read: the log 'b.txt' has 2,000,000 bytes, more than the 1,000,000 a log may have.
    """
    if len(sizes) > MAX_LOGS:
        raise LogLoadError(f"{what} holds {len(sizes):,} {units}, more than the {MAX_LOGS:,} allowed.")
    too_big = [
        f"the {unit} {name!r} has {size:,} bytes, more than the {MAX_LOG_BYTES:,} a log may have."
        for name, size in sizes.items()
        if size > MAX_LOG_BYTES
    ]
    total = sum(sizes.values())
    if total > MAX_TOTAL_LOG_BYTES:
        too_big.append(f"its logs have {total:,} bytes together, more than the {MAX_TOTAL_LOG_BYTES:,} allowed.")
    if too_big:
        raise LogLoadError(f"{what} was not read: " + " ".join(too_big))


def check_log_name(name: str, *, where: str) -> None:
    """Refuse an empty log file name or one over `MAX_LOG_NAME_CHARS` characters."""
    if not name.strip() or len(name) > MAX_LOG_NAME_CHARS:
        raise ValueError(
            f"A log file name in {where} must have 1 to {MAX_LOG_NAME_CHARS} characters, got {name[:80]!r}."
        )


def read_log_texts(source: Path, *, what: str) -> tuple[dict[str, str], list[str]]:
    """The texts (file name -> text) of the ``*.txt`` logs in a folder or a ``.zip``, and the problems of the files
    that could not be read (one sentence each); `LogLoadError` when the source as a whole breaks a bound."""
    if source.is_dir():
        return _read_folder(source, what=what)
    if source.suffix.lower() == ".zip" and source.is_file():
        return _read_zip(source, what=what)
    raise LogLoadError(f"{what} is neither a folder nor a .zip file (looked for {source}).")


def _read_folder(folder: Path, *, what: str) -> tuple[dict[str, str], list[str]]:
    paths = sorted(folder.glob("*.txt"))
    check_sizes({path.name: path.stat().st_size for path in paths}, what=what, unit="file", units=".txt files")
    texts, problems = {}, []
    for path in paths:
        try:
            check_log_name(path.name, where=what)
            texts[path.name] = read_text(path, what=path.name, max_bytes=MAX_LOG_BYTES)
        except ValueError as error:
            problems.append(str(error))
    return texts, problems


def _is_log_entry(info: zipfile.ZipInfo) -> bool:
    name = info.filename
    # macOS adds __MACOSX/._name.txt resource forks to archives it makes; they are not logs.
    return (
        not info.is_dir()
        and name.endswith(".txt")
        and not name.startswith("__MACOSX/")
        and not PurePath(name).name.startswith("._")
    )


def _read_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, *, what: str) -> bytes:
    """An entry's bytes, read in chunks and cut off past `MAX_LOG_BYTES`: the declared size may be a lie."""
    chunks, size = [], 0
    with archive.open(info) as handle:
        while chunk := handle.read(_READ_CHUNK):
            size += len(chunk)
            if size > MAX_LOG_BYTES:
                raise LogLoadError(
                    f"{what}: the entry {info.filename!r} unpacks to more than the {MAX_LOG_BYTES:,} bytes a log may "
                    f"have (its header says {info.file_size:,}); the archive was not read."
                )
            chunks.append(chunk)
    return b"".join(chunks)


def _read_zip(source: Path, *, what: str) -> tuple[dict[str, str], list[str]]:
    size = source.stat().st_size
    if size > MAX_ARCHIVE_BYTES:
        raise LogLoadError(f"{what} is {size:,} bytes, more than the {MAX_ARCHIVE_BYTES:,} bytes allowed for a .zip.")
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise LogLoadError(f"{what} cannot be opened as a .zip file ({error}).") from None
    with archive:
        entries = archive.infolist()
        if len(entries) > MAX_ARCHIVE_ENTRIES:
            raise LogLoadError(
                f"{what} holds {len(entries):,} entries, more than the {MAX_ARCHIVE_ENTRIES:,} allowed; "
                "the archive was not read."
            )
        members = sorted((info for info in entries if _is_log_entry(info)), key=lambda info: info.filename)
        check_sizes({info.filename: info.file_size for info in members}, what=what, unit="entry", units=".txt files")
        texts, problems = {}, []
        for info in members:
            name = PurePath(info.filename).name
            if name in texts:
                problems.append(f"{name}: the archive holds two files of this name.")
                continue
            try:
                check_log_name(name, where=what)
                raw = _read_entry(archive, info, what=what)
            except LogLoadError:
                raise
            except ValueError as error:
                problems.append(str(error))
                continue
            except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError) as error:
                raise LogLoadError(
                    f"{what}: the entry {info.filename!r} cannot be unpacked ({error}); the archive is damaged, "
                    "encrypted or altered. Make the .zip again from the log files."
                ) from None
            try:
                texts[name] = decode_text(raw, what=name)
            except ValueError as error:
                problems.append(str(error))
    return texts, problems


def declared_log_language(source: Path, *, what: str) -> str | None:
    """The language a log folder or ``.zip`` declares in its `LANGUAGE_FILE`, or None (undeclared); ValueError naming
    the file when it is unreadable or its ``language`` is not a language tag."""
    where = f"{what}: {LANGUAGE_FILE}"
    if source.is_dir():
        path = source / LANGUAGE_FILE
        if not path.is_file():
            return None
        text = read_text(path, what=where, max_bytes=_MAX_LANGUAGE_FILE_BYTES)
    elif source.suffix.lower() == ".zip" and source.is_file():
        with zipfile.ZipFile(source) as archive:
            try:
                info = archive.getinfo(LANGUAGE_FILE)
            except KeyError:
                return None
            if info.file_size > _MAX_LANGUAGE_FILE_BYTES:
                raise LogLoadError(f"{where} has more than {_MAX_LANGUAGE_FILE_BYTES:,} bytes.")
            text = decode_text(archive.read(info), what=where)
    else:
        return None
    return declared_language(parse_json(text, what=where), what=where)
