"""Outside text where oTree prints it: ``js_vars`` inside a script, the admin Monitor, and every CSV export.

- **js_vars.** oTree writes ``<script>var js_vars = {{ js_vars }};</script>`` with plain JSON, so ``</script>`` in any
  string (a chat message, a model reply, a word from a researcher's file) ended the script and ran what followed.
  Pages now get script-safe JSON: ``<``, ``>``, ``&``, U+2028 and U+2029 are written as ``\\u003c``-style escapes,
  which JavaScript reads back as the same characters. The ``|json`` template filter gets the same treatment.
- **Session Monitor and Payments.** oTree's Monitor puts each participant's label (and page and app names) into
  ``innerHTML`` and its Payments page prints the label raw; both now get HTML-escaped text, as the Data tab's rows
  already do (``sanitize_for_live_update``). Labels are also limited to letters, digits, ``-`` and ``_`` at entry
  (``entry``), so this is defence in depth.
- **Long session keys in the wide export.** oTree repeats every session key in every participant's row of its wide
  export, so a session made with its reasoning logs (``logs_upload``, up to 25 MB) or episodes (``episodes_json``)
  pasted into the config made that export grow by the upload times the number of participants (64 MB for a 3.3 MB
  upload and 20 people), with cells past a spreadsheet's 32,767-character limit. A session-config cell longer than
  ``LONG_CONFIG_CHARS`` is written as a note saying how long it is; the app keeps the content itself with the session.
- **CSV.** Every CSV oTree serves (wide, per app, custom exports, page times, chat; by URL or by the admin page's
  websocket; with or without the Excel byte-order mark) has its text cells neutralised with
  ``backend.core.csvio.neutralise_cell``: a cell starting with ``= + - @``, tab, CR or ``'`` gets a ``'`` in front. Numbers
  stay numbers; ``backend.core.csvio.read_csv_any`` restores the text exactly.
"""

from __future__ import annotations

import csv
import html
import io
import json

from backend.core.csvio import neutralise_row
from backend.core.script_json import script_safe

# Monitor fields that are not text from outside: numbers, the progress pair, oTree's own presence icon and timestamp.
_MONITOR_FIELDS_KEPT = frozenset({"id_in_session", "_current_page_of_total", "_last_page_timestamp", "_presence"})


def monitor_row_escaped(row: dict) -> dict:
    """A Session Monitor row with its text values HTML-escaped (the Monitor's JavaScript puts them into innerHTML).

    >>> monitor_row_escaped({"label": "<img src=x onerror=alert(1)>", "id_in_session": 3, "_monitor_note_json": '["<b>"]'})
    {'label': '&lt;img src=x onerror=alert(1)&gt;', 'id_in_session': 3, '_monitor_note_json': '["&lt;b&gt;"]'}
    """
    escaped = {}
    for field, value in row.items():
        if field == "_monitor_note_json" and isinstance(value, str):
            try:
                names = json.loads(value)
            except ValueError:
                names = [value]
            value = json.dumps([html.escape(str(name)) for name in names])
        elif field not in _MONITOR_FIELDS_KEPT and isinstance(value, str):
            value = html.escape(value)
        escaped[field] = value
    return escaped


class LabelEscaped:
    """A participant as oTree's Payments page reads it, with the label HTML-escaped (the page prints it raw).

    >>> from types import SimpleNamespace
    >>> shown = LabelEscaped(SimpleNamespace(label="<b>x</b>", code="ab12", status=lambda: "done"))
    >>> shown.label, shown.code, shown.status()
    ('&lt;b&gt;x&lt;/b&gt;', 'ab12', 'done')
    """

    def __init__(self, participant) -> None:
        self._participant = participant

    def __getattr__(self, name):
        return getattr(self._participant, name)

    @property
    def label(self):
        label = self._participant.label
        return html.escape(label) if isinstance(label, str) else label


LONG_CONFIG_CHARS = 1000


def session_config_cells_shortened(rows: list[list]) -> list[list]:
    """oTree's wide-export rows (header first) with every ``session.config.*`` text over ``LONG_CONFIG_CHARS``
    replaced by a note of its length.

    >>> rows = [["participant.code", "session.config.logs_upload"], ["ab12", "x" * 5000], ["cd34", ""]]
    >>> session_config_cells_shortened(rows)[1:]
    [['ab12', '[5,000 characters: kept with the session, shortened in this export]'], ['cd34', '']]
    """
    if not rows or not rows[0]:
        return rows
    columns = [index for index, name in enumerate(rows[0]) if str(name).startswith("session.config.")]
    for row in rows[1:]:
        for index in columns:
            value = row[index]
            if isinstance(value, str) and len(value) > LONG_CONFIG_CHARS:
                row[index] = f"[{len(value):,} characters: kept with the session, shortened in this export]"
    return rows


def neutralised_csv_text(csv_text: str) -> str:
    """CSV text (as oTree's own writers produce it) with every cell neutralised; numeric text is left as it is.

    >>> neutralised_csv_text('code,body\\r\\nab12,=HYPERLINK("x")\\r\\ncd34,-3\\r\\n')
    'code,body\\r\\nab12,"\\'=HYPERLINK(""x"")"\\r\\ncd34,-3\\r\\n'
    """
    rows = csv.reader(io.StringIO(csv_text, newline=""))
    buffer = io.StringIO(newline="")
    csv.writer(buffer).writerows(neutralise_row(row) for row in rows)
    return buffer.getvalue()


def _script_safe_dumps(json_dumps):
    def script_safe_json_dumps(value):
        return script_safe(json_dumps(value))

    return script_safe_json_dumps


def _escaped_monitor_rows(rows_for_monitor):
    def escaped_rows_for_monitor(participants):
        return [monitor_row_escaped(row) for row in rows_for_monitor(participants)]

    return escaped_rows_for_monitor


def _escaped_payment_labels(payments_context):
    def payments_context_with_escaped_labels(self):
        context = payments_context(self)
        context["participants"] = [LabelEscaped(participant) for participant in context["participants"]]
        return context

    return payments_context_with_escaped_labels


def _short_config_cells(rows_for_wide_csv):
    def wide_rows_with_short_config(session_code):
        return session_config_cells_shortened(rows_for_wide_csv(session_code))

    return wide_rows_with_short_config


def _neutralised_rows(export_csv):
    def export_neutralised_csv(fp, rows):
        export_csv(fp, (neutralise_row(row) for row in rows))

    return export_neutralised_csv


def install() -> None:
    from .otree_internals import replace

    # oTree's page code renders js_vars with this name; the |json filter with the other.
    replace("otree.views.abstract:json_dumps", _script_safe_dumps)
    replace("otree.templating.filters:json_dumps", _script_safe_dumps)
    replace("otree.export:get_rows_for_monitor", _escaped_monitor_rows)
    replace("otree.views.admin:SessionPayments.vars_for_template", _escaped_payment_labels)
    replace("otree.export:get_rows_for_wide_csv", _short_config_cells)
    # The wide, per-app and custom exports (URL and websocket alike) all write through _export_csv with typed values:
    # only text cells are touched, so numbers stay numbers.
    replace("otree.export:_export_csv", _neutralised_rows)
    # Page times and chat have writers of their own; their output is rewritten cell by cell.
    for name in ("export_page_times", "export_chat"):
        replace(f"otree.export:{name}", neutralising)


def neutralising(write_export):
    def write_neutralised(fp, *args, **kwargs):
        buffer = io.StringIO()
        write_export(buffer, *args, **kwargs)
        fp.write(neutralised_csv_text(buffer.getvalue()))

    write_neutralised.__name__ = write_export.__name__
    write_neutralised.__doc__ = write_export.__doc__
    return write_neutralised
