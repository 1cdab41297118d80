"""Symmetric 2x2 games whose actions are called ``R`` and ``B``, as the reasoning logs and the protocol use them.

A game is data: a code (``pd``), a name, what ``R`` and ``B`` stand for, and the payoff pair (row player, column
player) of each action profile. The three built-in games are those of the evaluation protocol, in its presentation:
row and column ``R`` come first, which is the inverse of the usual textbook layout (for the Prisoner's Dilemma, the
defecting action ``R`` = Betray is listed before ``B`` = Confess).

Researchers add or replace games through a mapping of the same shape (e.g. a session-config key)::

    {"bos": {"name": "Battle of the Sexes", "actions": {"R": "Opera", "B": "Football"},
             "payoffs": {"RR": [3, 2], "RB": [0, 0], "BR": [0, 0], "BB": [2, 3]}}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

ACTIONS = ("R", "B")
# Bounds for researchers' games: every value is shown on the judging page and must stay a readable number.
MAX_CODE_CHARS = 20
MAX_NAME_CHARS = 100
MAX_PAYOFF = 1_000_000
MAX_EXTRA_GAMES = 50
# Profile keys in reading order of the table: upper-left, upper-right, lower-left, lower-right (row action first).
PROFILES = ("RR", "RB", "BR", "BB")


@dataclass(frozen=True)
class Game:
    """One 2x2 game: ``payoffs[profile] = (row payoff, column payoff)``, profile = row action + column action."""

    code: str
    name: str
    actions: Mapping[str, str]
    payoffs: Mapping[str, tuple[float, float]]

    def row_payoffs(self) -> tuple[float, float, float, float]:
        """The row player's payoffs in the order UL, UR, DL, DR (as in the log file names).

        >>> GAMES["pd"].row_payoffs()
        (1, 5, 0, 3)
        """
        return tuple(self.payoffs[profile][0] for profile in PROFILES)

    def table(self) -> list[dict[str, Any]]:
        """Rows of the payoff table for a template: row label, then the two cells as ``"(u_row, u_col)"``.

        >>> GAMES["sh"].table()[1]
        {'action': 'B', 'label': 'B (Stag)', 'cells': ['(0, 3)', '(5, 5)']}
        """
        return [
            {
                "action": row,
                "label": self.label(row),
                "cells": [_format_pair(self.payoffs[row + column]) for column in ACTIONS],
            }
            for row in ACTIONS
        ]

    def label(self, action: str) -> str:
        """``"R (Betray)"``: the action letter and what it stands for in this game."""
        return f"{action} ({self.actions[action]})" if self.actions.get(action) else action


def _format_pair(pair: tuple[float, float]) -> str:
    return "(" + ", ".join(f"{value:g}" for value in pair) + ")"


def make_game(code: str, spec: Mapping[str, Any]) -> Game:
    """Build a `Game` from a config mapping ``{"name", "actions": {"R", "B"}, "payoffs": {"RR": [u1, u2], ...}}``.

    >>> make_game("pd", {"name": "PD", "actions": {"R": "Betray", "B": "Confess"},
    ...                  "payoffs": {"RR": [1, 1], "RB": [5, 0], "BR": [0, 5], "BB": [3, 3]}}).row_payoffs()
    (1, 5, 0, 3)
    """
    if not isinstance(code, str) or not code.isidentifier() or code != code.lower() or len(code) > MAX_CODE_CHARS:
        raise ValueError(
            f"A game code must be a lowercase identifier of at most {MAX_CODE_CHARS} characters such as 'pd', "
            f"got {code!r}."
        )
    if not isinstance(spec, Mapping):
        raise ValueError(f"The definition of game {code!r} must be a mapping, got {type(spec).__name__}.")
    name = spec.get("name") or code
    if not isinstance(name, str) or len(name) > MAX_NAME_CHARS:
        raise ValueError(f"The name of game {code!r} must be text of at most {MAX_NAME_CHARS} characters.")
    actions = spec.get("actions") or {}
    if (
        not isinstance(actions, Mapping)
        or set(actions) - set(ACTIONS)
        or not all(isinstance(label, str) and len(label) <= MAX_NAME_CHARS for label in actions.values())
    ):
        raise ValueError(
            f"The actions of game {code!r} must map 'R' and 'B' to names of at most {MAX_NAME_CHARS} characters, "
            f"got {actions!r}."
        )
    payoffs = spec.get("payoffs")
    if not isinstance(payoffs, Mapping) or set(payoffs) != set(PROFILES):
        raise ValueError(f"The payoffs of game {code!r} must have exactly the keys {PROFILES}, got {payoffs!r}.")
    pairs = {}
    for profile in PROFILES:
        pair = payoffs[profile]
        if (
            not isinstance(pair, (list, tuple))
            or len(pair) != 2
            or not all(
                isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) <= MAX_PAYOFF
                for value in pair
            )
        ):
            raise ValueError(
                f"The payoff of profile {profile} in game {code!r} must be two numbers from {-MAX_PAYOFF:g} to "
                f"{MAX_PAYOFF:g} (row, column), got {pair!r}."
            )
        pairs[profile] = (pair[0], pair[1])
    return Game(
        code=code,
        name=str(name),
        actions=MappingProxyType({action: str(actions.get(action, "")) for action in ACTIONS}),
        payoffs=MappingProxyType(pairs),
    )


# The protocol's Tables 1-3 (row player's payoff first).
BUILTIN_GAME_SPECS: Mapping[str, Mapping[str, Any]] = {
    "pd": {
        "name": "Prisoner's Dilemma",
        "actions": {"R": "Betray", "B": "Confess"},
        "payoffs": {"RR": (1, 1), "RB": (5, 0), "BR": (0, 5), "BB": (3, 3)},
    },
    "sh": {
        "name": "Stag Hunt",
        "actions": {"R": "Hare", "B": "Stag"},
        "payoffs": {"RR": (1, 1), "RB": (3, 0), "BR": (0, 3), "BB": (5, 5)},
    },
    "hd": {
        "name": "Hawk-Dove",
        "actions": {"R": "Hawk", "B": "Dove"},
        "payoffs": {"RR": (0, 0), "RB": (5, 1), "BR": (1, 5), "BB": (3, 3)},
    },
}

GAMES: Mapping[str, Game] = MappingProxyType({code: make_game(code, spec) for code, spec in BUILTIN_GAME_SPECS.items()})


def games_with(extra: Mapping[str, Any] | None = None) -> dict[str, Game]:
    """The built-in games updated by ``extra`` (code -> definition, see `make_game`); ``extra`` may replace a game.

    >>> sorted(games_with({"bos": {"payoffs": {"RR": [3, 2], "RB": [0, 0], "BR": [0, 0], "BB": [2, 3]}}}))
    ['bos', 'hd', 'pd', 'sh']
    """
    games = dict(GAMES)
    if extra is None:
        return games
    if not isinstance(extra, Mapping):
        raise ValueError(f"The extra games must be a mapping of game code to definition, got {type(extra).__name__}.")
    if len(extra) > MAX_EXTRA_GAMES:
        raise ValueError(f"The extra games hold {len(extra)} games, more than the {MAX_EXTRA_GAMES} allowed.")
    for code, spec in extra.items():
        games[code] = make_game(code, spec)
    return games
