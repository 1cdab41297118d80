"""Every participant-facing word of the payoff_reasoning_eval pages, in English, German (formal "Sie") and Italian
(formal "Lei"). The researcher's material stays as written and is marked ``data-material`` on the pages: the logs
(the model's responses), the games' names and payoff labels, and the protocol's error types (name, definition,
example: backend/reasoning/protocol.py).

``SOURCE`` is the English source of the ``payoff_reasoning_eval`` catalogue (``locale/<language>/LC_MESSAGES/payoff_reasoning_eval.po``);
``TEXTS`` holds every available language.

>>> set(TEXTS["de"]) == set(TEXTS["en"]) == set(TEXTS["it"])
True
>>> texts(None)["verdict_correct"]
'Correct: no error in reasoning about payoffs'
"""

from __future__ import annotations

from backend.core.catalogues import by_language, english

SOURCE = english(
    "payoff_reasoning_eval",
    {
        "instructions_title": "How to judge the reasoning",
        "intro_1": "A language model was asked to play a one-shot game against an anonymous person. Both pick a letter, R or B, at the same time, and the payoffs depend on both letters. The model explained its thinking and ended its answer with its letter in braces, such as {B}. An automatic checker then looked for mistakes; when it found some, the model was asked to think again, up to five times.",
        "intro_2": "You will read {n} such samples. For each one, you see the first answer and, if the model tried more than once, its last answer. Your job is to say whether what the model claims about the payoffs is right, and if not, to show where it goes wrong.",
        "games_heading": "The games",
        "games_intro": "The tables list R before B, which is the reverse of how these games are usually drawn. The first number in a cell is what the model gets, the second what the other person gets. The same table is shown next to every sample.",
        "errors_heading": "What counts as an error",
        "errors_intro": "A response is incorrect if it contains at least one mistake in reasoning about the payoffs. Mark it with one or more of these types:",
        "ignore_heading": "What to ignore",
        "ignore": [
            "Game-theory words used loosely or wrongly, such as “dominant strategy” or “Nash equilibrium”.",
            "Claims that are debatable as game theory but say nothing false about the payoffs, such as “the rational move is the one that gives us the most together”.",
            "Calling the game by the wrong name, for example treating a Stag Hunt as a Prisoner's Dilemma.",
            "The choice itself: any letter is acceptable. Only the statements about payoffs are judged.",
        ],
        "steps_heading": "What you do for each sample",
        "steps": [
            "Read the first response. Choose correct if it has no payoff error, otherwise incorrect.",
            "If the model answered more than once, do the same for its last response.",
            "If you found an error, mark every sentence that contains one (select it; select it again to undo) and tick the error type(s). If everything is correct, mark no sentence and tick no type.",
            "Add a remark if something is unclear (optional). Your marks and choices are kept if you reload the page.",
        ],
        "example": "Example:",
        "matrix_caption": "Each cell: (payoff of the model, payoff of the other player). Rows: the model's choice; columns: the other player's choice.",
        "matrix_corner": "Model \\ Other",
        "judge_title": "Is the reasoning about payoffs correct?",
        "game": "The game:",
        "first_response": "First response",
        "of_attempts": "(of {n} attempts)",
        "last_response": "Last response (attempt {n})",
        "click_hint": "Click a sentence to mark it as faulty; click it again to unmark it.",
        "click_hint_touch": "Tap a sentence to mark it as faulty; tap it again to unmark it.",
        "orig_label": "Is the reasoning of the first response correct?",
        "fin_label": "Is the reasoning of the last response correct?",
        "verdict_correct": "Correct: no error in reasoning about payoffs",
        "verdict_incorrect": "Incorrect: at least one payoff error",
        "types_legend": "Error types (needed when a response is incorrect)",
        "marked_heading": "Marked sentences",
        "marked_none": "None yet.",
        "remarks_label": "Remarks (optional)",
        "chars": "{n} / {max} characters",
        "chars_over": "{n} / {max} characters: please shorten by {over}.",
        "error_remarks_long": "Please shorten your remarks to at most {max} characters (they have {n}).",
        "error_orig_missing": "Please say whether the first response is correct.",
        "error_fin_missing": "Please say whether the last response is correct.",
        "error_types_missing": "You judged a response incorrect: please tick at least one error type.",
        "error_sentences_missing": "You judged a response incorrect: please mark at least one faulty sentence in the response.",
        "error_types_extra": "You judged the reasoning correct: please untick the error types, or choose “incorrect”.",
        "error_sentences_extra": "You judged the reasoning correct: please unmark the sentences, or choose “incorrect”.",
    },
)
TEXTS = by_language(SOURCE)


def texts(language: str | None) -> dict:
    """The pages' texts in ``language`` (an available one); any other language reads English."""
    return TEXTS.get(language or "en", TEXTS["en"])
