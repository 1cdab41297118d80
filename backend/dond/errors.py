"""Every way a DoND move can break the game's rules: one base class, one subclass per kind of mistake.

``kind`` is a stable code, stored with a violation (``error_kind``) and used to pick the re-prompt's text
(``backend/dond/data/dond_prompts/<language>/problems.json``); ``details`` holds the specifics a message needs.
Every class is a ``ValueError``, so a caller that only checks input can catch that.

>>> error = OverAskError("The proposal asks for 3 knives, but there are only 2.", item="knife", asked=3, available=2)
>>> error.kind, error.details["available"], isinstance(error, ValueError)
('over_ask', 2, True)
"""

from __future__ import annotations

from typing import Any


class MoveError(ValueError):
    """A player's reply that breaks the game's rules; ``kind`` names the rule, ``details`` holds its specifics."""

    kind = "move"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.details = details


# What a proposal can get wrong (``backend.dond.proposals``).


class ProposalFormatError(MoveError):
    """The bracket is not ``[<prefix> <digits> <item>, ...]`` (wrong prefix, pairs, or counts not in digits)."""

    kind = "format"


class UnknownItemError(MoveError):
    """A proposal names an item that is not in the game."""

    kind = "unknown_item"


class DuplicateItemError(MoveError):
    """A proposal names the same item type twice."""

    kind = "duplicate_item"


class OverAskError(MoveError):
    """A proposal asks for more of an item than there is."""

    kind = "over_ask"


# What a move can get wrong in the game's course (``backend.dond.proposals.parse_reply``, ``backend.dond.game``).


class ProposalRequiredError(MoveError):
    """A free message where a secret proposal was required (after the other's proposal or the last message)."""

    kind = "proposal_required"


class EmptyMessageError(MoveError):
    """An empty or whitespace-only message."""

    kind = "empty_message"


class MessageTooLongError(MoveError):
    """A message longer than the configured limit."""

    kind = "too_long"


class OutOfTurnError(MoveError):
    """A message or proposal from a player whose turn it is not."""

    kind = "out_of_turn"


class AlreadyProposedError(MoveError):
    """A second proposal from the same player."""

    kind = "already_proposed"


class GameOverError(MoveError):
    """A move after the game ended."""

    kind = "game_over"
