"""The shared pages (consent, screen-out, completion) as mixins, the consent field, and the participant's state
they read: active or screened out, and progress.

Each app declares ``class Consent(study_flow.ConsentPage, Page)`` and so on, so the logic lives here once. The
objects are duck-typed (``player.participant``, ``player.session.config``); nothing here imports oTree at import
time (``consent_field`` imports ``otree.api`` when an app calls it).
"""

from __future__ import annotations

from typing import Any

import study_flow.pay as pay

from .entry import completion_url, record_arrival
from .hooks import AppHooks, in_last_app, is_first_app, is_last_round, tasks_over
from .texts import messages
from .workload import contact_line, currency, default_consent


def is_active(player) -> bool:
    """Whether the participant may see the task pages: not screened out (declined consent, failed a check)."""
    return not player.participant.vars.get("screened_out", False)


def screen_out(player, reason: str) -> None:
    """Send the participant to the screen-out page with ``reason`` stored (e.g. ``declined_consent``)."""
    participant_vars = player.participant.vars
    participant_vars["screened_out"] = True
    participant_vars["screenout_reason"] = reason


def set_progress(player, *, done: int, total: int) -> None:
    """Record how many items of ``total`` the participant has finished (shown by the progress bar)."""
    if total < 0 or not 0 <= done <= max(total, 0):
        raise ValueError(f"Progress must satisfy 0 <= done <= total, got done={done} and total={total}.")
    participant_vars = player.participant.vars
    participant_vars["progress_done"] = int(done)
    participant_vars["progress_total"] = int(total)


def progress(player) -> dict[str, Any] | None:
    """The progress bar's state (``Item 3 of 10``), or None when the app set no total."""
    participant_vars = player.participant.vars
    total = participant_vars.get("progress_total") or 0
    if total <= 0:
        return None
    done = min(participant_vars.get("progress_done") or 0, total)
    current = min(done + 1, total)
    text = messages(player.session.config.get("language")).get("progress", "")
    return dict(
        done=done,
        total=total,
        current=current,
        percent=round(100 * done / total),
        text=text.format(current=current, total=total),
    )


def consent_field():
    """The Player field every app declares for the consent page: ``consent_given = study_flow.consent_field()``."""
    from otree.api import models, widgets

    return models.BooleanField(label="", widget=widgets.RadioSelect)


def consent_choices(language: str | None) -> list[list[Any]]:
    """The two answers of the consent question in ``language``: agree (True) or not (False).

    >>> consent_choices("en")[1]
    [False, 'I do not agree to take part.']
    """
    text = messages(language)
    return [[True, text["consent_yes"]], [False, text["consent_no"]]]


def consent_given_choices(player) -> list[list[Any]]:
    """oTree's ``<field>_choices`` hook for ``consent_field``, in the session's language; an app makes it its own
    with ``from study_flow import consent_given_choices`` (oTree finds it by name on the app module)."""
    return consent_choices(player.session.config.get("language"))


class ConsentPage:
    """Entry page of the first app: stores the Prolific IDs, then asks for consent (or just welcomes).

    The app's Player needs ``consent_given = study_flow.consent_field()`` and the app module
    ``consent_given_choices`` (``from study_flow import consent_given_choices``).
    """

    form_model = "player"
    template_name = "global/Consent.html"

    @staticmethod
    def is_displayed(player):
        return is_first_app(player)

    @staticmethod
    def get_form_fields(player):
        return ["consent_given"] if player.session.config.get("consent", True) else []

    @staticmethod
    def vars_for_template(player):
        config = player.session.config
        text = messages(config.get("language"))
        return dict(
            study_text=text,
            consent_text=config.get("consent_text") or default_consent(player, currency=currency()),
            own_consent_text=bool(config.get("consent_text")),
            contact=contact_line(config) if not config.get("consent_text") else {},
            asks_consent=config.get("consent", True),
        )

    @staticmethod
    def before_next_page(player, timeout_happened):
        participant_vars = player.participant.vars
        if not player.session.config.get("consent", True):
            participant_vars["consent_given"] = None
            return
        if timeout_happened and not player.field_maybe_none("consent_given"):  # a timeout or the admin's advance
            player.consent_given = participant_vars["consent_given"] = None  # neither given nor declined
            return screen_out(player, "consent_not_given")
        participant_vars["consent_given"] = bool(player.consent_given)
        if not player.consent_given:
            screen_out(player, "declined_consent")

    def get_context_data(self, **context):
        # The only hook that sees the HTTP request: copy the welcome page's cookie into participant fields.
        record_arrival(self.participant, dict(self.request.cookies))
        return super().get_context_data(**context)


class ScreenOutPage:
    """Terminal page for participants who declined consent or failed a comprehension check."""

    template_name = "global/ScreenOut.html"

    @staticmethod
    def is_displayed(player):
        return not is_active(player)

    @staticmethod
    def vars_for_template(player):
        config = player.session.config
        code = pay.code_shown(player, config.get("screenout_code") or "")
        return dict(study_text=messages(config.get("language")), code=code, url=completion_url(code) if code else "")


class CompletionPage:
    """Terminal page of the last app: shows the completion code and returns the browser to Prolific.

    Shown in the app's last round, or as soon as the app's ``tasks_over`` says the participant has no task left;
    the app tells both through ``hooks = study_flow.AppHooks(num_rounds=C.NUM_ROUNDS, tasks_over=tasks_over)``.
    """

    template_name = "global/Completion.html"
    hooks: AppHooks | None = None

    def __init_subclass__(cls, **kwargs):
        # Refused when the app is imported, so the server does not start, rather than a 500 on the last page.
        super().__init_subclass__(**kwargs)
        if not isinstance(cls.hooks, AppHooks):
            raise TypeError(
                f"{cls.__module__}.{cls.__name__} must declare hooks = study_flow.AppHooks(num_rounds=C.NUM_ROUNDS, "
                "tasks_over=...): without them the completion page cannot know the app's last round."
            )

    @classmethod
    def is_displayed(cls, player):
        if not (is_active(player) and in_last_app(player)):
            return False
        return is_last_round(player, cls.hooks) or tasks_over(player, cls.hooks)

    @staticmethod
    def vars_for_template(player):
        config = player.session.config
        player.participant.vars["completed"] = True
        pay.shown(player)  # the bonus is settled when they finish, if no page stated it before
        code = pay.code_shown(player, config.get("completion_code") or "")
        seconds = int(config.get("completion_redirect_seconds", 5))
        text = messages(config.get("language"))
        return dict(
            study_text=text,
            code=code,
            url=completion_url(code) if code else "",
            redirect_seconds=seconds,
            redirect_text=text["completion_redirect"].format(seconds=seconds),
        )
