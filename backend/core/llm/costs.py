"""What model calls cost: the researcher's price table, the cost of a call, estimates before a run, and a spending
cap that counts the calls in flight.

- **Price table** (`PriceTable`, `load_price_table`): a JSON file the researcher writes, named by the session key
  ``llm_prices_file`` or a runner's ``--prices``::

      {"currency": "USD",
       "models": {"gpt-4o-mini": {"input_per_million": 0.15, "output_per_million": 0.60}}}

  Prices are per million tokens; a model may carry its own ``currency`` (every priced model of one table must use
  the same one). A model missing from the table, or with a price left ``null``, has an **unknown** price: its calls
  cost ``None``, every total they enter is reported as unknown (with the part that is known), never as free. The
  shipped template (``docs/files/prices.json``) has no price filled in. The offline ``scripted`` model makes no
  paid call: it costs 0 whatever the table says.
- **Cost of a call** (`call_cost`): (prompt tokens x input price + completion tokens x output price) / 1e6, from the
  tokens the endpoint reported (``CallRecord.prompt_tokens`` / ``completion_tokens``); a call whose tokens were not
  reported has an unknown cost.
- **Sums** (`CostSum`): known total, calls counted, calls whose cost is unknown.
- **Estimates** (`Estimate`): calls x tokens per call x prices, with a sentence saying where the figures came from.
- **Cap** (`SpendingCap`): a limit in the table's currency. Every paid call first *reserves* its largest likely
  cost (its prompt at ``RESERVE_CHARS_PER_TOKEN`` characters a token, its whole ``max_tokens`` budget as reply)
  and *settles* at its reported cost when it ends. A call whose reservation would take spent + reserved past the
  limit is refused before it is sent, so the calls in flight are counted: money spent past the cap is at most
  what calls in flight spent beyond their reservations. A call of a model with an unknown price is refused
  while a cap is set (its cost could not be counted). The client (``backend.core.llm.client``) asks the cap
  given to the call (``spend=``), else the one of the running context (`SPENDING`, set by a runner).
"""

from __future__ import annotations

import contextvars
import json
import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

SCRIPTED = "scripted"
NOT_SENT = ("cost_cap", "dry_run")  # error kinds of a call's record that was never sent: it cost nothing
ESTIMATE_CHARS_PER_TOKEN = 4  # an estimate's prompt tokens: about 4 characters a token in English prose
RESERVE_CHARS_PER_TOKEN = 2  # a reservation's: a low bound in en/de/it (backend.core.llm.settings.CHARS_PER_TOKEN)
MAX_PRICE_FILE_BYTES = 1024 * 1024


class Price(BaseModel):
    """The price of one model: input and output per million tokens (None: unknown) and its currency."""

    model_config = ConfigDict(extra="forbid")

    input_per_million: float | None = Field(default=None, ge=0)
    output_per_million: float | None = Field(default=None, ge=0)
    currency: str | None = None

    @property
    def known(self) -> bool:
        return self.input_per_million is not None and self.output_per_million is not None


class PriceTable(BaseModel):
    """The researcher's price table (see the module doc).

    >>> table = PriceTable.model_validate({"currency": "USD", "models": {"m": {"input_per_million": 1,
    ...                                    "output_per_million": 4}, "n": {}}})
    >>> table.price_of("m").known, table.price_of("n").known, table.price_of("other")
    (True, False, None)
    """

    model_config = ConfigDict(extra="forbid")

    currency: str = ""
    models: dict[str, Price] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_currency(self) -> PriceTable:
        used = {price.currency or self.currency for price in self.models.values() if price.known}
        if "" in used:
            raise ValueError("a priced model has no currency: set 'currency' for the table or for that model")
        if len(used) > 1:
            raise ValueError(f"the priced models use several currencies ({', '.join(sorted(used))}): use one")
        if used and not self.currency:
            self.currency = used.pop()
        return self

    def price_of(self, model: str) -> Price | None:
        """The model's entry, or None when the table does not name it."""
        return self.models.get(model)


EMPTY_TABLE = PriceTable()


def load_price_table(path: str | Path | None) -> PriceTable:
    """The price table of a JSON file (``None`` or ``""``: the empty table, every price unknown). A file that cannot
    be read, or does not hold a price table, raises ValueError with a sentence that names it.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "prices.json"
    >>> _ = path.write_text('{"currency": "EUR", "models": {"m": {"input_per_million": -1}}}')
    >>> load_price_table(path)
    Traceback (most recent call last):
    ...
    ValueError: The price table ... is not valid: models.m.input_per_million: Input should be greater than or equal to 0.
    """
    if not path:
        return EMPTY_TABLE
    path = Path(path)
    try:
        if path.stat().st_size > MAX_PRICE_FILE_BYTES:
            raise ValueError(f"The price table {path} is larger than {MAX_PRICE_FILE_BYTES} bytes.")
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as error:
        raise ValueError(f"The price table {path} cannot be read: {error.strerror or error}.") from None
    except ValueError as error:
        if str(error).startswith("The price table"):
            raise
        raise ValueError(f"The price table {path} is not JSON: {error}.") from None
    try:
        return PriceTable.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, item['loc'])) or 'the file'}: {item['msg']}" for item in error.errors()
        )
        raise ValueError(f"The price table {path} is not valid: {problems}.") from None


def call_cost(model: str, prompt_tokens: Any, completion_tokens: Any, table: PriceTable) -> float | None:
    """What one call cost in the table's currency, or None when its price or its tokens are unknown. Token cells may
    be numbers or CSV text (``""``: not reported).

    >>> table = PriceTable.model_validate({"currency": "USD", "models": {"m": {"input_per_million": 2,
    ...                                    "output_per_million": 8}}})
    >>> call_cost("m", 1000, 500, table), call_cost("m", "", 500, table), call_cost("x", 1, 1, table)
    (0.006, None, None)
    >>> call_cost("scripted", None, None, table)
    0.0
    """
    if model == SCRIPTED:
        return 0.0
    price = table.price_of(model)
    prompt, completion = _tokens(prompt_tokens), _tokens(completion_tokens)
    if price is None or not price.known or prompt is None or completion is None:
        return None
    return (prompt * price.input_per_million + completion * price.output_per_million) / 1_000_000


def _tokens(value: Any) -> int | None:
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if math.isfinite(number) and number >= 0 else None


def money(amount: float | None, currency: str) -> str:
    """An amount as a page or summary shows it: 4 decimals (a call costs fractions of a cent), or ``unknown``.

    >>> money(0.0123456, "USD"), money(None, "USD"), money(2, "")
    ('0.0123 USD', 'unknown', '2.0000')
    """
    if amount is None:
        return "unknown"
    return f"{amount:.4f} {currency}".strip()


def cell(amount: float | None) -> str | float:
    """An amount as an export cell: rounded to 8 decimals, ``""`` when unknown.

    >>> cell(1 / 3), cell(None)
    (0.33333333, '')
    """
    return "" if amount is None else round(amount, 8)


@dataclass
class CostSum:
    """Costs added up: ``known`` (the sum of the calls whose cost is known), ``calls`` and ``unknown`` (calls of
    unknown cost). ``total`` is None as soon as one call's cost is unknown.

    >>> costs = CostSum("USD"); costs.add(0.5); costs.add(0.25); costs.total, costs.text()
    (0.75, '0.7500 USD')
    >>> costs.add(None); costs.total, costs.text()
    (None, 'unknown (1 of 3 calls unpriced; 0.7500 USD known)')
    """

    currency: str = ""
    known: float = 0.0
    calls: int = 0
    unknown: int = 0
    unit: str = "calls"  # what is added up, as ``text`` names it (a report adds games)

    def add(self, cost: float | None) -> None:
        self.calls += 1
        if cost is None:
            self.unknown += 1
        else:
            self.known += cost

    @property
    def total(self) -> float | None:
        return None if self.unknown else self.known

    def text(self) -> str:
        if not self.unknown:
            return money(self.known, self.currency)
        return (
            f"unknown ({self.unknown} of {self.calls} {self.unit} unpriced; {money(self.known, self.currency)} known)"
        )


@dataclass(frozen=True)
class Estimate:
    """The planned work's cost: ``calls`` calls with ``prompt_tokens`` and ``completion_tokens`` in all, ``cost``
    (None: a price is unknown) and ``how``, the sentence saying where the figures came from.

    >>> table = PriceTable.model_validate({"currency": "USD", "models": {"m": {"input_per_million": 1,
    ...                                    "output_per_million": 2}}})
    >>> estimate = estimate_calls("m", calls=100, prompt_tokens=500, completion_tokens=100, table=table, how="x")
    >>> estimate.cost, estimate.text()
    (0.07, '100 calls, 50000 prompt and 10000 completion tokens: 0.0700 USD (x)')
    """

    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    currency: str
    how: str

    def text(self) -> str:
        return (
            f"{self.calls} calls, {self.prompt_tokens} prompt and {self.completion_tokens} completion tokens: "
            f"{money(self.cost, self.currency)} ({self.how})"
        )

    def as_dict(self) -> dict[str, Any]:
        return dict(
            calls=self.calls,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cost=self.cost,
            currency=self.currency,
            how=self.how,
        )


def estimate_calls(
    model: str, *, calls: float, prompt_tokens: float, completion_tokens: float, table: PriceTable, how: str
) -> Estimate:
    """`Estimate` of ``calls`` calls of ``model``, each with ``prompt_tokens`` and ``completion_tokens`` (means)."""
    calls_n = max(0, math.ceil(calls))
    prompt, completion = round(calls * prompt_tokens), round(calls * completion_tokens)
    cost = call_cost(model, prompt, completion, table) if calls_n else 0.0
    return Estimate(calls_n, prompt, completion, cost, table.currency, how)


def add_estimates(estimates: Sequence[Estimate], how: str | None = None) -> Estimate:
    """The sum of several estimates (e.g. one per model); unknown as soon as one is.

    >>> a = Estimate(2, 10, 5, 0.5, "USD", "a"); b = Estimate(1, 1, 1, None, "USD", "b")
    >>> add_estimates([a, a]).cost, add_estimates([a, b]).cost, add_estimates([a, b]).how
    (1.0, None, 'a; b')
    """
    costs = [estimate.cost for estimate in estimates]
    return Estimate(
        sum(estimate.calls for estimate in estimates),
        sum(estimate.prompt_tokens for estimate in estimates),
        sum(estimate.completion_tokens for estimate in estimates),
        None if any(cost is None for cost in costs) else sum(costs),
        next((estimate.currency for estimate in estimates if estimate.currency), ""),
        how if how is not None else "; ".join(dict.fromkeys(estimate.how for estimate in estimates)),
    )


@dataclass(frozen=True)
class Measured:
    """Tokens measured on finished work (a pilot, a resumed run's kept part): ``units`` (their keys as strings in
    ``keys``) made ``calls`` calls with ``prompt_tokens`` and ``completion_tokens`` (unreported ones left out).

    >>> Measured(units=2, calls=10, prompt_tokens=1000, completion_tokens=200).per_call()
    (5.0, 100.0, 20.0)
    """

    units: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    keys: frozenset[tuple[str, ...]] = field(default=frozenset(), compare=False, repr=False)

    @property
    def usable(self) -> bool:  # an endpoint reporting 0 prompt tokens measured nothing
        return self.units > 0 and self.calls > 0 and self.prompt_tokens > 0

    def per_call(self) -> tuple[float, float, float]:
        """(calls per unit, prompt tokens per call, completion tokens per call)."""
        return self.calls / self.units, self.prompt_tokens / self.calls, self.completion_tokens / self.calls


def measure_rows(rows: Iterable[Mapping[str, Any]], *, unit_key: Sequence[str]) -> Measured:
    """`Measured` of a runner's output rows (columns ``calls``, ``prompt_tokens``, ``completion_tokens``, as
    ``CallTotals.cells`` writes them), one unit per distinct ``unit_key`` (rows of one unit repeat its totals).
    Units with no calls or no reported tokens are left out.

    >>> rows = [dict(id="1", dim="a", calls="2", prompt_tokens="300", completion_tokens="40"),
    ...         dict(id="1", dim="b", calls="2", prompt_tokens="300", completion_tokens="40"),
    ...         dict(id="2", dim="a", calls="1", prompt_tokens="", completion_tokens="")]
    >>> measure_rows(rows, unit_key=["id"])
    Measured(units=1, calls=2, prompt_tokens=300, completion_tokens=40)
    >>> sorted(measure_rows(rows, unit_key=["id"]).keys)
    [('1',)]
    """
    seen: dict[tuple, tuple[int, int, int]] = {}
    for row in rows:
        key = tuple(str(row.get(name, "")) for name in unit_key)
        calls, prompt, completion = (_tokens(row.get(name)) for name in ("calls", "prompt_tokens", "completion_tokens"))
        if key in seen or not calls or prompt is None or completion is None:
            continue
        seen[key] = (calls, prompt, completion)
    return Measured(
        len(seen),
        sum(value[0] for value in seen.values()),
        sum(value[1] for value in seen.values()),
        sum(value[2] for value in seen.values()),
        frozenset(seen),
    )


# --- the cap --------------------------------------------------------------------------------------------------------
@dataclass
class Reservation:
    """One call's hold on the cap: the model and the cost held until it settles."""

    model: str
    held: float


class CostCapReached(Exception):
    """A call refused by a spending cap (never raised by the client, whose record says ``error_kind='cost_cap'``)."""


@dataclass
class SpendingCap:
    """A limit (None: none, only counting) on what calls may spend, in ``table``'s currency (see the module doc).
    Thread-safe: oTree's page threads and its event loop may share one.

    >>> table = PriceTable.model_validate({"currency": "USD", "models": {"m": {"input_per_million": 1e6,
    ...                                    "output_per_million": 1e6}}})
    >>> cap = SpendingCap(limit=30.0, table=table)
    >>> first = cap.reserve("m", prompt_chars=20, max_tokens=10)   # 20 / 2 + 10 tokens at 1 a token: 20 held
    >>> cap.reserve("m", prompt_chars=20, max_tokens=10) is None     # 20 spent or held + 20 > 30: refused
    True
    >>> from types import SimpleNamespace
    >>> _ = cap.settle(first, SimpleNamespace(prompt_tokens=8, completion_tokens=2)); cap.spent, cap.held, cap.refused
    (10.0, 0.0, 1)
    >>> cap.reserve("unpriced", prompt_chars=1, max_tokens=1) is None  # a cap cannot count an unknown price
    True
    """

    limit: float | None = None
    table: PriceTable = field(default_factory=PriceTable)
    spent: float = 0.0  # settled calls (and what was stored before: pass it in)
    unknown: int = 0  # settled calls whose cost is unknown (no cap set, an unpriced model or no tokens reported)
    held: float = 0.0
    in_flight: int = 0
    calls: int = 0
    refused: int = 0
    seen: list[dict[str, Any]] = field(default_factory=list)  # the distinct rerun_facts of the settled calls
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self):
        if self.limit is not None and (not math.isfinite(self.limit) or self.limit < 0):
            raise ValueError(f"A spending cap must be 0 or more, got {self.limit!r}.")

    def reserve(self, model: str, *, prompt_chars: int, max_tokens: int | None) -> Reservation | None:
        """Hold the largest likely cost of a call of ``model`` with a prompt of ``prompt_chars`` characters and a reply
        of at most ``max_tokens``; None (refused, nothing held) when it would pass the limit."""
        prompt = math.ceil(prompt_chars / RESERVE_CHARS_PER_TOKEN)
        cost = call_cost(model, prompt, max_tokens or 0, self.table)
        with self._lock:
            if self.limit is not None and (cost is None or self.spent + self.held + cost > self.limit + 1e-12):
                self.refused += 1
                return None
            held = cost or 0.0
            self.held += held
            self.in_flight += 1
            return Reservation(model, held)

    def settle(self, reservation: Reservation, record: Any) -> float | None:
        """Release the hold and count what the call cost (``record``'s reported tokens; under a limit, the hold itself
        when they were not reported, so an unreported call is never counted as free). What a rerun needs to know of
        the call (``rerun_facts``) is collected. Returns the cost counted, None when unknown."""
        cost = call_cost(reservation.model, record.prompt_tokens, record.completion_tokens, self.table)
        facts = rerun_facts(record)
        with self._lock:
            self.held = max(0.0, self.held - reservation.held)
            self.in_flight -= 1
            self.calls += 1
            if cost is None and self.limit is not None:
                cost = reservation.held
            if cost is None:
                self.unknown += 1
            else:
                self.spent += cost
            if facts not in self.seen:
                self.seen.append(facts)
        return cost

    def counted(self) -> CostSum:
        """What the settled calls cost, as a `CostSum`."""
        with self._lock:
            return CostSum(self.table.currency, self.spent, self.calls, self.unknown)

    @property
    def reached(self) -> bool:
        """True once a call was refused for the limit."""
        return self.refused > 0

    def remaining(self) -> float | None:
        return None if self.limit is None else max(0.0, self.limit - self.spent - self.held)


RERUN_FIELDS = ("model", "served_model", "system_fingerprint", "sampling", "max_tokens", "endpoint", "product_version")


def rerun_facts(record: Any) -> dict[str, Any]:
    """What a rerun needs to know of a call (``CallRecord``'s fields of `RERUN_FIELDS`; missing ones None).

    >>> from types import SimpleNamespace
    >>> rerun_facts(SimpleNamespace(model="m", sampling={"temperature": 0.0}, max_tokens=64))["sampling"]
    {'temperature': 0.0}
    """
    return {name: getattr(record, name, None) for name in RERUN_FIELDS}


# The cap of the running context: a runner sets it for its whole run (``backend.core.runs``), and every call made in
# that context (tasks inherit it) reserves from it.
SPENDING: contextvars.ContextVar[SpendingCap | None] = contextvars.ContextVar("spending", default=None)
# A dry run (``backend.core.runs``): while this holds a list, the client sends nothing; each call it would have made
# is appended as (model, prompt characters, max_tokens) and answered with an error record (``error_kind='dry_run'``).
DRY_RUN: contextvars.ContextVar[list | None] = contextvars.ContextVar("dry_run", default=None)


def over_cap(estimate: Estimate, limit: float | None) -> str | None:
    """The sentence refusing a run whose estimate passes ``limit`` (by how much), else None. An unknown estimate
    under a cap is refused too: the cap could not be held.

    >>> over_cap(Estimate(10, 1, 1, 12.5, "USD", "defaults"), 10.0)
    'The estimated cost 12.5000 USD passes the cap of 10.0000 USD by 2.5000 USD (10 calls, 1 prompt and 1 completion tokens: 12.5000 USD (defaults)); nothing was asked.'
    >>> over_cap(Estimate(10, 1, 1, 9.0, "USD", "x"), 10.0) is None, over_cap(Estimate(1, 1, 1, None, "", "x"), None)
    (True, None)
    """
    if limit is None:
        return None
    if estimate.cost is None:
        return (
            f"A spending cap of {money(limit, estimate.currency)} is set but the estimate is unknown, because a "
            f"model's price is missing from the price table ({estimate.text()}); nothing was asked."
        )
    if estimate.cost > limit:
        return (
            f"The estimated cost {money(estimate.cost, estimate.currency)} passes the cap of "
            f"{money(limit, estimate.currency)} by {money(estimate.cost - limit, estimate.currency)} "
            f"({estimate.text()}); nothing was asked."
        )
    return None


def prompt_chars(messages: Sequence[Mapping[str, Any]]) -> int:
    """The characters of a request's messages (their contents)."""
    return sum(len(str(message.get("content", ""))) for message in messages)


def dry_run(record: Any, max_tokens: int) -> bool:
    """Under `DRY_RUN`: note the call ``record`` is about to make and mark it as not made (``error_kind='dry_run'``);
    True then, else False (the call goes ahead)."""
    noted = DRY_RUN.get()
    if noted is None:
        return False
    noted.append((record.model, prompt_chars(record.messages), max_tokens))
    record.error, record.error_kind = "A dry run sends no request.", "dry_run"
    return True


def hold(record: Any, max_tokens: int, spend: SpendingCap | None) -> tuple[SpendingCap | None, Reservation | None]:
    """The cap of a call (``spend``, else the context's `SPENDING`) and its reservation; a refused call's ``record``
    says so (``error_kind='cost_cap'``) and its reservation is None. (None, None) without a cap."""
    cap = spend if spend is not None else SPENDING.get()
    if cap is None:
        return None, None
    held = cap.reserve(record.model, prompt_chars=prompt_chars(record.messages), max_tokens=max_tokens)
    if held is None:
        record.max_tokens, record.error_kind = max_tokens, "cost_cap"
        record.error = f"The spending cap of {money(cap.limit, cap.table.currency)} is reached: no call was made."
    return cap, held
