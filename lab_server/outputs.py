"""Outside text where oTree prints it: ``js_vars`` inside a script, the admin Monitor, and every CSV export.

Why: docs/decisions/0012-what-otree-prints-and-sends.md.

- **js_vars.** oTree writes ``<script>var js_vars = {{ js_vars }};</script>``, where plain JSON would let ``</script>``
  in any string end the script. Pages get script-safe JSON: ``<``, ``>``, ``&``, U+2028 and U+2029 are written as
  ``\\u003c``-style escapes, which JavaScript reads back as the same characters. The ``|json`` template filter gets the
  same treatment.
- **Session Monitor, Payments and Sessions.** oTree's Monitor puts each participant's label (and page and app names)
  into ``innerHTML``, its Payments page prints the label raw and its Sessions list each session's label (a researcher's
  text) raw; all get HTML-escaped text, as the Data tab's rows already do (``sanitize_for_live_update``). Participant
  labels are also limited to letters, digits, ``-`` and ``_`` at entry (``entry``), so for them this is defence in
  depth; a session's label is any text.
- **Long session keys in the wide export.** oTree repeats every session key in every participant's row of its wide
  export, so a session made with its reasoning logs (``logs_upload``, up to 25 MB) or episodes (``episodes_json``)
  pasted into the config makes that export grow by the upload times the number of participants. A session-config cell
  longer than ``LONG_CONFIG_CHARS`` is written as a note saying how long it is; the app keeps the content itself with
  the session.
- **Empty app columns in the wide export.** oTree's wide export has a column for every player, group and subsession
  field of every round of every app (social_eval: 60 fields x 15 rounds = 900 columns; payoff_reasoning_eval: 19 x 30
  = 570; bias_tests 760), whether or not a round was ever played. Two kinds of app columns
  (``<app>.<round>.<model>.<field>``) are left out, so no value is lost and the participant and session columns always
  stay: a column empty for every participant (``empty_app_columns_dropped``), and every column of a round nobody
  played, i.e. a round whose cells are, for every participant, empty, oTree's bookkeeping (``id_in_group``,
  ``role``, ``payoff``, ``id_in_subsession``, ``round_number``) or the field's ``initial`` value
  (``unplayed_rounds_dropped``).
- **Custom exports.** One asked for one session (``?session_code=``) keeps that session's tests, marked ``is_test``; one
  of all sessions leaves them out (``study_flow.test_data``). The Data page names what one row of each holds
  (``backend.codebook.description``).
- **oTree's own exports follow the same rule** (``study_flow.test_data.is_test``): the wide export ("All apps") and
  each app's export get a ``participant.is_test`` column (1/0) beside ``participant.code`` and, asked for all
  sessions, leave test rows out (demo sessions, test links), before the empty-column rules above run; chat gets an
  ``is_test`` column and the same rule; page times, which oTree exports only for all sessions, leave test rows out.
  A row whose participant code the database no longer has is kept, ``is_test`` empty (``rows_tests_apart``).
- **CSV.** Every CSV oTree serves (wide, per app, custom exports, page times, chat; by URL or by the admin page's
  websocket; with or without the Excel byte-order mark) has its text cells neutralised with
  ``backend.core.csvio.neutralise_cell``: a cell starting with ``= + - @``, tab, CR or ``'`` gets a ``'`` in front. Numbers
  stay numbers; ``backend.core.csvio.read_csv_any`` restores the text exactly.
"""

from __future__ import annotations

import csv
import html
import importlib
import io
import json
from collections.abc import Callable
from decimal import Decimal

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
    """A participant as oTree's Payments page reads it, with the label HTML-escaped (the page prints it raw) and
    marked "(test)" for a test participant (``test``: ``study_flow.test_data.is_test``), the bonus their page stated
    (``study_flow.pay``) instead of oTree's payoff at today's money per point, and the participation fee their consent
    page stated (``pay.stated_fee``) instead of the session's fee today.

    >>> from types import SimpleNamespace
    >>> shown = LabelEscaped(SimpleNamespace(label="<b>x</b>", code="ab12", status=lambda: "done", vars={}))
    >>> shown.label, shown.code, shown.status()
    ('&lt;b&gt;x&lt;/b&gt;', 'ab12', 'done')
    >>> LabelEscaped(SimpleNamespace(label="ab", vars={}), test=True).label, LabelEscaped(SimpleNamespace(label=None), test=True).label
    ('ab (test)', '(test)')
    >>> from decimal import Decimal
    >>> stated = SimpleNamespace(vars={"pay_shown": {"amount": "0.25"}}, payoff_in_real_world_currency=lambda: Decimal("0.50"),
    ...                          payoff_plus_participation_fee=lambda: Decimal("1.50"))
    >>> LabelEscaped(stated).payoff_in_real_world_currency(), LabelEscaped(stated).payoff_plus_participation_fee()
    (Decimal('0.25'), Decimal('1.25'))
    >>> stated.vars["fee_shown"] = {"amount": "2.50"}  # the consent page said 2.50; the session's fee is 1.00 now
    >>> LabelEscaped(stated).payoff_plus_participation_fee()
    Decimal('2.75')
    """

    def __init__(self, participant, *, test: bool = False) -> None:
        self._participant = participant
        self.test = test

    def __getattr__(self, name):
        return getattr(self._participant, name)

    @property
    def label(self):
        label = self._participant.label
        escaped = html.escape(label) if isinstance(label, str) else label
        if not self.test:
            return escaped
        return f"{escaped} (test)" if escaped else "(test)"

    def _stated(self):
        record = (getattr(self._participant, "vars", None) or {}).get("pay_shown")
        try:
            return Decimal(str(record["amount"])) if isinstance(record, dict) else None
        except (KeyError, ArithmeticError):
            return None  # a record that cannot be read: oTree's own figure stands

    def payoff_in_real_world_currency(self):
        computed = self._participant.payoff_in_real_world_currency()
        stated = self._stated()
        return computed if stated is None else type(computed)(stated)

    def payoff_plus_participation_fee(self):
        from study_flow import pay

        total = self._participant.payoff_plus_participation_fee()
        bonus, fee = self._stated(), pay.stated_fee(self._participant)
        if bonus is None and fee is None:
            return total
        computed = Decimal(self._participant.payoff_in_real_world_currency())
        fee_now = Decimal(total) - computed  # oTree's total is the bonus at today's rate plus today's fee
        return type(total)((computed if bonus is None else bonus) + (fee_now if fee is None else fee))


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


def empty_app_columns_dropped(rows: list[list]) -> list[list]:
    """oTree's wide-export rows (header first) without the app columns that are empty (None or "") in every row;
    ``participant.*`` and ``session.*`` columns are kept.

    >>> rows = [["participant.code", "app.1.player.x", "app.2.player.x"], ["ab12", 3, None], ["cd34", "", ""]]
    >>> empty_app_columns_dropped(rows)
    [['participant.code', 'app.1.player.x'], ['ab12', 3], ['cd34', '']]
    """
    if len(rows) < 2 or not rows[0]:
        return rows
    header = rows[0]
    kept = [
        index
        for index, name in enumerate(header)
        if str(name).startswith(("participant.", "session."))
        or any(index < len(row) and row[index] not in (None, "") for row in rows[1:])
    ]
    return [[row[index] if index < len(row) else "" for index in kept] for row in rows]


def export_csv_text(rows) -> str:
    """An export's rows (header first) as the CSV text oTree's custom export writes: None as an empty cell, booleans
    as 1/0, every text cell neutralised. The admin reports offer it as a download of their own session's rows.

    >>> export_csv_text([["session_code", "note"], ["s1", "=1+1"], ["s1", None]]).splitlines()
    ['session_code,note', "s1,'=1+1", 's1,']
    """
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    for row in rows:
        cells = ["" if value is None else int(value) if isinstance(value, bool) else value for value in row]
        writer.writerow(neutralise_row(cells))
    return buffer.getvalue()


def session_downloads(app: str, prefix: str, downloads, players, session_code: str) -> list[dict]:
    """The admin report's download buttons: this session's rows of each export in ``downloads`` ((label, export
    function, file name part)), tests included and marked (an export of one session, ``study_flow.test_data``), and
    the app's codebook beside them as a file."""
    from backend import codebook
    from study_flow import test_data

    with test_data.one_session():
        files = [
            dict(label=label, file=f"{prefix}_{name}_{session_code}.csv", csv=export_csv_text(function(players)))
            for label, function, name in downloads
        ]
    files.append(
        dict(
            label="Codebook: what every column of these files means",
            file=f"{prefix}_codebook.csv",
            csv=export_csv_text(codebook.codebook_rows(app)),
        )
    )
    return files


# oTree's own columns of every round of an app: they hold a value whether or not the round was played.
ROUND_BOOKKEEPING = frozenset(
    {"player.id_in_group", "player.role", "player.payoff", "group.id_in_subsession", "subsession.round_number"}
)


def field_initials(app: str) -> dict[str, object]:
    """``"player.<field>"`` (and group, subsession) -> the field's ``initial`` value as the wide export writes it
    (booleans as 1/0), read from the app's models."""
    module = importlib.import_module(app)
    initials: dict[str, object] = {}
    for model in ("player", "group", "subsession"):
        table = getattr(getattr(module, model.capitalize(), None), "__table__", None)
        for column in table.columns if table is not None else ():
            if column.default is None or callable(column.default.arg):
                continue
            value = column.default.arg
            initials[f"{model}.{column.name.lstrip('_')}"] = int(value) if isinstance(value, bool) else value
    return initials


def unplayed_rounds_dropped(rows: list[list], initials: Callable[[str], dict] = field_initials) -> list[list]:
    """oTree's wide-export rows without the columns of app rounds nobody played: rounds whose cells are, in every row,
    empty, oTree's bookkeeping (`ROUND_BOOKKEEPING`) or the field's initial value (``initials(app)``).

    >>> rows = [["participant.code", "a.1.player.id_in_group", "a.1.player.x", "a.2.player.id_in_group", "a.2.player.x"],
    ...         ["ab12", 1, 7, 1, 0], ["cd34", 1, "", 1, ""]]
    >>> unplayed_rounds_dropped(rows, initials=lambda app: {"player.x": 0})
    [['participant.code', 'a.1.player.id_in_group', 'a.1.player.x'], ['ab12', 1, 7], ['cd34', 1, '']]
    """
    if len(rows) < 2 or not rows[0]:
        return rows
    header, blocks = rows[0], {}
    for index, name in enumerate(header):
        parts = str(name).split(".", 2)
        if len(parts) == 3 and parts[1].isdigit() and parts[0] not in ("participant", "session"):
            blocks.setdefault((parts[0], parts[1]), []).append(index)
    dropped, known = set(), {}
    for (app, _), indices in blocks.items():
        if app not in known:
            try:
                known[app] = initials(app)
            except (ImportError, AttributeError):
                known[app] = None  # an app that no longer exists: keep its columns as they are
        if known[app] is None:
            continue

        def placeholder(index, value, app=app):
            field = str(header[index]).split(".", 2)[2]
            return value in (None, "") or field in ROUND_BOOKKEEPING or known[app].get(field, object()) == value

        if all(placeholder(index, row[index]) for row in rows[1:] for index in indices if index < len(row)):
            dropped.update(indices)
    return [[value for index, value in enumerate(row) if index not in dropped] for row in rows]


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
        from study_flow import pay, test_data

        context = payments_context(self)
        rows = [LabelEscaped(p, test=test_data.is_test(p)) for p in context["participants"]]
        context["participants"] = rows
        # The totals of the amounts shown, as the rows now are; test participants are listed, marked, and left out of
        # them (as Pay and review leaves them out), except in a demo session, where everyone is a test.
        counted = rows if test_data.is_test_session(self.session) else [row for row in rows if not row.test]
        if rows:
            total = sum(
                (row.payoff_plus_participation_fee() for row in counted),
                type(rows[0].payoff_plus_participation_fee())(0),
            )
            mean = total / len(counted) if counted else total
            left_out = len(rows) - len(counted)
            note = f" ({left_out} test participant{'s' if left_out != 1 else ''} left out)" if left_out else ""
            context["total_payments"], context["mean_payment"] = f"{total}{note}", f"{mean}{note}"
        fee_now = context.get("participation_fee")
        other = sum(
            1
            for row in rows
            if (fee := pay.stated_fee(row._participant)) is not None and fee != Decimal(f"{float(fee_now or 0):.2f}")
        )
        if other:  # the fee row says what changed since people saw it
            context["participation_fee"] = (
                f"{fee_now} now; {other} participant{'s were' if other != 1 else ' was'} shown another fee on their "
                "consent page, and the totals below pay what they were shown"
            )
        return context

    return payments_context_with_escaped_labels


class SessionLabelEscaped:
    """A session as oTree's Sessions list reads it, its label HTML-escaped (the list prints ``{{ s.label }}`` raw; a
    researcher types the label in the REST call or the session's Edit page).

    >>> from types import SimpleNamespace
    >>> shown = SessionLabelEscaped(SimpleNamespace(label="<img src=x onerror=alert(1)>", code="ab12"))
    >>> shown.label, shown.code
    ('&lt;img src=x onerror=alert(1)&gt;', 'ab12')
    """

    def __init__(self, session) -> None:
        self._session = session

    def __getattr__(self, name):
        return getattr(self._session, name)

    @property
    def label(self):
        label = self._session.label
        return html.escape(label) if isinstance(label, str) else label


def _escaped_session_labels(sessions_context):
    def sessions_context_with_escaped_labels(self):
        context = sessions_context(self)
        context["sessions"] = [SessionLabelEscaped(session) for session in context["sessions"]]
        return context

    return sessions_context_with_escaped_labels


def rows_tests_apart(
    rows: list[list], code_column: str, tests: dict[str, bool], *, keep: bool, marked_as: str
) -> list[list]:
    """An export's rows (header first) with a column ``marked_as`` (1 for a test, 0 for study data) right after
    ``code_column`` (the participant's code), and the test rows left out unless ``keep`` (an export of one session).
    ``tests``: participant code -> is a test (``study_flow.test_data.is_test``). A code it lacks (a participant no
    longer in the database) keeps its row with the mark empty: never guessed, never dropped. Without the code column
    (oTree renamed it) the rows are returned as they are, and tests/system/test_otree_exports_tests.py fails.

    >>> rows = [["participant.code", "x"], ["ab12", 1], ["te57", 2], ["gone", 3]]
    >>> rows_tests_apart(rows, "participant.code", {"ab12": False, "te57": True}, keep=False, marked_as="participant.is_test")
    [['participant.code', 'participant.is_test', 'x'], ['ab12', 0, 1], ['gone', '', 3]]
    >>> rows_tests_apart(rows, "participant.code", {"ab12": False, "te57": True}, keep=True, marked_as="is_test")[2]
    ['te57', 1, 2]
    """
    if not rows or code_column not in rows[0]:
        return rows
    at = rows[0].index(code_column) + 1
    found = [[*rows[0][:at], marked_as, *rows[0][at:]]]
    for row in rows[1:]:
        test = tests.get(str(row[at - 1])) if at - 1 < len(row) else None
        if test and not keep:
            continue
        found.append([*row[:at], "" if test is None else int(test), *row[at:]])
    return found


def marks_of_testers(codes) -> dict[str, bool]:
    """Participant code -> whether they are a test (``study_flow.test_data.is_test``), for the codes the database has."""
    from study_flow import test_data

    from .otree_internals import Participant

    codes, found = sorted({str(code) for code in codes if code}), {}
    for start in range(0, len(codes), 500):  # a bounded IN list
        for participant in Participant.objects_filter(Participant.code.in_(codes[start : start + 500])):
            found[participant.code] = test_data.is_test(participant)
    return found


def _marked(rows: list[list], code_column: str, *, keep: bool, marked_as: str) -> list[list]:
    if not rows or code_column not in rows[0]:
        return rows
    at = rows[0].index(code_column)
    tests = marks_of_testers(row[at] for row in rows[1:] if at < len(row))
    return rows_tests_apart(rows, code_column, tests, keep=keep, marked_as=marked_as)


def _short_config_cells(rows_for_wide_csv):
    def wide_rows_with_short_config(session_code):
        rows = _marked(
            rows_for_wide_csv(session_code),
            "participant.code",
            keep=bool(session_code),
            marked_as="participant.is_test",
        )
        rows = session_config_cells_shortened(rows)
        return empty_app_columns_dropped(unplayed_rounds_dropped(rows))

    return wide_rows_with_short_config


def _app_rows_tests_apart(rows_for_csv):
    def app_rows_with_tests_apart(app_name, session_code=None):
        rows = rows_for_csv(app_name, session_code=session_code)
        return _marked(rows, "participant.code", keep=bool(session_code), marked_as="participant.is_test")

    return app_rows_with_tests_apart


def csv_tests_apart(csv_text: str, code_column: str, *, keep: bool, marked: bool) -> str:
    """CSV text of oTree's own writers (page times, chat) with test rows left out unless ``keep``, and an ``is_test``
    column after ``code_column`` when ``marked``."""
    rows = list(csv.reader(io.StringIO(csv_text, newline="")))
    if not rows or code_column not in rows[0]:
        return csv_text
    at = rows[0].index(code_column)
    tests = marks_of_testers(row[at] for row in rows[1:] if at < len(row))
    rows = rows_tests_apart(rows, code_column, tests, keep=keep, marked_as="is_test")
    if not marked:
        rows = [row[: at + 1] + row[at + 2 :] for row in rows]
    buffer = io.StringIO(newline="")
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue()


def _page_times_tests_apart(export_page_times):
    def export_page_times_without_tests(fp, *args, **kwargs):
        buffer = io.StringIO()
        export_page_times(buffer, *args, **kwargs)
        fp.write(csv_tests_apart(buffer.getvalue(), "participant_code", keep=False, marked=False))

    export_page_times_without_tests.__name__ = export_page_times.__name__
    return export_page_times_without_tests


def _chat_tests_apart(export_chat):
    def export_chat_tests_apart(fp, session_code=None, *args, **kwargs):
        buffer = io.StringIO()
        export_chat(buffer, session_code, *args, **kwargs)
        fp.write(csv_tests_apart(buffer.getvalue(), "participant_code", keep=bool(session_code), marked=True))

    export_chat_tests_apart.__name__ = export_chat.__name__
    return export_chat_tests_apart


def _neutralised_rows(export_csv):
    def export_neutralised_csv(fp, rows):
        export_csv(fp, (neutralise_row(row) for row in rows))

    return export_neutralised_csv


def _tests_kept_for_one_session(custom_export_app):
    def custom_export_app_of_one_session(app_name, fp, session_code=None, function_name="custom_export"):
        from study_flow import test_data

        with test_data.one_session(bool(session_code)):
            return custom_export_app(app_name, fp, session_code=session_code, function_name=function_name)

    return custom_export_app_of_one_session


def _described_exports(vars_for_template):
    def export_index_with_descriptions(self):
        from backend import codebook

        context = vars_for_template(self)
        for row in context.get("custom_export_table") or ():
            said = codebook.description(row.get("app_name", ""), row.get("function_name", ""))
            if said:
                row["name"] = f"{row['name']}: {said}"
        return context

    return export_index_with_descriptions


def _escape_any_value(escape: Callable) -> Callable:
    from .otree_internals import template_localize

    def escape_any_value(value, quotes=True):
        """``|escape`` of any value: text HTML-escaped; a number, None or another value printed as a raw output
        prints it, then escaped (oTree's own filter raises on them, which fails the page)."""
        return escape(value if isinstance(value, str) else template_localize(value), quotes)

    return escape_any_value


def install() -> None:
    from .otree_internals import replace
    from .otree_internals import template_filters as filters

    filters["escape"] = _escape_any_value(filters["escape"])

    # oTree's page code renders js_vars with this name; the |json filter with the other.
    replace("otree.views.abstract:json_dumps", _script_safe_dumps)
    replace("otree.templating.filters:json_dumps", _script_safe_dumps)
    replace("otree.export:get_rows_for_monitor", _escaped_monitor_rows)
    replace("otree.views.admin:SessionPayments.vars_for_template", _escaped_payment_labels)
    replace("otree.views.admin:Sessions.vars_for_template", _escaped_session_labels)
    replace("otree.export:get_rows_for_wide_csv", _short_config_cells)
    # oTree's own exports keep tests apart as the custom exports do (study_flow.test_data).
    replace("otree.export:get_rows_for_csv", _app_rows_tests_apart)
    replace("otree.export:export_page_times", _page_times_tests_apart)
    replace("otree.export:export_chat", _chat_tests_apart)
    # Custom exports of one session keep its tests (study_flow.test_data); the Data page says what each one holds.
    replace("otree.export:custom_export_app", _tests_kept_for_one_session)
    replace("otree.views.export:ExportIndex.vars_for_template", _described_exports)
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
