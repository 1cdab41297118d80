"""Where a player stands in the session: its app, whether that app is the first or the last, whether its tasks
are over. The shared pages ask these questions; the app answers the ones only it knows through ``AppHooks``.

An app declares on its completion page what the shared pages need to know about it::

    class Completion(study_flow.CompletionPage, Page):
        hooks = study_flow.AppHooks(num_rounds=C.NUM_ROUNDS, tasks_over=tasks_over)

(dond, which has no ``tasks_over``, declares ``num_rounds`` only.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AppHooks:
    """What an app tells the shared pages: its number of rounds (the completion page shows in the last one) and,
    if it has one, ``tasks_over(player)``: whether the participant has no task left (the completion page then shows
    at once)."""

    num_rounds: int = 1
    tasks_over: Callable[[Any], bool] | None = None


def app_name(player) -> str:
    """The app (its package name) a player belongs to."""
    return type(player).__module__.split(".")[0]


def is_first_app(player) -> bool:
    """Whether this is the first round of the session's first app."""
    return player.session.config["app_sequence"][0] == app_name(player) and player.round_number == 1


def in_last_app(player) -> bool:
    """Whether the player belongs to the session's last app."""
    return player.session.config["app_sequence"][-1] == app_name(player)


def is_last_round(player, hooks: AppHooks) -> bool:
    """Whether this is the last round of the player's app."""
    return player.round_number == hooks.num_rounds


def tasks_over(player, hooks: AppHooks) -> bool:
    """Whether the participant has no task left in this app, by the app's own ``tasks_over(player)`` if it has one.

    The completion page is then shown at once, without walking through every remaining round (oTree would load the
    player row of each skipped page).
    """
    return bool(hooks.tasks_over(player)) if hooks.tasks_over else False
