"""The translators' and the build's tool for the gettext catalogues (`backend.core.catalogues` reads them).

``python -m backend.core.catalogue_tool extract`` writes every domain's template (``locale/<domain>.pot``) from the
English source tables in the code (``english("<domain>", {...})``, read from the syntax tree, nothing imported);
``update <language>`` merges the templates into that language's ``.po`` files (new files made, changed English
marked fuzzy), ``compile`` writes every ``.mo``, ``check`` lists what keeps a language incomplete (exit status 1).

>>> [entry.key for entry in extract("bias_tests")][:2]
['instructions_title', 'intro']
"""

from __future__ import annotations

import ast
import functools
import io
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from backend.core.catalogues import (
    DOMAINS,
    LOCALE_DIR,
    PLACEHOLDER_FORMS,
    ROOT,
    SOURCE_DIRS,
    Entry,
    compile_po,
    locale_dirs,
    placeholders,
    po_path,
    pot_path,
    problems,
    statistics,
)

FIXED_DATE = datetime(2026, 1, 1, tzinfo=UTC)  # the templates' header date: extraction is reproducible


# -- the templates: what the code says, as gettext messages ------------------------------------------------------


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def source_tables(tree: ast.AST) -> Iterator[tuple[str, ast.Dict]]:
    """``(domain, dict literal)`` of every ``english("<domain>", {...})`` call in a module's syntax tree."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) == "english"
            and len(node.args) == 2
            and _literal(node.args[0]) is not None
            and isinstance(node.args[1], ast.Dict)
        ):
            yield _literal(node.args[0]), node.args[1]


def _entries(table: ast.Dict, where: str) -> Iterator[Entry]:
    for key_node, value in zip(table.keys, table.values, strict=True):
        key = _literal(key_node) if key_node is not None else None
        if key is None:
            raise ValueError(f"{where}: a source table's keys must be literal strings.")
        if _literal(value) is not None:
            yield Entry(key, _literal(value), where)
        elif isinstance(value, ast.Call) and getattr(value.func, "id", None) == "Plural":
            forms = [_literal(arg) for arg in value.args]
            if len(forms) != 2 or None in forms:
                raise ValueError(f"{where}: {key}: Plural takes two literal texts.")
            yield Entry(key, (forms[0], forms[1]), where)
        elif isinstance(value, ast.List | ast.Tuple) and all(_literal(item) is not None for item in value.elts):
            for index, item in enumerate(value.elts, 1):
                yield Entry(f"{key}[{index}]", _literal(item), where)
        else:
            raise ValueError(f"{where}: {key}: a source text must be a literal string, Plural(...) or a list of them.")


def source_files() -> list[Path]:
    files = []
    for folder in SOURCE_DIRS:
        files += [path for path in sorted((ROOT / folder).rglob("*.py")) if "english(" in path.read_text("utf-8")]
    here = {Path(__file__).resolve(), (Path(__file__).parent / "catalogues.py").resolve()}
    return [path for path in files if path.resolve() not in here]


def extract(domain: str) -> list[Entry]:
    """Every message of ``domain`` in the code, in file order; a key given twice with two texts is refused."""
    return list(_extract(domain, tuple((path, path.stat().st_mtime_ns) for path in source_files())))


@functools.lru_cache(maxsize=16)
def _extract(domain: str, files: tuple) -> tuple[Entry, ...]:
    found: dict[str, Entry] = {}
    for path, _ in files:
        where = path.relative_to(ROOT).as_posix()
        for table_domain, table in source_tables(ast.parse(path.read_text("utf-8"))):
            if table_domain != domain:
                continue
            for entry in _entries(table, where):
                if entry.key in found and found[entry.key].msgid != entry.msgid:
                    raise ValueError(f"{where}: key {entry.key!r} of {domain} has two texts.")
                found.setdefault(entry.key, entry)
    return tuple(found.values())


def _uses_forms(msgid) -> bool:
    texts = msgid if isinstance(msgid, tuple) else (msgid,)
    return any(placeholders(text) & {"other"} for text in texts)


def new_catalog(domain: str, **extra):
    """An empty Babel ``Catalog`` of ``domain`` with this project's header (fixed dates: a rerun changes no file)."""
    from babel.messages.catalog import Catalog

    return Catalog(
        domain=domain,
        project="lab study",
        version="1",
        copyright_holder="the study's researchers",
        msgid_bugs_address="the study's researchers",
        creation_date=FIXED_DATE,
        revision_date=FIXED_DATE,
        fuzzy=False,
        **extra,
    )


def template(domain: str):
    """The gettext template (a Babel ``Catalog``) of ``domain``: what `extract` finds."""

    catalog = new_catalog(domain)
    for entry in extract(domain):
        texts = entry.msgid if isinstance(entry.msgid, tuple) else (entry.msgid,)
        named = any(placeholders(text) for text in texts)
        flags = ()
        comments = []
        if _uses_forms(entry.msgid):
            flags = ("no-python-brace-format",)
            comments.append(
                "{other} / {Other}: the counterpart's name; a language that declines it may write {other_dat}, "
                "{other_of} or {other_to} (the forms under opponent.*)."
            )
        elif named:
            flags = ("python-brace-format",)
        if entry.key.startswith("opponent.") and entry.key.rsplit(".", 1)[1] in PLACEHOLDER_FORMS:
            comments.append("A case form of the counterpart's name, for languages that decline it.")
        message = catalog.add(
            entry.msgid, context=entry.key, locations=[(entry.path, None)], flags=flags, auto_comments=comments
        )
        message.flags = set(flags)  # Babel guesses python-brace-format itself; an opponent's case form is not one
    return catalog


def template_text(domain: str) -> str:
    from babel.messages.pofile import write_po

    buffer = io.BytesIO()
    write_po(buffer, template(domain), include_lineno=False, width=116)
    return buffer.getvalue().decode("utf-8")


def write_templates() -> list[Path]:
    """Write ``locale/<domain>.pot`` of every domain; the paths written."""
    LOCALE_DIR.mkdir(exist_ok=True)
    paths = []
    for domain in DOMAINS:
        pot_path(domain).write_text(template_text(domain), encoding="utf-8")
        paths.append(pot_path(domain))
    return paths


def update(language: str, folder: Path = LOCALE_DIR) -> list[Path]:
    """Merge every domain's template into ``language``'s ``.po`` files (new ones made, changed texts marked fuzzy),
    as ``pybabel update`` does; the paths written."""
    from babel.messages.pofile import read_po, write_po

    paths = []
    for domain in DOMAINS:
        path = folder / language / "LC_MESSAGES" / f"{domain}.po"
        if path.is_file():
            with path.open("rb") as handle:
                catalog = read_po(handle, locale=language)
        else:
            catalog = new_catalog(domain, locale=language, last_translator="the study's translators")
        source_catalog = template(domain)
        catalog.update(source_catalog)
        for message in catalog:  # the template's flags, not Babel's guesses
            if message.id and (source := source_catalog.get(message.id, context=message.context)) is not None:
                message.flags = {flag for flag in message.flags if flag == "fuzzy"} | set(source.flags)
        path.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        write_po(buffer, catalog, include_lineno=False, width=116, ignore_obsolete=True)
        path.write_bytes(buffer.getvalue())
        paths.append(path)
    return paths


def main(argv: list[str]) -> int:
    """``extract`` (write the templates), ``update <language>`` (merge them into its .po files, new ones made),
    ``compile`` (every .po to its .mo), ``check`` (list what keeps each language incomplete; exit status 1 then).

    >>> main(["check"])
    de: complete (445 translated)
    it: complete (445 translated)
    0
    """
    command = argv[0] if argv else "check"
    if command == "extract":
        for path in write_templates():
            print(f"{path.relative_to(ROOT)}: {len(extract(path.stem))} messages")
    elif command == "update" and len(argv) == 2:
        for path in update(argv[1]):
            print(path)
    elif command == "compile":
        for folder in locale_dirs():
            for po in sorted(folder.glob("*/LC_MESSAGES/*.po")):
                print(compile_po(po) or f"{po}: not writable")
    elif command == "check":
        failed = 0
        for folder in locale_dirs():
            for language_dir in sorted(path for path in folder.glob("*") if (path / "LC_MESSAGES").is_dir()):
                language = language_dir.name
                found = [problem for domain in DOMAINS for problem in problems(domain, language)]
                failed += bool(found)
                counts = [statistics(po) for domain in DOMAINS if (po := po_path(domain, language)) is not None]
                done = sum(count[0] for count in counts)
                print(f"{language}: {'complete' if not found else f'{len(found)} problems'} ({done} translated)")
                for problem in found:
                    print(f"  {problem}")
        return 1 if failed else 0
    else:
        print(main.__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
