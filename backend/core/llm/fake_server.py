"""A local OpenAI-compatible chat-completions server whose every answer can be scripted.

Tests, benchmarks and offline demos point the real ``openai`` client at it (``OPENAI_BASE_URL``). Each call takes
the next scripted ``Reply`` from a queue, or asks the ``responder`` (a function of the request) when the queue is
empty. A ``Reply`` can delay, stream slowly, stall, break off mid-stream, answer with an HTTP error (with
``Retry-After``) or send a body that is not JSON. It can think like a reasoning model (``Reply.reasoning`` in a
``reasoning_content`` or ``reasoning`` field; ``<think>`` blocks are simply part of ``text``) and refuse what some
endpoints refuse (``refuse_response_format``, ``require_max_completion_tokens``).

Another process (oTree bots under ``otree test``) scripts it over HTTP: ``POST {base_url}/_script`` with
``{"replies": [{"text": ..., "status": ..., ...}, "plain text", ...]}``, ``POST {base_url}/_clear``, and
``GET {base_url}/_requests`` lists the requests received.

Run one by hand: ``python -m backend.core.llm.fake_server --port 8001 --latency 1.0``. By hand it answers with
``--responder demo`` (the default, ``backend.dond.demo_responder.demo``): a DoND game's chat gets a player that follows the game's
format and proposes (``backend.dond.demo_responder``), so the offline demo plays real games; anything else, and
``--responder echo``, gets ``default_responder``'s "I read N words.". A server made in code answers with
``default_responder`` unless given another.
"""

from __future__ import annotations

import argparse
import importlib
import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer. ``text`` is the reply; the other fields inject behaviour."""

    text: str = "Hello."
    delay_s: float = 0.0  # before the first byte
    chunk_delay_s: float = 0.0  # between streamed pieces
    status: int = 200  # an HTTP error status replaces the reply
    retry_after: float | None = None  # sent as Retry-After with an error status
    error_message: str | None = None  # the error body's message with an error status (default "scripted <status>")
    garbage: str | None = None  # a raw body that is not a valid completion
    drop_after_chunks: int | None = None  # close the stream after this many pieces, without [DONE]
    logprobs: Any = None  # returned as choices[0].logprobs (non-streaming)
    reasoning: str | None = None  # a reasoning model's thinking, sent apart from the content
    reasoning_field: str = "reasoning_content"  # vLLM, DeepSeek, llama.cpp; OpenRouter and Ollama say "reasoning"
    served_model: str | None = None  # the model the answer names (default: the one asked for), as a misrouted endpoint
    prompt_tokens: int | None = None  # the usage reported (default: 10 prompt tokens)
    completion_tokens: int | None = None  # (default: the reply's word count)
    system_fingerprint: str | None = None  # sent as the response's system_fingerprint, as OpenAI does


Responder = Callable[[dict[str, Any]], "str | Reply"]


def default_responder(request: dict[str, Any]) -> str:
    last = next((m.get("content", "") for m in reversed(request.get("messages", [])) if m.get("role") == "user"), "")
    return f"I read {len(str(last).split())} words."


RESPONDERS: dict[str, Responder] = {"echo": default_responder}
DEMO_RESPONDER = "backend.dond.demo_responder:demo"  # the command line's default: the offline demo's DoND player


def responder_named(name: str) -> Responder:
    """A responder by name: one of `RESPONDERS`, or ``module:function`` (a domain's player, e.g. `DEMO_RESPONDER`),
    imported by name so that ``backend.core`` never imports a domain package."""
    if name in RESPONDERS:
        return RESPONDERS[name]
    module, _, function = name.partition(":")
    if not function:
        raise ValueError(f"Unknown responder {name!r}: use one of {', '.join(sorted(RESPONDERS))} or module:function.")
    return getattr(importlib.import_module(module), function)


def _usage(reply: Reply) -> dict[str, int]:
    """The usage an answer reports: the scripted counts, else 10 prompt tokens and the reply's word count.

    >>> _usage(Reply("two words")), _usage(Reply("x", prompt_tokens=700, completion_tokens=50))["total_tokens"]
    ({'prompt_tokens': 10, 'completion_tokens': 2, 'total_tokens': 12}, 750)
    """
    prompt = 10 if reply.prompt_tokens is None else reply.prompt_tokens
    completion = len(reply.text.split()) if reply.completion_tokens is None else reply.completion_tokens
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _pieces(text: str) -> list[str]:
    words = text.split(" ")
    return [word + (" " if index < len(words) - 1 else "") for index, word in enumerate(words)]


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # hundreds of simulated participants connect at once
    daemon_threads = True


class FakeOpenAIServer:
    """Start with ``start()`` (returns the base URL), stop with ``stop()``; also a context manager."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, responder: Responder | None = None):
        self.responder: Responder = responder or default_responder
        self.default_delay_s = 0.0
        self.default_chunk_delay_s = 0.0
        self.refuse_response_format = False  # HTTP 400 for a request with response_format, as some servers answer
        self.require_max_completion_tokens = False  # HTTP 400 for max_tokens, as OpenAI's reasoning models answer
        self.context_tokens: int | None = None  # reported at GET /props as llama.cpp does; None: 404 there
        self.requests: list[dict[str, Any]] = []
        self._script: deque[Reply | str] = deque()
        self._lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0
        self._httpd = _Server((host, port), self._handler_class())
        self._thread: threading.Thread | None = None

    # --- scripting -------------------------------------------------------------------------------------------
    def script(self, *replies: Reply | str) -> None:
        """Queue answers for the next calls, in order (strings are plain replies)."""
        with self._lock:
            self._script.extend(replies)

    def clear(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.max_in_flight = 0

    @property
    def in_flight(self) -> int:
        """Chat calls being answered now (a call whose client closed the connection stops counting)."""
        with self._lock:
            return self._in_flight

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def _next_reply(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            item = self._script.popleft() if self._script else None
        if item is None:
            item = self.responder(request)
        if isinstance(item, str):
            item = Reply(text=item, delay_s=self.default_delay_s, chunk_delay_s=self.default_chunk_delay_s)
        return item

    def _refusal(self, request: dict[str, Any]) -> str | None:
        if self.refuse_response_format and "response_format" in request:
            return "response_format of type json_schema is not supported by this server"
        if self.require_max_completion_tokens and "max_tokens" in request:
            return "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens'."
        return None

    # --- lifecycle -------------------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> str:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    # --- HTTP ------------------------------------------------------------------------------------------------
    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def do_GET(self):
                if self.path.rstrip("/").endswith("/_requests"):
                    with server._lock:
                        self._send_json(200, {"requests": list(server.requests)})
                elif self.path.rstrip("/").endswith("/props") and server.context_tokens is not None:
                    self._send_json(200, {"default_generation_settings": {"n_ctx": server.context_tokens}})
                elif self.path.rstrip("/").endswith("/models"):
                    self._send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
                else:
                    self._send_json(404, {"error": {"message": "not found"}})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    request = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    self._send_json(400, {"error": {"message": "body is not JSON"}})
                    return
                path = self.path.rstrip("/")
                if path.endswith("/_script"):  # lets a test in another process (oTree bots) script the answers
                    server.script(*(Reply(**item) if isinstance(item, dict) else item for item in request["replies"]))
                    self._send_json(200, {"pending": server.pending})
                    return
                if path.endswith("/_clear"):
                    server.clear()
                    self._send_json(200, {"pending": 0})
                    return
                if not path.endswith("/chat/completions"):
                    self._send_json(404, {"error": {"message": f"unknown path {self.path}"}})
                    return
                refusal = server._refusal(request)
                if refusal:
                    with server._lock:
                        server.requests.append(request)
                    self._send_json(400, {"error": {"message": refusal, "type": "invalid_request_error"}})
                    return
                with server._lock:
                    server._in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server._in_flight)
                try:
                    self._answer(request, server._next_reply(request))
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to send to
                finally:
                    with server._lock:
                        server._in_flight -= 1

            def _client_left(self) -> bool:
                """True once the client closed the connection (it timed out and gave up)."""
                readable, _, _ = select.select([self.connection], [], [], 0)
                if not readable:
                    return False
                try:
                    return self.connection.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    return True

            def _wait(self, seconds: float) -> bool:
                """Sleep ``seconds`` in short steps; False (stop answering) as soon as the client has left, so a
                stalled call stops counting as in flight when the client gives up, as on a real endpoint."""
                end = time.monotonic() + seconds
                while (remaining := end - time.monotonic()) > 0:
                    time.sleep(min(remaining, 0.05))
                    if self._client_left():
                        return False
                return True

            def _answer(self, request: dict[str, Any], reply: Reply):
                if reply.delay_s and not self._wait(reply.delay_s):
                    return
                if reply.status != 200:
                    headers = {"Retry-After": str(reply.retry_after)} if reply.retry_after is not None else {}
                    message = reply.error_message or f"scripted {reply.status}"
                    self._send_json(reply.status, {"error": {"message": message}}, headers)
                    return
                if reply.garbage is not None:
                    self._send_raw(200, reply.garbage.encode(), "application/json")
                    return
                model = reply.served_model or request.get("model", "fake-model")
                if request.get("stream"):
                    self._stream(model, reply)
                else:
                    self._send_json(200, self._completion(model, reply))

            def _completion(self, model: str, reply: Reply) -> dict[str, Any]:
                return {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {
                                "role": "assistant",
                                "content": reply.text,
                                **({reply.reasoning_field: reply.reasoning} if reply.reasoning else {}),
                            },
                            "finish_reason": "stop",
                            "logprobs": reply.logprobs,
                        }
                    ],
                    "usage": _usage(reply),
                    **({"system_fingerprint": reply.system_fingerprint} if reply.system_fingerprint else {}),
                }

            def _stream(self, model: str, reply: Reply):
                # A stream that ends well is chunked and keeps the connection for the next call, as real servers do
                # (a new connection per call cost the caller a TCP handshake each); one scripted to break closes it.
                self._chunked = reply.drop_after_chunks is None
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                if self._chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time())}
                base["model"] = model
                if reply.system_fingerprint:
                    base["system_fingerprint"] = reply.system_fingerprint
                for piece in _pieces(reply.reasoning or "") if reply.reasoning else []:
                    delta = {reply.reasoning_field: piece}
                    self._event(dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]))
                for index, piece in enumerate(_pieces(reply.text)):
                    if reply.drop_after_chunks is not None and index >= reply.drop_after_chunks:
                        self.wfile.flush()
                        return  # connection closes without [DONE]
                    if index and reply.chunk_delay_s and not self._wait(reply.chunk_delay_s):
                        self.close_connection = True
                        return  # the client gave up waiting for this piece
                    chunk = dict(base, choices=[{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
                    self._event(chunk)
                self._event(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]))
                self._event(dict(base, choices=[], usage=_usage(reply)))
                self._write(b"data: [DONE]\n\n")
                if self._chunked:
                    self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def _event(self, payload: dict[str, Any]):
                self._write(b"data: " + json.dumps(payload).encode() + b"\n\n")

            def _write(self, data: bytes):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if self._chunked else data)
                self.wfile.flush()

            def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None):
                self._send_raw(status, json.dumps(payload).encode(), "application/json", headers)

            def _send_raw(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run a scriptable OpenAI-compatible server on loopback.")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each reply starts")
    parser.add_argument(
        "--responder",
        default="demo",
        help="demo (default): DoND games get a player that follows the format and proposes "
        f"({DEMO_RESPONDER}); echo: 'I read N words.'; or any module:function that answers a request.",
    )
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(
        port=args.port, responder=responder_named(DEMO_RESPONDER if args.responder == "demo" else args.responder)
    )
    server.default_delay_s = args.latency
    print(f"Fake OpenAI-compatible server on {server.start()} (Ctrl+C to stop)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
