"""The session keys every app shares (study title, consent, codes, language, participant ID format, model call
options, payment), checked and typed before a session exists (``lab_server/creation.py`` calls
``validate_shared_config`` first, then each app's own ``validate_session_config``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import study_flow.spending as spending
from backend.core import session_keys
from backend.core.material_language import MISMATCH_KEY

from .entry import CODE_PATTERN, PARTICIPANT_ID_FORMATS
from .texts import SHARED_LANGUAGES

# The session keys of the entry guards (lab_server/places.py; docs/security.md), with their defaults: settings.py
# puts them into SESSION_CONFIG_DEFAULTS (so the Create-session page shows them) and validate_shared_config checks them.
# prolific_study_id: the study's id on Prolific; when set, a room link whose STUDY_ID differs takes no place ("": off).
# consent_within_s: seconds within which a visitor who took a place must answer the consent page, else the place is
# handed back (0: never; at most a week).
ENTRY_KEY_DEFAULTS: dict[str, Any] = dict(prolific_study_id="", consent_within_s=1800)


def validate_shared_config(config: dict[str, Any]) -> None:
    """Check (and normalise in place) the session keys every app shares; ``ValueError`` names the first bad key.

    Runs before a session is created (``lab_server/creation.py``). Keys an app does not use may be absent.

    >>> config = {"language": "en", "completion_redirect_seconds": "5", "completion_code": "C1"}
    >>> validate_shared_config(config); config["completion_redirect_seconds"]
    5
    >>> validate_shared_config({"completion_code": "=cmd|' /C calc'!A0"})
    Traceback (most recent call last):
    ...
    ValueError: The session key 'completion_code' must be text of letters, digits, - or _ (at most 64 characters), not "=cmd|' /C calc'!A0".
    >>> validate_shared_config({"live_messages_per_minute": 0})  # any app's: the server's one live budget
    Traceback (most recent call last):
    ...
    ValueError: The session key 'live_messages_per_minute' must be a whole number from 1 to 10000, not 0.
    """

    def code(key):
        return session_keys.text(config, key, max_chars=64, pattern=CODE_PATTERN, describe="letters, digits, - or _")

    checks = {
        "study_title": lambda key: session_keys.text(config, key, max_chars=200),
        "consent": lambda key: session_keys.flag(config, key),
        "consent_text": lambda key: session_keys.text(config, key, max_chars=20_000),
        "completion_code": code,
        "screenout_code": code,
        "completion_redirect_seconds": lambda key: session_keys.whole_number(config, key, minimum=0, maximum=600),
        "language": lambda key: session_keys.choice(config, key, SHARED_LANGUAGES),
        MISMATCH_KEY: lambda key: session_keys.flag(config, key),
        "participant_id_format": lambda key: session_keys.choice(config, key, PARTICIPANT_ID_FORMATS),
        "prolific_study_id": code,
        "consent_within_s": lambda key: session_keys.whole_number(config, key, minimum=0, maximum=7 * 24 * 3600),
        # The one live-message budget (lab_server/budgets.py counts it; docs/decisions/0004-one-limit-on-live-messages.md)
        "live_messages_per_minute": lambda key: session_keys.whole_number(config, key, minimum=1, maximum=10_000),
        "llm_model": lambda key: session_keys.text(config, key, max_chars=200, pattern=r"[^\x00-\x1f]+"),
        "llm_temperature": lambda key: session_keys.number(config, key, minimum=0, maximum=2),
        "llm_timeout_s": lambda key: session_keys.number(config, key, minimum=1, maximum=600),
        "llm_max_retries": lambda key: session_keys.whole_number(config, key, minimum=0, maximum=10),
        "llm_max_tokens": lambda key: session_keys.whole_number(config, key, minimum=1, maximum=200_000),
        "llm_reasoning_tokens": lambda key: session_keys.whole_number(config, key, minimum=0, maximum=200_000),
        "llm_context_tokens": lambda key: session_keys.whole_number(config, key, minimum=256, maximum=10_000_000),
        "llm_seed": lambda key: session_keys.whole_number(config, key, minimum=0, maximum=2**63 - 1),
        "llm_prices_file": lambda key: session_keys.text(
            config, key, max_chars=500, pattern=r"[^\x00-\x1f\x7f]*", describe="a file path"
        ),
        "llm_cost_cap": lambda key: session_keys.number(config, key, minimum=0, maximum=1e9),
        "real_world_currency_per_point": lambda key: session_keys.number(config, key, minimum=0, maximum=1e6),
        "participation_fee": lambda key: session_keys.number(config, key, minimum=0, maximum=1e6),
        "min_pay_per_hour": lambda key: session_keys.number(config, key, minimum=0, maximum=1e4),
        "estimated_minutes": lambda key: session_keys.whole_number(config, key, minimum=0, maximum=24 * 60),
        "researcher_contact": lambda key: session_keys.text(config, key, max_chars=300, pattern=r"[^\x00-\x1f]*"),
    }
    problems = []
    for key, check in checks.items():
        if key not in config or (key in OPTIONAL_LLM_KEYS and not config.get(key)):
            continue  # absent, or one of the optional model keys left empty
        try:
            value = check(key)
        except ValueError as error:
            problems.append(str(error))
            continue
        if key not in ("real_world_currency_per_point", "participation_fee"):  # oTree keeps its currency types
            config[key] = value
    if not problems and (problem := spending.config_problem(config)):
        problems.append(problem)  # the price table read, and a cap that could count the model's calls
    if problems:
        raise ValueError(" ".join(problems))


# Keys whose value is one of a fixed set: oTree's Create-session form shows them as free text, so each config's
# description (``config_doc``) names the allowed values, and creation refuses any other with the same list.
SHARED_CHOICES: dict[str, tuple[str, ...]] = {
    "language": SHARED_LANGUAGES,
    "participant_id_format": tuple(PARTICIPANT_ID_FORMATS),
}
# The session-config keys that only a config with an LLM player reads (``backend.core.llm.LLMSettings``).
LLM_KEYS: tuple[str, ...] = (
    "llm_model",
    "llm_temperature",
    "llm_timeout_s",
    "llm_max_retries",
    "llm_max_tokens",
    "llm_reasoning_tokens",
    "llm_context_tokens",
    "llm_seed",
    "llm_prices_file",
    "llm_cost_cap",
)
# Of those, the keys a config may leave empty: each call's own budget, no room for thinking, the endpoint's own
# context size (backend.core.llm.context).
OPTIONAL_LLM_KEYS = (
    "llm_max_tokens",
    "llm_reasoning_tokens",
    "llm_context_tokens",
    "llm_seed",  # no seed sent
    "llm_prices_file",  # no price table: every price unknown
    "llm_cost_cap",  # no spending cap
)


def config_doc(summary: str, config: dict[str, Any], *, choices: dict[str, tuple[str, ...]], readme: str) -> str:
    """The description oTree shows for a session config (its ``doc`` key) on the admin's Create-session page and
    the session's page: ``summary``, the allowed values of each fixed-choice key the config has, and where every key
    is explained (the documentation site's generated reference, docs/reference/session-keys.md). oTree prints ``doc`` as HTML, so every part is escaped here.

    >>> config_doc("Two <people>.", {"language": "en", "mode": "semi"}, choices={"mode": ("semi", "coop")},
    ...            readme="DoND")
    "Two &lt;people&gt;.<br>Allowed values: <code>language</code>: <code>en</code>, <code>de</code>, <code>it</code>; <code>mode</code>: <code>semi</code>, <code>coop</code>.<br>Every key: the manual's Reference › Session-config keys; the app: DoND."
    """
    import html

    allowed = {**SHARED_CHOICES, **choices}
    listed = [
        f"<code>{html.escape(key)}</code>: "
        + ", ".join(f"<code>{html.escape(value.encode('unicode_escape').decode())}</code>" for value in allowed[key])
        for key in config
        if key in allowed
    ]
    parts = [html.escape(summary)]
    if listed:
        parts.append("Allowed values: " + "; ".join(listed) + ".")
    parts.append(f"Every key: the manual's Reference › Session-config keys; the app: {html.escape(readme)}.")
    return "<br>".join(parts)


def choices_of(settings_class) -> dict[str, tuple[str, ...]]:
    """The keys of a typed settings dataclass (e.g. ``DondSettings``) whose reader takes one of a fixed set of values
    (``functools.partial(session_keys.choice, options=...)`` in the field's ``metadata["read"]``), with that set.

    >>> from backend.dond.settings import DondSettings
    >>> choices_of(DondSettings)["mode"]
    ('semi', 'coop', 'comp')
    """
    import dataclasses

    found = {}
    for field in dataclasses.fields(settings_class):
        options = getattr(field.metadata.get("read"), "keywords", {}).get("options")
        if options:
            found[field.name] = tuple(options)
    return found


# What the admin's Create-session page says of each key every app shares (label, one line of help).
SHARED_KEY_WORDS: dict[str, tuple[str, str]] = {
    "study_title": (
        "Study title",
        "Shown at the top of every page; empty: 'Research study' in the session's language.",
    ),
    "consent": ("Ask for consent", "Tick to show the consent page first; who declines is screened out."),
    "consent_text": ("Consent text", "Your information above the consent question: duration, pay, contact."),
    "completion_code": (
        "Prolific completion code",
        "Where finishers are sent back to Prolific; without it they get no code.",
    ),
    "screenout_code": ("Prolific screen-out code", "Where people who are screened out are sent back to Prolific."),
    "completion_redirect_seconds": ("Seconds before going back", "The completion page returns to Prolific after this."),
    "language": ("Language", "Every word the participant sees: en, de or it."),
    "participant_id_format": ("Participant IDs", "prolific: only 24-character Prolific IDs may enter; any: any label."),
    "llm_model": ("Model", "The model's name as your model server knows it."),
    "llm_temperature": ("Temperature", "0 answers most predictably; higher varies more (0-2)."),
    "llm_timeout_s": ("Model time limit (seconds)", "One call that takes longer counts as failed."),
    "llm_max_retries": ("Retries of a failed call", "How often a failed model call is tried again."),
    "llm_max_tokens": ("Longest model reply (tokens)", "Empty or 0: the server's own limit."),
    "llm_reasoning_tokens": ("Room for thinking (tokens)", "Extra tokens for a reasoning model's thinking; 0: none."),
    "llm_context_tokens": ("Model's context (tokens)", "The model's context window; empty: asked of the server."),
    "llm_seed": ("Model's seed", "Sent with every model call and recorded; empty: none (some providers ignore it)."),
    "llm_prices_file": (
        "Price table (file)",
        "JSON prices per million tokens (docs/files/prices.json); empty: every price unknown, never free.",
    ),
    "llm_cost_cap": (
        "Spending cap on model calls",
        "In the price table's currency; reached, no paid call is made and a game ends (model_failure_pay pays).",
    ),
    "real_world_currency_per_point": ("Money per point", "What one point of bonus is worth in the study's currency."),
    "participation_fee": ("Participation fee", "The fixed pay for taking part, in the study's currency."),
    "min_pay_per_hour": (
        "Lowest pay per hour",
        "The launch check warns when the estimated pay per hour is below this.",
    ),
    "estimated_minutes": ("Estimated minutes", "Shown on the consent and instructions pages; 0: our estimate."),
    "prolific_study_id": (
        "Prolific study ID",
        "Optional: links whose STUDY_ID differs are refused and take no place.",
    ),
    "consent_within_s": ("Seconds to give consent", "A place with no consent answer by then goes back; 0: never."),
    "live_messages_per_minute": (
        "Live messages per minute (limit)",
        "Per participant, in bursts of a sixth; more get 'please wait'. Unset: LAB_LIVE_MESSAGES_PER_MINUTE (60).",
    ),
    "allow_material_language_mismatch": (
        "Allow material in another language",
        "Tick to accept a rubric, episodes, items or logs declared in another language than the pages.",
    ),
    "researcher_contact": ("Your contact", "Named on the default consent page for questions (an e-mail address)."),
}


def key_words(apps: Sequence[str] | None = None) -> dict[str, tuple[str, str]]:
    """Every session key's label and one line of help, from the settings modules (one definition per key): the
    shared keys here and each app's ``KEY_WORDS`` beside its settings class. ``apps``: only these apps' words (a
    config's ``app_sequence``): two apps may name the same key in their own words (``reservation_timeout_s`` holds
    a conversation in social_eval and a log in payoff_reasoning_eval).

    >>> key_words()["max_messages"][0], key_words()["completion_code"][0]
    ('Messages per player', 'Prolific completion code')
    >>> key_words(["social_eval"])["reservation_timeout_s"][0], key_words(["payoff_reasoning_eval"])["reservation_timeout_s"][0]
    ('Hold a conversation (seconds)', 'Hold a log (seconds)')
    """
    from backend.bias.settings import KEY_WORDS as BIAS_WORDS
    from backend.dond.settings import KEY_WORDS as DOND_WORDS
    from backend.reasoning.task import KEY_WORDS as REASONING_WORDS
    from backend.social.settings import KEY_WORDS as SOCIAL_WORDS

    per_app = {
        "dond": DOND_WORDS,
        "social_eval": SOCIAL_WORDS,
        "payoff_reasoning_eval": REASONING_WORDS,
        "bias_tests": BIAS_WORDS,
    }
    words: dict[str, tuple[str, str]] = {}
    for app, module_words in per_app.items():
        if apps is None or app in apps:
            words.update(module_words)
    words.update(SHARED_KEY_WORDS)
    return words
