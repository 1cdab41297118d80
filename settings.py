"""oTree settings: session configs (one per study arm; treatments are keys), rooms, and secrets from the environment."""

import os
import sys

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
    # Shared entry and exit flow (see backend/study_flow.py and README "Running a Prolific study").
    study_title="Research study",
    consent=True,
    consent_text="",
    completion_code="",
    screenout_code="",
    completion_redirect_seconds=5,
    # LLM layer (backend/llm): `scripted` needs no network and no key.
    llm_model=os.environ.get("LLM_MODEL", "scripted"),
    llm_temperature=0.7,
    llm_timeout_s=30.0,
    llm_max_retries=2,
)

SESSION_CONFIGS = [
    # dond: session configs are edited by the DoND app.
    dict(
        name="dond_llm",
        display_name="Deal or No Deal: person vs LLM",
        app_sequence=["dond"],
        num_demo_participants=1,
    ),
    # social_eval: session configs are edited by the social_eval app.
    dict(
        name="social_eval",
        display_name="Social evaluation: rate conversations on seven dimensions",
        app_sequence=["social_eval"],
        num_demo_participants=2,
    ),
    # payoff_reasoning_eval: session configs are edited by the payoff_reasoning_eval app.
    dict(
        name="payoff_reasoning_eval",
        display_name="Payoff reasoning: judge LLM reasoning about 2x2 games",
        app_sequence=["payoff_reasoning_eval"],
        num_demo_participants=3,
        # Keys and defaults: backend/reasoning_task.py and README "payoff_reasoning_eval".
        logs_folder="payoff_reasoning_eval/logs",
        logs_upload="",
        default_game="",
        extra_games="",
        judges_per_log=3,
        logs_per_judge=6,
        reservation_minutes=30,
        csv_separator=";",
        aggregation_rule="unanimity",
    ),
    # bias_tests: session configs are edited by the bias_tests app.
    dict(
        name="bias_tests",
        display_name="Cognitive-bias tests",
        app_sequence=["bias_tests"],
        num_demo_participants=2,
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
