"""``StartedStream``: an async iterator over a call that a task of the running loop has already set going
(``backend.core.llm.client.start_stream``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

_STREAM_END = object()


class StartedStream:
    """An async iterator over the items of an async iterable that a task of the running loop consumes meanwhile."""

    def __init__(self, source: AsyncIterator[Any]):
        self._items: asyncio.Queue = asyncio.Queue()
        self._task = asyncio.ensure_future(self._pump(source))

    async def _pump(self, source: AsyncIterator[Any]) -> None:
        try:
            async for item in source:
                self._items.put_nowait(item)
        except Exception as error:  # handed to the reader, raised where it iterates
            self._items.put_nowait(_Raised(error))
        finally:
            self._items.put_nowait(_STREAM_END)

    def __aiter__(self) -> StartedStream:
        return self

    async def __anext__(self) -> Any:
        item = await self._items.get()
        if item is _STREAM_END:
            self._items.put_nowait(_STREAM_END)  # any later call ends too
            raise StopAsyncIteration
        if isinstance(item, _Raised):
            raise item.error
        return item

    async def aclose(self) -> None:
        """Cancel the call if it is still running and wait until it has stopped."""
        if not self._task.done():
            self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            if not self._task.cancelled():  # the caller itself is being cancelled
                raise


@dataclass
class _Raised:
    error: Exception
