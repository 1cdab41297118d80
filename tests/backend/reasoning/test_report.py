"""Protocol form rules and the aggregation of verdicts, checked against hand-computed figures."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from backend.__main__ import main as backend_main
from backend.reasoning.logs import Attempt, ReasoningLog
from backend.reasoning.protocol import (
    ERROR_TYPES,
    PROTOCOL_COLUMNS,
    join_hash_field,
    protocol_row,
    read_protocol_form,
    split_hash_field,
    verdict_errors,
)
from backend.reasoning.report import (
    check_scores,
    combine_rows,
    combine_verdicts,
    confusion_counts,
    error_type_counts,
    judged_kappa,
    looks_like,
    model_judge_scores,
    prepare_verdict_rows,
    read_verdict_rows,
    report,
    split_judges,
    summarise,
)

# Five logs, three judges. check = the automated check passed on attempt 0 (no "0#" block in failed_queries).
#   log  check  judges' orig_cor  unanimity  majority
#   a    yes    1 1 1             1 -> TP    1 -> TP
#   b    yes    1 1 0             0 -> FP    1 -> TP
#   c    no     1 1 1             1 -> FN    1 -> FN
#   d    no     0 0 1             0 -> TN    0 -> TN
#   e    no     0 0 0             0 -> TN    0 -> TN
CASES = {
    "m1_pd_p1_1_5_0_3_0_1.txt": ("pd", "", [1, 1, 1]),
    "m1_pd_p1_1_5_0_3_1_2.txt": ("pd", "1#higher(0, 1).", [1, 1, 0]),
    "m1_sh_p1_1_3_0_5_0_3.txt": ("sh", "0#higher(0, 1).", [1, 1, 1]),
    "m2_sh_p1_1_3_0_5_0_4.txt": ("sh", "0#lower(3, 1).:1#higher(1, 3).", [0, 0, 1]),
    "m2_hd_p1_0_5_1_3_0_5.txt": ("hd", "0#higher(0, 1).", [0, 0, 0]),
}


def write_forms(folder, *, separators=(";", ",", ";")) -> list:
    """One form per judge, in the mixed shapes of the released forms (separator, index column, 1.0, CRLF)."""
    paths = []
    for judge, separator in enumerate(separators):
        lines = [separator.join(("Unnamed: 0",) * (judge == 2) + PROTOCOL_COLUMNS)]
        for number, (file, (game, failed, verdicts)) in enumerate(CASES.items()):
            verdict = verdicts[judge]
            cor = f"{verdict}.0" if judge == 2 else str(verdict)
            err, sentence = ("pa#rga" if judge == 0 else " Pc", '"I get 5, so, yes."') if not verdict else ("", "")
            failed_cell = f'"{failed}"' if separator == "," else failed
            cells = [file, game, "2", "B", "R", cor, cor, err, sentence, "", "", failed_cell]
            lines.append(separator.join(([str(number)] if judge == 2 else []) + cells))
        path = folder / f"form_j{judge + 1}.csv"
        path.write_bytes(("\r\n" if judge == 1 else "\n").join(lines).encode() + b"\n")
        paths.append(path)
    return paths


def test_forms_with_mixed_separators_read_alike(tmp_path):
    forms = [read_protocol_form(path) for path in write_forms(tmp_path)]
    for form in forms:
        assert list(form.columns) == list(PROTOCOL_COLUMNS)
        assert form["file"].tolist() == list(CASES)
        assert form["attempts"].tolist() == [2] * 5
    assert [form["orig_cor"].tolist() for form in forms] == [
        list(v) for v in zip(*(c[2] for c in CASES.values()), strict=True)
    ]
    assert forms[1]["sentence"].iloc[0] == ""
    assert forms[0]["sentence"].iloc[4] == "I get 5, so, yes."
    assert forms[1]["failed_queries"].iloc[3] == "0#lower(3, 1).:1#higher(1, 3)."


def test_form_reader_rejects_bad_cells(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(";".join(PROTOCOL_COLUMNS) + "\nx.txt;pd;1;B;B;yes;1;;;;;\n")
    with pytest.raises(ValueError, match="bad.csv, data row 1: orig_cor must be 0 or 1, got 'yes'"):
        read_protocol_form(path)
    path.write_text("file;game\nx.txt;pd\n")
    with pytest.raises(ValueError, match="lacks the protocol column"):
        read_protocol_form(path)


def test_unanimity_confusion_matrix_and_scores(tmp_path):
    rows = read_verdict_rows(write_forms(tmp_path))
    combined = combine_rows(rows).set_index("file").loc[list(CASES)]
    assert combined["orig_cor"].tolist() == [1, 0, 1, 0, 0]
    assert combined["con_mat"].tolist() == ["TP", "FP", "FN", "TN", "TN"]
    assert combined["check_passed"].tolist() == [1, 1, 0, 0, 0]
    # log 4 failed on attempts 0 and 1 (its last): the final check failed too; log 2 failed only on attempt 1.
    assert combined["final_check_passed"].tolist() == [1, 0, 1, 0, 1]
    overall = summarise(rows)[0]
    assert (overall["model"], overall["game"], overall["logs"], overall["ratings"]) == ("all", "all", 5, 15)
    assert {cell: overall[cell] for cell in ("TP", "FP", "FN", "TN")} == {"TP": 1, "FP": 1, "FN": 1, "TN": 2}
    assert overall["accuracy"] == pytest.approx(3 / 5)
    assert overall["precision"] == pytest.approx(1 / 2)
    assert overall["recall"] == pytest.approx(1 / 2)
    assert overall["error_recall"] == pytest.approx(2 / 3)  # TN / (TN + FP)
    assert overall["error_precision"] == pytest.approx(2 / 3)  # TN / (TN + FN)
    # Fleiss on orig_cor, counts (n0, n1) = (0,3) (1,2) (0,3) (2,1) (3,0): P_i = 1, 1/3, 1, 1/3, 1 -> P_bar = 11/15;
    # p = (6/15, 9/15) -> P_e = 0.52; kappa = (11/15 - 0.52) / 0.48 = 4/9.
    assert overall["kappa_orig"] == pytest.approx(4 / 9)
    assert overall["correct_first"] == pytest.approx(2 / 5)
    assert overall["error_types"] == {"pa": 2, "rga": 2, "pc": 4, "u": 0}  # judge 1 wrote pa#rga, judges 2-3 " Pc"


def test_majority_rule(tmp_path):
    rows = read_verdict_rows(write_forms(tmp_path))
    overall = summarise(rows, rule="majority")[0]
    assert {cell: overall[cell] for cell in ("TP", "FP", "FN", "TN")} == {"TP": 2, "FP": 0, "FN": 1, "TN": 2}
    assert (overall["accuracy"], overall["precision"]) == (pytest.approx(4 / 5), 1.0)
    assert overall["recall"] == pytest.approx(2 / 3)


def test_groups_per_model_and_game(tmp_path):
    summary = summarise(read_verdict_rows(write_forms(tmp_path)))
    keys = [(group["model"], group["game"]) for group in summary]
    assert keys == [
        ("all", "all"),
        ("m1", "all"),
        ("m1", "pd"),
        ("m1", "sh"),
        ("m2", "all"),
        ("m2", "hd"),
        ("m2", "sh"),
    ]
    m1_pd = summary[2]
    assert (m1_pd["TP"], m1_pd["FP"], m1_pd["logs"], m1_pd["ratings"]) == (1, 1, 2, 6)
    assert m1_pd["recall"] == 1.0 and math.isnan(m1_pd["error_precision"])  # TN + FN = 0
    m2_hd = summary[5]
    assert m2_hd["TN"] == 1 and math.isnan(m2_hd["precision"]) and math.isnan(m2_hd["kappa_orig"])


def test_report_text_json_and_command_line(tmp_path, capsys):
    paths = write_forms(tmp_path)
    text = report(paths)
    assert "15 ratings of 5 logs; judges combined by unanimity" in text
    assert "0.600" in text and "0.444" in text
    data = json.loads(report(paths, as_json=True))
    assert data["rule"] == "unanimity" and data["groups"][0]["TP"] == 1
    assert data["groups"][5]["precision"] is None  # NaN becomes null
    assert backend_main(["report", *map(str, paths)]) == 0
    assert "judges combined by unanimity" in capsys.readouterr().out
    assert looks_like(["Unnamed: 0", *PROTOCOL_COLUMNS]) and not looks_like(PROTOCOL_COLUMNS[:-1])


def test_combine_verdicts_rules():
    assert combine_verdicts([1, 1, 1]) == 1 and combine_verdicts([1, 0, 1]) == 0
    assert combine_verdicts([1, 0, 1], rule="majority") == 1
    assert combine_verdicts([1, 0], rule="majority") == 0  # a tie is not a majority for "correct"
    assert combine_verdicts([1], rule="majority") == 1
    with pytest.raises(ValueError, match="rule"):
        combine_verdicts([1], rule="mean")
    with pytest.raises(ValueError, match="0 or 1"):
        combine_verdicts([1, 2])
    with pytest.raises(ValueError, match="at least one"):
        combine_verdicts([])


def test_confusion_counts_and_scores_by_hand():
    counts = confusion_counts([1, 1, 1, 0, 0, 0, 0], [1, 1, 0, 1, 0, 0, 0])
    assert counts == {"TP": 2, "FP": 1, "FN": 1, "TN": 3}
    scores = check_scores(counts)
    assert scores["accuracy"] == pytest.approx(5 / 7)
    assert scores["precision"] == pytest.approx(2 / 3)
    assert scores["recall"] == pytest.approx(2 / 3)
    assert scores["error_recall"] == pytest.approx(3 / 4)
    assert math.isnan(check_scores({"TP": 0, "FP": 0, "FN": 0, "TN": 0})["accuracy"])
    with pytest.raises(ValueError, match="same length"):
        confusion_counts([1], [1, 0])


def test_kappa_uses_the_logs_with_the_usual_number_of_judges():
    # Logs a-c have three judges, d only one and e four (say, an unfinished and a re-run session): a-c are used.
    rows = pd.DataFrame({"file": list("aaabbbcccdeeee"), "orig_cor": [1, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0]})
    assert judged_kappa(rows, "orig_cor") == pytest.approx(0.55)  # (n0, n1) = (0,3) (2,1) (3,0), see the doctest
    assert math.isnan(judged_kappa(rows[rows["file"] == "a"], "orig_cor"))  # all verdicts alike: P_e = 1
    assert math.isnan(judged_kappa(rows[rows["file"] == "d"], "orig_cor"))


def test_error_type_counts():
    assert error_type_counts(["pa#rga", "PA # u", float("nan"), None, "x"]) == {
        "pa": 2,
        "rga": 1,
        "pc": 0,
        "u": 1,
        "x": 1,
    }


# ---- the form's rules ----

TWO_ATTEMPTS = ReasoningLog(
    (Attempt(0, "I get 3. {B}", ("q1.", "q2."), ("q2.",), "fix"), Attempt(1, "I get 1. {R}", ("q3.",), ())),
    filename="m_pd_p1_1_5_0_3_0_1.txt",
    model="m",
    game="pd",
)


def test_protocol_row_fills_the_automatic_columns_in_order():
    row = protocol_row(
        TWO_ATTEMPTS, orig_cor=0, fin_cor=1, err_types=["pa", "rga"], sentences=["I get 3."], remarks="ok"
    )
    assert tuple(row) == PROTOCOL_COLUMNS
    assert row == {
        "file": "m_pd_p1_1_5_0_3_0_1.txt",
        "game": "pd",
        "attempts": 2,
        "orig_choice": "B",
        "final_choice": "R",
        "orig_cor": 0,
        "fin_cor": 1,
        "err_type": "pa#rga",
        "sentence": "I get 3.",
        "con_mat": "TN",
        "remarks": "ok",
        "failed_queries": "0#q2.",
    }
    assert protocol_row(TWO_ATTEMPTS, orig_cor=1, fin_cor=1)["con_mat"] == "FN"
    with pytest.raises(ValueError, match="needs at least one error type"):
        protocol_row(TWO_ATTEMPTS, orig_cor=0, fin_cor=0, sentences=["I get 3."])


@pytest.mark.parametrize(
    ("verdict", "fragment"),
    [
        (dict(orig_cor=0, fin_cor=0, err_types=[], sentences=["x"]), "at least one error type"),
        (dict(orig_cor=0, fin_cor=1, err_types=["pa"], sentences=[]), "at least one marked sentence"),
        (dict(orig_cor=1, fin_cor=0, err_types=["pc"], sentences=["  "]), "at least one marked sentence"),
        (dict(orig_cor=1, fin_cor=1, err_types=["pa"], sentences=[]), "has no error types"),
        (dict(orig_cor=1, fin_cor=1, err_types=[], sentences=["x"]), "has no faulty sentences"),
        (dict(orig_cor=0, fin_cor=0, err_types=["zz"], sentences=["x"]), "Unknown error type(s) 'zz'"),
        (dict(orig_cor=2, fin_cor=0, err_types=["pa"], sentences=["x"]), "orig_cor must be 0 or 1"),
        (dict(orig_cor=0, fin_cor=1, err_types=["pa"], sentences=["x"], n_attempts=1), "single attempt"),
    ],
)
def test_verdict_rules(verdict, fragment):
    verdict = {"n_attempts": 2, **verdict}
    problems = verdict_errors(**verdict)
    assert any(fragment in problem for problem in problems), problems


def test_valid_verdicts_pass():
    assert verdict_errors(orig_cor=1, fin_cor=1, n_attempts=1, err_types=[], sentences=[]) == []
    assert verdict_errors(orig_cor=0, fin_cor=0, n_attempts=1, err_types=list(ERROR_TYPES), sentences=["a"]) == []


def test_hash_fields():
    assert split_hash_field('"First."#"Second."') == ['"First."', '"Second."']
    assert join_hash_field(split_hash_field("pa# rga")) == "pa#rga"
    assert split_hash_field(float("nan")) == []
    with pytest.raises(ValueError, match="cannot contain '#'"):
        join_hash_field(["a#b"])


def test_model_judges_are_split_from_people_and_scored_beside_them(tmp_path):
    rows = read_verdict_rows(write_forms(tmp_path))
    assert set(rows["judge"]) == {""}  # forms without participant_code: every judge is a person
    model = rows[rows["source"] == "form_j1.csv"].assign(judge="model:m", orig_cor=[1, 1, 0, 0, 0])
    people, models = split_judges(pd.concat([rows, model], ignore_index=True))
    assert (len(people), len(models)) == (15, 5)
    # people by unanimity: 1 0 1 0 0 (see CASES); the model: 1 1 0 0 0 -> agrees on a, d, e.
    overall = model_judge_scores(people, models)[0]
    assert (overall["judge"], overall["game"], overall["logs"], overall["with_people"]) == ("model:m", "all", 5, 5)
    assert overall["agree_orig"] == pytest.approx(3 / 5)
    # check 1 1 0 0 0 against the model 1 1 0 0 0: all right; against people 1 0 1 0 0: 3 of 5
    assert (overall["TP"], overall["TN"], overall["accuracy"], overall["check_vs_people"]) == (2, 3, 1.0, 0.6)
    alone = model_judge_scores(people[:0], models)[0]  # no person judged these logs
    assert alone["with_people"] == 0 and math.isnan(alone["agree_orig"]) and math.isnan(alone["check_vs_people"])
    assert list(prepare_verdict_rows(rows.drop(columns="judge"))["judge"]) == [""] * 15
