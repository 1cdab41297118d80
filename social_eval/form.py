"""The rating and comprehension forms: the hooks oTree looks up by field name, and reading a submitted form.

The Player declares one field per slot (``rating_<agent>_<slot>``, ``reason_<agent>_<slot>``, ``quiz_<n>``; see
``backend/social/forms.py``); the session's rubric decides which slots its form uses. The hooks below are declared
one line per slot so that a search for a field name finds them; the app's ``__init__`` imports them (``__all__``).
"""

from backend.social import forms as social_forms

from .study import rubric, settings_of


def rating_bounds(player, name):
    """(min, max) of a rating field under the session's rubric."""
    return social_forms.slot_bounds(rubric(player.session), name)


def reasoning_error(player, name, value):
    """The message for a reasoning that is too short or too long, or None."""
    errors = social_forms.reasoning_errors(
        {name: value},
        rubric(player.session),
        min_chars=settings_of(player.session).min_reasoning_chars,
        language=player.session.config.get("language"),
    )
    return errors.get(name)


def quiz_options(player, number):
    """The choices of comprehension question ``number`` (a placeholder for questions the rubric does not have)."""
    questions = rubric(player.session).comprehension
    if number > len(questions):
        return [[0, "-"]]
    return [[index, option] for index, option in enumerate(questions[number - 1].options)]


def rating_error(player, value):
    """The message for a rating left out (the field is blank=True so that this message, not oTree's, is shown)."""
    if value is None:
        return social_forms.message("rating_missing", language=player.session.config.get("language"))
    return None


def _slot_hooks(agent, slot):
    """``<rating>_min``, ``<rating>_max``, ``<rating>_error_message`` and ``<reason>_error_message`` of one slot."""
    rating, reason = social_forms.rating_field(agent, slot), social_forms.reason_field(agent, slot)
    return (
        lambda player: rating_bounds(player, rating)[0],
        lambda player: rating_bounds(player, rating)[1],
        rating_error,
        lambda player, value: reasoning_error(player, reason, value),
    )


def _quiz_choices(number):
    return lambda player: quiz_options(player, number)


rating_1_1_min, rating_1_1_max, rating_1_1_error_message, reason_1_1_error_message = _slot_hooks(1, 1)
rating_1_2_min, rating_1_2_max, rating_1_2_error_message, reason_1_2_error_message = _slot_hooks(1, 2)
rating_1_3_min, rating_1_3_max, rating_1_3_error_message, reason_1_3_error_message = _slot_hooks(1, 3)
rating_1_4_min, rating_1_4_max, rating_1_4_error_message, reason_1_4_error_message = _slot_hooks(1, 4)
rating_1_5_min, rating_1_5_max, rating_1_5_error_message, reason_1_5_error_message = _slot_hooks(1, 5)
rating_1_6_min, rating_1_6_max, rating_1_6_error_message, reason_1_6_error_message = _slot_hooks(1, 6)
rating_1_7_min, rating_1_7_max, rating_1_7_error_message, reason_1_7_error_message = _slot_hooks(1, 7)
rating_1_8_min, rating_1_8_max, rating_1_8_error_message, reason_1_8_error_message = _slot_hooks(1, 8)
rating_1_9_min, rating_1_9_max, rating_1_9_error_message, reason_1_9_error_message = _slot_hooks(1, 9)
rating_1_10_min, rating_1_10_max, rating_1_10_error_message, reason_1_10_error_message = _slot_hooks(1, 10)
rating_2_1_min, rating_2_1_max, rating_2_1_error_message, reason_2_1_error_message = _slot_hooks(2, 1)
rating_2_2_min, rating_2_2_max, rating_2_2_error_message, reason_2_2_error_message = _slot_hooks(2, 2)
rating_2_3_min, rating_2_3_max, rating_2_3_error_message, reason_2_3_error_message = _slot_hooks(2, 3)
rating_2_4_min, rating_2_4_max, rating_2_4_error_message, reason_2_4_error_message = _slot_hooks(2, 4)
rating_2_5_min, rating_2_5_max, rating_2_5_error_message, reason_2_5_error_message = _slot_hooks(2, 5)
rating_2_6_min, rating_2_6_max, rating_2_6_error_message, reason_2_6_error_message = _slot_hooks(2, 6)
rating_2_7_min, rating_2_7_max, rating_2_7_error_message, reason_2_7_error_message = _slot_hooks(2, 7)
rating_2_8_min, rating_2_8_max, rating_2_8_error_message, reason_2_8_error_message = _slot_hooks(2, 8)
rating_2_9_min, rating_2_9_max, rating_2_9_error_message, reason_2_9_error_message = _slot_hooks(2, 9)
rating_2_10_min, rating_2_10_max, rating_2_10_error_message, reason_2_10_error_message = _slot_hooks(2, 10)
quiz_1_choices = _quiz_choices(1)
quiz_2_choices = _quiz_choices(2)
quiz_3_choices = _quiz_choices(3)
quiz_4_choices = _quiz_choices(4)
quiz_5_choices = _quiz_choices(5)
quiz_6_choices = _quiz_choices(6)


# Every slot of the forms (the Player's fields), whatever the session's rubric uses.
RATING_FIELDS = tuple(
    f"{kind}_{agent}_{slot}" for agent in (1, 2) for slot in range(1, 11) for kind in ("reason", "rating")
)
QUIZ_FIELDS = tuple(f"quiz_{n}" for n in range(1, 7))


HOOKS = ("_min", "_max", "_error_message", "_choices")
__all__ = [name for name in list(globals()) if name.endswith(HOOKS) and not name.startswith("_")]


def submitted_ratings(player):
    """(agent, dimension) -> (rating, reasoning) of the player's submitted form."""
    session_rubric = rubric(player.session)
    values = {name: getattr(player, name) for name in social_forms.form_fields(session_rubric)}
    return social_forms.collected_ratings(values, session_rubric)


def complete_rating(player):
    """Whether the rating form oTree saved on a timeout or the admin's advance is one the page accepts (every rating
    set and in range, every reasoning long enough); if not, the partial form is cleared, never kept as an answer."""
    session_rubric = rubric(player.session)
    names = social_forms.form_fields(session_rubric)
    values = {name: player.field_maybe_none(name) for name in names}
    ratings_ok = all(
        values[name] is not None and low <= values[name] <= high
        for name in names
        if name.startswith("rating_")
        for low, high in [rating_bounds(player, name)]
    )
    min_chars = settings_of(player.session).min_reasoning_chars
    if ratings_ok and not social_forms.reasoning_errors(values, session_rubric, min_chars=min_chars):
        return True
    for name in names:
        setattr(player, name, None)
    return False


def wrong_answers(player, values):
    """Numbers of the comprehension questions answered wrongly in ``values`` (field name -> answer index)."""
    questions = rubric(player.session).comprehension
    return [n for n, q in enumerate(questions, start=1) if values[f"quiz_{n}"] != q.answer]


def failed_comprehension(player):
    """Whether the player's saved answers miss any of the rubric's comprehension questions."""
    count = len(rubric(player.session).comprehension)
    return bool(wrong_answers(player, {f"quiz_{n}": getattr(player, f"quiz_{n}") for n in range(1, count + 1)}))
