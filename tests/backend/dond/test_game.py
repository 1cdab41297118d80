"""DoND turn rules derived from events (backend/dond/game.py): turns, phases, violations, aborts, cells."""

from __future__ import annotations

import pytest

from backend.dond import errors, game
from backend.dond.game import GameConfig, replay
from tests.support.dond_events import INSTANCE, message, proposal, violation


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
    # clembench's order: the opener (B) received A's last message and proposes first; A, who sent it, waits
    assert state.phase == "propose" and state.to_act == ("B",)
    assert state.must_propose("A") and state.must_propose("B") and not state.may_message("A")
    assert state.may_propose("B") and not state.may_propose("A")
    with pytest.raises(errors.OutOfTurnError):
        game.check_move(state, proposal("A", (0, 0, 0)))
    after = game.check_move(state, proposal("B", (0, 0, 0)))
    assert after.to_act == ("A",) and after.may_propose("A")


def test_a_game_stored_in_the_old_order_still_reads_while_a_new_move_in_that_order_is_refused():
    """Before clembench's flow the non-opener, having sent the last message, proposed first. Such stored games must
    still replay (exports, the person's view, the model's prompt); only a new move is held to the order."""
    config = GameConfig(mode="semi", language="en", opener="A", max_messages=1)
    chat = [message("A"), message("B")]
    old_order = [*chat, proposal("B", (0, 0, 1)), proposal("A", (3, 0, 0))]
    state = replay(old_order, config, counts=INSTANCE.counts)
    assert state.finished and state.outcome == "success" and state.proposals["B"] == (0, 0, 1)
    assert game.participant_view(old_order, "A", config, counts=INSTANCE.counts)["finished"]
    with pytest.raises(errors.OutOfTurnError):
        game.check_move(replay(chat, config), proposal("B", (0, 0, 1)))


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
