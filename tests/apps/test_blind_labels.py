"""People never see a model's label before giving theirs (issue 37): the rating and judging pages a person is shown
are the same, byte for byte once codes are masked, whether or not a model has labelled the unit, and name no model
rater. A page that showed a model's rating, its rater or a model judge's verdict would differ and fail here."""

from __future__ import annotations

import json
import re

from backend.reasoning.judge import main as judge_main
from backend.social.rubrics import DEFAULT_RUBRIC_PATH
from harness import PROJECT_ROOT
from harness.participants import Annotator
from harness.servers import create_session, session_start_links
from tests.apps.test_payoff_reasoning_field import Judge

LADDER = DEFAULT_RUBRIC_PATH.parent / "episodes" / "borrowed_ladder.json"
RATER = "Leaky-Judge-9000"


def masked(html: str, *codes: str) -> str:
    """The page with what differs between two sessions masked: participant and session codes, CSRF tokens, the
    times a page embeds, and what the devserver's debug panel says of the session (its id, links and codes)."""
    for code in codes:
        html = html.replace(code, "<code>")
    html = re.sub(r'name="csrftoken" value="[^"]+"', 'name="csrftoken" value=""', html)
    html = re.sub(r'name="tab-title-debug-info" content="[^"]*"', "", html)
    html = re.sub(r"/join/\w+", "/join/<code>", html)
    html = re.sub(r"<code>\d+</code>", "<code>id</code>", html)
    return re.sub(r"\d{10}(\.\d+)?", "<time>", html)


def without_model_labels(episode: dict) -> dict:
    return dict(
        episode,
        model_rater="",
        agents=[{k: v for k, v in a.items() if k != "model_ratings"} for a in episode["agents"]],
    )


def rating_page(server_url: str, episode: dict) -> str:
    session = create_session(
        server_url,
        "social_eval",
        1,
        episodes="",  # the pasted episode alone
        episodes_json=json.dumps([episode]),
        episodes_per_annotator=1,
        attention_checks=0,
    )
    [link] = session_start_links(server_url, session["code"])
    annotator = Annotator(link, session["code"]).to_rating_page()
    return masked(annotator.html, annotator.code, session["code"])


def test_the_rating_page_is_the_same_with_and_without_a_models_ratings(otree_server):
    episode = json.loads(LADDER.read_text(encoding="utf-8"))
    labelled = dict(episode, model_rater=RATER)
    assert all(agent["model_ratings"] for agent in labelled["agents"])
    shown = rating_page(otree_server.url, labelled)
    assert 'id="scenario"' in shown and RATER not in shown and "model_rat" not in shown
    other = rating_page(otree_server.url, without_model_labels(labelled))
    assert shown == other


def judge_page(server_url: str, folder) -> str:
    session = create_session(server_url, "payoff_reasoning_eval", 1, logs_folder=str(folder), judges_per_log=1)
    [link] = session_start_links(server_url, session["code"])
    judge = Judge(link, pid="d" * 24, study_id="blind")
    while judge.page in ("Consent", "Instructions"):
        judge.submit(dict(consent_given="True") if judge.page == "Consent" else {})
    assert judge.page == "Judge", judge.url
    return masked(judge.html, judge.code, session["code"])


def test_the_judging_page_is_the_same_when_a_model_judges_output_lies_beside_the_log(otree_server, tmp_path):
    [log] = sorted((PROJECT_ROOT / "payoff_reasoning_eval" / "logs").glob("*.txt"))[:1]
    clean, judged = tmp_path / "clean", tmp_path / "judged"
    for folder in (clean, judged):
        folder.mkdir()
        (folder / log.name).write_text(log.read_text(encoding="utf-8"), encoding="utf-8")
    # A model judge writes its verdicts into the very folder people's logs come from.
    assert judge_main(["--logs", str(judged), "--model", "scripted", "--out", str(judged), "--quiet"]) == 0
    assert {".txt", ".csv"} <= {path.suffix for path in judged.iterdir()}
    shown = judge_page(otree_server.url, judged)
    assert "model:scripted" not in shown and "Scripted: the automated check" not in shown
    assert shown == judge_page(otree_server.url, clean)
