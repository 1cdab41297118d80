"""A recording proxy in front of an OpenAI-compatible server: every request is passed on unchanged and the ``usage``
of every answer (prompt and completion tokens, as the server reported them) is kept, so a test can price the calls
from the server's own figures, apart from the product's cost plumbing (``backend.core.llm.costs``)."""

from __future__ import annotations

import contextlib
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class UsageProxy:
    """``base_url`` to give the client; ``usages``: (prompt_tokens, completion_tokens) of each answered call."""

    base_url: str
    usages: list[tuple[int, int]] = field(default_factory=list)
    answers_without_usage: int = 0


@contextlib.contextmanager
def usage_proxy(target_base_url: str) -> Iterator[UsageProxy]:
    """A proxy on a free local port forwarding ``/v1/...`` to ``target_base_url`` (which ends in ``/v1``)."""
    target = target_base_url.rstrip("/").removesuffix("/v1")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def _forward(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
            request = urllib.request.Request(target + self.path, data=body, headers=headers, method=method)
            try:
                with urllib.request.urlopen(request, timeout=600) as answer:
                    status, answer_headers, data = answer.status, answer.headers, answer.read()
            except urllib.error.HTTPError as error:
                status, answer_headers, data = error.code, error.headers, error.read()
            if method == "POST" and status == 200:
                self._note(data)
            self.send_response(status)
            for key, value in answer_headers.items():
                if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _note(self, data: bytes) -> None:
            usage = None
            for chunk in _documents(data):  # one JSON answer, or the data lines of a stream
                usage = chunk.get("usage") or usage
            with lock:
                if usage and usage.get("prompt_tokens") is not None:
                    proxy.usages.append((int(usage["prompt_tokens"]), int(usage.get("completion_tokens") or 0)))
                else:
                    proxy.answers_without_usage += 1

        def do_GET(self):
            self._forward("GET")

        def do_POST(self):
            self._forward("POST")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    proxy = UsageProxy(f"http://127.0.0.1:{server.server_address[1]}/v1")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        server.shutdown()
        server.server_close()


def _documents(data: bytes) -> list[dict]:
    text = data.decode("utf-8", errors="replace").strip()
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    found = []
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
            with contextlib.suppress(ValueError):
                found.append(json.loads(line[5:]))
    return found
