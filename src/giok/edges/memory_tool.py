"""Claude's native memory tool (`memory_20250818`) served from a giok workspace.

Declare the tool as `{"type": "memory_20250818", "name": "memory"}` in a Messages API call and
hand each `tool_use` block to `MemoryTool(ws).tool_result(block)`. Claude sees a `/memories`
directory; it is the workspace itself, so what Claude writes lands in git-versioned giok
files (one commit per change, through `Workspace.edit`), searchable and distilled like the rest.

Commands: view (a directory two levels deep, or a file with line numbers, optionally
`view_range`), create, str_replace, insert, delete, rename; their answers use the wording of
the SDK's reference implementation (`BetaLocalFilesystemMemoryTool`). Paths must start with
`/memories`; traversal (`..`), symlinks out and hidden paths (`.git`, `.giok`) are refused;
only `.md` files are written (the ones giok indexes), other text files are viewed only; the
workspace's own files (SOUL.md, AGENTS.md, MEMORY.md, the state and compound files, …) cannot
be deleted or renamed away. The tool keeps giok's guarantees: MEMORY.md changes only through
the write policy (`insert` there is `remember`, `str_replace` of an entry's text is an update
or, with an empty result, `forget`), the decision log and the diary days only grow at the end,
the archive, the distill ledger and the decision trace are read-only, every text written goes
through `policy.redact`, and a delete or rename whose commit fails is undone.

`giok.edges.anthropic_tool.GiokMemoryTool` plugs this into the SDK's tool runner.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from giok.errors import GiokError, InvalidInput, NotFound
from giok.store import layout
from giok.store.fsutil import MAX_ENTRY_BYTES, confine
from giok.store.layout import ARCHIVE_DIR, MEMORY
from giok.store.memoryfile import MemoryEntry, parse_entry
from giok.workspace import Workspace
from giok.write import policy
from giok.write.visibility import scoped_lines

ROOT = "/memories"
SUFFIXES = (".md", ".txt", ".json", ".xml", ".yaml", ".yml", ".csv")  # what view shows
WRITABLE = (".md",)  # what create, str_replace, insert and rename write: only what search indexes
MAX_FILE_BYTES = 16 * MAX_ENTRY_BYTES


_read_only = layout.is_read_only
_append_only = layout.is_append_only


class MemoryTool:
    """`user` and `thread` say on whose behalf Claude reads: in views of MEMORY.md and the
    archive, entries scoped to another user (default: the name in USER.md) or to a thread
    other than `thread` (default: none) show as a HIDDEN line, so line numbers still match."""

    def __init__(self, ws: Workspace, user: str | None = None, thread: str | None = None):
        self.ws = ws
        self.user = user
        self.thread = thread

    # -- dispatch -----------------------------------------------------------------------------
    def handle(self, params: dict) -> str:
        """Run one command; returns the text for the tool result. Raises GiokError."""
        command = (params or {}).get("command")
        method = (
            getattr(self, f"_{command}", None)
            if command in ("view", "create", "str_replace", "insert", "delete", "rename")
            else None
        )
        if method is None:
            raise InvalidInput(
                f"unknown memory command {command!r}: use view, create, str_replace, insert, delete or rename"
            )
        try:
            return method(params)
        except KeyError as exc:
            raise InvalidInput(f"the {command} command needs `{exc.args[0]}`") from None

    def tool_result(self, block) -> dict:
        """A `tool_result` content block answering a `tool_use` block (dict or SDK object)."""
        get = block.get if isinstance(block, dict) else lambda k, d=None: getattr(block, k, d)
        try:
            return {
                "type": "tool_result",
                "tool_use_id": get("id"),
                "content": self.handle(get("input") or {}),
            }
        except GiokError as exc:
            return {
                "type": "tool_result",
                "tool_use_id": get("id"),
                "content": f"Error: {exc}",
                "is_error": True,
            }

    # -- paths --------------------------------------------------------------------------------
    def _rel(self, path: str, must_exist: bool = True) -> str:
        """`/memories/x/y.md` → `x/y.md` (`""` for the root), confined to the workspace."""
        if not isinstance(path, str) or not (path == ROOT or path.startswith(ROOT + "/")):
            raise InvalidInput(f"path {path!r} must start with {ROOT}")
        rel = path[len(ROOT) :].strip("/")
        if not rel:
            return ""
        if any(part.startswith(".") for part in Path(rel).parts):
            raise InvalidInput(
                f"path {path!r} is hidden or escapes {ROOT}"
                if ".." not in rel
                else f"path {path!r} escapes {ROOT}"
            )
        target = confine(self.ws.root, rel)
        if must_exist and not target.exists():
            raise NotFound(f"The path {path} does not exist. Please provide a valid path.")
        return target.relative_to(self.ws.root.resolve()).as_posix()

    def _file(self, path: str, must_exist: bool = True) -> str:
        """A file the tool may write: confined, not read-only, a `.md` note (giok indexes only
        those, so what Claude writes is searchable)."""
        rel = self._rel(path, must_exist)
        self._writable(path, rel)
        if must_exist and not (self.ws.root / rel).is_file():
            raise InvalidInput(f"The path {path} is not a file.")
        if not rel.endswith(WRITABLE):
            raise InvalidInput(_NOT_MD.format(path=path))
        return rel

    def _unprotected(self, path: str, rel: str) -> None:
        self._writable(path, rel)
        if layout.is_protected(rel):
            raise InvalidInput(f"{path} is one of the workspace's own files; it cannot be deleted or renamed")

    @staticmethod
    def _writable(path: str, rel: str) -> None:
        if _read_only(rel):
            raise InvalidInput(
                f"{path} is kept by giok (the archive, the distill ledger or the decision trace); "
                f"it is read-only here"
            )

    def _editable(self, path: str, rel: str) -> None:
        """Refuse edits that would bypass the write policy (MEMORY.md) or the read-only files."""
        self._writable(path, rel)
        if rel == MEMORY:
            raise InvalidInput(
                f"{path} changes only through giok's write policy: `insert` a line to remember a "
                f"fact, `str_replace` an entry's text to update it (an empty result forgets it); "
                f"outside the memory tool: `giok remember`, `giok forget ID` (MCP: memory_remember, "
                f"memory_forget)"
            )

    # -- commands -----------------------------------------------------------------------------
    def _view(self, p: dict) -> str:
        path = p["path"]
        rel = self._rel(path)
        target = self.ws.root / rel
        if target.is_dir():
            return self._listing(path, target)
        if not rel.endswith(SUFFIXES):
            raise InvalidInput(f"{path} is not a text note: use one of {', '.join(SUFFIXES)}")
        if rel == MEMORY or rel.startswith(ARCHIVE_DIR + "/"):
            lines = self._scoped_lines(target.read_bytes())
        else:
            lines = target.read_text("utf-8", errors="replace").split(
                "\n"
            )  # as the reference: a final newline shows as an empty last line
        start, end = 1, len(lines)
        if p.get("view_range"):
            start, end = _range(p["view_range"], len(lines))
        return f"Here's the content of {path} with line numbers:\n" + _numbered(lines, start, end)

    def _scoped_lines(self, data: bytes) -> list[str]:
        """The file's lines, each entry Claude may not see replaced by HIDDEN (giok.write.visibility)."""
        from giok.lifecycle.boot import default_user

        user = self.user if self.user is not None else default_user(self.ws.read_text("USER.md"))
        return scoped_lines(data, user, self.thread)[0]

    def _listing(self, path: str, folder: Path) -> str:
        """The reference's listing: the folder, then two levels of children by name, folders
        with a trailing `/`, sizes like `4K`, `1.2K`, `13B`; links that lead out of the
        workspace are left out."""
        base, root = path.rstrip("/") or ROOT, self.ws.root.resolve()
        rows = [f"{_size(folder)}\t{base}"]

        def walk(at: Path, rel: str, depth: int) -> None:
            try:
                children = sorted(at.iterdir(), key=lambda c: c.name)
            except OSError:
                return  # an unreadable folder is listed, not entered (as the reference)
            for child in children:
                if child.name.startswith("."):
                    continue
                try:
                    child.resolve().relative_to(root)
                    is_dir = child.is_dir()
                except (ValueError, OSError):
                    continue
                shown = f"{rel}/{child.name}" if rel else child.name
                rows.append(f"{_size(child)}\t{base}/{shown}{'/' if is_dir else ''}")
                if is_dir and depth < 2:
                    walk(child, shown, depth + 1)

        walk(folder, "", 1)
        head = f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
        return "\n".join([head, *rows])

    def _create(self, p: dict) -> str:
        path, text = p["path"], p.get("file_text", "")
        _path_secret(path)
        rel = self._file(path, must_exist=False)
        if rel == MEMORY and (self.ws.root / rel).exists():
            raise InvalidInput(f"File {path} already exists")
        if not text.strip():
            raise InvalidInput("file_text is empty")
        text, found = policy.redact(text)
        _check_size(text)

        def change(old: str):
            if (self.ws.root / rel).exists():
                if _append_only(rel):
                    raise InvalidInput(
                        f"{path} is append-only: add to its end with insert "
                        f"(insert_line = its number of lines)"
                    )
                raise InvalidInput(f"File {path} already exists")
            self._editable(path, rel)
            return text, None

        self.ws.edit(rel, change, f"memory-tool: create {rel}")
        return f"File created successfully at: {path}" + _redacted(found)

    def _str_replace(self, p: dict) -> str:
        path, old_str, new_str = p["path"], p["old_str"], p.get("new_str", "")
        rel = self._file(path)
        if rel == MEMORY:
            return self._memory_replace(path, old_str, new_str or "")
        self._editable(path, rel)
        if _append_only(rel):
            raise InvalidInput(
                f"{path} is append-only: earlier lines are never rewritten; add to its end "
                f"with insert (insert_line = its number of lines)"
            )
        new_str, found = policy.redact(new_str or "")

        def change(old: str):
            count = old.count(old_str) if old_str else 0
            if count == 0:
                raise InvalidInput(
                    f"No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}."
                )
            if count > 1:
                lines = [str(i) for i, line in enumerate(old.splitlines(), 1) if old_str in line]
                raise InvalidInput(
                    f"No replacement was performed. Multiple occurrences of old_str `{old_str}` "
                    f"in lines: {', '.join(lines)}. Please ensure it is unique"
                )
            new = _no_assembled_secret(old, old.replace(old_str, new_str, 1), found)
            _check_size(new)
            return new, old[: old.find(old_str)].count("\n")

        changed, _ = self.ws.edit(rel, change, f"memory-tool: edit {rel}")
        lines = self.ws.read_text(rel).split("\n")
        snippet = _numbered(lines, max(0, changed - 2) + 1, min(len(lines), changed + 3))
        return (
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
            + snippet
            + _redacted(found)
        )

    def _insert(self, p: dict) -> str:
        path, line_no, text = p["path"], p["insert_line"], p.get("insert_text", "")
        rel = self._file(path)
        if rel == MEMORY:
            return self._memory_insert(path, line_no, text or "")
        self._editable(path, rel)
        text, found = policy.redact(text or "")

        def change(old: str):
            lines = _lines(old)
            _check_insert_line(line_no, len(lines))
            if _append_only(rel) and line_no != len(lines):
                raise InvalidInput(
                    f"{path} is append-only: insert only at its end (insert_line {len(lines)})"
                )
            new = "\n".join(lines[:line_no] + text.rstrip("\n").split("\n") + lines[line_no:]) + "\n"
            new = _no_assembled_secret(old, new, found)
            _check_size(new)
            return new, None

        self.ws.edit(rel, change, f"memory-tool: insert into {rel}")
        return f"The file {path} has been edited." + _redacted(found)

    def _delete(self, p: dict) -> str:
        path = p["path"]
        rel = self._rel(path)
        self._unprotected(path, rel)
        with self.ws.transaction(f"memory-tool: delete {rel}", identity=True) as tx:
            target = self.ws.root / rel
            for f in self._files(rel):  # one journaled write: a failed commit or a crash puts every file back
                tx.delete(f)
        if target.is_dir():
            shutil.rmtree(target)  # only folders are left
        return f"Successfully deleted {path}"

    def _rename(self, p: dict) -> str:
        old_path, new_path = p["old_path"], p["new_path"]
        _path_secret(new_path)
        old_rel = self._rel(old_path)
        self._unprotected(old_path, old_rel)
        new_rel = self._rel(new_path, must_exist=False)
        self._writable(new_path, new_rel)
        if layout.is_protected(new_rel):
            raise InvalidInput(f"{new_path} is among the workspace's own files; a file cannot be moved there")
        if (self.ws.root / old_rel).is_file() and not new_rel.endswith(WRITABLE):
            raise InvalidInput(_NOT_MD.format(path=new_path))
        with self.ws.transaction(f"memory-tool: rename {old_rel} → {new_rel}", identity=True) as tx:
            old, new = self.ws.root / old_rel, self.ws.root / new_rel
            if new.exists():
                raise InvalidInput(f"The destination {new_path} already exists")
            for f in self._files(old_rel):
                tx.rename(f, new_rel + f[len(old_rel) :])
        if old.is_dir():
            shutil.rmtree(old)  # only folders are left
        return f"Successfully renamed {old_path} to {new_path}"

    # -- MEMORY.md through the write policy --------------------------------------------------
    def _memory_insert(self, path: str, line_no, text: str) -> str:
        """Each line of insert_text is one `remember` (dedup, supersede, refusals, redaction, a
        commit with the decision), in the layer the judgement gives it, as on every other path:
        the heading above insert_line does not choose it (a line put near the top would be
        permanent M0); a layer tag in the line (#m0, [M90]) does. Where the entry lands is
        giok's: under its layer heading."""
        mf = self.ws.memory()
        _check_insert_line(line_no, len(mf.lines))
        texts = []
        for raw in text.split("\n"):
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
            entry = parse_entry(raw, None)
            texts.append(entry.text if isinstance(entry, MemoryEntry) else raw.strip().lstrip("-*+ ").strip())
        if not texts:
            raise InvalidInput("insert_text holds no memory: give one fact per line")
        done = [self.ws.remember(t, source=f"memory-tool:{path}", via="memory-tool") for t in texts]
        return f"The file {path} has been edited." + _policy_report(done)

    def _memory_replace(self, path: str, old_str: str, new_str: str) -> str:
        """old_str must lie, once, inside one entry's text that this reader may see. The entry
        is updated through `remember` (its layer, type and scope kept; the new entry
        supersedes it) or, when its text becomes empty, forgotten."""
        mf = self.ws.memory()
        raw = self.ws.root.joinpath(MEMORY).read_bytes().decode("utf-8", "surrogateescape")
        count = raw.count(old_str) if old_str else 0
        if count == 0:
            raise InvalidInput(
                f"No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}."
            )
        if count > 1:
            lines = [str(i) for i, line in enumerate(raw.split("\n"), 1) if old_str in line]
            raise InvalidInput(
                f"No replacement was performed. Multiple occurrences of old_str `{old_str}` "
                f"in lines: {', '.join(lines)}. Please ensure it is unique"
            )
        entry = next(
            (line for line in mf.lines if isinstance(line, MemoryEntry) and old_str in line.text), None
        )
        if entry is None or not self._may_see(entry):
            raise InvalidInput(
                f"No replacement was performed: in {path} only the text of one entry can be replaced "
                f"(headings and the `<!-- … -->` fields are giok's); `insert` a line to add a fact"
            )
        text = entry.text.replace(old_str, new_str, 1)
        if not text.strip():
            self.ws.forget(entry.id, reason=f"memory tool: str_replace emptied it ({path})")
            return f"The memory file has been edited. giok's write policy: forgot {entry.id}."
        result = self.ws.remember(
            text,
            layer=entry.layer if entry.headed else None,
            type=entry.type,
            scope=entry.scope,
            source=f"memory-tool:{path}",
            via="memory-tool",
            supersedes=entry.id,  # one commit: the new entry and the old one's mark
        )
        report = _policy_report([result])
        return "The memory file has been edited." + report

    def _may_see(self, entry: MemoryEntry) -> bool:
        from giok.lifecycle.boot import default_user

        user = self.user if self.user is not None else default_user(self.ws.read_text("USER.md"))
        return entry.scope.startswith("task:") or policy.visible(entry.scope, user, self.thread)

    def _files(self, rel: str) -> list[str]:
        """The files at rel (itself, or every file under the folder); a symlink is refused."""
        target = self.ws.root / rel
        if target.is_symlink():
            raise InvalidInput(f"/memories/{rel} is a symlink: giok does not move or delete links")
        if not target.is_dir():
            return [rel]
        out = []
        for folder, dirs, names in os.walk(target):
            for name in dirs + names:
                if os.path.islink(os.path.join(folder, name)):
                    raise InvalidInput(
                        f"/memories/{rel} holds a symlink ({name}): giok does not move or delete links"
                    )
            out += [Path(folder, n).relative_to(self.ws.root).as_posix() for n in names]
        return sorted(out)


def _no_assembled_secret(old: str, new: str, found: list[str]) -> str:
    """The edited file, redacted whole when the edit completes a secret that neither the old
    file nor the (already redacted) new text held alone, e.g. a key's tail next to its prefix."""
    redacted, kinds = policy.redact(new)
    if len(kinds) > len(policy.redact(old)[1]):
        found.extend(kinds)
        return redacted
    return new


def _path_secret(path: str) -> None:
    if policy.redact(path)[1]:
        raise InvalidInput(
            "the path looks like it holds a secret (a key or password); name the file otherwise"
        )


def _redacted(found: list[str]) -> str:
    return f" Secrets were redacted before saving: {', '.join(dict.fromkeys(found))}." if found else ""


_WROTE = ("written", "superseded")
_NOT_MD = "{path} is not a text note giok can search: memory files end in .md (only those are indexed)"


def _policy_report(results) -> str:
    """` giok's write policy: added m-1 (M30); duplicate of m-2; …` for remember results."""
    parts = []
    for r in results:
        eid = f" {r.entry.id}" if r.entry is not None else ""
        layer = f" ({r.entry.layer})" if r.entry is not None and r.action in _WROTE else ""
        parts.append(
            f"{r.action}{eid}{layer}"
            + (f" ({r.reason})" if r.reason and r.action not in _WROTE else "")
            + "".join(f", {n}" for n in r.notes if "redacted" in n or "superseded by" in n)
        )
    report = " giok's write policy: " + "; ".join(parts) + "."
    if not any(r.action in _WROTE for r in results):
        raise InvalidInput("No change was made to MEMORY.md." + report)
    return report


def _lines(text: str) -> list[str]:
    """The reference's lines: split on LF only, no empty tail after a final newline."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _numbered(lines: list[str], start: int, end: int) -> str:
    return "\n".join(f"{i:6d}\t{lines[i - 1]}" for i in range(start, end + 1))


def _check_insert_line(line_no, total: int) -> None:
    if isinstance(line_no, bool) or not isinstance(line_no, int) or not 0 <= line_no <= total:
        raise InvalidInput(
            f"Invalid `insert_line` parameter: {line_no}. It should be within the range [0, {total}]."
        )


def _range(view_range, total: int) -> tuple[int, int]:
    """As the reference: start below 1 reads from 1, end -1 or past the end reads to the end."""
    try:
        start, end = (int(v) for v in view_range)
    except (TypeError, ValueError):
        raise InvalidInput(f"invalid view_range {view_range!r}: give [start, end], 1-based") from None
    start = max(1, start)
    end = total if end == -1 else min(end, total)
    return start, end


def _size(path: Path) -> str:
    """The reference's size: `0B`, `512B`, `4K`, `1.5K`, `2M`."""
    size = path.stat().st_size
    if size == 0:
        return "0B"
    unit = min((size.bit_length() - 1) // 10, 3)
    value = size / 1024**unit
    return f"{int(value) if value == int(value) else f'{value:.1f}'}{'BKMG'[unit]}"


def _check_size(text: str) -> None:
    if "\x00" in text:
        raise InvalidInput("file text contains binary characters")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise InvalidInput(f"file text is over {MAX_FILE_BYTES} bytes; keep memory notes short")
