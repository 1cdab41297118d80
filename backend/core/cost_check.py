"""The launch check's findings on model costs (``backend.core.llm.costs``): the estimate of the study's model calls,
what was spent, the spending cap and whether it is reached. Pure: the facts come from ``study_flow.spending``.
"""

from __future__ import annotations

from backend.core.llm.costs import Estimate, money


def cost_findings(
    *,
    estimate: Estimate | None = None,
    limit: float | None = None,
    spent: str = "",
    reached: bool = False,
    currency: str = "",
    places: int = 0,
    problem: str = "",
) -> list[dict]:
    """Findings (``launch_check.finding`` dicts) on the costs of a session's model calls (``problem``: the price
    table's, alone).

    >>> estimate = Estimate(60, 90000, 30000, 0.21, "USD", "stated defaults")
    >>> [f["severity"] for f in cost_findings(estimate=estimate, limit=0.1, spent="0.0000 USD", reached=False,
    ...                                       currency="USD", places=10)]
    ['warning']
    >>> cost_findings(estimate=None, limit=None, spent="", reached=False, currency="", places=0)
    []
    """
    from backend.core.launch_check import finding

    if problem:  # the price table cannot be read (gone or broken since the session was created)
        return [finding("problem", problem, "Fix the file named by llm_prices_file (docs/costs.md).")]
    if estimate is None:
        return []
    found = []
    line = f"Estimated cost of the model calls of {places} place(s): {estimate.text()}. Spent so far: {spent}."
    if estimate.cost is None:
        found.append(
            finding(
                "warning",
                line + " A model's price is unknown, so costs are reported as unknown (never as free).",
                "Give the model's price in the price table (session key llm_prices_file; docs/costs.md).",
            )
        )
    elif limit is not None and estimate.cost > limit:
        share = max(0, int(places * limit / estimate.cost)) if estimate.cost else places
        found.append(
            finding(
                "warning",
                line + f" It passes the spending cap of {money(limit, currency)} by "
                f"{money(estimate.cost - limit, currency)}: about {share} of {places} places can play before the cap "
                "ends the games that still need the model (llm_cost_cap; paid by model_failure_pay).",
                "Raise llm_cost_cap, lower the places, or accept that the last games end at the cap.",
            )
        )
    else:
        cap = f" Spending cap: {money(limit, currency)}." if limit is not None else " No spending cap (llm_cost_cap)."
        found.append(finding("ok", line + cap))
    if reached:
        found.append(
            finding(
                "problem",
                f"The spending cap of {money(limit, currency)} is reached: no further paid model call is made, and "
                "every game whose model must answer ends (llm_cost_cap), its person paid by model_failure_pay.",
                "Raise llm_cost_cap to go on, or close the study.",
            )
        )
    return found
