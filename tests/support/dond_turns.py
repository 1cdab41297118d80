"""The LLM's DoND turns (``backend.dond.play.llm_turns``) run to their end on a small instance, outside oTree."""

from __future__ import annotations

import time

from backend.dond.play import llm_turns
from harness.servers import run_async
from tests.support.dond_events import INSTANCE  # the small instance every DoND backend test plays

__all__ = ["INSTANCE", "run_turns"]


def run_turns(events, role, config, settings, protocol=None, *, item_times=None, **options):
    """Every item ``llm_turns`` yields for ``role``'s turn on ``INSTANCE``, with ``events`` as the stored events.

    ``protocol``: the research protocol to play under, if any; ``item_times``: a list that receives
    ``(time.monotonic(), item)`` as each item arrives; ``options`` go to ``llm_turns``.
    """
    if protocol is not None:
        options["protocol"] = protocol

    async def collect():
        items = []
        async for item in llm_turns(
            load_events=lambda: events,
            store_event=events.append,
            instance=INSTANCE,
            config=config,
            role=role,
            settings=settings,
            **options,
        ):
            items.append(item)
            if item_times is not None:
                item_times.append((time.monotonic(), item))
        return items

    return run_async(collect())
