"""The codebook: every column of every custom export, with its type, unit and meaning, and which app writes it.

Each export's columns are defined once, as data, in this package (``social``, ``reasoning``, ``bias``, ``dond``; the
shared ones in ``columns``). The apps' exports write their headers from here (`names`) and the codebook is read from
the same lists, so a column cannot be exported without being described (tests/backend/test_codebook.py and
tests/system/test_exports_columns.py compare them). oTree's own exports (the wide export and each app's, written by
oTree from the apps' models) are described in ``otree``; the codebook table (`codebook_rows`, each app's codebook
download) holds them after the custom exports, as the exports ``otree_wide`` and ``otree_app``. Pure: no oTree.

>>> book = codebook()
>>> book["bias_tests.custom_export"][:1]
[('session_code', 'text', '', 'The oTree session the row belongs to.')]
>>> names("social_eval", "custom_export_qualified")[:4]
['session_code', 'config_name', 'language', 'is_test']
"""

from __future__ import annotations

import functools

from . import bias, dond, otree, reasoning, social
from .columns import INTEGRITY, STUDY, STUDY_NAMES, UNDESCRIBED, Column, Export

__all__ = ["CODEBOOK_COLUMNS", "EXPORTS", "INTEGRITY", "STUDY", "STUDY_NAMES", "UNDESCRIBED", "Column", "Export"]

EXPORTS: dict[tuple[str, str], Export] = {
    (export.app, export.function): export
    for export in (*dond.EXPORTS, *social.EXPORTS, *reasoning.EXPORTS, *bias.EXPORTS)
}
CODEBOOK_FUNCTION = "custom_export_codebook"  # each app's download of its own part of the codebook
CODEBOOK_COLUMNS = ["app", "export", "one_row_is", "column", "type", "unit", "meaning"]


def export_of(app: str, function: str) -> Export:
    found = EXPORTS.get((app, function))
    if found is None:
        raise ValueError(f"The codebook has no export {function!r} of the app {app!r}.")
    return found


def names(app: str, function: str) -> list[str]:
    """The header of an export (its fixed columns, in file order)."""
    return export_of(app, function).names()


def codebook() -> dict[str, list[tuple[str, str, str, str]]]:
    """Per export (``"<app>.<function>"``): its columns as (column, type, unit, meaning), in file order. What a
    dataset's data card reads."""
    return {
        f"{export.app}.{export.function}": [(c.name, c.type, c.unit, c.meaning) for c in export.columns]
        for export in EXPORTS.values()
    }


def codebook_rows(app: str | None = None) -> list[list[str]]:
    """The codebook as a table (header `CODEBOOK_COLUMNS` first), every export's columns, or one app's: the custom
    exports, then oTree's own exports (``otree.codebook_rows``: the wide export's participant, session and app
    columns, and the app's export).

    >>> rows = codebook_rows("bias_tests")
    >>> rows[0], rows[1][3:5], rows[-1][1:2] + rows[-1][3:4]
    (['app', 'export', 'one_row_is', 'column', 'type', 'unit', 'meaning'], ['session_code', 'text'], ['otree_app', 'session.is_demo'])
    """
    rows = [list(CODEBOOK_COLUMNS)]
    for export in EXPORTS.values():
        if app is None or export.app == app:
            rows += [
                [export.app, export.function, export.row, c.name, c.type, c.unit, c.meaning] for c in export.columns
            ]
    return rows + otree.codebook_rows(app)


def export_function(app: str):
    """The app's ``custom_export_codebook``: the admin's Data page offers the app's part of the codebook as a CSV.

    >>> next(export_function("dond")([]))
    ['app', 'export', 'one_row_is', 'column', 'type', 'unit', 'meaning']
    """

    def custom_export_codebook(players):
        yield from codebook_rows(app)

    return custom_export_codebook


def description(app: str, function: str) -> str:
    """One line for the Data page: what one row of the export is (the codebook download for ``custom_export_codebook``)."""
    if function == CODEBOOK_FUNCTION:
        return "the codebook: every column of this app's exports (and of oTree's own), with type, unit and meaning"
    export = EXPORTS.get((app, function))
    return f"one row = {export.row}" if export else ""


def unmatched(app: str, function: str, header) -> tuple[list[str], list[str]]:
    """(columns of ``header`` the codebook lacks, codebook columns missing from ``header``) for one export. A pattern
    column (``<dimension>_<agent>``) is never missing: it stands for the columns the data has.

    >>> unmatched("payoff_reasoning_eval", "custom_export_assignments", ["session_code", "extra"])[0]
    ['extra']
    """
    export = export_of(app, function)
    header = list(header)
    lacking = [name for name in header if not any(column.matches(name) for column in export.columns)]
    fixed = [column.name for column in export.columns if not column.is_pattern]
    missing = [name for name in fixed if name not in header]
    return lacking, missing


@functools.cache
def release_columns(kind: str) -> tuple[Column, ...]:
    """The described columns of a release's record kind (``backend.core.release.KIND_EXPORTS``: the exports whose
    columns it releases), the first definition of a name first: the codebook a release's card reads
    (``backend.core.release.column_definition``).

    >>> [column.unit for column in release_columns("ratings") if column.name == "seconds_spent"]
    ['seconds']
    """
    from backend.core.release import KIND_EXPORTS

    found: dict[str, Column] = {}
    for app, function in KIND_EXPORTS.get(kind, ()):
        for column in export_of(app, function).columns:
            if column.meaning != UNDESCRIBED:
                found.setdefault(column.name, column)
    return tuple(found.values())
