"""The bonus a participant was told, fixed when it is shown.

The page that states a participant's bonus (DoND's Results page), or else the completion page, stores it once in
``participant.vars["pay_shown"]``: the amount in the study's currency as the page showed it, the text shown, the
points, the money per point and the rule that made it, and when. From then on the page shows the stored amount, and
the bonus file, the review list and Pay and review read it; nothing recomputes it. A later edit of the session's
``real_world_currency_per_point`` therefore changes the bonus only of people who have not seen theirs yet, and Pay and
review says how many that is (`summary`).

The participation fee likewise: the consent page states it ("You receive 2.50 GBP for taking part") and stores it
then in ``participant.vars["fee_shown"]`` (`fee_shown`); the page states the stored fee again on a reload, oTree's
Payments page adds the stored fee to the bonus (``lab_server.outputs.LabelEscaped``) and Pay and review says which
fees people were shown (`fee_summary`). A later edit of the session's ``participation_fee`` changes the fee only of
people who have not seen it yet.
"""

from __future__ import annotations

from decimal import Decimal

from backend.core import clock
from backend.core.prolific import money

PAY_SHOWN = "pay_shown"  # participant.vars key


def shown(player, *, rule: str = "") -> dict:
    """The participant's bonus as stated to them: stored now if this is the first page to state it, else as stored.

    ``rule`` names what paid it (e.g. DoND's ``mode_goal``, ``model_failure_half_total``); the record holds
    ``amount`` (a decimal string in the study's currency), ``text`` (as the page printed it), ``points``,
    ``per_point`` (the session's money per point then), ``per_point_text`` (as the page printed it), ``rule`` and
    ``shown_at`` (epoch seconds)."""
    participant = player.participant
    record = participant.vars.get(PAY_SHOWN)
    if isinstance(record, dict) and "amount" in record:
        return record
    real = participant.payoff.to_real_world_currency(player.session)
    one_point = type(participant.payoff)(1).to_real_world_currency(player.session)
    record = dict(
        amount=str(Decimal(real)),
        text=str(real),
        points=float(participant.payoff),
        per_point=str(player.session.config.get("real_world_currency_per_point")),
        per_point_text=str(one_point),  # as the page printed the money per point
        rule=rule,
        shown_at=clock.now(),
    )
    participant.vars[PAY_SHOWN] = record
    return record


CODE_SHOWN = "code_shown"  # participant.vars key: the Prolific code their last page showed


def code_shown(player, code: str) -> str:
    """The completion or screen-out code the participant's last page shows: ``code`` the first time (stored), the
    stored one after, so an edit of the session's codes never changes what a person was shown or what the review list
    says they were shown."""
    stored = player.participant.vars.get(CODE_SHOWN)
    if isinstance(stored, str):
        return stored
    player.participant.vars[CODE_SHOWN] = code
    return code


def bonus(participant, session) -> tuple[Decimal, bool]:
    """The participant's bonus in the study's currency and whether it is the stored one (True), i.e. the amount a
    page stated; else (False: nothing stated it yet) their payoff at the session's current money per point. A stored
    record that cannot be read counts as not stored."""
    record = participant.vars.get(PAY_SHOWN)
    if isinstance(record, dict):
        try:
            return money(record["amount"]), True
        except (KeyError, ValueError):
            pass
    return money(Decimal(participant.payoff.to_real_world_currency(session))), False


def summary(people: list[dict], *, per_point) -> list[str]:
    """Pay and review's sentences on where the amounts come from: how many were stated (and at which rates), how many
    follow the current rate. ``people`` are rows with ``bonus_stored`` and ``per_point_shown``.

    >>> summary([dict(bonus_stored=True, per_point_shown="0.01"), dict(bonus_stored=False)], per_point=0.02)[1]
    '1 have not been shown an amount yet: theirs follow the current money per point (0.02) until their page states it.'
    """
    stated = [person for person in people if person.get("bonus_stored")]
    rates = sorted({str(person.get("per_point_shown")) for person in stated})
    lines = []
    if stated:
        lines.append(
            f"{len(stated)} of {len(people)} bonuses are the amounts their pages stated (money per point then: "
            f"{', '.join(rates)}); a later edit of the money per point does not change them."
        )
    if len(stated) < len(people):
        lines.append(
            f"{len(people) - len(stated)} have not been shown an amount yet: theirs follow the current money per "
            f"point ({per_point}) until their page states it."
        )
    return lines


FEE_SHOWN = "fee_shown"  # participant.vars key: the participation fee as the consent page stated it


def fee_shown(participant, config, currency: str) -> dict:
    """The participation fee as the consent page states it to ``participant``: stored now if this is the first time,
    else as stored. The record holds ``amount`` (a decimal string in the study's currency, as printed), ``text`` (as
    the page printed it) and ``shown_at`` (epoch seconds).

    >>> from types import SimpleNamespace
    >>> person = SimpleNamespace(vars={})
    >>> fee_shown(person, {"participation_fee": 2.5}, "GBP")["text"]
    '2.50 GBP'
    >>> fee_shown(person, {"participation_fee": 1}, "GBP")["text"], person.vars["fee_shown"]["amount"]  # as stored
    ('2.50 GBP', '2.50')
    """
    record = participant.vars.get(FEE_SHOWN)
    if isinstance(record, dict) and "amount" in record and "text" in record:
        return record
    amount = f"{float(config.get('participation_fee') or 0):.2f}"
    record = dict(amount=amount, text=f"{amount} {currency}".strip(), shown_at=clock.now())
    participant.vars[FEE_SHOWN] = record
    return record


def stated_fee(participant) -> Decimal | None:
    """The participation fee the consent page stated to ``participant`` (`fee_shown`), or None: not stated yet, or a
    record that cannot be read (then the session's current fee stands).

    >>> from types import SimpleNamespace
    >>> stated_fee(SimpleNamespace(vars={"fee_shown": {"amount": "2.50"}})), stated_fee(SimpleNamespace(vars={}))
    (Decimal('2.50'), None)
    >>> stated_fee(SimpleNamespace(vars={"fee_shown": {"amount": "lots"}})) is None
    True
    """
    record = (getattr(participant, "vars", None) or {}).get(FEE_SHOWN)
    try:
        return Decimal(str(record["amount"])) if isinstance(record, dict) else None
    except (KeyError, ArithmeticError):
        return None


def fee_summary(fees: list[Decimal | None], *, current) -> list[str]:
    """Pay and review's sentences on the participation fee: the fees people's consent pages stated (``fees``: each
    person's `stated_fee`), beside the session's fee now (``current``).

    >>> first, rest = fee_summary([Decimal("2.50"), Decimal("2.5"), Decimal("1"), None], current=1)
    >>> first
    "3 of 4 were shown a participation fee on their consent page (2.50: 2 people; 1.00: 1 person); each is owed the fee they were shown (the session's fee is now 1.00)."
    >>> rest
    "1 have no fee stored from their consent page (not shown yet, or your own consent text): theirs is the session's fee now (1.00)."
    >>> fee_summary([Decimal("1")], current=1)
    ['1 of 1 were shown a participation fee on their consent page (1.00: 1 person); each is owed the fee they were shown.']
    """
    now = f"{float(current or 0):.2f}"
    counts: dict[str, int] = {}
    for fee in fees:
        if fee is not None:
            counts[f"{fee:.2f}"] = counts.get(f"{fee:.2f}", 0) + 1
    shown = sum(counts.values())
    lines = []
    if shown:
        each = "; ".join(
            f"{fee}: {count} {'person' if count == 1 else 'people'}"
            for fee, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        )
        changed = f" (the session's fee is now {now})" if set(counts) != {now} else ""
        lines.append(
            f"{shown} of {len(fees)} were shown a participation fee on their consent page ({each}); each is owed the "
            f"fee they were shown{changed}."
        )
    if shown < len(fees):
        lines.append(
            f"{len(fees) - shown} have no fee stored from their consent page (not shown yet, or your own consent "
            f"text): theirs is the session's fee now ({now})."
        )
    return lines
