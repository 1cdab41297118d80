"""Deal or No Deal (DoND): the game's fixed rules, as constants and the checks that use them.

The game follows clembench's DoND (see docs/apps/dond.md): two players split a set of items; each has private
integer values per item type (0..10) with a total of exactly 10 over all items. They chat, then each makes a secret
proposal naming what they take. The proposals succeed when they are complementary (A's count + B's count <= the
available count for every type; leftovers allowed); then each player scores Σ count × own value, else both score 0
(``backend.dond.scoring``). Player "A" receives ``values_a`` and player "B" ``values_b``; who opens the chat is a
separate choice of the game (``backend.dond.game``).

>>> LANGUAGES, MODES, ROLES
(('en', 'de', 'it'), ('semi', 'coop', 'comp'), ('A', 'B'))
"""

from __future__ import annotations

# The game's languages: the model's prompts (data/dond_prompts/<language>/), its item and number words and the
# proposal format exist in these. A session's pages may be in any language of the catalogues (llm_prompt_language).
LANGUAGES = ("en", "de", "it")
MODES = ("semi", "coop", "comp")
ROLES = ("A", "B")
MAX_VALUE = 10  # the largest value of one item to a player
TOTAL_POINTS = 10  # Σ count × value over all items, for each player
N_TYPES_RANGE = (3, 5)  # item types per game
N_ITEMS_RANGE = (5, 8)  # items per game


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    """Refuse a value that is not one of ``choices``, naming the setting and the choices.

    >>> check_choice("opener", "C", ROLES)
    Traceback (most recent call last):
    ...
    ValueError: opener must be one of A, B, not 'C'.
    """
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, not {value!r}.")


def check_language(language: str) -> None:
    """Refuse a language the game has no words for.

    >>> check_language("fr")
    Traceback (most recent call last):
    ...
    ValueError: language must be one of en, de, it, not 'fr'.
    """
    check_choice("language", language, LANGUAGES)


def check_mode(mode: str) -> None:
    """Refuse a mode the game does not have.

    >>> check_mode("chaos")
    Traceback (most recent call last):
    ...
    ValueError: mode must be one of semi, coop, comp, not 'chaos'.
    """
    check_choice("mode", mode, MODES)


def must_propose(messages_sent: int, *, other_has_proposed: bool, max_messages: int) -> bool:
    """Whether a player's next reply must be a proposal: the other proposed, or their messages are used up.

    >>> must_propose(5, other_has_proposed=False, max_messages=5), must_propose(0, other_has_proposed=True, max_messages=5)
    (True, True)
    """
    if max_messages < 0 or messages_sent < 0:
        raise ValueError("messages_sent and max_messages must be non-negative.")
    return other_has_proposed or messages_sent >= max_messages
