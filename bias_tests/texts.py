"""Every participant-facing word of the bias_tests pages, in English, German (formal "Sie") and Italian (formal
"Lei"). The items themselves (situations, questions, options, arguments) are the researcher's material and stay as
written in the item file; the pages mark them ``data-material``.

``SOURCE`` is the English source of the ``bias_tests`` catalogue (``locale/<language>/LC_MESSAGES/bias_tests.po``);
``TEXTS`` holds every available language.

>>> set(TEXTS["de"]) == set(TEXTS["en"]) == set(TEXTS["it"])
True
>>> texts("fr")["decision_title"]
'Your decision'
"""

from __future__ import annotations

from backend.core.catalogues import by_language, english

SOURCE = english(
    "bias_tests",
    {
        "instructions_title": "Instructions",
        "intro": "You will read {n} short situations from everyday working life and answer a question about each. There are no right or wrong answers (except for one question that checks that you read carefully): answer as you would decide yourself.",
        "repeat": "Some situations come back later in a slightly different form. Please answer each one on its own, without looking for the differences.",
        "confidence_intro": "After each answer, use the slider to say how sure you are of it, from 0 (a pure guess) to 100 (completely sure). Any click or key press on the slider counts as your answer, also at its starting point of 50.",
        "confidence_intro_touch": "After each answer, use the slider to say how sure you are of it, from 0 (a pure guess) to 100 (completely sure). Any tap on the slider counts as your answer, also at its starting point of 50.",
        "decision_title": "Your decision",
        "confidence_label": "How sure are you of your answer? Move the slider or click on it.",
        "confidence_unset": "not set yet",
        "confidence_hint": "A click on the slider counts, also at its starting point of 50.",
        "confidence_label_touch": "How sure are you of your answer? Move the slider or tap on it.",
        "confidence_hint_touch": "A tap on the slider counts, also at its starting point of 50.",
        "scale_low": "0 = pure guess",
        "scale_high": "100 = completely sure",
        "error_choice": "Please choose one of the answers above.",
        "error_confidence": "Please use the slider to say how sure you are (0 to 100).",
        "arguments_hint": "Tick every argument you would use. You can tick as many as you like, at least one.",
        "arguments_count": "Ticked: {n}",
        "error_arguments": "Please tick at least one of the arguments listed.",
    },
)
TEXTS = by_language(SOURCE)


def texts(language: str | None) -> dict[str, str]:
    """The pages' texts in ``language`` (an available one); any other language reads English."""
    return TEXTS.get(language or "en", TEXTS["en"])
