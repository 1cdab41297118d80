"""What the pages show, as template variables: plain text, as the researcher's file or the episode has it. The
templates escape every text they print (``|escape``: a researcher's file is data, not markup;
tests/apps/test_template_escaping.py); the markup itself is in the app's templates (``Rate.html`` with
``rating_rows.html``, ``Instructions.html`` with ``dimension_help.html``, ``Comprehension.html``).
"""

import study_flow
from backend.core import assignment
from backend.social import forms as social_forms
from lab_server import page_cost

from . import texts as page_words
from .study import player_episode, rubric, settings_of

_RATING_ROWS = {}  # session code -> per agent, the rating form's rows (the rubric is fixed for the session's life)


def guideline(session_rubric, language="en"):
    """The rubric's texts for templates (plain text: the templates escape them); our own words (range, verdicts) in
    ``language``."""
    words = page_words.page_texts(language)
    return dict(
        title=session_rubric.title,
        instructions=list(session_rubric.instructions),
        dimensions=[
            dict(
                key=d.key,
                label=d.label,
                range_text=page_words.range_text(d, language),
                definition=d.definition,
                examples=[
                    dict(
                        rationale=e.rationale,
                        rating=e.rating,
                        verdict=words["good_example"] if e.is_good else words["bad_example"],
                        css="good" if e.is_good else "bad",
                        why=e.why,
                    )
                    for e in d.examples
                ],
            )
            for d in session_rubric.dimensions
        ],
    )


def worked_example(session_rubric, language="en"):
    worked = session_rubric.worked_example
    if not worked:
        return None
    return dict(
        scenario=worked["scenario"],
        agents=[
            dict(
                name=agent["name"],
                background=agent["background"],
                goal=agent["goal"],
                secret=agent.get("secret", ""),
                ratings=[
                    dict(
                        label=d.label,
                        range_text=page_words.range_text(d, language),
                        rating=worked["ratings"][index][d.key]["rating"],
                        reasoning=worked["ratings"][index][d.key]["reasoning"],
                    )
                    for d in session_rubric.dimensions
                ],
            )
            for index, agent in enumerate(worked["agents"])
        ],
        turns=[dict(number=n, speaker=t["speaker"], text=t["text"]) for n, t in enumerate(worked["turns"], start=1)],
    )


def episode_view(episode, language="en"):
    words = page_words.page_texts(language)
    names = [agent.name for agent in episode.agents]
    kinds = {"speech": "", "action": words["action"], "non-verbal": words["non_verbal"], "leave": words["left"]}
    return dict(
        scenario=episode.scenario,
        agents=[
            dict(
                index=index,
                name=agent.name,
                background=agent.background,
                goal=agent.goal,
                secret=agent.secret,
            )
            for index, agent in enumerate(episode.agents, start=1)
        ],
        turns=[
            dict(
                number=number,
                speaker=turn.speaker,
                agent_index=names.index(turn.speaker) + 1,
                marker=kinds[turn.kind],
                text="" if turn.kind == "leave" else turn.text,
            )
            for number, turn in enumerate(episode.turns, start=1)
        ],
    )


def _rating_row(agent_index, slot, dimension, texts, language):
    """One rating of the form (``rating_rows.html``): its guideline, what the scale's ends mean and every value of
    the dimension's range, negative ones shown with a true minus."""
    rating_name = social_forms.rating_field(agent_index, slot)
    low, high = page_words.endpoints(dimension, language)
    return dict(
        texts,
        min=dimension.min,
        max=dimension.max,
        low_end=f"{page_words.signed(dimension.min)} = {low}",
        high_end=f"{page_words.signed(dimension.max)} = {high}",
        rating_field=rating_name,
        dimension_key=dimension.key,
        reason_field=social_forms.reason_field(agent_index, slot),
        choices=[
            dict(value=value, input_id=f"id_{rating_name}_{value}".replace("-", "m"), text=page_words.signed(value))
            for value in dimension.choices
        ],
    )


def rating_rows(session_code, session_rubric, language="en"):
    """Per agent, the rows of the rating form, built once per session (the rubric and language are fixed)."""
    if session_code not in _RATING_ROWS:
        texts = guideline(session_rubric, language)["dimensions"]
        _RATING_ROWS[session_code] = [
            [
                _rating_row(agent_index, slot, dimension, dimension_texts, language)
                for slot, (dimension, dimension_texts) in enumerate(
                    zip(session_rubric.dimensions, texts, strict=True), start=1
                )
            ]
            for agent_index in social_forms.AGENTS
        ]
    return _RATING_ROWS[session_code]


def rating_blocks(session_code, session_rubric, episode, language="en"):
    rows = rating_rows(session_code, session_rubric, language)
    return [
        dict(agent_index=agent_index, agent_name=agent.name, rows=rows[agent_index - 1])
        for agent_index, agent in enumerate(episode.agents, start=1)
    ]


ROWS_TEMPLATE = "social_eval/rating_rows.html"
ROWS_CONTEXT = ("t", "min_reasoning_chars", "reasoning_hint")  # what the rows read of the page, fixed per session


class _NoErrors:
    """A form field without errors, as ``{% formfield_errors %}`` reads it."""

    errors = ()


def rows_html(session_code, block, page):
    """The rows of one agent's rating form (``rating_rows.html``) as a form without errors shows them, rendered once
    per session and agent: they depend only on the session's rubric, language and reasoning settings and on the
    agent's name (``page``: the page's context, of which the rows read ``ROWS_CONTEXT``). Rate.html renders the rows
    itself for a form shown again with its errors."""
    form = {name: _NoErrors for row in block["rows"] for name in (row["reason_field"], row["rating_field"])}
    context = dict({name: page[name] for name in ROWS_CONTEXT}, block=block, form=form)
    return page_cost.fragment(ROWS_TEMPLATE, (session_code, block["agent_index"], block["agent_name"]), context)


def instructions_vars(player):
    session_rubric, settings = rubric(player.session), settings_of(player.session)
    language = page_words.language_of(player.session)
    words = page_words.page_texts(language)
    return dict(
        t=words,
        guideline=guideline(session_rubric, language),
        worked=worked_example(session_rubric, language),
        plan_text=page_words.plural(words, "regular_plan", settings.episodes_per_annotator),
        reasoning_rule=words["reasoning_rule"].format(minimum=settings.min_reasoning_chars),
        qualification_mode=settings.qualification_mode,
        progress=study_flow.progress(player),
        workload=study_flow.workload_text(
            player,
            units=(study_flow.progress(player) or {}).get("total"),
            ratings=len(session_rubric.dimensions) * len(social_forms.AGENTS),
            min_chars=settings.min_reasoning_chars,
        ),
    )


QUIZ_STATE = "social_eval_quiz"  # participant.vars: the last refused answers and which were wrong (Comprehension)


def comprehension_vars(player):
    settings = settings_of(player.session)
    session_rubric = rubric(player.session)
    language = page_words.language_of(player.session)
    words = page_words.page_texts(language)
    refused = player.participant.vars.get(QUIZ_STATE) or {}
    answers, wrong = refused.get("answers", {}), set(refused.get("wrong", []))
    attempts_left = settings.comprehension_attempts - player.comprehension_attempts
    return dict(
        t=words,
        intro=page_words.plural(words, "quiz_intro", attempts_left),
        retry=bool(wrong),
        guideline=guideline(session_rubric, language),
        questions=[
            dict(
                number=n,
                field=f"quiz_{n}",
                text=q.question,
                wrong=n in wrong,
                options=[
                    dict(
                        value=i,
                        label=o,
                        input_id=f"id_quiz_{n}_{i}",
                        checked=answers.get(f"quiz_{n}") == i,
                    )
                    for i, o in enumerate(q.options)
                ],
            )
            for n, q in enumerate(session_rubric.comprehension, start=1)
        ],
    )


def rate_vars(player, *, task_total):
    session_rubric, settings = rubric(player.session), settings_of(player.session)
    language = page_words.language_of(player.session)
    words = page_words.page_texts(language)
    context = dict(
        t=words,
        title=words["rate_title"].format(number=player.round_number, total=task_total),
        hint=page_words.rate_hint(
            language,
            minimum=settings.min_reasoning_chars,
            minutes=assignment.minutes_shown(settings.reservation_timeout_s),
        ),
        keys=words["keys"],
        progress=study_flow.progress(player),
        min_reasoning_chars=settings.min_reasoning_chars,
        reasoning_hint=session_rubric.reasoning_hint,
        has_episode=bool(player.episode_id),
    )
    if player.episode_id:
        episode = player_episode(player)
        blocks = rating_blocks(player.session.code, session_rubric, episode, language)
        for block in blocks:
            block["rows_html"] = rows_html(player.session.code, block, context)
        context.update(episode=episode_view(episode, language), blocks=blocks)
    return context


# The words rate.js shows (counter, step, refusals), in the session's language.
SCRIPT_TEXTS = ("counter_empty", "counter_short", "counter_ok", "counter_long", "step", "need_reason")
SCRIPT_TEXTS += ("need_shorter", "need_rating")


def rate_js_vars(player):
    words = page_words.page_texts(page_words.language_of(player.session))
    return dict(
        storage_key=f"social_eval:{player.participant.code}:{player.episode_id}",
        storage_prefix=f"social_eval:{player.participant.code}:",
        min_chars=settings_of(player.session).min_reasoning_chars,
        max_chars=social_forms.MAX_REASONING_CHARS,
        texts={key: words[key] for key in SCRIPT_TEXTS},
    )
