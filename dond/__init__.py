import collections
import functools
import json
import logging
import time
import types
from pathlib import Path

import openai  # noqa: F401  (imported at start-up: a first import inside a live call would block every page ~0.5 s)
from otree.api import *
from otree.database import db
from otree.middleware import lock2 as PAGE_LOCK  # held by oTree around every page request

import lab_server  # noqa: F401  (guards oTree's own pages, exports and session creation)
import study_flow
from backend.core import csvio, rate_limit, researcher_files, session_keys
from backend.core.llm import LLMSettings, start_stream
from backend.core.script_json import script_json
from backend.core.stored_text import storable
from backend.dond import export as dond_export
from backend.dond import game as dond_game
from backend.dond import play as dond_play
from backend.dond import report as dond_report
from backend.dond import rules as dond
from backend.dond import scoring as pareto
from backend.dond.protocol import Protocol

from .texts import texts

doc = """
Deal or No Deal: a person splits items with an LLM (or another person) by chat and secret proposals. Every message,
proposal, violation, re-prompt and LLM call is an Event row written before it is shown; the game state is derived
from these rows. See README "DoND".
"""

logger = logging.getLogger(__name__)
PROJECT_ROOT = Path(__file__).resolve().parent.parent
CONFIG_DEFAULTS = dict(
    mode="semi",
    language="en",
    opponent="llm",
    max_messages=5,
    first_mover="counterbalance",
    instance_seed=1,
    instances_file="",
    llm_reprompts=2,
    max_message_chars=1000,
    game_timeout_s=1800,
    turn_timeout_s=300,
    disconnect_timeout_s=90,
    pairing_timeout_s=600,
    llm_protocol="plain",  # plain, or notes: a private note with the split it would accept before each public reply
    llm_word_limit=64,  # word limit of notes and messages stated in the notes protocol's prompts
    llm_probe_external=False,  # also ask, each turn, which split the other player would accept
    llm_blocking=False,  # benchmark only: make each model call block the server, as a synchronous call would
    live_messages_per_minute=30,  # per participant (chat, proposals, reloads, heartbeats); more are refused
    llm_requests_per_game=60,  # model requests (attempts) per LLM player and game; at the limit the game aborts
)
DELTA_INTERVAL_S = 0.05
STORED_ERROR_CHARS = 1000  # longest error text stored for a refused input
FIRST_MOVER_CELLS = {"counterbalance": (1, 2, 3, 4), "human": (1, 3), "llm": (2, 4)}


class C(BaseConstants):
    NAME_IN_URL = "dond"
    PLAYERS_PER_GROUP = None
    NUM_ROUNDS = 1


class Subsession(BaseSubsession):
    pass


class Group(BaseGroup):
    pass


class Player(BasePlayer):
    consent_given = models.BooleanField(label="", widget=widgets.RadioSelect)
    game_id = models.IntegerField(initial=0)  # id of the Game row; 0 = none yet
    game_role = models.StringField(initial="")  # A or B
    is_unpaired = models.BooleanField(initial=False)
    pairing_started_at = models.FloatField(initial=0)
    last_seen = models.FloatField(initial=0)
    outcome = models.StringField(initial="")
    points = models.IntegerField(initial=0)
    bonus_points = models.FloatField(initial=0)


class Game(ExtraModel):
    subsession = models.Link(Subsession)
    number = models.IntegerField()  # 0-based order in the session: sets the cell and the instance
    opponent = models.StringField()
    model = models.StringField()
    mode = models.StringField()
    language = models.StringField()
    cell = models.IntegerField()
    focal_role = models.StringField()
    opener = models.StringField()
    max_messages = models.IntegerField()
    llm_reprompts = models.IntegerField()
    max_message_chars = models.IntegerField()
    llm_protocol = models.StringField(initial="plain")
    llm_word_limit = models.IntegerField(initial=64)
    llm_probe_external = models.BooleanField(initial=False)
    instance_json = models.LongStringField()
    participant_a = models.StringField()
    participant_b = models.StringField()
    created_at = models.FloatField()


class Event(ExtraModel):
    game = models.Link(Game)
    created_at = models.FloatField()
    kind = models.StringField()
    role = models.StringField()
    actor = models.StringField()
    text = models.LongStringField()
    proposal = models.StringField()
    error_kind = models.StringField()
    error = models.LongStringField()
    model = models.StringField()
    llm_messages = models.LongStringField()
    llm_reply = models.LongStringField()
    llm_reasoning = models.LongStringField()  # a reasoning model's thinking: exported, never shown, never parsed
    reasoning_shown = models.BooleanField()  # previewed before it could be told to be thinking (see backend.core.llm)
    max_tokens = models.IntegerField()  # the token limit the request carried
    latency_s = models.FloatField()
    prompt_tokens = models.IntegerField()
    completion_tokens = models.IntegerField()
    attempts = models.IntegerField()
    finish_reason = models.StringField()
    llm_error_kind = models.StringField()
    purpose = models.StringField()  # of an llm_call: note, message or probe
    turn = models.IntegerField()  # of note, probe and llm_call events (notes protocol)


# FUNCTIONS
def consent_given_choices(player: Player):
    return study_flow.consent_choices(player.session.config.get("language"))


def setting(session, key):
    return session.config.get(key, CONFIG_DEFAULTS.get(key))


# Every dond key: its reader from backend.core.session_keys, with sane bounds (a value outside them is a typo, not a
# design: e.g. max_message_chars=0 once made every chat message too long and broke the exports of all sessions).
DAY_S = 86_400
KEY_CHECKS = {
    "mode": lambda config, key: session_keys.choice(config, key, dond.MODES),
    "language": lambda config, key: session_keys.choice(config, key, dond.LANGUAGES),
    "opponent": lambda config, key: session_keys.choice(config, key, ("llm", "human")),
    "max_messages": lambda config, key: session_keys.whole_number(config, key, minimum=1, maximum=50),
    "first_mover": lambda config, key: session_keys.choice(config, key, FIRST_MOVER_CELLS),
    "instance_seed": lambda config, key: session_keys.whole_number(config, key, minimum=0, maximum=2**31 - 1),
    "instances_file": lambda config, key: session_keys.text(
        config, key, max_chars=500, pattern=r"[^\x00-\x1f\x7f]*", describe="a file path"
    ),
    "llm_reprompts": lambda config, key: session_keys.whole_number(config, key, minimum=0, maximum=10),
    "max_message_chars": lambda config, key: session_keys.whole_number(config, key, minimum=1, maximum=20_000),
    "game_timeout_s": lambda config, key: session_keys.whole_number(config, key, minimum=30, maximum=DAY_S),
    "turn_timeout_s": lambda config, key: session_keys.whole_number(config, key, minimum=10, maximum=DAY_S),
    "disconnect_timeout_s": lambda config, key: session_keys.whole_number(config, key, minimum=10, maximum=DAY_S),
    "pairing_timeout_s": lambda config, key: session_keys.whole_number(config, key, minimum=10, maximum=DAY_S),
    "llm_protocol": lambda config, key: session_keys.choice(config, key, ("plain", "notes")),
    "llm_word_limit": lambda config, key: session_keys.whole_number(config, key, minimum=1, maximum=1000),
    "llm_probe_external": lambda config, key: session_keys.flag(config, key),
    "llm_blocking": lambda config, key: session_keys.flag(config, key),
    "live_messages_per_minute": lambda config, key: session_keys.whole_number(config, key, minimum=1, maximum=10_000),
    "llm_requests_per_game": lambda config, key: session_keys.whole_number(config, key, minimum=1, maximum=10_000),
}
assert set(KEY_CHECKS) == set(CONFIG_DEFAULTS)


def validate_session_config(config: dict) -> None:
    """Check every dond key and the instances file before the session exists (``lab_server/creation.py``); each
    key is stored back in its proper type, absent keys get their defaults. Raises one ValueError naming them all."""
    problems = []
    for key, check in KEY_CHECKS.items():
        try:
            config[key] = check(config, key) if key in config else CONFIG_DEFAULTS[key]
        except ValueError as error:
            problems.append(str(error))
    if not problems and config["instances_file"]:
        try:
            load_instances(config["instances_file"], language=config["language"])
        except ValueError as error:
            problems.append(str(error))
    if problems:
        raise ValueError(" ".join(problems))


def creating_session(subsession: Subsession):
    session = subsession.session
    # The file as it is now, checked again, is the session's for good: a later edit or move changes nothing here.
    path = setting(session, "instances_file")
    instances = load_instances(path, language=setting(session, "language")) if path else []
    session.vars[INSTANCES_VAR] = [instance.to_dict() for instance in instances]
    if setting(session, "opponent") == "llm":  # one group per person: the bots drive each game separately
        subsession.set_group_matrix([[player] for player in subsession.get_players()])


INSTANCES_VAR = "dond_instances"  # session.vars key of the instances file's content, copied at creation


def load_instances(path, *, language):
    """The instances of ``path`` (relative to the project root or absolute), every one checked for ``language``."""
    file = Path(path) if Path(path).is_absolute() else PROJECT_ROOT / path
    what = f"instances_file {path!r}"
    text = researcher_files.read_text(file, what=what, max_bytes=5 * 1024 * 1024)
    data = researcher_files.parse_json(text, what=what)
    return dond.instances_from_data(data, what=what, languages=[language], lines=dond.entry_lines(text))


def instance_for(session, number):
    """Games 4k..4k+3 (one per counterbalancing cell) share instance k: of the session's copy of the instances file,
    else generated from ``instance_seed``."""
    instances = session.vars.get(INSTANCES_VAR)
    if instances is None and setting(session, "instances_file"):  # created before the copy was kept: as it was then
        path, language = setting(session, "instances_file"), setting(session, "language")
        instances = [instance.to_dict() for instance in load_instances(path, language=language)]
    if instances:
        return dond.Instance.from_dict(instances[(number // 4) % len(instances)])
    return dond.generate_instance(int(setting(session, "instance_seed")) + number // 4)


def create_game(subsession, players, opponent):
    """A new game for one person (vs LLM) or two (the first is the focal player), its cell from the cycle."""
    session = subsession.session
    number = len(Game.filter(subsession=subsession))
    cycle = FIRST_MOVER_CELLS[setting(session, "first_mover")]
    cell = cycle[number % len(cycle)]
    focal_role, opener = dond_game.cell_roles(cell)
    roles = [focal_role, dond_game.other_role(focal_role)]
    codes = {"A": "", "B": ""}
    for player, role in zip(players, roles, strict=False):
        codes[role] = player.participant.code
    game = Game.create(
        subsession=subsession,
        number=number,
        opponent=opponent,
        model=LLMSettings.from_config(session.config).model if opponent == "llm" else "human",
        mode=setting(session, "mode"),
        language=setting(session, "language"),
        cell=cell,
        focal_role=focal_role,
        opener=opener,
        max_messages=int(setting(session, "max_messages")),
        llm_reprompts=int(setting(session, "llm_reprompts")),
        max_message_chars=int(setting(session, "max_message_chars")),
        **protocol_fields(session),
        instance_json=json.dumps(instance_for(session, number).to_dict()),
        participant_a=codes["A"],
        participant_b=codes["B"],
        created_at=time.time(),
    )
    db.commit()  # the id must exist before players point to it
    for player, role in zip(players, roles, strict=False):
        player.game_id, player.game_role = game.id, role
    db.commit()
    return game


def protocol_fields(session):
    protocol = Protocol.from_config({key: setting(session, key) for key in CONFIG_DEFAULTS})
    return dict(
        llm_protocol=protocol.name, llm_word_limit=protocol.word_limit, llm_probe_external=protocol.probe_external
    )


def protocol_of(game):
    return Protocol(game.llm_protocol, game.llm_word_limit, bool(game.llm_probe_external))


def game_of(player):
    if not player.game_id:
        if setting(player.session, "opponent") != "llm":
            return None
        create_game(player.subsession, [player], "llm")
    return Game.filter(subsession=player.subsession, id=player.game_id)[0]


def config_of(game):
    return dond_game.GameConfig(
        game.mode, game.language, game.opener, game.max_messages, game.llm_reprompts, game.max_message_chars
    )


def instance_of(game):
    return _instance_from_json(game.instance_json)


@functools.lru_cache(maxsize=256)
def _instance_from_json(instance_json):
    return dond.Instance.from_dict(json.loads(instance_json))  # frozen: one parse serves every turn


# The Game columns a turn reads. Every commit expires the ORM rows, and reading a column afterwards costs a query,
# so an LLM turn (a commit per event) works from this plain copy instead.
SNAPSHOT_FIELDS = [
    "id",
    "mode",
    "language",
    "opener",
    "max_messages",
    "llm_reprompts",
    "max_message_chars",
    "instance_json",
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
    return [event_dict(event) for event in Event.objects_filter(game_id=game.id).order_by(Event.id)]


def event_dict(event):
    data = {name: getattr(event, name) for name in dond_export.DOND_EVENTS_COLUMNS if hasattr(event, name)}
    data["proposal"] = json.loads(event.proposal) if event.proposal else None
    return data


def store_event(game, event):
    """Write one event and commit at once: it is on disk before anyone is shown it."""
    write_events(game, [event])


def write_events(game, events):
    """Write events and commit them together; the cached event list gets them as a reload would read them."""
    rows, cache_key = [], (game.id, game.created_at)
    try:
        for event in events:
            fields = {key: value for key, value in event.items() if not key.startswith("_")}
            fields["created_at"] = fields.get("created_at") or time.time()
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
    every yield of a live method; expired by a commit, it is reloaded each time (about a tenth of the server's CPU
    in a game, measured with py-spy). The rows a live call holds are its own participant's, so none goes stale."""
    session = db._db
    session.expire_on_commit = False
    try:
        db.commit()
    finally:
        session.expire_on_commit = True


def llm_role(game):
    return "B" if game.participant_a and not game.participant_b else "A"


def partner_of(player, game):
    code = game.participant_b if player.game_role == "A" else game.participant_a
    return next((p for p in player.subsession.get_players() if p.participant.code == code), None) if code else None


def view_for(player, game, events):
    """The localised chat and controls of ``player`` (texts shown with textContent in the browser)."""
    text = texts(game.language)
    instance = instance_of(game)
    view = dond_game.participant_view(events, player.game_role, config_of(game), counts=instance.counts)
    words = instance.plural(game.language)
    for item in view["chat"]:
        notice = item.pop("notice", None)
        if notice == "you_proposed":
            taken = [f"{n} {w}" for n, w in zip(item.pop("proposal"), words, strict=True) if n]
            item["text"] = text["notice_you_proposed"].format(items=", ".join(taken) or text["notice_nothing"])
        elif notice == "aborted":
            item["text"] = text["notice_aborted"].format(reason=text[f"reason_{item.pop('reason')}"])
        elif notice:
            item["text"] = text[f"notice_{notice}"]
    # The LLM is working on its move whenever the state says it is to act: the browser shows it typing.
    view["typing"] = game.opponent == "llm" and view["other_to_act"]
    view["type"] = "state"
    return view


def payloads(player, game, events, *, both=False):
    """State payloads for the player (and the human partner, in person-vs-person games)."""
    result = {player.id_in_group: view_for(player, game, events)}
    partner = partner_of(player, game) if both else None
    if partner is not None:
        result[partner.id_in_group] = view_for(partner, game, events)
    return result


def rejected(player, game, error):
    text = texts(game.language)
    kind = error.kind if isinstance(error, dond.MoveError) else "bad_request"
    message = text.get(f"error_{kind}", text["error_bad_request"]).format(limit=game.max_message_chars)
    # Clipped: the error can quote the forged input, which must not grow the game's rows (re-read every live call).
    detail = storable(str(error)[:STORED_ERROR_CHARS])
    store_event(game, dict(kind="input_rejected", role=player.game_role, actor="human", error_kind=kind, error=detail))
    return {player.id_in_group: {"type": "rejected", "message": message}}


def human_move(player, game, data, events):
    """Validate and store a person's message or proposal (appended to ``events``); returns the error payload or None."""
    instance = instance_of(game)
    state = dond_game.replay(events, config_of(game), counts=instance.counts)
    base = dict(role=player.game_role, actor="human", created_at=time.time())
    try:
        if data.get("type") == "message":
            if not isinstance(data.get("text"), str):
                raise ValueError("A message must be text.")  # a bad request, not a badly written proposal
            if storable(data["text"]) != data["text"]:  # NUL or a lone surrogate: no keyboard types them
                raise ValueError("A message must not contain NUL or unpaired surrogate characters.")
            event = dict(base, kind="message", text=data["text"])
        else:
            counts = dond.check_proposal(data.get("counts"), instance)
            event = dict(base, kind="proposal", proposal=list(dond.proposal_vector(counts, instance)))
        dond_game.apply_event(state, event)
    except (dond.MoveError, ValueError) as error:
        return rejected(player, game, error)
    store_event(game, event)
    events.append(event)
    return None


def check_partner(player, game):
    """Person vs person: end the game when the partner left (no heartbeat) or let their turn time out."""
    partner = partner_of(player, game)
    events = events_of(game)
    state = dond_game.replay(events, config_of(game), counts=instance_of(game).counts)
    if partner is None or state.finished:
        return
    now = time.time()
    last_move = max(
        (e["created_at"] or 0 for e in events if e["kind"] in dond_game.STATE_EVENTS), default=game.created_at
    )
    if now - (partner.last_seen or game.created_at) > setting(player.session, "disconnect_timeout_s"):
        reason = "partner_left"
    elif (
        partner.game_role in state.to_act
        and player.game_role not in state.to_act
        and now - last_move > setting(player.session, "turn_timeout_s")
    ):
        reason = "partner_timeout"
    else:
        return
    store_event(game, dict(kind="abort", role=partner.game_role, actor="system", text=reason))


# Live-message times per participant, for the sliding-window limit: in memory, as the limit protects this
# process (a restart forgets them, which is harmless).
LIVE_MESSAGE_TIMES: dict[int, list[float]] = {}


def too_fast(player):
    """The refusal payload when the participant exceeds live_messages_per_minute, else None (the message counts)."""
    now, code = time.monotonic(), player.participant_id
    times = rate_limit.prune(LIVE_MESSAGE_TIMES.get(code, ()), now, window_s=60.0)
    limit = setting(player.session, "live_messages_per_minute")
    wait = rate_limit.wait_seconds(times, now, limit=limit, window_s=60.0)
    if wait > 0:
        LIVE_MESSAGE_TIMES[code] = times
        message = texts(setting(player.session, "language"))["error_rate_limited"].format(seconds=max(1, round(wait)))
        return {player.id_in_group: {"type": "rejected", "kind": "rate_limited", "message": message}}
    LIVE_MESSAGE_TIMES[code] = [*times, now]
    return None


async def live_bargain(player: Player, data):
    """Messages and proposals of the person; the LLM's turns stream back (async: other people are never blocked)."""
    if refusal := too_fast(player):
        yield refusal  # refused before any database work or model call
        return
    try:
        async for payload in bargain_steps(player, data):
            yield payload
    except Exception:  # an answer must reach the browser, never a silent failure
        logger.exception("dond live method failed")
        yield {
            player.id_in_group: {
                "type": "rejected",
                "message": texts(setting(player.session, "language"))["error_server"],
            }
        }


def first_step(player, data):
    """The synchronous part of a live message: the person's move checked and stored, the answer to send back, and
    the (game, seat, events) with which the LLM may act next (None when it may not)."""
    game = snapshot_for(player)
    if game is None:
        return None, None
    # This participant's lock serialises its live calls, so this list stays in step with the stored rows.
    events = events_of(game)
    seat = types.SimpleNamespace(id_in_group=player.id_in_group, game_role=player.game_role)
    kind = data.get("type") if isinstance(data, dict) else None
    if kind in ("message", "proposal"):
        error = human_move(seat, game, data, events)
        if error:
            return error, None
    elif kind not in ("load", "ping"):
        return rejected(seat, game, ValueError(f"unknown message type {kind!r}")), None
    if game.opponent == "human":
        player.last_seen = time.time()
        db.commit()
        check_partner(player, game)
        return payloads(player, game, events_of(game), both=True), None
    return payloads(seat, game, events), (game, seat, events)


async def bargain_steps(player, data):
    # oTree serves each page request in a worker thread, under PAGE_LOCK, on the same database connection as this
    # live method. Every database step here holds that lock too, so neither side commits or rolls back the other's
    # half-done writes (under load, SQLite otherwise failed with "cannot start a transaction within a transaction").
    async with PAGE_LOCK:
        answer, llm_may_act = first_step(player, data)
        settings = LLMSettings.from_config(player.session.config)
        blocking = setting(player.session, "llm_blocking")
        max_requests = setting(player.session, "llm_requests_per_game")
    if llm_may_act is None:
        if answer:
            yield answer
        return
    game, seat, events = llm_may_act
    unsaved = []

    def keep(event):
        unsaved.append(event)
        events.append(event)

    async def save():
        if unsaved:
            async with PAGE_LOCK:
                write_events(game, unsaved)
            unsaved.clear()

    turns = dond_play.llm_turns(
        load_events=lambda: events,
        store_event=keep,
        instance=instance_of(game),
        config=config_of(game),
        role=llm_role(game),
        settings=settings,
        call_model=dond_play.blocking_stream if blocking else start_stream,
        protocol=protocol_of(game),
        max_requests=max_requests,
    )
    try:
        async for item in llm_steps(seat, game, events, turns, save, answer):
            yield item
    finally:
        await save()


async def llm_steps(seat, game, events, turns, save, answer):
    """The LLM's progress as payloads; each item's events are saved before it is shown.

    ``answer`` (the state after the person's move, which shows the LLM typing) is sent when the LLM's turn has
    started, so the model's request is already on its way while it travels. Every send is a turn of the event
    loop that all participants share; the pieces of a reply go out at most every DELTA_INTERVAL_S, and those still
    held back when the reply is stored are not sent at all: the state that follows holds the whole message.
    """
    pending, flushed = "", 0.0
    async for item in turns:
        await save()
        if item["type"] == "typing":
            if answer:
                yield answer
                answer = None
            continue
        if item["type"] == "delta":
            pending += item["text"]
            if time.monotonic() - flushed >= DELTA_INTERVAL_S:
                yield {seat.id_in_group: {"type": "delta", "text": pending}}
                pending, flushed = "", time.monotonic()
            continue
        pending, answer = "", None  # the state below shows the stored event and supersedes both
        yield payloads(seat, game, events)
    if answer:  # the LLM did not act (not its turn, or the game is over)
        yield answer


def live_pairing(player: Player, data):
    """Person vs person: pair the two who have waited longest and are still on the page (heartbeats)."""
    if refusal := too_fast(player):
        return refusal
    now = time.time()
    player.last_seen = now
    if not player.pairing_started_at:
        player.pairing_started_at = now
    if player.game_id:
        return {player.id_in_group: {"paired": True}}
    waiting = [
        other
        for other in player.subsession.get_players()
        if other.id != player.id
        and not other.game_id
        and not other.is_unpaired
        and other.pairing_started_at
        and now - other.last_seen < 15
    ]
    if waiting:
        partner = min(waiting, key=lambda other: other.pairing_started_at)
        create_game(player.subsession, [partner, player], "human")
        return {player.id_in_group: {"paired": True}, partner.id_in_group: {"paired": True}}
    if now - player.pairing_started_at > setting(player.session, "pairing_timeout_s"):
        player.is_unpaired = True
        return {player.id_in_group: {"paired": False}}
    return {player.id_in_group: {"waiting": True}}


def finish(player):
    """Store outcome, points and bonus of a finished (or abandoned) game on the player; idempotent."""
    game = game_of(player)
    if game is None:
        player.outcome = "unpaired"
        return None
    events = events_of(game)
    row = dond_export.game_row(events, instance_of(game), config_of(game), **game_meta(game))
    if row["outcome"] in ("success", "lose"):
        role = player.game_role.lower()
        other = "b" if role == "a" else "a"
        player.points = int(row[f"points_{role}"])
        player.bonus_points = float(dond.bonus_points(game.mode, row[f"points_{role}"], row[f"points_{other}"]))
        if row["outcome"] == "lose":
            player.bonus_points = 0.0
    player.outcome = row["outcome"]
    player.payoff = player.bonus_points
    return row


def game_meta(game):
    return dict(
        session_code=game.subsession.session.code,
        game_id=f"{game.subsession.session.code}-{game.number + 1}",
        opponent=game.opponent,
        model=game.model,
        cell=game.cell,
        focal_role=game.focal_role,
        participant_a=game.participant_a,
        participant_b=game.participant_b,
        llm_models={llm_role(game): game.model} if game.opponent == "llm" else {},
        protocol=protocol_of(game),
    )


def games_rows(subsessions):
    for subsession in subsessions:
        for game in Game.filter(subsession=subsession):
            yield game, stored_events(game)


def people_of(game, participants):
    """Role -> participant code, Prolific PID and study id of each person in ``game`` (``participants`` by code)."""
    people = {}
    for role, code in (("A", game.participant_a), ("B", game.participant_b)):
        if not code:
            continue
        participant = participants.get(code)
        ids = study_flow.identifiers(participant) if participant is not None else {}
        people[role] = dict(
            participant_code=code, prolific_pid=ids.get("prolific_pid", ""), study_id=ids.get("study_id", "")
        )
    return people


def export_games(players):
    """(game, events, people) of every game of the players' sessions, for the custom exports."""
    subsessions = {player.subsession.id: player.subsession for player in players}.values()
    participants = {player.participant.code: player.participant for player in players}
    for game, events in games_rows(subsessions):
        yield game, events, people_of(game, participants)


def custom_export_dond_games(players):
    yield dond_export.DOND_GAMES_COLUMNS
    for game, events, people in export_games(players):
        row = dond_export.game_row(events, instance_of(game), config_of(game), **game_meta(game), people=people)
        yield [row[name] for name in dond_export.DOND_GAMES_COLUMNS]


def custom_export_dond_events(players):
    yield dond_export.DOND_EVENTS_COLUMNS
    for game, events, people in export_games(players):
        meta = game_meta(game)
        rows = dond_export.event_rows(
            events,
            instance_of(game),
            config_of(game),
            session_code=meta["session_code"],
            game_id=meta["game_id"],
            people=people,
            focal_role=game.focal_role,
        )
        for row in rows:
            yield [row[name] for name in dond_export.DOND_EVENTS_COLUMNS]


def vars_for_admin_report(subsession):
    rows = [
        dond_export.game_row(events, instance_of(game), config_of(game), **game_meta(game))
        for game, events in games_rows([subsession])
    ]
    import pandas as pd

    frame = pd.DataFrame(rows, columns=dond_export.DOND_GAMES_COLUMNS).astype(str)
    summary = [admin_summary_row(row) for row in dond_report.summarise(frame)] if rows else []
    agency = [admin_agency_row(row) for row in (dond_report.summarise_agency(frame) or [])] if rows else []
    outcomes = {
        name: sum(row["outcome"] == name for row in rows) for name in ("success", "lose", "aborted", "unfinished")
    }
    return dict(summary=summary, agency=agency, games=rows, outcomes_json=script_json(outcomes), n_games=len(rows))


def admin_number(value, digits=1):
    return "–" if value != value else f"{value:.{digits}f}"  # NaN is the only value unequal to itself


def admin_summary_row(row):
    low, high = row["main_score_ci"]
    rates = ("aborted_rate", "llm_error_rate", "llm_invalid_rate", "lose_rate", "success_rate", "pareto_optimal_rate")
    formatted = {name: admin_number(row[name], 2) for name in rates}
    scores = ("main_score", "main_score_debiased", "benchmark_score")
    formatted.update({name: admin_number(row[name]) for name in scores})
    return dict(row, **formatted, ci=f"{admin_number(low)} – {admin_number(high)}")


def admin_agency_row(row):
    """One row of the "LLM agency" table (``dond_report.summarise_agency``), numbers as text."""
    formatted = {name: admin_number(row[name], 3) for name in ("mean", "debiased_mean", "se")}
    return dict(row, **formatted, ci=f"{admin_number(row['ci_low'], 3)} – {admin_number(row['ci_high'], 3)}")


def chart_data(game, player):
    """Every split's points (mine, other's), the Pareto frontier and the agreed split, for Chart.js."""
    instance = instance_of(game)
    mine, theirs = (instance.values_a, instance.values_b)[:: 1 if player.game_role == "A" else -1]
    counts = instance.counts
    pa, pb = pareto.split_points(counts, mine, theirs)
    points = sorted({(int(a), int(b)) for a, b in zip(pa, pb, strict=True)})
    frontier = pareto.pareto_frontier(counts, mine, theirs).tolist()
    return dict(all=[{"x": a, "y": b} for a, b in points], frontier=[{"x": a, "y": b} for a, b in frontier])


# PAGES
class Consent(study_flow.ConsentPage, Page):
    pass


class Pairing(Page):
    live_method = live_pairing

    @staticmethod
    def is_displayed(player: Player):
        return study_flow.is_active(player) and setting(player.session, "opponent") == "human"

    @staticmethod
    def get_timeout_seconds(player: Player):
        return setting(player.session, "pairing_timeout_s") + 30

    @staticmethod
    def vars_for_template(player: Player):
        return dict(text=texts(setting(player.session, "language")))

    @staticmethod
    def before_next_page(player: Player, timeout_happened):
        if not player.game_id:
            player.is_unpaired = True


class Instructions(Page):
    @staticmethod
    def is_displayed(player: Player):
        return study_flow.is_active(player) and not player.is_unpaired

    @staticmethod
    def vars_for_template(player: Player):
        game = game_of(player)
        instance = instance_of(game)
        text = texts(game.language)
        values = instance.values(player.game_role)
        first = text["first_you"] if game.opener == player.game_role else text["first_other"]
        per_point = cu(1).to_real_world_currency(player.session)
        return dict(
            text=text,
            intro=text["intro"].format(opponent=text[f"opponent_{game.opponent}"]),
            rules=[rule.format(max_messages=game.max_messages, first=first) for rule in text["rules"]],
            goal=text[f"goal_{game.mode}"],
            bonus_rule=text["bonus_rule"].format(per_point=per_point),
            rows=[
                dict(word=w, count=c, value=v)
                for w, c, v in zip(instance.plural(game.language), instance.counts, values, strict=True)
            ],
        )


class Bargain(Page):
    live_method = live_bargain

    @staticmethod
    def is_displayed(player: Player):
        return study_flow.is_active(player) and not player.is_unpaired

    @staticmethod
    def get_timeout_seconds(player: Player):
        return setting(player.session, "game_timeout_s")

    @staticmethod
    def vars_for_template(player: Player):
        return Instructions.vars_for_template(player)

    @staticmethod
    def js_vars(player: Player):
        game = game_of(player)
        instance = instance_of(game)
        text = texts(game.language)
        keys = ["you", "other", "send", "placeholder", "messages_left", "your_turn", "waiting", "typing"]
        keys += ["must_propose", "propose", "confirm_proposal", "finished", "continue", "error_server"]
        return dict(
            view=view_for(player, game, events_of(game)),
            items=[
                dict(id=i, word=w, count=c)
                for i, w, c in zip(instance.item_types, instance.plural(game.language), instance.counts, strict=True)
            ],
            text={key: text[key] for key in keys},
            max_chars=game.max_message_chars,
            opponent=game.opponent,
        )

    @staticmethod
    def error_message(player: Player, values):
        game = game_of(player)
        if not dond_game.replay(events_of(game), config_of(game), counts=instance_of(game).counts).finished:
            return texts(game.language)["error_not_finished"]

    @staticmethod
    def before_next_page(player: Player, timeout_happened):
        game = game_of(player)
        state = dond_game.replay(events_of(game), config_of(game), counts=instance_of(game).counts)
        if not state.finished:  # the page's time limit: the game ends for both
            store_event(game, dict(kind="abort", role=player.game_role, actor="system", text="time_limit"))


class Results(Page):
    @staticmethod
    def is_displayed(player: Player):
        return study_flow.is_active(player)

    @staticmethod
    def vars_for_template(player: Player):
        text = texts(setting(player.session, "language"))
        row = finish(player)
        if row is None:
            return dict(text=text, unpaired=True)
        role, other = player.game_role.lower(), "b" if player.game_role == "A" else "a"
        reason = text[f"reason_{dond_game.abort_reason_code(csvio.unescape_text(row['abort_reason']))}"]
        return dict(
            text=text,
            unpaired=False,
            outcome=row["outcome"],
            outcome_text=text[f"outcome_{row['outcome']}"].format(reason=reason)
            if row["outcome"] != "unfinished"
            else "",
            my_points=row[f"points_{role}"],
            other_points=row[f"points_{other}"],
            main_score="–" if row["main_score"] == "" else f"{float(row['main_score']):.0f} / 100",
            bonus=player.payoff.to_real_world_currency(player.session),
        )

    @staticmethod
    def js_vars(player: Player):
        game = game_of(player)
        if game is None:
            return {}
        text = texts(game.language)
        data = chart_data(game, player)
        state = dond_game.replay(events_of(game), config_of(game), counts=instance_of(game).counts)
        agreed = None
        if state.outcome == "success":
            instance = instance_of(game)
            mine = dond.points(state.proposals[player.game_role], instance.values(player.game_role))
            other_role = dond_game.other_role(player.game_role)
            agreed = {"x": mine, "y": dond.points(state.proposals[other_role], instance.values(other_role))}
        elif state.outcome == "lose":
            agreed = {"x": 0, "y": 0}
        labels = {key: text[key] for key in ("chart_all", "chart_frontier", "chart_agreed", "chart_x", "chart_y")}
        return dict(chart=data, agreed=agreed, labels=labels)


class ScreenOut(study_flow.ScreenOutPage, Page):
    pass


class Completion(study_flow.CompletionPage, Page):
    pass


page_sequence = [Consent, Pairing, Instructions, Bargain, Results, ScreenOut, Completion]
