"""The reasoning-log parser and writer: every section combination, tolerance, errors with file and line, round trip."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.reasoning.games import GAMES, games_with, make_game
from backend.reasoning.logs import (
    Attempt,
    LogParseError,
    ReasoningLog,
    check_log_against_games,
    confusion_label,
    failed_queries_field,
    format_log,
    parse_failed_queries_field,
    parse_log,
    parse_log_name,
    parse_log_texts,
    read_log_folder,
    sentence_lines,
    split_sentences,
)
from harness import PROJECT_ROOT
from tests.support import examples

SAMPLE_LOGS = PROJECT_ROOT / "payoff_reasoning_eval" / "logs"
PD_NAME = "tester_pd_p1_1_5_0_3_4_1234.txt"

ONE_ATTEMPT = """###ATTEMPT##0~
RESPONSE##
With R I get 5$ against B. So R. {R}~

PREDICATES##
finally(goal(you, 5), do(choice(you, 'R'), do(choice(them, 'B'), s0))).
higher(5, 3).~

FAILED QUERIES##
~

"""


def attempt_text(index: int, choice: str, failed: list[str], *, last: bool = False) -> str:
    text = f"###ATTEMPT##{index}~\nRESPONSE##\nAttempt {index} says {{{choice}}}.~\n\n"
    text += "PREDICATES##\n" + "".join(f"{query}\n" for query in ["higher(5, 3).", *failed]).rstrip("\n") + "~\n\n"
    text += "FAILED QUERIES##\n" + "\n".join(failed) + "~\n\n"
    if failed:
        text += f"CORRECTING PROMPT##\nPoint {index}.\n\nThink again.~\n\n"
    return text


FIVE_ATTEMPTS = "".join(attempt_text(i, "RB"[i % 2], [f"q{i}a(1).", f"q{i}b(2)."]) for i in range(5))


def test_one_attempt():
    log = parse_log(ONE_ATTEMPT, PD_NAME)
    assert len(log.attempts) == 1
    (attempt,) = log.attempts
    assert attempt.response == "With R I get 5$ against B. So R. {R}"
    assert attempt.predicates == (
        "finally(goal(you, 5), do(choice(you, 'R'), do(choice(them, 'B'), s0))).",
        "higher(5, 3).",
    )
    assert attempt.failed_queries == ()
    assert attempt.correcting_prompt is None
    assert (log.orig_choice, log.final_choice, log.check_passed, log.final_check_passed) == ("R", "R", True, True)
    assert failed_queries_field(log) == ""
    assert (log.game, log.payoffs, log.model, log.filename) == ("pd", (1, 5, 0, 3), "tester", PD_NAME)


def test_five_attempts_with_correcting_prompts():
    log = parse_log(FIVE_ATTEMPTS, PD_NAME)
    assert [a.index for a in log.attempts] == [0, 1, 2, 3, 4]
    assert [a.choice for a in log.attempts] == ["R", "B", "R", "B", "R"]
    assert log.attempts[2].failed_queries == ("q2a(1).", "q2b(2).")
    assert log.attempts[4].correcting_prompt == "Point 4.\n\nThink again."
    assert log.attempts[1].predicates == ("higher(5, 3).", "q1a(1).", "q1b(2).")
    assert not log.check_passed and not log.final_check_passed
    assert failed_queries_field(log) == ":".join(f"{i}#q{i}a(1).q{i}b(2)." for i in range(5))


def test_no_predicates_means_no_failed_queries_section():
    text = "###ATTEMPT##0~\nRESPONSE##\nI pick B. {B}~\n\nPREDICATES##\n~\n\n"
    (attempt,) = parse_log(text).attempts
    assert attempt.predicates == ()
    assert attempt.failed_queries is None and attempt.correcting_prompt is None
    assert attempt.check_passed


def test_response_only_attempt():
    (attempt,) = parse_log("###ATTEMPT##0~\nRESPONSE##\nB. {B}~\n").attempts
    assert (attempt.response, attempt.predicates, attempt.failed_queries) == ("B. {B}", None, None)


def test_failed_queries_without_correcting_prompt_on_last_attempt():
    text = attempt_text(0, "B", ["lower(3, 1)."]) + attempt_text(1, "R", ["higher(0, 1)."]).split("CORRECTING")[0]
    log = parse_log(text)
    assert log.attempts[0].correcting_prompt == "Point 0.\n\nThink again."
    assert log.attempts[1].correcting_prompt is None
    assert log.attempts[1].failed_queries == ("higher(0, 1).",)
    assert failed_queries_field(log) == "0#lower(3, 1).:1#higher(0, 1)."
    assert (log.orig_choice, log.final_choice) == ("B", "R")


def test_crlf_and_trailing_whitespace_give_the_same_log():
    plain = parse_log(FIVE_ATTEMPTS)
    messy = "\r\n".join(line + ("  \t" if number % 3 else "") for number, line in enumerate(FIVE_ATTEMPTS.split("\n")))
    assert "\r\n" in messy
    assert parse_log(messy) == plain


def test_missing_final_tilde_and_missing_attempt_tilde():
    text = ONE_ATTEMPT.rstrip().removesuffix("~").replace("###ATTEMPT##0~", "###ATTEMPT##0")
    assert not text.endswith("~")
    assert parse_log(text) == parse_log(ONE_ATTEMPT)
    cut = "###ATTEMPT##0~\nRESPONSE##\nNo tilde here. {B}"
    assert parse_log(cut).attempts[0].response == "No tilde here. {B}"


def test_choice_is_the_last_braced_letter():
    log = parse_log("###ATTEMPT##0~\nRESPONSE##\nEither {R} or {B}? I say {R}, final.~\n")
    assert log.orig_choice == "R"
    assert parse_log("###ATTEMPT##0~\nRESPONSE##\n{R} then {B}~\n").orig_choice == "B"


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("", 1, "empty"),
        ("\n\n  \n", 1, "empty"),
        ("hello\n###ATTEMPT##0~\nRESPONSE##\n{B}~\n", 1, "text before"),
        ("RESPONSE##\n{B}~\n", 1, "before the first"),
        ("###ATTEMPT##0~\nRESPONSE##\n{B}~\n###ATTEMPT##2~\nRESPONSE##\n{B}~\n", 4, "attempt 2 where attempt 1"),
        ("###ATTEMPT##1~\nRESPONSE##\n{B}~\n", 1, "attempt 1 where attempt 0"),
        ("###ATTEMPT##zero~\nRESPONSE##\n{B}~\n", 1, "malformed attempt header"),
        ("###ATTEMPT##0~\nRESPONSE##\n{B}~\nRESPONSE##\n{R}~\n", 4, "second RESPONSE##"),
        ("###ATTEMPT##0~\nRESPONSE##\n{B}~\nFAILED QUERIES##\n~\nPREDICATES##\n~\n", 6, "PREDICATES## after FAILED"),
        ("###ATTEMPT##0~\nPREDICATES##\nq.~\n", 1, "no RESPONSE## section"),
        ("###ATTEMPT##0~\nstray words\nRESPONSE##\n{B}~\n", 2, "text before the RESPONSE## header"),
        ("###ATTEMPT##0~\nRESPONSE##\n{B}~\n###ATTEMPT##1~\n\nRESPONSE##\nno choice~\n", 6, "no choice"),
    ],
)
def test_errors_name_file_and_line(text, line, fragment):
    with pytest.raises(LogParseError) as caught:
        parse_log(text, "some/dir/broken.txt")
    error = caught.value
    assert (error.filename, error.line) == ("broken.txt", line)
    assert fragment in error.message
    assert str(error).startswith(f"broken.txt, line {line}: ")
    assert isinstance(error, ValueError)


def test_choice_can_be_optional():
    log = parse_log("###ATTEMPT##0~\nRESPONSE##\nundecided~\n", require_choice=False)
    assert log.orig_choice is None


def test_game_from_file_name_or_from_arguments():
    assert parse_log(ONE_ATTEMPT, "log_1.txt").game is None
    given_game = parse_log(ONE_ATTEMPT, "log_1.txt", game="sh", payoffs=[1, 3, 0, 5])
    assert (given_game.game, given_game.payoffs, given_game.model) == ("sh", (1, 3, 0, 5), None)
    assert parse_log(ONE_ATTEMPT, PD_NAME, game="pd").game == "pd"
    with pytest.raises(LogParseError, match="file name says game 'pd', but game 'sh'"):
        parse_log(ONE_ATTEMPT, PD_NAME, game="sh")
    with pytest.raises(LogParseError, match="payoffs"):
        parse_log(ONE_ATTEMPT, PD_NAME, payoffs=(1, 3, 0, 5))
    with pytest.raises(ValueError, match="four row payoffs"):
        parse_log(ONE_ATTEMPT, "log_1.txt", payoffs=(1, 2))


def test_log_names():
    name = parse_log_name("gemini-1.0-pro_sh_p1_1_3_0_5_29_2666.txt")
    assert (name.model, name.game, name.prompt, name.payoffs, name.repetition, name.tag) == (
        "gemini-1.0-pro",
        "sh",
        "p1",
        (1, 3, 0, 5),
        29,
        "2666",
    )
    assert parse_log_name("my_model_v2_HD_p3_0_5.5_1_3_0_77.txt").payoffs == (0, 5.5, 1, 3)
    assert parse_log_name("my_model_v2_HD_p3_0_5.5_1_3_0_77.txt").game == "hd"
    assert parse_log_name("gpt_pd_p1_1_5_0_3_0.txt") is None


def test_failed_queries_field_round_trip():
    log = parse_log(FIVE_ATTEMPTS)
    blocks = parse_failed_queries_field(failed_queries_field(log))
    assert blocks == {i: f"q{i}a(1).q{i}b(2)." for i in range(5)}
    with pytest.raises(ValueError, match="failed_queries"):
        parse_failed_queries_field("q1.:1#q2.")


def test_confusion_label_truth_table_and_validation():
    assert {(t, p): confusion_label(t, p) for t in (0, 1) for p in (False, True)} == {
        (1, True): "TP",
        (1, False): "FN",
        (0, True): "FP",
        (0, False): "TN",
    }
    with pytest.raises(ValueError, match="orig_cor"):
        confusion_label(2, True)


def test_sentences():
    text = "### Payoffs\n1. If I pick R, I get 5$. They get 0$!\n\nIs 3.5 more than 3? Yes. e.g. here. {B}"
    assert sentence_lines(text)[0] == ("### ", ["Payoffs"])
    assert split_sentences(text) == [
        "Payoffs",
        "If I pick R, I get 5$.",
        "They get 0$!",
        "Is 3.5 more than 3?",
        "Yes. e.g. here.",
        "{B}",
    ]
    assert split_sentences("Use C# here. Fine.") == ["Use C＃ here.", "Fine."]
    assert split_sentences("\n  \n") == []


# ---- writing ----


def test_writer_refuses_what_the_format_cannot_hold():
    with pytest.raises(ValueError, match="reads as a header"):
        format_log(ReasoningLog((Attempt(0, "fine\nPREDICATES## oops {B}"),)))
    with pytest.raises(ValueError, match="indices"):
        format_log(ReasoningLog((Attempt(1, "{B}"),)))
    with pytest.raises(ValueError, match="one non-empty line"):
        format_log(ReasoningLog((Attempt(0, "{B}", ("a.\nb.",)),)))
    with pytest.raises(ValueError, match="at least one attempt"):
        format_log(ReasoningLog(()))


def _is_header_like(line: str) -> bool:
    return line.startswith(("###ATTEMPT##", "RESPONSE##", "PREDICATES##", "FAILED QUERIES##", "CORRECTING PROMPT##"))


_line = st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)), max_size=30).map(str.rstrip)
_line = _line.filter(lambda line: not _is_header_like(line)) | st.sampled_from(
    ["~", "a ~", "{R}", "x {B}~", "RESPONSE"]
)
_text = st.lists(_line, max_size=6).map(lambda lines: "\n".join(lines).strip("\n"))
_query = st.text(st.characters(blacklist_categories=("Cs", "Zs", "Cc", "Zl", "Zp")), min_size=1, max_size=20).filter(
    lambda query: query == query.strip() and not _is_header_like(query)
)
_queries = st.none() | st.lists(_query, max_size=4).map(tuple)


@st.composite
def logs(draw):
    attempts = []
    for index in range(draw(st.integers(1, 5))):
        attempts.append(
            Attempt(
                index=index,
                response=draw(_text),
                predicates=draw(_queries),
                failed_queries=draw(_queries),
                correcting_prompt=draw(st.none() | _text),
            )
        )
    return ReasoningLog(tuple(attempts))


@settings(max_examples=examples(300), deadline=None)
@given(logs())
def test_write_then_parse_is_lossless(log):
    assert parse_log(format_log(log), require_choice=False) == log


@settings(max_examples=examples(150), deadline=None)
@given(logs(), st.data())
def test_crlf_trailing_spaces_and_missing_last_tilde_are_tolerated(log, data):
    lines = format_log(log).split("\n")
    padding = data.draw(st.lists(st.sampled_from(["", " ", "\t", "  "]), min_size=len(lines), max_size=len(lines)))
    text = data.draw(st.sampled_from(["\n", "\r\n"])).join(line + pad for line, pad in zip(lines, padding, strict=True))
    last = [value for value in vars(log.attempts[-1]).values() if value is not None][-1]
    last_text = "\n".join(last) if isinstance(last, tuple) else str(last)
    # Without its closing "~", a text that itself ends in "~" cannot be told apart: only drop it otherwise.
    if not last_text.endswith("~") and data.draw(st.booleans()):
        text = text.rstrip().removesuffix("~")
    assert parse_log(text, require_choice=False) == log


# ---- sample logs shipped with the app ----


def test_sample_logs_parse_and_cover_the_games():
    logs_found, errors = read_log_folder(SAMPLE_LOGS, games=GAMES)
    assert errors == []
    assert {log.game for log in logs_found} == {"pd", "sh", "hd"}
    attempt_counts = sorted(len(log.attempts) for log in logs_found)
    assert 1 in attempt_counts and 5 in attempt_counts and len(set(attempt_counts)) >= 3
    assert any(log.attempts[0].predicates == () and log.attempts[0].failed_queries is None for log in logs_found)
    assert {log.check_passed for log in logs_found} == {True, False}
    for log in logs_found:
        assert format_log(log) == (SAMPLE_LOGS / log.filename).read_text(encoding="utf-8")


def test_batch_parsing_reports_every_bad_file():
    texts = {
        "a_pd_p1_1_5_0_3_0_1.txt": ONE_ATTEMPT,
        "b_xx_p1_1_5_0_3_0_2.txt": ONE_ATTEMPT,
        "c_pd_p1_9_9_9_9_0_3.txt": ONE_ATTEMPT,
        "plain.txt": ONE_ATTEMPT,
        "broken_pd_p1_1_5_0_3_0_4.txt": "junk\n" + ONE_ATTEMPT,
    }
    logs_found, errors = parse_log_texts(texts, games=GAMES)
    assert [log.filename for log in logs_found] == ["a_pd_p1_1_5_0_3_0_1.txt"]
    messages = {error.filename: str(error) for error in errors}
    assert "unknown game 'xx'" in messages["b_xx_p1_1_5_0_3_0_2.txt"]
    assert "(9, 9, 9, 9)" in messages["c_pd_p1_9_9_9_9_0_3.txt"]
    assert "game is unknown" in messages["plain.txt"]
    assert messages["broken_pd_p1_1_5_0_3_0_4.txt"].startswith("broken_pd_p1_1_5_0_3_0_4.txt, line 1:")
    with_default, errors = parse_log_texts({"plain.txt": ONE_ATTEMPT}, games=GAMES, default_game="sh")
    assert errors == [] and with_default[0].game == "sh"


def test_read_log_folder_reports_undecodable_files(tmp_path):
    (tmp_path / "ok_pd_p1_1_5_0_3_0_1.txt").write_text(ONE_ATTEMPT, encoding="utf-8")
    (tmp_path / "bad_pd_p1_1_5_0_3_0_2.txt").write_bytes(b"\xff\xfe\x00junk")
    logs_found, errors = read_log_folder(tmp_path, games=GAMES)
    assert len(logs_found) == 1 and len(errors) == 1 and "UTF-8" in str(errors[0])
    with pytest.raises(ValueError, match="does not exist"):
        read_log_folder(tmp_path / "missing", games=GAMES)


# ---- games ----


def test_builtin_matrices_follow_the_protocol_tables():
    # Row player's payoff per profile, read off the protocol's Tables 1-3 (R row/column first).
    assert GAMES["pd"].row_payoffs() == (1, 5, 0, 3)
    assert GAMES["sh"].row_payoffs() == (1, 3, 0, 5)
    assert GAMES["hd"].row_payoffs() == (0, 5, 1, 3)
    for game in GAMES.values():  # symmetric games: the column player's payoff is the transposed row payoff
        for profile, (_row_payoff, column) in game.payoffs.items():
            assert game.payoffs[profile[::-1]][0] == column
    assert GAMES["hd"].table()[0] == {"action": "R", "label": "R (Hawk)", "cells": ["(0, 0)", "(5, 1)"]}
    assert GAMES["pd"].label("B") == "B (Confess)"


def test_games_from_config_and_validation():
    games = games_with(
        {"pd": {"name": "Cheaper PD", "payoffs": {"RR": [2, 2], "RB": [6, 0], "BR": [0, 6], "BB": [4, 4]}}}
    )
    assert games["pd"].row_payoffs() == (2, 6, 0, 4) and games["pd"].label("R") == "R"
    assert GAMES["pd"].row_payoffs() == (1, 5, 0, 3)
    log = parse_log(ONE_ATTEMPT, PD_NAME)
    with pytest.raises(LogParseError, match="row payoffs"):
        check_log_against_games(log, games)
    for bad in (
        {"payoffs": {"RR": [1, 1]}},
        {"payoffs": {"RR": [1], "RB": [1, 1], "BR": [1, 1], "BB": [1, 1]}},
        {"actions": {"X": "?"}, "payoffs": {"RR": [1, 1], "RB": [1, 1], "BR": [1, 1], "BB": [1, 1]}},
        {"payoffs": {"RR": ["1", 1], "RB": [1, 1], "BR": [1, 1], "BB": [1, 1]}},
    ):
        with pytest.raises(ValueError):
            make_game("xy", bad)
    with pytest.raises(ValueError, match="lowercase identifier"):
        make_game("Bad Code", {"payoffs": {}})
