"""Local HTTP stand-ins for the services giok talks to (LLM and embedding APIs, Telegram, the
Messages API an agent runtime calls): a server on 127.0.0.1 that hands every request to a
function and keeps what it got, and the Anthropic Messages wire format those tests share."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """What the stand-in answers: `payload` as JSON, or bytes as they are."""

    payload: Any = None
    status: int = 200
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


Answer = Callable[[dict[str, Any]], "Reply | Any"]  # a request → a Reply, or a JSON payload (200)


class StandIn:
    """An HTTP service on 127.0.0.1 (`url`). Every request — a dict of method, path, headers
    (lower-case names), body (parsed JSON, None when empty) and time (monotonic, on arrival) — is
    kept in `requests` and given to `answer`. A client that hung up is not an error (the point
    of a test that times out). `protocol`: the HTTP version it answers with."""

    def __init__(self, answer: Answer, protocol: str = "HTTP/1.0"):
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self, protocol))
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def bodies(self, path: str | None = None) -> list[Any]:
        """The request bodies, in order (only those to `path`, its query left out, when given)."""
        return [r["body"] for r in self.requests if path is None or r["path"].split("?")[0] == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> StandIn:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _handler(stand_in: StandIn, protocol: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = protocol

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            request = {
                "method": self.command,
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": json.loads(raw) if raw else None,
                "time": time.monotonic(),
            }
            stand_in.requests.append(request)
            reply = stand_in.answer(request)
            self._send(reply if isinstance(reply, Reply) else Reply(reply))

        def _send(self, reply: Reply) -> None:
            data = reply.payload if isinstance(reply.payload, bytes) else json.dumps(reply.payload).encode()
            try:
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("content-type", reply.content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up waiting

    return Handler


# -- Telegram's Bot API ------------------------------------------------------------------------
class FakeTelegram(StandIn):
    """sendMessage that answers ok with message_id 100 + the request's number, or, while `fail`
    holds (status, description), that error; the description may name the {path}."""

    TOKEN_ENV, TOKEN = "TG_TOKEN", "123:SECRET"  # the bot token: the conftest fixture sets it

    def __init__(self) -> None:
        self.fail: tuple[int, str] | None = None
        super().__init__(self._send_message)

    def bot(self, **extra: Any) -> dict[str, Any]:
        """giok's telegram settings for this bot (`extra`: chat_id and the like)."""
        return {"token_env": self.TOKEN_ENV, "base_url": self.url, "timeout": 5, **extra}

    def _send_message(self, request: dict[str, Any]) -> Reply:
        if self.fail is not None:
            status, why = self.fail
            return Reply({"ok": False, "description": why.format(path=request["path"])}, status)
        return Reply({"ok": True, "result": {"message_id": 100 + len(self.requests)}})


# -- the Anthropic Messages API ---------------------------------------------------------------
def anthropic_message(
    content: list[dict], *, id: str = "msg_1", model: str | None = "m1", usage: dict | None = None
) -> dict:
    """A Messages API reply holding `content` (text and tool_use blocks); it stops for a tool
    when it holds a tool_use block."""
    return {
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn",
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 10, "output_tokens": 5},
    }


def anthropic_stream(reply: dict, output_tokens: int = 5) -> Reply:
    """`reply` (an `anthropic_message`) as the server-sent events of a streamed answer."""
    events: list[tuple[str, dict]] = [
        ("message_start", {"message": {**reply, "content": [], "stop_reason": None}})
    ]
    for i, block in enumerate(reply["content"]):
        if block["type"] == "text":
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"index": i, "content_block": start}),
            ("content_block_delta", {"index": i, "delta": delta}),
            ("content_block_stop", {"index": i}),
        ]
    events += [
        (
            "message_delta",
            {
                "delta": {"stop_reason": reply["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        ),
        ("message_stop", {}),
    ]
    data = "".join(
        f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n" for kind, fields in events
    )
    return Reply(data.encode(), content_type="text/event-stream")
