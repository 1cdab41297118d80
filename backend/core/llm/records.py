"""What a model call leaves behind: streamed pieces (``TextDelta``) and the stored record of the call (``CallRecord``)."""

from __future__ import annotations

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

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_row(self) -> dict[str, Any]:
        """A flat dict for an ExtraModel or CSV row (messages and extra as JSON text)."""
        row = asdict(self)
        row["messages"] = json.dumps(self.messages, ensure_ascii=False)
        row["extra"] = json.dumps(self.extra, ensure_ascii=False)
        return row
