"""bias_tests: the session's settings and items, checked before the session exists and read back from the session.

The item file is read and checked in full in ``validate_session_config`` (before oTree creates any row), and its
text is kept in ``session.vars``, so editing or moving the file later changes no session. Each process parses that
copy once per session (``item_set``).
"""

import json
from pathlib import Path

from backend.bias import items as bias_items
from backend.bias.settings import BiasSettings, bias_settings, checked_session, normalised_config, read_item_file
from lab_server import study_pages

PROJECT_ROOT = Path(__file__).resolve().parent.parent
_SETTINGS: dict[str, BiasSettings] = {}  # session code -> settings (keys checked and normalised at creation)
_ITEM_SETS: dict[str, bias_items.ItemSet] = {}  # session code -> ItemSet, parsed once per process from session.vars


def validate_session_config(config: dict, *, max_versions: int) -> None:
    """Check the app's keys and its item file (every problem in one ValueError); store the keys' typed values."""
    settings, _, _ = checked_session(config, project_root=PROJECT_ROOT, max_versions=max_versions)
    config.update(normalised_config(settings))


def settings_of(session) -> BiasSettings:
    if session.code not in _SETTINGS:
        _SETTINGS[session.code] = bias_settings(session.config)
    return _SETTINGS[session.code]


def item_set(session) -> bias_items.ItemSet:
    if session.code not in _ITEM_SETS:
        _ITEM_SETS[session.code] = bias_items.parse_items(json.loads(session.vars["bias_items"]), source="session")
    return _ITEM_SETS[session.code]


def plan_session(session, *, max_versions: int) -> None:
    """Keep the checked item file's text in the session and give each participant a seeded order of tests."""
    settings = settings_of(session)
    # The text kept here is the one checked now: later edits or moves of the file change nothing in this session.
    text, items = read_item_file(settings.item_file, project_root=PROJECT_ROOT, max_versions=max_versions)
    session.vars["bias_items"] = text
    for participant in session.get_participants():
        seed = f"{settings.order_seed}:{participant.id_in_session}"
        participant.vars["bias_plan"] = bias_items.build_sequence(items.items, seed=seed)


def assign_round(subsession) -> None:
    """Give each player of this round the test version their plan holds (and a confirmation item's argument order)."""
    items, order_seed = item_set(subsession.session), settings_of(subsession.session).order_seed
    for player in subsession.get_players():
        plan = player.participant.vars["bias_plan"]
        if player.round_number > len(plan):
            continue
        item_id, version = plan[player.round_number - 1]
        item = items.item(item_id)
        player.item_id, player.bias, player.version = item_id, item.bias, version
        if item.arguments and version == bias_items.TREATMENT:
            order = bias_items.argument_order(item, seed=f"{order_seed}:{player.participant.id_in_session}")
            player.arguments_shown = ",".join(order)


def presented(player):
    """The player's item and what they are shown of it (``backend.bias.items.Presented``)."""
    item = item_set(player.session).item(player.item_id)
    order = player.arguments_shown.split(",") if player.field_maybe_none("arguments_shown") else None
    return item, bias_items.present(item, player.version, argument_order=order)


def launch_facts(session, facts) -> None:
    """The launch check's facts of a bias_tests session: the item set's language and size."""
    if "bias_items" in session.vars:
        items = item_set(session)
        facts["material"]["bias items"] = items.language
        facts["unit_config"]["bias_items_count"] = len(items.items)


study_pages.register_launch_facts("bias_tests", launch_facts)
