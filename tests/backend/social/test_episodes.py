"""Episode loading: our JSON format, the Sotopia layouts, and errors that name the file and the field."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from backend.social.episodes import (
    EpisodeFormatError,
    attach_model_ratings,
    load_episodes,
    parse_episode_data,
    parse_episode_text,
)
from backend.social.rubrics import load_rubric
from backend.social.sotopia_episodes import parse_rewards_prompt
from harness import PROJECT_ROOT
from tests.support.json_edits import edited

SAMPLES = PROJECT_ROOT / "backend" / "social" / "data" / "episodes"

GOOD = {
    "id": "tiny-1",
    "scenario": "Two colleagues share a lift.",
    "agents": [
        {"name": "Ana Ruiz", "background": "An engineer.", "goal": "Say hello.", "secret": "She is leaving."},
        {"name": "Ben Cole", "background": "A designer.", "goal": "Ask about the weekend.", "secret": ""},
    ],
    "turns": [
        {"speaker": "Ana Ruiz", "text": "Morning!\nLong week?"},
        {"speaker": "Ben Cole", "text": "nods", "kind": "non-verbal"},
    ],
}

# A Sotopia EpisodeLog export written for this test, with the irregularities of the released files: "Turn #k"
# headers on their own line, a speech that spans lines and quotes "Turn #k:" lines, repeated [action] markers, a
# trailing comma, a "did nothing" turn and an empty final turn.
SOTOPIA_LOG = {
    "pk": "01TESTEPISODE0000000000000",
    "environment": "01TESTENV",
    "tag": "test-tag",
    "models": ["evaluator-x", "model-a", "model-b"],
    "rewards_prompt": "\n".join(
        [
            "Prompt after formatting:",
            "Here is the context of this interaction:",
            "Scenario: Two hikers share the last sandwich",
            "Participants: Ivy O'Neil and Raj Patel",
            "Ivy O'Neil's background: Ivy O'Neil is a 30-year-old female pilot. She/her pronouns. "
            "Ivy likes maps. Personality and values description: Ivy is calm. Ivy's secrets: She forgot the food.",
            "Raj Patel's background: Raj Patel is a 35-year-old male chef. He/him pronouns. Raj cooks. "
            "Personality and values description: Raj is warm. Raj's secrets: He ate a sandwich already.",
            "Ivy O'Neil's goal: Get half of the sandwich (Extra information: you are hungry)",
            "Raj Patel's goal: Keep the sandwich",
            "Turn #1",
            "Ivy O'Neil said: \"Shall we split it? Here is my plan:",
            "",
            'Turn #1: Ivy O\'Neil said: "half each"',
            'Turn #2: Raj Patel said: "fine""',
            "Turn #2",
            "Raj Patel [action] [action] hands over half,",
            "Turn #3",
            "Ivy O'Neil did nothing",
            "Turn #4",
            "Raj Patel [non-verbal communication] smiles",
            "Turn #5",
            "Ivy O'Neil left the conversation,",
            "Turn #6,",
        ]
    ),
    "rewards": [
        [3.0, {"believability": 8.0, "goal": 7.0, "overall_score": 3.0}],
        [1.5, {"believability": 9.0, "goal": 2.0, "overall_score": 1.5}],
    ],
}


@pytest.fixture(scope="module")
def rubric():
    return load_rubric()


def test_sample_set_loads_with_gold_and_model_ratings(rubric):
    episodes = load_episodes(SAMPLES, rubric=rubric)
    assert len(episodes) >= 6
    assert len({episode.id for episode in episodes}) == len(episodes)
    assert any(episode.is_gold for episode in episodes)
    assert any(episode.has_model_ratings for episode in episodes)
    for episode in episodes:
        names = {agent.name for agent in episode.agents}
        assert {turn.speaker for turn in episode.turns} <= names
        assert episode.source.endswith(".json")


def test_our_format_round_trips(rubric):
    for episode in load_episodes(SAMPLES, rubric=rubric):
        again = parse_episode_data(json.loads(json.dumps(episode.as_dict())), source=episode.source, rubric=rubric)
        assert again == [episode]


def test_multi_line_text_is_kept():
    (episode,) = parse_episode_data(GOOD)
    assert episode.turns[0].text == "Morning!\nLong week?"
    assert episode.turns[1].kind == "non-verbal"


def test_lists_containers_and_jsonl_are_accepted():
    second = {**GOOD, "id": "tiny-2"}
    assert [e.id for e in parse_episode_data([GOOD, second])] == ["tiny-1", "tiny-2"]
    assert [e.id for e in parse_episode_data({"episodes": [GOOD, second]})] == ["tiny-1", "tiny-2"]
    text = json.dumps(GOOD) + "\n\n" + json.dumps(second) + "\n"
    assert [e.id for e in parse_episode_text(text, source="set.jsonl")] == ["tiny-1", "tiny-2"]


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["scenario"], KeyError, "bad.json: scenario: is missing."),
        (["scenario"], "  ", "bad.json: scenario: must be a non-empty string"),
        (["id"], "has space", "bad.json: id: must be 1-80 letters"),
        (["agents"], [GOOD["agents"][0]], "bad.json: agents: must be a list of exactly two agents"),
        (["agents", 1, "goal"], 3, "bad.json: agents[1].goal: must be a non-empty string, got 3."),
        (["agents", 1, "name"], "Ana Ruiz", "bad.json: agents: the two agents must have different names"),
        (["agents", 0, "background"], KeyError, "bad.json: agents[0].background: is missing."),
        (["turns"], [], "bad.json: turns: must be a non-empty list"),
        (["turns", 1, "speaker"], "Carl", "bad.json: turns[1].speaker: must be one of the agents"),
        (["turns", 0, "kind"], "shout", "bad.json: turns[0].kind: must be one of"),
        (["agents", 0, "model_ratings"], {"goal": 11}, "bad.json: agents[0].model_ratings.goal: must lie within 0..10"),
        (["agents", 0, "model_ratings"], {"charm": 1}, "bad.json: agents[0].model_ratings.charm: is not a dimension"),
        (["agents", 1, "gold_ratings"], {"secret": "0"}, "bad.json: agents[1].gold_ratings.secret: must be a number"),
        (["agents", 1, "gold_ratings"], {"secret": 2}, "bad.json: agents[1].gold_ratings.secret: must lie within"),
    ],
)
def test_malformed_episodes_name_the_file_and_field(rubric, path, value, message):
    with pytest.raises(EpisodeFormatError) as error:
        parse_episode_data(edited(GOOD, path, value), source="bad.json", rubric=rubric)
    assert message in str(error.value)


def test_file_level_errors_name_the_file(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(GOOD), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps(GOOD), encoding="utf-8")
    with pytest.raises(EpisodeFormatError, match=r"b.json: id: the episode id 'tiny-1' is already used in a.json"):
        load_episodes(tmp_path)
    (tmp_path / "b.json").write_text('{"id": "x",\n "scenario": }', encoding="utf-8")
    with pytest.raises(EpisodeFormatError, match=r"b.json is not valid JSON: line 2, column 14: Expecting value"):
        load_episodes(tmp_path)
    with pytest.raises(EpisodeFormatError, match="no such episode file or folder"):
        load_episodes(tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EpisodeFormatError, match="no .json or .jsonl episode files"):
        load_episodes(empty)
    (tmp_path / "lines.jsonl").write_text(json.dumps(GOOD) + "\n[1, 2]\n", encoding="utf-8")
    with pytest.raises(EpisodeFormatError, match=r"lines.jsonl line 2\[0\]: \(top level\): must be a JSON object"):
        load_episodes(tmp_path / "lines.jsonl")


def test_sotopia_episode_log_is_imported():
    (episode,) = parse_episode_data(SOTOPIA_LOG, source="log.json", rubric=load_rubric())
    assert episode.id == SOTOPIA_LOG["pk"] and episode.group == "test-tag"
    assert episode.scenario == "Two hikers share the last sandwich"
    ivy, raj = episode.agents
    assert (ivy.name, raj.name) == ("Ivy O'Neil", "Raj Patel")
    assert ivy.secret == "She forgot the food." and ivy.background.endswith("Ivy is calm.")
    assert raj.goal == "Keep the sandwich" and (ivy.model, raj.model) == ("model-a", "model-b")
    assert [(t.speaker, t.kind) for t in episode.turns] == [
        ("Ivy O'Neil", "speech"),
        ("Raj Patel", "action"),
        ("Raj Patel", "non-verbal"),
        ("Ivy O'Neil", "leave"),
    ]
    assert episode.turns[0].text.startswith("Shall we split it? Here is my plan:\n\nTurn #1: Ivy")
    assert episode.turns[1].text == "hands over half"
    assert episode.model_rater == "evaluator-x"
    assert ivy.model_ratings == {"believability": 8, "goal": 7}
    assert raj.model_ratings == {"believability": 9, "goal": 2}


def test_sotopia_inline_turn_layout_and_missing_secrets():
    prompt = "\n".join(
        [
            "Here is the context of this interaction:",
            "Scenario: A quick chat",
            "Participants: Al Bo and Cy Do",
            "Al Bo's background: Al Bo is a 20-year-old student.",
            "Cy Do's background: Cy Do is a 50-year-old baker. Cy's secrets: Loves jazz",
            "Al Bo's goal: Chat",
            "Cy Do's goal: Leave",
            'Turn #0: Al Bo said: "Hi"',
            "Turn #1: Cy Do left the conversation",
            "Turn #2: ",
        ]
    )
    parsed = parse_rewards_prompt(prompt)
    assert parsed["agents"][0]["secret"] == "" and parsed["agents"][1]["secret"] == "Loves jazz"
    assert [(t.speaker, t.kind, t.text) for t in parsed["turns"]] == [
        ("Al Bo", "speech", "Hi"),
        ("Cy Do", "leave", "left the conversation"),
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p.replace("Participants: Ivy O'Neil and Raj Patel", "Participants: Ivy O'Neil"), "must name two"),
        (lambda p: p.replace("Raj Patel's goal: Keep the sandwich", ""), "has no 'Raj Patel's goal:' line"),
        (lambda p: p.replace("Scenario:", "Setting:"), "has no 'Scenario:' line"),
        (lambda p: p.replace("Raj Patel [non-verbal communication] smiles", "Someone else waves"), "does not start"),
    ],
)
def test_malformed_sotopia_files_name_the_file(change, message):
    data = {**SOTOPIA_LOG, "rewards_prompt": change(SOTOPIA_LOG["rewards_prompt"])}
    with pytest.raises(EpisodeFormatError) as error:
        parse_episode_data(data, source="01BROKEN.json")
    assert str(error.value).startswith("01BROKEN.json: ") and message in str(error.value)


def test_sotopia_messages_are_used_when_the_prompt_has_no_turns():
    head = SOTOPIA_LOG["rewards_prompt"].split("\nTurn #1")[0]
    data = {
        **SOTOPIA_LOG,
        "rewards_prompt": head,
        "messages": [
            [["Environment", "Ivy O'Neil", "context"], ["Ivy O'Neil", "Environment", 'said: "Half?"']],
            [["Raj Patel", "Environment", "did nothing"], ["Raj Patel", "Environment", "[action] shares"]],
        ],
    }
    (episode,) = parse_episode_data(data)
    assert [(t.speaker, t.kind, t.text) for t in episode.turns] == [
        ("Ivy O'Neil", "speech", "Half?"),
        ("Raj Patel", "action", "shares"),
    ]


def test_sotopia_jsonl_export_layout():
    line = {
        "episode_id": "01JSONL",
        "scenario": "Two neighbours",
        "codename": "neighbours",
        "agents_background": {
            "Al Bo": "Al Bo is a 20-year-old student. Al's secrets: Owes rent",
            "Cy Do": "Cy Do is a 50-year-old baker. Cy's secrets: Loves jazz",
        },
        "social_goals": {"Al Bo": "Borrow sugar", "Cy Do": "Keep sugar"},
        "social_interactions": 'Conversation starts\n\nTurn #0\nAl Bo said: "Sugar?"\n\nTurn #1\nCy Do: [action] hands it over',
        "reasoning": "",
        "rewards": [{"goal": 9.0, "overall_score": 9.0}, {"goal": 1.0, "overall_score": 1.0}],
    }
    (episode,) = parse_episode_text(json.dumps(line), source="export.jsonl")
    assert episode.agents[0].secret == "Owes rent" and episode.agents[1].goal == "Keep sugar"
    assert [(t.speaker, t.kind) for t in episode.turns] == [("Al Bo", "speech"), ("Cy Do", "action")]
    assert episode.agents[0].model_ratings == {"goal": 9}


def test_attach_model_ratings_replaces_only_listed_episodes(rubric):
    first, second = parse_episode_data([GOOD, {**GOOD, "id": "tiny-2"}])
    scores = {"tiny-2": [{"goal": 4.0, "overall_score": 4.0}, {"goal": 6.5}]}
    updated = attach_model_ratings([first, second], scores, rater="gpt-4", rubric=rubric)
    assert updated[0] is first
    assert updated[1].model_rater == "gpt-4"
    assert [agent.model_ratings for agent in updated[1].agents] == [{"goal": 4}, {"goal": 6.5}]
    with pytest.raises(EpisodeFormatError, match="agent1.goal: must lie within"):
        attach_model_ratings([second], {"tiny-2": [{"goal": 40}, {}]}, rater="x", rubric=rubric)


def test_nothing_is_read_at_import_time():
    # A fresh interpreter, so the check sees the real first import (and this process keeps its module objects).
    script = (
        "import builtins, io, pathlib\n"
        "def refuse(*a, **k): raise AssertionError('a file was read while importing backend.social.episodes')\n"
        "import backend.social.rubrics\n"  # its own imports (json, re, pathlib) may read files; they are not ours
        "builtins.open = io.open = pathlib.Path.read_text = pathlib.Path.open = refuse\n"
        "import backend.social.episodes\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_windows_files_are_read_and_other_encodings_refused_by_name(tmp_path):
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode())
    assert [episode.id for episode in load_episodes(tmp_path / "bom.json")] == ["tiny-1"]
    latin = dict(GOOD, scenario="Caf\u00e9 talk")
    (tmp_path / "latin.json").write_bytes(json.dumps(latin, ensure_ascii=False).encode("latin-1"))
    with pytest.raises(EpisodeFormatError, match=r"latin.json is not UTF-8 text: byte 0xe9 at line 1"):
        load_episodes(tmp_path / "latin.json")
    assert parse_episode_text("\ufeff" + json.dumps(GOOD), source="pasted")[0].id == "tiny-1"
