"""The participant-facing texts of the shared pages (consent, screen-out, completion, progress, entry refusals): the
English source of the ``study_flow`` catalogue (``locale/<language>/LC_MESSAGES/study_flow.po``; how a lab adds a
language: docs/languages.md).

``MESSAGES`` holds every available language (`backend.core.catalogues.languages`: English, and each language with a
complete catalogue of every domain), the same keys in each; `messages` one of them.

>>> sorted(MESSAGES) == sorted(SHARED_LANGUAGES) and set(MESSAGES["de"]) == set(MESSAGES["en"])
True
"""

from __future__ import annotations

from backend.core.catalogues import by_language, english

SOURCE = english(
    "study_flow",
    {
        # oTree's own words on every page, in the session's language (lab_server/languages.py puts them there).
        "study_title": "Research study",
        "next": "Next",
        "timer_text": "Time left to complete this page:",
        "form_errors": "Please fix the errors.",
        "field_required": "This field is required.",
        "field_number": "Please enter a number.",
        "field_at_least": "Please enter at least {minimum}.",
        "field_at_most": "Please enter at most {maximum}.",
        "field_between": "Please enter a number from {minimum} to {maximum}.",
        "yes": "Yes",
        "no": "No",
        "powered_by": "Powered by {product_name}",
        "wait_title": "Please wait",
        "wait_one": "Waiting for the other participant.",
        "wait_many": "Waiting for the other participants.",
        "wait_group": "Waiting to form a group with other participants.",
        "loading": "Loading the study…",
        "needs_javascript": "This study needs JavaScript. Please enable it and reload the page.",
        "consent_title": "Consent",
        "welcome_title": "Welcome",
        "consent_label": "Do you agree to take part in this study?",
        "consent_yes": "I have read the information above and agree to take part.",
        "consent_no": "I do not agree to take part.",
        "default_consent": "This study is run by researchers who compare how people and language models solve the same tasks. Taking part is voluntary and you may stop at any time by closing this window. We store your answers and your Prolific ID, without your name, and publish only anonymised, aggregated results.",
        "consent_facts": "The study takes about {minutes} minutes. You receive {pay} for taking part.",
        "consent_contact": "Questions about the study: {contact}.",
        "workload_minutes": "Expected time: about {minutes} minutes in all.",
        "workload_dond": "You negotiate once with another party; each side may send up to {messages} messages.",
        "workload_social_eval": "You rate {units} conversations, with {ratings} ratings for each; every rating needs an explanation of at least {min_chars} characters.",
        "workload_payoff_reasoning_eval": "You judge {units} reasoning texts, sentence by sentence.",
        "workload_bias_tests": "You answer {units} questions.",
        "completion_title": "Thank you!",
        "completion_body": "You have completed the study.",
        "completion_code": "Your completion code",
        "completion_redirect": "You will be sent back to Prolific in {seconds} seconds.",
        "completion_button": "Return to Prolific now",
        "screenout_title": "Thank you for your interest",
        "screenout_body": "You cannot continue with this study.",
        "screenout_code": "Please return to Prolific and enter this code",
        "progress": "Item {current} of {total}",
        "entry_title": "This link cannot start the study",
        "entry_missing_id": "The link you opened does not include your Prolific ID, so we cannot give you a place in this study.",
        "entry_malformed_id": "The link you opened holds a Prolific ID that is not valid, so we cannot give you a place in this study.",
        "entry_retry": "Please go back to Prolific and open the study from there, without changing the link. If this happens again, write to the researcher through Prolific.",
        "entry_researcher": "Researchers trying their own study: open the test link on the session's Study links page in the admin, which makes up a Prolific ID for you.",
        "full_title": "All places are taken",
        "full_body": "Sorry: every place in this study has already been taken, so you cannot take part this time.",
        "full_return": 'Please return the study on Prolific (choose "Return submission") so that this does not count against you. Do not enter a completion code.',
        "full_contact": "If you believe this is a mistake, send the researcher a message through Prolific.",
        "entry_wrong_study": "The link you opened belongs to another study, so we cannot give you a place in this one.",
        "admission_title": "Many people are starting this study right now",
        "admission_body": "Please keep this page open. It checks again by itself, more often as your turn comes closer, and takes you to the study as soon as there is room. People are let in in the order they arrived.",
        "admission_kept": "You do not lose anything by waiting: your link and your Prolific ID are kept.",
        "admission_now": "Try again now",
        "admission_expected": "Your turn is expected in about {minutes} minutes.",
        "admission_expected_soon": "Your turn is expected within a minute.",
        "busy_title": "Too many new participants from your connection",
        "busy_body": "Many people have just started this study from the same internet connection as you, so we cannot give you a place right now. Please try again in a few minutes.",
        "requests_title": "Too many requests",
        "requests_body": "Your browser asked for this page very many times in a short while. Please wait a little: this page opens the study again by itself, where you were.",
        "requests_again": "Open the page again",
        "live_too_fast": "You are sending messages too quickly. Please wait {seconds} seconds and try again.",
        # The page a form too large to be sent gets (lab_server/limits.py).
        "refused_form": "Your answer is too large to be sent. Please go back, shorten it and send it again.",
        # The page a request gets whose body did not arrive in time (lab_server/limits.py).
        "slow_body": "The request took too long to arrive. Please send it again.",
    },
)

MESSAGES = by_language(SOURCE)
SHARED_LANGUAGES = tuple(MESSAGES)


def messages(language: str | None) -> dict[str, str]:
    """The shared pages' texts in ``language`` (an available one); unknown languages fall back to English.

    >>> messages("de")["consent_title"]
    'Einwilligung'
    >>> messages(None)["consent_title"]
    'Consent'
    """
    return MESSAGES.get(language or "en", MESSAGES["en"])
