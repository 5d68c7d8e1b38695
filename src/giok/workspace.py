"""`giok.Workspace`: the public workspace, a facade above the layers.

The store-level `giok.store.workspace.Workspace` opens, locks, reads and writes the files in
one transaction; it knows nothing of the features built on it. This class adds them by
calling down into the layers: remember / edit / move through the write policy
(giok.write.remember), the notes (giok.write.notes), forget (giok.write.forget, then the
search index and the cross-view bus), search and recall (giok.retrieval.search). Nothing
below this module imports it (docs/architecture.md)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Unpack

from giok.store import workspace as store
from giok.store.workspace import WriteResult

if TYPE_CHECKING:
    from giok.retrieval.search import Recall, Result, SearchOptions
    from giok.write.forget import Forgotten
    from giok.write.notes import Lesson

__all__ = ["Workspace", "WriteResult"]


class Workspace(store.Workspace):
    """One agent's workspace: markdown files under git, with giok's memory operations."""

    # -- MEMORY.md through the write policy (giok.write.remember) --------------------------
    def remember(
        self,
        text: str,
        *,
        layer: str | None = None,
        expires: str | dt.date | None = None,
        type: str | None = None,
        scope: str | None = None,
        source: str | None = None,
        confidence: float | None = None,
        force: bool = False,
        user: str | None = None,
        thread: str | None = None,
        task: str | None = None,
        via: str | None = "api",
        date: str | dt.date | None = None,
        supersedes: str | None = None,
        voice: str = "note",
        nearest: Callable[[str], list[str]] | None = None,
        apart: Collection[str] = (),
    ) -> WriteResult:
        """Decide (giok.write.policy), then add an entry to MEMORY.md and commit, with the decision in
        the commit message. Greetings, questions and guesses are refused (force=True overrides);
        an exact duplicate is not written again; an update or contradiction supersedes the old
        entry; secrets are redacted first. Layer: M30 unless given; an entry that supersedes
        another keeps at least that one's layer unless `layer` or `expires` is given (a note
        says so). `date`: the day of the event (not in the future), shown as the entry's date;
        the expiry still counts from today. Default expiry: today + the layer's days.
        `supersedes`: the id of an entry the new one replaces (marked in the same commit), when
        the policy did not find it an update by itself. `voice`: "chat" for what was said in a
        conversation (giok.write.judgement). `nearest`: the ids of the entries nearest to a text
        in meaning, for a configured LLM panel (default: this workspace's search). `apart`: ids
        of entries the text does not replace (the points one flush keeps of a talk). See
        giok.write.remember.remember."""
        from giok.write import remember as remembering

        def searched(found: str) -> list[str]:  # asked only where an LLM panel is configured
            from giok.retrieval import search

            return search.nearest_entries(self, found)

        return remembering.remember(
            self,
            text,
            layer=layer,
            expires=expires,
            type=type,
            scope=scope,
            source=source,
            confidence=confidence,
            force=force,
            user=user,
            thread=thread,
            task=task,
            via=via,
            date=date,
            supersedes=supersedes,
            voice=voice,
            nearest=nearest or searched,
            apart=apart,
        )

    def edit_entry(
        self, entry_id: str, text: str, *, reason: str | None = None, force: bool = False
    ) -> WriteResult:
        """Replace the text of entry `entry_id`, keeping its id, layer, dates and fields; the old
        text stays in git history. The new text goes through the write policy first (checked
        against the other entries): a greeting, question or guess is refused (force=True
        overrides), a duplicate of another entry is refused, secrets are redacted. Returns
        action edited, refused, duplicate or unchanged."""
        from giok.write import remember as remembering

        return remembering.edit_entry(self, entry_id, text, reason=reason, force=force)

    def move_entry(self, entry_id: str, layer: str, *, reason: str | None = None) -> WriteResult:
        """Move entry `entry_id` to `layer` (promote to a deeper layer, demote to a shallower
        one), keeping its id and text. The expiry is recomputed for the new layer, counted from
        today (M0 has none). The reason goes into the commit message. Returns action promoted,
        demoted or unchanged."""
        from giok.write import remember as remembering

        return remembering.move_entry(self, entry_id, layer, reason=reason)

    def forget(
        self,
        entry_id: str | None = None,
        reason: str = "",
        *,
        match: str | None = None,
        purge: bool = False,
        rewrite_history: bool = False,
        dry_run: bool = False,
    ) -> WriteResult:
        """Forget an entry (by id) or every line holding `match`: from the files, the search
        index, the embedding cache and .giok/ caches, in one commit whose message carries the
        reason. purge reports the commits still holding it; rewrite_history removes it from git
        history too. See giok.write.forget."""
        from giok.write import forget as forgetting

        done = forgetting.forget(
            self,
            entry_id,
            reason,
            match=match,
            purge=purge,
            rewrite_history=rewrite_history,
            dry_run=dry_run,
            purge_index=_purge_index,
            scrub_bus=_scrub_crossview,
        )
        notes_ = [f"{'would remove' if dry_run else 'removed'} {r['path']}:{r['line']}" for r in done.removed]
        if done.index_chunks is not None:
            notes_.append(f"search index: {done.index_chunks} chunk(s) purged")
        notes_ += [f"cache scrubbed: {c}" for c in done.caches] + done.notes
        if done.tombstones:  # written with the commit (not in a dry run)
            notes_.append(f"tombstone: {', '.join(done.tombstones)} in state/tombstones.txt")
        if done.history:
            notes_.append(
                f"git history: {len(done.history['commits'])} commit(s) hold it"
                + (" (rewritten)" if done.history.get("rewritten") else "")
                + f"; {done.history['how']}"
            )
        action = "unchanged" if dry_run else "removed"
        return WriteResult(action, done.entry, done.reason, done.commit, tuple(notes_))

    # -- the notes (giok.write.notes) -----------------------------------------------------
    def diary(self, text: str, when: dt.datetime | None = None) -> str:
        """Append a timestamped line to today's diary; earlier lines are never rewritten."""
        from giok.write import notes

        return notes.diary(self, text, when)

    def lesson(self, title: str, body: str) -> Lesson:
        """Add (or extend) a lesson in compound/lessons.md; returns its heading and whether it
        was added, appended or unchanged."""
        from giok.write import notes

        return notes.lesson(self, title, body)

    def decide(self, text: str, why: str, supersedes: str | None = None) -> str:
        """Append D-NNN with date and reason; earlier entries are never edited."""
        from giok.write import notes

        return notes.decide(self, text, why, supersedes)

    def task_add(self, text: str) -> str:
        """Add a todo to state/tasks.md and commit; returns its new id (T-001, …)."""
        from giok.write import notes

        return notes.task_add(self, text)

    def task_move(self, task_id: str, status: str, note: str | None = None) -> dict:
        """Move task `task_id` to `status` (optionally noting why) and commit; returns id, status, text."""
        from giok.write import notes

        return notes.task_move(self, task_id, status, note)

    def state_set(self, section: str, text: str) -> dict[str, str]:
        """Replace one section of the state memo (state/memo.md) and commit; returns the memo's sections."""
        from giok.write import notes

        return notes.state_set(self, section, text)

    def heartbeat_add(self, text: str) -> str:
        """Add an item to HEARTBEAT.md and commit; returns the item."""
        from giok.write import notes

        return notes.heartbeat_add(self, text)

    def heartbeat_done(self, item: str) -> str:
        """Remove an open item, by its 1-based number or by its exact text."""
        from giok.write import notes

        return notes.heartbeat_done(self, item)

    # -- search (giok.retrieval.search) ---------------------------------------------------
    def check(self) -> list[dict]:
        """Problems in the files (giok.store.workspace), and the lines that hold a secret: giok
        never writes one, but a teammate's push or a hand edit can (giok.write.policy's detector)."""
        from giok.write.policy import stored_secrets

        return super().check() + stored_secrets(self.root)

    def search(self, query: str, k: int = 5, **opts: Unpack[SearchOptions]) -> list[Result]:
        """Hybrid search of this workspace (or of `workspaces=[...]`): the `k` best results
        above the cut-offs, best first. The options are `giok.retrieval.search.Options`'s
        (mode, user, thread, all_scopes, min_score, ...; an unknown one is InvalidInput)."""
        from giok.retrieval import search

        return search.search(self, query, k, **opts)

    def recall(self, query: str, k: int = 5, **opts: Unpack[SearchOptions]) -> Recall:
        """The seed's agentic recall: decide, search, retry once, else "no memory"; the options
        are search's."""
        from giok.retrieval import search

        return search.recall(self, query, k, **opts)


def _purge_index(ws: store.Workspace, done: Forgotten) -> int | None:
    """Forget's text, id and files leave the search index (or wait in .giok/ when it is busy)."""
    from giok.retrieval import index
    from giok.write.forget import needles

    ids = [done.entry.id] if done.entry else []
    paths = sorted({r["path"] for r in done.removed})
    try:
        return index.purge(ws, needles(done), ids=ids, paths=paths)
    except index.IndexBusy:
        done.notes.append(
            "warning: the search index is busy (another giok process is syncing it); the purge is "
            "recorded in .giok/ and runs before the next search returns anything"
        )
        return None


def _scrub_crossview(ws: store.Workspace, done: Forgotten) -> list[str]:
    """Messages this workspace sent or received through the home's cross-view bus."""
    from giok.lifecycle.crossview import Bus
    from giok.write.forget import needles

    bus = Bus(ws.home)
    count = bus.scrub(ws.name, needles(done))
    return [f"{bus.path}: {count} message(s)"] if count else []
