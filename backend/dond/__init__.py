"""Deal or No Deal: the game, its scores and its reports, as pure functions (the oTree app ``dond/`` and the
self-play runner both play through them).

| module | holds |
|---|---|
| ``rules`` | the fixed rules: languages, modes, roles, value totals, instance sizes; ``must_propose`` |
| ``errors`` | every broken rule: ``MoveError`` and one subclass per ``kind`` |
| ``items`` | item words in en/de/it, number words, stemming, ``check_item_word`` |
| ``instances`` | ``Instance``, its constraints, ``generate_instance``, a researcher's instances file, item text |
| ``proposals`` | reading a reply (``parse_reply``, ``parse_proposal``), ``format_proposal``, ``check_proposal`` |
| ``scoring`` | complementarity and ``outcome``, ``points``, ``goal_score``, ``bonus``, Pareto metrics, ``main_score``, ``game_metrics`` |
| ``game`` | the turn rules over stored events (``replay``, ``apply_event``), counterbalancing cells, ``participant_view`` |
| ``prompts`` | what an LLM player reads (``llm_messages``, ``reprompt_text``) and the scripted agent |
| ``play`` | an LLM's turns: ask, stream, check, store, re-prompt or abort (``llm_turns``) |
| ``protocol`` | the notes protocol (``Protocol``) and the per-player agency metrics of a game |
| ``agency`` | LAMEN's per-turn metrics: word limits, note splits, offers, faithfulness, utility |
| ``debiasing`` | the debiased summary of a per-player metric over side × first-mover cells (``summarise``) |
| ``export`` | the ``dond_games`` / ``dond_events`` columns and rows (app and self-play) |
| ``report`` | ``python -m backend report dond_games.csv`` |
| ``selfplay`` | ``python -m backend.dond.selfplay``: model-vs-model runs |
| ``settings`` | the app's typed session-config keys (``DondSettings``) |

The names below are re-exported for callers that play the game (``from backend import dond``).
"""

from backend.dond.errors import MoveError
from backend.dond.instances import Instance, entry_lines, generate_instance, instances_from_data
from backend.dond.items import item_word
from backend.dond.proposals import check_proposal, parse_proposal, parse_reply, proposal_vector
from backend.dond.rules import LANGUAGES, MODES, ROLES
from backend.dond.scoring import bonus, game_metrics, is_complementary, main_score, points

__all__ = [
    "LANGUAGES",
    "MODES",
    "ROLES",
    "Instance",
    "MoveError",
    "bonus",
    "check_proposal",
    "entry_lines",
    "game_metrics",
    "generate_instance",
    "instances_from_data",
    "is_complementary",
    "item_word",
    "main_score",
    "parse_proposal",
    "parse_reply",
    "points",
    "proposal_vector",
]
