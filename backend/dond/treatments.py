"""The DoND treatments of a game (what each side sees and is told, the failure pay), each rule once.

- ``value_visibility``: whose values each side sees. ``own`` (the default: each side sees only its own values),
  ``llm_sees_other`` (the model also sees the person's), ``person_sees_llm`` (the person also sees the model's),
  ``both`` (each sees both tables). Person vs person allows ``own`` and ``both`` only; self-play (model vs model)
  ``own`` and ``both`` (`SELFPLAY_VISIBILITIES`). `sees_other_values` is the one rule the pages and the prompts read.
- ``agent_description``: how the model is described to itself: ``none`` (the neutral "representative", no gender,
  status or age), ``average``, ``expert`` or ``awful``. The wording lives in the prompt files
  (``backend/dond/data/dond_prompts/<language>/agent_<description>.txt``).
- ``disclose_description``: whether the person is told that description (human vs LLM only).
- ``opponent_intro``: how the opponent is introduced to the person: ``auto`` (the truth: an AI language model, or
  another participant), ``ai``, ``person`` or ``neutral`` ("another negotiator"); `introduced_as` resolves ``auto``.
- ``model_failure_pay``: the person's bonus when the model breaks the game (``backend.dond.scoring``).

`Treatment` is a game's snapshot of these keys, stored with the game as JSON (`Treatment.to_json`); a game stored
before the keys existed reads back as the defaults.

>>> sees_other_values("llm_sees_other", "llm"), sees_other_values("llm_sees_other", "person")
(True, False)
>>> Treatment.from_json("").value_visibility, Treatment.from_json(None).agent_description
('own', 'none')
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from backend.core.catalogues import english, translated

VISIBILITIES = ("own", "llm_sees_other", "person_sees_llm", "both")
HUMAN_VISIBILITIES = ("own", "both")  # person vs person: the two sides are alike
SELFPLAY_VISIBILITIES = ("own", "both")  # model vs model: both sides are models
AGENT_DESCRIPTIONS = ("none", "average", "expert", "awful")
OPPONENT_INTROS = ("auto", "ai", "person", "neutral")
MODEL_FAILURE_PAYS = ("half_total", "zero")
SIDES = ("llm", "person")


def sees_other_values(visibility: str, side: str) -> bool:
    """Whether the ``side`` (``llm`` or ``person``) sees the other side's values under ``visibility``.

    In person vs person and in self-play both sides are of one kind: ``own`` and ``both`` give the same answer for
    either side.

    >>> [sees_other_values(v, "person") for v in VISIBILITIES]
    [False, False, True, True]
    >>> [sees_other_values(v, "llm") for v in VISIBILITIES]
    [False, True, False, True]
    >>> sees_other_values("all", "llm")
    Traceback (most recent call last):
    ...
    ValueError: value_visibility must be one of own, llm_sees_other, person_sees_llm, both, not 'all'.
    """
    if visibility not in VISIBILITIES:
        raise ValueError(f"value_visibility must be one of {', '.join(VISIBILITIES)}, not {visibility!r}.")
    if side not in SIDES:
        raise ValueError(f"side must be one of {', '.join(SIDES)}, not {side!r}.")
    return visibility == "both" or visibility == {"llm": "llm_sees_other", "person": "person_sees_llm"}[side]


def visibility_problem(visibility: str, opponent: str) -> str:
    """The sentence refusing ``visibility`` for ``opponent`` (``llm``, ``human`` or ``self``), else ``""``.

    >>> visibility_problem("both", "human")
    ''
    >>> visibility_problem("llm_sees_other", "human")  # doctest: +NORMALIZE_WHITESPACE
    "The session key 'value_visibility' must be own or both when opponent is human (two people are alike, so one
    cannot see more than the other by kind), not 'llm_sees_other'."
    """
    allowed = {"human": HUMAN_VISIBILITIES, "self": SELFPLAY_VISIBILITIES}.get(opponent, VISIBILITIES)
    if visibility in allowed:
        return ""
    if opponent == "human":
        why = "two people are alike, so one cannot see more than the other by kind"
        return (
            f"The session key 'value_visibility' must be own or both when opponent is human ({why}), "
            f"not {visibility!r}."
        )
    return f"value_visibility must be one of {', '.join(allowed)} for {opponent}, not {visibility!r}."


def introduced_as(opponent_intro: str, opponent: str) -> str:
    """What the person is told the opponent is: ``ai``, ``person`` or ``neutral`` (``auto`` is the truth).

    >>> introduced_as("auto", "llm"), introduced_as("auto", "human"), introduced_as("neutral", "llm")
    ('ai', 'person', 'neutral')
    """
    if opponent_intro not in OPPONENT_INTROS:
        raise ValueError(f"opponent_intro must be one of {', '.join(OPPONENT_INTROS)}, not {opponent_intro!r}.")
    if opponent_intro != "auto":
        return opponent_intro
    return "ai" if opponent == "llm" else "person"


@dataclasses.dataclass(frozen=True)
class Treatment:
    """A game's treatment keys, as the session had them when the game was created (see the module doc)."""

    value_visibility: str = "own"
    agent_description: str = "none"
    disclose_description: bool = False
    opponent_intro: str = "auto"
    model_failure_pay: str = "half_total"

    def __post_init__(self):
        for name, options in (
            ("value_visibility", VISIBILITIES),
            ("agent_description", AGENT_DESCRIPTIONS),
            ("opponent_intro", OPPONENT_INTROS),
            ("model_failure_pay", MODEL_FAILURE_PAYS),
        ):
            value = getattr(self, name)
            if value not in options:
                raise ValueError(f"{name} must be one of {', '.join(options)}, not {value!r}.")

    def sees_other_values(self, side: str) -> bool:
        """`sees_other_values` of this game's visibility for ``side``."""
        return sees_other_values(self.value_visibility, side)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Treatment:
        """The treatment keys of a (checked) config; absent keys take the defaults."""
        names = {field.name for field in dataclasses.fields(cls)}
        return cls(**{name: config[name] for name in names if name in config})

    @classmethod
    def from_json(cls, text: str | None) -> Treatment:
        """A stored snapshot; empty (a game from before the keys) reads as the defaults.

        >>> Treatment.from_json(Treatment(value_visibility="both").to_json()).value_visibility
        'both'
        """
        return cls.from_config(json.loads(text)) if text else cls()


@dataclasses.dataclass(frozen=True)
class LLMView:
    """What a model player's prompt states: whether it sees the other's values, whether the other sees its values,
    and how it is described (``none`` is the neutral representative)."""

    sees_other: bool = False
    other_sees: bool = False
    description: str = "none"

    def __post_init__(self):
        if self.description not in AGENT_DESCRIPTIONS:
            raise ValueError(
                f"agent_description must be one of {', '.join(AGENT_DESCRIPTIONS)}, not {self.description!r}."
            )

    @property
    def visibility_rule(self) -> str:
        """The key of the rule sentence in the prompt files: own, sees_other, other_sees or both."""
        return {(False, False): "own", (True, False): "sees_other", (False, True): "other_sees"}.get(
            (self.sees_other, self.other_sees), "both"
        )


NEUTRAL_VIEW = LLMView()  # the default: own values only, the neutral representative


def llm_view(treatment: Treatment, opponent: str) -> LLMView:
    """The model's view under ``treatment`` facing ``opponent``: ``llm`` (a person faces the model) or ``self``
    (model vs model, where both sides are models and ``value_visibility`` must be own or both).

    >>> llm_view(Treatment(value_visibility="person_sees_llm"), "llm")
    LLMView(sees_other=False, other_sees=True, description='none')
    >>> llm_view(Treatment(value_visibility="both", agent_description="expert"), "self")
    LLMView(sees_other=True, other_sees=True, description='expert')
    """
    if problem := visibility_problem(treatment.value_visibility, opponent):
        raise ValueError(problem)
    other_side = "llm" if opponent == "self" else "person"
    return LLMView(
        sees_other=treatment.sees_other_values("llm"),
        other_sees=treatment.sees_other_values(other_side),
        description=treatment.agent_description,
    )


# What the person is told about the model's description when disclose_description is on (English source of these
# messages of the ``dond`` catalogue; German and Italian formal: Sie, Lei).
DISCLOSED_DESCRIPTION = english(
    "dond",
    {
        "disclosed_description.none": "Your counterpart negotiates as a representative.",
        "disclosed_description.average": "Your counterpart negotiates as a representative with average negotiation skills.",
        "disclosed_description.expert": "Your counterpart negotiates as a representative who is highly experienced at negotiating.",
        "disclosed_description.awful": "Your counterpart negotiates as a representative who negotiates very poorly.",
    },
)


def disclosed_description(treatment: Treatment, language: str) -> str:
    """The sentence the person reads about the model's description, or ``""`` when it is not disclosed.

    >>> disclosed_description(Treatment(agent_description="expert", disclose_description=True), "de")
    'Ihr Gegenüber verhandelt als Vertretung und ist im Verhandeln sehr erfahren.'
    >>> disclosed_description(Treatment(agent_description="expert"), "de")
    ''
    """
    if not treatment.disclose_description:
        return ""
    return translated(DISCLOSED_DESCRIPTION, language)[f"disclosed_description.{treatment.agent_description}"]


DEFAULT = Treatment()
TREATMENT_COLUMNS = tuple(field.name for field in dataclasses.fields(Treatment))
