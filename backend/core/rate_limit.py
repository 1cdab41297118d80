"""The server's one limiter, and model requests per game.

Every rate the lab server keeps goes through ``TokenBuckets`` (one token bucket per key, the clock given by the
caller): live messages per participant, per client address and in bytes, page requests per participant and per
address for codes not learned yet (``lab_server/budgets.py``), new places per address (``lab_server/places.py``),
and the pace at which the waiting line lets people in (``lab_server/admission.py``). Failed admin logins and wrong
REST keys (``lab_server/limits.py``) are counted by ``AttemptThrottle``, a lockout that doubles with each failure:
not a rate, because guessing must get slower the longer it goes on.

``requests_used`` counts the model requests a game has already made for one player, for a hard budget per game.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

MAX_TRACKED = 100_000  # keys tracked at once before full buckets are forgotten
MAX_THROTTLED = 10_000  # keys with failed attempts tracked at once before the oldest is forgotten
FORGET_FAILURES_AFTER_S = 15 * 60
LONGEST_LOCKOUT_S = 60 * 60


class TokenBuckets:
    """Token buckets by key: each holds at most ``capacity`` tokens and refills ``per_minute / 60`` tokens a second.

    ``take(key, amount, now=t)`` spends ``amount`` tokens if the bucket of ``key`` holds them (a new key starts
    full) and answers True; else it answers False and, with ``charge_refused``, still spends them, down to
    ``-capacity``, so a client that keeps sending over its budget stays shut out until it pauses. After ``n`` seconds
    of silence a bucket holds ``min(capacity, left + n * per_minute / 60)``: from empty, the next token comes after
    ``60 / per_minute`` s; from ``-capacity``, after ``(capacity + 1) * 60 / per_minute`` s. Over any stretch of
    ``t`` seconds a key passes at most ``capacity + t * per_minute / 60`` tokens.

    >>> buckets = TokenBuckets(per_minute=60, capacity=2)
    >>> [buckets.take("p1", now=0.0) for _ in range(3)]  # two pass; the third leaves the bucket at -1
    [True, True, False]
    >>> buckets.take("p1", now=1.0), buckets.take("p2", now=1.0)  # -1 + 1 s of refill = 0: still nothing
    (False, True)
    >>> buckets.take("p1", now=4.0)  # -1 + 3 s of refill = 2
    True
    >>> buckets.take("p1", amount=3, now=100.0)  # more than a full bucket never passes
    False

    Without ``charge_refused`` a refusal costs nothing (the client waits only for the tokens it lacks); ``capacity``
    given to one ``take`` is the bucket's size for that take (the waiting line's burst shrinks while people wait):

    >>> line = TokenBuckets(per_minute=60, capacity=15, charge_refused=False)
    >>> sum(line.take("line", now=0.0) for _ in range(20))  # a burst of 15
    15
    >>> line.take("line", now=0.5), line.take("line", now=1.0)  # a refusal costs nothing: 1 s later, one more
    (False, True)
    >>> sum(line.take("line", now=30.0, capacity=1) for _ in range(5))  # full again, but at most 1 at once now
    1
    """

    def __init__(self, *, per_minute: float, capacity: float, charge_refused: bool = True) -> None:
        if per_minute <= 0 or capacity <= 0:
            raise ValueError("A token bucket needs a positive rate per minute and a positive capacity.")
        self.rate_per_s = per_minute / 60.0
        self.capacity = float(capacity)
        self.charge_refused = charge_refused
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, time they were counted)
        self._forget_above = MAX_TRACKED  # keys tracked at which full buckets are looked for (see _forget_full)

    def _tokens(self, key: str, now: float, capacity: float) -> float:
        tokens, then = self._buckets.get(key, (capacity, now))
        return min(capacity, tokens + max(0.0, now - then) * self.rate_per_s)

    def take(self, key: str, amount: float = 1.0, *, now: float, capacity: float | None = None) -> bool:
        capacity = self.capacity if capacity is None else float(capacity)
        tokens = self._tokens(key, now, capacity)
        if tokens < amount:
            # Trying over budget costs too (down to minus a full bucket): a client that keeps trying stays shut out.
            self._buckets[key] = (max(tokens - amount, -capacity) if self.charge_refused else tokens, now)
            return False
        self._buckets[key] = (tokens - amount, now)
        if len(self._buckets) > self._forget_above:
            self._forget_full(now)
        return True

    def wait_s(self, key: str, amount: float = 1.0, *, now: float) -> float:
        """Seconds until the bucket of ``key`` holds ``amount`` tokens again (0.0: it holds them now); spends nothing.

        >>> buckets = TokenBuckets(per_minute=60, capacity=1)
        >>> buckets.take("p1", now=0.0), buckets.take("p1", now=0.0)  # the second leaves the bucket at -1
        (True, False)
        >>> buckets.wait_s("p1", now=0.5), buckets.wait_s("p2", now=0.5)
        (1.5, 0.0)
        """
        return max(0.0, (amount - self._tokens(key, now, self.capacity)) / self.rate_per_s)

    def _forget_full(self, now: float) -> None:
        """Forget the buckets that are full again (a new key starts full: nothing is lost); the next look comes when
        the keys kept have doubled. A look at every key on every take past ``MAX_TRACKED`` (none full: a flood of
        new keys within one refill) cost 38 ms a take; this way a take costs a constant share of a look on average.
        """
        for key, (tokens, then) in list(self._buckets.items()):
            if tokens + (now - then) * self.rate_per_s >= self.capacity:
                del self._buckets[key]
        self._forget_above = max(MAX_TRACKED, 2 * len(self._buckets))


class AttemptThrottle:
    """Failed attempts per key; after ``free_attempts`` failures the key is locked out for a doubling time.

    The lockout after the ``n``-th failure in a row is ``lockout_s * 2 ** (n - free_attempts)``, at most
    ``longest_lockout_s``; a success clears the count, and failures more than ``FORGET_FAILURES_AFTER_S`` apart
    start it again.

    >>> throttle = AttemptThrottle(free_attempts=2, lockout_s=10)
    >>> throttle.failed("1.2.3.4", now=0); throttle.retry_after("1.2.3.4", now=1)
    0
    >>> throttle.failed("1.2.3.4", now=1); throttle.retry_after("1.2.3.4", now=2)
    9
    >>> throttle.retry_after("1.2.3.4", now=12), throttle.retry_after("5.6.7.8", now=2)
    (0, 0)
    >>> throttle.failed("1.2.3.4", now=12); throttle.retry_after("1.2.3.4", now=12)
    20
    >>> throttle.succeeded("1.2.3.4"); throttle.retry_after("1.2.3.4", now=13)
    0
    """

    def __init__(self, *, free_attempts: int, lockout_s: float, longest_lockout_s: float = LONGEST_LOCKOUT_S) -> None:
        if free_attempts < 1 or lockout_s <= 0:
            raise ValueError("An attempt throttle needs at least one free attempt and a positive lockout time.")
        self.free_attempts = free_attempts
        self.lockout_s = lockout_s
        self.longest_lockout_s = longest_lockout_s
        self._failures: dict[str, tuple[int, float]] = {}  # key -> (consecutive failures, time of the last)

    def retry_after(self, key: str, *, now: float) -> int:
        """Whole seconds until ``key`` may try again (0: it may try now)."""
        count, last = self._failures.get(key, (0, 0.0))
        if count < self.free_attempts:
            return 0
        lockout = min(self.lockout_s * 2 ** min(count - self.free_attempts, 32), self.longest_lockout_s)
        remaining = last + lockout - now
        return max(0, int(remaining + 0.999))

    def failed(self, key: str, *, now: float) -> None:
        count, last = self._failures.get(key, (0, 0.0))
        if now - last > FORGET_FAILURES_AFTER_S:
            count = 0
        self._failures[key] = (count + 1, now)
        if len(self._failures) > MAX_THROTTLED:  # a flood of addresses must not grow this without bound
            oldest = min(self._failures, key=lambda item: self._failures[item][1])
            del self._failures[oldest]

    def succeeded(self, key: str) -> None:
        self._failures.pop(key, None)


def requests_used(events: Iterable[Mapping[str, Any] | Any], role: str) -> int:
    """Model requests already made for ``role``: the sum of ``attempts`` over its ``llm_call`` events (a call that
    was retried cost one request per attempt).

    >>> requests_used([{"kind": "llm_call", "role": "B", "attempts": 2}, {"kind": "message", "role": "B"}], "B")
    2
    """
    total = 0
    for event in events:
        get = event.get if isinstance(event, Mapping) else lambda key, e=event: getattr(e, key, None)
        if get("kind") == "llm_call" and get("role") == role:
            attempts = get("attempts")
            total += int(float(attempts)) if attempts not in (None, "") else 1
    return total
