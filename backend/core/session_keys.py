"""Session-config keys as pydantic models: each key a field carrying its default, label, help, bounds and allowed
values; one place (`checked`) turns pydantic's refusals into the sentences a researcher reads.

oTree hands a session's config to every app when the session is created; a key can come from ``settings.py``, the
admin's "Create session" form (text typed into a number field) or the REST API (any JSON). An app's model (a
`Keys` subclass, e.g. ``backend.dond.settings.DondSettings``) declares its keys with `key` and the types below;
`checked` validates a config against it before oTree writes a row (the apps' ``validate_session_config``, see
``lab_server/creation.py``). The Create-session form (`words`), the allowed values on config descriptions
(`choices`) and the reference page (`allowed`, docs/generate.py) read the same fields.

>>> class Example(Keys):
...     max_messages: Whole = key(5, "Messages per player", ge=1, le=50)
...     language: Literal["en", "de", "it"] = key("en", "Language")
>>> checked(Example, {"max_messages": "7", "other_app_key": 1}).max_messages
7
>>> checked(Example, {"max_messages": 0, "language": "fr"})
Traceback (most recent call last):
...
ValueError: The session key 'max_messages' must be a whole number from 1 to 50, not 0. The session key 'language' must be one of en, de, it, not 'fr'.
"""

from __future__ import annotations

import decimal
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

__all__ = ["Flag", "Keys", "Number", "Text", "Whole", "allowed", "checked", "choices", "key", "words"]


def _number(value: Any) -> float:
    """Numeric text (``"5"``), ints, floats and Decimals (oTree's currencies) as a finite float; not a bool."""
    if isinstance(value, str):
        value = float(value.strip())  # a ValueError is a refusal like any other
    if isinstance(value, bool) or not isinstance(value, numbers.Real | decimal.Decimal) or not math.isfinite(value):
        raise ValueError("not a number")
    return float(value)


def _whole(value: Any) -> int:
    number = _number(value)
    if not number.is_integer():
        raise ValueError("not a whole number")
    return int(number)


def _flag(value: Any) -> bool:
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    if isinstance(value, bool) or (isinstance(value, int | float) and value in (0, 1)):
        return bool(value)
    raise ValueError("not true or false")


def _text(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError("not text")
    return value


Whole = Annotated[int, BeforeValidator(_whole)]
Number = Annotated[float, BeforeValidator(_number)]
Flag = Annotated[bool, BeforeValidator(_flag)]
Text = Annotated[str, BeforeValidator(_text)]


def key(
    default: Any,
    label: str,
    *,
    ge: float | None = None,
    le: float | str | None = None,
    max_chars: int | None = None,
    pattern: str | None = None,
    describe: str = "",
    allowed: str = "",
) -> Any:
    """A field of a `Keys` model: its default, label and bounds (its help is the docstring under it, one line as the
    Create-session page shows it). ``le`` may name a limit the caller
    passes to `checked` (``le="max_tasks"``: the app's rounds); ``pattern`` must match the whole text, ``describe``
    says in words what it allows; ``allowed`` words a key whose reader is the app's own (a JSON object)."""
    extra = {name: value for name, value in (("describe", describe), ("allowed", allowed)) if value}
    if isinstance(le, str):
        extra["le_of"], le = le, None
    return Field(
        default,
        title=label,
        ge=ge,
        le=le,
        max_length=max_chars,
        pattern=None if pattern is None else f"^(?:{pattern})$",
        json_schema_extra=extra or None,
    )


class Keys(BaseModel):
    """The base of every app's keys: frozen, other apps' keys ignored, defaults typed too, a bound named by ``le=``
    checked when the caller gives it."""

    model_config = ConfigDict(frozen=True, extra="ignore", validate_default=True, use_attribute_docstrings=True)

    @field_validator("*")
    @classmethod
    def within_named_bound(cls, value: Any, info: ValidationInfo) -> Any:
        bound = (info.context or {}).get(_extra(cls, info.field_name).get("le_of"))
        if bound is not None and value > bound:
            raise ValueError("over the bound")
        return value

    def as_config(self) -> dict[str, Any]:
        """Every key in its proper type (``"5"`` read as 5), to store back into the session's config."""
        return self.model_dump()


Model = TypeVar("Model", bound=Keys)


def _extra(model: type[Keys], name: str) -> dict[str, Any]:
    return model.model_fields[name].json_schema_extra or {}  # type: ignore[return-value]


def checked(model: type[Model], config: Mapping[str, Any], **limits: Any) -> Model:
    """``model`` filled from ``config`` (absent keys take their defaults, other keys are ignored); one ValueError
    whose sentences name every refused key, in the order of the fields. ``limits``: the bounds named by ``le=``."""
    try:
        return model.model_validate(dict(config), context=limits)
    except ValidationError as error:
        names = list(dict.fromkeys(str(problem["loc"][0]) for problem in error.errors()))
        raise ValueError(
            " ".join(
                refusal(model, name, config.get(name, model.model_fields[name].default), **limits) for name in names
            )
        ) from None


def refusal(model: type[Keys], name: str, value: Any, **limits: Any) -> str:
    """The sentence refusing ``value`` for the key ``name``.

    >>> refusal(Keys, "n", "abc")  # a key the model does not know: nothing to say what it takes
    "The session key 'n' is not one of this app's keys, not 'abc'."
    """
    if name not in model.model_fields:
        return f"The session key {name!r} is not one of this app's keys, not {value!r}."
    if isinstance(value, str) and len(value) > 80:
        value = value[:80] + "..."
    return f"The session key {name!r} must be {allowed(model, name, **limits)}, not {value!r}."


def allowed(model: type[Keys], name: str, **limits: Any) -> str:
    """What the key ``name`` accepts, in words (the refusal's and the reference page's).

    >>> from backend.dond.settings import DondSettings
    >>> allowed(DondSettings, "max_messages"), allowed(DondSettings, "mode"), allowed(DondSettings, "instances_file")
    ('a whole number from 1 to 50', 'one of semi, coop, comp', 'text of a file path (at most 500 characters)')
    """
    field, extra = model.model_fields[name], _extra(model, name)
    bounds = {type(item).__name__: item for item in field.metadata}
    low = getattr(bounds.get("Ge"), "ge", None)
    high = limits.get(extra["le_of"]) if "le_of" in extra else getattr(bounds.get("Le"), "le", None)
    if extra.get("allowed"):
        return extra["allowed"]
    if get_origin(field.annotation) is Literal:
        return "one of " + ", ".join(get_args(field.annotation))
    if field.annotation is bool:
        return "true or false"
    if field.annotation in (int, float):
        return f"a {'whole ' if field.annotation is int else ''}number from {low} to {high}"
    described = f"of {extra['describe']} " if extra.get("describe") else ""
    return f"text {described}(at most {bounds['MaxLen'].max_length} characters)"


def words(model: type[Keys]) -> dict[str, tuple[str, str]]:
    """Each key's label and one line of help, as the Create-session page shows them."""
    return {
        name: (field.title or "", " ".join((field.description or "").split()))
        for name, field in model.model_fields.items()
    }


def choices(model: type[Keys]) -> dict[str, tuple[str, ...]]:
    """The keys whose value is one of a fixed set, with that set (oTree's form shows them as free text).

    >>> from backend.dond.settings import DondSettings
    >>> choices(DondSettings)["mode"]
    ('semi', 'coop', 'comp')
    """
    return {
        name: get_args(field.annotation)
        for name, field in model.model_fields.items()
        if get_origin(field.annotation) is Literal
    }


def flag(config: Mapping[str, Any], name: str, *, default: bool) -> bool:
    """One true/false key outside a model: True/False, 1/0 or the texts true/false/yes/no/1/0.

    >>> flag({"f": "yes"}, "f", default=False), flag({}, "f", default=False)
    (True, False)
    """
    value = config.get(name, default)
    try:
        return _flag(value)
    except ValueError:
        raise ValueError(f"The session key {name!r} must be true or false, not {value!r}.") from None


def refuse_problems(problems: Sequence[str]) -> None:
    """Raise one ValueError holding every problem (sentences joined by a space); nothing when there is none."""
    if problems:
        raise ValueError(" ".join(problems))
