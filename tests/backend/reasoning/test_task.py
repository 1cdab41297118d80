"""The judging task without oTree: settings, loading logs (folder, zip, upload), page data, verdicts, assignment."""

from __future__ import annotations

import csv
import json
import re
import zipfile

import pytest

from backend.core.script_json import script_json
from backend.reasoning.logs import parse_log
from backend.reasoning.protocol import PROTOCOL_COLUMNS, export_cell, protocol_csv, read_protocol_form
from backend.reasoning.task import (
    LogLoadError,
    admin_report,
    check_verdict,
    judging_view,
    load_logs,
    next_log,
    sentence_index,
    split_codes,
    task_settings,
    verdict_row,
)
from harness import PROJECT_ROOT

SAMPLES = PROJECT_ROOT / "payoff_reasoning_eval" / "logs"
TWO = "###ATTEMPT##0~\nRESPONSE##\nI get 5. They get 0.\n- So R. {R}~\n\nFAILED QUERIES##\nq(1).~\n\n"
TWO += "###ATTEMPT##1~\nRESPONSE##\nActually 1. {B}~\n\nFAILED QUERIES##\n~\n"
LOG = parse_log(TWO, "m_pd_p1_1_5_0_3_0_1.txt")


def settings(**config):
    return task_settings(config, max_logs_per_judge=30)


def test_defaults_and_validation():
    defaults = settings()
    assert (defaults.judges_per_log, defaults.logs_per_judge, defaults.csv_separator) == (3, 6, ";")
    assert defaults.aggregation_rule == "unanimity" and set(defaults.games) == {"pd", "sh", "hd"}
    for bad, fragment in [
        ({"judges_per_log": 0}, "judges_per_log"),
        ({"logs_per_judge": 31}, "from 1 to 30"),
        ({"reservation_timeout_s": True}, "reservation_timeout_s"),
        ({"reservation_minutes": 30}, "Set 'reservation_timeout_s' = 1800 instead"),
        ({"csv_separator": ":"}, "csv_separator"),
        ({"aggregation_rule": "mean"}, "aggregation_rule"),
        ({"logs_upload": "{not json"}, "JSON"),
        ({"logs_upload": {"a.txt": 3}}, "log texts"),
        ({"default_game": "xx"}, "default_game"),
        ({"extra_games": {"Bad": {}}}, "lowercase"),
    ]:
        with pytest.raises(ValueError, match=fragment):
            settings(**bad)
    extra = {"bos": {"name": "Battle", "payoffs": {"RR": [3, 2], "RB": [0, 0], "BR": [0, 0], "BB": [2, 3]}}}
    assert settings(extra_games=json.dumps(extra), default_game="bos").default_game == "bos"


def test_logs_from_folder_zip_and_upload(tmp_path):
    from_folder = load_logs(settings(), project_root=PROJECT_ROOT)
    assert len(from_folder) == len(list(SAMPLES.glob("*.txt")))
    archive = tmp_path / "logs.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for path in SAMPLES.glob("*.txt"):
            handle.write(path, f"inner/{path.name}")
    assert load_logs(settings(logs_folder=str(archive)), project_root=PROJECT_ROOT) == from_folder
    uploaded = load_logs(settings(logs_upload={"x.txt": TWO}, default_game="pd"), project_root=PROJECT_ROOT)
    assert [(log.filename, log.game) for log in uploaded] == [("x.txt", "pd")]


def test_every_bad_log_is_listed_with_file_and_line(tmp_path):
    (tmp_path / "a_pd_p1_1_5_0_3_0_1.txt").write_text(TWO)
    (tmp_path / "b_pd_p1_1_5_0_3_0_2.txt").write_text("hello\n" + TWO)
    (tmp_path / "c_pd_p1_1_5_0_3_0_3.txt").write_text(TWO.replace("{B}", "B"))
    (tmp_path / "d.txt").write_text(TWO)
    (tmp_path / "e_pd_p1_1_5_0_3_0_4.txt").write_bytes(b"\xff\xfe")
    with pytest.raises(LogLoadError) as caught:
        load_logs(settings(logs_folder=str(tmp_path)), project_root=PROJECT_ROOT)
    message = str(caught.value)
    assert message.startswith("4 log file(s) in ")
    assert "b_pd_p1_1_5_0_3_0_2.txt, line 1: text before" in message
    assert "c_pd_p1_1_5_0_3_0_3.txt, line 10: the RESPONSE of attempt 1 contains no choice" in message
    assert "d.txt: the game is unknown" in message
    assert "e_pd_p1_1_5_0_3_0_4.txt is not UTF-8 text: byte 0xff at line 1" in message
    with pytest.raises(LogLoadError, match="neither a folder nor a .zip"):
        load_logs(settings(logs_folder=str(tmp_path / "a_pd_p1_1_5_0_3_0_1.txt")), project_root=PROJECT_ROOT)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(LogLoadError, match="No log files"):
        load_logs(settings(logs_folder=str(empty)), project_root=PROJECT_ROOT)


def test_page_data_and_sentence_ids():
    assert sentence_index(LOG) == {
        "f0": "I get 5.",
        "f1": "They get 0.",
        "f2": "So R.",
        "f3": "{R}",
        "l0": "Actually 1.",
        "l1": "{B}",
    }
    view = judging_view(LOG, settings().games["pd"])
    assert view["game_name"] == "Prisoner's Dilemma" and view["attempts"] == 2
    assert view["first_response"][1] == {
        "marker": "- ",
        "sentences": [{"id": "f2", "text": "So R."}, {"id": "f3", "text": "{R}"}],
    }
    one = parse_log("###ATTEMPT##0~\nRESPONSE##\nFine. {B}~\n")
    assert judging_view(one, settings().games["sh"])["last_response"] is None
    assert "l0" not in sentence_index(one)


def test_verdict_checks_and_rows():
    assert check_verdict(LOG, orig_cor=None, fin_cor=1, err_type="", marked="") == [
        "Please say whether the first response is correct."
    ]
    assert "last response" in check_verdict(LOG, orig_cor=1, fin_cor=None, err_type="", marked="")[0]
    assert "Unknown sentence id" in check_verdict(LOG, orig_cor=0, fin_cor=0, err_type="pa", marked="f0#z1")[0]
    assert check_verdict(LOG, orig_cor=0, fin_cor=1, err_type="rga#pa", marked="l0#f0") == []
    ok = dict(orig_cor=0, fin_cor=1, err_type="rga#pa", marked="l0#f0")
    assert check_verdict(LOG, **ok, remarks="r" * 5000) == []
    assert check_verdict(LOG, **ok, remarks="r\r\n" * 2500) == []  # the browser's 5,000: line breaks posted as CR LF
    assert check_verdict(LOG, **ok, remarks="r" * 5001) == [
        "Please shorten your remarks to at most 5,000 characters (they have 5,001)."
    ]
    row = verdict_row(LOG, orig_cor=0, fin_cor=1, err_type="rga#pa", marked="l0#f0", remarks="")
    assert (row["sentence"], row["err_type"], row["con_mat"]) == ("I get 5.#Actually 1.", "pa#rga", "TN")
    one = parse_log("###ATTEMPT##0~\nRESPONSE##\nFine. {B}~\n")
    assert verdict_row(one, orig_cor=1, fin_cor=None, err_type="", marked="", remarks="")["fin_cor"] == 1
    assert split_codes(" pa , #rga#pa") == ["pa", "rga"]


def test_next_log_respects_k_the_per_judge_limit_and_held_reservations():
    config = settings(judges_per_log=2, logs_per_judge=2, reservation_timeout_s=60)
    files = ["a", "b", "c"]
    rows = [
        {"item_id": "a", "participant": "p1", "status": "done", "reserved_at": 0.0},
        {"item_id": "a", "participant": "p2", "status": "done", "reserved_at": 0.0},
        {"item_id": "b", "participant": "p3", "status": "reserved", "reserved_at": 100.0},
    ]
    assert next_log(files, rows, participant="p4", settings=config, now=110.0) == ("c", True)  # a full, b reserved
    assert next_log(files, rows, participant="p3", settings=config, now=110.0) == ("b", False)  # a reload
    assert next_log(files, rows, participant="p3", settings=config, now=200.0) == ("b", True)  # expired: reserve again
    rows.append({"item_id": "b", "participant": "p1", "status": "done", "reserved_at": 0.0})
    assert next_log(files, rows, participant="p1", settings=config, now=110.0) == (None, False)  # p1 reached 2
    full = rows + [
        {"item_id": f, "participant": f"q{f}{i}", "status": "done", "reserved_at": 0.0} for f in "bc" for i in (1, 2)
    ]
    assert next_log(files, full, participant="p9", settings=config, now=110.0) == (None, False)


def test_admin_report_and_the_protocol_download(tmp_path):
    config = settings(csv_separator=";", judges_per_log=2)
    verdict = verdict_row(LOG, orig_cor=0, fin_cor=1, err_type="pa", marked="f0", remarks="two\nlines; here")
    rows = [{"item_id": LOG.filename, "participant": "p1", "status": "done", "reserved_at": 0.0}]
    report = admin_report([LOG.filename, "other.txt"], rows, [verdict], settings=config, session_code="abc", now=5.0)
    assert (report["ratings_done"], report["ratings_needed"], report["separator_name"]) == (1, 4, "semicolon")
    assert report["logs"][0] == {"file": LOG.filename, "done": 1, "reserved": 0, "missing": 1}
    assert report["summary"][0][:8] == ["all", "all", "1", "1", "0", "0", "0", "1"]
    text = json.loads(report["protocol_csv_json"])
    assert text.splitlines()[0] == ";".join(PROTOCOL_COLUMNS)
    path = tmp_path / "download.csv"
    path.write_text(text)
    [row] = read_protocol_form(path).to_dict("records")
    assert row["remarks"] == "two\\nlines; here" and row["sentence"] == "I get 5." and row["con_mat"] == "TN"
    assert json.loads(report["download_name_json"]) == "payoff_reasoning_abc.csv"
    assert admin_report([], [], [], settings=config, session_code="x", now=0.0)["summary"] == []


def test_script_json_and_export_cells_are_safe():
    assert "</script>" not in script_json({"a": "</script><!--"}) and json.loads(script_json("a&<b>")) == "a&<b>"
    assert export_cell("remarks", "a\nb") == "a\\nb" and export_cell("sentence", "a\\b") == "a\\b"
    assert export_cell("fin_cor", None) == ""
    assert protocol_csv([], separator="\t") == "\t".join(PROTOCOL_COLUMNS) + "\n"


# ---- bounds on what a session's logs may be (a crafted .zip or upload must not fill the server's memory) ----

BOMB_ENTRY = "bomb_pd_p1_1_5_0_3_0_1.txt"
MB = 1024 * 1024


def zip_of_zeros(path, *, megabytes: int, entry: str = BOMB_ENTRY):
    """A .zip whose one entry unpacks to ``megabytes`` MB of zero bytes (written in 1 MB steps; ~1 KB per MB)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive, archive.open(entry, "w") as handle:
        for _ in range(megabytes):
            handle.write(bytes(MB))
    return path


def lying_zip(path, *, actual: int, declared: int):
    """A .zip whose central directory says the entry unpacks to ``declared`` bytes while it holds ``actual``."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(BOMB_ENTRY, bytes(actual))
    raw = bytearray(path.read_bytes())
    central = raw.index(b"PK\x01\x02")
    raw[central + 24 : central + 28] = declared.to_bytes(4, "little")  # uncompressed size
    path.write_bytes(bytes(raw))
    return path


def peak_memory_of(function):
    """(result or raised error, peak bytes Python allocated while ``function`` ran)."""
    import tracemalloc

    tracemalloc.start()
    try:
        try:
            outcome = function()
        except Exception as error:  # the refusal is the outcome under test
            outcome = error
        return outcome, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_zip_bomb_is_refused_by_its_declared_size_before_anything_is_read(tmp_path):
    archive = zip_of_zeros(tmp_path / "logs.zip", megabytes=200)
    assert archive.stat().st_size < 1 * MB
    outcome, peak = peak_memory_of(lambda: load_logs(settings(logs_folder=str(archive)), project_root=PROJECT_ROOT))
    assert peak < 5 * MB, f"{peak:,} bytes allocated"
    assert isinstance(outcome, LogLoadError)
    assert f"logs_folder '{archive}' was not read: the entry '{BOMB_ENTRY}' has 209,715,200 bytes" in str(outcome)
    assert "more than the 1,000,000 a log may have" in str(outcome)


def test_a_zip_whose_header_understates_an_entry_is_refused_as_damaged(tmp_path):
    archive = lying_zip(tmp_path / "logs.zip", actual=30 * MB, declared=900)
    assert zipfile.ZipFile(archive).getinfo(BOMB_ENTRY).file_size == 900
    outcome, peak = peak_memory_of(lambda: load_logs(settings(logs_folder=str(archive)), project_root=PROJECT_ROOT))
    assert isinstance(outcome, LogLoadError), repr(outcome)
    assert f"the entry '{BOMB_ENTRY}' cannot be unpacked (Bad CRC-32" in str(outcome)
    assert "Make the .zip again" in str(outcome) and peak < 5 * MB


def test_too_many_entries_too_many_bytes_and_too_many_logs_are_refused(tmp_path):
    many = tmp_path / "many.zip"
    with zipfile.ZipFile(many, "w") as archive:
        for number in range(5001):
            archive.writestr(f"notes/{number}.md", b"")
    with pytest.raises(LogLoadError, match=r"holds 5,001 entries, more than the 5,000 allowed"):
        load_logs(settings(logs_folder=str(many)), project_root=PROJECT_ROOT)

    heavy = tmp_path / "heavy.zip"  # each entry within bounds, all together over them
    with zipfile.ZipFile(heavy, "w", zipfile.ZIP_DEFLATED) as archive:
        for number in range(21):
            archive.writestr(f"m_pd_p1_1_5_0_3_0_{number}.txt", bytes(990_000))
    with pytest.raises(LogLoadError, match=r"its logs have 20,790,000 bytes together, more than the 20,000,000"):
        load_logs(settings(logs_folder=str(heavy)), project_root=PROJECT_ROOT)

    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "big_pd_p1_1_5_0_3_0_1.txt").write_bytes(b"x" * 1_000_001)
    with pytest.raises(LogLoadError, match=r"the file 'big_pd_p1_1_5_0_3_0_1.txt' has 1,000,001 bytes"):
        load_logs(settings(logs_folder=str(folder)), project_root=PROJECT_ROOT)

    with pytest.raises(ValueError, match=r"'logs_upload' holds 2,001 logs, more than the 2,000 allowed"):
        settings(logs_upload={f"{number}.txt": TWO for number in range(2001)})
    with pytest.raises(
        ValueError, match=r"'logs_upload' was not read: the log 'x.txt' has 1,000,001 bytes, more than the 1,000,000"
    ):
        settings(logs_upload={"x.txt": "x" * 1_000_001})


def test_the_upload_json_is_bounded_before_it_is_parsed(monkeypatch):
    import backend.reasoning.task as task

    monkeypatch.setattr(task, "MAX_UPLOAD_CHARS", 1000)
    with pytest.raises(ValueError, match=r"'logs_upload' holds 1,013 characters, more than the 1,000 allowed"):
        settings(logs_upload=json.dumps({"x.txt": "y" * 1000}))
    with pytest.raises(ValueError, match=r"'logs_upload' is not valid JSON: line 2, column 1"):
        settings(logs_upload='{"x.txt": "y",\n}')


def test_log_files_with_a_byte_order_mark_load_and_other_encodings_are_refused_with_file_and_line(tmp_path):
    name = "bom_pd_p1_1_5_0_3_0_1.txt"
    (tmp_path / name).write_bytes(b"\xef\xbb\xbf" + TWO.encode())
    [log] = load_logs(settings(logs_folder=str(tmp_path)), project_root=PROJECT_ROOT)
    assert log.attempts == LOG.attempts
    (tmp_path / "latin_pd_p1_1_5_0_3_0_2.txt").write_bytes(
        TWO.replace("I get 5.", "Je gagne 5 \u20ac.").encode("cp1252")
    )
    with pytest.raises(LogLoadError, match=r"latin_pd_p1_1_5_0_3_0_2.txt is not UTF-8 text: byte 0x80 at line 3"):
        load_logs(settings(logs_folder=str(tmp_path)), project_root=PROJECT_ROOT)


def test_every_key_is_typed_and_bounded_with_its_name_in_the_message():
    for bad, message in [
        ({"judges_per_log": "three"}, "The session key 'judges_per_log' must be a whole number from 1 to 100"),
        ({"judges_per_log": 101}, "'judges_per_log' must be a whole number from 1 to 100, not 101"),
        ({"logs_per_judge": 2.5}, "'logs_per_judge' must be a whole number from 1 to 30, not 2.5"),
        ({"reservation_timeout_s": float("inf")}, "'reservation_timeout_s' must be a number from 1 to 604800"),
        ({"csv_separator": ":"}, "'csv_separator' must be one of ;, ,, \t, |, not ':'"),
        ({"aggregation_rule": 1}, "'aggregation_rule' must be one of unanimity, majority, not 1"),
        ({"default_game": "bos"}, "'default_game' must be a known game (hd, pd, sh), not 'bos'"),
        ({"extra_games": '{"bos": 1'}, "'extra_games' is not valid JSON: line 1, column 10"),
        ({"extra_games": "[1]"}, "'extra_games' must be a JSON object, not list"),
        ({"logs_folder": 5}, "'logs_folder' must be text"),
    ]:
        with pytest.raises(ValueError) as caught:
            settings(**bad)
        assert message in str(caught.value)
    typed = settings(judges_per_log="2", logs_per_judge=4.0, reservation_timeout_s="450")
    assert (typed.judges_per_log, typed.logs_per_judge, typed.reservation_timeout_s) == (2, 4, 450.0)


def test_extra_games_are_bounded():
    payoffs = {"RR": [1, 1], "RB": [5, 0], "BR": [0, 5], "BB": [3, 3]}
    for spec, message in [
        ({"payoffs": {**payoffs, "RR": [1e300, 1]}}, "must be two numbers from -1e+06 to 1e+06"),
        ({"payoffs": {**payoffs, "RR": [float("nan"), 1]}}, "must be two numbers"),
        ({"payoffs": {**payoffs, "RR": 5}}, "must be two numbers"),
        ({"name": "n" * 101, "payoffs": payoffs}, "name of game 'xy' must be text of at most 100 characters"),
        ({"actions": {"R": ["x"]}, "payoffs": payoffs}, "actions of game 'xy'"),
    ]:
        with pytest.raises(ValueError, match=re.escape(message)):
            settings(extra_games={"xy": spec})
    with pytest.raises(ValueError, match="more than the 50 allowed"):
        settings(extra_games={f"g{number}": {"payoffs": payoffs} for number in range(51)})


def test_the_protocol_download_neutralises_formula_text_and_reads_back_exactly(tmp_path):
    formula_log = parse_log(
        '###ATTEMPT##0~\nRESPONSE##\n=HYPERLINK("http://x", "5") is my payoff. -R pays 1. {R}~\n',
        "m_pd_p1_1_5_0_3_0_7.txt",
    )
    verdict = verdict_row(formula_log, orig_cor=0, fin_cor=None, err_type="pa", marked="f0", remarks="@SUM(A1)\n-2")
    text = protocol_csv([verdict], separator=";")
    [cells] = list(csv.reader(text.splitlines()[1:], delimiter=";"))
    assert cells[PROTOCOL_COLUMNS.index("sentence")] == '\'=HYPERLINK("http://x", "5") is my payoff.'
    assert cells[PROTOCOL_COLUMNS.index("remarks")] == "'@SUM(A1)\\n-2"
    assert [cells[PROTOCOL_COLUMNS.index(column)] for column in ("attempts", "orig_cor")] == ["1", "0"]
    for cell in cells:
        assert not cell or cell[0] not in "=+-@\t\r", cell
    path = tmp_path / "download.csv"
    path.write_text(text, encoding="utf-8")
    [row] = read_protocol_form(path).to_dict("records")
    assert row["sentence"] == verdict["sentence"] and row["remarks"] == "@SUM(A1)\\n-2"
