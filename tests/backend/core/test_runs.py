"""The runners' shared state files and loop (backend/core/runs.py): exact round trip, refusal of foreign files,
appending after a crash, the concurrency bound."""

from __future__ import annotations

import asyncio
import io

import pytest

from backend.core import runs

COLUMNS = ["id", "status", "reply"]


def test_rows_survive_a_round_trip_exactly_and_formulas_are_neutralised_on_disk(tmp_path):
    path = tmp_path / "run.csv"
    rows = [{"id": "1", "status": "answered", "reply": '=HYPERLINK("x")'}, {"id": "2", "status": "error", "reply": ""}]
    runs.write_rows(path, rows, columns=COLUMNS)
    assert "'=HYPERLINK" in path.read_text()
    assert runs.read_rows(path, columns=COLUMNS, what="a run") == rows
    assert not (tmp_path / "run.csv.tmp").exists()


def test_appending_writes_one_header_across_reopenings(tmp_path):
    path = tmp_path / "calls.csv"
    for n in range(3):
        with runs.RowAppender(path, columns=COLUMNS) as out:
            out.write([{"id": n, "status": "answered", "reply": "ok"}])
    lines = path.read_text().splitlines()
    assert lines[0] == "id,status,reply" and lines.count("id,status,reply") == 1 and len(lines) == 4


def test_a_foreign_or_reordered_file_is_refused_and_optional_columns_may_be_missing(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("name,score\nx,1\n")
    with pytest.raises(ValueError, match="does not have the columns of a bias run"):
        runs.read_rows(path, columns=COLUMNS, what="a bias run")
    path.write_text("id,status,reply,extra\n1,answered,x,y\n")
    with pytest.raises(ValueError, match="move it away"):
        runs.read_rows(path, columns=COLUMNS, what="a bias run")
    path.write_text("status,id,reply\nanswered,1,x\n")  # the same columns in another order: the same data
    assert runs.read_rows(path, columns=COLUMNS, what="a bias run") == [{"id": "1", "status": "answered", "reply": "x"}]
    path.write_text("\ufeffid,status\n1,answered\n")
    assert runs.read_rows(path, columns=COLUMNS, optional=["reply"], what="x") == [
        {"id": "1", "status": "answered", "reply": ""}
    ]


def test_run_each_never_exceeds_the_concurrency_and_counts_statuses():
    in_flight = peak = 0

    async def work(n):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return n

    stream = io.StringIO()
    statuses = []
    asyncio.run(
        runs.run_each(
            list(range(9)),
            work,
            concurrency=3,
            progress=stream,
            on_done=lambda n, r: statuses.append("error" if r % 3 == 0 else "answered") or statuses[-1],
        )
    )
    assert peak == 3 and len(statuses) == 9
    assert stream.getvalue().rstrip().endswith("answered 6 error 3")
    with pytest.raises(ValueError, match="concurrency"):
        asyncio.run(runs.run_each([1], work, concurrency=0, progress=None, on_done=lambda n, r: "x"))


def test_run_command_refuses_bad_input_as_a_usage_error_and_returns_finishs_status(capsys, tmp_path):
    import argparse

    parser = argparse.ArgumentParser(prog="runner")
    parser.add_argument("--items", type=int, required=True)
    runs.add_run_options(parser, unit="calls")
    seen = {}

    async def start(args, progress):
        runs.run_options(args)
        if args.items < 0:
            raise ValueError("items must be 0 or more.")
        seen["progress"] = progress
        return args.items

    out = str(tmp_path / "x")  # the run's manifest goes there, never into the checkout
    assert runs.run_command(parser, ["--items", "3", "--out", out, "--quiet"], start, lambda n, s: n + 1) == 4
    assert seen["progress"] is None
    for argv in (["--items", "-1", "--out", out], ["--items", "1", "--out", out, "--concurrency", "0"]):
        with pytest.raises(SystemExit) as refused:
            runs.run_command(parser, argv, start, lambda n, s: 0)
        assert refused.value.code == 2
    assert "concurrency must be at least 1" in capsys.readouterr().err


def test_a_record_cut_off_by_a_crash_is_dropped_and_the_next_row_stands_on_its_own(tmp_path):
    path = tmp_path / "games.csv"
    with runs.RowAppender(path, columns=COLUMNS) as out:
        out.write([{"id": 1, "status": "answered", "reply": "first\nline"}])
    with path.open("a", encoding="utf-8", newline="") as handle:
        handle.write('2,answered,"a reply cut\r\noff mid')  # the crash: no line break at the end
    assert runs.read_rows(path, columns=COLUMNS, what="x") == [
        {"id": "1", "status": "answered", "reply": "first\nline"}
    ]
    with runs.RowAppender(path, columns=COLUMNS) as out:
        out.write([{"id": 3, "status": "answered", "reply": "ok"}])
    assert [row["id"] for row in runs.read_rows(path, columns=COLUMNS, what="x")] == ["1", "3"]
    assert not runs.drop_cut_record(path)
