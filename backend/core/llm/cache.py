"""The opt-in response cache: a rerun of the same run asks nothing and costs nothing, and gives the same records.

A runner's ``--cache DIR`` sets `CACHE` for its whole run (``backend.core.runs.run_command``); nothing caches by
default, and a live study never does. The client (``backend.core.llm.client.stream``) looks every paid call up
before it reserves from a spending cap or sends anything, and keeps each **successful** answer (a failed, refused,
broken-off or dry-run call is never kept, so a failure is never replayed as an answer).

- **Key** (`request_key`): the SHA-256 of the full request as the caller asks it, in canonical JSON: the model, the
  messages, every sampling setting (temperature, seed and any other option passed), the token limit asked for
  (before it is cut to the endpoint's context, so a rerun needs no probe of the endpoint), the response schema and
  the endpoint's scheme, host and port (never a key). A change of any of them is another key.
- **Entry**: one JSON file ``DIR/<key[:2]>/<key>.json`` with the key, the request and what the answer's record
  held (reply, reasoning, tokens, finish reason, served model, fingerprint, sampling, max_tokens, endpoint, product
  version, structured output). Written to a temporary file and renamed: a reader sees a whole entry or none.
- **A cached answer** is recorded as such (``CallRecord.cached``, ``attempts`` 0): its tokens are the original
  call's, its cost is 0 (``records.record_cost``) and no cap counts it.
- **A corrupted entry** (not JSON, another key, a missing or mistyped field) is ignored: the call is made as if it
  were absent, its record says so (``extra["cache_corrupt"]``), `ResponseCache.corrupt` counts it, and the fresh
  answer replaces the entry. It is never fatal.

Pure: no oTree.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.core.llm.records import CallRecord

FORMAT = 1  # the entries' format: an entry of another format is a miss
KEPT_FIELDS = {  # what an entry keeps of the record, with the type each must have (None allowed where it may be)
    "reply": (str,),
    "reasoning": (str,),
    "prompt_tokens": (int, type(None)),
    "completion_tokens": (int, type(None)),
    "finish_reason": (str, type(None)),
    "served_model": (str, type(None)),
    "system_fingerprint": (str, type(None)),
    "sampling": (dict,),
    "max_tokens": (int, type(None)),
    "endpoint": (str,),
    "product_version": (str,),
    "structured": (bool, type(None)),
}
KEPT_EXTRA = ("response_format", "served_model", "logprobs")


def request_key(request: Mapping[str, Any]) -> str:
    """The SHA-256 (hex) of ``request`` in canonical JSON (sorted keys, no spaces): the same request, the same key.

    >>> key = request_key({"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0})
    >>> key == request_key({"temperature": 0.0, "messages": [{"content": "hi", "role": "user"}], "model": "m"})
    True
    >>> key == request_key({"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.7})
    False
    """
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def full_request(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    temperature: float,
    seed: int | None,
    max_tokens: int,
    response_schema: Mapping[str, Any] | None,
    options: Mapping[str, Any],
    endpoint: str,
) -> dict[str, Any]:
    """What the key covers: the request as the caller asks it (see the module doc).

    >>> full_request("m", [{"role": "user", "content": "hi"}], temperature=0.0, seed=7, max_tokens=64,
    ...              response_schema=None, options={"top_p": 0.9}, endpoint="http://h:1")["options"]
    {'top_p': 0.9}
    """
    return dict(
        format=FORMAT,
        model=model,
        messages=[dict(message) for message in messages],
        temperature=temperature,
        seed=seed,
        max_tokens=max_tokens,
        response_schema=dict(response_schema) if response_schema is not None else None,
        options=dict(options),
        endpoint=endpoint,
    )


def cacheable(record: CallRecord) -> bool:
    """Only a successful answer is kept: no error, a reply, not itself from the cache.

    >>> cacheable(CallRecord(model="m", messages=[], reply="ok")), cacheable(CallRecord(model="m", messages=[]))
    (True, False)
    >>> cacheable(CallRecord(model="m", messages=[], reply="half", error="broke", error_kind="interrupted"))
    False
    """
    return record.error is None and bool(record.reply.strip()) and not record.cached


def entry_of(key: str, request: Mapping[str, Any], record: CallRecord) -> dict[str, Any]:
    """The stored entry of ``record``'s answer under ``key``."""
    kept = {name: getattr(record, name) for name in KEPT_FIELDS}
    extra = {name: record.extra[name] for name in KEPT_EXTRA if name in record.extra}
    return dict(format=FORMAT, key=key, request=dict(request), record=kept, extra=extra)


def answer_from(entry: Any, key: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The record's fields and extras of a stored entry, or None when it is not a whole entry of ``key``.

    >>> good = entry_of("k", {}, CallRecord(model="m", messages=[], reply="ok", prompt_tokens=3))
    >>> answer_from(good, "k")[0]["prompt_tokens"], answer_from(good, "other"), answer_from([1], "k")
    (3, None, None)
    >>> answer_from({**good, "record": {**good["record"], "prompt_tokens": "3"}}, "k") is None
    True
    """
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != key:
        return None
    fields, extra = entry.get("record"), entry.get("extra", {})
    if not isinstance(fields, dict) or not isinstance(extra, dict) or set(fields) != set(KEPT_FIELDS):
        return None
    for name, types in KEPT_FIELDS.items():
        value = fields[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            return None
    if not fields["reply"].strip():
        return None
    return fields, {name: extra[name] for name in KEPT_EXTRA if name in extra}


@dataclass
class ResponseCache:
    """The answers kept in ``folder`` (see the module doc); ``hits``, ``stored`` and ``corrupt`` count this run's."""

    folder: Path
    hits: int = 0
    stored: int = 0
    corrupt: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self):
        self.folder = Path(self.folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise ValueError(f"The response cache {self.folder} is a file, not a folder.")

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def answer(self, key: str, record: CallRecord) -> bool:
        """Fill ``record`` from the entry of ``key`` and mark it cached; True then. False on a miss (a corrupted
        entry is a miss, flagged on ``record`` and counted)."""
        path = self.path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return False
        except (OSError, UnicodeDecodeError):
            text = None
        try:
            found = answer_from(json.loads(text), key) if text is not None else None
        except ValueError:
            found = None
        if found is None:
            with self._lock:
                self.corrupt += 1
            record.extra["cache_corrupt"] = True
            return False
        fields, extra = found
        for name, value in fields.items():
            setattr(record, name, value)
        record.extra.update(extra)
        record.cached, record.attempts, record.error, record.error_kind = True, 0, None, None
        with self._lock:
            self.hits += 1
        return True

    def keep(self, key: str, request: Mapping[str, Any], record: CallRecord) -> bool:
        """Store ``record``'s answer under ``key`` if it is a success (`cacheable`); True when stored. A cache that
        cannot be written never fails the call."""
        if not cacheable(record):
            return False
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(entry_of(key, request, record), ensure_ascii=False, sort_keys=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, path)
        except (OSError, TypeError, ValueError):
            return False
        with self._lock:
            self.stored += 1
        return True

    def text(self) -> str:
        """The summary's line on the cache.

        >>> ResponseCache(Path("c"), hits=3, stored=2, corrupt=1).text()
        'Response cache c: 3 answers from the cache (cost 0), 2 answers stored, 1 corrupted entries ignored.'
        """
        return (
            f"Response cache {self.folder}: {self.hits} answers from the cache (cost 0), {self.stored} answers "
            f"stored, {self.corrupt} corrupted entries ignored."
        )


# The cache of the running context: a runner with ``--cache DIR`` sets it for its whole run (tasks inherit it).
CACHE: contextvars.ContextVar[ResponseCache | None] = contextvars.ContextVar("response_cache", default=None)
