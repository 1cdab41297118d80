"""The judging task without oTree: settings, loading logs (folder, zip, upload), page data, verdicts, assignment."""

from __future__ import annotations

import json
import zipfile

import pytest

from backend.reasoning_logs import parse_log
from backend.reasoning_protocol import PROTOCOL_COLUMNS, protocol_csv, read_protocol_form
from backend.reasoning_task import (
    LogLoadError,
    admin_report,
    check_verdict,
    export_cell,
    judging_view,
    load_logs,
    next_log,
    script_json,
    sentence_index,
    split_codes,
    task_settings,
    verdict_row,
)
from tests.conftest import PROJECT_ROOT

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
        ({"reservation_minutes": True}, "reservation_minutes"),
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
    assert "e_pd_p1_1_5_0_3_0_4.txt: not UTF-8" in message
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
    row = verdict_row(LOG, orig_cor=0, fin_cor=1, err_type="rga#pa", marked="l0#f0", remarks="")
    assert (row["sentence"], row["err_type"], row["con_mat"]) == ("I get 5.#Actually 1.", "pa#rga", "TN")
    one = parse_log("###ATTEMPT##0~\nRESPONSE##\nFine. {B}~\n")
    assert verdict_row(one, orig_cor=1, fin_cor=None, err_type="", marked="", remarks="")["fin_cor"] == 1
    assert split_codes(" pa , #rga#pa") == ["pa", "rga"]


def test_next_log_respects_k_the_per_judge_limit_and_held_reservations():
    config = settings(judges_per_log=2, logs_per_judge=2, reservation_minutes=1)
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
