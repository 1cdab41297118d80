"""What the pages show, as template variables. Every text from a researcher's file or an episode is HTML-escaped
here (it is data, not markup); the markup itself is in the app's templates (``Rate.html`` with ``rating_row.html``,
``Instructions.html`` with ``dimension_help.html``, ``Comprehension.html``).
"""

import html

import study_flow
from backend.social import forms as social_forms

from .study import player_episode, rubric, settings_of

_RATING_ROWS = {}  # session code -> per agent, the rating form's rows (the rubric is fixed for the session's life)


def guideline(session_rubric):
    """The rubric's texts for templates, HTML-escaped (a researcher's file is data, not markup)."""
    escape = html.escape
    return dict(
        title=escape(session_rubric.title),
        instructions=[escape(p) for p in session_rubric.instructions],
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
            for d in session_rubric.dimensions
        ],
    )


def worked_example(session_rubric):
    worked = session_rubric.worked_example
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
                    for d in session_rubric.dimensions
                ],
            )
            for index, agent in enumerate(worked["agents"])
        ],
        turns=[
            dict(number=n, speaker=escape(t["speaker"]), text=escape(t["text"]))
            for n, t in enumerate(worked["turns"], start=1)
        ],
    )


def episode_view(episode):
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


def _rating_row(agent_index, slot, dimension, texts):
    """One rating of the form (``rating_row.html``): its guideline and every value of the dimension's range,
    negative ones shown with a true minus."""
    rating_name = social_forms.rating_field(agent_index, slot)
    return dict(
        texts,
        min=dimension.min,
        max=dimension.max,
        rating_field=rating_name,
        reason_field=social_forms.reason_field(agent_index, slot),
        choices=[
            dict(value=value, input_id=f"id_{rating_name}_{value}".replace("-", "m"), text=str(value).replace("-", "−"))
            for value in dimension.choices
        ],
    )


def rating_rows(session_code, session_rubric):
    """Per agent, the rows of the rating form, built once per session (the rubric is fixed)."""
    if session_code not in _RATING_ROWS:
        texts = guideline(session_rubric)["dimensions"]
        _RATING_ROWS[session_code] = [
            [
                _rating_row(agent_index, slot, dimension, dimension_texts)
                for slot, (dimension, dimension_texts) in enumerate(
                    zip(session_rubric.dimensions, texts, strict=True), start=1
                )
            ]
            for agent_index in social_forms.AGENTS
        ]
    return _RATING_ROWS[session_code]


def rating_blocks(session_code, session_rubric, episode):
    rows = rating_rows(session_code, session_rubric)
    return [
        dict(agent_index=agent_index, agent_name=html.escape(agent.name), rows=rows[agent_index - 1])
        for agent_index, agent in enumerate(episode.agents, start=1)
    ]


def instructions_vars(player):
    session_rubric, settings = rubric(player.session), settings_of(player.session)
    return dict(
        guideline=guideline(session_rubric),
        worked=worked_example(session_rubric),
        min_reasoning_chars=settings.min_reasoning_chars,
        episodes_per_annotator=settings.episodes_per_annotator,
        qualification_mode=settings.qualification_mode,
        progress=study_flow.progress(player),
    )


def comprehension_vars(player):
    settings = settings_of(player.session)
    questions = rubric(player.session).comprehension
    return dict(
        questions=[
            dict(
                field=f"quiz_{n}",
                text=html.escape(q.question),
                options=[
                    dict(value=i, label=html.escape(o), input_id=f"id_quiz_{n}_{i}") for i, o in enumerate(q.options)
                ],
            )
            for n, q in enumerate(questions, start=1)
        ],
        attempts_left=settings.comprehension_attempts - player.comprehension_attempts,
    )


def rate_vars(player, *, task_total):
    session_rubric, settings = rubric(player.session), settings_of(player.session)
    context = dict(
        progress=study_flow.progress(player),
        task_number=player.round_number,
        task_total=task_total,
        min_reasoning_chars=settings.min_reasoning_chars,
        max_reasoning_chars=social_forms.MAX_REASONING_CHARS,
        reasoning_hint=html.escape(session_rubric.reasoning_hint),
        timeout_minutes=round(settings.reservation_timeout_s / 60),
        has_episode=bool(player.episode_id),
    )
    if player.episode_id:
        episode = player_episode(player)
        context.update(
            episode=episode_view(episode), blocks=rating_blocks(player.session.code, session_rubric, episode)
        )
    return context


def rate_js_vars(player):
    return dict(
        storage_key=f"social_eval:{player.participant.code}:{player.episode_id}",
        storage_prefix=f"social_eval:{player.participant.code}:",
        min_chars=settings_of(player.session).min_reasoning_chars,
    )
