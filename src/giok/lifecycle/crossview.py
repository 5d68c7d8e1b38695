"""Cross-view messages between the agents of one home: a durable bus in `<home>/crossview.db`.

In the seed, four agents share a group chat whose bot posts never reach the other bots, so
each agent relays what it posts to its siblings, tagged `[단톡방 크로스뷰]`, and an answer
to a relayed message is never relayed again. Here that rule is code, not a prompt:

- a **post** fans out to its recipients (every sibling by default);
- a **reply** (`reply_to=ID`) goes to the original sender only and cannot be fanned out;
- a reply to a reply is refused, and so is a post that relays a relayed message: its text
  carries a cross-view tag anywhere, or contains, word for word (case, punctuation and spacing
  aside), a message its sender received ("Re: …", "FYI …"): a relay of a relay.

So a post causes at most 2·(n−1) deliveries in a home of n agents, however eagerly the
agents answer everything they receive.

Secrets in a message are redacted (`policy.redact`) before it reaches the bus, a diary or a
transport. Every message and inbox row is written in one SQLite transaction (WAL, `BEGIN IMMEDIATE`),
so concurrent senders in several processes lose nothing. Then each configured transport
delivers it: `local` (default) notes it in the recipients' diaries so it becomes memory,
`telegram` posts it to a group with the Bot API. Transports are plugins with one method.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sqlite3
import unicodedata
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from giok.errors import GiokError, InvalidInput, LoopRefused, NotFound, ProviderError, WorkspaceError
from giok.settings import secret
from giok.store import templates
from giok.store.clock import now
from giok.store.fsutil import clean_text
from giok.store.home import Home, check_name
from giok.store.workspace import Workspace
from giok.write import notes
from giok.write.policy import redact

TAG = "[단톡방 크로스뷰]"
TAGS = (TAG, "[cross-view]", "[crossview]")
MAX_TEXT = 4096  # Telegram's message limit
DIARY_WIDTH = 600

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,              -- cv-000001
    sender     TEXT NOT NULL,                     -- workspace name
    kind       TEXT NOT NULL CHECK (kind IN ('post', 'reply')),
    reply_to   TEXT REFERENCES messages(id),      -- replies only
    text       TEXT NOT NULL,
    text_hash  TEXT NOT NULL,                     -- sha256 of the normalised text
    created    TEXT NOT NULL,
    transports TEXT NOT NULL DEFAULT '{}'         -- JSON: what each transport did
);
CREATE TABLE IF NOT EXISTS deliveries (
    message_id TEXT NOT NULL REFERENCES messages(id),
    recipient  TEXT NOT NULL,
    delivered  TEXT NOT NULL,
    acked      TEXT,                              -- NULL while unread
    diary      TEXT,                              -- the diary line written, if any
    PRIMARY KEY (message_id, recipient)
);
CREATE INDEX IF NOT EXISTS deliveries_inbox ON deliveries (recipient, acked);
CREATE INDEX IF NOT EXISTS messages_hash ON messages (text_hash);
"""


@dataclass
class Message:
    id: str
    sender: str
    kind: str
    text: str
    created: str
    reply_to: str | None = None
    recipients: list[str] = field(default_factory=list)
    transports: dict = field(default_factory=dict)

    def render(self, tag: str = TAG) -> str:
        """The tagged line other agents (and the group chat) see; `tag`: another of TAGS (an
        English workspace's diary reads `[cross-view]`)."""
        head = f"{self.sender} ↩ {self.reply_to}" if self.reply_to else self.sender
        return f"{tag} {head}: {self.text}"

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "sender": self.sender,
            "kind": self.kind,
            "reply_to": self.reply_to,
            "text": self.text,
            "created": self.created,
            "recipients": list(self.recipients),
            "transports": self.transports,
            "rendered": self.render(),
        }


# -- transports -------------------------------------------------------------------------
class Transport:
    """A way to reach recipients. Subclasses implement deliver() only; it returns a small
    JSON-able dict of what happened and raises GiokError on failure."""

    name = ""

    def __init__(self, settings: dict | None = None, home: Home | None = None):
        self.settings = settings or {}
        self.home = home or Home()

    def deliver(self, message: Message, bus: Bus) -> dict:
        raise NotImplementedError


class LocalTransport(Transport):
    """The inbox rows are written with the message; this notes the message in each
    recipient's diary (`memory/YYYY-MM-DD.md`) unless its config says `"diary": false`."""

    name = "local"

    def deliver(self, message: Message, bus: Bus) -> dict:
        noted, skipped, failed = [], [], {}
        for recipient in message.recipients:
            if not bus.diary_enabled(recipient):
                skipped.append(recipient)
                continue
            try:
                line = self._note(recipient, message)
            except GiokError as exc:  # the inbox row stands; the diary note is what failed
                failed[recipient] = str(exc)
                continue
            bus.mark_diary(message.id, recipient, line)
            noted.append(recipient)
        out = {"ok": not failed, "inboxes": list(message.recipients), "diary": noted, "diary_off": skipped}
        if failed:
            out["error"] = "; ".join(f"{k}: {v}" for k, v in failed.items())
        return out

    def _note(self, recipient: str, message: Message) -> str:

        ws = Workspace.open(recipient, home=self.home)
        tag = TAG if templates.language(ws) == "ko" else TAGS[1]  # in the recipient's language
        text = " ".join(message.render(tag).split())
        if len(text) > DIARY_WIDTH:
            text = text[: DIARY_WIDTH - 1] + "…"
        from giok.retrieval.chunks import (
            OWN_MARK,
        )  # marks the note as giok's own line: not a memory (docs/search.md)

        return notes.diary(ws, f"{OWN_MARK} {text} ({message.id})")


class TelegramTransport(Transport):
    """Posts each message to a group chat with the Bot API `sendMessage`.

    Settings (home config `crossview.telegram`): `chat_id` (required), `token_env` (the
    environment variable holding the bot token, default GIOK_TELEGRAM_TOKEN), `base_url`
    (default https://api.telegram.org), `timeout` seconds (default 10)."""

    name = "telegram"

    def deliver(self, message: Message, bus: Bus) -> dict:
        import httpx

        chat_id, token, base = self._config()
        payload: dict[str, Any] = {"chat_id": chat_id, "text": message.render()}
        original = bus.get(message.reply_to).transports.get("telegram", {}) if message.reply_to else {}
        if original.get("message_id"):
            payload["reply_parameters"] = {
                "message_id": original["message_id"],
                "allow_sending_without_reply": True,
            }
        try:
            response = httpx.post(
                f"{base}/bot{token}/sendMessage",
                json=payload,
                timeout=float(self.settings.get("timeout", 10)),
            )
            data = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ProviderError(f"telegram: no answer from {base} ({type(exc).__name__})") from None
        if response.status_code != 200 or not data.get("ok"):
            why = str(data.get("description") or f"HTTP {response.status_code}").replace(token, "***")
            raise ProviderError(f"telegram: sendMessage refused: {why}")
        return {"ok": True, "chat_id": chat_id, "message_id": data.get("result", {}).get("message_id")}

    def _config(self) -> tuple[str, str, str]:
        chat_id = self.settings.get("chat_id")
        if not chat_id:
            raise InvalidInput("telegram transport needs crossview.telegram.chat_id in the home config")
        env = self.settings.get("token_env", "GIOK_TELEGRAM_TOKEN")
        token = secret(env)
        if not token:
            raise InvalidInput(f"telegram transport needs the bot token in ${env}")
        return str(chat_id), token, str(self.settings.get("base_url", "https://api.telegram.org")).rstrip("/")


TRANSPORTS: dict[str, type[Transport]] = {"local": LocalTransport, "telegram": TelegramTransport}


def register_transport(cls: type[Transport]) -> type[Transport]:
    """Add a transport (usable as a class decorator). Third-party packages may instead
    expose one under the `giok.transports` entry-point group."""
    if not cls.name:
        raise InvalidInput("a transport needs a name")
    TRANSPORTS[cls.name] = cls
    return cls


def transport_class(name: str) -> type[Transport]:
    if name not in TRANSPORTS:
        for ep in entry_points(group="giok.transports"):
            if ep.name == name:
                TRANSPORTS[name] = ep.load()
    if name not in TRANSPORTS:
        raise InvalidInput(f"unknown cross-view transport {name!r} (known: {', '.join(sorted(TRANSPORTS))})")
    return TRANSPORTS[name]


# -- the bus ------------------------------------------------------------------------------
FORGOTTEN = "[forgotten]"


def _hash(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).casefold().encode("utf-8")).hexdigest()


def _words(text: str) -> str:
    """The words of a text, NFC and case-folded, one space apart: punctuation, "Re:" spacing
    and line breaks do not hide a copy."""
    return " ".join(re.findall(r"\w+", unicodedata.normalize("NFC", text).casefold()))


def _stamp() -> str:
    return now().isoformat(timespec="seconds")


class Bus:
    """The message log and inboxes of one giok home."""

    def __init__(self, home: Home | None = None):
        self.home = home or Home()
        self.path = self.home.path / "crossview.db"

    @contextlib.contextmanager
    def _db(self, write: bool = False):
        self.home.path.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.executescript(SCHEMA)
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            raise GiokError(f"cross-view bus {self.path}: {exc}") from None
        finally:
            conn.close()

    # -- settings --------------------------------------------------------------------------
    def settings(self) -> dict:
        """The home config's `crossview` setting (transports, diary), `{}` when unset."""
        return self.home.setting("crossview", {}) or {}

    def transports(self) -> list[Transport]:
        """The configured transports, in order (default: local only)."""
        settings = self.settings()
        names = settings.get("transports") or ["local"]
        return [transport_class(n)(settings.get(n, {}), self.home) for n in names]

    def diary_enabled(self, name: str) -> bool:
        """Whether workspace `name` writes received messages to its diary (its own setting wins)."""
        spec = self.home.workspaces().get(name, {})
        own = (spec.get("crossview") or {}).get("diary")
        return bool(self.settings().get("diary", True) if own is None else own)

    # -- sending ---------------------------------------------------------------------------
    def send(self, text: str, sender: str, to: list[str] | None = None, reply_to: str | None = None) -> dict:
        """Post `text` from `sender` to `to` (default: every other workspace), or, with
        `reply_to`, answer that message (to its sender only). Returns the message as a dict
        with what each transport did."""
        text, redacted = redact(clean_text(text, "message", limit=MAX_TEXT, multiline=True))
        sender = self._known(sender)
        with self._db(write=True) as conn:
            if reply_to:
                if to:
                    raise LoopRefused("a reply goes to the original sender only (loop rule); drop --to/--all")
                recipients = self._reply_target(conn, sender, reply_to)
                kind = "reply"
            else:
                self._refuse_relay(conn, sender, text)
                recipients = self._recipients(sender, to)
                kind = "post"
            message = self._insert(conn, sender, kind, text, reply_to, recipients)
        message.transports = self._run_transports(message)
        out = message.to_dict()
        skipped = [n for n in self.home.missing() if n != sender] if not (reply_to or to) else []
        if skipped:  # registered, but the folder is gone: reported, not delivered to
            out["skipped_missing"] = skipped
        if redacted:
            out["redacted"] = sorted(set(redacted))
        return out

    def reply(self, message_id: str, text: str, sender: str) -> dict:
        """Answer a message you received; the answer goes to its sender only."""
        return self.send(text, sender, reply_to=message_id)

    def _known(self, name: str) -> str:
        check_name(name)
        spaces = self.home.workspaces()
        if name not in spaces:
            known = ", ".join(sorted(spaces)) or "none yet"
            raise WorkspaceError(f"unknown workspace {name!r} (known: {known})")
        return name

    def _recipients(self, sender: str, to: list[str] | None) -> list[str]:
        if to:
            names = list(dict.fromkeys(n.strip() for n in to if n and n.strip()))
            if sender in names:
                raise InvalidInput(f"{sender} cannot send a cross-view message to itself")
            missing = set(self.home.missing())
            gone = [n for n in names if n in missing]
            if gone:
                raise WorkspaceError(
                    f"the folder of {', '.join(gone)} is gone: nothing sent "
                    f"(`giok workspaces remove NAME` unregisters it)"
                )
            return [self._known(n) for n in names]
        absent = set(self.home.missing())
        names = sorted(n for n in self.home.workspaces() if n != sender and n not in absent)
        if not names:
            raise InvalidInput(
                f"no other workspace in this home to send to (only {sender})"
                + (f"; folder gone: {', '.join(sorted(absent))}" if absent else "")
            )
        return names

    def _reply_target(self, conn, sender: str, reply_to: str) -> list[str]:
        row = conn.execute("SELECT * FROM messages WHERE id = ?", (reply_to.strip(),)).fetchone()
        if row is None:
            raise NotFound(f"no cross-view message {reply_to}")
        if row["kind"] == "reply":
            raise LoopRefused(f"{reply_to} is already a reply; a reply to a reply is not sent (loop rule)")
        got = conn.execute(
            "SELECT 1 FROM deliveries WHERE message_id = ? AND recipient = ?", (row["id"], sender)
        ).fetchone()
        if not got:
            raise InvalidInput(f"{sender} did not receive {reply_to}; only its recipients can reply to it")
        return [row["sender"]]

    def _refuse_relay(self, conn, sender: str, text: str) -> None:
        folded = text.casefold()
        if any(tag.casefold() in folded for tag in TAGS):
            raise LoopRefused(
                "this text carries the cross-view tag, so it relays a relay; "
                "a relay of a relay is not sent (loop rule)"
            )
        row = conn.execute(
            "SELECT m.id FROM messages m JOIN deliveries d ON d.message_id = m.id "
            "WHERE m.text_hash = ? AND d.recipient = ? LIMIT 1",
            (_hash(text), sender),
        ).fetchone()
        if row is None:
            row = self._received_within(conn, sender, _words(text))
        if row:
            raise LoopRefused(
                f"{sender} received this text as {row['id']}; a relay of a relay is not sent (loop rule)"
            )

    @staticmethod
    def _received_within(conn, sender: str, words: str):
        """A message `sender` received whose words appear, in order, in `words`: all of them for a
        message of two words or more, exactly for one word ("좋아" does not block "좋아하는 …")."""
        if not words:
            return None
        rows = conn.execute(
            "SELECT m.id, m.text FROM messages m JOIN deliveries d ON d.message_id = m.id "
            "WHERE d.recipient = ? ORDER BY m.seq",
            (sender,),
        )
        padded = f" {words} "
        for row in rows:
            received = _words(row["text"])
            if received and (received == words if " " not in received else f" {received} " in padded):
                return row
        return None

    def _insert(self, conn, sender, kind, text, reply_to, recipients) -> Message:
        seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM messages").fetchone()[0]
        message = Message(f"cv-{seq:06d}", sender, kind, text, _stamp(), reply_to, recipients)
        conn.execute(
            "INSERT INTO messages (seq, id, sender, kind, reply_to, text, text_hash, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (seq, message.id, sender, kind, reply_to, text, _hash(text), message.created),
        )
        conn.executemany(
            "INSERT INTO deliveries (message_id, recipient, delivered) VALUES (?, ?, ?)",
            [(message.id, r, message.created) for r in recipients],
        )
        return message

    def _run_transports(self, message: Message) -> dict:
        outcome = {}
        for transport in self.transports():
            try:
                outcome[transport.name] = transport.deliver(message, self)
            except GiokError as exc:
                outcome[transport.name] = {"ok": False, "error": str(exc)}
        with self._db(write=True) as conn:
            conn.execute(
                "UPDATE messages SET transports = ? WHERE id = ?",
                (json.dumps(outcome, ensure_ascii=False), message.id),
            )
        return outcome

    def mark_diary(self, message_id: str, recipient: str, line: str) -> None:
        """Record the diary line a delivery was written as, so it is not written twice."""
        with self._db(write=True) as conn:
            conn.execute(
                "UPDATE deliveries SET diary = ? WHERE message_id = ? AND recipient = ?",
                (line, message_id, recipient),
            )

    # -- reading ---------------------------------------------------------------------------
    def get(self, message_id: str) -> Message:
        """The message with this id; NotFound when there is none."""
        with self._db() as conn:
            row = conn.execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()
            if row is None:
                raise NotFound(f"no cross-view message {message_id}")
            recipients = [
                r[0]
                for r in conn.execute(
                    "SELECT recipient FROM deliveries WHERE message_id = ? ORDER BY recipient", (message_id,)
                )
            ]
        return self._message(row, recipients)

    @staticmethod
    def _message(row, recipients=()) -> Message:
        return Message(
            row["id"],
            row["sender"],
            row["kind"],
            row["text"],
            row["created"],
            row["reply_to"],
            list(recipients),
            json.loads(row["transports"] or "{}"),
        )

    def inbox(self, name: str, unread: bool = False, limit: int = 100) -> list[dict]:
        """Messages delivered to `name`, oldest first (with `unread`: only those not acked)."""
        name = self._known(name)
        if not 1 <= int(limit) <= 10000:
            raise InvalidInput(f"invalid limit {limit}: 1..10000")
        where = "d.recipient = ?" + (" AND d.acked IS NULL" if unread else "")
        with self._db() as conn:
            rows = conn.execute(
                f"SELECT m.*, d.delivered, d.acked, d.diary FROM deliveries d JOIN messages m "
                f"ON m.id = d.message_id WHERE {where} ORDER BY m.seq DESC LIMIT ?",
                (name, int(limit)),
            ).fetchall()
        out = []
        for row in reversed(rows):
            item = self._message(row).to_dict()
            item.pop("recipients")
            item.update(delivered=row["delivered"], acked=row["acked"], diary=row["diary"])
            out.append(item)
        return out

    def ack(self, name: str, ids: list[str] | None = None) -> list[str]:
        """Mark messages read: the given ids, or every unread one. Returns the ids acked now."""
        name = self._known(name)
        with self._db(write=True) as conn:
            if not ids:
                ids = [
                    r[0]
                    for r in conn.execute(
                        "SELECT message_id FROM deliveries WHERE recipient = ? AND acked IS NULL", (name,)
                    )
                ]
            done = []
            for mid in dict.fromkeys(i.strip() for i in ids):
                row = conn.execute(
                    "SELECT acked FROM deliveries WHERE message_id = ? AND recipient = ?", (mid, name)
                ).fetchone()
                if row is None:
                    raise NotFound(f"no cross-view message {mid} in {name}'s inbox")
                if row["acked"] is None:
                    conn.execute(
                        "UPDATE deliveries SET acked = ? WHERE message_id = ? AND recipient = ?",
                        (_stamp(), mid, name),
                    )
                    done.append(mid)
        return done

    def scrub(self, name: str, texts: list[str]) -> int:
        """For `giok forget`: in messages `name` sent or received, replace any text that holds
        one of texts (case-insensitive) with a placeholder, drop the diary lines noted for it,
        and rewrite the file so no byte of the text is left. Returns the messages scrubbed."""
        needles = [t.casefold() for t in texts if t.strip()]
        if not needles or not self.path.exists():
            return 0
        with self._db(write=True) as conn:
            conn.execute("PRAGMA secure_delete=ON")
            rows = conn.execute(
                "SELECT DISTINCT m.id, m.text FROM messages m LEFT JOIN deliveries d "
                "ON d.message_id = m.id WHERE m.sender = ? OR d.recipient = ?",
                (name, name),
            )
            hits = [r["id"] for r in rows if any(n in r["text"].casefold() for n in needles)]
            for mid in hits:
                conn.execute(
                    "UPDATE messages SET text = ?, text_hash = ? WHERE id = ?",
                    (FORGOTTEN, _hash(f"{FORGOTTEN} {mid}"), mid),
                )
                conn.execute("UPDATE deliveries SET diary = NULL WHERE message_id = ?", (mid,))
        if hits:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            try:
                conn.execute("VACUUM")
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                conn.close()
        return len(hits)

    def stats(self) -> dict:
        """Counts for `giok doctor` and `giok crossview`: posts, replies, deliveries."""
        with self._db() as conn:
            messages = conn.execute("SELECT kind, COUNT(*) FROM messages GROUP BY kind").fetchall()
            deliveries = conn.execute("SELECT COUNT(*) FROM deliveries").fetchone()[0]
        counts = {row[0]: row[1] for row in messages}
        return {"posts": counts.get("post", 0), "replies": counts.get("reply", 0), "deliveries": deliveries}


def send(
    text: str, sender: str, to: list[str] | None = None, reply_to: str | None = None, home: Home | None = None
) -> dict:
    return Bus(home).send(text, sender, to=to, reply_to=reply_to)


def reply(message_id: str, text: str, sender: str, home: Home | None = None) -> dict:
    return Bus(home).reply(message_id, text, sender)


def inbox(name: str, unread: bool = False, limit: int = 100, home: Home | None = None) -> list[dict]:
    return Bus(home).inbox(name, unread=unread, limit=limit)


def ack(name: str, ids: list[str] | None = None, home: Home | None = None) -> list[str]:
    return Bus(home).ack(name, ids)


__all__ = [
    "TAG",
    "Bus",
    "LocalTransport",
    "Message",
    "TelegramTransport",
    "Transport",
    "ack",
    "inbox",
    "register_transport",
    "reply",
    "send",
]
