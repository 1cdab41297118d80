"""What a study asks of a participant, in their language: the counts on each app's Instructions page, the estimated
minutes, and the consent text's duration, pay and contact (rules and default times: ``backend/core/workload.py``).

The minutes are the session key ``estimated_minutes`` when the researcher set it (e.g. from a pilot's measured page
times: the launch check shows the default estimate beside it), else ``backend.core.workload.estimate_minutes`` from
the documented default times. The pay is ``participation_fee`` in the server's currency. ``researcher_contact``
(an e-mail address or a sentence) is named on the default consent text when set.
"""

from __future__ import annotations

import study_flow.pay as pay
from backend.core import workload

from .hooks import app_name
from .texts import messages


def estimated_minutes(config, app: str, *, units: int | None = None) -> int:
    """The session's ``estimated_minutes``, else the default estimate for ``app`` (``units``: the participant's count).

    >>> estimated_minutes({"estimated_minutes": 12}, "dond"), estimated_minutes({}, "dond")
    (12, 9)
    >>> estimated_minutes({}, "bias_tests", units=20)
    16
    """
    if config.get("estimated_minutes"):
        return int(config["estimated_minutes"])
    return workload.estimate_minutes(app, config, units_done=units)[0]


def units_of(player) -> int:
    """How many units this participant does: their bias questions, or what the config implies."""
    app = app_name(player)
    if app == "bias_tests":
        return len(player.participant.vars.get("bias_plan") or []) or workload.units(app, player.session.config)
    return workload.units(app, player.session.config)


def workload_text(player, *, units: int | None = None, **counts) -> str:
    """The Instructions page's sentence on what is asked and how long it takes, in the session's language.

    ``counts``: the app's own figures its text names (``messages`` for dond; ``ratings`` and ``min_chars`` for
    social_eval); ``units`` (the participant's own count, where the app knows it) else ``units_of``.
    """
    config = player.session.config
    app, text = app_name(player), messages(config.get("language"))
    units = units if units is not None else units_of(player)
    minutes = estimated_minutes(config, app, units=units)
    return " ".join(
        (text[f"workload_{app}"].format(units=units, **counts), text["workload_minutes"].format(minutes=minutes))
    )


_CURRENCY = {"code": ""}  # the project's REAL_WORLD_CURRENCY_CODE, told by settings.py (`use_currency`)


def use_currency(code: str) -> None:
    """settings.py tells the flow its ``REAL_WORLD_CURRENCY_CODE`` (the flow never imports settings.py)."""
    _CURRENCY["code"] = str(code or "")


def currency() -> str:
    """The server's currency code (``REAL_WORLD_CURRENCY_CODE`` in the project's settings), e.g. ``GBP``; "" until
    settings.py has told it (`use_currency`)."""
    return _CURRENCY["code"]


def pay_text(config, currency: str) -> str:
    """``participation_fee`` as money: ``2.50 GBP``.

    >>> pay_text({"participation_fee": 2.5}, "GBP")
    '2.50 GBP'
    """
    return f"{float(config.get('participation_fee') or 0):.2f} {currency}".strip()


def default_consent(player, *, currency: str) -> str:
    """Our consent text in the session's language, with the duration and the pay (the contact: ``contact_line``)."""
    config = player.session.config
    text = messages(config.get("language"))
    app = app_name(player)
    parts = [text["default_consent"]]
    if app in workload.DEFAULT_SECONDS:
        minutes = estimated_minutes(config, app, units=units_of(player))
        # The fee as stated to this person the first time, stored then (study_flow.pay.fee_shown): never recomputed.
        stated = pay.fee_shown(player.participant, config, currency)["text"]
        parts.append(text["consent_facts"].format(minutes=minutes, pay=stated))
    return " ".join(parts)


def contact_line(config) -> dict[str, str]:
    """The consent page's contact sentence around the researcher's own words (``researcher_contact``), which the
    page marks as their material; empty when no contact is set.

    >>> contact_line({"language": "de", "researcher_contact": "lab@uni.example"})
    {'before': 'Fragen zur Studie: ', 'contact': 'lab@uni.example', 'after': '.'}
    >>> contact_line({})
    {}
    """
    contact = str(config.get("researcher_contact") or "")
    if not contact:
        return {}
    before, _, after = messages(config.get("language"))["consent_contact"].partition("{contact}")
    return dict(before=before, contact=contact, after=after)
