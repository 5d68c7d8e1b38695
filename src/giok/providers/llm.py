"""Chat clients for the LLM-backed steps (distillation judges, the watchdog's flush summary),
over httpx. Two wire formats cover the field: OpenAI-compatible chat completions (OpenAI,
Ollama, vLLM, llama.cpp server, OpenRouter, Gemini's and xAI's compatible endpoints) and
Anthropic's Messages API.

A client is made from a small spec dict, as written in the home config:

    {"provider": "openai", "model": "gpt-4o-mini"}
    {"provider": "anthropic", "model": "claude-sonnet-4-5", "timeout": 60}
    {"provider": "openai", "base_url": "http://127.0.0.1:8080/v1", "model": "local"}

`complete(system, prompt, schema=Schema(...))` asks for structured output — OpenAI's
`response_format` json_schema, or an Anthropic tool the model must call — and returns that JSON
as text; a server that refuses it (HTTP 400/422) is asked again in plain text, once, and then no
more.

Keys come from the environment only (`api_key_env`, default per provider), never from the
config file. A rate limit (429), an overloaded server (529, 503) or a timeout is tried again
with backoff (`"retries": 2` by default, see giok.providers.retry). Every failure (no key,
refused connection, timeout, HTTP error, an answer without text) is a ProviderError with one
clear line."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from giok import settings
from giok.errors import InvalidInput, ProviderError
from giok.providers.retry import Retry, post

if TYPE_CHECKING:
    import httpx

# provider → (wire format, default base URL, key variable or None when no key is needed)
PROVIDERS = {
    "openai": ("openai", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    "anthropic": ("anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"),
    "ollama": ("openai", "http://localhost:11434/v1", None),
    "vllm": ("openai", "http://localhost:8000/v1", None),
    "llamacpp": ("openai", "http://localhost:8080/v1", None),
    "openrouter": ("openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "gemini": ("openai", "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"),
    "xai": ("openai", "https://api.x.ai/v1", "XAI_API_KEY"),
}
ANTHROPIC_VERSION = "2023-06-01"


@dataclass
class ChatClient:
    """One model behind one endpoint. `complete(system, prompt)` returns the answer text."""

    name: str
    provider: str
    model: str
    base_url: str
    api_key_env: str | None = None
    timeout: float = 60.0
    max_tokens: int = 2048
    temperature: float = 0.0
    retry: Retry = field(default_factory=Retry, compare=False)
    _http: httpx.Client | None = field(default=None, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _no_schema: bool = field(default=False, repr=False, compare=False)  # the server refused one

    @property
    def wire(self) -> str:
        return PROVIDERS[self.provider][0]

    def key(self) -> str | None:
        if not self.api_key_env:
            return None
        value = settings.secret(self.api_key_env).strip()
        if not value:
            raise ProviderError(f"{self.name}: ${self.api_key_env} is not set")
        return value

    def complete(self, system: str, prompt: str, schema: Schema | None = None) -> str:
        """The model's answer to `prompt`. With `schema`, structured output is asked for (OpenAI
        `response_format` json_schema; Anthropic a forced tool whose input is the answer) and the
        answer is that JSON as text. A server that refuses the request for it (HTTP 400/422) is
        asked again without, once; the client then stops asking (the caller parses text)."""
        if schema is not None and not self._no_schema:
            try:
                return self._complete(system, prompt, schema)
            except _StatusError as exc:
                if exc.status not in (400, 422):
                    raise
                self._no_schema = True
        return self._complete(system, prompt, None)

    def _complete(self, system: str, prompt: str, schema: Schema | None) -> str:
        if self.wire == "anthropic":
            url, headers, body = self._anthropic_request(system, prompt)
        else:
            url, headers, body = self._openai_request(system, prompt)
        if schema is not None:
            body.update(_anthropic_tool(schema) if self.wire == "anthropic" else _openai_format(schema))
        data = self._post(url, headers, body)
        text = _anthropic_text(data) if self.wire == "anthropic" else _openai_text(data)
        if not text or not text.strip():
            raise ProviderError(f"{self.name}: the answer held no text")
        return text

    def _openai_request(self, system: str, prompt: str):
        headers = {"content-type": "application/json"}
        key = self.key()
        if key:
            headers["authorization"] = f"Bearer {key}"
        body = {
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
        }
        return f"{self.base_url}/chat/completions", headers, body

    def _anthropic_request(self, system: str, prompt: str):
        headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        key = self.key()
        if key:
            headers["x-api-key"] = key
        body = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "system": system,
            "messages": [{"role": "user", "content": prompt}],
        }
        return f"{self.base_url}/messages", headers, body

    def _post(self, url: str, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
        import httpx  # imported on first use: most giok commands never talk to a model

        with self._lock:  # one pooled connection set per model, shared by the panel's threads
            if self._http is None:
                self._http = httpx.Client(timeout=self.timeout)
        response = post(
            self._http, url, who=self.name, timeout=self.timeout, retry=self.retry, headers=headers, json=body
        )
        if response.status_code >= 400:
            detail = " ".join(response.text.split())[:200]
            raise _StatusError(
                f"{self.name}: HTTP {response.status_code} from {url}: {detail}", response.status_code
            )
        try:
            data = response.json()
        except ValueError:
            raise ProviderError(f"{self.name}: the answer is not JSON") from None
        if not isinstance(data, dict):
            raise ProviderError(f"{self.name}: the answer is not a JSON object")
        return data


@dataclass
class Schema:
    """A JSON schema the answer must follow: `name` (letters, digits, _ and -), what it is for,
    and the schema itself (for OpenAI's strict mode: every property required, no others)."""

    name: str
    description: str
    schema: dict[str, Any]


class _StatusError(ProviderError):
    """An HTTP error status from the endpoint."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def _openai_format(schema: Schema) -> dict[str, Any]:
    return {
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": schema.name,
                "description": schema.description,
                "strict": True,
                "schema": schema.schema,
            },
        }
    }


def _anthropic_tool(schema: Schema) -> dict[str, Any]:
    return {
        "tools": [{"name": schema.name, "description": schema.description, "input_schema": schema.schema}],
        "tool_choice": {"type": "tool", "name": schema.name},
    }


def _openai_text(data: dict) -> str | None:
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return None
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else None


def _anthropic_text(data: dict) -> str | None:
    """The text blocks of a Messages answer; a forced tool's input (structured output) as JSON."""
    blocks = data.get("content")
    if not isinstance(blocks, list):
        return None
    for block in blocks:
        if (
            isinstance(block, dict)
            and block.get("type") == "tool_use"
            and isinstance(block.get("input"), dict)
        ):
            return json.dumps(block["input"], ensure_ascii=False)
    return "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


def client(spec: dict, default_name: str = "llm", timeout: float | None = None) -> ChatClient:
    """Build a ChatClient from a config spec; a bad spec is an InvalidInput naming the field."""
    if not isinstance(spec, dict):
        raise InvalidInput(f"LLM spec {spec!r} must be an object with provider and model")
    provider = str(spec.get("provider", "openai")).lower()
    if provider not in PROVIDERS:
        raise InvalidInput(f"unknown LLM provider {provider!r}: choose one of {', '.join(PROVIDERS)}")
    model = spec.get("model")
    if not model or not isinstance(model, str):
        raise InvalidInput(f"LLM spec for {provider} needs a model name")
    _, default_url, default_key = PROVIDERS[provider]
    base_url = str(spec.get("base_url") or default_url).rstrip("/")
    key_env = spec.get("api_key_env", default_key) or None
    try:
        seconds = float(spec.get("timeout", timeout if timeout is not None else 60.0))
        max_tokens = int(spec.get("max_tokens", 2048))
        retries = int(spec.get("retries", 2))
    except (TypeError, ValueError):
        raise InvalidInput(f"LLM spec for {model}: timeout, max_tokens and retries must be numbers") from None
    if seconds <= 0:
        raise InvalidInput(f"LLM spec for {model}: timeout must be positive")
    if retries < 0:
        raise InvalidInput(f"LLM spec for {model}: retries must be 0 or more")
    name = str(spec.get("name") or f"{provider}:{model}")  # default_name: kept for callers, never reached
    return ChatClient(
        name=name,
        provider=provider,
        model=model,
        base_url=base_url,
        api_key_env=key_env,
        timeout=seconds,
        max_tokens=max_tokens,
        retry=Retry(attempts=retries + 1),
    )


def configured(ws, key: str):
    """A setting for this workspace: the workspace's own entry in the home config wins over
    the home-wide key."""
    config = ws.home.config()
    own = config.get("workspaces", {}).get(ws.name, {})
    return own.get(key, config.get(key))
