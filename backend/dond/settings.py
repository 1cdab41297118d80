"""The DoND app's session-config keys, each defined once: its type, default, bounds and meaning.

`DondSettings` is the one typed, frozen view of a session's dond keys (a pydantic model, `backend.core.session_keys`).
Every field carries its default, bounds or allowed values, label and help; there is no other list of keys. ``settings.py`` sets only what a
study changes (or what a researcher should see in the admin's "Create session" form); every key it leaves out takes
the default below. Times are whole seconds (``*_s``), as in every app.

- `dond_settings(config)`: read and check every key present in ``config``; absent keys take their defaults. One
  ValueError names every refused key, in the order of the fields.
- `validated_settings(config, project_root=...)`: the same, then the instances of ``instances_file`` (when set)
  checked for the session's language. The app's ``validate_session_config`` calls it before oTree writes a row.
- `DondSettings.as_config()`: every key in its proper type, to store back into the session's config.
- `load_instances(path, language=..., project_root=...)`: the checked instances of a researcher's file.

Bounds are sane rather than tight: a value outside them is a typo, not a design (docs/decisions/0007-typed-settings.md).

>>> dond_settings({"max_messages": "7", "opponent": "human"}).max_messages
7
>>> dond_settings({}).first_mover_cells
(1, 2, 3, 4)
>>> dond_settings({"llm_word_limit": 1})  # Protocol needs 2: refused here, not when the first game is created
Traceback (most recent call last):
...
ValueError: The session key 'llm_word_limit' must be a whole number from 2 to 1000, not 1.
>>> dond_settings({"max_messages": 0, "language": "fr"})
Traceback (most recent call last):
...
ValueError: The session key 'language' must be one of en, de, it, not 'fr'. The session key 'max_messages' must be a whole number from 1 to 50, not 0.
>>> dond_settings({"value_visibility": "both", "agent_description": "expert", "disclose_description": "yes"}).treatment
Treatment(value_visibility='both', agent_description='expert', disclose_description=True, opponent_intro='auto', model_failure_pay='half_total')
>>> dond_settings({"opponent": "human", "value_visibility": "person_sees_llm"})  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
ValueError: The session key 'value_visibility' must be own or both when opponent is human (two people are alike, so
one cannot see more than the other by kind), not 'person_sees_llm'.
>>> dond_settings({"clembench_exact": True, "llm_protocol": "notes"})
Traceback (most recent call last):
...
ValueError: The session key 'clembench_exact': clembench-exact games use the plain protocol (clembench has no private notes or probes), not notes.
>>> dond_settings({"opponent": "human", "partner_leaves": "model"})  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
ValueError: The session key 'partner_leaves' is model, so a model takes over when a partner leaves: set llm_model
(and llm_base_url unless OPENAI_BASE_URL is set) to the model that should, or set partner_leaves to end.
>>> dond_settings({"opponent": "human", "partner_leaves": "model", "llm_model": "gpt-x"}).partner_leaves
'model'
>>> dond_settings({"model_failure_pay": "all"})
Traceback (most recent call last):
...
ValueError: The session key 'model_failure_pay' must be one of half_total, zero, not 'all'.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from backend.core import catalogues, researcher_files, session_keys
from backend.dond import departures, partner, treatments
from backend.dond.instances import Instance, entry_lines, instances_from_data
from backend.dond.protocol import PROTOCOLS, Protocol
from backend.dond.rules import LANGUAGES, MODES

DAY_S = 86_400
MAX_INSTANCES_FILE_BYTES = 5 * 1024 * 1024
# The counterbalancing cells (backend.dond.game.cell_roles) each value of first_mover cycles through, in order.
FIRST_MOVER_CELLS: Mapping[str, tuple[int, ...]] = {"counterbalance": (1, 2, 3, 4), "human": (1, 3), "llm": (2, 4)}
_PLAIN = Protocol()
_FIRST_MOVERS = tuple(FIRST_MOVER_CELLS)


W, K = session_keys.Whole, session_keys.key


class DondSettings(session_keys.Keys):
    """A session's dond keys, read and checked (see the module docstring); the defaults, bounds and words are the
    fields'. Comments say what the code does with a key; the label and help are what a researcher reads."""

    # semi (own points), coop (sum of both), comp (own minus other)
    mode: Literal[MODES] = K("semi", "Goal of the game")
    """semi: each side wants its own points; coop: both want the joint points; comp: beat the other."""
    # any language with complete catalogues (backend.core.catalogues.languages): the pages' words, item names too
    language: Literal[catalogues.languages()] = K("en", "Language")
    """Every word the participant sees; the model's prompts too, unless the next key says another."""
    # the prompt folders backend/dond/data/dond_prompts/<language>/ (backend.dond.rules.LANGUAGES); see prompt_language
    llm_prompt_language: Literal[("auto", *LANGUAGES)] = K("auto", "Model's prompt language")
    """auto: the session's language; en, de or it: the model bargains in that one."""
    opponent: Literal["llm", "human"] = K("llm", "Opponent")
    """llm: the person bargains with a model; human: two people are paired."""
    max_messages: W = K(5, "Messages per player", ge=1, le=50)
    """Chat messages each side may send before both must make a proposal."""
    first_mover: Literal[_FIRST_MOVERS] = K("counterbalance", "Who opens")  # the cells cycled: FIRST_MOVER_CELLS
    """counterbalance: alternate; human or llm: that side always opens."""
    # games 4k..4k+3 play generate_instance(instance_seed + k)
    instance_seed: W = K(1, "Item draw (seed)", ge=0, le=2**31 - 1)
    """The same number draws the same items and values in the same order."""
    # relative to the project root: replaces generation
    instances_file: session_keys.Text = K(
        "", "Games file", max_chars=500, pattern=r"[^\x00-\x1f\x7f]*", describe="a file path"
    )
    """Optional: a JSON file of your own games, instead of drawn ones."""
    llm_reprompts: W = K(2, "Model retries after a rule break", ge=0, le=10)
    """0 ends the game at the model's first rule break."""
    # every departure of backend.dond.departures off
    clembench_exact: session_keys.Flag = K(False, "Exactly as clembench")
    """Tick to switch off every departure from the reference game."""
    max_message_chars: W = K(1000, "Longest message", ge=1, le=20_000)
    """Characters in one chat message, from the person or the model."""
    game_timeout_s: W = K(1800, "Time limit of a game (seconds)", ge=30, le=DAY_S)  # the Bargain page
    """After this the game ends and the person moves on."""
    turn_timeout_s: W = K(300, "Time for one turn (seconds)", ge=10, le=DAY_S)
    """Two people: a partner silent this long on their turn has left."""
    disconnect_timeout_s: W = K(90, "Closed page allowed (seconds)", ge=10, le=DAY_S)
    """Two people: a page closed this long counts as leaving."""
    pairing_timeout_s: W = K(600, "Wait for a partner (seconds)", ge=10, le=DAY_S)
    """Two people: how long someone waits to be paired."""
    # Person vs person, a partner who leaves (backend.dond.partner): end the game, or the session's model (llm_*
    # keys, required then) takes over their side; partner_left_pay: the bonus of the one left behind when it ends.
    partner_leaves: Literal[partner.PARTNER_LEAVES] = K("end", "When a partner leaves")
    """end: the game ends under the pay rule; model: a model takes the seat."""
    partner_left_pay: Literal[partner.PARTNER_LEFT_PAYS] = K("half_total", "Pay when the partner left")
    """half_total: half of one's own item values; zero: no bonus."""
    # Treatments (backend.dond.treatments): whose values each side sees; how the person is told of the opponent
    value_visibility: Literal[treatments.VISIBILITIES] = K("own", "Who sees whose values")
    """own: each sees only its own; both, or one side sees the other's."""
    opponent_intro: Literal[treatments.OPPONENT_INTROS] = K("auto", "How the opponent is introduced")
    """auto tells the truth; ai, person or neutral say so instead."""
    agent_description: Literal[treatments.AGENT_DESCRIPTIONS] = K("none", "Model's role description")
    """none: a neutral representative; or a described persona."""
    disclose_description: session_keys.Flag = K(False, "Show that description")
    """Tick to tell the person how the model was described."""
    model_failure_pay: Literal[treatments.MODEL_FAILURE_PAYS] = K("half_total", "Pay if the model breaks the game")
    """half_total: half the best joint points; zero: nothing."""
    llm_protocol: Literal[PROTOCOLS] = K(_PLAIN.name, "How the model is asked")
    """plain: a reply each turn; notes: a private note before each reply."""
    # stated in the notes protocol's prompts
    llm_word_limit: W = K(_PLAIN.word_limit, "Model's word limit", ge=2, le=1000)
    """The most words the model is told to use in a message or note."""
    llm_probe_external: session_keys.Flag = K(_PLAIN.probe_external, "Ask the model about the other side")
    """Notes: also ask which split the other would accept."""
    llm_blocking: session_keys.Flag = K(False, "Blocking model calls (benchmarks only)")
    """Leave off in a study: every call would stall the server."""
    llm_requests_per_game: W = K(60, "Model calls per game (limit)", ge=1, le=10_000)  # per LLM player and game
    """At this many calls the game is stopped."""

    @property
    def first_mover_cells(self) -> tuple[int, ...]:
        """The counterbalancing cells games cycle through, in order."""
        return FIRST_MOVER_CELLS[self.first_mover]

    @property
    def prompt_language(self) -> str:
        """The game's language: the model's prompts and the proposals and transcripts the game records (the pages
        follow ``language``). ``llm_prompt_language`` unless auto, else ``language`` when it has prompts, else English
        (a person-vs-person game in a language without prompts: no model reads them).

        >>> DondSettings(language="de").prompt_language, DondSettings(language="de", llm_prompt_language="en").prompt_language
        ('de', 'en')
        """
        if self.llm_prompt_language != "auto":
            return self.llm_prompt_language
        return self.language if self.language in LANGUAGES else "en"

    @property
    def protocol(self) -> Protocol:
        """How the LLM player is asked (``backend.dond.protocol``)."""
        return Protocol(self.llm_protocol, self.llm_word_limit, self.llm_probe_external)

    @property
    def treatment(self) -> treatments.Treatment:
        """The treatment keys, as each game snapshots them (``backend.dond.treatments``)."""
        return treatments.Treatment.from_config(self.as_config())


KEYS: tuple[str, ...] = tuple(DondSettings.model_fields)
# What the admin's "Create session" form shows, so a study can change it per session: the keys up to the LLM protocol
# (the later ones, benchmark switch and the request limit, are added to a config to change them). A person-vs-person
# config leaves out the keys only an LLM player reads.
LLM_ONLY_KEYS: tuple[str, ...] = (
    "clembench_exact",
    "agent_description",
    "disclose_description",
    "model_failure_pay",
    "llm_protocol",
    "llm_word_limit",
    "llm_probe_external",
)
# The treatment keys only a model player (or the person facing one) reads: refused at a non-default value when
# opponent is human, so a person-vs-person game is never labelled with a treatment it did not get.
HUMAN_IGNORED_KEYS: tuple[str, ...] = (
    "agent_description",
    "disclose_description",
    "model_failure_pay",
    "clembench_exact",
)
# The keys only a person-vs-person game reads: refused at a non-default value when opponent is llm, as above.
HUMAN_ONLY_KEYS: tuple[str, ...] = ("partner_leaves", "partner_left_pay")
FORM_KEYS: tuple[str, ...] = KEYS[: KEYS.index("llm_probe_external") + 1]


def form_defaults(*, opponent: str) -> dict[str, Any]:
    """The defaults of the keys the admin's form shows for a config of ``opponent`` (``llm`` or ``human``).

    >>> list(form_defaults(opponent="human"))[-1], form_defaults(opponent="llm")["llm_word_limit"]
    ('opponent_intro', 64)
    """
    defaults = DondSettings(opponent=opponent).as_config()
    excluded = HUMAN_ONLY_KEYS if opponent == "llm" else LLM_ONLY_KEYS
    keys = [key for key in FORM_KEYS if key not in excluded]
    return {key: defaults[key] for key in keys}


def dond_settings(config: Mapping[str, Any]) -> DondSettings:
    """The dond keys of ``config``, each read and checked; absent keys take `DondSettings`' defaults.

    Raises one ValueError naming every refused key (sentences joined by a space, in field order).
    """
    settings = session_keys.checked(DondSettings, config)
    # keys that depend on another, checked once all are read
    changed = {key for key in KEYS if getattr(settings, key) != DondSettings.model_fields[key].default}
    problems = [treatments.visibility_problem(settings.value_visibility, settings.opponent)]
    exact = departures.exact_problem(
        clembench_exact=settings.clembench_exact,
        protocol_name=settings.llm_protocol,
        probe_external=settings.llm_probe_external,
    )
    problems.append(f"The session key 'clembench_exact': {exact}" if exact else None)
    if settings.opponent == "human":  # keys only a model player reads: a changed one would be silently ignored
        problems += [
            f"The session key {key!r} applies only when opponent is llm (no model plays a person vs person "
            f"game): remove it or set opponent to llm, not {getattr(settings, key)!r}."
            for key in HUMAN_IGNORED_KEYS
            if key in changed
        ]
        if settings.partner_leaves == "model" and not config.get("llm_model"):
            problems.append(
                "The session key 'partner_leaves' is model, so a model takes over when a partner leaves: "
                "set llm_model (and llm_base_url unless OPENAI_BASE_URL is set) to the model that should, "
                "or set partner_leaves to end."
            )
    else:  # keys only a person-vs-person game reads
        problems += [
            f"The session key {key!r} applies only when opponent is human (a partner who leaves): remove it "
            f"or set opponent to human, not {getattr(settings, key)!r}."
            for key in HUMAN_ONLY_KEYS
            if key in changed
        ]
    model_plays = settings.opponent == "llm" or settings.partner_leaves == "model"
    problems.append(prompt_language_problem(settings.language, settings.llm_prompt_language, model_plays=model_plays))
    session_keys.refuse_problems([problem for problem in problems if problem])
    return settings


def prompt_language_problem(language: str, llm_prompt_language: str, *, model_plays: bool) -> str | None:
    """Why a session whose pages are in ``language`` cannot give a model its prompts, or None: a model plays (or may
    take over a seat), the language has no prompts and ``llm_prompt_language`` is auto.

    >>> prompt_language_problem("xx", "auto", model_plays=False), prompt_language_problem("xx", "en", model_plays=True)
    (None, None)
    >>> print(prompt_language_problem("xx", "auto", model_plays=True))  # doctest: +NORMALIZE_WHITESPACE
    The session key 'language' is xx, for which the model has no prompts: set the session key llm_prompt_language to
    en, de or it (the model bargains in that language, the person reads xx), or add the prompts for xx in
    backend/dond/data/dond_prompts/xx/ and backend/dond/data/negotiation_prompts/xx/ (docs/languages.md).
    """
    if not model_plays or llm_prompt_language != "auto" or language in LANGUAGES:
        return None
    return (
        f"The session key 'language' is {language}, for which the model has no prompts: set the session key "
        f"llm_prompt_language to {', '.join(LANGUAGES[:-1])} or {LANGUAGES[-1]} (the model bargains in that "
        f"language, the person reads {language}), or add the prompts for {language} in "
        f"backend/dond/data/dond_prompts/{language}/ and backend/dond/data/negotiation_prompts/{language}/ "
        "(docs/languages.md)."
    )


def load_instances(path: str, *, language: str, project_root: Path) -> list[Instance]:
    """The instances of ``path`` (relative to ``project_root`` or absolute), every one checked for ``language``."""
    file = Path(path) if Path(path).is_absolute() else project_root / path
    what = f"instances_file {path!r}"
    text = researcher_files.read_text(file, what=what, max_bytes=MAX_INSTANCES_FILE_BYTES)
    data = researcher_files.parse_json(text, what=what)
    return instances_from_data(data, what=what, languages=[language], lines=entry_lines(text))


def validated_settings(config: Mapping[str, Any], *, project_root: Path) -> DondSettings:
    """`dond_settings`, then the instances file (when set) read and checked: a ValueError says what is wrong."""
    settings = dond_settings(config)
    if settings.instances_file:
        load_instances(settings.instances_file, language=settings.prompt_language, project_root=project_root)
    return settings
