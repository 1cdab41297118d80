"""The parts of publishing (docs/publishing.md) on small hand-made inputs: paper tables escape what LaTeX would read,
the release refuses what it must not publish, pseudonyms are keyed, free text is masked, types are the data's."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys

import pandas as pd
import pytest

from backend.core import paper_tables, release
from backend.core.figures import FigureSpec, inline_svg, write_figures
from backend.dond import figures as dond_figures
from tests.support import PROJECT_ROOT

KEY = b"0123456789abcdef-key"


def _dond_row(model: str) -> dict:
    return {
        "mode": "semi",
        "language": "en",
        "model": model,
        "games": 4,
        "aborted_rate": 0.25,
        "success_rate": 0.5,
        "lose_rate": 0.25,
        "pareto_optimal_rate": 0.25,
        "main_score": 40.0,
        "main_score_ci": [20.0, 60.0],
        "main_score_debiased": 41.0,
        "main_score_debiased_ci": [21.0, None],
    }


def test_latex_tables_escape_model_names_and_keep_intervals_and_counts():
    (table,) = dond_figures.report_tables([_dond_row("org/gpt_4o & 50% {x} #1 ~$^\\")])
    latex = paper_tables.to_latex(table)
    row = next(line for line in latex.splitlines() if line.startswith("org/"))
    assert row.startswith(r"org/gpt\_4o \& 50\% \{x\} \#1 \textasciitilde{}\$\textasciicircum{}\textbackslash{} & ")
    assert "& 4 & 75.0 & 40.0 [20.0, 60.0] & 41.0 [21.0, –] &" in row  # games, % played, the CIs
    markdown = paper_tables.to_markdown(dond_figures.report_tables([_dond_row("a|b")])[0])
    assert r"| a\|b |" in markdown


def test_figure_files_are_svg_and_png_and_names_must_differ(tmp_path):
    spec = FigureSpec("x", "X", {}, lambda figure, data: figure.subplots().bar(["a"], [1.0]))
    written = write_figures([spec], tmp_path)
    assert [path.name for path in written] == ["x.svg", "x.png"]
    assert written[1].read_bytes().startswith(b"\x89PNG")
    assert write_figures([spec], tmp_path / "again")[0].read_bytes() == written[0].read_bytes()  # reproducible
    with pytest.raises(ValueError, match="share a file name"):
        write_figures([spec, spec], tmp_path)


def test_labels_from_the_data_are_no_markup_on_a_page():
    label = "--><script>alert(1)</script><!--"
    spec = FigureSpec("x", "X", {}, lambda figure, data: figure.subplots().bar([label], [1.0]))
    svg = inline_svg(spec)
    assert "<script" not in svg and "alert" not in svg


def test_pseudonyms_are_keyed_hmac_and_the_key_is_required():
    expected = hmac.new(KEY, b"participant:abcd1234", hashlib.sha256).hexdigest()[:16]
    assert release.pseudonym("abcd1234", kind="participant", key=KEY) == "P-" + expected
    assert release.pseudonym("abcd1234", kind="participant", key=b"another-key-0000") != "P-" + expected
    with pytest.raises(ValueError, match="RELEASE_PSEUDONYM_KEY"):
        release.key_from({})
    with pytest.raises(ValueError, match="at least 16"):
        release.key_from({"RELEASE_PSEUDONYM_KEY": "short"})


def _export(tmp_path, name, rows):
    path = tmp_path / name
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_identifiers_are_replaced_everywhere_and_free_text_masked_or_dropped(tmp_path):
    pid = "5f1a2b3c4d5e6f7a8b9c0d1e"
    rows = [
        {
            "respondent_kind": "person",
            "respondent_id": "abcd1234",
            "participant_code": "abcd1234",
            "prolific_pid": pid,
            "session_code": "sess0001",
            "item_id": "abcd1234-item",
            "bias": "halo",
            "version": "control",
            "pro_selected": "2",
            "confidence": "0.5",
            "raw_reply": f"mail me at x@y.org, {pid}, +49 30 1234567",
            "is_test": "",
        },
        {**{"respondent_kind": "person", "respondent_id": "t", "participant_code": "t"}, "is_test": "1"},
    ]
    path = _export(tmp_path, "bias.csv", rows)
    tables = release.build_tables([path], key=KEY, free_text="mask")
    frame = tables["bias_answers"].frame
    assert len(frame) == 1 and tables["bias_answers"].dropped_test_rows == 1
    person = release.pseudonym("abcd1234", kind="participant", key=KEY)
    assert frame.loc[0, "participant_code"] == frame.loc[0, "respondent_id"] == person
    assert frame.loc[0, "item_id"] == f"{person}-item"  # inside another cell too
    assert (
        frame.loc[0, "raw_reply"] == f"mail me at [email], {release.pseudonym(pid, kind='prolific', key=KEY)}, [phone]"
    )
    assert str(frame["pro_selected"].dtype) == "Int64" and str(frame["confidence"].dtype) == "float64"
    assert "is_test" not in frame
    dropped = release.build_tables([path], key=KEY, free_text="drop")["bias_answers"].frame
    assert "raw_reply" not in dropped


def test_the_release_refuses_other_files_and_a_used_folder(tmp_path):
    log = _export(tmp_path, "assignments.csv", [{"episode_id": "e", "annotator": "a", "status": "done"}])
    env = {"RELEASE_PSEUDONYM_KEY": KEY.decode(), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "backend", "release", "--out", str(tmp_path / "out"), str(log)],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "no export the release publishes" in done.stderr
    used = tmp_path / "used"
    used.mkdir()
    (used / "old.txt").write_text("x")
    games = _export(
        tmp_path,
        "b.csv",
        [{"respondent_kind": "model", "item_id": "i", "bias": "halo", "version": "v", "pro_selected": "1"}],
    )
    done = subprocess.run(
        [sys.executable, "-m", "backend", "release", "--out", str(used), str(games)],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "not empty" in done.stderr
    assert json.dumps(sorted(p.name for p in used.iterdir())) == '["old.txt"]'


def test_the_confusion_figure_has_people_and_every_model_judge_with_kappa():
    from backend.core.figures import render
    from backend.reasoning import figures as reasoning_figures

    cells = {"TP": 3, "FP": 1, "FN": 2, "TN": 4}
    data = {
        "rule": "unanimity",
        "groups": [{"model": "m", "game": "pd", "kappa_orig": 0.5, **cells}],
        "model_judges": [{"judge": "model:j", "game": "pd", "kappa_people": None, **dict(cells, TP=7)}],
    }
    (spec,) = reasoning_figures.report_figures(data)
    titles = [ax.get_title() for ax in render(spec).axes if ax.get_visible()]
    assert titles == ["people: m / pd\nκ = 0.50 (logs)", "judge model:j / pd\nκ = – (logs)"]
    texts = [text.get_text() for ax in render(spec).axes for text in ax.texts]
    assert texts[:4] == ["TP\n3", "FN\n2", "FP\n1", "TN\n4"] and texts[4] == "TP\n7"


def test_a_file_that_is_no_csv_is_refused_with_the_reason(tmp_path):
    path = tmp_path / "ratings.episodes.json"
    path.write_bytes(b"\xff\xfe\x00[]")  # not UTF-8: the CSV reader raises UnicodeDecodeError
    with pytest.raises(ValueError, match="ratings.episodes.json cannot be read as a CSV export"):
        release.build_tables([path], key=KEY)


def test_the_card_takes_meanings_from_the_codebook_a_researchers_mapping_first_and_types_from_the_data(tmp_path):
    from backend.core import data_card

    rows = [
        {
            "respondent_kind": "model",
            "item_id": "i",
            "bias": "halo",
            "version": "control",
            "pro_selected": "1",
            "model": "m_1",
            "my_notes": "x",
        }
    ]
    tables = release.build_tables([_export(tmp_path, "b.csv", rows)], key=KEY)
    card = data_card.data_card(
        tables,
        pretty_name="Study",
        license="cc-by-4.0",
        descriptions={"bias": "which bias the item tests", ("bias_answers", "version"): "control or treatment"},
    )
    assert "| `bias` | string |  | 1 | which bias the item tests |" in card
    assert "| `version` | string |  | 1 | control or treatment |" in card
    assert "| `pro_selected` | int64 | arguments | 1 | Confirmation tests: arguments for the stance chosen. |" in card
    assert "| `source_row` | int64 |  | 1 | The row's place among the data rows of that file (1 = first). |" in card
    assert "| `my_notes` | string |  | 1 | (not described yet) |" in card  # no definition anywhere
    assert 'license: "cc-by-4.0"' in card and 'size_categories:\n  - "n<1K"' in card
    assert "Models: 1 (m_1)." in card and "People: 0 " in card
    assert 'annotations_creators:\n  - "machine-generated"' in card


def test_an_input_named_after_its_session_keeps_no_code_in_the_release(tmp_path):
    """The admin report's downloads are named after the session code (``..._<code>.csv``): the name given as a row's
    ``source_file`` and on the card is pseudonymised like every cell."""
    row = dict(respondent_kind="person", respondent_id="abcd1234", participant_code="abcd1234", prolific_pid="")
    row.update(session_code="sess0001", item_id="i1", bias="halo", version="control", pro_selected="2")
    rows = [dict(row, confidence="0.5", raw_reply="", is_test="")]
    path = _export(tmp_path, "bias_tests_custom_export_sess0001.csv", rows)
    table = release.build_tables([path], key=KEY, free_text="mask")["bias_answers"]
    [session] = set(table.frame["session_code"])
    assert session != "sess0001" and set(table.frame["source_file"]) == {f"bias_tests_custom_export_{session}.csv"}
    assert "sess0001" not in " ".join(table.sources)


def test_identifier_columns_are_found_whatever_their_case_and_error_messages_are_free_text(tmp_path):
    row = {
        "respondent_kind": "person",
        "item_id": "i1",
        "bias": "halo",
        "version": "control",
        "pro_selected": "2",
        "participant_CODE": "wxyz9876",
        "Prolific_PID": "my-prolific-name",  # a researcher's renamed column, a value no pattern would mask
        "error": "model quoted a.b@uni.de",
        "parse_error": "could not read the reply of +49 30 1234567",
    }
    tables = release.build_tables([_export(tmp_path, "bias.csv", [row])], key=KEY, free_text="mask")
    frame = tables["bias_answers"].frame
    assert frame.loc[0, "participant_CODE"] == release.pseudonym("wxyz9876", kind="participant", key=KEY)
    assert frame.loc[0, "Prolific_PID"] == release.pseudonym("my-prolific-name", kind="prolific", key=KEY)
    assert frame.loc[0, "error"] == "model quoted [email]"
    assert frame.loc[0, "parse_error"] == "could not read the reply of [phone]"
    dropped = release.build_tables([_export(tmp_path, "bias.csv", [row])], key=KEY, free_text="drop")
    assert {"error", "parse_error"}.isdisjoint(dropped["bias_answers"].frame.columns)


def test_no_column_of_a_release_of_the_projects_own_exports_is_left_undescribed(tmp_path):
    """Every export the release publishes (one row under the codebook's own header) comes out with each column's
    meaning on the card: the codebook's, or the release's for what it adds and changes."""
    from backend.codebook import EXPORTS
    from backend.core import data_card

    paths, kinds = [], set()
    for (app, function), export in EXPORTS.items():
        kind = release.record_kind(export.names())
        assert ((app, function) in release.KIND_EXPORTS.get(kind, ())) == (kind is not None), (app, function)
        if kind is not None:
            kinds.add(kind)
            row = {name: "0" if name == "is_test" else f"{name}-value" for name in export.names()}
            paths.append(_export(tmp_path, f"{app}.{function}.csv", [row]))
    tables = release.build_tables(paths, key=KEY)
    assert set(tables) == kinds == {kind for kind, exports in release.KIND_EXPORTS.items() if exports}
    card = data_card.data_card(tables, pretty_name="Study", license="cc-by-4.0")
    codebook = card.split("## Codebook", 1)[1]
    rows = [line for line in codebook.splitlines() if line.startswith("| `")]
    assert len(rows) == sum(len(table.frame.columns) for table in tables.values())
    assert [row for row in rows if data_card.NOT_DESCRIBED in row] == []
    assert "| `rating` | string | scale points | 1 | The annotator's rating, between scale_min and scale_max. |" in rows
    assert any(row.startswith("| `participant_code` |") and "keyed pseudonym (P-" in row for row in rows)
    assert any(row.startswith("| `text` |") and "(free text: kept, with e-mail addresses" in row for row in rows)
