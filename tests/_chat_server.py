"""A small OpenAI-compatible chat-completions server on 127.0.0.1, for testing ChatLabeler's
protocol: no real endpoint exists where the tests run.

It records every request (path, headers, JSON body), answers from a script of canned replies
first (a status, a body, headers, a delay) and then with a grade computed from the query and
document texts it finds in the default prompt (words in common, at most 3).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_QUERY = re.compile(r"<<<QUERY (\w+)\n(.*?)\nQUERY \1>>>", re.DOTALL)
_DOC = re.compile(r"<<<PASSAGE (\w+)\n(.*?)\nPASSAGE \1>>>", re.DOTALL)


@dataclass
class Canned:
    """One scripted answer: an HTTP status, a body (a dict is sent as JSON, bytes as they
    are), headers."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    #: Seconds between the bytes of the whole answer (status line, headers, body): a server
    #: that is never silent for long, and never done.
    dribble: float = 0.0
    #: Bytes of junk sent after the headers, without a Content-Length (the body ends when the
    #: connection closes): a reply as big as a runaway model's.
    flood: int = 0
    #: False: no Content-Length (the body ends when the connection closes).
    length: bool = True


def completion(content: str) -> dict[str, Any]:
    """A chat-completions reply whose message is ``content``."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
    }


def overlap_grade(query: str, doc: str) -> int:
    return min(3, len(set(query.lower().split()) & set(doc.lower().split())))


class FakeChat:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: list[Canned] = []
        self.lock = threading.Lock()
        self.release = threading.Event()  # ends a delayed answer early at teardown
        handler = self._handler()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def calls(self) -> int:
        with self.lock:
            return len(self.requests)

    def answer(self, body: dict[str, Any]) -> Canned:
        with self.lock:
            if self.script:
                return self.script.pop(0)
        user = body["messages"][-1]["content"]
        query, doc = _QUERY.search(user), _DOC.search(user)
        grade = overlap_grade(query.group(2), doc.group(2)) if query and doc else 1
        return Canned(200, completion(f"The intent is clear.\n##final score: {grade}"))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                with fake.lock:
                    fake.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body}
                    )
                canned = fake.answer(body)
                if canned.delay:
                    fake.release.wait(canned.delay)
                data = canned.body
                if isinstance(data, bytes):  # sent as it is (junk, a compressed body)
                    raw = data
                else:
                    raw = (json.dumps(data) if not isinstance(data, str) else data).encode()
                if canned.dribble or canned.flood:
                    self._send_slowly_or_much(canned, raw)
                    return
                try:
                    self.send_response(canned.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    for name, value in canned.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(raw)
                except OSError:
                    pass  # the client gave up (a timeout test)

            def _send_slowly_or_much(self, canned: Canned, raw: bytes) -> None:
                self.close_connection = True
                try:
                    if canned.flood:
                        self.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n")
                        block = b"final score: 2 " * 4096
                        sent = 0
                        while sent < canned.flood and not fake.release.is_set():
                            self.wfile.write(block)
                            sent += len(block)
                        return
                    length = f"Content-Length: {len(raw)}\r\n" if canned.length else ""
                    answer = (
                        f"HTTP/1.0 {canned.status} OK\r\nContent-Type: application/json\r\n"
                        f"{length}\r\n"
                    ).encode() + raw
                    for index in range(len(answer)):
                        if fake.release.wait(canned.dribble):
                            return
                        self.wfile.write(answer[index : index + 1])
                        self.wfile.flush()
                except OSError:
                    pass  # the client gave up

        return Handler

    def __enter__(self) -> FakeChat:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def serve() -> Iterator[FakeChat]:
    with FakeChat() as fake:
        yield fake
