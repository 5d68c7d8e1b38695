"""Where the giok home is and where a running giok listens for hooks, from the environment alone.

Standard library only, and none of the heavy part of it: `giok hook UserPromptSubmit` runs on
every prompt and finds the running giok here before it imports anything else
(giok.edges.hookline). `giok.settings` builds its `home` from `home_dir` too, so both agree.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping

HOOK_SOCKET = "hook.sock"  # in <home>/run/: the socket a running `giok mcp` answers hooks on
HOOK_LOCK = "hook.lock"  # in <home>/run/: held (flock) by the process that owns the socket
SOCKET_MAX = 100  # bytes: an AF_UNIX path must fit in sun_path (108 on Linux, 104 on macOS)


def home_dir(env: Mapping[str, str]) -> str:
    """The giok home: $GIOK_HOME, else $XDG_DATA_HOME/giok, else ~/.local/share/giok (resolved)."""
    given = env.get("GIOK_HOME")
    if given:
        return os.path.realpath(os.path.expanduser(given))
    base = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(os.path.realpath(base), "giok")


def run_dir(home: str) -> str:
    """The home's folder for what lives only while a process runs (the hook socket, its lock)."""
    return os.path.join(home, "run")


def hook_socket(home: str, env: Mapping[str, str]) -> str:
    """The path of the hook socket of `home`: <home>/run/hook.sock, or, when that is too long
    for an AF_UNIX address, a name derived from the home in a private folder of the user's
    under the temporary folder ($TMPDIR, else /tmp; `private_dir` checks it)."""
    path = os.path.join(run_dir(home), HOOK_SOCKET)
    if len(os.fsencode(path)) <= SOCKET_MAX:
        return path
    import hashlib

    digest = hashlib.sha256(os.fsencode(home)).hexdigest()[:24]
    return os.path.join(env.get("TMPDIR") or "/tmp", f"giok-{os.getuid()}", f"{digest}.sock")


def hook_lock(home: str) -> str:
    return os.path.join(run_dir(home), HOOK_LOCK)


def private_dir(path: str, create: bool = False) -> bool:
    """Whether folder `path` is the user's own and closed to everyone else (mode 0700): the
    only place a hook socket may be. With `create`, a missing folder is made so."""
    if create:
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
        except OSError:
            return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) == 0o700
