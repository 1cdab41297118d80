"""Every word social_eval's own pages say to a participant, in the session's ``language`` (en, de, it; German in
"Sie", Italian in the formal "Lei"). The researcher's material (rubric, episodes, examples) is shown as written and
marked ``data-material`` in the templates; messages about submitted input are in ``backend/social/forms.py``. ``SOURCE`` and ``ENDPOINT_SOURCE`` are the English
source of the ``social_eval`` catalogue (``locale/<language>/LC_MESSAGES/social_eval.po``); ``PAGE_TEXTS`` holds every
available language.
"""

from __future__ import annotations

import study_flow
from backend.core.catalogues import Plural, by_language, english

SOURCE = english(
    "social_eval",
    {
        "qualification": "This is a short qualification round: you will rate a few conversations whose ratings we compare with reference ratings.",
        "reasoning_rule": "Each explanation needs at least {minimum} characters. The definitions and examples below are also shown next to every rating on the form.",
        "dimensions_heading": "The dimensions",
        "examples_for": "Annotation examples for",
        "worked_example": "A fully rated example conversation",
        "scenario": "Scenario",
        "background": "Background",
        "goal": "Social goal",
        "secret": "Secret",
        "no_secret": "(none)",
        "dimension": "Dimension",
        "reasoning_of": "reasoning",
        "rating": "Rating",
        "annotator_reasoning": "Annotator's reasoning",
        "assessment": "Assessment",
        "good_example": "Good example",
        "bad_example": "Bad example",
        "range": "{low} to {high}",
        "quiz_title": "A few questions about the guideline",
        "guideline_summary": "The guideline: definitions and examples",
        "question_wrong": "This answer is not right yet.",
        "rate_title": "Conversation {number} of {total}",
        "conversation": "Conversation",
        "turn": "Turn",
        "action": "[action]",
        "non_verbal": "[non-verbal]",
        "left": "left the conversation.",
        "ratings_for": "Ratings for",
        "hint": "For each character and each dimension, explain your judgement in one or two sentences (at least {minimum} characters), then choose a rating. Your answers are kept if you reload the page. This conversation is reserved for you for {reserved}.",
        "keys": "Keyboard: Tab moves from the explanation to the scale; the arrow keys or a typed number (for example - then 3) choose a value; Enter on the scale, or Ctrl+Enter anywhere, goes to the next rating and, on the last one, submits.",
        "guide_toggle": "Guideline and examples",
        "step": "Rating {current} of {total}",
        "back": "Back",
        "next_rating": "Next rating",
        "counter_empty": "at least {minimum} characters",
        "counter_short": "{count} characters — at least {minimum}",
        "counter_ok": "✓ {count} characters",
        "counter_long": "{count} characters — at most {maximum}",
        "need_reason": "Please explain your rating in at least {minimum} characters (you wrote {count}).",
        "need_shorter": "Please shorten this explanation to at most {maximum} characters (you wrote {count}).",
        "need_rating": "Please choose a rating on the scale.",
        "nothing_left_rate": "All conversations now have enough ratings. Please press Next to finish.",
        "nothing_left_title": "Nothing left to rate",
        "nothing_left": "Thank you for your interest. Every conversation in this study already has enough ratings, so there is nothing left for you to do.",
        "return_with_code": "Please return to Prolific with this code:",
        "return_button": "Return to Prolific",
        "return_submission": 'Please return your submission on Prolific ("Stop without completing").',
        "regular_plan": Plural(
            "You will rate {count} conversation, plus an occasional check conversation.",
            "You will rate up to {count} conversations, plus an occasional check conversation.",
        ),
        "quiz_intro": Plural(
            "Before you start, please answer these questions. They check that the rating scales are clear; you have {count} attempt.",
            "Before you start, please answer these questions. They check that the rating scales are clear; you have {count} attempts.",
        ),
        "reserved": Plural(
            "{count} minute",
            "{count} minutes",
        ),
    },
)
PAGE_TEXTS = by_language(SOURCE)

# The ends of the shipped Sotopia rubric's scales in our words: key -> (min, max); their words are
# ``endpoint.<key>.low`` / ``.high`` below. A rubric of the researcher's own, or a dimension with another range, gets
# the generic words (``endpoint.generic.*``).
ENDPOINTS = {
    "believability": (0, 10),
    "relationship": (-5, 5),
    "knowledge": (0, 10),
    "secret": (-10, 0),
    "social_rules": (-10, 0),
    "financial_and_material_benefits": (-5, 5),
    "goal": (0, 10),
}
ENDPOINT_SOURCE = english(
    "social_eval",
    {
        "endpoint.believability.low": "not believable at all",
        "endpoint.believability.high": "completely natural",
        "endpoint.relationship.low": "much worse",
        "endpoint.relationship.high": "much better",
        "endpoint.knowledge.low": "nothing new",
        "endpoint.knowledge.high": "critical new information",
        "endpoint.secret.low": "critical secret revealed",
        "endpoint.secret.high": "nothing revealed",
        "endpoint.social_rules.low": "serious crime",
        "endpoint.social_rules.high": "no rule broken",
        "endpoint.financial_and_material_benefits.low": "large loss",
        "endpoint.financial_and_material_benefits.high": "large gain",
        "endpoint.goal.low": "no progress",
        "endpoint.goal.high": "goal fully achieved",
        "endpoint.generic.low": "lowest",
        "endpoint.generic.high": "highest",
    },
)
ENDPOINT_WORDS = by_language(ENDPOINT_SOURCE)


def language_of(session) -> str:
    """The session's ``language`` (``en`` when unset or not one we have texts for)."""
    language = (session.config.get("language") or "en") if session is not None else "en"
    return language if language in PAGE_TEXTS and language in study_flow.MESSAGES else "en"


def page_texts(language: str) -> dict[str, str]:
    return PAGE_TEXTS.get(language, PAGE_TEXTS["en"])


def signed(value: int) -> str:
    """A scale value as shown: a true minus sign (``−3``)."""
    return str(value).replace("-", "−")


def range_text(dimension, language: str) -> str:
    """``−5 to 5`` / ``−5 bis 5`` / ``da −5 a 5``."""
    return page_texts(language)["range"].format(low=signed(dimension.min), high=signed(dimension.max))


def endpoints(dimension, language: str) -> tuple[str, str]:
    """What the two ends of a dimension's scale mean, in ``language``."""
    words = ENDPOINT_WORDS.get(language, ENDPOINT_WORDS["en"])
    key = dimension.key if ENDPOINTS.get(dimension.key) == (dimension.min, dimension.max) else "generic"
    return words[f"endpoint.{key}.low"], words[f"endpoint.{key}.high"]


def plural(texts: dict[str, str], key: str, count: int, **values) -> str:
    """The plural text ``key`` in the form ``count`` takes in its language (gettext's plural rule), formatted with
    ``count``.

    >>> plural(page_texts("de"), "reserved", 1), plural(page_texts("de"), "reserved", 30)
    ('1 Minute', '30 Minuten')
    """
    return texts[key](count).format(count=count, **values)


def rate_hint(language: str, *, minimum: int, minutes: int) -> str:
    """The rating page's hint: the explanation's minimum length and how long the conversation is reserved, the minutes
    in the singular or plural of ``language``.

    >>> rate_hint("en", minimum=20, minutes=1).endswith("reserved for you for 1 minute.")
    True
    >>> rate_hint("de", minimum=20, minutes=30).endswith("30 Minuten lang für Sie reserviert.")
    True
    """
    texts = page_texts(language)
    return texts["hint"].format(minimum=minimum, reserved=plural(texts, "reserved", minutes))
