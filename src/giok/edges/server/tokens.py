"""Access tokens for `giok serve`: each names the workspaces it reaches, a scope (read or
write) and the user it reads for: `user` (None: the name in each workspace's USER.md), or an
owner token, which may read as any user and sees the raw views (git history, distill reports).
The home keeps only a SHA-256 of each token, in `tokens.json` (mode 0600, written atomically
under the home lock); the token itself is shown once, when it is created.

A token looks like `giok_<id>_<secret>`: the id lets `giok token revoke` name it and is
stored in clear; the secret (32 random bytes) is what the hash guards.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from giok.errors import InvalidInput, NotFound, WorkspaceError
from giok.store.fsutil import atomic_write, file_lock
from giok.store.home import Home, check_name

FILENAME = "tokens.json"
SCOPES = ("read", "write")
PREFIX = "giok_"


@dataclass(frozen=True)
class Token:
    id: str
    name: str
    workspaces: tuple[str, ...]
    scope: str
    created: str
    expires: str | None = None
    user: str | None = None  # whom it reads for; None: the workspace's USER.md user
    owner: bool = False  # the workspace owner's token: any user's scope, the raw views

    def reads_as(self, user_md_user: str | None) -> str | None:
        """The user this token reads for in a workspace whose USER.md names `user_md_user`."""
        return self.user or user_md_user

    def reaches(self, workspace: str) -> bool:
        return workspace in self.workspaces or "*" in self.workspaces

    def may_write(self) -> bool:
        return self.scope == "write"

    def expired(self, when: dt.datetime | None = None) -> bool:
        if not self.expires:
            return False
        return dt.datetime.fromisoformat(self.expires) <= (when or dt.datetime.now(dt.UTC))

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "workspaces": list(self.workspaces),
            "scope": self.scope,
            "created": self.created,
            "expires": self.expires,
            "user": self.user,
            "owner": self.owner,
        }


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def token_from(record: dict) -> Token:
    return Token(
        id=record["id"],
        name=record.get("name", ""),
        workspaces=tuple(record.get("workspaces", ())),
        scope=record.get("scope", "read"),
        created=record.get("created", ""),
        expires=record.get("expires"),
        user=record.get("user") or None,
        owner=record.get("owner") is True,
    )


class Tokens:
    """The token file of one home."""

    def __init__(self, home: Home):
        self.home = home

    @property
    def path(self) -> Path:
        return self.home.path / FILENAME

    def _read(self) -> list[dict]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return []
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise WorkspaceError(f"{self.path} is not valid JSON: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("tokens"), list):
            raise WorkspaceError(f"{self.path} must hold {{'tokens': [...]}}")
        return data["tokens"]

    def _write(self, records: list[dict]) -> None:
        self.home.path.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():  # atomic_write keeps an existing file's mode: start at 0600
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        os.chmod(self.path, 0o600)
        body = json.dumps({"tokens": records}, indent=2, ensure_ascii=False) + "\n"
        atomic_write(self.path, body.encode("utf-8"))

    def _change(self, change) -> object:
        self.home.path.mkdir(parents=True, exist_ok=True)
        with file_lock(self.home.path / ".lock"):
            records = self._read()
            result = change(records)
            self._write(records)
        return result

    def create(
        self,
        workspaces: list[str],
        scope: str,
        name: str | None = None,
        ttl: dt.timedelta | None = None,
        *,
        user: str | None = None,
        owner: bool = False,
    ) -> tuple[str, Token]:
        """A new token: (the secret text, shown once; its record). `user`: whom it reads for
        (default: each workspace's USER.md user); `owner`: it may read as anyone."""
        if scope not in SCOPES:
            raise InvalidInput(f"invalid scope {scope!r}: use read or write")
        if user is not None and not user.strip():
            raise InvalidInput("--user needs a name")
        if not workspaces:
            raise InvalidInput("a token needs at least one workspace (--workspace NAME)")
        known = self.home.workspaces()
        for ws in workspaces:
            if ws != "*" and check_name(ws) not in known:
                raise NotFound(f"unknown workspace {ws!r} (known: {', '.join(sorted(known)) or 'none yet'})")
        now = dt.datetime.now(dt.UTC).replace(microsecond=0)
        token_id = secrets.token_hex(4)
        secret = f"{PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
        record = {
            "id": token_id,
            "name": (name or "").strip() or f"{'+'.join(workspaces)}-{scope}",
            "workspaces": sorted(set(workspaces)),
            "scope": scope,
            "created": now.isoformat(),
            "expires": (now + ttl).isoformat() if ttl else None,
            "user": user.strip() if user else None,
            "owner": owner,
            "sha256": _digest(secret),
        }

        def change(records: list[dict]) -> None:
            records[:] = [r for r in records if not token_from(r).expired(now)]
            records.append(record)

        self._change(change)
        return secret, token_from(record)

    def list(self) -> list[Token]:
        return [token_from(r) for r in self._read()]

    def revoke(self, key: str) -> Token:
        """Revoke the token with this id or name (a unique name)."""

        def change(records: list[dict]) -> dict:
            found = [r for r in records if r["id"] == key] or [r for r in records if r.get("name") == key]
            if not found:
                raise NotFound(f"no token {key!r} (see `giok token list`)")
            if len(found) > 1:
                raise InvalidInput(f"{len(found)} tokens are named {key!r}: revoke by id")
            records.remove(found[0])
            return found[0]

        return token_from(self._change(change))  # type: ignore[arg-type]

    def verify(self, secret: str) -> Token | None:
        """The token this secret is, or None (unknown, revoked or expired)."""
        if not secret.startswith(PREFIX):
            return None
        digest = _digest(secret)
        for record in self._read():
            if hmac.compare_digest(str(record.get("sha256", "")), digest):
                token = token_from(record)
                return None if token.expired() else token
        return None
