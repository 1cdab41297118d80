"""What every runner's run costs: the estimate before its first call, the run-level cap, the summary's cost line
and the run manifest (``backend.core.llm.costs`` holds the prices, sums and the cap itself).

``add_cost_options`` gives every runner ``--prices``, ``--max-cost`` and ``--estimate-only``; ``runs.run_command``
sets the run's `CostPlan` (and its cap as ``costs.SPENDING``) for the whole run; ``runs.run_each`` first estimates
the work it is given (`estimate_work`), before any call: from the tokens measured on units already run (a pilot, or
the kept part of a resumed run, which the runner hands over with `use_pilot`), else from a dry run of every unit
(each call it would make, with nothing sent: its prompt's characters / 4 as prompt tokens, its ``max_tokens`` budget
as completion tokens, an upper bound). Measured figures are the pilot's calls per unit and completion tokens per
call; its prompt tokens per call are taken per character of prompt when the runner also names the pilot's units:
both the pilot's and the planned units are dry-run, and each planned unit's prompt tokens per call are the pilot's
tokens per character times its own prompt characters per call, so a pilot on short units (a short episode, a short
log) does not under-estimate long ones. A run whose estimate passes ``--max-cost`` is refused before its first call,
with the amount it passes it by, exit status `COST_CAP_EXIT`. During the run every call reserves from the cap
(calls in flight are counted); the progress bar and the summary say what was spent, and ``DIR/run_manifest.json``
lists, per run, the estimate, the cost and what a rerun needs of the calls (``costs.rerun_facts``: served model,
fingerprint, sampling settings, max_tokens, endpoint host, product version).
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from backend.core.llm import costs
from backend.core.llm.cache import ResponseCache

Unit = TypeVar("Unit")


COST_CAP_EXIT = 4  # the exit status of a run refused because its estimate passes --max-cost


class CostCapExceeded(ValueError):
    """A run whose estimate passes its cap, refused before its first call (the sentence says by how much)."""


class EstimateOnly(Exception):
    """``--estimate-only``: the estimate is made, nothing is asked."""


@dataclass
class CostPlan:
    """A run's costs: the price table, the cap (``limit``; None: none), what was measured on units already run
    (``use_pilot``) and the estimate once made. ``calls_per_unit`` and ``why``: the runner's stated number of calls
    per unit for a dry run (None: the calls the dry run makes)."""

    table: costs.PriceTable
    limit: float | None = None
    estimate_only: bool = False
    measured: costs.Measured | None = None
    unit: str = "unit"
    calls_per_unit: float | None = None
    why: str = ""
    estimate: costs.Estimate | None = None
    pilot_units: Sequence[Any] = ()  # the units the measured figures came from (for prompt sizes), if named
    cap: costs.SpendingCap = field(default_factory=costs.SpendingCap)
    cache: ResponseCache | None = None  # --cache DIR: the run's response cache


PLAN: contextvars.ContextVar[CostPlan | None] = contextvars.ContextVar("cost_plan", default=None)


def use_pilot(
    measured: costs.Measured | None = None,
    *,
    unit: str = "unit",
    calls_per_unit: float | None = None,
    why: str = "",
    pilot_units: Sequence[Any] = (),
) -> None:
    """Tell the running plan (if any) what was measured on units already run (and, as ``pilot_units``, which units
    they were, to be dry-run with the same ``work`` for their prompt sizes) and what a unit is; a runner calls it
    before ``run_each``. Without a plan (a run made in code, not from the command line) it does nothing."""
    plan = PLAN.get()
    if plan is not None:
        plan.measured, plan.unit, plan.calls_per_unit, plan.why = measured, unit, calls_per_unit, why
        plan.pilot_units = list(pilot_units)


async def dry_calls(units: Sequence[Unit], work: Callable[[Unit], Awaitable[Any]]) -> list[list[tuple]]:
    """The calls each unit's ``work`` would make, as (model, prompt characters, max_tokens), with nothing sent
    (``costs.DRY_RUN``; every call answers as failed, so a unit makes its first calls only). Results are dropped."""
    found: list[list[tuple]] = []
    tasks = []
    for unit in units:
        calls: list[tuple] = []
        found.append(calls)
        context = contextvars.copy_context()
        context.run(costs.DRY_RUN.set, calls)
        tasks.append(asyncio.get_running_loop().create_task(work(unit), context=context))
    await asyncio.gather(*tasks, return_exceptions=True)
    return found


async def estimate_work(
    units: Sequence[Unit], work: Callable[[Unit], Awaitable[Any]], plan: CostPlan
) -> costs.Estimate:
    """The cost of ``work`` over ``units`` (see the module doc): measured figures where the plan has them, else the
    dry run's."""
    per_unit = await dry_calls(units, work)
    models: dict[str, list[float]] = {}  # model -> [calls, prompt tokens, completion tokens]
    measured = plan.measured if plan.measured is not None and plan.measured.usable else None
    per_char = None  # the pilot's prompt tokens per character of its units' dry-run prompts
    if measured is not None and plan.pilot_units:
        pilot_chars = [chars for calls in await dry_calls(plan.pilot_units, work) for _, chars, _ in calls]
        if pilot_chars and sum(pilot_chars) > 0:
            per_char = measured.per_call()[1] / (sum(pilot_chars) / len(pilot_chars))
    for calls in per_unit:
        if not calls:
            continue  # the scripted model: no paid call
        unit_models = sorted({model for model, _, _ in calls})
        count = plan.calls_per_unit if plan.calls_per_unit is not None else len(calls)
        if measured is not None:
            count, prompt, completion = measured.per_call()
            if per_char is not None:  # scaled by this unit's prompt size against the pilot's
                prompt = per_char * sum(chars for _, chars, _ in calls) / len(calls)
        else:
            prompt = sum(chars for _, chars, _ in calls) / len(calls) / costs.ESTIMATE_CHARS_PER_TOKEN
            completion = sum(limit for _, _, limit in calls) / len(calls)
        for model in unit_models:  # a unit's calls shared evenly by its models (self-play: the two players)
            totals = models.setdefault(model, [0.0, 0.0, 0.0])
            share = count / len(unit_models)
            totals[0] += share
            totals[1] += share * prompt
            totals[2] += share * completion
    if measured is not None:
        calls_u, prompt, completion = measured.per_call()
        how = (
            f"measured on {measured.units} {plan.unit}s already run: {calls_u:.1f} calls per {plan.unit}, "
            f"{prompt:.0f} prompt and {completion:.0f} completion tokens per call"
        )
        if per_char is not None:
            how += (
                f"; prompt tokens scaled by each {plan.unit}'s prompt characters against the pilot's "
                f"({per_char:.3f} tokens a character)"
            )
    else:
        stated = (
            f"{plan.calls_per_unit:g} calls per {plan.unit} ({plan.why})"
            if plan.calls_per_unit
            else (f"the calls each {plan.unit} makes first")
        )
        how = (
            f"dry run of {len(units)} {plan.unit}s: {stated}; prompt tokens = the prompt's characters / "
            f"{costs.ESTIMATE_CHARS_PER_TOKEN}, completion tokens = each call's max_tokens (an upper bound)"
        )
    estimates = [
        costs.estimate_calls(
            model,
            calls=calls,
            prompt_tokens=prompt / calls,
            completion_tokens=completion / calls,
            table=plan.table,
            how=how,
        )
        for model, (calls, prompt, completion) in sorted(models.items())
        if calls
    ]
    if not estimates:
        return costs.Estimate(0, 0, 0, 0.0, plan.table.currency, f"{how}; no paid call (scripted model or no units)")
    return costs.add_estimates(estimates, how)


def add_cost_options(parser: argparse.ArgumentParser) -> None:
    """``--prices FILE`` (a JSON price table, ``backend.core.llm.costs``), ``--max-cost AMOUNT`` (the run's spending
    cap, in the table's currency), ``--estimate-only`` and ``--cache DIR`` (the opt-in response cache,
    ``backend.core.llm.cache``)."""

    def amount(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value >= 0 or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{value} is not an amount of 0 or more")
        return value

    parser.add_argument(
        "--prices", type=Path, default=None, help="price table (JSON; docs/files/prices.json): costs and estimates"
    )
    parser.add_argument(
        "--max-cost",
        type=amount,
        default=None,
        help="spending cap of this run, in the price table's currency: refused before its first call when the "
        f"estimate passes it (exit status {COST_CAP_EXIT}); no call past it is made",
    )
    parser.add_argument("--estimate-only", action="store_true", help="print the estimated cost and ask nothing")
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        metavar="DIR",
        help="response cache (backend.core.llm.cache): answers kept in DIR by their full request; a rerun asks "
        "nothing already answered and those calls cost 0 (default: no cache)",
    )


def cost_plan(args: argparse.Namespace) -> CostPlan | None:
    """The plan of a command line with ``add_cost_options`` (None without them). A bad price table is a ValueError."""
    if not hasattr(args, "max_cost"):
        return None
    table = costs.load_price_table(args.prices)
    cap = costs.SpendingCap(limit=args.max_cost, table=table)
    cache = ResponseCache(args.cache) if getattr(args, "cache", None) is not None else None
    return CostPlan(table=table, limit=args.max_cost, estimate_only=args.estimate_only, cap=cap, cache=cache)


def cost_summary(plan: CostPlan) -> str:
    """The summary's line on costs: what this run's calls cost, the estimate, the cap and calls it refused."""
    spent = plan.cap.counted()
    parts = [f"Cost of this run: {spent.text()} for {spent.calls} paid calls"]
    if plan.estimate is not None:
        parts.append(f"estimated {costs.money(plan.estimate.cost, plan.estimate.currency)}")
    if plan.limit is not None:
        parts.append(f"cap {costs.money(plan.limit, plan.table.currency)}")
    if plan.cap.refused:
        parts.append(f"{plan.cap.refused} calls refused at the cap")
    line = "; ".join(parts) + "."
    return line if plan.cache is None else f"{line}\n{plan.cache.text()}"


def write_manifest(out: Path, plan: CostPlan, argv: Sequence[str] | None, seconds: float) -> None:
    """Append this run to ``out/run_manifest.json`` (``{"runs": [...]}``): command, version, prices, cap, estimate,
    cost, and the distinct rerun facts of its calls."""
    from backend.core.manifest import product_version

    path = Path(out) / "run_manifest.json"
    try:
        document = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"runs": []}
        document.setdefault("runs", [])
    except (ValueError, AttributeError):
        document = {"runs": [], "unreadable_before": True}  # never fail a run on a damaged manifest: start anew
    spent = plan.cap.counted()
    document["runs"].append(
        dict(
            argv=list(map(str, sys.argv[1:] if argv is None else argv)),
            version=product_version(),
            finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            seconds=round(seconds, 3),
            currency=plan.table.currency,
            max_cost=plan.limit,
            estimate=plan.estimate.as_dict() if plan.estimate is not None else None,
            cost=spent.total,
            cost_known=spent.known,
            paid_calls=spent.calls,
            calls_of_unknown_cost=spent.unknown,
            refused_at_cap=plan.cap.refused,
            calls=plan.cap.seen,
            cache=None
            if plan.cache is None
            else dict(
                folder=str(plan.cache.folder),
                hits=plan.cache.hits,
                stored=plan.cache.stored,
                corrupt=plan.cache.corrupt,
            ),
        )
    )
    Path(out).mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)  # readers see the old or the new manifest
