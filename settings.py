"""oTree settings: session configs (one per study arm; treatments are keys), rooms, and secrets from the environment."""

import html
import sys

from backend.bias.settings import DEFAULTS as BIAS_DEFAULTS
from backend.core import session_keys
from backend.core.environment import environment
from backend.core.llm.settings import who_plays
from backend.dond.settings import DondSettings
from backend.dond.settings import form_defaults as dond_form_defaults
from backend.reasoning.task import DEFAULTS as REASONING_DEFAULTS
from backend.reasoning.task import TaskKeys
from backend.social.settings import DEFAULTS as SOCIAL_DEFAULTS
from study_flow.config import ENTRY_KEY_DEFAULTS, config_doc
from study_flow.workload import use_currency

# oTree serves each page in a worker thread while its event loop keeps reading other requests; with Python's default
# 5 ms GIL switch interval each hand-over between them can wait that long. 0.5 ms cut the 95th-percentile page
# latency of bench/annotation_load.py (100 annotators arriving over 30 s, 10 s pauses) from 420-600 ms to about 310.
sys.setswitchinterval(0.0005)

# Every environment variable is read here once, typed (backend/core/environment.py); a bad one stops the start.
try:
    ENV = environment()
except ValueError as _error:
    sys.exit(f"Refusing to start: {_error} See docs/reference/environment.md.")
# A production server must not start with a default admin password or signing key: data, exports and the
# REST API would be open, and participant links could be forged.
IS_PRODUCTION = ENV.OTREE_PRODUCTION
if IS_PRODUCTION:
    _missing = [name for name in ("OTREE_ADMIN_PASSWORD", "SECRET_KEY") if not getattr(ENV, name)]
    if _missing:
        sys.exit(
            "Refusing to start in production mode (OTREE_PRODUCTION is set): the environment variable(s) "
            + " and ".join(_missing)
            + " must be set. See docs/deploying.md."
        )
    if ENV.LAB_TEST_CLOCK_FILE:  # backend/core/clock.py: a clock tests move forward
        sys.exit(
            "Refusing to start in production mode (OTREE_PRODUCTION is set): LAB_TEST_CLOCK_FILE is set, which lets a "
            "file move the server's clock. It is for tests only; unset it."
        )

# oTree reads this name from settings (`from settings import *`). In production the default is STUDY: admin pages,
# data exports and the REST API need the password, only participant links stay open.
AUTH_LEVEL = ENV.OTREE_AUTH_LEVEL or ("STUDY" if IS_PRODUCTION else None)

SESSION_CONFIG_DEFAULTS = dict(
    real_world_currency_per_point=0.01,  # oTree's payment settings: money per point, fixed fee
    participation_fee=0.00,
    doc="",  # each config below sets its own description (study_flow.config_doc)
    # Shared entry and exit flow (study_flow/; docs/running/prolific.md). Every config shows these keys.
    study_title="",  # the title on every page; empty: "Research study" in the session's language
    language="en",  # en, de or it: every participant-facing word of the shared pages and of the app
    consent=True,  # ask for consent on the first page (declining leads to the screen-out page); False: a welcome page
    consent_text="",  # the researcher's information above the consent question; empty: our text in the language
    completion_code="",  # Prolific completion code: the last page shows it and redirects to Prolific
    screenout_code="",  # Prolific code for people who decline consent or fail a comprehension check
    completion_redirect_seconds=5,  # seconds before the automatic redirect to Prolific (0-600)
    # Shape of the PID a room link must carry (lab_server/entry.py): prolific (24 hex digits) or any (1-64 of A-Z a-z
    # 0-9 - _, for pilots). A link without a valid one gets a page saying so and takes no slot.
    participant_id_format="prolific",
    # True confirms material (rubric, episodes, item file, logs) declared in another language than the pages
    # (docs/languages.md); False: such a session is refused at creation.
    allow_material_language_mismatch=False,
    # The launch check (lab_server/study_pages.py) flags an estimated pay per hour (participation_fee over the
    # estimated duration) below this floor, in REAL_WORLD_CURRENCY_CODE; 0: no floor set (a warning says so).
    min_pay_per_hour=0.0,
    # Minutes one participant needs: shown on the consent text and every app's Instructions. 0: the estimate from the
    # documented default times (backend/core/workload.py); set it from your pilot's page times (docs/running-a-study.md).
    estimated_minutes=0,
    researcher_contact="",  # named on the default consent text ("Questions about the study: ..."), e.g. an e-mail
    **ENTRY_KEY_DEFAULTS,  # prolific_study_id, consent_within_s: study_flow/config.py, docs/security.md
)

# Model call options (backend/core/llm; docs/getting-started/models.md), only in configs where an LLM plays: a config
# for people only carries none of them (study_flow.LLM_KEYS).
LLM_KEYS = dict(
    llm_model=ENV.LLM_MODEL,  # sent to the OpenAI-compatible endpoint; scripted: offline
    llm_temperature=0.7,  # sampling temperature, 0-2
    llm_timeout_s=30.0,  # seconds before one model call is abandoned
    llm_max_retries=2,  # retries after a timeout, connection error, HTTP 429 or 5xx
)
# Keys with a fixed set of values (oTree's form shows free text): each config's description lists the allowed values.
_DOND_CHOICES = session_keys.choices(DondSettings)  # mode, opponent, first_mover, the treatments, llm_protocol...
_PAYOFF_CHOICES = session_keys.choices(TaskKeys)


def _config(name, display_name, app, participants, summary, readme, keys, choices=None):
    """A session config: its keys, and the description oTree shows (the summary and each key's allowed values)."""
    config = dict(name=name, display_name=display_name, app_sequence=[app], num_demo_participants=participants, **keys)
    doc_keys = {**SESSION_CONFIG_DEFAULTS, **config}
    config["doc"] = config_doc(summary, doc_keys, choices=choices or {}, readme=readme)
    return config


# dond: the variants differ only in the keys they set. Every dond key, its default, bounds and meaning:
# backend/dond/settings.py (docs/apps/dond.md); the admin's "Create session" form shows the keys a study may change per
# session (form_defaults; a person-vs-person config leaves out the LLM's); any other key is added here.
_DOND_LLM_KEYS = {**dond_form_defaults(opponent="llm"), **LLM_KEYS}
_DOND = "DoND (`dond`)"
_SOCIAL = "Social evaluation (`social_eval`)"

SESSION_CONFIGS = [
    _config(
        "dond_llm",
        "Deal or No Deal: person vs LLM",
        "dond",
        1,
        "A person negotiates with a language model over how to split items (one game per participant).",
        _DOND,
        _DOND_LLM_KEYS,
        _DOND_CHOICES,
    ),
    _config(
        "dond_llm_notes",
        "Deal or No Deal: person vs LLM, notes protocol and belief probe",
        "dond",
        1,
        "As dond_llm; the LLM writes a private note before each public reply and is probed for the person's "
        "acceptable split.",
        _DOND,
        {**_DOND_LLM_KEYS, "llm_protocol": "notes", "llm_probe_external": True},
        _DOND_CHOICES,
    ),
    _config(
        "dond_human",
        "Deal or No Deal: person vs person",
        "dond",
        2,
        "Two participants, paired by arrival, negotiate over how to split items. No LLM plays.",
        _DOND,
        {key: value for key, value in dond_form_defaults(opponent="human").items() if not key.startswith("llm_")},
        _DOND_CHOICES,
    ),
    # social_eval: keys and defaults in backend/social/settings.py (docs/apps/social_eval.md); a config overrides them.
    _config(
        "social_eval",
        "Social evaluation: rate conversations on seven dimensions",
        "social_eval",
        2,
        "People rate conversations between agents on the Sotopia dimensions; each episode goes to "
        "annotators_per_episode people.",
        _SOCIAL,
        {
            **SOCIAL_DEFAULTS,
            "episodes": "samples",  # folders / .json / .jsonl files, comma-separated; samples: ours, in the language
            "attention_checks": 1,  # gold episodes mixed into each annotator's sequence
        },
    ),
    _config(
        "social_eval_pilot",
        "Social evaluation: qualification pilot (gold episodes only)",
        "social_eval",
        2,
        "Every annotator rates the gold episodes; the export custom_export_qualified lists who qualified.",
        _SOCIAL,
        {
            **SOCIAL_DEFAULTS,
            "episodes": "samples",
            "comprehension_check": True,  # the rubric's quiz before the first episode
            "qualification_mode": True,  # gold episodes only
        },
    ),
    # payoff_reasoning_eval: keys and defaults in backend/reasoning/task.py (docs/apps/payoff_reasoning_eval.md).
    _config(
        "payoff_reasoning_eval",
        "Payoff reasoning: judge LLM reasoning about 2x2 games",
        "payoff_reasoning_eval",
        3,
        "People judge whether a language model reasoned correctly about the payoffs of 2x2 games, sentence by "
        "sentence; each log goes to judges_per_log people.",
        "Payoff reasoning evaluation (`payoff_reasoning_eval`)",
        dict(REASONING_DEFAULTS),
        _PAYOFF_CHOICES,
    ),
    # bias_tests: keys and defaults in backend/bias/settings.py (item_file, ask_confidence, order_seed).
    _config(
        "bias_tests",
        "Cognitive-bias tests",
        "bias_tests",
        2,
        "People answer cognitive-bias items (the same items models answer with the bias runner), with a "
        "confidence slider.",
        "Cognitive-bias tests (`bias_tests`)",
        dict(BIAS_DEFAULTS),
    ),
    _config(
        "bias_tests_no_confidence",
        "Cognitive-bias tests (no confidence slider)",
        "bias_tests",
        2,
        "As bias_tests, without the confidence slider.",
        "Cognitive-bias tests (`bias_tests`)",
        {**BIAS_DEFAULTS, "ask_confidence": False},
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

# One room per study: give Prolific the room URL (docs/running/prolific.md). Each room runs only the configs tied to
# it in ROOM_CONFIGS (lab_server/creation.py refuses any other, naming the room's configs); its name says which.
_WELCOME_PAGE = "global/RoomWelcome.html"
ROOM_CONFIGS = {
    "dond_study": ("dond_llm", "dond_llm_notes", "dond_human"),
    "social_eval_study": ("social_eval", "social_eval_pilot"),
    "payoff_reasoning_study": ("payoff_reasoning_eval",),
    "bias_study": ("bias_tests", "bias_tests_no_confidence"),
}
_ROOM_TITLES = {
    "dond_study": "Deal or No Deal study",
    "social_eval_study": "Social evaluation study",
    "payoff_reasoning_study": "Payoff reasoning study",
    "bias_study": "Cognitive-bias study",
}
ROOMS = [
    dict(name=name, display_name=f"{title} (configs: {', '.join(ROOM_CONFIGS[name])})", welcome_page=_WELCOME_PAGE)
    for name, title in _ROOM_TITLES.items()
]

LANGUAGE_CODE = "en"
REAL_WORLD_CURRENCY_CODE = "GBP"
use_currency(REAL_WORLD_CURRENCY_CODE)  # the shared flow's pages and the researcher pages name it
USE_POINTS = True

ADMIN_USERNAME = "admin"
ADMIN_PASSWORD = ENV.OTREE_ADMIN_PASSWORD
SECRET_KEY = ENV.SECRET_KEY or "development-only-key-not-for-production"

DEMO_PAGE_INTRO_HTML = f"""
People and language models in front of the same tasks. Each session config below runs on the embedded
SQLite database. {html.escape(who_plays(LLM_KEYS["llm_model"], ENV.OPENAI_BASE_URL))}
"""
