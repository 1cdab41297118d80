import html
import json
import time
from pathlib import Path

from otree.api import *

import lab_server  # noqa: F401  (guards oTree's own pages, exports and session creation)
import study_flow
from backend.core import assignment, session_keys
from backend.core.csvio import iso_utc
from backend.core.script_json import script_json
from backend.social import forms as social_forms
from backend.social import report as social_report
from backend.social.episodes import episode_from_dict, load_episodes, parse_episode_text
from backend.social.rubrics import SCALE_LIMIT, load_rubric, rubric_from_dict

doc = """
Sotopia-style annotation of conversations: every annotator rates both agents of an episode on the seven dimensions
of the session's rubric (reasoning + rating each). Episodes are handed out from the database: k annotators each,
least-covered first, with expiring reservations. Gold episodes serve as attention checks, or, in qualification
mode, as the whole pilot. See README "social_eval".
"""

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class C(BaseConstants):
    NAME_IN_URL = "social_eval"
    PLAYERS_PER_GROUP = None
    NUM_ROUNDS = 15  # one round per task: the most episodes (regular + gold) one annotator can get
    MAX_QUESTIONS = 6  # comprehension questions a rubric may have


class Subsession(BaseSubsession):
    pass


class Group(BaseGroup):
    pass


def _slot_fields():
    """The rating form's slot fields (see backend/social/forms.py); the rubric decides which are used."""
    fields = {}
    for agent in social_forms.AGENTS:
        for slot in range(1, social_forms.MAX_DIMENSIONS + 1):
            fields[social_forms.rating_field(agent, slot)] = models.IntegerField()  # bounds: rating_*_min/_max
            fields[social_forms.reason_field(agent, slot)] = models.LongStringField()
    for number in range(1, C.MAX_QUESTIONS + 1):
        fields[f"quiz_{number}"] = models.IntegerField()  # choices: quiz_*_choices
    return fields


class Player(BasePlayer):
    consent_given = models.BooleanField(label="", widget=widgets.RadioSelect)
    episode_id = models.StringField(initial="", blank=True)
    is_gold = models.BooleanField(initial=False)
    shown_at = models.FloatField(blank=True)
    submitted_at = models.FloatField(blank=True)
    seconds_spent = models.FloatField(blank=True)
    attention_passed = models.BooleanField(blank=True)
    gold_max_difference = models.FloatField(blank=True)
    comprehension_attempts = models.IntegerField(initial=0)
    locals().update(_slot_fields())  # the class body's namespace: one field per slot, none copied by hand


class Assignment(ExtraModel):
    """Who holds or finished which episode; session-wide, linked to the round-1 subsession."""

    subsession = models.Link(Subsession)
    item_id = models.StringField()
    annotator = models.StringField()  # participant code
    status = models.StringField()  # reserved, done, released
    reserved_at = models.FloatField()
    done_at = models.FloatField()
    round_number = models.IntegerField()
    is_gold = models.BooleanField()


class StoredEpisode(ExtraModel):
    """The episodes of the session, validated at session creation (our JSON format)."""

    subsession = models.Link(Subsession)
    episode_id = models.StringField()
    position = models.IntegerField()
    is_gold = models.BooleanField()
    data = models.LongStringField()


# FUNCTIONS
_RUBRICS = {}  # session code -> Rubric, parsed from session.vars on first use (a cache of database content)
_EPISODES = {}  # (session code, episode id) -> Episode
_RATING_ROWS = {}  # session code -> per agent, the rating form's rows with their markup
_ROOT_IDS = {}  # session code -> id of its round-1 subsession (fixed for the session's life)


def _config_path(value):
    path = Path(value.strip())
    return path if path.is_absolute() else PROJECT_ROOT / path


# The app's session keys: reader, options and the default used when a session config leaves the key out.
MAX_EPISODES_JSON_CHARS = 5_000_000  # pasted into the admin form; larger sets belong in files
SESSION_KEYS = {
    "annotators_per_episode": (session_keys.whole_number, dict(minimum=1, maximum=100, default=2)),
    "episodes_per_annotator": (session_keys.whole_number, dict(minimum=1, maximum=C.NUM_ROUNDS, default=3)),
    "attention_checks": (session_keys.whole_number, dict(minimum=0, maximum=C.NUM_ROUNDS, default=0)),
    "gold_tolerance": (session_keys.number, dict(minimum=0, maximum=2 * SCALE_LIMIT, default=2)),
    "reservation_timeout_s": (session_keys.number, dict(minimum=1, maximum=7 * 24 * 3600, default=1800)),
    "min_reasoning_chars": (session_keys.whole_number, dict(minimum=0, maximum=2000, default=20)),
    "comprehension_check": (session_keys.flag, dict(default=False)),
    "comprehension_attempts": (session_keys.whole_number, dict(minimum=1, maximum=20, default=2)),
    "qualification_mode": (session_keys.flag, dict(default=False)),
    "rubric_file": (session_keys.text, dict(max_chars=500, default="")),
    "episodes": (session_keys.text, dict(max_chars=5000, default="")),
    "episodes_json": (session_keys.text, dict(max_chars=MAX_EPISODES_JSON_CHARS, default="")),
}


def _load_study_material(config):
    """Rubric and episodes named by the (typed) session config; raises ValueError naming the key, file and field."""
    rubric_value = config["rubric_file"].strip()
    rubric = load_rubric(
        _config_path(rubric_value) if rubric_value else None,
        what=f"The rubric_file {rubric_value!r}" if rubric_value else None,
    )
    social_forms.check_rubric_fits(rubric)
    episodes = []
    if config["episodes"].strip():
        parts = [_config_path(part) for part in config["episodes"].split(",") if part.strip()]
        try:
            episodes += load_episodes(parts, rubric=rubric)
        except ValueError as error:
            raise ValueError(f"The session key 'episodes' names a file that cannot be used: {error}") from None
    if config["episodes_json"].strip():
        episodes += parse_episode_text(config["episodes_json"], source="session config episodes_json", rubric=rubric)
    ids = [episode.id for episode in episodes]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"The episode ids {duplicates} occur twice (in 'episodes' and 'episodes_json').")
    if not episodes:
        raise ValueError("The session keys 'episodes' and 'episodes_json' are both empty: there is nothing to rate.")
    return rubric, episodes


def _check_config(config, rubric, episodes):
    """Checks of keys against each other and the material; ``config`` holds typed values."""
    regular = [e for e in episodes if not e.is_gold]
    gold = [e for e in episodes if e.is_gold]
    problems = []
    if config["qualification_mode"]:
        if not gold:
            problems.append("The session key 'qualification_mode' needs episodes with gold_ratings; there are none.")
        if len(gold) > C.NUM_ROUNDS:
            problems.append(
                f"The session key 'qualification_mode' supports at most {C.NUM_ROUNDS} gold episodes, "
                f"the episodes hold {len(gold)}."
            )
    else:
        per_person = config["episodes_per_annotator"] + config["attention_checks"]
        if per_person > C.NUM_ROUNDS:
            problems.append(
                f"The session keys 'episodes_per_annotator' plus 'attention_checks' must be <= {C.NUM_ROUNDS}, "
                f"not {per_person}."
            )
        if not regular:
            problems.append("The session key 'episodes' holds no regular (non-gold) episode.")
        if config["attention_checks"] > len(gold):
            problems.append(
                f"The session key 'attention_checks' ({config['attention_checks']}) exceeds the {len(gold)} gold "
                "episodes (episodes with gold_ratings)."
            )
    if config["comprehension_check"] and not 0 < len(rubric.comprehension) <= C.MAX_QUESTIONS:
        problems.append(
            f"The session key 'comprehension_check' needs 1 to {C.MAX_QUESTIONS} comprehension questions in the "
            f"rubric, which has {len(rubric.comprehension)}."
        )
    if problems:
        raise ValueError(" ".join(problems))


def _checked_material(config):
    """Type every key of the app (in place), then read and check the rubric and episodes: one ValueError naming every
    problem, or (rubric, episodes)."""
    problems = []
    for key, (reader, options) in SESSION_KEYS.items():
        try:
            config[key] = reader(config, key, **options)
        except ValueError as error:
            problems.append(str(error))
    if problems:
        raise ValueError(" ".join(problems))
    rubric, episodes = _load_study_material(config)
    _check_config(config, rubric, episodes)
    return rubric, episodes


def validate_session_config(config):
    """Refuse a session config before oTree creates anything (called by lab_server/creation.py); types the keys."""
    _checked_material(config)


def creating_session(subsession):
    if subsession.round_number != 1:
        return
    config = subsession.session.config
    # The files are read again and copied into the session: later edits or moves of them change no running session.
    rubric, episodes = _checked_material(config)
    for position, episode in enumerate(episodes):
        StoredEpisode.create(
            subsession=subsession,
            episode_id=episode.id,
            position=position,
            is_gold=episode.is_gold,
            data=json.dumps(episode.as_dict()),
        )
    subsession.session.vars["social_eval"] = dict(
        rubric=rubric.as_dict(),
        regular_ids=[e.id for e in episodes if not e.is_gold],
        gold_ids=[e.id for e in episodes if e.is_gold],
    )


def _root(obj):
    """The round-1 subsession, which holds the session-wide rows, for a player or a subsession."""
    subsession = getattr(obj, "subsession", obj)
    return subsession if subsession.round_number == 1 else subsession.in_round(1)


def _root_id(player):
    """The id of the round-1 subsession, without the two queries of ``_root`` (it is read on every page step)."""
    code = player.session.code
    if code not in _ROOT_IDS:
        _ROOT_IDS[code] = _root(player).id
    return _ROOT_IDS[code]


def _maybe(obj, name):
    return obj.field_maybe_none(name)


def _study(session):
    return session.vars["social_eval"]


def _rubric(session):
    if session.code not in _RUBRICS:
        _RUBRICS[session.code] = rubric_from_dict(_study(session)["rubric"], source="session rubric")
    return _RUBRICS[session.code]


def _episode(session_code, root_id, episode_id):
    """An episode of the session (``root_id``: its round-1 subsession, which holds the stored episodes)."""
    key = (session_code, episode_id)
    if key not in _EPISODES:
        (stored,) = StoredEpisode.objects_filter(subsession_id=root_id, episode_id=episode_id)
        _EPISODES[key] = episode_from_dict(json.loads(stored.data))
    return _EPISODES[key]


def _player_episode(player):
    """The episode the player is rating."""
    return _episode(player.session.code, _root_id(player), player.episode_id)


def _rating_bound(which):
    def bound(player, name):
        low, high = social_forms.slot_bounds(_rubric(player.session), name)
        return low if which == "min" else high

    return bound


def _reason_check(name):
    def check(player, value):
        config = player.session.config
        errors = social_forms.reasoning_errors(
            {name: value},
            _rubric(player.session),
            min_chars=int(config["min_reasoning_chars"]),
            language=config.get("language"),
        )
        return errors.get(name)

    return check


def _quiz_choices(number):
    def choices(player):
        questions = _rubric(player.session).comprehension
        if number > len(questions):
            return [[0, "-"]]
        return [[index, option] for index, option in enumerate(questions[number - 1].options)]

    return choices


# oTree looks up <field>_min / _max / _error_message / _choices in this module: generate them for every slot.
for _agent in social_forms.AGENTS:
    for _slot in range(1, social_forms.MAX_DIMENSIONS + 1):
        _rating = social_forms.rating_field(_agent, _slot)
        globals()[f"{_rating}_min"] = lambda player, _name=_rating: _rating_bound("min")(player, _name)
        globals()[f"{_rating}_max"] = lambda player, _name=_rating: _rating_bound("max")(player, _name)
        globals()[f"{social_forms.reason_field(_agent, _slot)}_error_message"] = _reason_check(
            social_forms.reason_field(_agent, _slot)
        )
for _number in range(1, C.MAX_QUESTIONS + 1):
    globals()[f"quiz_{_number}_choices"] = _quiz_choices(_number)


def consent_given_choices(player):
    return study_flow.consent_choices(player.session.config.get("language"))


def _rows(root_subsession):
    return Assignment.filter(subsession=root_subsession)


def _as_pick_row(row):
    return dict(item_id=row.item_id, participant=row.annotator, status=row.status, reserved_at=row.reserved_at)


def _pick_rows(root_id, *, except_id=None):
    """The regular assignment rows of the session, in order, as the dicts ``backend.core.assignment`` reads. Five columns
    as plain tuples: the session has a row per annotator and task, and whole ORM rows made this the costliest read
    of a step."""
    query = (
        Assignment.objects_filter(subsession_id=root_id, is_gold=False)
        .order_by(Assignment.id)
        .with_entities(
            Assignment.id, Assignment.item_id, Assignment.annotator, Assignment.status, Assignment.reserved_at
        )
    )
    return [
        dict(item_id=item_id, participant=annotator, status=status, reserved_at=reserved_at)
        for row_id, item_id, annotator, status, reserved_at in query
        if row_id != except_id
    ]


def _plan(player):
    participant_vars = player.participant.vars
    if "social_eval_plan" not in participant_vars:
        config, study = player.session.config, _study(player.session)
        plan = social_forms.task_plan(
            regular=int(config["episodes_per_annotator"]),
            gold_ids=study["gold_ids"],
            attention_checks=int(config["attention_checks"]),
            rotation=player.participant.id_in_session - 1,
            qualification=bool(config.get("qualification_mode")),
        )
        participant_vars["social_eval_plan"] = plan
        participant_vars["social_eval_done"] = 0
        study_flow.set_progress(player, done=0, total=len(plan))
    return participant_vars["social_eval_plan"]


def _regular_done(player):
    return sum(1 for p in player.in_previous_rounds() if _maybe(p, "submitted_at") is not None and not p.is_gold)


def _pick_regular(player, now):
    """Reserve the next regular episode for this annotator (least covered first), or None when none is left."""
    config = player.session.config
    item = assignment.choose_item(
        _study(player.session)["regular_ids"],
        _pick_rows(_root_id(player)),
        participant=player.participant.code,
        per_item=int(config["annotators_per_episode"]),
        now=now,
        timeout_s=float(config["reservation_timeout_s"]),
    )
    if item is None:
        return None
    return Assignment.create(
        subsession_id=_root_id(player),
        item_id=item,
        annotator=player.participant.code,
        status="reserved",
        reserved_at=now,
        round_number=player.round_number,
        is_gold=False,
        done_at=0.0,
    )


def _give(player, row, now):
    player.episode_id = row.item_id
    player.is_gold = row.is_gold
    player.shown_at = now


def _end_tasks(player):
    participant_vars = player.participant.vars
    participant_vars["social_eval_over"] = True
    if _regular_done(player) == 0 and not player.session.config.get("qualification_mode"):
        participant_vars["social_eval_nothing_left"] = True


def _ensure_task(player):
    """Give the player this round's episode if it has none yet; False when there is no task this round."""
    if not study_flow.is_active(player) or player.participant.vars.get("social_eval_over"):
        return False
    plan = _plan(player)
    if player.round_number > len(plan):
        return False
    if player.episode_id:
        return True
    now, slot = time.time(), plan[player.round_number - 1]
    if slot.startswith("gold:"):
        row = Assignment.create(
            subsession_id=_root_id(player),
            item_id=slot[len("gold:") :],
            annotator=player.participant.code,
            status="reserved",
            reserved_at=now,
            round_number=player.round_number,
            is_gold=True,
            done_at=0.0,
        )
    else:
        row = _pick_regular(player, now)
        if row is None:
            _end_tasks(player)
            return False
    _give(player, row, now)
    return True


def tasks_over(player):
    """No episode left for this annotator after this round (study_flow shows the completion page)."""
    participant_vars = player.participant.vars
    if participant_vars.get("social_eval_over"):
        return True
    plan = participant_vars.get("social_eval_plan")
    return plan is not None and player.round_number >= len(plan)


def _my_row(player):
    """The player's current assignment row (rows of released reservations stay in the log)."""
    query = Assignment.objects_filter(
        subsession_id=_root_id(player),
        annotator=player.participant.code,
        round_number=player.round_number,
        item_id=player.episode_id,
    )
    (row,) = [row for row in query if row.status != "released"]
    return row


def _still_needed(player, row, now):
    """Whether the episode of an expired reservation still lacks annotators (so this person may keep it)."""
    config = player.session.config
    others = _pick_rows(_root_id(player), except_id=row.id)
    done, live = assignment.coverage([row.item_id], others, now=now, timeout_s=float(config["reservation_timeout_s"]))[
        row.item_id
    ]
    return done + live < int(config["annotators_per_episode"])


def _is_expired(player, row, now):
    return row.status == "reserved" and not assignment.is_live_reservation(
        _as_pick_row(row), now=now, timeout_s=float(player.session.config["reservation_timeout_s"])
    )


def _refresh_reservation(player):
    """On (re)loading the rating page: renew an expired reservation if the episode is still needed, else swap it."""
    if not player.episode_id or player.is_gold:
        return
    now, row = time.time(), _my_row(player)
    if not _is_expired(player, row, now):
        return
    if _still_needed(player, row, now):
        row.reserved_at = now
        return
    row.status = "released"
    player.episode_id = ""
    new_row = _pick_regular(player, now)
    if new_row is None:
        _end_tasks(player)
    else:
        _give(player, new_row, now)


def _guideline(rubric):
    """The rubric's texts for templates, HTML-escaped (a researcher's file is data, not markup)."""
    escape = html.escape
    return dict(
        title=escape(rubric.title),
        instructions=[escape(p) for p in rubric.instructions],
        dimensions=[
            dict(
                key=d.key,
                label=escape(d.label),
                range_text=d.range_text,
                definition=escape(d.definition),
                examples=[
                    dict(
                        rationale=escape(e.rationale),
                        rating=e.rating,
                        verdict="Good example" if e.is_good else "Bad example",
                        css="good" if e.is_good else "bad",
                        why=escape(e.why),
                    )
                    for e in d.examples
                ],
            )
            for d in rubric.dimensions
        ],
    )


def _worked_example(rubric):
    worked = rubric.worked_example
    if not worked:
        return None
    escape = html.escape
    return dict(
        scenario=escape(worked["scenario"]),
        agents=[
            dict(
                name=escape(agent["name"]),
                background=escape(agent["background"]),
                goal=escape(agent["goal"]),
                secret=escape(agent.get("secret", "")),
                ratings=[
                    dict(
                        label=escape(d.label),
                        range_text=d.range_text,
                        rating=worked["ratings"][index][d.key]["rating"],
                        reasoning=escape(worked["ratings"][index][d.key]["reasoning"]),
                    )
                    for d in rubric.dimensions
                ],
            )
            for index, agent in enumerate(worked["agents"])
        ],
        turns=[
            dict(number=n, speaker=escape(t["speaker"]), text=escape(t["text"]))
            for n, t in enumerate(worked["turns"], start=1)
        ],
    )


def _episode_view(episode):
    escape = html.escape
    names = [agent.name for agent in episode.agents]
    kinds = {"speech": "", "action": "[action]", "non-verbal": "[non-verbal]", "leave": "left the conversation."}
    return dict(
        scenario=escape(episode.scenario),
        agents=[
            dict(
                index=index,
                name=escape(agent.name),
                background=escape(agent.background),
                goal=escape(agent.goal),
                secret=escape(agent.secret or "(none)"),
            )
            for index, agent in enumerate(episode.agents, start=1)
        ],
        turns=[
            dict(
                number=number,
                speaker=escape(turn.speaker),
                agent_index=names.index(turn.speaker) + 1,
                marker=kinds[turn.kind],
                text="" if turn.kind == "leave" else escape(turn.text),
            )
            for number, turn in enumerate(episode.turns, start=1)
        ],
    )


def _guide_html(texts):
    """A dimension's collapsed guideline (definition and examples) on the rating page; ``texts`` are escaped."""
    examples = "".join(
        f'<tr class="se-example se-example-{e["css"]}"><td>{e["rationale"]}</td><td>{e["rating"]}</td>'
        f"<td><strong>{e['verdict']}.</strong> {e['why']}</td></tr>"
        for e in texts["examples"]
    )
    return (
        f'<details class="se-guide"><summary>Guideline</summary><p>{texts["definition"]}</p>'
        '<table class="table table-sm se-example-table"><thead><tr><th>Annotator\'s reasoning</th><th>Rating</th>'
        f"<th>Assessment</th></tr></thead><tbody>{examples}</tbody></table></details>"
    )


def _choice_html(rating_name, value):
    input_id = f"id_{rating_name}_{value}".replace("-", "m")
    return (
        f'<label class="se-choice" for="{input_id}"><input type="radio" name="{rating_name}" id="{input_id}" '
        f'value="{value}" required><span>{str(value).replace("-", "−")}</span></label>'
    )


def _scale_html(rating_name, dimension):
    """The radio buttons of one rating (every value of the dimension's range, negative ones with a true minus)."""
    return "".join(_choice_html(rating_name, value) for value in dimension.choices)


def _rating_row(agent_index, slot, dimension, texts):
    rating_name = social_forms.rating_field(agent_index, slot)
    return dict(
        label=texts["label"],
        range_text=texts["range_text"],
        min=dimension.min,
        max=dimension.max,
        rating_field=rating_name,
        reason_field=social_forms.reason_field(agent_index, slot),
        guide_html=_guide_html(texts),
        scale_html=_scale_html(rating_name, dimension),
    )


def _rating_rows(session_code, rubric):
    """Per agent, the rows of the rating form with their markup rendered once per session: the rubric is fixed, and
    oTree's template engine spent more than half of the page's time on these loops (154 radio buttons)."""
    if session_code not in _RATING_ROWS:
        guideline = _guideline(rubric)["dimensions"]
        _RATING_ROWS[session_code] = [
            [
                _rating_row(agent_index, slot, dimension, texts)
                for slot, (dimension, texts) in enumerate(zip(rubric.dimensions, guideline, strict=True), start=1)
            ]
            for agent_index in social_forms.AGENTS
        ]
    return _RATING_ROWS[session_code]


def _rating_blocks(session_code, rubric, episode):
    rows = _rating_rows(session_code, rubric)
    return [
        dict(agent_index=agent_index, agent_name=html.escape(agent.name), rows=rows[agent_index - 1])
        for agent_index, agent in enumerate(episode.agents, start=1)
    ]


def _submitted_ratings(player, rubric):
    values = {name: getattr(player, name) for name in social_forms.form_fields(rubric)}
    return social_forms.collected_ratings(values, rubric)


def _record(player, rubric):
    participant = player.participant
    return dict(
        ratings=_submitted_ratings(player, rubric),
        session_code=player.session.code,
        annotator=participant.code,
        **study_flow.identifiers(participant),
        round=player.round_number,
        seconds_spent=round(player.seconds_spent, 1) if _maybe(player, "seconds_spent") is not None else "",
        attention_passed="" if _maybe(player, "attention_passed") is None else int(player.attention_passed),
        shown_at=iso_utc(_maybe(player, "shown_at")),
        submitted_at=iso_utc(player.submitted_at),
    )


def _finished_players(players):
    return [p for p in players if _maybe(p, "submitted_at") is not None and p.episode_id]


def _qualification(players, session):
    """Per participant of a qualification (or attention) session: gold episodes rated, passed, largest deviation."""
    results = {}
    for player in _finished_players(players):
        if not player.is_gold:
            continue
        entry = results.setdefault(
            player.participant.code, dict(player=player, rated=0, passed=0, worst=0.0, last_submitted_at=0.0)
        )
        entry["rated"] += 1
        entry["last_submitted_at"] = max(entry["last_submitted_at"], player.submitted_at)
        entry["passed"] += int(bool(_maybe(player, "attention_passed")))
        entry["worst"] = max(entry["worst"], _maybe(player, "gold_max_difference") or 0.0)
    required = len(_study(session)["gold_ids"]) if session.config.get("qualification_mode") else None
    for entry in results.values():
        complete = entry["rated"] == required if required else entry["rated"] > 0
        entry["qualified"] = complete and entry["passed"] == entry["rated"]
    return results


def _all_players(subsession):
    return [p for s in subsession.in_rounds(1, C.NUM_ROUNDS) for p in s.get_players()]


def vars_for_admin_report(subsession):
    root, session, config = _root(subsession), subsession.session, subsession.session.config
    rubric, study = _rubric(session), _study(session)
    players = _all_players(root)
    now, k = time.time(), int(config["annotators_per_episode"])
    counts = assignment.coverage(
        study["regular_ids"],
        _pick_rows(root.id),
        now=now,
        timeout_s=float(config["reservation_timeout_s"]),
    )
    coverage = social_report.coverage_counts({item: done for item, (done, _) in counts.items()}, per_item=k)
    records = []
    for player in _finished_players(players):
        episode = _episode(session.code, root.id, player.episode_id)
        records += social_forms.long_rows(_record(player, rubric), episode, rubric)
    summary, charts = [], []
    if records:
        import pandas as pd

        ratings = social_report.ratings_from_export(pd.DataFrame(records))
        regular = ratings[~ratings["is_gold"]]
        if not regular.empty:
            table = social_report.summarise(regular, dimensions=rubric.keys, pooled_group=None)
            summary = [
                {
                    key: ("-" if isinstance(v, float) and v != v else (round(v, 2) if isinstance(v, float) else v))
                    for key, v in row.items()
                }
                for row in table[table["scope"] == "both"].to_dict("records")
            ]
            for dimension in rubric.dimensions:
                values = regular.loc[regular["dimension"] == dimension.key, "rating"]
                charts.append(
                    dict(
                        key=dimension.key,
                        label=dimension.label,
                        values=dimension.choices,
                        human=[int((values == v).sum()) for v in dimension.choices],
                    )
                )
    qualification = _qualification(players, session)
    return dict(
        k=k,
        n_regular=len(study["regular_ids"]),
        n_gold=len(study["gold_ids"]),
        coverage=[dict(ratings=n, episodes=count) for n, count in coverage.items()],
        complete=coverage.get(k, 0),
        live_reservations=sum(live for _, live in counts.values()),
        n_annotators=len({p.participant.code for p in _finished_players(players)}),
        summary=summary,
        chart_json=script_json(charts),
        n_attention=len(qualification),
        n_qualified=sum(entry["qualified"] for entry in qualification.values()),
        qualification_mode=bool(config.get("qualification_mode")),
    )


def _export_groups(players):
    by_session = {}
    for player in _finished_players(players):
        by_session.setdefault(player.session.code, []).append(player)
    for session_players in by_session.values():
        session = session_players[0].session
        yield session, _root(session_players[0]), _rubric(session), session_players


def custom_export_ratings_long(players):
    """One row per rating: episode, agent, dimension, rating, reasoning (escaped), annotator, Prolific IDs, time."""
    yield social_report.EXPORT_COLUMNS
    for session, root, rubric, session_players in _export_groups(players):
        for player in session_players:
            episode = _episode(session.code, root.id, player.episode_id)
            for row in social_forms.long_rows(_record(player, rubric), episode, rubric):
                yield [row[column] for column in social_report.EXPORT_COLUMNS]


def custom_export_ratings_wide(players):
    """One row per annotation with Sotopia's column names (goal_1, goal_reasoning_1, ...). One header for the whole
    file: sessions with different rubrics share it, each row filling its own dimensions' columns."""
    rows, header = [], list(social_forms.WIDE_HEAD)
    for session, root, rubric, session_players in _export_groups(players):
        header += [column for column in social_forms.wide_columns(rubric) if column not in header]
        for player in session_players:
            rows.append(
                social_forms.wide_values(_record(player, rubric), _episode(session.code, root.id, player.episode_id))
            )
    yield header if rows else social_forms.wide_columns(load_rubric())
    for values in rows:
        yield [values.get(column, "") for column in header]


def custom_export_qualified(players):
    """Gold-episode results per annotator; `qualified` = every gold rating within gold_tolerance."""
    yield [
        "session_code",
        "participant_code",
        "prolific_pid",
        "study_id",
        "prolific_session_id",
        "gold_rated",
        "gold_passed",
        "max_difference",
        "qualified",
        "last_submitted_at",
    ]
    sessions = {}
    for player in players:
        sessions.setdefault(player.session.code, (player.session, []))[1].append(player)
    for code, (session, session_players) in sessions.items():
        for participant_code, entry in _qualification(session_players, session).items():
            identity = study_flow.identifiers(entry["player"].participant)
            worst = entry["worst"] if entry["worst"] != float("inf") else ""
            yield [
                code,
                participant_code,
                identity["prolific_pid"],
                identity["study_id"],
                identity["prolific_session_id"],
                entry["rated"],
                entry["passed"],
                worst,
                int(entry["qualified"]),
                iso_utc(entry["last_submitted_at"]),
            ]


def custom_export_assignments(players):
    """The assignment log: which annotator held or finished which episode, and when (ISO-8601 UTC)."""
    yield [
        "session_code",
        "episode_id",
        "annotator",
        "participant_code",
        "prolific_pid",
        "study_id",
        "prolific_session_id",
        "status",
        "reserved_at",
        "done_at",
        "round",
        "is_gold",
    ]
    sessions, participants = {}, {}
    for player in players:
        participants.setdefault(player.participant.code, player.participant)
        if player.round_number == 1:
            sessions.setdefault(player.session.code, player.subsession)
    for code, root in sessions.items():
        for row in _rows(root):
            participant = participants.get(row.annotator)
            identity = study_flow.identifiers(participant) if participant else dict.fromkeys(_IDENTITY_COLUMNS, "")
            yield [
                code,
                row.item_id,
                row.annotator,
                row.annotator,
                identity["prolific_pid"],
                identity["study_id"],
                identity["prolific_session_id"],
                row.status,
                iso_utc(row.reserved_at),
                iso_utc(row.done_at) if row.status == "done" else "",
                row.round_number,
                int(row.is_gold),
            ]


_IDENTITY_COLUMNS = ("participant_code", "prolific_pid", "study_id", "prolific_session_id")


# PAGES
class Consent(study_flow.ConsentPage, Page):
    pass


class Instructions(Page):
    @staticmethod
    def is_displayed(player):
        return player.round_number == 1 and study_flow.is_active(player)

    @staticmethod
    def vars_for_template(player):
        rubric = _rubric(player.session)
        return dict(
            guideline=_guideline(rubric),
            worked=_worked_example(rubric),
            min_reasoning_chars=player.session.config["min_reasoning_chars"],
            episodes_per_annotator=player.session.config["episodes_per_annotator"],
            qualification_mode=bool(player.session.config.get("qualification_mode")),
            progress=study_flow.progress(player),
        )


class Comprehension(Page):
    form_model = "player"

    @staticmethod
    def is_displayed(player):
        return (
            player.round_number == 1
            and study_flow.is_active(player)
            and bool(player.session.config.get("comprehension_check"))
        )

    @staticmethod
    def get_form_fields(player):
        return [f"quiz_{n}" for n in range(1, len(_rubric(player.session).comprehension) + 1)]

    @staticmethod
    def vars_for_template(player):
        questions = _rubric(player.session).comprehension
        return dict(
            questions=[
                dict(
                    field=f"quiz_{n}",
                    text=html.escape(q.question),
                    options=[
                        dict(value=i, label=html.escape(o), input_id=f"id_quiz_{n}_{i}")
                        for i, o in enumerate(q.options)
                    ],
                )
                for n, q in enumerate(questions, start=1)
            ],
            attempts_left=int(player.session.config["comprehension_attempts"]) - player.comprehension_attempts,
        )

    @staticmethod
    def error_message(player, values):
        questions = _rubric(player.session).comprehension
        wrong = [n for n, q in enumerate(questions, start=1) if values[f"quiz_{n}"] != q.answer]
        if not wrong:
            return None
        player.comprehension_attempts += 1
        attempts = int(player.session.config["comprehension_attempts"])
        if player.comprehension_attempts >= attempts:
            return None  # out of attempts: before_next_page screens out
        return social_forms.message(
            "quiz_wrong_one" if len(wrong) == 1 else "quiz_wrong_many",
            language=player.session.config.get("language"),
            wrong=len(wrong),
            attempts=attempts - player.comprehension_attempts,
        )

    @staticmethod
    def before_next_page(player, timeout_happened):
        questions = _rubric(player.session).comprehension
        if any(getattr(player, f"quiz_{n}") != q.answer for n, q in enumerate(questions, start=1)):
            study_flow.screen_out(player, "failed_comprehension")


class Rate(Page):
    form_model = "player"

    @staticmethod
    def is_displayed(player):
        return _ensure_task(player)

    @staticmethod
    def get_form_fields(player):
        return social_forms.form_fields(_rubric(player.session)) if player.episode_id else []

    @staticmethod
    def vars_for_template(player):
        _refresh_reservation(player)
        rubric, config = _rubric(player.session), player.session.config
        plan = _plan(player)
        context = dict(
            progress=study_flow.progress(player),
            task_number=player.round_number,
            task_total=len(plan),
            min_reasoning_chars=int(config["min_reasoning_chars"]),
            max_reasoning_chars=social_forms.MAX_REASONING_CHARS,
            reasoning_hint=html.escape(rubric.reasoning_hint),
            timeout_minutes=round(float(config["reservation_timeout_s"]) / 60),
            has_episode=bool(player.episode_id),
        )
        if player.episode_id:
            episode = _player_episode(player)
            context.update(episode=_episode_view(episode), blocks=_rating_blocks(player.session.code, rubric, episode))
        return context

    @staticmethod
    def js_vars(player):
        return dict(
            storage_key=f"social_eval:{player.participant.code}:{player.episode_id}",
            storage_prefix=f"social_eval:{player.participant.code}:",
            min_chars=int(player.session.config["min_reasoning_chars"]),
        )

    @staticmethod
    def error_message(player, values):
        if not player.episode_id or player.is_gold:
            return None
        now, row = time.time(), _my_row(player)
        if _is_expired(player, row, now) and not _still_needed(player, row, now):
            minutes = round(float(player.session.config["reservation_timeout_s"]) / 60)
            return social_forms.message(
                "reservation_lost", language=player.session.config.get("language"), minutes=minutes
            )
        return None

    @staticmethod
    def before_next_page(player, timeout_happened):
        if not player.episode_id:
            _end_tasks(player)
            return
        now, rubric, row = time.time(), _rubric(player.session), _my_row(player)
        row.status, row.done_at = "done", now
        player.submitted_at = now
        player.seconds_spent = now - player.shown_at
        if player.is_gold:
            episode = _player_episode(player)
            ratings = {key: rating for key, (rating, _) in _submitted_ratings(player, rubric).items()}
            passed, worst = social_forms.gold_check(
                ratings, episode, tolerance=float(player.session.config["gold_tolerance"])
            )
            player.attention_passed = bool(passed)
            player.gold_max_difference = float(min(worst, 1e9))
        participant_vars = player.participant.vars
        participant_vars["social_eval_done"] = participant_vars.get("social_eval_done", 0) + 1
        study_flow.set_progress(
            player, done=participant_vars["social_eval_done"], total=len(participant_vars["social_eval_plan"])
        )


class NothingLeft(Page):
    """Terminal page when every episode already has enough annotators before this person rated any."""

    @staticmethod
    def is_displayed(player):
        return study_flow.is_active(player) and bool(player.participant.vars.get("social_eval_nothing_left"))

    @staticmethod
    def vars_for_template(player):
        code = player.session.config.get("screenout_code") or ""
        return dict(code=code, url=study_flow.completion_url(code) if code else "")


class ScreenOut(study_flow.ScreenOutPage, Page):
    pass


class Completion(study_flow.CompletionPage, Page):
    """Shown as soon as tasks_over(player) says the participant has no task left (study_flow)."""


page_sequence = [Consent, Instructions, Comprehension, Rate, NothingLeft, ScreenOut, Completion]
