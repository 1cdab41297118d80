"""The DoND treatment keys (backend/dond/treatments.py, settings.py): validation, the one visibility rule, what the
model's prompt holds under each condition in en/de/it, the export columns and the pay rule for a model's failure."""

from __future__ import annotations

import pytest

from backend.dond import export as dond_export
from backend.dond import prompts, rules, scoring, settings, treatments
from backend.dond.game import GameConfig, replay
from backend.dond.instances import Instance, format_values
from backend.dond.treatments import LLMView, Treatment, llm_view
from tests.support.dond_events import INSTANCE, message, proposal

# Values no other part of the prompt can produce by chance: 7 and 3 for A, 1, 4 and 6 ... for B.
TABLE = Instance(("egg", "knife", "pen"), (1, 1, 1), (7, 3, 0), (1, 3, 6))
OTHER_LINE = {
    "en": "What each item is worth to the other player",
    "de": "So viele Punkte ist der anderen Person jeder Gegenstand wert",
    "it": "Quanti punti vale per l'altra persona ogni oggetto",
}


def test_keys_default_to_the_neutral_condition_and_show_in_the_admin_form():
    defaults = settings.dond_settings({})
    assert defaults.treatment == Treatment() == treatments.DEFAULT
    assert (defaults.value_visibility, defaults.agent_description, defaults.disclose_description) == ("own", "none", 0)
    assert (defaults.opponent_intro, defaults.model_failure_pay) == ("auto", "half_total")
    llm_form, human_form = settings.form_defaults(opponent="llm"), settings.form_defaults(opponent="human")
    for key in treatments.TREATMENT_COLUMNS:
        assert key in llm_form
    assert "value_visibility" in human_form and "opponent_intro" in human_form
    assert not {"agent_description", "disclose_description", "model_failure_pay"} & set(human_form)
    assert settings.KEYS.index("model_failure_pay") < settings.KEYS.index("llm_protocol")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"value_visibility": "all"}, "'value_visibility' must be one of own, llm_sees_other, person_sees_llm, both"),
        ({"agent_description": "genius"}, "'agent_description' must be one of none, average, expert, awful"),
        ({"disclose_description": "maybe"}, "'disclose_description'"),
        ({"opponent_intro": "robot"}, "'opponent_intro' must be one of auto, ai, person, neutral"),
        ({"model_failure_pay": "full"}, "'model_failure_pay' must be one of half_total, zero"),
        ({"opponent": "human", "value_visibility": "llm_sees_other"}, "must be own or both when opponent is human"),
        ({"opponent": "human", "value_visibility": "person_sees_llm"}, "must be own or both when opponent is human"),
    ],
)
def test_a_bad_treatment_key_is_refused_with_a_sentence_naming_it(config, message):
    with pytest.raises(ValueError, match="^The session key .*") as error:
        settings.dond_settings(config)
    assert message in str(error.value) and str(error.value).endswith(".")


def test_person_vs_person_may_show_both_tables():
    assert settings.dond_settings({"opponent": "human", "value_visibility": "both"}).value_visibility == "both"


def test_the_one_visibility_rule_for_each_side():
    table = {
        v: (treatments.sees_other_values(v, "person"), treatments.sees_other_values(v, "llm"))
        for v in treatments.VISIBILITIES
    }
    assert table == {
        "own": (False, False),
        "llm_sees_other": (False, True),
        "person_sees_llm": (True, False),
        "both": (True, True),
    }
    assert llm_view(Treatment(value_visibility="person_sees_llm"), "llm") == LLMView(False, True, "none")
    with pytest.raises(ValueError, match="own, both for self"):
        llm_view(Treatment(value_visibility="llm_sees_other"), "self")
    assert [treatments.introduced_as("auto", o) for o in ("llm", "human")] == ["ai", "person"]


@pytest.mark.parametrize("language", rules.LANGUAGES)
@pytest.mark.parametrize("mode", rules.MODES)
@pytest.mark.parametrize("visibility", treatments.VISIBILITIES)
def test_the_models_prompt_shows_the_others_values_exactly_when_it_sees_them(language, mode, visibility):
    config = GameConfig(mode=mode, language=language)
    view = llm_view(Treatment(value_visibility=visibility), "llm")
    chat = prompts.llm_messages([message("A", "hi")], "A", TABLE, config, view)
    text = " ".join(turn["content"] for turn in chat)
    other_table = format_values(TABLE.values_b, TABLE, language)
    own_table = format_values(TABLE.values_a, TABLE, language)
    assert own_table in text
    if view.sees_other:
        assert f"{OTHER_LINE[language]}: {other_table}" in text
    else:
        assert OTHER_LINE[language] not in text and other_table not in text
        egg, _, pen = TABLE.singular(language)
        assert f"{egg}: 1" not in text and f"{pen}: 6" not in text  # B's values of the egg and the pen
    rule = prompts.treatment_texts(language)["visibility"][view.visibility_rule]
    assert rule in text


@pytest.mark.parametrize("language", rules.LANGUAGES)
@pytest.mark.parametrize("description", treatments.AGENT_DESCRIPTIONS)
def test_the_agent_description_opens_the_initial_prompt(language, description):
    config = GameConfig(mode="semi", language=language)
    prompt = prompts.initial_prompt(INSTANCE, "B", config, LLMView(description=description))
    written = prompts.treatment_texts(language)["agent"]
    assert prompt.startswith(written[description] + "\n\n")
    neutral = written["none"]
    assert all(text.startswith(neutral) for text in written.values())  # every description is the representative's
    others = [text for name, text in written.items() if name != description and name != "none"]
    assert not any(text in prompt for text in others)


def test_descriptions_carry_no_gender_status_or_age():
    for language in rules.LANGUAGES:
        for text in prompts.treatment_texts(language)["agent"].values():
            lowered = text.lower()
            for word in ("he ", "she ", "man", "woman", "frau", "mann", "donna", "uomo", "years", "jahre", "anni"):
                assert word not in lowered, (language, text)


def test_the_scripted_agent_addresses_people_formally():
    state = replay([], GameConfig(mode="semi", language="de"), counts=INSTANCE.counts)
    german = prompts.scripted_policy(INSTANCE, "A", state)([])
    assert "Ihnen" in german and " dir" not in german and " du" not in german
    state = replay([], GameConfig(mode="semi", language="it"), counts=INSTANCE.counts)
    italian = prompts.scripted_policy(INSTANCE, "A", state)([])
    assert "Lei" in italian and " te" not in italian and "Ciao" not in italian


def row_of(events, treatment, *, opponent="llm"):
    config = GameConfig(mode="semi", language="en")
    return dond_export.game_row(
        events,
        TABLE,
        config,
        session_code="s",
        game_id="s-1",
        opponent=opponent,
        model="m",
        cell=1,
        focal_role="A",
        treatment=treatment,
    )


def test_the_export_appends_the_treatment_and_the_pay_rule_after_the_existing_columns():
    columns = dond_export.DOND_GAMES_COLUMNS
    columns = columns[: columns.index("pay_rule") + 1]  # later additions (integrity) come after these
    assert columns[-6:] == [
        "value_visibility",
        "agent_description",
        "disclose_description",
        "opponent_intro",
        "model_failure_pay",
        "pay_rule",
    ]
    assert columns.index("value_visibility") > columns.index("utility_b")
    treatment = Treatment("both", "expert", True, "neutral", "zero")
    row = row_of([proposal("A", (1, 0, 0)), proposal("B", (0, 0, 1))], treatment)
    assert [row[name] for name in columns[-6:]] == ["both", "expert", 1, "neutral", "zero", "mode_goal"]
    assert row["bonus_points"] == 7


@pytest.mark.parametrize(
    ("reason", "pay", "rule", "bonus"),
    [
        ("llm_invalid: over_ask", "half_total", "model_failure_half_total", 5),  # A's total 7 + 3 + 0 = 10
        ("llm_error: timeout", "zero", "model_failure_zero", 0),
        ("llm_budget: 60 model requests used", "half_total", "model_failure_half_total", 5),
        ("time_limit", "half_total", "mode_goal", 0),
        ("partner_left", "half_total", "mode_goal", 0),
    ],
)
def test_a_game_the_model_breaks_pays_by_the_rule_of_the_session(reason, pay, rule, bonus):
    abort = {"kind": "abort", "role": "B", "actor": "system", "text": reason}
    row = row_of([message("A", "hi"), abort], Treatment(model_failure_pay=pay))
    assert (row["outcome"], row["pay_rule"], row["bonus_points"]) == ("aborted", rule, bonus)


def test_the_pay_rule_applies_only_to_a_person_facing_a_model():
    abort = {"kind": "abort", "role": "B", "actor": "system", "text": "llm_invalid: over_ask"}
    row = row_of([abort], Treatment(), opponent="self")
    assert (row["pay_rule"], row["bonus_points"]) == ("mode_goal", 0)


def test_half_total_is_half_the_persons_total_value_rounded_up_and_stated_in_each_language():
    assert scoring.model_failure_bonus("half_total", (1, 2), (3, 2)) == 4  # 3 + 4 = 7: ceil(3.5)
    assert scoring.model_failure_bonus("half_total", TABLE.counts, TABLE.values_b) == 5
    for language in rules.LANGUAGES:
        text = scoring.model_failure_pay_statement("half_total", language, (1, 2), (3, 2))
        assert "4" in text and text.endswith(".")
        assert scoring.model_failure_pay_statement("zero", language, (1, 2), (3, 2)).endswith(".")
    assert "Sie" in scoring.model_failure_pay_statement("half_total", "de", (1,), (10,))
    assert "Lei" in scoring.model_failure_pay_statement("half_total", "it", (1,), (10,))


def test_a_game_stored_before_the_keys_reads_as_the_defaults():
    assert Treatment.from_json("") == Treatment.from_json(None) == Treatment()
    stored = Treatment("llm_sees_other", "awful", True, "ai", "zero")
    assert Treatment.from_json(stored.to_json()) == stored
    with pytest.raises(ValueError, match="value_visibility must be one of"):
        Treatment(value_visibility="mine")


@pytest.mark.parametrize(("language", "formal"), [("de", "„Sie“"), ("it", "del Lei")])
@pytest.mark.parametrize("mode", rules.MODES)
def test_the_model_is_asked_to_address_the_person_formally(language, mode, formal):
    assert formal in prompts.initial_prompt(INSTANCE, "A", GameConfig(mode=mode, language=language))
