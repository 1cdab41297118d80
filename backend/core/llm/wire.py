"""The client's side of the wire: the ``openai`` clients of an endpoint and their connection pools, a request sent
through them, and a streamed reply read as the JSON the endpoint sends (``backend.core.llm.client`` decides what to
ask, what an error means and what is recorded).
"""

from __future__ import annotations

import contextlib
import json
import ssl
from collections.abc import AsyncIterator
from typing import Any

# An endpoint's calls share a client (its connection pool) while it has fewer than this many in flight; more at
# once open another client. Why: a pool looks at every one of its connections (an idle one's socket too) whenever
# a request starts or ends; with 100 calls in flight on one pool that was half of the client's time per DoND
# exchange (py-spy, 100 players).
CALLS_PER_POOL = 16


class Clients:
    """One endpoint's clients on one event loop, and how many calls each has in flight.

    >>> clients = Clients(make=object)
    >>> with clients.take() as first, clients.take() as second:
    ...     first is second
    True
    >>> with contextlib.ExitStack() as calls:  # one more call at once than a pool takes
    ...     held = [calls.enter_context(clients.take()) for _ in range(CALLS_PER_POOL + 1)]
    ...     held[0] is held[-2], held[0] is held[-1], len(clients.clients)
    (True, False, 2)
    >>> with clients.take() as again:  # the calls are over: the first client again
    ...     again is held[0]
    True
    """

    def __init__(self, make):
        self.make, self.clients, self.in_flight = make, [], []

    @contextlib.contextmanager
    def take(self):
        index = next((i for i, calls in enumerate(self.in_flight) if calls < CALLS_PER_POOL), None)
        if index is None:
            self.clients.append(self.make())
            self.in_flight.append(0)
            index = len(self.clients) - 1
        self.in_flight[index] += 1
        try:
            yield self.clients[index]
        finally:
            self.in_flight[index] -= 1


# What ``_request`` puts in a request beside the model and the caller's options: plain JSON, sent as it is.
PLAIN_JSON = ("messages", "temperature", "seed", "max_tokens", "max_completion_tokens", "response_format")


def split_request(request: dict, **body) -> tuple[dict, dict]:
    """The client's parameters (the model, the caller's options) and the plain JSON sent as ``extra_body``, which
    the client sends unchanged (not walked through the client's typing introspection); ``body`` adds to the latter.
    The JSON sent is the same either way (docs/decisions/0009-a-page-step-costs-the-same-at-any-size.md).

    >>> split_request({"model": "m", "messages": [], "temperature": 0.7, "top_p": 0.9}, stream_options={})
    ({'model': 'm', 'top_p': 0.9, 'messages': []}, {'messages': [], 'temperature': 0.7, 'stream_options': {}})
    """
    plain = {key: value for key, value in request.items() if key in PLAIN_JSON}
    params = {key: value for key, value in request.items() if key not in PLAIN_JSON}
    return {**params, "messages": []}, {**plain, **body}


def create(client, request: dict, **extra):
    """``chat.completions.create`` with the request's plain JSON as ``extra_body`` (``split_request``)."""
    params, body = split_request(request)
    return client.chat.completions.create(**params, **extra, extra_body=body)


async def open_stream(client, request: dict):
    """The streamed request sent through the client (its errors, statuses and headers as ``create`` has them); the
    HTTP response whose body is still to be read.

    The chunks are read as the JSON they are (``read_chunks``), not built into the client's typed objects as
    ``create(stream=True)`` would (docs/decisions/0009-a-page-step-costs-the-same-at-any-size.md).
    """
    params, body = split_request(request, stream_options={"include_usage": True})
    opened = client.chat.completions.with_streaming_response.create(**params, stream=True, extra_body=body)
    return await opened.__aenter__()


async def read_chunks(client, response) -> AsyncIterator[Any]:
    """The streamed reply's chunks as the JSON the endpoint sent, decoded by the client's own event-stream decoder,
    with the client's errors for what breaks: a timeout, a lost connection, an ``error`` the endpoint streams.

    >>> import asyncio, httpx2, openai
    >>> body = b'data: {"choices": [{"delta": {"content": "Hi"}}]}\\n\\ndata: [DONE]\\n\\n'
    >>> sent = httpx2.Response(200, content=body, request=httpx2.Request("POST", "http://h/v1/chat/completions"))
    >>> async def read():
    ...     client = openai.AsyncOpenAI(api_key="k", base_url="http://h/v1")
    ...     return [chunk async for chunk in read_chunks(client, type("Opened", (), {"http_response": sent})())]
    >>> asyncio.run(read())
    [{'choices': [{'delta': {'content': 'Hi'}}]}]
    """
    import anyio
    import httpx2
    import openai
    from openai._streaming_cleanup import drain_response_async

    http = response.http_response
    events = client._make_sse_decoder().aiter_bytes(http.aiter_bytes())
    while True:
        try:
            event = await events.__anext__()
        except StopAsyncIteration:
            return
        except httpx2.TimeoutException as error:
            raise openai.APITimeoutError(request=http.request) from error
        except (httpx2.RequestError, ssl.SSLError, anyio.EndOfStream) as error:
            raise openai.APIConnectionError(request=http.request) from error
        if event.data.startswith("[DONE]"):
            if http.http_version == "HTTP/1.1":  # the rest of the body read, so that the connection is kept
                await drain_response_async(http)
            return
        data = json.loads(event.data)
        if isinstance(data, dict) and data.get("error"):
            error = data["error"]
            message = error.get("message") if isinstance(error, dict) else None
            if not message or not isinstance(message, str):
                message = "An error occurred during streaming"
            raise openai.APIError(message=message, request=http.request, body=error)
        yield data
