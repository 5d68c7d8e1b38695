"""A local HTTP server that speaks the OpenAI chat-completions and Anthropic Messages wire
formats, for testing the LLM judges and the flush summary at the seam. The model name picks
the behaviour: good-<DECISION>, partial, garbage, slow, error, summary, empty."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
        anthropic = self.path.endswith("/messages")
        prompt = body["messages"][-1]["content"]
        model = body["model"]
        if model == "slow":
            time.sleep(self.server.slow_seconds)
        if model == "error":
            self._send(500, b'{"error": {"message": "overloaded"}}')
            return
        text = self._answer(model, prompt)
        if anthropic:
            payload = {"type": "message", "content": [{"type": "text", "text": text}]}
        else:
            payload = {"choices": [{"message": {"role": "assistant", "content": text}}]}
        self._send(200, json.dumps(payload).encode())

    def _answer(self, model: str, prompt: str) -> str:
        items = re.findall(r"^(\d+)\. (.*?) — choose one of: (.*)$", prompt, re.M)
        if model.startswith("good-"):
            wanted = model[5:]
            rows = [
                {
                    "item": int(n),
                    "decision": wanted if wanted in choices.split(", ") else choices.split(", ")[0],
                    "reason": f"{model} thinks so",
                }
                for n, _, choices in items
            ]
            return "```json\n" + json.dumps({"decisions": rows}) + "\n```"
        if model == "partial":
            return json.dumps({"decisions": [{"item": 1, "decision": "M90", "reason": "only the first"}]})
        if model == "garbage":
            return "I would keep most of these, they look important!"
        if model == "summary":
            return json.dumps(
                {
                    "decisions": ["Use WAL mode for the index"],
                    "discoveries": [],
                    "pending": ["Benchmark on arm64"],
                    "failures": ["Build broke on old glibc"],
                }
            )
        if model == "summary-kept":
            return json.dumps(
                {
                    "constraints": ["Never push directly to main."],
                    "preferences": [],
                    "decisions": ["Use WAL mode for the index"],
                    "pending": [],
                    "failures": [],
                }
            )
        if model == "empty":
            return ""
        return "{}"

    def _send(self, code: int, data: bytes):
        try:
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting (the slow judge): that is the point


class FakeLLM:
    def __init__(self, slow_seconds: float = 2.0):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.requests = []
        self.server.slow_seconds = slow_seconds
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def requests(self) -> list:
        return self.server.requests

    def spec(self, model: str, provider: str = "openai", **extra) -> dict:
        return {
            "provider": provider,
            "model": model,
            "base_url": self.url,
            "name": extra.pop("name", model),
            **extra,
        }

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
