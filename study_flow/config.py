"""The session keys every app shares (study title, consent, codes, language, participant ID format, model call
options, payment), checked and typed before a session exists (``lab_server/creation.py`` calls
``validate_shared_config`` first, then each app's own ``validate_session_config``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import ConfigDict

import study_flow.spending as spending
from backend.core import session_keys

from .entry import CODE_PATTERN, PARTICIPANT_ID_FORMATS
from .texts import SHARED_LANGUAGES

# The session keys of the entry guards (lab_server/places.py; docs/security.md), with their defaults: settings.py
# puts them into SESSION_CONFIG_DEFAULTS (so the Create-session page shows them) and validate_shared_config checks them.
# prolific_study_id: the study's id on Prolific; when set, a room link whose STUDY_ID differs takes no place ("": off).
# consent_within_s: seconds within which a visitor who took a place must answer the consent page, else the place is
# handed back (0: never; at most a week).
ENTRY_KEY_DEFAULTS: dict[str, Any] = dict(prolific_study_id="", consent_within_s=1800)


W, N, F, T, K = session_keys.Whole, session_keys.Number, session_keys.Flag, session_keys.Text, session_keys.key
_ID_FORMATS = tuple(PARTICIPANT_ID_FORMATS)


class SharedKeys(session_keys.Keys):
    """The keys every app shares, each with its label, help and bounds; a config sets them per study ("per config":
    no default here, settings.py's SESSION_CONFIG_DEFAULTS gives them)."""

    model_config = ConfigDict(validate_default=False)

    study_title: T = K(None, "Study title", max_chars=200)
    """Shown at the top of every page; empty: 'Research study' in the session's language."""
    consent: F = K(None, "Ask for consent")
    """Tick to show the consent page first; who declines is screened out."""
    consent_text: T = K(None, "Consent text", max_chars=20_000)
    """Your information above the consent question: duration, pay, contact."""
    completion_code: T = K(
        None, "Prolific completion code", max_chars=64, pattern=CODE_PATTERN, describe="letters, digits, - or _"
    )
    """Where finishers are sent back to Prolific; without it they get no code."""
    screenout_code: T = K(
        None, "Prolific screen-out code", max_chars=64, pattern=CODE_PATTERN, describe="letters, digits, - or _"
    )
    """Where people who are screened out are sent back to Prolific."""
    completion_redirect_seconds: W = K(None, "Seconds before going back", ge=0, le=600)
    """The completion page returns to Prolific after this."""
    language: Literal[SHARED_LANGUAGES] = K(None, "Language")
    """Every word the participant sees: en, de, it or a language a lab added as catalogues (docs/languages.md)."""
    allow_material_language_mismatch: F = K(None, "Allow material in another language")
    """Tick to accept a rubric, episodes, items or logs declared in another language than the pages."""
    participant_id_format: Literal[_ID_FORMATS] = K(None, "Participant IDs")
    """prolific: only 24-character Prolific IDs may enter; any: any label."""
    # The entry guards (lab_server/places.py; docs/security.md), their defaults in ENTRY_KEY_DEFAULTS
    prolific_study_id: T = K(
        None, "Prolific study ID", max_chars=64, pattern=CODE_PATTERN, describe="letters, digits, - or _"
    )
    """Optional: links whose STUDY_ID differs are refused and take no place."""
    consent_within_s: W = K(None, "Seconds to give consent", ge=0, le=7 * 24 * 3600)
    """A place with no consent answer by then goes back; 0: never."""
    # The one live-message budget (lab_server/budgets.py counts it; docs/decisions/0004-one-limit-on-live-messages.md)
    live_messages_per_minute: W = K(None, "Live messages per minute (limit)", ge=1, le=10_000)
    """Per participant, in bursts of a sixth; more get 'please wait'. Unset: LAB_LIVE_MESSAGES_PER_MINUTE (60)."""
    llm_model: T = K(None, "Model", max_chars=200, pattern=r"[^\x00-\x1f]+")
    """The model's name as your model server knows it."""
    llm_temperature: N = K(None, "Temperature", ge=0, le=2)
    """0 answers most predictably; higher varies more (0-2)."""
    llm_timeout_s: N = K(None, "Model time limit (seconds)", ge=1, le=600)
    """One call that takes longer counts as failed."""
    llm_max_retries: W = K(None, "Retries of a failed call", ge=0, le=10)
    """How often a failed model call is tried again."""
    llm_max_tokens: W = K(None, "Longest model reply (tokens)", ge=1, le=200_000)
    """Empty or 0: the server's own limit."""
    llm_reasoning_tokens: W = K(None, "Room for thinking (tokens)", ge=0, le=200_000)
    """Extra tokens for a reasoning model's thinking; 0: none."""
    llm_context_tokens: W = K(None, "Model's context (tokens)", ge=256, le=10_000_000)
    """The model's context window; empty: asked of the server."""
    llm_seed: W = K(None, "Model's seed", ge=0, le=2**63 - 1)
    """Sent with every model call and recorded; empty: none (some providers ignore it)."""
    llm_prices_file: T = K(
        None, "Price table (file)", max_chars=500, pattern=r"[^\x00-\x1f\x7f]*", describe="a file path"
    )
    """JSON prices per million tokens (docs/files/prices.json); empty: every price unknown, never free."""
    llm_cost_cap: N = K(None, "Spending cap on model calls", ge=0, le=1e9)
    """In the price table's currency; reached, no paid call is made and a game ends (model_failure_pay pays)."""
    real_world_currency_per_point: N = K(None, "Money per point", ge=0, le=1e6)
    """What one point of bonus is worth in the study's currency."""
    participation_fee: N = K(None, "Participation fee", ge=0, le=1e6)
    """The fixed pay for taking part, in the study's currency."""
    min_pay_per_hour: N = K(None, "Lowest pay per hour", ge=0, le=1e4)
    """The launch check warns when the estimated pay per hour is below this."""
    estimated_minutes: W = K(None, "Estimated minutes", ge=0, le=24 * 60)
    """Shown on the consent and instructions pages; 0: our estimate."""
    researcher_contact: T = K(None, "Your contact", max_chars=300, pattern=r"[^\x00-\x1f]*")
    """Named on the default consent page for questions (an e-mail address)."""


def validate_shared_config(config: dict[str, Any]) -> None:
    """Check (and normalise in place) the session keys every app shares; one ``ValueError`` names every bad key.

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
    given = {
        key: value
        for key, value in config.items()
        if key in SharedKeys.model_fields and (value or key not in OPTIONAL_LLM_KEYS)  # optional model keys: empty
    }
    keys = session_keys.checked(SharedKeys, given)
    for key in given.keys() - {"real_world_currency_per_point", "participation_fee"}:  # oTree keeps its currency types
        config[key] = getattr(keys, key)
    session_keys.refuse_problems([problem] if (problem := spending.config_problem(config)) else [])


# Keys whose value is one of a fixed set: oTree's Create-session form shows them as free text, so each config's
# description (``config_doc``) names the allowed values, and creation refuses any other with the same list.
SHARED_CHOICES: dict[str, tuple[str, ...]] = session_keys.choices(SharedKeys)
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


def app_keys() -> dict[str, type[session_keys.Keys]]:
    """Each app's model of its own session keys (``backend.<domain>``), by app name."""
    from backend.bias.settings import BiasSettings
    from backend.dond.settings import DondSettings
    from backend.reasoning.task import TaskKeys
    from backend.social.settings import SocialSettings

    return {
        "dond": DondSettings,
        "social_eval": SocialSettings,
        "payoff_reasoning_eval": TaskKeys,
        "bias_tests": BiasSettings,
    }


def key_words(apps: Sequence[str] | None = None) -> dict[str, tuple[str, str]]:
    """Every session key's label and one line of help, from the models' fields (one definition per key): each
    app's, then the shared keys'. ``apps``: only these apps' words (a config's ``app_sequence``): two apps may name
    the same key in their own words (``reservation_timeout_s`` holds a conversation in social_eval and a log in
    payoff_reasoning_eval).

    >>> key_words()["max_messages"][0], key_words()["completion_code"][0]
    ('Messages per player', 'Prolific completion code')
    >>> key_words(["social_eval"])["reservation_timeout_s"][0], key_words(["payoff_reasoning_eval"])["reservation_timeout_s"][0]
    ('Hold a conversation (seconds)', 'Hold a log (seconds)')
    """
    words: dict[str, tuple[str, str]] = {}
    for app, model in app_keys().items():
        if apps is None or app in apps:
            words.update(session_keys.words(model))
    return words | session_keys.words(SharedKeys)
