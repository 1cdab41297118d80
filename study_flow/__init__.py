"""The entry and exit flow every app shares: Prolific IDs, consent, screen-out, completion and progress.

oTree-side helpers shared by the apps (pure rules live in ``backend/``). Apps use the names re-exported here
(``study_flow.ConsentPage``, ``study_flow.identifiers``, ...); each lives in one module:

| module | what it holds |
|---|---|
| ``texts`` | ``MESSAGES``: the shared pages' texts in en/de/it; ``messages(language)`` |
| ``entry`` | participant ID shapes, entry refusal texts, the Prolific cookie, identifiers, completion URL |
| ``config`` | ``validate_shared_config``: the session keys every app shares, checked before a session exists; ``config_doc`` |
| ``hooks`` | where a player stands (first/last app, last round, tasks over); ``AppHooks`` an app declares |
| ``pages`` | ``ConsentPage``/``ScreenOutPage``/``CompletionPage`` mixins, the consent field, screen-out, progress |
| ``assignments`` | who annotates what: reservations of the annotation apps |
| ``pay`` | the bonus each participant was told, stored when shown; the bonus file and review list read it |
| ``workload`` | what is asked and how long it takes (Instructions), duration, pay and contact on the default consent |
"""

from __future__ import annotations

from .config import LLM_KEYS, SHARED_CHOICES, config_doc, validate_shared_config
from .entry import (
    CODE_PATTERN,
    ENTRY_PAGES,
    ID_PATTERN,
    PARTICIPANT_ID_FORMATS,
    PROLIFIC_COMPLETION_URL,
    SAFE_LABEL,
    STUDY_IDS_COOKIE,
    completion_url,
    entry_page_texts,
    identifiers,
    parse_study_ids_cookie,
    participant_id_problem,
    record_arrival,
)
from .hooks import AppHooks, app_name, in_last_app, is_first_app
from .pages import (
    CompletionPage,
    ConsentPage,
    ScreenOutPage,
    consent_choices,
    consent_field,
    consent_given_choices,
    is_active,
    progress,
    screen_out,
    set_progress,
)
from .texts import MESSAGES, SHARED_LANGUAGES, messages
from .workload import default_consent, workload_text

__all__ = [
    "CODE_PATTERN",
    "ENTRY_PAGES",
    "LLM_KEYS",
    "ID_PATTERN",
    "MESSAGES",
    "PARTICIPANT_ID_FORMATS",
    "PROLIFIC_COMPLETION_URL",
    "SAFE_LABEL",
    "SHARED_CHOICES",
    "SHARED_LANGUAGES",
    "STUDY_IDS_COOKIE",
    "AppHooks",
    "CompletionPage",
    "ConsentPage",
    "ScreenOutPage",
    "app_name",
    "completion_url",
    "config_doc",
    "consent_choices",
    "consent_field",
    "consent_given_choices",
    "entry_page_texts",
    "identifiers",
    "in_last_app",
    "is_active",
    "is_first_app",
    "messages",
    "parse_study_ids_cookie",
    "participant_id_problem",
    "progress",
    "record_arrival",
    "screen_out",
    "set_progress",
    "validate_shared_config",
    "default_consent",
    "workload_text",
]
