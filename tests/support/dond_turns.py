"""The LLM's DoND turns (``backend.dond.play.llm_turns``) run to their end on a small instance, outside oTree."""

from __future__ import annotations

from backend.dond.play import llm_turns
from tests.backend.dond.events import INSTANCE  # the small instance every DoND backend test plays
from tests.support.harness import run_async

__all__ = ["INSTANCE", "run_turns"]


def run_turns(events, role, config, settings, **options):
    """Every item ``llm_turns`` yields for ``role``'s turn on ``INSTANCE``, with ``events`` as the stored events."""

    async def collect():
        return [
            item
            async for item in llm_turns(
                load_events=lambda: events,
                store_event=events.append,
                instance=INSTANCE,
                config=config,
                role=role,
                settings=settings,
                **options,
            )
        ]

    return run_async(collect())
