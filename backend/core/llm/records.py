"""What a model call leaves behind: streamed pieces (``TextDelta``) and the stored record of the call (``CallRecord``)."""

from __future__ import annotations

import functools
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class TextDelta:
    """A piece of a streamed reply, as it arrived."""

    text: str


@dataclass
class CallRecord:
    """Everything about one model call, for storage: what was asked, what came back, how long, what failed."""

    model: str
    messages: list[dict[str, str]]
    reply: str = ""
    latency_s: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None
    error_kind: str | None = None
    attempts: int = 0
    finish_reason: str | None = None
    streamed: bool = False
    reasoning: str = ""  # a reasoning model's thinking, never part of ``reply``
    max_tokens: int | None = None  # the limit the request carried
    structured: bool | None = None  # None: not asked; True: the schema was sent; False: refused, asked without
    started_at: float = field(default_factory=time.time)
    extra: dict[str, Any] = field(default_factory=dict)
    # What a rerun needs (backend.core.llm.costs.rerun_facts): the model the endpoint says answered, the provider's
    # fingerprint where given, the sampling settings sent (temperature, seed, top_p, ...), the endpoint's scheme,
    # host and port (never a key) and the product's version (git describe).
    served_model: str | None = None
    system_fingerprint: str | None = None
    sampling: dict[str, Any] = field(default_factory=dict)
    endpoint: str = ""
    product_version: str = ""
    cached: bool = False  # answered from a runner's response cache (backend.core.llm.cache): nothing sent, cost 0

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_row(self) -> dict[str, Any]:
        """A flat dict for an ExtraModel or CSV row (messages and extra as JSON text)."""
        row = asdict(self)
        row["messages"] = json.dumps(self.messages, ensure_ascii=False)
        row["extra"] = json.dumps(self.extra, ensure_ascii=False)
        row["sampling"] = json.dumps(self.sampling, ensure_ascii=False, sort_keys=True)
        return row


@dataclass
class CallTotals:
    """What the calls made for one unit of a run (an ask and its re-asks) add up to: ``calls``, ``attempts``,
    ``latency_s`` and tokens (None while no call reported them), the thinking of each call, and their ``cost`` by
    the running price table (`record_cost` with the table of the context's spending cap,
    which a runner sets; without one every price is unknown): None as soon as one call's cost is unknown;
    ``cached`` counts the calls a response cache answered (they cost 0).

    >>> totals = CallTotals()
    >>> totals.add(CallRecord(model="m", messages=[], attempts=2, latency_s=0.5, prompt_tokens=10, reasoning="hm"))
    >>> totals.add(CallRecord(model="m", messages=[], attempts=1, latency_s=0.25))
    >>> totals.cells(), totals.thinking
    ({'calls': 2, 'attempts': 3, 'latency_s': 0.75, 'prompt_tokens': 10, 'completion_tokens': '', 'cost': '', 'cached_calls': 0}, 'hm')
    >>> scripted = CallTotals(); scripted.add(CallRecord(model="scripted", messages=[])); scripted.cells()["cost"]
    0.0
    """

    calls: int = 0
    attempts: int = 0
    latency_s: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    thoughts: list[str] = field(default_factory=list)
    cost: float | None = 0.0
    cached: int = 0

    def add(self, record: CallRecord) -> None:
        import backend.core.llm.costs as costs

        cap = costs.SPENDING.get()
        cost = record_cost(record, cap.table if cap is not None else costs.EMPTY_TABLE)
        self.cost = None if cost is None or self.cost is None else self.cost + cost
        self.cached += int(record.cached)
        self.calls += 1
        self.attempts += record.attempts
        self.latency_s += record.latency_s
        if record.prompt_tokens is not None:
            self.prompt_tokens = (self.prompt_tokens or 0) + record.prompt_tokens
        if record.completion_tokens is not None:
            self.completion_tokens = (self.completion_tokens or 0) + record.completion_tokens
        self.thoughts.append(record.reasoning)

    @property
    def thinking(self) -> str:
        """The calls' thinking, in order, blank parts left out."""
        return "\n\n".join(part for part in self.thoughts if part)

    def cells(self) -> dict[str, Any]:
        """CSV cells: latency rounded to milliseconds, unknown token counts and cost empty."""
        return dict(
            calls=self.calls,
            attempts=self.attempts,
            latency_s=round(self.latency_s, 3),
            prompt_tokens="" if self.prompt_tokens is None else self.prompt_tokens,
            completion_tokens="" if self.completion_tokens is None else self.completion_tokens,
            cost="" if self.cost is None else round(self.cost, 8),
            cached_calls=self.cached,
        )


def record_cost(record: CallRecord, table: Any) -> float | None:
    """What the call of a ``CallRecord`` cost: 0 when it was answered from the response cache (``cached``) or never
    sent (``costs.NOT_SENT``), else ``costs.call_cost`` of its model and reported tokens (None: unknown).

    >>> from backend.core.llm.costs import PriceTable
    >>> table = PriceTable.model_validate({"currency": "USD", "models": {"m": {"input_per_million": 2,
    ...                                    "output_per_million": 8}}})
    >>> call = CallRecord(model="m", messages=[], prompt_tokens=1000, completion_tokens=500)
    >>> record_cost(call, table), record_cost(CallRecord(model="m", messages=[], prompt_tokens=1000,
    ...     completion_tokens=500, cached=True), table), record_cost(CallRecord(model="m", messages=[]), table)
    (0.006, 0.0, None)
    """
    import backend.core.llm.costs as costs

    if getattr(record, "cached", False) or getattr(record, "error_kind", None) in costs.NOT_SENT:
        return 0.0
    return costs.call_cost(record.model, record.prompt_tokens, record.completion_tokens, table)


SAMPLING_KEYS = ("temperature", "top_p", "seed", "frequency_penalty", "presence_penalty", "stop", "n", "logprobs")


@functools.lru_cache(maxsize=1)
def _product_version() -> str:
    from backend.core.manifest import product_version

    return product_version()


def fill_rerun_fields(record: CallRecord, request: dict[str, Any], endpoint: str) -> None:
    """What a rerun needs, from the request as sent: its sampling settings, the endpoint (scheme, host, port) and the
    product's version.

    >>> record = CallRecord(model="m", messages=[])
    >>> fill_rerun_fields(record, {"model": "m", "temperature": 0.0, "seed": 7, "max_tokens": 9}, "http://h:1")
    >>> record.sampling, record.endpoint
    ({'temperature': 0.0, 'seed': 7}, 'http://h:1')
    """
    record.sampling = {key: request[key] for key in SAMPLING_KEYS if key in request}
    record.endpoint = endpoint
    record.product_version = _product_version()


def note_served(record: CallRecord, response: Any) -> None:
    """The model and the system fingerprint the endpoint reports on a response or a stream's chunk (the client's
    object, or a streamed chunk's JSON as a dict).

    >>> record = CallRecord(model="m", messages=[])
    >>> note_served(record, {"model": "m-0613", "system_fingerprint": "fp_1", "choices": []})
    >>> record.served_model, record.system_fingerprint
    ('m-0613', 'fp_1')
    """
    get = response.get if isinstance(response, dict) else lambda name: getattr(response, name, None)
    if model := get("model"):
        record.served_model = str(model)
        record.extra["served_model"] = record.served_model  # the launch check compares it with the model asked for
    if fingerprint := get("system_fingerprint"):
        record.system_fingerprint = str(fingerprint)
