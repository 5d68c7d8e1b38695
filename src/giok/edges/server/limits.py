"""What `giok serve` accepts from a connection, enforced as the request comes in, before any
token is checked or any body is read whole:

- **Host** (`hosts`): a request whose Host header names another host gets 421, so a web page
  on a rebound DNS name (evil.example → 127.0.0.1) cannot talk to a loopback server. Bound to
  loopback, the server answers only to 127.0.0.1, localhost and ::1 unless told otherwise
  (`giok serve --allowed-host NAME`, or `serve.allowed_hosts` in the home config).
- **Header size** (`max_headers`): a request line and headers over this many bytes get 431,
  whether they arrive at once (counted here) or trickle in (h11's receive buffer, same limit).
- **Body size** (`max_body`): a declared Content-Length over the limit gets 413 at once, the body
  unread; a chunked body is counted as it streams and cut at the limit (413, connection closed).
- **Slow clients** (`header_timeout`, `body_timeout`): the request line and headers must arrive
  within `header_timeout` seconds of the connection opening (or of the previous response), the
  whole body within `body_timeout` seconds of the headers; else 408 and the connection closes. A
  connection that sent nothing is closed without a word. These are deadlines, not idle timers:
  one byte a second does not keep a connection alive.

`Guard` (ASGI middleware) does Host, headers and body; `protocol()` gives uvicorn an h11 protocol
with the two deadlines (uvicorn has none before the first request: a connection that never sends
its headers stays open).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import h11
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from giok.errors import InvalidInput

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Limits:
    """What one request may send (the module's docstring says what each refusal is)."""

    max_body: int = 1_000_000  # bytes of a request body
    max_headers: int = 32 * 1024  # bytes of the request line and headers
    header_timeout: float = 10.0  # seconds for the request line and headers
    body_timeout: float = 30.0  # seconds for the whole body, from the end of the headers
    hosts: tuple[str, ...] = ()  # Host names answered (no port); () or "*": any

    @classmethod
    def of(cls, config: object, host: str, allowed: tuple[str, ...] = ()) -> Limits:
        """The limits for a server bound to `host`: the home config's `serve` object over the
        defaults; `allowed` (--allowed-host) over its `allowed_hosts`; neither given, a loopback
        server answers to loopback names only."""
        if config is not None and not isinstance(config, Mapping):
            raise InvalidInput(f"serve in the home config must be an object, not {config!r}")
        config = dict(config or {})
        unknown = set(config) - {"max_body", "max_headers", "header_timeout", "body_timeout", "allowed_hosts"}
        if unknown:
            raise InvalidInput(f"unknown key(s) in the home config's serve: {', '.join(sorted(unknown))}")
        base = cls()
        hosts = tuple(allowed) or tuple(_names(config.get("allowed_hosts", [])))
        if not hosts and host in LOOPBACK:
            hosts = LOOPBACK
        return cls(
            max_body=int(_number(config, "max_body", base.max_body)),
            max_headers=int(_number(config, "max_headers", base.max_headers)),
            header_timeout=_number(config, "header_timeout", base.header_timeout),
            body_timeout=_number(config, "body_timeout", base.body_timeout),
            hosts=tuple(h.lower().strip("[]") for h in hosts),
        )

    def answers_to(self, host_header: str | None) -> bool:
        if not self.hosts or "*" in self.hosts:
            return True
        return host_header is not None and _hostname(host_header) in self.hosts


def _number(config: Mapping[str, Any], key: str, default: float) -> float:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise InvalidInput(f"serve.{key} in the home config must be a positive number, not {value!r}")
    return float(value)


def _names(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InvalidInput(
            f"serve.allowed_hosts in the home config must be a list of host names, not {value!r}"
        )
    return value


def _hostname(host_header: str) -> str:
    """The name in a Host header, without the port: `[::1]:8765` → `::1`."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def answer(status: int, message: str) -> tuple[dict, dict]:
    """An ASGI response (start, body) of one JSON line that closes the connection."""
    body = json.dumps({"error": message}, ensure_ascii=False).encode()
    start = {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ],
    }
    return start, {"type": "http.response.body", "body": body}


async def _refuse(send: Send, status: int, message: str) -> None:
    for part in answer(status, message):
        await send(part)


class BodyTooLarge(Exception):
    """Raised from `receive` once a body streams past the limit (the 413 is already sent)."""


class Guard:
    """ASGI middleware: Host, header size and body size, before anything else sees the request."""

    def __init__(self, app: ASGIApp, limits: Limits):
        self.app = app
        self.limits = limits

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        limits = self.limits
        headers = scope["headers"]
        host = next((v.decode("latin-1") for k, v in headers if k == b"host"), None)
        if not limits.answers_to(host):
            return 421, (
                f"this server does not answer to Host {host!r} (it answers to {', '.join(limits.hosts)}; "
                "giok serve --allowed-host NAME adds one)"
            )
        size = len(scope["method"]) + len(scope.get("raw_path") or b"") + len(scope["query_string"])
        size += sum(len(k) + len(v) + 4 for k, v in headers)
        if size > limits.max_headers:
            return 431, f"request headers over {limits.max_headers:,} bytes"
        declared = next((v for k, v in headers if k == b"content-length"), None)
        if declared is not None and declared.strip().isdigit() and int(declared) > limits.max_body:
            return 413, f"request body over {limits.max_body:,} bytes (Content-Length: {int(declared):,})"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self.refusal(scope)
        if refused:
            await _refuse(send, *refused)
            return
        limit = self.limits.max_body
        state = {"seen": 0, "started": False, "over": False}

        async def counted() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                state["seen"] += len(message.get("body", b""))
                if state["seen"] > limit:
                    if not state["started"]:
                        state["over"] = True
                        await _refuse(send, 413, f"request body over {limit:,} bytes")
                    raise BodyTooLarge(f"request body over {limit:,} bytes")
            return message

        async def guarded(message: Message) -> None:
            if state["over"]:
                return  # the app's answer to a body it never got: the 413 went out instead
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        try:
            await self.app(scope, counted, guarded)
        except BodyTooLarge:
            if not state["over"]:
                raise


class DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with deadlines for the headers and for the body of each request
    (`limits`), and a 431 for headers over the limit while they trickle in."""

    limits = Limits()

    def connection_made(self, transport) -> None:
        self._responses = 0
        self._phase: tuple[str, int] | None = None
        self._timer: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        self._responses += 1
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        pending = len(self.conn.trailing_data[0])
        if pending <= self.limits.max_headers:
            super().send_400_response(msg)
            return
        self._write_refusal(431, f"request headers over {self.limits.max_headers:,} bytes")

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _watch(self) -> None:
        """Arm the deadline of the phase the client is in: its headers (h11 IDLE) or its body
        (SEND_BODY); each phase of each request has its own."""
        if self.transport.is_closing():
            self._cancel()
            return
        state = self.conn.their_state
        kind = "headers" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None
        phase = (kind, self._responses) if kind else None
        if phase == self._phase:
            return
        self._cancel()
        self._phase = phase
        if phase is not None:
            seconds = self.limits.header_timeout if phase[0] == "headers" else self.limits.body_timeout
            self._timer = self.loop.call_later(seconds, self._expired, phase)

    def _expired(self, phase: tuple[str, int]) -> None:
        self._timer = None
        if phase != self._phase or self.transport.is_closing():
            return
        kind = phase[0]
        started = self.cycle is not None and self.cycle.response_started
        if kind == "headers" and not self.conn.trailing_data[0]:
            self.transport.close()  # an idle connection: nothing asked, nothing to answer
        elif started:
            self.transport.close()
        else:
            seconds = self.limits.header_timeout if kind == "headers" else self.limits.body_timeout
            self._write_refusal(408, f"the request {kind} did not arrive within {seconds:g} s")

    def _write_refusal(self, status: int, message: str) -> None:
        """Answer and close, past h11 (which may be mid-request or failed)."""
        start, body = answer(status, message)
        reason = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}.get(status, b"")
        head = b"HTTP/1.1 %d %s\r\n" % (status, reason)
        head += b"".join(k + b": " + v + b"\r\n" for k, v in start["headers"])
        if self.cycle is not None:
            self.cycle.disconnected = True  # the app, if it waits for the body, hears a disconnect
            self.cycle.message_event.set()
        self.transport.write(head + b"\r\n" + body["body"])
        self.transport.close()


def protocol(limits: Limits) -> type[DeadlineProtocol]:
    """The protocol class uvicorn builds per connection, with these limits."""
    return type("GiokProtocol", (DeadlineProtocol,), {"limits": limits})
