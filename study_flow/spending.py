"""The study-level spending cap on model calls: session keys ``llm_prices_file`` (the price table, a JSON file
relative to the project root or absolute; ``backend.core.llm.costs``) and ``llm_cost_cap`` (in its currency).

One ``SpendingCap`` per session in this server process (oTree serves a study from one process), made at the
session's first model call or status read from what its apps have **stored**: every app that calls a model registers
a reader of its stored calls (`register_stored_calls`), and the cap starts from what they cost. From then on every
call reserves its largest likely cost before it is sent and settles when it ends (calls in flight are counted).
After a restart the cap starts again from the stored calls: stored history is the truth.

What a live DoND game does at the cap: the model's next call is never sent and the game ends as ``llm_cost_cap``,
paid by the session's ``model_failure_pay`` (the sentence the person read before the game). Study status and the
launch check say how much was spent and whether the cap is reached (`status`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from backend.core.llm import LLMSettings, costs

PROJECT_ROOT = Path(__file__).resolve().parents[1]
# app -> reader(session) of the app's stored model calls, each as (model, prompt_tokens, completion_tokens)
_readers: dict[str, Callable[[Any], Iterable[tuple[str, Any, Any]]]] = {}
# app -> planner(config) -> (paid calls per place, prompt tokens per call, completion tokens per call, why)
_planners: dict[str, Callable[[Mapping[str, Any]], tuple[float, float, float, str]]] = {}
_caps: dict[str, costs.SpendingCap] = {}
_lock = threading.Lock()


def register_stored_calls(app: str, reader: Callable[[Any], Iterable[tuple[str, Any, Any]]], planner=None) -> None:
    """An app that calls a model names the reader of its stored calls (for the cap's start and Study status) and its
    planner: ``planner(config)`` gives the stated defaults of the launch check's estimate (calls per place, prompt
    and completion tokens per call, and why)."""
    _readers[app] = reader
    if planner is not None:
        _planners[app] = planner


def estimate(session, places: int) -> costs.Estimate | None:
    """The launch check's estimate of what ``places`` places' model calls cost: tokens per call and calls per place
    measured on the session's stored calls where there are any (a pilot), else the app's stated defaults. None for
    a session whose app calls no model, or plays the scripted model."""
    config = session.config
    apps = [app for app in config.get("app_sequence") or [] if app in _planners]
    model = LLMSettings.from_config(config).model
    if not apps or model == costs.SCRIPTED:
        return None
    table = price_table(config)
    calls_per_place, prompt, completion, why = _planners[apps[0]](config)
    stored = [call for reader in _readers.values() for call in reader(session) if call[0] and call[0] != costs.SCRIPTED]
    reported = [(int(float(p)), int(float(c))) for _, p, c in stored if p not in (None, "") and c not in (None, "")]
    if reported:
        prompt = sum(p for p, _ in reported) / len(reported)
        completion = sum(c for _, c in reported) / len(reported)
        how = (
            f"tokens measured on the {len(reported)} calls stored so far ({prompt:.0f} prompt and {completion:.0f} "
            f"completion per call), {calls_per_place:g} calls per place ({why})"
        )
    else:
        how = f"stated defaults: {calls_per_place:g} calls per place, {prompt:.0f} prompt and {completion:.0f} " + (
            f"completion tokens per call ({why})"
        )
    return costs.estimate_calls(
        model, calls=places * calls_per_place, prompt_tokens=prompt, completion_tokens=completion, table=table, how=how
    )


def price_table(config: Mapping[str, Any]) -> costs.PriceTable:
    """The session's price table (``llm_prices_file``; none: every price unknown). ValueError names a bad file."""
    path = str(config.get("llm_prices_file") or "")
    if not path:
        return costs.EMPTY_TABLE
    file = Path(path) if Path(path).is_absolute() else PROJECT_ROOT / path
    try:
        stamp = file.stat().st_mtime_ns
    except OSError:
        stamp = None  # load_price_table says what is wrong
    return _table(str(file), stamp)


@functools.lru_cache(maxsize=64)
def _table(file: str, stamp: int | None) -> costs.PriceTable:
    """A price table read once per file version (exports read it for every game)."""
    return costs.load_price_table(file)


def cap_limit(config: Mapping[str, Any]) -> float | None:
    """The session's ``llm_cost_cap`` (None when empty)."""
    value = config.get("llm_cost_cap")
    return None if value in (None, "") else float(value)


def config_problem(config: Mapping[str, Any]) -> str | None:
    """Why a session config's price table or cap cannot work (read at creation), else None: an unreadable table,
    or a cap while the price of the session's model is unknown (the cap could not count its calls).

    >>> config_problem({"llm_model": "gpt-x", "llm_cost_cap": 5})
    "The session key 'llm_cost_cap' is set, but the price table (llm_prices_file) has no price for the model 'gpt-x': a cap cannot count calls of unknown price. Give its price, or remove the cap."
    >>> config_problem({"llm_model": "scripted", "llm_cost_cap": 5}) is None
    True
    """
    try:
        table = price_table(config)
    except ValueError as error:
        return f"The session key 'llm_prices_file': {error}"
    model = LLMSettings.from_config(config).model
    if cap_limit(config) is not None and costs.call_cost(model, 0, 0, table) is None:
        return (
            f"The session key 'llm_cost_cap' is set, but the price table (llm_prices_file) has no price for the model "
            f"{model!r}: a cap cannot count calls of unknown price. Give its price, or remove the cap."
        )
    return None


def stored_costs(session, table: costs.PriceTable) -> costs.CostSum:
    """What the session's stored model calls cost (every registered app's), by the price table."""
    total = costs.CostSum(table.currency)
    for reader in _readers.values():
        for model, prompt_tokens, completion_tokens in reader(session):
            if model and model != costs.SCRIPTED:
                total.add(costs.call_cost(model, prompt_tokens, completion_tokens, table))
    return total


def cap_of(session) -> costs.SpendingCap:
    """The session's cap in this process, made at first use from its stored calls (call it where the database may
    be read: under oTree's page lock in a live method)."""
    with _lock:
        cap = _caps.get(session.code)
    if cap is not None:
        return cap
    table = price_table(session.config)
    stored = stored_costs(session, table)
    made = costs.SpendingCap(
        limit=cap_limit(session.config), table=table, spent=stored.known, unknown=stored.unknown, calls=stored.calls
    )
    with _lock:
        return _caps.setdefault(session.code, made)


def forget(session_code: str) -> None:
    """Drop a session's cap from memory (it is made again from the stored calls)."""
    with _lock:
        _caps.pop(session_code, None)


def status(session) -> dict[str, Any]:
    """What Study status and the launch check show: ``spent`` (text; unknown while a price is), ``cap``,
    ``remaining``, ``in_flight``, ``refused`` (calls refused at the cap), ``reached`` and ``currency``."""
    cap = cap_of(session)
    return dict(
        spent=cap.counted().text(),
        cap=costs.money(cap.limit, cap.table.currency) if cap.limit is not None else "none (llm_cost_cap)",
        remaining=costs.money(cap.remaining(), cap.table.currency) if cap.limit is not None else "",
        in_flight=cap.in_flight,
        refused=cap.refused,
        reached=cap.limit is not None and (cap.reached or (cap.remaining() or 0) <= 0),
        currency=cap.table.currency,
        priced=bool(cap.table.models),
    )


def launch_facts(session, places: int) -> dict[str, Any] | None:
    """The facts of ``backend.core.cost_check.cost_findings`` for a session (None when it calls no model)."""
    found = estimate(session, places)
    if found is None:
        return None
    cap = cap_of(session)
    info = status(session)
    return dict(
        estimate=found,
        limit=cap.limit,
        spent=info["spent"],
        reached=info["reached"],
        currency=cap.table.currency,
        places=places,
    )
