"""What an LLM player reads (backend/dond/prompts.py): the initial prompt, the chat rebuilt from events, re-prompts."""

from __future__ import annotations

import pytest

from backend.dond import errors, instances, prompts, proposals, rules
from backend.dond.game import GameConfig
from tests.support.dond_events import INSTANCE, message, proposal, violation

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
    assert [turn["role"] for turn in chat] == ["user", "assistant", "user", "assistant"]
    assert chat[0]["content"].startswith(prompts.initial_prompt(INSTANCE, "B", config))
    assert chat[0]["content"].endswith("\n\nI want apples.")  # the other's first message joins the rules
    assert chat[1]["content"] == "[Offer: 1 egg]" and chat[2]["content"] == "Fix it."
    # B sent the last message: B is not asked now and never sees the time-up notice (clembench's flow)
    assert chat[3]["content"] == "I like eggs."

    chat_a = prompts.llm_messages(events, "A", INSTANCE, config)
    assert [turn["role"] for turn in chat_a] == ["user", "assistant", "user"]
    assert chat_a[-1]["content"] == "I like eggs.\n\n" + prompts.notice("time_up", config)  # A proposes first

    chat_b = prompts.llm_messages(events + [proposal("A", (1, 0, 0), "[Proposal: 1 apple]")], "B", INSTANCE, config)
    assert [turn["role"] for turn in chat_b] == ["user", "assistant", "user", "assistant", "user"]
    assert chat_b[-1]["content"] == prompts.notice("other_proposed", config)  # the secret stays secret
    assert all(prompts.notice("time_up", config) not in turn["content"] for turn in chat_b)


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
