"""``python -m backend report`` on every CSV the product serves: right figures, or a refusal that says what to pass.

The exports come from a real server (every ``custom_export*`` function of every app, found in the apps' source, and
oTree's own wide, per-app, page-time and chat exports), so a column added to an export later is met here too. The
social_eval session has gold episodes and text that the server neutralises for spreadsheets, as a field study has.
"""

from __future__ import annotations

import ast
import copy
import json
import subprocess
import sys

import pytest
import requests

from backend import __main__ as cli
from backend.core.csvio import read_csv_any
from backend.social.episodes import load_episodes
from harness import PROJECT_ROOT
from harness.participants import Annotator
from harness.servers import create_session, session_start_links
from tests.support.social import RUBRIC

APPS = {"dond": "dond_llm", "social_eval": "social_eval", "payoff_reasoning_eval": "payoff_reasoning_eval"}
APPS["bias_tests"] = "bias_tests"
# The exports the report computes from, and the module that does; every other export must be refused.
REPORTED = {
    ("dond", "custom_export_dond_games"): "backend.dond.report",
    ("social_eval", "custom_export_ratings_long"): "backend.social.report",
    ("social_eval", "custom_export_ratings_wide"): "backend.social.report",
    ("payoff_reasoning_eval", "custom_export"): "backend.reasoning.report",
    ("payoff_reasoning_eval", "custom_export_protocol_with_ids"): "backend.reasoning.report",
    ("bias_tests", "custom_export"): "backend.bias.report",
}
GROUP = '=HYPERLINK("http://x","group")'  # a researcher's episode group that a spreadsheet would run


def _custom_exports(app: str) -> list[str]:
    """The custom exports oTree offers for ``app``: every name its ``__init__`` binds at the top level (a def, an
    assignment or an import from a sibling module) that starts with ``custom_export``."""
    tree = ast.parse((PROJECT_ROOT / app / "__init__.py").read_text(encoding="utf-8"))
    bound = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            bound.append(node.name)
        elif isinstance(node, ast.Assign):
            bound += [target.id for target in node.targets if isinstance(target, ast.Name)]
        elif isinstance(node, ast.ImportFrom):
            bound += [alias.asname or alias.name for alias in node.names]
    return [name for name in bound if name.startswith("custom_export")]


def _episodes_json() -> str:
    samples = {
        episode.id: episode.as_dict() for episode in load_episodes(PROJECT_ROOT / "backend/social/data/episodes")
    }
    regular = [
        dict(copy.deepcopy(samples[name]), id=f"-{name}", group=GROUP)
        for name in ("sample-used-car", "sample-party-noise")
    ]
    gold = dict(copy.deepcopy(samples["gold-concert-tickets"]), group=GROUP)
    return json.dumps([*regular, gold])


def _form(choose) -> dict:
    form = {}
    for agent in (1, 2):
        for slot, dimension in enumerate(RUBRIC.dimensions, start=1):
            form[f"rating_{agent}_{slot}"] = choose(dimension)
            form[f"reason_{agent}_{slot}"] = "=1+1 is how I would put it, and more."
    return form


@pytest.fixture(scope="module")
def otree_server(own_otree_server):
    """A server of this module's own: the exports below hold every session of the server, no other module's."""
    return own_otree_server


@pytest.fixture(scope="module")
def exports(otree_server, tmp_path_factory):
    """Every export of the server as a file: {(app or "otree", name): path}."""
    folder = tmp_path_factory.mktemp("exports")
    session = create_session(
        otree_server.url,
        "social_eval",
        2,
        episodes="",
        episodes_json=_episodes_json(),
        annotators_per_episode=2,
        episodes_per_annotator=2,
        attention_checks=1,
    )
    choices = [lambda d: d.max, lambda d: d.min]  # the two annotators disagree
    for link, choose in zip(session_start_links(otree_server.url, session["code"]), choices, strict=True):
        annotator = Annotator(link).to_rating_page()
        while annotator.page == "Rate":
            annotator.submit(_form(choose))
        assert annotator.page == "Completion"
    for app, config in APPS.items():
        if app != "social_eval":
            create_session(otree_server.url, config, 2)

    files = {}

    def save(key, path, **params):
        response = requests.get(otree_server.url + path, params=params, timeout=120)
        assert response.status_code == 200, (key, response.text[:500])
        files[key] = folder / f"{key[0]}-{key[1]}.csv"
        files[key].write_bytes(response.content)

    for app in APPS:
        for function in _custom_exports(app):
            save((app, function), "/api/export_app_custom", app=app, function_name=function)
        save(("otree", f"export_app {app}"), "/api/export_app", app=app)
    save(("otree", "export_wide"), "/api/export_wide")
    save(("otree", "export_page_times"), "/api/export_page_times")
    save(("otree", "export_chat"), "/api/export_chat")
    return files


def _run(capsys, *paths, as_json=False) -> tuple[int, str, str]:
    arguments = ["report", *map(str, paths), *(["--json"] if as_json else [])]
    try:
        code = cli.main(arguments)
    except SystemExit as stop:
        code = stop.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_every_export_is_reported_or_refused_with_a_reason(exports, capsys):
    assert {key for key in exports if key[0] != "otree"} >= set(REPORTED)  # the apps still have these exports
    for key, path in exports.items():
        kind = cli.recognise(list(read_csv_any(path, nrows=0).columns))
        assert kind is not None, f"{key}: the report does not recognise this export"
        if key in REPORTED:
            assert kind.reporter == REPORTED[key], key
            continue
        assert kind.reporter is None, f"{key} would be reported by {kind.reporter}"
        code, out, err = _run(capsys, path)
        assert code == 2 and out == "", key
        assert f"{path} is {kind.name}, which the report does not read: " in err, (key, err)
        assert "pass " in err and "custom_export" in err, (key, err)


def test_oTree_exports_name_the_app_and_the_export_to_pass(exports, capsys):
    _, _, err = _run(capsys, exports[("otree", "export_app social_eval")])
    assert "oTree's per-app export of social_eval" in err and "custom_export_ratings_long" in err
    _, _, err = _run(capsys, exports[("otree", "export_wide")])
    # The wide export holds only the columns somebody filled (lab_server.outputs): the dond and payoff sessions here
    # were never started, so the refusal names the exports of the app that has data.
    assert "oTree's all-apps wide export" in err and "custom_export_ratings_long" in err
    assert "custom_export_dond_games" not in err
    _, _, err = _run(capsys, exports[("social_eval", "custom_export_assignments")])
    assert "social_eval custom_export_assignments" in err and "holds no ratings" in err


def test_the_wide_export_gives_the_long_exports_figures(exports, capsys):
    long_path = exports[("social_eval", "custom_export_ratings_long")]
    wide_path = exports[("social_eval", "custom_export_ratings_wide")]
    code, long_out, _ = _run(capsys, long_path, as_json=True)
    assert code == 0
    code, wide_out, _ = _run(capsys, wide_path, as_json=True)
    assert code == 0
    from_long, from_wide = json.loads(long_out), json.loads(wide_out)
    # Two annotators, each rating both regular episodes; the gold episode is counted apart.
    expected = dict(annotations=4, episodes=2, annotators=2, gold_annotations=2, gold_episodes=1)
    for data in (from_long, from_wide):
        assert {key: data[key] for key in expected} == expected
        assert data["attention"]["n_annotators"] == 2
    model_figures = {"n_model", "model_mean", "pearson", "spearman", "diff", "mae", "spread_rho"}
    model_figures |= {f"{key}_{end}" for key in ("pearson", "spearman", "diff", "mae") for end in ("low", "high")}
    # only the long export has model ratings (model_figures), and so the admission lines of model ratings

    def human(summary):
        return [{key: value for key, value in row.items() if key not in model_figures} for row in summary]

    assert human(from_wide["summary"]) == human(from_long["summary"])
    assert any(row["n_model"] for row in from_long["summary"])
    goal = next(r for r in from_wide["summary"] if r["dimension"] == "goal" and r["scope"] == "both")
    assert goal["n_ratings"] == 8 and goal["mean"] == 5.0 and goal["exact"] == 0.0  # 10 and 0 on every item

    code, text, _ = _run(capsys, wide_path)
    assert "4 annotations of 2 episodes by 2 annotators" in text
    assert "gold (attention) episodes apart: 2 annotations of 1 episodes" in text


def test_neutralised_cells_are_read_back_exactly(exports, capsys):
    wide_path = exports[("social_eval", "custom_export_ratings_wide")]
    raw = wide_path.read_text(encoding="utf-8-sig")
    assert "'" + GROUP.replace('"', '""') in raw and ",'-sample-used-car," in raw  # what the spreadsheet sees
    table = read_csv_any(wide_path, dtype=str, keep_default_na=False)
    assert set(table["episode_group"]) == {GROUP}
    assert set(table["episode_id"]) == {"-sample-used-car", "-sample-party-noise", "gold-concert-tickets"}
    assert set(table["goal_reasoning_1"]) == {"=1+1 is how I would put it, and more."}
    for path in (wide_path, exports[("social_eval", "custom_export_ratings_long")]):
        _, out, _ = _run(capsys, path, as_json=True)
        assert {row["group"] for row in json.loads(out)["summary"]} == {GROUP}


def test_files_of_different_exports_are_not_mixed(exports, capsys, tmp_path):
    long_path = exports[("social_eval", "custom_export_ratings_long")]
    wide_path = exports[("social_eval", "custom_export_ratings_wide")]
    code, out, err = _run(capsys, long_path, wide_path)
    assert code == 2 and out == ""
    assert (
        "are different exports" in err and "custom_export_ratings_long" in err and "custom_export_ratings_wide" in err
    )
    code, _, err = _run(capsys, long_path, long_path)
    assert code == 2 and "given twice" in err
    unknown = tmp_path / "notes.csv"
    unknown.write_text("name,score\nx,1\n", encoding="utf-8")
    code, _, err = _run(capsys, unknown)
    assert code == 2 and "matches no export of this product" in err
    latin = tmp_path / "latin.csv"
    latin.write_bytes("pk,prolific_id\nCaf\u00e9,1\n".encode("latin-1"))
    code, _, err = _run(capsys, latin)
    assert code == 2 and "is not UTF-8 text" in err


def test_the_command_line_exits_with_the_reason(exports):
    path = exports[("social_eval", "custom_export_qualified")]
    result = subprocess.run(
        [sys.executable, "-m", "backend", "report", str(path)], cwd=PROJECT_ROOT, capture_output=True, text=True
    )
    assert result.returncode == 2 and result.stdout == ""
    assert f"{path} is social_eval custom_export_qualified, which the report does not read: " in result.stderr
    assert "custom_export_ratings_long" in result.stderr and "Traceback" not in result.stderr


def _with_test_column(source, target, *, is_test) -> None:
    """``source`` with an ``is_test`` column, True where ``is_test(row)``; rows for which it returns None dropped."""
    import csv

    with source.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    with target.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=[*rows[0], "is_test"])
        writer.writeheader()
        for row in rows:
            flag = is_test(row)
            if flag is not None:
                writer.writerow({**row, "is_test": str(flag)})


def _figures(capsys, *arguments) -> tuple[dict, str]:
    """The JSON report of ``arguments`` without its file names, and what it said on stderr."""
    assert cli.main(["report", *map(str, arguments), "--json"]) == 0
    captured = capsys.readouterr()
    found = json.loads(captured.out)
    found.pop("files", None)
    for part in found.get("contributions") or []:  # each input file and what it added, named
        part.pop("file", None)
    return found, captured.err


def test_the_report_leaves_out_test_rows_and_other_sessions_and_says_so(exports, capsys, tmp_path):
    source = exports[("social_eval", "custom_export_ratings_long")]
    ratings = read_csv_any(source, dtype=str)
    first, session_code = ratings["annotator"].iloc[0], ratings["session_code"].iloc[0]
    marked, without = tmp_path / "marked.csv", tmp_path / "without.csv"
    _with_test_column(source, marked, is_test=lambda row: row["annotator"] != first)
    _with_test_column(source, without, is_test=lambda row: False if row["annotator"] == first else None)
    everything, said = _figures(capsys, source)
    assert said == ""

    figures, said = _figures(capsys, marked)
    assert "marked.csv: " in said and " test rows left out (--include-tests puts them back)" in said
    assert figures == _figures(capsys, without)[0]  # as if the test rows were not in the file
    assert figures != everything  # the test rows change the figures: leaving them out is seen
    assert _figures(capsys, marked, "--include-tests") == (everything, "")

    assert _figures(capsys, source, "--session", session_code, "--session", "nosuch")[0] == everything
    with pytest.raises(SystemExit):
        cli.main(["report", str(source), "--session", "nosuch"])  # every row left out: the report has none to read
    assert f"rows of other sessions left out ({session_code})" in capsys.readouterr().err
    no_column = tmp_path / "no_session.csv"
    _with_test_column(source, no_column, is_test=lambda row: False)
    text = no_column.read_text(encoding="utf-8").replace("session_code,", "session,", 1)
    no_column.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        cli.main(["report", str(no_column), "--session", session_code])
    assert stop.value.code == 2 and "has no session_code column" in capsys.readouterr().err
