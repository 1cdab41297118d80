"""The session keys every app shares (study title, consent, codes, language, participant ID format, model call
options, payment), checked and typed before a session exists (``lab_server/creation.py`` calls
``validate_shared_config`` first, then each app's own ``validate_session_config``).
"""

from __future__ import annotations

from typing import Any

from backend.core import session_keys

from .entry import CODE_PATTERN, PARTICIPANT_ID_FORMATS
from .texts import SHARED_LANGUAGES


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
        "participant_id_format": lambda key: session_keys.choice(config, key, PARTICIPANT_ID_FORMATS),
        "llm_model": lambda key: session_keys.text(config, key, max_chars=200, pattern=r"[^\x00-\x1f]+"),
        "llm_temperature": lambda key: session_keys.number(config, key, minimum=0, maximum=2),
        "llm_timeout_s": lambda key: session_keys.number(config, key, minimum=1, maximum=600),
        "llm_max_retries": lambda key: session_keys.whole_number(config, key, minimum=0, maximum=10),
        "llm_max_tokens": lambda key: session_keys.whole_number(config, key, minimum=1, maximum=200_000),
        "llm_reasoning_tokens": lambda key: session_keys.whole_number(config, key, minimum=0, maximum=200_000),
        "real_world_currency_per_point": lambda key: session_keys.number(config, key, minimum=0, maximum=1e6),
        "participation_fee": lambda key: session_keys.number(config, key, minimum=0, maximum=1e6),
    }
    problems = []
    for key, check in checks.items():
        if key not in config or (key in ("llm_max_tokens", "llm_reasoning_tokens") and not config.get(key)):
            continue  # absent, or unset (each call's own budget; no extra room for thinking)
        try:
            value = check(key)
        except ValueError as error:
            problems.append(str(error))
            continue
        if key not in ("real_world_currency_per_point", "participation_fee"):  # oTree keeps its currency types
            config[key] = value
    if problems:
        raise ValueError(" ".join(problems))
