"""The bias_tests export's columns: the LLM runner's (``backend.bias.export.EXPORT_COLUMNS``) without the model-only
ones, the study columns first, the chosen option's position and the confidence on the slider's own scale."""

from __future__ import annotations

from backend.bias.export import EXPORT_COLUMNS

from .columns import INTEGRITY, PEOPLE, STUDY, Column, Export, by_name, pick

# The LLM runner's columns that are empty for every person (a model's run, reply and how it answered).
MODEL_ONLY_COLUMNS = (
    "model",
    "run",
    "option_probabilities",
    "attempts",
    "raw_reply",
    "answer_mode",
    "answer_source",
    "problem",
    "reasoning",
    "cost",
    "cached_calls",
)

KNOWN = by_name(
    *STUDY,
    *PEOPLE,
    INTEGRITY,
    Column("respondent_kind", "text", "", "person (this app) or model (the LLM runner's files)."),
    Column("respondent_id", "text", "", "Who answered: the participant code for a person."),
    Column("item_set", "text", "", "The set of tests the session used."),
    Column("item_id", "text", "", "The test (item)."),
    Column("bias", "text", "", "The bias tested: anchoring, halo, loss_aversion, confirmation or attention_check."),
    Column("version", "text", "", "Which version the person saw: control, treatment, or check."),
    Column("position", "integer", "", "The test's place in the person's sequence (1 = first)."),
    Column("status", "text", "", "answered for a person's stored answer."),
    Column(
        "answer",
        "number",
        "the option's value",
        "The value of the option chosen (an amount, 1/0 for accept or agree; the attention check's options have "
        "their position as value); empty on the argument page.",
    ),
    Column("answer_label", "text", "", "The chosen option's text as shown."),
    Column(
        "option_index",
        "integer",
        "",
        "Which option was chosen: its position among the options as shown (0 = first); empty on the argument page.",
    ),
    Column("options", "JSON", "", "The values of the options offered, in the order shown."),
    Column(
        "confidence",
        "number",
        "percent (0-100)",
        "How sure the person said they were, on the slider they saw (0-100); empty when not asked.",
    ),
    Column(
        "confidence_max",
        "number",
        "",
        "The top of the confidence scale (100 for the slider); the LLM runner's files, without this column, use 0-1.",
    ),
    Column("confidence_source", "text", "", "slider for a person's confidence; empty without confidence."),
    Column("anchor", "number", "", "Anchoring tests: the anchor shown."),
    Column("lambda", "number", "", "Loss-aversion tests: the loss-aversion ratio the gamble implies."),
    Column("experience", "text", "", "Halo tests: the experience described."),
    Column("arguments_shown", "JSON", "", "Confirmation tests: the argument ids in the order shown."),
    Column("arguments_selected", "JSON", "", "Confirmation tests: the argument ids chosen."),
    Column("pro_selected", "integer", "arguments", "Confirmation tests: arguments for the stance chosen."),
    Column("con_selected", "integer", "arguments", "Confirmation tests: arguments against it chosen."),
    Column("n_arguments", "integer", "arguments", "Confirmation tests: arguments shown."),
    Column("is_correct", "0/1", "", "Attention check only: 1 when answered correctly."),
    Column("seconds", "number", "seconds", "Time on the test's page."),
    Column("answered_at", "time", "ISO-8601 UTC", "When the answer was stored."),
)
STUDY_NAMES = [column.name for column in STUDY]
PERSON_COLUMNS = [
    *STUDY_NAMES,
    *(column for column in EXPORT_COLUMNS if column not in MODEL_ONLY_COLUMNS and column not in STUDY_NAMES),
]
PERSON_COLUMNS.insert(PERSON_COLUMNS.index("answer_label") + 1, "option_index")
PERSON_COLUMNS.insert(PERSON_COLUMNS.index("confidence") + 1, "confidence_max")
PERSON_COLUMNS.append("integrity")

EXPORTS = (
    Export(
        "bias_tests",
        "custom_export",
        "one answer: a person's answer to one version of one test",
        pick(KNOWN, PERSON_COLUMNS),
    ),
)
