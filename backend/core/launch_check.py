"""What would hurt a study before its first participant arrives: the launch check's rules, from plain facts.

``lab_server/study_pages.py`` gathers the facts of a session (its keys, one real model call, its material, its room)
and shows the findings on the session's Launch check page; ``python -m backend launch-check`` prints the same for a
config. Nothing here blocks anything: each finding has a ``severity`` (``problem``: participants would be stranded,
underpaid or served by the wrong model; ``warning``: worth a look; ``ok``), ``what`` is wrong and the ``fix``.

Rules (each a function below, keyword-only facts, one finding or none):

- codes: no ``completion_code`` strands people on the last page; no ``screenout_code`` leaves a screened-out person
  with no next step (only where the study can screen out: with consent or a comprehension check).
- model: the one real call failed, took longer than ``SLOW_S`` seconds, or was answered by another model than the
  config names.
- language: material that declares a language other than the session's.
- places: ``places * per_person`` ratings against ``items * per_item`` needed (k annotators per item).
- pay: ``pay / (minutes / 60)`` against the researcher's floor per hour (``min_pay_per_hour``).
- room: a session in a room that is tied to other configs.
"""

from __future__ import annotations

import math

SEVERITIES = ("problem", "warning", "ok")
SLOW_S = 10.0  # one model call slower than this makes a participant wait visibly at every turn


def finding(severity: str, what: str, fix: str = "") -> dict[str, str]:
    if severity not in SEVERITIES:
        raise ValueError(f"The severity must be one of {', '.join(SEVERITIES)}, not {severity!r}.")
    return dict(severity=severity, what=what, fix=fix)


def codes_findings(*, completion_code: str, screenout_code: str, can_screen_out: bool) -> list[dict]:
    """Missing Prolific codes.

    >>> [f["severity"] for f in codes_findings(completion_code="", screenout_code="", can_screen_out=True)]
    ['problem', 'warning']
    >>> codes_findings(completion_code="C1", screenout_code="", can_screen_out=False)[0]["severity"]
    'ok'
    """
    found = []
    if not completion_code:
        found.append(
            finding(
                "problem",
                "No completion code (session key completion_code): the last page shows no code and does not send "
                "people back to Prolific, so they cannot submit.",
                "Copy the completion code from the study's page on Prolific into completion_code (Edit, on the "
                "session's page) before the first participant arrives.",
            )
        )
    if not screenout_code and can_screen_out:
        found.append(
            finding(
                "warning",
                "No screen-out code (session key screenout_code): someone who declines consent or fails a check "
                "sees no code and no next step.",
                "Add a screen-out completion code on Prolific (e.g. 'screen out with payment') and enter it as "
                "screenout_code.",
            )
        )
    return found or [finding("ok", "Completion and screen-out codes are set.")]


def model_findings(*, model: str, served: str | None, latency_s: float | None, error: str | None) -> list[dict]:
    """The result of one real call to the config's model.

    >>> model_findings(model="m1", served="m2", latency_s=0.3, error=None)[0]["what"]
    "The endpoint answered as model 'm2', not 'm1' as the config names (0.30 s)."
    >>> model_findings(model="m1", served="m1", latency_s=12.5, error=None)[0]["severity"]
    'warning'
    >>> model_findings(model="m1", served=None, latency_s=None, error="connection refused")[0]["severity"]
    'problem'
    """
    shown = f" ({latency_s:.2f} s)" if latency_s is not None else ""
    if error:
        return [
            finding(
                "problem",
                f"The model endpoint did not answer for model {model!r}{shown}: {error}",
                "Check OPENAI_BASE_URL and OPENAI_API_KEY on the server and the session key llm_model; start the "
                "model server; then reload this page.",
            )
        ]
    if served and served != model:
        return [
            finding(
                "problem",
                f"The endpoint answered as model {served!r}, not {model!r} as the config names{shown}.",
                "Point OPENAI_BASE_URL at the server that serves the model, or set llm_model to the model it serves.",
            )
        ]
    if latency_s is not None and latency_s > SLOW_S:
        return [
            finding(
                "warning",
                f"Model {model!r} answered, but slowly: {latency_s:.2f} s for one short call (over {SLOW_S:.0f} s).",
                "Participants wait this long at every model turn: use a faster endpoint or model, or check its load.",
            )
        ]
    return [finding("ok", f"Model {model!r} answered in {latency_s or 0:.2f} s.")]


def language_findings(*, language: str, material: dict[str, str]) -> list[dict]:
    """Material (name -> the language it declares) in another language than the session.

    >>> language_findings(language="de", material={"bias items": "en"})[0]["severity"]
    'problem'
    >>> language_findings(language="en", material={})
    []
    """
    other = {name: declared for name, declared in material.items() if declared and declared != language}
    if not other:
        return [finding("ok", f"The material is in the session's language ({language}).")] if material else []
    listing = ", ".join(f"{name} ({declared})" for name, declared in other.items())
    return [
        finding(
            "problem",
            f"The session is in {language!r} but its material is not: {listing}.",
            "Give the session material in its language, or set the session key language to the material's.",
        )
    ]


def places_findings(*, places: int, per_person: int, items: int, per_item: int, unit: str = "item") -> list[dict]:
    """Places against what the items need: ``items * per_item`` tasks, ``places * per_person`` done at most.

    >>> places_findings(places=4, per_person=3, items=10, per_item=2, unit="episode")[0]["what"]
    'Too few places: 4 places x 3 episodes each = 12 ratings, but 10 episodes x 2 annotators need 20.'
    >>> places_findings(places=40, per_person=3, items=10, per_item=2, unit="episode")[0]["severity"]
    'warning'
    """
    if places <= 0 or per_person <= 0 or items <= 0 or per_item <= 0:
        return []
    offered, needed = places * per_person, items * per_item
    counts = f"{places} places x {per_person} {unit}s each = {offered} ratings, but {items} {unit}s x {per_item}"
    if offered < needed:
        return [
            finding(
                "warning",
                f"Too few places: {counts} annotators need {needed}.",
                f"Make the session (and Prolific's places) at least {math.ceil(needed / per_person)} large, or "
                "lower the annotators per item.",
            )
        ]
    spare = places - math.ceil(needed / per_person)
    if spare > max(2, places // 5):
        return [
            finding(
                "warning",
                f"More places than the {unit}s can cover: {items} {unit}s x {per_item} = {needed} ratings fill "
                f"{math.ceil(needed / per_person)} places; {spare} of {places} would find nothing left to rate.",
                "Offer fewer places on Prolific, add material, or raise the annotators per item. Keep a few spare "
                "places for returns.",
            )
        ]
    return [finding("ok", f"{places} places cover {items} {unit}s x {per_item}.")]


def pay_findings(*, minutes: float, pay: float, currency: str, floor_per_hour: float | None) -> list[dict]:
    """Pay per hour from the estimated duration: ``pay / (minutes / 60)`` against the researcher's floor.

    >>> pay_findings(minutes=20, pay=2.0, currency="GBP", floor_per_hour=9)[0]["what"]
    'Estimated 20 min for 2.00 GBP: 6.00 GBP per hour, below your floor of 9.00 GBP per hour.'
    >>> pay_findings(minutes=20, pay=3.0, currency="GBP", floor_per_hour=None)[0]["severity"]
    'warning'
    """
    if minutes <= 0:
        return []
    per_hour = pay / (minutes / 60)
    said = f"Estimated {minutes:.0f} min for {pay:.2f} {currency}: {per_hour:.2f} {currency} per hour"
    if floor_per_hour is None or floor_per_hour <= 0:
        return [
            finding(
                "warning",
                said + "; no floor is set.",
                "Set the session key min_pay_per_hour to the pay per hour you want to keep (Prolific has a minimum).",
            )
        ]
    if per_hour < floor_per_hour:
        return [
            finding(
                "problem",
                f"{said}, below your floor of {floor_per_hour:.2f} {currency} per hour.",
                f"Pay at least {floor_per_hour * minutes / 60:.2f} {currency} (participation_fee), or ask less.",
            )
        ]
    return [finding("ok", f"{said} (floor {floor_per_hour:.2f}).")]


def room_findings(*, room: str | None, config: str, room_configs: tuple[str, ...] | None) -> list[dict]:
    """A session in a room tied to other configs (the room's Prolific link would start the wrong study).

    >>> room_findings(room="bias_study", config="dond_llm", room_configs=("bias_tests",))[0]["severity"]
    'problem'
    >>> room_findings(room=None, config="dond_llm", room_configs=None)[0]["severity"]
    'warning'
    """
    if room is None:
        return [
            finding(
                "warning",
                "The session is in no room: there is no Prolific link for it, only per-participant links.",
                "Create the session from its room's page (Rooms) so the room's link starts it.",
            )
        ]
    if room_configs is not None and config not in room_configs:
        return [
            finding(
                "problem",
                f"Room {room!r} is tied to {', '.join(room_configs)}, not to this session's config {config!r}.",
                "Close the room and create the session in the room of its config.",
            )
        ]
    return [finding("ok", f"Room {room!r} runs config {config!r}.")]


def worst(findings: list[dict]) -> str:
    """The most severe finding's severity ("ok" when there is none).

    >>> worst([finding("ok", "a"), finding("warning", "b")])
    'warning'
    """
    return min((f["severity"] for f in findings), key=SEVERITIES.index, default="ok")
