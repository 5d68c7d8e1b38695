"""A local HTTP server that speaks the OpenAI chat-completions and Anthropic Messages wire
formats, for testing the LLM judges and the flush summary at the seam. The model name picks
the behaviour: good-<DECISION>, partial, garbage, slow, error, summary, empty; `recorded`
answers from `FakeLLM.recorded` (a text fragment → the decision for the item holding it; "M90|replaces:
TEXT" also names the entry of the item's "may replace" list holding TEXT, "M90|replaces:" none);
`no-schema-<MODEL>` refuses (HTTP 400) a request for structured output, as servers without it
do, and answers as MODEL otherwise.

A request for structured output (OpenAI `response_format`, Anthropic a forced tool) is answered
in kind: the bare JSON as the message content, or a `tool_use` block whose input is the answer."""

from __future__ import annotations

import json
import re
import time

from stand_in import Reply, StandIn


class FakeLLM(StandIn):
    """The server; `url` ends in /v1, `spec(model)` is a judge spec that points at it."""

    def __init__(self, slow_seconds: float = 2.0, recorded: dict[str, str] | None = None):
        self.slow_seconds = slow_seconds
        self.recorded = dict(recorded or {})
        super().__init__(self._reply)

    def _reply(self, request: dict) -> Reply:
        body = request["body"]
        model = body["model"]
        structured = "response_format" in body or "tools" in body
        if model.startswith("no-schema-"):
            if structured:
                return Reply(b'{"error": {"message": "response_format is not supported"}}', status=400)
            model = model[len("no-schema-") :]
        if model == "slow":
            time.sleep(self.slow_seconds)  # the client gives up waiting: that is the point
        if model == "error":
            return Reply(b'{"error": {"message": "overloaded"}}', status=500)
        prompt = body["messages"][-1]["content"]
        text = _recorded(self.recorded, prompt) if model == "recorded" else _answer(model, prompt)
        anthropic = request["path"].endswith("/messages")
        if structured:
            text = text.strip().removeprefix("```json").removesuffix("```").strip()
            if anthropic and text.startswith("{"):
                block = {"type": "tool_use", "id": "toolu_1", "name": body["tools"][0]["name"]}
                return Reply({"type": "message", "content": [{**block, "input": json.loads(text)}]})
        if anthropic:
            return Reply({"type": "message", "content": [{"type": "text", "text": text}]})
        return Reply({"choices": [{"message": {"role": "assistant", "content": text}}]})

    @property
    def url(self) -> str:
        return super().url + "/v1"

    def spec(self, model: str, provider: str = "openai", **extra) -> dict:
        return {
            "provider": provider,
            "model": model,
            "base_url": self.url,
            "name": extra.pop("name", model),
            **extra,
        }


def _items(prompt: str) -> list[tuple[str, str, str]]:
    return re.findall(r"^(\d+)\. (.*?) — choose one of: (.*)$", prompt, re.M)


def _recorded(recorded: dict[str, str], prompt: str) -> str:
    rows = []
    for n, text, _ in _items(prompt):
        for fragment, answer in recorded.items():
            if fragment in text:
                decision, _, replaced = answer.partition("|replaces:")
                row = {"item": int(n), "decision": decision, "reason": f"recorded: {fragment}"}
                if "|replaces:" in answer:  # the entry of the item's "may replace" list holding this text
                    found = re.search(rf'(m-[0-9a-f]+) \(\w*\) "[^"]*{re.escape(replaced)}', text)
                    row["replaces"] = found.group(1) if replaced and found else None
                rows.append(row)
    return json.dumps({"decisions": rows})


def _answer(model: str, prompt: str) -> str:
    items = _items(prompt)
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
