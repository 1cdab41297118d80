"""DoND turn rules derived from events, the LLM's prompts, the scripted agent and the export rows."""

from __future__ import annotations

import json

import pytest

from backend.core import csvio
from backend.core.csvio import iso_utc
from backend.dond import errors, game, instances, prompts, proposals, rules, scoring
from backend.dond import export as dond_export
from backend.dond.game import GameConfig, replay

INSTANCE = instances.Instance(("apple", "knife", "egg"), (3, 2, 1), (2, 2, 0), (0, 3, 4))


def message(role, text="hello"):
    return {"kind": "message", "role": role, "text": text}


def proposal(role, counts, text=""):
    return {"kind": "proposal", "role": role, "proposal": list(counts), "text": text}


def violation(role, text="oops", error_kind="format"):
    return {"kind": "violation", "role": role, "text": text, "error_kind": error_kind}


def test_players_alternate_from_the_opener_until_the_messages_are_used():
    config = GameConfig(mode="semi", language="en", opener="B", max_messages=2)
    events = []
    expected_turns = ["B", "A", "B", "A"]
    for turn in expected_turns:
        state = replay(events, config)
        assert state.phase == "chat" and state.chat_turn == turn and state.to_act == (turn,)
        assert state.may_message(turn) and not state.may_message(game.other_role(turn))
        events.append(message(turn))
    state = replay(events, config)
    assert state.phase == "propose" and state.to_act == ("A", "B")
    assert state.must_propose("A") and state.must_propose("B") and not state.may_message("A")


def test_a_proposal_ends_the_chat_and_the_other_must_propose():
    config = GameConfig(mode="coop", language="en")
    state = replay([message("A"), proposal("B", (0, 2, 1))], config, counts=INSTANCE.counts)
    assert state.phase == "propose" and state.to_act == ("A",)
    with pytest.raises(errors.ProposalRequiredError):
        game.apply_event(state, message("A"))
    with pytest.raises(errors.AlreadyProposedError):
        game.apply_event(state, proposal("B", (0, 0, 0)))
    done = game.apply_event(state, proposal("A", (3, 0, 0)))
    assert done.finished and done.outcome == "success" and done.to_act == ()
    conflict = game.apply_event(state, proposal("A", (3, 1, 0)))
    assert conflict.outcome == "lose"
    with pytest.raises(errors.GameOverError):
        game.apply_event(done, message("A"))


@pytest.mark.parametrize(
    ("events", "bad", "error"),
    [
        ([], message("B"), errors.OutOfTurnError),  # A opens by default
        ([], proposal("B", (0, 0, 0)), errors.OutOfTurnError),
        ([message("A")], message("A"), errors.OutOfTurnError),
        ([], message("A", "   "), errors.EmptyMessageError),
        ([], message("A", "x" * 1001), errors.MessageTooLongError),
        ([], {"kind": "message", "role": "C", "text": "hi"}, ValueError),
    ],
)
def test_moves_out_of_turn_or_malformed_are_rejected(events, bad, error):
    state = replay(events, GameConfig(mode="semi", language="en"))
    with pytest.raises(error):
        game.apply_event(state, bad)


def test_reprompt_budget_counts_consecutive_violations_only():
    config = GameConfig(mode="semi", language="en", llm_reprompts=2)
    state = replay([violation("A"), violation("A")], config)
    assert state.violations["A"] == 2 and not state.reprompts_exhausted("A")
    assert replay([violation("A"), violation("A"), violation("A")], config).reprompts_exhausted("A")
    reset = replay([violation("A"), violation("A"), message("A"), violation("B"), violation("A")], config)
    assert reset.strikes["A"] == 1 and reset.violations["A"] == 3 and not reset.reprompts_exhausted("A")
    strict = GameConfig(mode="semi", language="en", llm_reprompts=0)  # the reference game: abort at once
    assert replay([violation("A")], strict).reprompts_exhausted("A")


def test_abort_finishes_the_game_and_keeps_the_reason():
    state = replay([message("A"), {"kind": "abort", "role": "B", "text": "partner left"}], GameConfig("semi", "en"))
    assert state.finished and state.outcome == "aborted" and state.aborted_by == "B"
    assert state.abort_reason == "partner left" and state.phase == "finished"


def test_log_events_do_not_change_the_state():
    config = GameConfig(mode="semi", language="en")
    logs = [{"kind": "llm_call", "role": "A"}, {"kind": "input_rejected", "role": "B"}, {"kind": "notice"}]
    assert replay(logs, config) == replay([], config)


def test_config_validation():
    for bad in (dict(mode="x"), dict(language="fr"), dict(opener="C"), dict(max_messages=0), dict(llm_reprompts=-1)):
        with pytest.raises(ValueError):
            GameConfig(**{"mode": "semi", "language": "en", **bad})


def test_cells_cover_both_value_functions_and_both_openers():
    roles = {game.cell_roles(cell) for cell in (1, 2, 3, 4)}
    assert {focal for focal, _ in roles} == {"A", "B"} and len(roles) == 4
    assert [game.cell_for_game(i) for i in range(8)] == [1, 2, 3, 4, 1, 2, 3, 4]
    with pytest.raises(ValueError):
        game.cell_roles(5)


# ---------------------------------------------------------------------------------------------------------------
# Prompts


@pytest.mark.parametrize("language", rules.LANGUAGES)
@pytest.mark.parametrize("mode", rules.MODES)
def test_initial_prompt_states_goal_items_values_and_format(language, mode):
    config = GameConfig(mode=mode, language=language, max_messages=4)
    prompt = prompts.initial_prompt(INSTANCE, "B", config)
    assert instances.format_items(INSTANCE, language) in prompt
    assert instances.format_values(INSTANCE.values_b, INSTANCE, language) in prompt
    assert proposals.PROPOSAL_PREFIX[language] in prompt and " 4 " in prompt and "$" not in prompt
    goals = {m: prompts.initial_prompt(INSTANCE, "B", GameConfig(mode=m, language=language)) for m in rules.MODES}
    assert len(set(goals.values())) == 3  # the modes differ in the goal


def test_llm_messages_rebuild_the_chat_from_the_events():
    config = GameConfig(mode="semi", language="en", opener="A", max_messages=1)
    events = [
        message("A", "I want apples."),
        {"kind": "llm_call", "role": "B"},
        violation("B", "[Offer: 1 egg]"),
        {"kind": "reprompt", "role": "B", "text": "Fix it."},
        message("B", "I like eggs."),
    ]
    chat = prompts.llm_messages(events, "B", INSTANCE, config)
    assert [turn["role"] for turn in chat] == ["user", "assistant", "user", "assistant", "user"]
    assert chat[0]["content"].startswith(prompts.initial_prompt(INSTANCE, "B", config))
    assert chat[0]["content"].endswith("\n\nI want apples.")  # the other's first message joins the rules
    assert chat[1]["content"] == "[Offer: 1 egg]" and chat[2]["content"] == "Fix it."
    assert chat[4]["content"] == prompts.notice("time_up", config)  # both messages used

    chat_a = prompts.llm_messages(events + [proposal("B", (0, 0, 1), "[Proposal: 1 egg]")], "A", INSTANCE, config)
    assert [turn["role"] for turn in chat_a] == ["user", "assistant", "user"]
    assert "1 egg" not in chat_a[-1]["content"]  # the secret stays secret
    notices = prompts.notice("time_up", config) + "\n\n" + prompts.notice("other_proposed", config)
    assert chat_a[-1]["content"] == "I like eggs.\n\n" + notices


def test_other_proposed_notice_replaces_the_proposal():
    config = GameConfig(mode="coop", language="de")
    chat = prompts.llm_messages([message("A", "Hallo"), proposal("B", (0, 0, 1))], "A", INSTANCE, config)
    assert chat[-1] == {"role": "user", "content": prompts.notice("other_proposed", config)}


@pytest.mark.parametrize("language", rules.LANGUAGES)
def test_reprompts_say_what_was_wrong_in_the_game_language(language):
    config = GameConfig(mode="semi", language=language)
    texts = set()
    for text in ("[Offer: 1 egg]", "[%s 1 pear]", "[%s 9 apples]", "[%s two apples]", "[%s 1 egg, 1 egg]"):
        text = text.replace("%s", proposals.PROPOSAL_PREFIX[language])
        try:
            proposals.parse_proposal(text, INSTANCE, language)
        except errors.MoveError as error:
            reprompt = prompts.reprompt_text(error, INSTANCE, config)
            assert "$" not in reprompt
            texts.add(reprompt)
    assert len(texts) == 5
    over_ask = prompts.reprompt_text(errors.OverAskError("", item="apple", asked=9, available=3), INSTANCE, config)
    assert "9" in over_ask and "3" in over_ask and INSTANCE.plural(language)[0] in over_ask


# ---------------------------------------------------------------------------------------------------------------
# Scripted agent and export rows


def play_scripted(instance, config):
    """Both players scripted: the events of a whole game."""
    events = []
    state = replay(events, config, counts=instance.counts)
    while not state.finished:
        role = state.to_act[0]
        reply = prompts.scripted_policy(instance, role, state)(prompts.llm_messages(events, role, instance, config))
        move = proposals.parse_reply(reply, instance, config.language, must_propose=state.must_propose(role))
        if move.kind == "proposal":
            events.append(proposal(role, proposals.proposal_vector(move.proposal, instance), reply))
        else:
            events.append(message(role, reply))
        events[-1]["created_at"] = 1000.0 + len(events)
        state = replay(events, config, counts=instance.counts)
    return events, state


@pytest.mark.parametrize("language", rules.LANGUAGES)
@pytest.mark.parametrize("mode", rules.MODES)
def test_scripted_agents_finish_every_mode_and_language(language, mode):
    for seed in range(5):
        instance = instances.generate_instance(seed)
        config = GameConfig(mode=mode, language=language, opener="AB"[seed % 2])
        events, state = play_scripted(instance, config)
        assert state.outcome in ("success", "lose")
        assert state.messages_sent == {"A": 2, "B": 2} or state.phase == "finished"
        row = dond_export.game_row(
            events,
            instance,
            config,
            session_code="s",
            game_id=f"g{seed}",
            opponent="self",
            model="scripted",
            cell=1,
            focal_role="A",
        )
        assert list(row) == dond_export.DOND_GAMES_COLUMNS
        assert row["outcome"] == state.outcome and row["ended_at"] == iso_utc(max(e["created_at"] for e in events))
        assert json.loads(row["proposal_a"]) == list(state.proposals["A"])
        assert 0 <= row["main_score"] <= 100


def test_game_row_of_an_aborted_and_an_unfinished_game():
    config = GameConfig(mode="semi", language="en")
    events = [
        message("A"),
        violation("B"),
        {"kind": "reprompt", "role": "B", "text": "again"},
        {"kind": "llm_call", "role": "B", "prompt_tokens": 10, "completion_tokens": 5},
        {"kind": "abort", "role": "B", "text": "too many\ninvalid replies"},
    ]
    row = dond_export.game_row(
        events, INSTANCE, config, session_code="s", game_id="g", opponent="llm", model="m", cell=3, focal_role="B"
    )
    assert (row["outcome"], row["aborted"], row["success"], row["main_score"]) == ("aborted", 1, 0, "")
    assert row["abort_reason"] == "too many\\ninvalid replies" and row["aborted_by"] == "B"
    assert (row["violations_b"], row["reprompts"], row["llm_calls"], row["llm_tokens"]) == (1, 1, 1, 15)
    assert row["bonus_points"] == 0 and row["points_focal"] == ""
    unfinished = dond_export.game_row(
        events[:1], INSTANCE, config, session_code="s", game_id="g", opponent="llm", model="m", cell=3, focal_role="B"
    )
    assert unfinished["outcome"] == "unfinished" and unfinished["main_score"] == "" and unfinished["ended_at"] == ""


@pytest.mark.parametrize(("mode", "bonus"), [("semi", 10), ("coop", 14), ("comp", 6)])
def test_bonus_follows_the_mode_objective_of_the_focal_player(mode, bonus):
    config = GameConfig(mode=mode, language="en")
    events = [proposal("A", (2, 0, 0)), proposal("B", (0, 2, 1))]  # A: 4 points, B: 10 points
    row = dond_export.game_row(
        events, INSTANCE, config, session_code="s", game_id="g", opponent="llm", model="m", cell=3, focal_role="B"
    )
    assert (row["points_focal"], row["points_opponent"], row["bonus_points"]) == (10, 4, bonus)
    flipped = dond_export.game_row(
        events, INSTANCE, config, session_code="s", game_id="g", opponent="llm", model="m", cell=1, focal_role="A"
    )
    assert flipped["bonus_points"] == max(0, scoring.goal_score(mode, 4, 10))


def test_event_rows_escape_multiline_text_and_round_trip():
    text = 'Line 1\nLine 2 with "quotes", commas and a backslash \\n'
    row = dond_export.event_row(
        {"kind": "message", "role": "A", "text": text, "created_at": 1.5}, session_code="s", game_id="g", seq=3
    )
    assert "\n" not in row["text"] and csvio.unescape_text(row["text"]) == text
    assert list(row) == dond_export.DOND_EVENTS_COLUMNS and row["seq"] == 3
    assert row["created_at"] == "1970-01-01T00:00:01.500Z"


def test_failed_calls_show_the_person_the_model_was_unreachable_never_a_broken_rule():
    config = GameConfig(mode="semi", language="en", opener="A", llm_reprompts=2)
    failed = {"kind": "llm_error", "role": "B", "error_kind": "timeout"}
    events = [message("A"), failed, failed]
    view = game.participant_view(events, "A", config, counts=INSTANCE.counts)
    assert [item.get("notice") for item in view["chat"]] == [None, "unreachable", "unreachable"]
    assert view["waiting_for_other"] and not view["finished"]  # the model is asked again
    # The third failure ends the game: its abort says why, with no "asked again" just before.
    events += [failed, {"kind": "abort", "role": "B", "text": "llm_error: timeout"}]
    view = game.participant_view(events, "A", config, counts=INSTANCE.counts)
    assert [item.get("notice") for item in view["chat"]][1:] == ["unreachable", "unreachable", "aborted"]
    assert view["chat"][-1]["reason"] == "llm_error" and view["finished"]
    state = replay(events, config, counts=INSTANCE.counts)
    assert state.violations == {"A": 0, "B": 0} and state.llm_errors == {"A": 0, "B": 3}


def test_every_language_tells_an_unreachable_model_apart_from_a_broken_rule():
    from dond.texts import TEXTS

    for language, text in TEXTS.items():
        for key in ("notice_unreachable", "reason_llm_error"):
            assert text[key] and text[key] != TEXTS["en"][key] or language == "en", (language, key)
        assert text["notice_unreachable"] != text["notice_retry"]
        assert text["reason_llm_error"] != text["reason_llm_invalid"]
