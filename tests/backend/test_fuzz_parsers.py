"""Fuzzing every parser that reads outside input: only the documented errors may come out, never a crash.

Outside input: LLM proposals (DoND), reasoning logs (payoff_reasoning_eval), episode files (social_eval) and
rubric files. Each strategy mixes random text with fragments of the real format, so the fuzzer reaches deep into
each parser instead of failing at the first character.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from backend import dond
from backend.reasoning import logs as reasoning_logs
from backend.social import episodes, rubrics
from tests.support import examples

FUZZ = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])

INSTANCE = dond.generate_instance(7)


def _fragments(*pieces: str):
    """Text built from format fragments and arbitrary characters, in any order."""
    return st.lists(st.one_of(st.sampled_from(pieces), st.text(max_size=12)), max_size=20).map("".join)


PROPOSAL_TEXT = _fragments(
    "[",
    "]",
    "Proposal:",
    "Vorschlag:",
    "Proposta:",
    ",",
    " ",
    "0",
    "1",
    "2",
    "12",
    "-3",
    "two",
    "zwei",
    *[dond.item_word(item, "en") for item in INSTANCE.item_types],
    *[dond.item_word(item, "de", plural=True) for item in INSTANCE.item_types],
    "\n",
    "\u00a0",
    "[[",
    "]]",
)


@FUZZ
@given(text=PROPOSAL_TEXT, language=st.sampled_from(["en", "de", "it"]), number_words=st.booleans())
def test_proposal_parser_raises_only_move_errors(text, language, number_words):
    try:
        taken = dond.parse_proposal(text, INSTANCE, language, number_words=number_words)
    except dond.MoveError as error:
        assert str(error), "a parse error must say what was wrong"
    else:
        assert set(taken) == set(INSTANCE.item_types)
        for item, count in zip(INSTANCE.item_types, INSTANCE.counts, strict=True):
            assert 0 <= taken[item] <= count


LOG_TEXT = _fragments(
    "###ATTEMPT##0~",
    "###ATTEMPT##1~",
    "###ATTEMPT##x~",
    "RESPONSE##",
    "PREDICATES##",
    "FAILED QUERIES##",
    "CORRECTING PROMPT##",
    "~",
    "\n",
    "\r\n",
    "{R}",
    "{B}",
    "higher(5, 3).",
    "  ",
)


@FUZZ
@given(text=LOG_TEXT, filename=st.sampled_from([None, "m_pd_p1_1_5_0_3_0_1.txt", "bad name.txt", "x_zz_1.txt"]))
@example(text="###ATTEMPT##0~\nRESPONSE##{R}", filename=None)  # a log that parses: its choice is "R"
def test_log_parser_raises_only_log_parse_errors(text, filename):
    try:
        log = reasoning_logs.parse_log(text, filename, game="pd" if filename is None else None)
    except reasoning_logs.LogParseError as error:
        assert str(error)
    else:
        assert len(log.attempts) >= 1
        assert log.orig_choice in {"R", "B"}  # Attempt.choice: the letter of the last {R} or {B}


JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-20, 20) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=25,
)
EPISODE_KEYS = [
    "id",
    "scenario",
    "agents",
    "turns",
    "name",
    "background",
    "goal",
    "social_goal",
    "secret",
    "speaker",
    "text",
    "model_ratings",
    "environment",
    "messages",
    "rewards",
    "gold_ratings",
    "agent_profiles",
]


@st.composite
def episode_like(draw):
    """A JSON document shaped roughly like an episode file, with random holes and wrong types."""
    keys = draw(st.lists(st.sampled_from(EPISODE_KEYS), max_size=8, unique=True))
    return {key: draw(JSON_VALUE) for key in keys}


@FUZZ
@given(data=st.one_of(episode_like(), st.lists(episode_like(), max_size=3), JSON_VALUE))
def test_episode_parser_raises_only_episode_format_errors(data):
    try:
        parsed = episodes.parse_episode_data(data, source="fuzz.json")
    except episodes.EpisodeFormatError as error:
        assert "fuzz.json" in str(error), "the error must name the file"
    else:
        assert isinstance(parsed, list)


@FUZZ
@given(text=st.one_of(st.text(max_size=200), episode_like().map(json.dumps)))
def test_episode_text_parser_raises_only_episode_format_errors(text):
    try:
        episodes.parse_episode_text(text, source="fuzz.json")
    except episodes.EpisodeFormatError as error:
        assert "fuzz.json" in str(error)


@FUZZ
@given(data=st.one_of(JSON_VALUE, st.dictionaries(st.sampled_from(["dimensions", "name", "min", "max"]), JSON_VALUE)))
def test_rubric_parser_raises_only_rubric_errors(data):
    try:
        rubrics.rubric_from_dict(data, source="fuzz-rubric.json")
    except rubrics.RubricError as error:
        assert str(error)
