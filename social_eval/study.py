"""The session's study material as the pages read it: typed settings, rubric, episodes, the round-1 subsession.

Everything here is read from the database once per process and session and kept (the material of a session is
fixed at creation). The models are imported from the app when first needed (oTree imports the app's ``__init__``,
which imports this module).
"""

import json
from pathlib import Path

from backend.social.episodes import episode_from_dict
from backend.social.rubrics import rubric_from_dict
from backend.social.settings import SocialSettings, checked_settings, social_settings
from lab_server import study_pages
from study_flow.assignments import root  # the round-1 subsession, which holds the session-wide rows

PROJECT_ROOT = Path(__file__).resolve().parent.parent

_SETTINGS = {}  # session code -> SocialSettings (the config was checked and typed at creation)
_RUBRICS = {}  # session code -> Rubric, parsed from session.vars on first use (a cache of database content)
_EPISODES = {}  # (session code, episode id) -> Episode
_ROOT_IDS = {}  # session code -> id of its round-1 subsession (fixed for the session's life)
_STUDIES = {}  # session code -> session.vars["social_eval"], as stored at creation (never changed afterwards)


def checked(config):
    """Settings, rubric and episodes of a session config, all checked; the config's keys are typed in place."""
    from . import C

    settings, rubric, episodes = checked_settings(
        config, project_root=PROJECT_ROOT, max_tasks=C.NUM_ROUNDS, max_questions=C.MAX_QUESTIONS
    )
    config.update(settings.as_config())
    return settings, rubric, episodes


def create(subsession):
    """Copy the session's episodes and rubric into the database (later edits or moves of the files change no
    running session)."""
    from . import StoredEpisode

    _, rubric, episodes = checked(subsession.session.config)
    for position, episode in enumerate(episodes):
        StoredEpisode.create(
            subsession=subsession,
            episode_id=episode.id,
            position=position,
            is_gold=episode.is_gold,
            data=json.dumps(episode.as_dict()),
        )
    subsession.session.vars["social_eval"] = dict(  # the regular ids are the stored episodes' (study)
        rubric=rubric.as_dict(),
        gold_ids=[e.id for e in episodes if e.is_gold],
    )


def settings_of(session) -> SocialSettings:
    if session.code not in _SETTINGS:
        from . import C

        _SETTINGS[session.code] = social_settings(session.config, max_tasks=C.NUM_ROUNDS)
    return _SETTINGS[session.code]


def study(session):
    """Episode ids of the session: ``regular_ids`` (in the order of the episodes file), ``gold_ids``; and the
    ``rubric`` as stored. Read once per process and session: oTree marks a session's vars changed whenever they are
    read, and writes them back whole with the step that read them (twice per annotator here). The regular ids are
    read from the stored episodes, not kept in the session's vars (which are unpickled with the session's row on
    every request); a session whose vars hold them uses those."""
    if session.code not in _STUDIES:
        stored = dict(session.vars["social_eval"])
        if "regular_ids" not in stored:
            stored["regular_ids"] = _stored_regular_ids(session)
        _STUDIES[session.code] = stored
    return _STUDIES[session.code]


def _stored_regular_ids(session):
    from . import StoredEpisode, Subsession

    (root,) = Subsession.objects_filter(session=session, round_number=1)
    query = StoredEpisode.objects_filter(subsession_id=root.id, is_gold=False).order_by(StoredEpisode.position)
    return [episode_id for (episode_id,) in query.with_entities(StoredEpisode.episode_id)]


def rubric(session):
    if session.code not in _RUBRICS:
        _RUBRICS[session.code] = rubric_from_dict(study(session)["rubric"], source="session rubric")
    return _RUBRICS[session.code]


def root_id(player):
    """The id of the round-1 subsession, without the two queries of ``root`` (it is read on every page step)."""
    code = player.session.code
    if code not in _ROOT_IDS:
        _ROOT_IDS[code] = root(player).id
    return _ROOT_IDS[code]


def episode(session_code, root_id, episode_id):
    """An episode of the session (``root_id``: its round-1 subsession, which holds the stored episodes)."""
    from . import StoredEpisode

    key = (session_code, episode_id)
    if key not in _EPISODES:
        (stored,) = StoredEpisode.objects_filter(subsession_id=root_id, episode_id=episode_id)
        _EPISODES[key] = episode_from_dict(json.loads(stored.data))
    return _EPISODES[key]


def player_episode(player):
    """The episode the player is rating."""
    return episode(player.session.code, root_id(player), player.episode_id)


def maybe(obj, name):
    return obj.field_maybe_none(name)


def all_players(subsession):
    from . import C

    return [p for s in subsession.in_rounds(1, C.NUM_ROUNDS) for p in s.get_players()]


def finished_players(players):
    return [p for p in players if maybe(p, "submitted_at") is not None and p.episode_id]


def launch_facts(session, facts) -> None:
    """The launch check's facts of a social_eval session: how its regular episodes are covered (none in a pilot
    overlap or a qualification session)."""
    config = session.config
    if "social_eval" not in session.vars or config.get("pilot_overlap") or config.get("qualification_mode"):
        return
    facts["coverage"] = dict(
        items=len(study(session)["regular_ids"]),
        per_item=int(config.get("annotators_per_episode", 2)),
        per_person=int(config.get("episodes_per_annotator", 3)),
        unit="episode",
    )


study_pages.register_launch_facts("social_eval", launch_facts)
