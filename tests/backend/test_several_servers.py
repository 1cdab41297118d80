"""One study on several servers (docs/multi-server.md): the exports of two servers, reported and released together
with ``--servers``, give the figures of one server holding all the rows, although both servers issued the same
session and participant codes; a Prolific ID that came to both servers is flagged.

The exports are written with the products' own row builders (``tests.support.social.human_export_row`` in the long
ratings export's columns, ``backend.bias.export.export_row``), as the report tests write them, and taken from a real
server (``exports`` of ``test_report_cli``: two annotators who disagree, gold episodes, neutralised cells).
"""

from __future__ import annotations

import csv
import json
import shutil

import pandas as pd
import pytest

from backend import __main__ as cli
from backend.bias.export import EXPORT_COLUMNS as BIAS_COLUMNS
from backend.bias.export import export_row
from backend.bias.items import load_items, present
from backend.core import release
from backend.core.release_cli import make_release
from backend.social import cells as social_cells
from tests.backend.test_report_cli import exports, otree_server  # noqa: F401 (fixtures: every export of a server of its own)
from tests.support.social import human_export_row

SAME_SESSION = "k3v9q2xa"  # both servers issued this session code ...
SAME_PEOPLE = ("r7m2p4qd", "h5t8w1zc")  # ... and these participant codes
ONE_SERVER = {"k3v9q2xa": "b8n4e6yu", "r7m2p4qd": "f2j6s9kl", "h5t8w1zc": "m4x7c3vb"}  # lab2's codes on one server
RETURNING_PID = "5f1a2b3c4d5e6f7a8b9c0d1e"  # came to lab1, came back through the study link and was sent to lab2
KEY = b"several-servers-key-0123456789"


def _write(path, columns, rows):
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def _as_one_server(rows):
    """lab2's rows as one server holding both rooms would have written them: its own codes, none of lab1's."""
    return [{key: ONE_SERVER.get(value, value) for key, value in row.items()} for row in rows]


def _ratings(ratings_by_person, *, pids):
    rows = []
    for person, pid in zip(SAME_PEOPLE, pids, strict=True):
        for episode, goal in ratings_by_person[person].items():
            for dimension, value in (("goal", goal), ("secret", -goal)):
                row = human_export_row(episode, person, 1, dimension, value, model=goal + 1)
                rows.append({**row, "session_code": SAME_SESSION, "prolific_pid": pid})
        gold = human_export_row("g1", person, 1, "goal", 0, gold=True, passed=int(person == SAME_PEOPLE[0]))
        rows.append({**gold, "session_code": SAME_SESSION, "prolific_pid": pid})
    return rows


LAB1 = _ratings({"r7m2p4qd": {"e1": 8, "e2": 2, "e3": 5}, "h5t8w1zc": {"e1": 6, "e2": 3}}, pids=(RETURNING_PID, "aa1"))
LAB2 = _ratings({"r7m2p4qd": {"e1": 4, "e3": 9}, "h5t8w1zc": {"e2": 1, "e3": 7}}, pids=(RETURNING_PID, "bb2"))


@pytest.fixture
def ratings(tmp_path):
    columns = social_cells.EXPORT_COLUMNS
    (tmp_path / "lab1").mkdir(), (tmp_path / "lab2").mkdir(), (tmp_path / "one").mkdir()
    return {
        "lab1": _write(tmp_path / "lab1" / "ratings_long.csv", columns, LAB1),
        "lab2": _write(tmp_path / "lab2" / "ratings_long.csv", columns, LAB2),
        "one": _write(tmp_path / "one" / "ratings_long.csv", columns, LAB1 + _as_one_server(LAB2)),
    }


def _report(capsys, *argv):
    assert cli.main(["report", "--json", *map(str, argv)]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    for key in ("files", "contributions") if isinstance(data, dict) else ():  # which files were read: not a figure
        data.pop(key, None)
    if isinstance(data, dict) and data.get("quality"):  # per annotator: the figures, whatever the codes are called
        data["quality"] = sorted(
            json.dumps({k: v for k, v in record.items() if k != "annotator"}, sort_keys=True)
            for record in data["quality"]
        )
    return data, captured.err


def test_two_servers_ratings_give_the_figures_of_one_server_and_the_returning_person_is_flagged(ratings, capsys):
    one, _ = _report(capsys, ratings["one"])
    both, stderr = _report(capsys, ratings["lab1"], ratings["lab2"], "--servers", "lab1,lab2")
    assert both == one
    assert one["annotators"] == 4 and one["attention"]["n_annotators"] == 4
    flagged = [line for line in stderr.splitlines() if line.startswith("Flagged: ")]
    assert flagged == [
        f"Flagged: Prolific ID {RETURNING_PID} came to 2 servers: lab1 (participant r7m2p4qd), lab2 (participant "
        "r7m2p4qd); the report counts them as 2 participants."
    ]
    # What --servers prevents: read as they are, the servers' equal codes make two people one annotator.
    merged, stderr = _report(capsys, ratings["lab1"], ratings["lab2"])
    assert merged["annotators"] == 2 and merged["summary"] != one["summary"]
    assert "Flagged" not in stderr


def _bias_rows(answers, *, session, pid_of):
    items = load_items()
    item = items.item("halo_linen_supplier")
    rows = []
    for person, (control, treatment) in answers.items():
        for version, answer in (("control", control), ("treatment", treatment)):
            row = export_row(
                item, present(item, version), respondent_kind="person", respondent_id=person, item_set=items.name,
                position=1, answer=answer, confidence=0.5, confidence_source="slider",
            )  # fmt: skip
            rows.append({**row, "session_code": session, "participant_code": person, "prolific_pid": pid_of[person]})
    return rows


def test_two_servers_bias_answers_give_the_figures_of_one_server(tmp_path, capsys):
    pids = {"r7m2p4qd": "cc3", "h5t8w1zc": "dd4"}
    lab1 = _bias_rows({"r7m2p4qd": (2, 4), "h5t8w1zc": (6, 6)}, session=SAME_SESSION, pid_of=pids)
    lab2 = _bias_rows({"r7m2p4qd": (8, 2), "h5t8w1zc": (4, 8)}, session=SAME_SESSION, pid_of={p: p + "x" for p in pids})
    paths = [_write(tmp_path / f"{name}.csv", BIAS_COLUMNS, rows) for name, rows in (("lab1", lab1), ("lab2", lab2))]
    one = _write(tmp_path / "one.csv", BIAS_COLUMNS, lab1 + _as_one_server(lab2))
    both, stderr = _report(capsys, *paths, "--servers", "lab1,lab2")
    assert both == _report(capsys, one)[0]
    assert both["counts"]["people"]["respondents"] == both["metrics"]["halo"]["people"]["respondents"] == 4
    assert "Flagged" not in stderr  # nobody came to both servers
    with pytest.raises(SystemExit) as refused:  # read as they are, the same person answered the test twice
        cli.main(["report", *map(str, paths)])
    assert refused.value.code == 2 and "answered the test" in capsys.readouterr().err


def test_a_test_participant_on_two_servers_is_not_flagged_unless_tests_are_kept(tmp_path, capsys):
    columns = social_cells.EXPORT_COLUMNS
    tester = [{**row, "prolific_pid": "tester-pid"} for row in LAB1]
    lab1 = _write(tmp_path / "lab1.csv", [*columns, "is_test"], [{**row, "is_test": "0"} for row in tester])
    lab2 = _write(tmp_path / "lab2.csv", [*columns, "is_test"], [{**row, "is_test": "1"} for row in tester])
    assert "Flagged" not in _report(capsys, lab1, lab2, "--servers", "lab1,lab2")[1]
    flagged = _report(capsys, lab1, lab2, "--servers", "lab1,lab2", "--include-tests")[1]
    assert "Flagged: Prolific ID tester-pid came to 2 servers" in flagged


def test_the_server_names_must_match_the_files(ratings, capsys):
    for servers, said in (
        ("lab1", "--servers names 1 server but 2 CSV files are given"),
        ("lab1,lab 2", "The server name 'lab 2' is not usable"),
    ):
        with pytest.raises(SystemExit) as refused:
            cli.main(["report", str(ratings["lab1"]), str(ratings["lab2"]), "--servers", servers])
        assert refused.value.code == 2 and said in capsys.readouterr().err


def test_a_file_that_is_no_text_is_refused_with_the_reason(ratings, tmp_path):
    broken = tmp_path / "broken.csv"
    broken.write_bytes(b"session_code\n\xff\xfe\n")
    with pytest.raises(ValueError, match="broken.csv is not UTF-8 text"):
        make_release([ratings["lab1"], broken], tmp_path / "out", key=KEY, argv=[], servers=["lab1", "lab2"])


def test_a_release_of_two_servers_keeps_their_people_apart(ratings, tmp_path):
    out = tmp_path / "bundle"
    make_release([ratings["lab1"], ratings["lab2"]], out, key=KEY, argv=[], servers=["lab1", "lab2"], figures=False)
    released = pd.read_parquet(out / "data" / "ratings.parquet")
    one = release.build_tables([ratings["one"]], key=KEY)["ratings"].frame
    assert released["annotator"].nunique() == one["annotator"].nunique() == 4
    assert set(released["source_file"]) == {"lab1-ratings_long.csv", "lab2-ratings_long.csv"}
    people = released.groupby("prolific_pid")["annotator"].nunique()
    assert people[release.pseudonym(RETURNING_PID, kind="prolific", key=KEY)] == 2  # one person, two servers
    text = (out / "data" / "ratings.jsonl").read_text() + (out / "README.md").read_text()
    assert not any(code in text for code in (SAME_SESSION, *SAME_PEOPLE, RETURNING_PID, "lab1:"))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["options"]["servers"] == ["lab1", "lab2"]


def test_dond_games_of_two_servers_keep_their_game_ids_apart_and_a_game_is_named_with_its_server(tmp_path, capsys):
    from tests.backend.dond.test_report import game, write_csv

    def games(scores):
        return [
            game(
                1,
                "success",
                score,
                pareto=True,
                points=(6, 4),
                game_id=f"{SAME_SESSION}-{n}",
                session_code=SAME_SESSION,
                counts="[1, 2]",
                values_a="[2, 4]",
                values_b="[6, 2]",
                points_a=6,
                points_b=4,
            )  # fmt: skip
            for n, score in enumerate(scores, start=1)
        ]

    lab1, lab2 = write_csv(tmp_path / "lab1.csv", games([100.0, 80.0])), write_csv(tmp_path / "lab2.csv", games([40.0]))
    one = write_csv(tmp_path / "one.csv", games([100.0, 80.0]) + _as_one_server(games([40.0])))
    both, _ = _report(
        capsys, lab1, lab2, "--servers", "lab1,lab2", "--figures", tmp_path / "fig", "--game", "lab2:k3v9q2xa-1"
    )
    assert both == _report(capsys, one)[0]
    assert [path.name for path in (tmp_path / "fig").glob("dond_pareto_*.svg")] == ["dond_pareto_lab2_k3v9q2xa-1.svg"]


def _recoded(source, target):
    """A real export as another server would have written it with other codes: every session and participant code
    (in whatever cell) replaced by its reverse, cells otherwise as the server wrote them."""
    frame = pd.read_csv(source, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    codes = {
        v for column in ("session_code", "participant_code", "annotator") if column in frame for v in frame[column]
    }
    text = source.read_text(encoding="utf-8-sig")
    for code in sorted(filter(None, codes), key=len, reverse=True):
        text = text.replace(code, code[::-1])
    target.write_text(text, encoding="utf-8")
    return target


@pytest.mark.parametrize("export", ["custom_export_ratings_long", "custom_export_ratings_wide"])
def test_a_real_servers_export_twice_with_the_same_codes_gives_the_figures_of_one_server(
    exports,  # noqa: F811
    export,
    tmp_path,
    capsys,
):
    real = exports[("social_eval", export)]
    for server in ("lab1", "lab2"):
        (tmp_path / server).mkdir()
    lab1, lab2 = (shutil.copy(real, tmp_path / server) for server in ("lab1", "lab2"))  # the same codes on both
    one = pd.concat(
        [
            pd.read_csv(real, dtype=str, keep_default_na=False, encoding="utf-8-sig"),
            pd.read_csv(_recoded(real, tmp_path / "other.csv"), dtype=str, keep_default_na=False),
        ]
    )
    one.to_csv(tmp_path / "one.csv", index=False)
    both, _ = _report(capsys, lab1, lab2, "--servers", "lab1,lab2")
    single, _ = _report(capsys, tmp_path / "one.csv")
    assert both == single and both["annotators"] == 4
    assert _report(capsys, lab1, lab2)[0]["annotators"] == 2  # read as they are: two people each counted once


def test_the_release_command_takes_servers_and_flags_the_returning_person(ratings, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(release.RELEASE_KEY_VARIABLE, KEY.decode())
    out = tmp_path / "bundle"
    argv = ["release", "--out", str(out), "--no-figures", str(ratings["lab1"]), str(ratings["lab2"])]
    assert cli.main([*argv, "--servers", "lab1,lab2"]) == 0
    assert f"Flagged: Prolific ID {RETURNING_PID} came to 2 servers" in capsys.readouterr().err
    assert pd.read_parquet(out / "data" / "ratings.parquet")["annotator"].nunique() == 4
    with pytest.raises(SystemExit) as refused:
        cli.main([*argv[:2], str(tmp_path / "other"), *argv[3:], "--servers", "lab1"])
    assert refused.value.code == 2 and "--servers names 1 server but 2 CSV files" in capsys.readouterr().err
