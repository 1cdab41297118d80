"""oTree settings: session configs (one per study arm; treatments are keys), rooms, and secrets from the environment."""

import os
import sys

from backend.bias.settings import DEFAULTS as BIAS_DEFAULTS
from backend.dond.settings import form_defaults as dond_form_defaults
from backend.reasoning.task import DEFAULTS as REASONING_DEFAULTS
from backend.social.settings import DEFAULTS as SOCIAL_DEFAULTS

# oTree serves each page in a worker thread while its event loop keeps reading other requests; with Python's default
# 5 ms GIL switch interval each hand-over between them can wait that long. 0.5 ms cut the 95th-percentile page
# latency of bench/annotation_load.py (100 annotators arriving over 30 s, 10 s pauses) from 420-600 ms to about 310.
sys.setswitchinterval(0.0005)

# A production server must not start with a default admin password or signing key: data, exports and the
# REST API would be open, and participant links could be forged.
IS_PRODUCTION = os.environ.get("OTREE_PRODUCTION", "") not in ("", "0")
if IS_PRODUCTION:
    _missing = [name for name in ("OTREE_ADMIN_PASSWORD", "SECRET_KEY") if not os.environ.get(name)]
    if _missing:
        sys.exit(
            "Refusing to start in production mode (OTREE_PRODUCTION is set): the environment variable(s) "
            + " and ".join(_missing)
            + " must be set. See README section 'Deploying'."
        )

# oTree reads this name from settings (`from settings import *`). In production the default is STUDY: admin pages,
# data exports and the REST API need the password, only participant links stay open.
AUTH_LEVEL = os.environ.get("OTREE_AUTH_LEVEL") or ("STUDY" if IS_PRODUCTION else None)

SESSION_CONFIG_DEFAULTS = dict(
    real_world_currency_per_point=0.01,
    participation_fee=0.00,
    doc="",
    # Shared entry and exit flow (see study_flow/ and README "Running a Prolific study").
    study_title="Research study",
    consent=True,
    consent_text="",
    completion_code="",
    screenout_code="",
    completion_redirect_seconds=5,
    # Shape of the PID a room link must carry (lab_server/entry.py): prolific (24 hex digits) or any (1-64 of A-Z a-z
    # 0-9 - _, for pilots). A link without a valid one gets a page saying so and takes no slot.
    participant_id_format="prolific",
    # LLM layer (backend/llm): `scripted` needs no network and no key.
    llm_model=os.environ.get("LLM_MODEL", "scripted"),
    llm_temperature=0.7,
    llm_timeout_s=30.0,
    llm_max_retries=2,
)

# dond: session configs are edited by the DoND app; the variants differ only in the keys they set. Every dond key, its
# default, bounds and meaning: backend/dond/settings.py (README "DoND"); the admin's "Create session" form shows the
# keys a study may change per session (form_defaults); any other key (benchmark switch, rate limits) is added here.
_DOND_LLM = dict(
    name="dond_llm",
    display_name="Deal or No Deal: person vs LLM",
    app_sequence=["dond"],
    num_demo_participants=1,
    doc="Keys documented in README section 'DoND'.",
    **dond_form_defaults(opponent="llm"),
)

SESSION_CONFIGS = [
    _DOND_LLM,
    dict(
        _DOND_LLM,
        name="dond_llm_notes",
        display_name="Deal or No Deal: person vs LLM, notes protocol and belief probe",
        doc="The LLM writes a private note before each public reply and is probed for the person's acceptable split.",
        llm_protocol="notes",
        llm_probe_external=True,
    ),
    dict(
        name="dond_human",
        display_name="Deal or No Deal: person vs person",
        app_sequence=["dond"],
        num_demo_participants=2,
        doc="Two participants paired by arrival; keys documented in README section 'DoND'.",
        **dond_form_defaults(opponent="human"),
    ),
    # social_eval: session configs are edited by the social_eval app.
    # Keys and defaults: backend/social/settings.py (README "social_eval"); a config overrides them.
    dict(
        name="social_eval",
        display_name="Social evaluation: rate conversations on seven dimensions",
        app_sequence=["social_eval"],
        num_demo_participants=2,
        doc="Sotopia-style annotation; keys documented in README section 'social_eval'.",
        **{
            **SOCIAL_DEFAULTS,
            "episodes": "backend/social/data/episodes",  # folders / .json / .jsonl files, comma-separated
            "attention_checks": 1,  # gold episodes mixed into each annotator's sequence
        },
    ),
    dict(
        name="social_eval_pilot",
        display_name="Social evaluation: qualification pilot (gold episodes only)",
        app_sequence=["social_eval"],
        num_demo_participants=2,
        doc="Every annotator rates the gold episodes; export custom_export_qualified lists who qualified.",
        **{
            **SOCIAL_DEFAULTS,
            "episodes": "backend/social/data/episodes",
            "comprehension_check": True,
            "qualification_mode": True,
        },
    ),
    # payoff_reasoning_eval: session configs are edited by the payoff_reasoning_eval app.
    dict(
        name="payoff_reasoning_eval",
        display_name="Payoff reasoning: judge LLM reasoning about 2x2 games",
        app_sequence=["payoff_reasoning_eval"],
        num_demo_participants=3,
        # Keys and defaults: backend/reasoning/task.py and README "payoff_reasoning_eval"; a config overrides them.
        **REASONING_DEFAULTS,
    ),
    # bias_tests: session configs are edited by the bias_tests app.
    # Keys and defaults: backend/bias/settings.py (item_file, ask_confidence, order_seed); a config overrides them.
    dict(
        name="bias_tests",
        display_name="Cognitive-bias tests",
        app_sequence=["bias_tests"],
        num_demo_participants=2,
        doc="Keys documented in README section 'Cognitive-bias tests'.",
        **BIAS_DEFAULTS,
    ),
    dict(
        name="bias_tests_no_confidence",
        display_name="Cognitive-bias tests (no confidence slider)",
        app_sequence=["bias_tests"],
        num_demo_participants=2,
        doc="As bias_tests, without the confidence slider.",
        **{**BIAS_DEFAULTS, "ask_confidence": False},
    ),
]

# Stored on the participant and exported in every CSV (wide export: participant.<name>).
PARTICIPANT_FIELDS = [
    "prolific_pid",
    "study_id",
    "prolific_session_id",
    "consent_given",
    "screened_out",
    "screenout_reason",
    "completed",
    "progress_done",
    "progress_total",
]
SESSION_FIELDS = []

# One room per study: give Prolific the room URL documented in the README.
_WELCOME_PAGE = "global/RoomWelcome.html"
ROOMS = [
    dict(name="dond_study", display_name="Deal or No Deal study", welcome_page=_WELCOME_PAGE),
    dict(name="social_eval_study", display_name="Social evaluation study", welcome_page=_WELCOME_PAGE),
    dict(name="payoff_reasoning_study", display_name="Payoff reasoning study", welcome_page=_WELCOME_PAGE),
    dict(name="bias_study", display_name="Cognitive-bias study", welcome_page=_WELCOME_PAGE),
]

LANGUAGE_CODE = "en"
REAL_WORLD_CURRENCY_CODE = "GBP"
USE_POINTS = True

ADMIN_USERNAME = "admin"
ADMIN_PASSWORD = os.environ.get("OTREE_ADMIN_PASSWORD")
SECRET_KEY = os.environ.get("SECRET_KEY", "development-only-key-not-for-production")

DEMO_PAGE_INTRO_HTML = """
People and language models in front of the same tasks. Each session config below runs on the embedded
SQLite database; LLM opponents default to the offline <code>scripted</code> agent.
"""
