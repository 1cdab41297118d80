"""Numbers you can publish (docs/publishing.md): figures, paper tables, manifests and a dataset release, made from the
exports of a study run from outside.

The study: people in all four apps on a real server (the filled server of tests/system/test_csv_neutralisation.py:
DoND person against person and against a model, a social_eval annotator, a payoff judge, a bias-tests participant,
each arriving with a Prolific ID), and the runners with the scripted model (DoND self-play with two description
conditions, the bias runner). The exports are downloaded as a researcher would.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pandas as pd
import pytest
import requests

from backend import __main__ as cli
from backend.core import figures as core_figures
from backend.core import publish, tool_envs
from backend.core.csvio import read_csv_any
from harness import PROJECT_ROOT
from tests.system.test_csv_neutralisation import (
    filled_server,  # noqa: F401  (the people's study run)
    visitors,
)

pytestmark = pytest.mark.slow
KEY = "test-release-key-0123456789"
DATASETS_VERSION = "5.2.0"  # the Hugging Face loader; it would upgrade oTree's click pin, so it gets its own venv
EXPORTS = {
    "dond_games": ("dond", "custom_export_dond_games"),
    "dond_events": ("dond", "custom_export_dond_events"),
    "ratings": ("social_eval", "custom_export_ratings_long"),
    "judgements": ("payoff_reasoning_eval", "custom_export_protocol_with_ids"),
    "bias_people": ("bias_tests", "custom_export"),
}


def answer_every_bias_test(server_url: str) -> None:
    """A bias_tests participant (with a Prolific ID) answers every test version."""
    [person] = visitors(server_url, "bias_tests", 1, "Q")
    person.submit(dict(consent_given="True")).submit({})
    for _ in range(50):
        if "Thank you!" in person.html:
            return
        offered = re.findall(r'class="form-check-input bias-argument"[^>]*value="([^"]+)"', person.html)
        person.submit({"selected_arguments": ",".join(offered[:2])} if offered else {"choice": "1", "confidence": "70"})
    raise AssertionError("the bias tests did not end within 50 pages")


@pytest.fixture(scope="module")
def otree_server(own_otree_server):
    """A server of this module's own: the tests below read whole exports, which hold every session of the server."""
    return own_otree_server


@pytest.fixture(scope="module")
def study(filled_server, tmp_path_factory):  # noqa: F811
    """{name: path} of the people's exports and the runners' files."""
    folder = tmp_path_factory.mktemp("study")
    answer_every_bias_test(filled_server.url)
    headers = {"otree-rest-key": os.environ.get("OTREE_REST_KEY", "")}
    files = {}
    for name, (app, function) in EXPORTS.items():
        params = {"app": app, "function_name": function}
        response = requests.get(filled_server.url + "/api/export_app_custom", params=params, headers=headers)
        assert response.status_code == 200, name
        files[name] = folder / f"{name}.csv"
        files[name].write_bytes(response.content)
    run = [sys.executable, "-m", "backend.dond.selfplay", "--model-a", "scripted", "--instances", "6", "--quiet"]
    subprocess.run([*run, "--out", str(folder / "selfplay"), "--describe", "none,expert"], check=True, cwd=PROJECT_ROOT)
    files["selfplay_games"] = folder / "selfplay_games.csv"
    files["selfplay_events"] = folder / "selfplay_events.csv"
    (folder / "selfplay" / "dond_games.csv").rename(files["selfplay_games"])
    (folder / "selfplay" / "dond_events.csv").rename(files["selfplay_events"])
    bias = [sys.executable, "-m", "backend.bias.runner", "--model", "scripted", "--repeats", "2"]
    subprocess.run([*bias, "--out", str(folder / "bias")], check=True, cwd=PROJECT_ROOT, capture_output=True)
    (files["bias_models"],) = (folder / "bias").glob("*.csv")
    episodes = PROJECT_ROOT / "backend" / "social" / "data" / "episodes"
    social = [sys.executable, "-m", "backend.social.annotator", "--model", "scripted", "--episodes", str(episodes)]
    subprocess.run([*social, "--out", str(folder / "social")], check=True, cwd=PROJECT_ROOT, capture_output=True)
    (files["model_ratings"],) = (folder / "social").glob("*.csv")
    (files["model_ratings_json"],) = (folder / "social").glob("*.episodes.json")
    return files


def _cli(capsys, *arguments) -> tuple[int, str, str]:
    try:
        code = cli.main([str(argument) for argument in arguments])
    except SystemExit as stop:
        code = stop.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _report_inputs(study) -> dict[str, list[Path]]:
    return {
        "dond": [study["dond_games"], study["selfplay_games"]],
        "social": [study["ratings"], study["model_ratings_json"]],
        "reasoning": [study["judgements"]],
        "bias": [study["bias_people"], study["bias_models"]],
    }


def _bar_heights(spec) -> list[float]:
    """The heights of the bars matplotlib drew for a figure (what a reader of the figure sees)."""
    figure = core_figures.render(spec)
    return [patch.get_height() for ax in figure.axes for patch in ax.patches]


def test_figures_are_written_for_every_app_and_draw_the_reports_numbers(study, capsys, tmp_path):
    names = {}
    for app, paths in _report_inputs(study).items():
        out = tmp_path / app
        code, printed, error = _cli(capsys, "report", *paths, "--figures", out)
        assert code == 0, error
        code, as_json, error = _cli(capsys, "report", *paths, "--json")
        assert code == 0, error
        data = json.loads(as_json)
        names[app] = sorted(path.stem for path in out.glob("*.svg"))
        for stem in names[app]:
            ElementTree.parse(out / f"{stem}.svg")  # well-formed SVG
            assert (out / f"{stem}.png").read_bytes().startswith(b"\x89PNG")
        manifest = json.loads((out / "manifest.json").read_text())
        assert [entry["sha256"] for entry in manifest["inputs"]] == [
            hashlib.sha256(path.read_bytes()).hexdigest() for path in paths
        ]
        specs = {spec.name: spec for spec in publish.report_outputs(f"backend.{app}.report", data, paths=paths)[0]}
        check = globals()[f"_check_{app}"]
        check(specs, data, printed)
        if app == "social":
            _check_social_quality(specs["annotator_quality"], study["ratings"])
    assert names["dond"][:4] == ["dond_conditions", "dond_effects", "dond_main_score", "dond_outcomes"]
    assert any(name.startswith("dond_pareto_") for name in names["dond"])
    assert names["social"] == ["annotator_quality", "social_agreement", "social_people_vs_models"]
    assert names["reasoning"] == ["payoff_confusion"]
    assert names["bias"] == ["bias_metrics"]


def _check_dond(specs, rows, printed):
    outcomes, scores = specs["dond_outcomes"], specs["dond_main_score"]
    for index, row in enumerate(rows):
        assert outcomes.data["success_rate"][index] == row["success_rate"]
        assert scores.data["main_score"][index] == row["main_score"]
        assert [scores.data["ci_low"][index], scores.data["ci_high"][index]] == row["main_score_ci"]
        assert f"{row['main_score']:.1f}" in printed  # the text report prints the same score
    heights = _bar_heights(scores)
    drawn = [h for h in heights if not math.isclose(h, 0)]
    expected = [v for v in scores.data["main_score"] + scores.data["main_score_debiased"] if v]
    assert sorted(drawn) == pytest.approx(sorted(expected))
    effects = [e for row in rows for e in row.get("treatments", {}).get("effects", [])]
    assert effects, "the self-play conditions give treatment effects"
    drawn_effects = specs["dond_effects"].data["metrics"]["main_score"]["difference"]
    assert drawn_effects == [e["difference"] for e in effects if e["metric"] == "main_score"]
    pareto = next(spec for name, spec in specs.items() if name.startswith("dond_pareto_"))
    assert [10, 0] in pareto.data["frontier"] or pareto.data["frontier"]


def _check_social(specs, data, printed):
    both = [row for row in data["summary"] if row["scope"] == "both"]
    group = both[0]["group"]
    rows = [row for row in both if row["group"] == group]
    agreement = specs["social_agreement"].data
    assert agreement["dimensions"] == [row["dimension"] for row in rows]
    assert agreement["within_1"] == [row["within_1"] for row in rows]
    versus = specs["social_people_vs_models"].data
    modelled = [row for row in rows if row["n_model"]]
    assert versus["people"] == [row["mean"] for row in modelled]
    assert versus["models"] == [row["model_mean"] for row in modelled]
    assert versus["pearson"] == [row["pearson"] for row in modelled]
    assert f"{modelled[0]['model_mean']:.2f}" in printed


def _check_social_quality(spec, ratings_csv):
    """The quality figure against a hand count over the downloaded long export: per annotator (in code order), the
    median seconds of their annotations, the share of gold episodes passed and the flag (faster than the 60 s
    floor, or a failed gold episode)."""
    rows = read_csv_any(ratings_csv, dtype=str, keep_default_na=False).to_dict("records")
    annotations = {}
    for row in rows:
        annotations.setdefault(row["annotator"], {}).setdefault((row["episode_id"], row["round"]), row)
    who = sorted(annotations)
    seconds = [sorted(float(a["seconds_spent"]) for a in annotations[w].values()) for w in who]
    medians = [(t[(len(t) - 1) // 2] + t[len(t) // 2]) / 2 for t in seconds]
    gold = [[a["attention_passed"] == "1" for a in annotations[w].values() if a["is_gold"] == "1"] for w in who]
    assert spec.data["annotator"] == [f"#{index + 1}" for index in range(len(who))]
    assert spec.data["median_seconds"] == pytest.approx(medians)
    assert spec.data["gold_accuracy"] == [sum(g) / len(g) if g else None for g in gold]
    assert spec.data["flagged"] == [min(t) < 60 or not all(g) for t, g in zip(seconds, gold, strict=True)]
    differences = {w: [] for w in who}
    regular = [row for row in rows if row["is_gold"] != "1" and row["rating"] != ""]
    for own in regular:
        cell = (own["episode_id"], own["agent_index"], own["dimension"])
        others = [
            float(r["rating"])
            for r in regular
            if r["annotator"] != own["annotator"] and (r["episode_id"], r["agent_index"], r["dimension"]) == cell
        ]
        if others:
            differences[own["annotator"]].append(abs(float(own["rating"]) - sum(others) / len(others)))
    distance = [sum(differences[w]) / len(differences[w]) if differences[w] else None for w in who]
    assert spec.data["mean_abs_diff"] == pytest.approx(distance)
    drawn_text = {str(text) for values in spec.data.values() if isinstance(values, list) for text in values}
    assert not set(who) & drawn_text  # numbered, no participant codes


def _check_reasoning(specs, data, printed):
    panels = specs["payoff_confusion"].data["panels"]
    assert [[p[c] for c in ("TP", "FP", "FN", "TN")] for p in panels[: len(data["groups"])]] == [
        [g[c] for c in ("TP", "FP", "FN", "TN")] for g in data["groups"]
    ]
    figure = core_figures.render(specs["payoff_confusion"])
    shown = [text.get_text() for ax in figure.axes for text in ax.texts]
    assert shown[0] == f"TP\n{data['groups'][0]['TP']}"


def _check_bias(specs, data, printed):
    spec = specs["bias_metrics"]
    assert spec.data["groups"] == data["groups"] and len(data["groups"]) == 2  # people and the model
    for name, metric in spec.data["metrics"].items():
        for index, group in enumerate(data["groups"]):
            cell = data["metrics"][name][group]
            assert metric["batch"][index] == cell.get("batch")
            assert [metric["ci_low"][index], metric["ci_high"][index]] == (cell.get("batch_ci") or [None, None])
    heights = _bar_heights(spec)
    expected = [0.0 if v is None else v for m in spec.data["metrics"].values() for v in m["batch"]]
    assert heights == pytest.approx(expected)


def test_paper_tables_and_the_report_manifest(study, capsys, tmp_path):
    paths = _report_inputs(study)["dond"]
    code, printed, error = _cli(
        capsys,
        "report",
        *paths,
        "--latex",
        tmp_path / "tex",
        "--markdown",
        tmp_path / "md",
        "--manifest",
        tmp_path / "report.json",
    )
    assert code == 0, error
    latex = (tmp_path / "tex" / "dond_models.tex").read_text()
    assert r"\begin{tabular}" in latex and r"\% played" in latex
    markdown = (tmp_path / "md" / "dond_models.md").read_text()
    assert "| scripted | semi, en |" in markdown
    manifest = json.loads((tmp_path / "report.json").read_text())
    # git's own answer for this checkout, or "unknown" in a source tree without .git (a release archive, a zip).
    described = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=PROJECT_ROOT, capture_output=True)
    expected = described.stdout.decode().strip() if described.returncode == 0 else ""
    assert manifest["version"] == (expected or "unknown")
    assert manifest["inputs"][0]["sha256"] == hashlib.sha256(paths[0].read_bytes()).hexdigest()
    assert "--latex" in manifest["command"] and manifest["options"]["bootstrap_seed"] == 0


# --- the dataset release -------------------------------------------------------------------------------------------

RELEASED = ("dond_games", "dond_events", "ratings", "judgements", "bias_people", "selfplay_games", "bias_models")
RELEASED += ("model_ratings",)
PERSON_COLUMNS = ("participant_code", "participant_a", "participant_b", "annotator")
PID_COLUMNS = ("prolific_pid", "prolific_pid_a", "prolific_pid_b")
FREE_TEXT = {
    "text",
    "llm_messages",
    "llm_reply",
    "llm_reasoning",
    "reasoning",
    "model_thinking",
    "remarks",
    "raw_reply",
}
FREE_TEXT |= {"reply", "problem", "sentence"}


def _oracle_pseudonym(value: str, kind: str, prefix: str) -> str:
    return prefix + "-" + hmac.new(KEY.encode(), f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()[:16]


@pytest.fixture(scope="module")
def bundle(study, tmp_path_factory):
    """The release of every export, one games export with a test row marked (``is_test``)."""
    marked = tmp_path_factory.mktemp("marked") / "selfplay_games.csv"
    frame = read_csv_any(study["selfplay_games"], dtype=str, keep_default_na=False)
    frame["is_test"] = ["1"] + ["0"] * (len(frame) - 1)
    frame.to_csv(marked, index=False)
    inputs = {name: study[name] for name in RELEASED} | {"selfplay_games": marked}
    out = tmp_path_factory.mktemp("release") / "bundle"
    env = dict(os.environ, RELEASE_PSEUDONYM_KEY=KEY)
    done = subprocess.run(
        [sys.executable, "-m", "backend", "release", "--out", str(out), *map(str, inputs.values())],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return out, inputs


def _sources(inputs) -> dict[str, pd.DataFrame]:
    frames = {}
    for path in inputs.values():
        frame = read_csv_any(path, dtype=str, keep_default_na=False)
        frames[path.name] = frame
    return frames


def test_release_refuses_without_the_key(study, tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "RELEASE_PSEUDONYM_KEY"}
    done = subprocess.run(
        [sys.executable, "-m", "backend", "release", "--out", str(tmp_path / "b"), str(study["ratings"])],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "RELEASE_PSEUDONYM_KEY" in done.stderr
    assert not (tmp_path / "b").exists()


def test_no_identifier_of_the_exports_is_anywhere_in_the_bundle(bundle):
    out, inputs = bundle
    identifiers = set()
    for frame in _sources(inputs).values():
        for column in (*PERSON_COLUMNS, *PID_COLUMNS, "study_id", "session_code"):
            if column in frame:
                identifiers |= {v for v in frame[column] if v and not v.startswith("model:")}
    identifiers.discard("selfplay")  # the self-play runner's constant session_code: no session, and a file name
    pids = {v for frame in _sources(inputs).values() for c in PID_COLUMNS if c in frame for v in frame[c] if v}
    assert {"-D1-B1", "-R1-B1", "-J1-B1", "-Q1-B1"} <= pids  # the people's Prolific IDs were in the exports
    files = [path for path in out.rglob("*") if path.is_file()]
    assert len(files) >= 12
    for path in files:
        content = path.read_bytes()
        found = [value for value in identifiers if value.encode() in content]
        assert not found, (path.name, found)
    for parquet in (out / "data").glob("*.parquet"):  # and in every decoded cell (Parquet pages are compressed)
        cells = {str(v) for v in pd.read_parquet(parquet).astype(str).to_numpy().ravel()}
        assert not any(value in cell for cell in cells for value in identifiers), parquet.name
    assert KEY.encode() not in b"".join(path.read_bytes() for path in files)


def _expected(value: str, dtype) -> object:
    if value == "":
        return None
    kind = str(dtype)
    if kind == "Int64":
        return int(value)
    if kind in ("float64", "Float64"):
        return float(value)
    if kind == "boolean":
        return value.lower() == "true"
    return value


def test_every_released_row_is_its_export_row_pseudonymised(bundle):
    out, inputs = bundle
    sources = _sources(inputs)
    tables = {
        path.stem: pd.read_parquet(path, dtype_backend="numpy_nullable") for path in (out / "data").glob("*.parquet")
    }
    assert set(tables) == {"games", "events", "ratings", "judgements", "bias_answers", "model_calls"}
    # Explicit types: whole numbers, numbers and text as such (Parquet's schema, kept by pandas).
    assert str(tables["games"]["points_a"].dtype) == "Int64" and str(tables["games"]["main_score"].dtype) == "Float64"
    assert str(tables["bias_answers"]["confidence"].dtype) == "Float64"
    person_of = {}
    replaced = _oracle_replacer(sources)
    released_names = {replaced(name): frame for name, frame in sources.items()}  # a name holding a session code
    for kind, table in tables.items():
        jsonl = pd.read_json(out / "data" / f"{kind}.jsonl", lines=True, dtype=False)
        assert len(jsonl) == len(table) and list(jsonl.columns) == list(table.columns)
        for row in table.to_dict("records"):
            source = released_names[row["source_file"]].iloc[int(row["source_row"]) - 1]
            assert source.get("is_test", "0") != "1"
            for column, value in row.items():
                if column in ("source_file", "source_row"):
                    continue
                raw = source.get(column, "")  # a column another file of the table has
                value = None if value is pd.NA or (isinstance(value, float) and math.isnan(value)) else value
                if column in PERSON_COLUMNS and raw and not raw.startswith("model:"):
                    assert value == _oracle_pseudonym(raw, "participant", "P"), (kind, column)
                    person_of.setdefault(raw, set()).add((kind, value))
                elif column in PID_COLUMNS and raw:
                    assert value == _oracle_pseudonym(raw, "prolific", "X"), (kind, column)
                elif str(table[column].dtype) in ("Int64", "Float64", "float64", "boolean"):
                    assert value == _expected(raw, table[column].dtype), (kind, column, raw, value)
                elif column not in FREE_TEXT or not re.search(r"@|\d{7}|[0-9a-f]{24}", raw):
                    assert (value or "") == replaced(raw), (kind, column)
    in_two_tables = {code: seen for code, seen in person_of.items() if len({kind for kind, _ in seen}) > 1}
    assert in_two_tables, "a participant of the DoND games is also in its events"
    assert all(len({pseudonym for _, pseudonym in seen}) == 1 for seen in person_of.values())
    # Test rows are left out: the marked self-play game is not released.
    games = tables["games"]
    assert len(games) == sum(len(sources[p.name]) for n, p in inputs.items() if n.endswith("games")) - 1


def _oracle_replacer(sources):
    """Every identifier of the exports replaced by its pseudonym, wherever it stands in a text."""
    kinds = {c: ("participant", "P") for c in PERSON_COLUMNS} | {c: ("prolific", "X") for c in PID_COLUMNS}
    kinds |= {
        "session_code": ("session", "S"),
        "study_id": ("study", "T"),
        "prolific_session_id": ("prolific_session", "Q"),
    }
    known = {}
    for frame in sources.values():
        for column, (kind, prefix) in kinds.items():
            if column in frame:
                for value in frame[column]:
                    if value and not value.startswith("model:"):
                        known.setdefault(value, _oracle_pseudonym(value, kind, prefix))
    ordered = sorted((v for v in known if len(v) >= 4), key=len, reverse=True)
    pattern = re.compile("|".join(map(re.escape, ordered)))
    return lambda text: known.get(text, pattern.sub(lambda m: known[m.group(0)], text) if text else text)


def test_the_card_counts_are_the_datas(bundle):
    out, inputs = bundle
    card = (out / "README.md").read_text()
    front = card.split("---")[1]
    for path in (out / "data").glob("*.parquet"):
        rows = len(pd.read_parquet(path))
        pattern = rf'config_name: "{path.stem}"\n    features:.*?num_examples: (\d+)'
        assert int(re.search(pattern, front, re.S).group(1)) == rows, path.stem
        assert f"- `{path.stem}`: {rows} rows" in card
    people = set()
    for frame in _sources(inputs).values():
        kept = frame[frame.get("is_test", pd.Series("0", index=frame.index)) != "1"]
        for column in PERSON_COLUMNS:
            if column in kept:
                people |= {v for v in kept[column] if v and not v.startswith("model:")}
    assert f"People: {len(people)} " in card
    assert "scripted" in card and "expert" in card  # the model and the conditions
    assert "![bias_metrics](figures/bias/bias_metrics.png)" in card
    text = (out / "manifest.json").read_text()
    manifest = json.loads(text)
    released = _oracle_replacer(_sources(inputs))  # each input by its released name, as its rows' source_file
    assert [entry["path"] for entry in manifest["inputs"]] == [released(p.name) for p in inputs.values()]
    assert all(str(p.parent) not in text for p in [out, *inputs.values()])  # no folder of the machine
    assert "README.md" in manifest["outputs"]


@pytest.fixture(scope="session")
def datasets_python() -> Path:
    """Python with Hugging Face ``datasets`` (an environment of its own: backend/core/tool_envs.py)."""
    folder = tool_envs.environment(
        f"datasets-{DATASETS_VERSION}", [f"datasets=={DATASETS_VERSION}"], check="import datasets", timeout_s=900
    )
    return tool_envs.python_of(folder)


def test_datasets_loads_every_config_of_the_card(bundle, datasets_python):
    out, _ = bundle
    script = (
        "import json, sys, datasets\n"
        "out = sys.argv[1]\n"
        "counts = {}\n"
        "for config in datasets.get_dataset_config_names(out):\n"
        "    counts[config] = datasets.load_dataset(out, config, split='train').num_rows\n"
        "print(json.dumps(counts))\n"
    )
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", HF_HOME=str(out.parent / "hf-home"))
    done = subprocess.run([str(datasets_python), "-c", script, str(out)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts == {path.stem: len(pd.read_parquet(path)) for path in (out / "data").glob("*.parquet")}


# --- the admin reports show the same figures -----------------------------------------------------------------------


def _svg_elements(html: str) -> dict[str, str]:
    """{figure name: its svg} of a page's figure blocks (``_templates/global/Figures.html``)."""
    found = re.findall(r'data-figure="([^"]+)"[^>]*>\s*(<svg.*?</svg>)', html, re.S)
    return {name: svg for name, svg in found}


def _comparable(svg: str) -> str:
    """An SVG without what differs between a file and a page: the XML prologue, comments, the root's size."""
    svg = re.sub(r"<!--.*?-->", "", svg[svg.index("<svg") :], flags=re.S)
    return re.sub(r"<svg[^>]*>", "<svg>", svg, count=1).strip()


def test_the_admin_reports_show_the_figures_of_the_command(study, filled_server, capsys, tmp_path):  # noqa: F811
    games = read_csv_any(study["dond_games"], dtype=str, keep_default_na=False)
    session_code = games.loc[games["outcome"] == "success", "session_code"].iloc[0]
    one_session = tmp_path / "one_session.csv"
    one_session.write_bytes(  # the server's own export of that session's rows (oTree exports every session)
        b"".join(
            line
            for index, line in enumerate(study["dond_games"].read_bytes().splitlines(keepends=True))
            if index == 0 or session_code.encode() in line
        )
    )
    code, _, error = _cli(capsys, "report", one_session, "--figures", tmp_path / "figures")
    assert code == 0, error
    page = requests.get(f"{filled_server.url}/AdminReport/{session_code}", timeout=120).text
    shown = _svg_elements(page)
    assert {"dond_outcomes", "dond_main_score"} <= set(shown), sorted(shown)
    for name in ("dond_outcomes", "dond_main_score"):
        written = (tmp_path / "figures" / f"{name}.svg").read_text()
        assert _comparable(shown[name]) == _comparable(written), name  # screen and paper: the same drawing
    transcripts = requests.get(f"{filled_server.url}/DondTranscripts/{session_code}", timeout=120).text
    assert "pareto" in _svg_elements(transcripts)
    pareto = _comparable(_svg_elements(transcripts)["pareto"])
    game_id = games.loc[games["session_code"] == session_code, "game_id"].iloc[0]
    assert _cli(capsys, "report", one_session, "--figures", tmp_path / "p", "--game", game_id)[0] == 0
    assert pareto == _comparable(next((tmp_path / "p").glob("dond_pareto_*.svg")).read_text())


@pytest.mark.parametrize(
    ("app", "figures"),
    [
        ("social_eval", {"social_agreement", "annotator_quality"}),
        ("payoff_reasoning_eval", {"payoff_confusion"}),
        ("bias_tests", {"bias_metrics"}),
    ],
)
def test_every_admin_report_shows_its_figures(study, filled_server, app, figures):  # noqa: F811
    export = {"social_eval": "ratings", "payoff_reasoning_eval": "judgements", "bias_tests": "bias_people"}[app]
    sessions = set(read_csv_any(study[export], dtype=str, keep_default_na=False)["session_code"])
    shown = set()
    for session_code in sessions:
        page = requests.get(f"{filled_server.url}/AdminReport/{session_code}", timeout=120)
        assert page.status_code == 200
        shown |= set(_svg_elements(page.text))
    assert figures <= shown, (app, sorted(shown))
