"""The dond app's reads and writes: a session's settings, its games and their events, and the caches that spare the
database a read on every live message. The app's models are imported inside the functions (oTree imports
``dond/__init__.py``, which imports this module before its models exist)."""

import collections
import functools
import json
import types
from pathlib import Path

from backend import dond
from backend.core import clock
from backend.core.llm import LLMSettings
from backend.dond import export as dond_export
from backend.dond import game as dond_game
from backend.dond import integrity as dond_integrity
from backend.dond import settings as dond_settings
from backend.dond.protocol import Protocol
from backend.dond.treatments import Treatment, llm_view
from lab_server import otree_internals

PROJECT_ROOT = Path(__file__).resolve().parent.parent
INSTANCES_VAR = "dond_instances"  # session.vars key of the instances file's content, copied at creation

# A session's settings, read once: the config is checked at creation and never changes afterwards.
SETTINGS: dict[str, dond_settings.DondSettings] = {}


def settings_of(session) -> dond_settings.DondSettings:
    """The typed dond keys of ``session`` (``backend/dond/settings.py``), cached per session code."""
    settings = SETTINGS.get(session.code)
    if settings is None:
        settings = SETTINGS[session.code] = dond_settings.dond_settings(session.config)
    return settings


def load_instances(path, *, language):
    """The instances of ``path`` (relative to the project root or absolute), every one checked for ``language``."""
    return dond_settings.load_instances(path, language=language, project_root=PROJECT_ROOT)


def keep_instances(session):
    """The instances file as it is now, checked again, becomes the session's for good: a later edit changes nothing."""
    settings = settings_of(session)
    path = settings.instances_file
    instances = load_instances(path, language=settings.prompt_language) if path else []
    session.vars[INSTANCES_VAR] = [instance.to_dict() for instance in instances]


def instance_for(session, number):
    """Games 4k..4k+3 (one per counterbalancing cell) share instance k: of the session's copy of the instances file,
    else generated from ``instance_seed``."""
    settings = settings_of(session)
    instances = session.vars.get(INSTANCES_VAR)
    if instances is None and settings.instances_file:  # created before the copy was kept: as it was then
        loaded = load_instances(settings.instances_file, language=settings.prompt_language)
        instances = [instance.to_dict() for instance in loaded]
    if instances:
        return dond.Instance.from_dict(instances[(number // 4) % len(instances)])
    return dond.generate_instance(settings.instance_seed + number // 4)


def create_game(subsession, players, opponent):
    """A new game for one person (vs LLM) or two (the first is the focal player), its cell from the cycle."""
    from . import Game

    session = subsession.session
    settings = settings_of(session)
    number = len(Game.filter(subsession=subsession))
    cycle = settings.first_mover_cells
    cell = cycle[number % len(cycle)]
    focal_role, opener = dond_game.cell_roles(cell)
    roles = [focal_role, dond_game.other_role(focal_role)]
    codes = {"A": "", "B": ""}
    for player, role in zip(players, roles, strict=False):
        codes[role] = player.participant.code
    protocol = settings.protocol
    game = Game.create(
        subsession=subsession,
        number=number,
        opponent=opponent,
        model=LLMSettings.from_config(session.config).model if opponent == "llm" else "human",
        mode=settings.mode,
        language=settings.prompt_language,
        page_language=settings.language,
        cell=cell,
        focal_role=focal_role,
        opener=opener,
        max_messages=settings.max_messages,
        llm_reprompts=settings.llm_reprompts,
        max_message_chars=settings.max_message_chars,
        clembench_exact=settings.clembench_exact,
        llm_protocol=protocol.name,
        llm_word_limit=protocol.word_limit,
        llm_probe_external=protocol.probe_external,
        instance_json=json.dumps(instance_for(session, number).to_dict()),
        treatment_json=settings.treatment.to_json(),
        participant_a=codes["A"],
        participant_b=codes["B"],
        created_at=clock.now(),
    )
    otree_internals.db.commit()  # the id must exist before players point to it
    for player, role in zip(players, roles, strict=False):
        player.game_id, player.game_role = game.id, role
    otree_internals.db.commit()
    return game


def game_of(player):
    """The player's game (a person facing an LLM gets theirs on first need); None while a person is unpaired."""
    from . import Game

    if not player.game_id:
        if settings_of(player.session).opponent != "llm":
            return None
        create_game(player.subsession, [player], "llm")
    return Game.filter(subsession=player.subsession, id=player.game_id)[0]


def protocol_of(game):
    return Protocol(game.llm_protocol, game.llm_word_limit, bool(game.llm_probe_external))


def config_of(game):
    return dond_game.GameConfig(
        game.mode,
        game.language,
        game.opener,
        game.max_messages,
        game.llm_reprompts,
        game.max_message_chars,
        clembench_exact=bool(getattr(game, "clembench_exact", False)),  # False for a game from before the key
    )


def page_language_of(game):
    """The language of the person's pages in ``game``: the session's ``language``; a game from before the column,
    its ``language`` (then always the same)."""
    return getattr(game, "page_language", "") or game.language


def treatment_of(game):
    """The game's treatment keys as the session had them when it was created (defaults for an older game)."""
    return Treatment.from_json(getattr(game, "treatment_json", ""))


def llm_view_of(game):
    """What the game's LLM player is told of the treatment (``backend.dond.treatments.llm_view``)."""
    return llm_view(treatment_of(game), "llm")


def instance_of(game):
    return instance_from_json(game.instance_json)


@functools.lru_cache(maxsize=256)
def instance_from_json(instance_json):
    return dond.Instance.from_dict(json.loads(instance_json))  # frozen: one parse serves every turn


def llm_role(game):
    return "B" if game.participant_a and not game.participant_b else "A"


def partner_of(player, game):
    code = game.participant_b if player.game_role == "A" else game.participant_a
    return next((p for p in player.subsession.get_players() if p.participant.code == code), None) if code else None


# The Game columns a turn reads. Every commit expires the ORM rows, and reading a column afterwards costs a query,
# so an LLM turn (a commit per event) works from this plain copy instead.
SNAPSHOT_FIELDS = [
    "id",
    "mode",
    "language",
    "page_language",
    "opener",
    "max_messages",
    "llm_reprompts",
    "max_message_chars",
    "clembench_exact",
    "instance_json",
    "treatment_json",
    "opponent",
    "model",
    "participant_a",
    "participant_b",
    "llm_protocol",
    "llm_word_limit",
    "llm_probe_external",
    "created_at",
]


def snapshot_of(game):
    return types.SimpleNamespace(**{name: getattr(game, name) for name in SNAPSHOT_FIELDS})


# Caches of database content, rebuilt from the rows after a restart. A Game row is never changed once created, and
# every event is written by write_events in this one process (oTree runs one), which appends it here after its
# commit. Keys carry created_at so a game id that SQLite reuses after a session is deleted never hits a stale entry.
# Reading a game's rows again on every live message was about a fifth of the server's CPU in a game (py-spy).
# Only code under oTree's page lock fills GAME_EVENTS (live steps, page hooks, the admin report): an unlocked reader
# (exports) could otherwise store a list read just before a commit and miss that event for good.
GAME_SNAPSHOTS: dict[tuple[str, int], types.SimpleNamespace] = {}
GAME_EVENTS: collections.OrderedDict[tuple[int, float], list[dict]] = collections.OrderedDict()
GAME_EVENTS_MAX = 2000  # games kept, least recently used dropped first (an LLM game's events hold every prompt)


def snapshot_for(player):
    """The snapshot of ``player``'s game (None when there is none), read from the database once per game."""
    key = (player.session.code, player.game_id)
    if not player.game_id or key not in GAME_SNAPSHOTS:
        game = game_of(player)
        if game is None:
            return None
        GAME_SNAPSHOTS[(player.session.code, game.id)] = snapshot_of(game)
        key = (player.session.code, game.id)
    return GAME_SNAPSHOTS[key]


def events_of(game):
    """The game's events in order, as dicts (``game`` is a Game row or its snapshot): a fresh list each call, whose
    dicts are the cache's own (read them, never change them). Call it under oTree's page lock; see GAME_EVENTS."""
    key = (game.id, game.created_at)
    cached = GAME_EVENTS.get(key)
    if cached is None:
        cached = GAME_EVENTS[key] = stored_events(game)
        while len(GAME_EVENTS) > GAME_EVENTS_MAX:
            GAME_EVENTS.popitem(last=False)
    else:
        GAME_EVENTS.move_to_end(key)
    return list(cached)


def stored_events(game):
    """The game's events as the database has them (exports read this: they run without oTree's page lock)."""
    from . import Event

    return [event_dict(event) for event in Event.objects_filter(game_id=game.id).order_by(Event.id)]


def event_dict(event):
    data = {name: getattr(event, name) for name in dond_export.DOND_EVENTS_COLUMNS if hasattr(event, name)}
    try:
        data["proposal"] = json.loads(event.proposal) if event.proposal else None
    except ValueError:  # a broken row stays as stored: the readers flag it (backend.dond.integrity)
        data["proposal"] = event.proposal
    return data


def store_event(game, event):
    """Write one event and commit at once: it is on disk before anyone is shown it."""
    write_events(game, [event])


def write_judged(game, events):
    """Write the events an LLM turn prepared from its own, older copy of the game, each judged first against the
    game as stored (``backend.dond.integrity.late_reason``). Those the stored game refuses (it ended meanwhile: the
    page's time limit, the admin's advance, the person's last proposal) are never appended to its events: they are
    stored as late calls (``LateCall``, the ``dond_late_calls`` export). Returns the late events. Call it under
    oTree's page lock, so that nothing is stored between the reading and the writing."""
    config, counts = config_of(game), instance_of(game).counts
    state, _ = dond_integrity.replay_checked(events_of(game), config, counts=counts)
    admitted, late = [], []
    for event in events:
        # What follows a late event in the same turn (its re-prompt, the abort it led to) is late with it.
        reason = late[-1][1] if late else dond_integrity.late_reason(state, event)
        if reason is not None:
            late.append((event, reason))
            continue
        if event.get("kind") in dond_game.STATE_EVENTS:
            state = dond_game.apply_event(state, event)
        admitted.append(event)
    write_events(game, admitted, late=late)
    return [event for event, _ in late]


def write_events(game, events, *, late=()):
    """Write events (and ``late``: (event, reason) pairs kept apart as late calls) and commit them together; the
    cached event list gets the events as a reload would read them."""
    from . import Event, LateCall

    rows, cache_key = [], (game.id, game.created_at)
    try:
        for event, reason in late:
            fields = {key: value for key, value in event.items() if not key.startswith("_")}
            LateCall.create(
                game_id=game.id,
                arrived_at=clock.now(),
                late_reason=reason,
                kind=str(fields.get("kind") or ""),
                role=str(fields.get("role") or ""),
                event_json=json.dumps(fields, ensure_ascii=False, default=str),
            )
        for event in events:
            fields = {key: value for key, value in event.items() if not key.startswith("_")}
            fields["created_at"] = fields.get("created_at") or clock.now()
            if fields.get("proposal") is not None:
                fields["proposal"] = json.dumps(list(fields["proposal"]))
            rows.append(Event.create(game_id=game.id, **fields))
        commit_keeping_loaded_rows()
    except Exception:
        GAME_EVENTS.pop(cache_key, None)  # whatever reaches the disk is read back next time
        raise
    if cache_key in GAME_EVENTS:
        GAME_EVENTS[cache_key].extend(event_dict(row) for row in rows)


def commit_keeping_loaded_rows():
    """Commit without expiring the rows this live call has loaded. oTree reads the participant row again after
    every yield of a live method; expired by a commit, it is reloaded each time
    (docs/decisions/0009-a-page-step-costs-the-same-at-any-size.md). The rows a live call holds are its own
    participant's, so none goes stale."""
    db, session = otree_internals.db, otree_internals.request_session()
    session.expire_on_commit = False
    try:
        db.commit()
    finally:
        session.expire_on_commit = True
