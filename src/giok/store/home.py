"""The giok home: a directory with config.json naming the workspaces (name → path) and
home-wide settings (embeddings, judges, permissions). `$GIOK_HOME` overrides the default
per-user data directory."""

from __future__ import annotations

import json
from pathlib import Path

from giok.errors import InvalidInput, WorkspaceError
from giok.settings import Settings
from giok.store.fsutil import atomic_write, file_lock
from giok.text.lazy import lazy

NAME_RE = lazy(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_name(name: str) -> str:
    if not name or not NAME_RE.match(name) or ".." in name:
        raise InvalidInput(
            f"invalid workspace name {name!r}: use letters, digits, '.', '_' or '-' (no paths, no '..')"
        )
    return name


class Home:
    """The home directory and its config. Every change to the config is made under the
    home lock and written atomically."""

    def __init__(self, path: Path | None = None, settings: Settings | None = None):
        self.settings = settings or Settings.from_env()  # what this process was started with
        self.path = Path(path).resolve() if path else self.settings.home

    @property
    def config_path(self) -> Path:
        """The home's config.json (it may not exist yet)."""
        return self.path / "config.json"

    def config(self) -> dict:
        """The home config as read now (`workspaces` always present); bad JSON → WorkspaceError."""
        try:
            data = json.loads(self.config_path.read_text("utf-8"))
        except FileNotFoundError:
            return {"workspaces": {}}
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise WorkspaceError(f"{self.config_path} is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise WorkspaceError(f"{self.config_path} must hold a JSON object")
        data.setdefault("workspaces", {})
        return data

    def update(self, change) -> dict:
        """Apply change(config) under the home lock and save."""
        self.path.mkdir(parents=True, exist_ok=True)
        with file_lock(self.path / ".lock"):
            config = self.config()
            change(config)
            atomic_write(self.config_path, (json.dumps(config, indent=2, ensure_ascii=False) + "\n").encode())
        return config

    def workspaces(self) -> dict[str, dict]:
        """Registered workspaces: name → its settings (`path` and the rest)."""
        return self.config()["workspaces"]

    def register(self, name: str, path: Path, **settings) -> None:
        """Register (or update) workspace `name` at `path` with `settings`; a path or name already
        taken by another workspace → WorkspaceError."""
        check_name(name)
        path = Path(path).resolve()

        def change(config):
            for other, spec in config["workspaces"].items():
                if other != name and Path(spec["path"]) == path:
                    raise WorkspaceError(f"{path} is already registered as workspace {other!r}")
            spec = config["workspaces"].get(name, {})
            if spec and Path(spec["path"]) != path:
                raise WorkspaceError(f"workspace name {name!r} is taken by {spec['path']}")
            spec.update({"path": str(path), **settings})
            config["workspaces"][name] = spec

        self.update(change)

    def unregister(self, name: str) -> dict:
        """Take workspace `name` out of the home; returns its settings. Its folder is not touched."""
        removed: dict = {}

        def change(config):
            if name not in config["workspaces"]:
                known = ", ".join(sorted(config["workspaces"])) or "none yet"
                raise WorkspaceError(f"unknown workspace {name!r} (known: {known})")
            removed.update(config["workspaces"].pop(name))

        self.update(change)
        return removed

    def missing(self) -> list[str]:
        """Registered workspaces whose folder is gone (deleted or moved), sorted."""
        return sorted(n for n, spec in self.workspaces().items() if not Path(spec["path"]).is_dir())

    def reclaim(self, name: str) -> str | None:
        """Free `name` when its folder is gone: unregister it and return the old path (else None)."""
        spec = self.workspaces().get(name)
        if spec is None or Path(spec["path"]).is_dir():
            return None
        self.unregister(name)
        return spec["path"]

    def name_for(self, path: Path) -> str | None:
        """The registered name of the workspace at `path`, or None."""
        path = Path(path).resolve()
        for name, spec in self.workspaces().items():
            if Path(spec["path"]) == path:
                return name
        return None

    def setting(self, key: str, default=None):
        """A top-level key of the home config, or `default`."""
        return self.config().get(key, default)
