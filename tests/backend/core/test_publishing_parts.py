"""The parts of publishing (docs/publishing.md) on small hand-made inputs: paper tables escape what LaTeX would read,
the release refuses what it must not publish, pseudonyms are keyed, free text is masked, types are the data's."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from backend.codebook import release_columns
from backend.core import paper_tables, release
from backend.core.figures import FigureSpec, inline_svg, write_figures
from backend.dond import figures as dond_figures
from harness import PROJECT_ROOT

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


def _bars(figure, data):
    figure.subplots().bar(data["labels"], [1.0] * len(data["labels"]))


@pytest.mark.parametrize("label", ["Split $10 of $100", r"gpt $\frac$ mini", "a_b $x^$"])
def test_a_dollar_in_a_label_from_the_data_is_drawn_as_written_not_as_math(label):
    """A game, model or dimension name with two ``$`` (a researcher's file, a model name) is text, not matplotlib's
    mathtext: it neither fails the admin report's figures (``\\frac`` without arguments, ``^`` without a base) nor
    loses its dollar signs (the SVG defines the font's glyph of ``$``, named by its index in the font)."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    font = FT2Font(font_manager.findfont("DejaVu Sans"))
    dollar = f'id="DejaVuSans-{font.get_char_index(ord("$")):x}"'
    assert dollar not in inline_svg(FigureSpec("dollars", "Dollars", {"labels": ["Split 10 of 100", "b"]}, _bars))
    assert dollar in inline_svg(FigureSpec("dollars", "Dollars", {"labels": [label, "b"]}, _bars))


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
        codebook=release_columns,
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
    card = data_card.data_card(tables, pretty_name="Study", license="cc-by-4.0", codebook=release_columns)
    codebook = card.split("## Codebook", 1)[1]
    rows = [line for line in codebook.splitlines() if line.startswith("| `")]
    assert len(rows) == sum(len(table.frame.columns) for table in tables.values())
    assert [row for row in rows if data_card.NOT_DESCRIBED in row] == []
    assert "| `rating` | string | scale points | 1 | The annotator's rating, between scale_min and scale_max. |" in rows
    assert any(row.startswith("| `participant_code` |") and "keyed pseudonym (P-" in row for row in rows)
    assert any(row.startswith("| `text` |") and "(free text: kept, with e-mail addresses" in row for row in rows)


# --- issue 35: the release's manifest, grouped IDs, escaping in every format, the Pareto default, the card's models ---

PID = "5f3c2a1b9d8e7c6b5a4f3e2d"
GROUPED_PIDS = [
    "5f3c 2a1b 9d8e 7c6b 5a4f 3e2d",  # in groups of four
    "5F3C-2A1B-9D8E-7C6B-5A4F-3E2D",  # dashes, upper case
    "5f3c.2a1b.9d8e.7c6b.5a4f.3e2d",  # dots
    "5f3C 2A1b-9d8E.7c6b 5A4f 3e2D",  # mixed case and separators
    "5f3 c2a1b9 d8e7c6b5a 4f3e 2d",  # parted anywhere
    "5f3c2a1b9d8e\n7c6b5a4f3e2d",  # split across two lines
    "5f3c - 2a1b - 9d8e - 7c6b - 5a4f - 3e2d",  # spaced dashes
    "5f_3c_2a_1b_9d_8e_7c_6b_5a_4f_3e_2d",  # underscores
]


@pytest.mark.parametrize("typed", GROUPED_PIDS)
def test_a_prolific_id_typed_in_groups_is_masked_in_free_text(tmp_path, typed):
    row = dict(respondent_kind="person", item_id="i1", bias="halo", version="control", pro_selected="2")
    row["raw_reply"] = f"My Prolific ID is {typed}, please pay me."
    tables = release.build_tables([_export(tmp_path, "bias.csv", [row])], key=KEY, free_text="mask")
    assert tables["bias_answers"].frame.loc[0, "raw_reply"] == "My Prolific ID is [id], please pay me."


def test_grouped_masking_leaves_numbers_words_hashes_and_pseudonyms_alone():
    kept = [
        "ratings 1 2 3 4 5 6 7 8 9 1 2 3 4 5 6 7 8 9 1 2 3 4 5 6 7",  # digits only: numbers
        "a bad cafe, a dead beef, a faded bead and a decaf face",  # letters only: words
        "commit 0123456789abcdef0123456789abcdef01234567",  # a 40-digit hash is no 24-digit ID
        "P-805fc03c53fdc587 X-0a1b2c3d4e5f6a7b",  # the release's own pseudonyms
        "costs 3.50, 4.25 and 1.75 over 2024-05-01",
        "P-805fc03c53fdc587, X-0a1b2c3d4e5f6a7b / S-1234567890abcdef: Q-fedcba9876543210 | T-00aa11bb22cc33dd",
        "commit\u200b0123456789abcdef0123456789abcdef01234567, then 1, 2",  # still 40 digits through a zero-width
        "costs 3.50, 4.25, 1.75, 2.00, 3.25, 4.50, 2.75, 3.10 each",  # numbers parted by commas, then a word
        "I offer 1 book, 2 hats and 3 balls \u2013 you get 2 books, 1 hat, 0 balls: deal?",
    ]
    assert [text for text in kept if "[id]" in release.mask_text(text)] == []  # (a phone mask may apply)
    assert release.mask_text(f"id {PID[:12]} {PID[12:]}.") == "id [id]."


# --- red-team F3: an ID typed with any separator, glued to a word, or through a DoND chat into the model's messages ---

GROUPS = [PID[at : at + 4] for at in range(0, 24, 4)]
SEPARATED_PIDS = {
    "en dash": "\u2013".join(GROUPS),
    "em dash": "\u2014".join(GROUPS),
    "spaced en dash": " \u2013 ".join(GROUPS),
    "hyphen and minus": "\u2010".join(GROUPS[:3]) + "\u2212" + "\u2212".join(GROUPS[3:]),
    "full-width hyphen": "\uff0d".join(GROUPS),
    "commas": ", ".join(GROUPS),
    "slashes": "/".join(PID[at : at + 6] for at in range(0, 24, 6)),
    "colons": ":".join(GROUPS),
    "pipes": " | ".join(GROUPS),
    "plus signs": "+".join(GROUPS),
    "zero-width space": "\u200b".join(GROUPS),
    "zero-width non-joiner": "\u200c".join(GROUPS),
    "zero-width joiner": "\u200d".join(GROUPS),
    "word joiner": "\u2060".join(GROUPS),
    "byte order mark": "\ufeff".join(GROUPS),
    "soft hyphens": "\u00ad".join(GROUPS),
    "line break and indentation": "\n        ".join(GROUPS[:3]) + " " + " ".join(GROUPS[3:]),
    "no-break spaces": "\u00a0".join(GROUPS),
    "full-width digits": "".join(chr(ord(c) + 0xFEE0) for c in PID),
}


@pytest.mark.parametrize("typed", SEPARATED_PIDS.values(), ids=SEPARATED_PIDS.keys())
def test_a_prolific_id_typed_with_any_separator_is_masked_in_free_text(tmp_path, typed):
    row = dict(respondent_kind="person", item_id="i1", bias="halo", version="control", pro_selected="2")
    row["raw_reply"] = f"My Prolific ID is {typed}, please pay me."
    tables = release.build_tables([_export(tmp_path, "bias.csv", [row])], key=KEY, free_text="mask")
    assert tables["bias_answers"].frame.loc[0, "raw_reply"] == "My Prolific ID is [id], please pay me."


@pytest.mark.parametrize(
    "typed, masked",
    [
        (f"myid{PID}", "[id]"),  # the glued "d" is a hex digit: a run of 25
        (f"ID{PID.upper()}thanks", "[id]"),
        (f"pid:\\n{PID}", "pid:\\n[id]"),  # an export's escaped line break ("\n": backslash, n) before it
        ("P-" + " ".join(GROUPS), "P-[id]"),  # a P- before it, but no release pseudonym (P- and 16 hex digits)
        ("sha1 0123456789abcdef0123456789abcdef01234567", "sha1 0123456789abcdef0123456789abcdef01234567"),
        ("x" + "1" * 24, "x" + "1" * 24),  # digits alone: a number
    ],
)
def test_a_prolific_id_glued_to_a_word_is_masked_and_longer_hashes_stay(typed, masked):
    assert release.mask_text(f"see {typed} here") == f"see {masked} here"


def test_an_id_typed_in_a_dond_chat_leaves_neither_the_text_nor_the_models_messages(tmp_path):
    """/tmp/rt/rel.py: a person types their own Prolific ID into the DoND chat in groups; the release's events.jsonl
    holds it in ``text`` and, through the model's prompt, in ``llm_messages``."""
    from backend.core.release_cli import make_release
    from backend.dond.export import event_row

    said = [
        "my id is " + "\u2013".join(GROUPS),
        "or " + ", ".join(GROUPS),
        "or " + "/".join(PID[at : at + 6] for at in range(0, 24, 6)),
        "my ID:\n      " + "\n      ".join(GROUPS),
        "id\u200b" + "\u200b".join(GROUPS),
    ]
    rows, history = [], [{"role": "system", "content": "Bargain.\n\nNever say a number twice."}]
    for seq, text in enumerate(said):
        history.append({"role": "user", "content": text})
        event = dict(kind="message", role="A", actor="human", text=text, created_at=seq)
        rows.append(event_row(event, session_code="sess0001", game_id="g1", seq=2 * seq))
        call = dict(kind="llm_call", role="B", actor="llm", llm_messages=json.dumps(history, ensure_ascii=False))
        rows.append(
            event_row(
                dict(call, llm_reply="I read it.", created_at=seq),
                session_code="sess0001",
                game_id="g1",
                seq=2 * seq + 1,
            )
        )
        history.append({"role": "assistant", "content": "I read it."})
    path = _export(tmp_path, "dond_custom_export_dond_events_sess0001.csv", rows)
    out = tmp_path / "bundle"
    make_release([path], out, key=KEY, argv=["release"], figures=False)
    released = (out / "data" / "events.jsonl").read_text(encoding="utf-8")
    frame = pd.read_json(out / "data" / "events.jsonl", lines=True)
    assert list(frame["text"].dropna()) == ["my id is [id]", "or [id]", "or [id]", "my ID:\\n      [id]", "[id]"]
    assert released.count("[id]") == 5 + (1 + 2 + 3 + 4 + 5)  # each message once in text, then in every later prompt
    for group in GROUPS[1:] + [PID[6:12]]:
        assert group not in released


def _release_bundle(tmp_path, *, servers=None, name="Study of sess0001"):
    from backend.core.release_cli import make_release

    exports = tmp_path / "home" / "alice" / "private-exports"
    exports.mkdir(parents=True)
    row = dict(respondent_kind="person", respondent_id="abcd1234", participant_code="abcd1234", prolific_pid=PID)
    row.update(session_code="sess0001", item_id="i1", bias="halo", version="control", pro_selected="2")
    path = _export(exports, "bias_tests_custom_export_sess0001.csv", [dict(row, raw_reply="fine", is_test="")])
    out = tmp_path / "home" / "alice" / "bundle"
    argv = ["release", "--out", str(out), "--name", name, str(path)]
    if servers:
        argv += ["--servers", ",".join(servers)]
    written = make_release([path], out, key=KEY, argv=argv, name=name, figures=False, servers=servers)
    return out, path, written


@pytest.mark.parametrize("servers", [None, ["lab1"]], ids=["one server", "several servers"])
def test_the_release_manifest_names_no_folder_of_the_machine_and_no_session_code(tmp_path, servers):
    out, path, written = _release_bundle(tmp_path, servers=servers)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    session = release.pseudonym("lab1:sess0001" if servers else "sess0001", kind="session", key=KEY)
    assert [entry["path"] for entry in manifest["inputs"]] == [f"bias_tests_custom_export_{session}.csv"]
    assert manifest["inputs"][0]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert manifest["options"]["name"] == f"Study of {session}"
    assert f"--out bundle --name 'Study of {session}' bias_tests_custom_export_{session}.csv" in manifest["command"]
    for file in written:  # nowhere in the bundle: the machine's folders, the session code
        text = file.read_bytes().decode("utf-8", "replace")
        assert "sess0001" not in text and "alice" not in text and str(tmp_path) not in text, file.name


# --- red-team F10: a report's manifests, a researcher's codebook meanings ---


def _games_export(folder, code="sess0001"):
    from backend.dond.export import DOND_GAMES_COLUMNS

    row = dict.fromkeys(DOND_GAMES_COLUMNS, "")
    row.update(session_code=code, game_id=f"{code}-g1", participant_code="abcd1234", outcome="unfinished")
    folder.mkdir(parents=True, exist_ok=True)
    return _export(folder, f"dond_custom_export_dond_games_{code}.csv", [dict(row, mode="semi", model="scripted")])


@pytest.mark.parametrize("servers", [None, "lab1"], ids=["one server", "several servers"])
@pytest.mark.parametrize("keyed", [True, False], ids=["release key", "no key"])
def test_the_report_manifests_name_no_folder_of_the_machine_and_no_session_code(tmp_path, monkeypatch, servers, keyed):
    """/tmp/rt: ``report --latex D --markdown D --manifest F --session CODE file.csv`` wrote the machine's paths and
    the session code into three manifests."""
    from backend.__main__ import main

    home = tmp_path / "home" / "alice"
    path = _games_export(home / "private-exports")
    monkeypatch.delenv("RELEASE_PSEUDONYM_KEY", raising=False)
    if keyed:
        monkeypatch.setenv("RELEASE_PSEUDONYM_KEY", KEY.decode())
    session = "lab1:sess0001" if servers else "sess0001"
    argv = ["report", "--latex", str(home / "tex"), "--markdown", str(home / "md"), "--manifest", str(home / "m.json")]
    argv += ["--session", session, str(path)] + (["--servers", servers] if servers else [])
    assert main(argv) == 0
    manifests = [home / "m.json", home / "tex" / "manifest.json", home / "md" / "manifest.json"]
    for manifest in manifests:
        text = manifest.read_text(encoding="utf-8")
        assert "sess0001" not in text and "alice" not in text and str(tmp_path) not in text, manifest
        record = json.loads(text)
        [code] = record["options"]["session"]
        assert re.fullmatch(r"S-[0-9a-f]{16}", code)
        if keyed:  # the release's pseudonym of that session
            assert code == release.pseudonym(session, kind="session", key=KEY)
        assert [entry["path"] for entry in record["inputs"]] == [f"dond_custom_export_dond_games_{code}.csv"]
        assert record["inputs"][0]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert (record["options"]["latex"], record["options"]["markdown"]) == ("tex", "md")
        assert f"--session {code} dond_custom_export_dond_games_{code}.csv" in record["command"]
        assert ("RELEASE_PSEUDONYM_KEY" in record["options"]["pseudonyms"]) and (
            record["options"]["pseudonyms"].startswith("keyed with") == keyed
        )


def test_a_researchers_codebook_meanings_name_no_session_code_on_the_card(tmp_path):
    """/tmp/rt/cb.json: ``release --codebook`` put "see /home/alice/notes fihlp1iq" onto README.md as written."""
    from backend.core.release_cli import make_release

    path = _games_export(tmp_path / "exports", code="fihlp1iq")
    descriptions = {"outcome": "see /home/alice/notes fihlp1iq", ("games", "mode"): "fihlp1iq's mode"}
    out = tmp_path / "bundle"
    make_release([path], out, key=KEY, argv=["release"], descriptions=descriptions, figures=False)
    card = (out / "README.md").read_text(encoding="utf-8")
    session = release.pseudonym("fihlp1iq", kind="session", key=KEY)
    assert "fihlp1iq" not in card
    assert f"| see /home/alice/notes {session} |" in card and f"| {session}'s mode |" in card


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)(?:\\\\)*\|", line))


HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "two\nlines | and a pipe",
    "blank\n\nline",
    "**bold** [link](javascript:alert(1)) `code` ~~gone~~ &lt;b&gt;",
    "[0.5] first & 50% {x} #1 ~$^\\ *star",
]


def test_markdown_tables_escape_html_newlines_and_pipes_in_every_cell():
    table = paper_tables.Table("t", "Caption <b>with\nbreak</b>", ["model", "score"], [[c, c] for c in HOSTILE])
    markdown = paper_tables.to_markdown(table)
    lines = markdown.splitlines()
    assert len(lines) == 2 + len(HOSTILE) + 2  # header, rule, one line per row, blank, caption
    assert all(_unescaped_pipes(line) == 3 for line in lines[: 2 + len(HOSTILE)])
    assert "<" not in markdown and ">" not in markdown
    assert lines[2] == r"| &lt;script&gt;alert(1)&lt;/script&gt; | &lt;script&gt;alert(1)&lt;/script&gt; |"
    assert lines[6].startswith(
        r"| \*\*bold\*\* \[link\](javascript:alert(1)) \`code\` \~\~gone\~\~ &amp;lt;b&amp;gt; |"
    )
    assert lines[-1] == "Caption &lt;b&gt;with break&lt;/b&gt;"


def test_markdown_escapes_dollar_signs_that_github_renders_as_math_in_tables_and_the_data_card(tmp_path):
    """Red-team F11: ``$x$`` in a cell is typeset as math on GitHub (the model name of /tmp/rt/rel.py)."""
    from backend.core import data_card

    unescaped = re.compile(r"(?<!\\)(?:\\\\)*\$")
    math = "evil $x$ costs $5 and $$y$$"
    table = paper_tables.Table("t", f"Caption {math}", ["model", "score"], [[math, "1"]])
    markdown = paper_tables.to_markdown(table)
    assert r"| evil \$x\$ costs \$5 and \$\$y\$\$ | 1 |" in markdown
    assert not unescaped.search(markdown), markdown
    base = dict(respondent_kind="model", item_id="i", bias="halo", version="control", pro_selected="1")
    tables = release.build_tables([_export(tmp_path, "b$1$.csv", [dict(base, model=math, **{"$n$": "1"})])], key=KEY)
    card = data_card.data_card(tables, pretty_name=math, license="other", descriptions={"bias": math})
    body = card.split("\n---\n", 1)[1]
    assert not [line for line in body.splitlines() if unescaped.search(line)]
    assert "\n# evil \\$x\\$ costs \\$5 and \\$\\$y\\$\\$\n" in body


def test_latex_tables_escape_every_cell_and_compile(tmp_path):
    table = paper_tables.Table("t", "Caption\n\n50%", ["model", "score"], [[c, "1.0 [0.5, 1.5]"] for c in HOSTILE])
    latex = paper_tables.to_latex(table)
    lines = latex.splitlines()
    assert len(lines) == 11 + len(HOSTILE)  # one line per row: no line break of a cell reached the file
    rows = lines[6 : 6 + len(HOSTILE)]
    assert all(row.endswith(r" & 1.0 [0.5, 1.5] \\") for row in rows)
    assert rows[0].startswith(r"\textless{}script\textgreater{}alert(1)\textless{}/script\textgreater{} &")
    assert rows[2].startswith(r"two lines \textbar{} and a pipe &") and rows[3].startswith("blank  line &")
    assert rows[5].startswith(
        r"{}[0.5] first \& 50\% \{x\} \#1 \textasciitilde{}\$\textasciicircum{}\textbackslash{} *star &"
    )
    assert lines[-3] == r"\caption{Caption  50\%}"
    engine = shutil.which("pdflatex")
    if engine is None:
        return  # the strict output above is the check where no TeX engine is installed
    document = "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n\\begin{document}\n"
    (tmp_path / "t.tex").write_text(document + latex + "\\end{document}\n", encoding="utf-8")
    done = subprocess.run(
        [engine, "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 0


def test_the_data_card_escapes_what_researchers_and_models_named_and_counts_no_human_as_a_model(tmp_path):
    from backend.core import data_card

    base = dict(respondent_kind="model", item_id="i", bias="halo", pro_selected="1")
    rows = [dict(base, model=name, version=name, **{"note|x\ny": name}) for name in HOSTILE]
    rows += [dict(base, model="human", version="control", **{"note|x\ny": ""})]
    tables = release.build_tables([_export(tmp_path, "b<i>.csv", rows)], key=KEY)
    card = data_card.data_card(
        tables,
        pretty_name="<script>x</script>\n# Injected",
        license="cc-by-4.0",
        descriptions={"bias": "which <b>bias</b>\n| the | item tests"},
        figure_notes=["dond: no figures (<img src=x onerror=alert(1)>)"],
    )
    body = card.split("\n---\n", 1)[1]
    assert "<" not in body and ">" not in body.replace("->", "")
    assert "\n# &lt;script&gt;x&lt;/script&gt; \\# Injected\n" in body
    assert f"Models: {len(HOSTILE)} (" in body and "human" not in body.split("Models:")[1].split("\n")[0]
    codebook = [line for line in body.split("## Codebook", 1)[1].splitlines() if line.startswith("| ")]
    assert all(_unescaped_pipes(line) == 6 for line in codebook), codebook
    assert r"| note\|x y | string |  | 6 | (not described yet) |" in codebook
    assert "| `bias` | string |  | 7 | which &lt;b&gt;bias&lt;/b&gt; \\| the \\| item tests |" in codebook
    front = card.split("\n---\n", 1)[0]
    assert 'pretty_name: "<script>x</script>\\n# Injected"' in front  # YAML: a JSON string, the name as given


def test_the_default_pareto_figure_is_of_a_game_with_a_deal_never_an_aborted_one(tmp_path):
    from backend.core import publish

    games = ["game_id,outcome", "g1,aborted", "g2,unfinished", "g3,lose", "g4,success", "g5,success"]
    (tmp_path / "games.csv").write_text("\n".join(games) + "\n", encoding="utf-8")
    assert [row["game_id"] for row in publish.pareto_rows([tmp_path / "games.csv"], [])] == ["g4"]
    (tmp_path / "played.csv").write_text("game_id,outcome\ng1,aborted\ng3,lose\n", encoding="utf-8")
    assert [row["game_id"] for row in publish.pareto_rows([tmp_path / "played.csv"], [])] == ["g3"]
    (tmp_path / "aborted.csv").write_text("game_id,outcome\ng1,aborted\n", encoding="utf-8")
    assert publish.pareto_rows([tmp_path / "aborted.csv"], []) == []
    assert [row["game_id"] for row in publish.pareto_rows([tmp_path / "aborted.csv"], ["g1"])] == ["g1"]  # asked for


@pytest.mark.parametrize("module", ["backend.__main__", "backend.bias.runner", "backend.reasoning.judge"])
def test_help_begins_with_whole_sentences(module, capsys):
    import importlib

    with pytest.raises(SystemExit):
        importlib.import_module(module).main(["--help"])
    text = capsys.readouterr().out
    description = " ".join(text.split("\n\n")[1].split())  # after the usage lines
    assert description.endswith("."), description
    assert description.count("``") % 2 == 0 and not description.endswith(("and.", ",")), description
