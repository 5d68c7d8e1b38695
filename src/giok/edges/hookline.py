"""The `giok` command's front door: a prompt hook is handed to a running giok when there is one.

Claude Code runs `giok hook UserPromptSubmit` on every prompt. Run in full, that command imports
the CLI, numpy and the search modules and loads the embedding model: about 0.3 s of CPU a
prompt. The plugin's `giok mcp` server has all of that loaded already, so it also listens on a
Unix socket of the home (giok.edges.hookserver), and this module, which imports nothing but
the standard library's small parts, asks it first:

1. `main` recognises exactly `giok [-w W] hook [UserPromptSubmit] [--budget N] [-w W]` (any
   other command line goes straight to the CLI);
2. it reads the hook's input from stdin, connects to the socket of the home the environment
   names (`giok.locations`), sends one JSON request (the event, the workspace asked for, the
   budget, the folder, the giok part of the environment and the input) and prints the answer;
3. when there is no socket, nobody listens on it, or the server declines (another
   environment, an event it does not serve, its model still loading), the CLI runs as before,
   in this process, with the same input. The answer is the same either way; only its cost
   differs.

$GIOK_HOOK_SOCKET=0 turns this off on both sides.
"""

from __future__ import annotations

import json
import os
import sys

from giok.locations import home_dir, hook_socket, private_dir

SERVED = ("UserPromptSubmit",)  # the events a running giok answers (every prompt: the costly one)
PROTOCOL = 1
CONNECT_TIMEOUT = 2.0  # seconds to reach a listening server
ANSWER_TIMEOUT = 25.0  # seconds to wait for its answer (Claude Code gives the hook 30)
STDIN_WAIT = 1.0  # seconds to wait for a hook's input before taking it as empty (cli.hooks)
MAX_REQUEST = 4 << 20  # bytes: a larger prompt is left to the CLI
# The environment the server must share with the hook for its answer to be the one the CLI
# would give (giok.settings reads these, with the clock and the tokenizer giok reads at use).
ENV_PREFIXES = ("GIOK_", "GIT_")
ENV_NAMES = ("HOME", "XDG_DATA_HOME", "CLAUDE_CONFIG_DIR", "TMPDIR", "TIKTOKEN_CACHE_DIR")


def enabled(env) -> bool:
    return env.get("GIOK_HOOK_SOCKET", "1").strip() != "0"


def environment(env) -> dict[str, str]:
    """The part of an environment a hook's answer depends on."""
    return {k: v for k, v in env.items() if k.startswith(ENV_PREFIXES) or k in ENV_NAMES}


def parse(argv: list[str]) -> dict | None:
    """{"workspace": W or None, "event": E, "budget": B or None} for a `giok hook` command line
    this module may answer, else None (the CLI takes it, help and errors included)."""
    found: dict = {"workspace": None, "event": "", "budget": None}
    seen_hook, i = False, 0
    while i < len(argv):
        arg = argv[i]
        key, value = None, None
        if arg in ("-w", "--workspace", "--budget"):
            if i + 1 >= len(argv):
                return None
            key, value, i = arg, argv[i + 1], i + 2
        elif arg.startswith("--workspace="):
            key, value, i = "-w", arg.partition("=")[2], i + 1
        elif arg.startswith("--budget="):
            key, value, i = "--budget", arg.partition("=")[2], i + 1
        elif arg.startswith("-w") and len(arg) > 2:
            key, value, i = "-w", arg[2:], i + 1
        elif arg == "hook" and not seen_hook:
            seen_hook, i = True, i + 1
            continue
        elif seen_hook and not found["event"] and not arg.startswith("-"):
            found["event"], i = arg, i + 1
            continue
        else:
            return None
        if key == "--budget":
            if not seen_hook or found["budget"] is not None:
                return None
            found["budget"] = value
        elif found["workspace"] is not None:
            return None  # -w twice: the CLI's error
        else:
            found["workspace"] = value
    if not seen_hook or found["event"] not in ("", *SERVED):
        return None
    return found


def _workspace_spec(spec: str | None) -> str | None:
    """A path is sent absolute (the server runs elsewhere); a name as it is."""
    if spec and ("/" in spec or spec.startswith((".", "~"))):
        return os.path.abspath(os.path.expanduser(spec))
    return spec


def read_input(wait: float = STDIN_WAIT) -> str | None:
    """The hook's input as the CLI would read it ('' for none), or None for a terminal."""
    import select

    stdin = sys.stdin
    if stdin is None or stdin.isatty():
        return None
    try:
        ready, _, _ = select.select([stdin], [], [], wait)
    except (OSError, ValueError):
        ready = [stdin]
    return stdin.read() if ready else ""


def ask(request: dict, env, timeout: float = ANSWER_TIMEOUT) -> dict | None:
    """The running giok's answer to `request`, or None when none answers."""
    import socket

    path = hook_socket(home_dir(env), env)
    if not private_dir(os.path.dirname(path)):
        return None
    payload = (json.dumps(request, ensure_ascii=False) + "\n").encode("utf-8")
    if len(payload) > MAX_REQUEST:
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        try:
            conn.settimeout(CONNECT_TIMEOUT)
            conn.connect(path)
        except OSError:  # no server, or a stale socket: the CLI's turn
            return None
        try:
            conn.settimeout(timeout)
            conn.sendall(payload)
            conn.shutdown(socket.SHUT_WR)
            chunks = []
            while chunk := conn.recv(65536):
                chunks.append(chunk)
        except TimeoutError:  # a server too busy to answer: doing the work here too would be later still
            late = f"giok hook: the running giok mcp gave no answer within {timeout:g} s; nothing added\n"
            return {"stdout": "", "stderr": late}
        except OSError:  # a server gone mid-answer
            return None
    try:
        answer = json.loads(b"".join(chunks))
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def answer_hook(argv: list[str], env) -> tuple[bool, str | None]:
    """Answer the hook command `argv` through a running giok. Returns (answered, input): when
    answered, its output is printed; else `input` is what was read from stdin for the CLI to
    read again (None when stdin was not read)."""
    found = parse(argv) if enabled(env) else None
    if found is None:
        return False, None
    raw = read_input()
    if raw is None:
        return False, None
    request = {
        "v": PROTOCOL,
        "event": found["event"],
        "workspace": _workspace_spec(found["workspace"]),
        "budget": found["budget"],
        "cwd": os.getcwd(),
        "env": environment(env),
        "input": raw,
    }
    answer = ask(request, env)
    if answer is None or "fallback" in answer:
        return False, raw
    sys.stderr.write(str(answer.get("stderr") or ""))
    sys.stdout.write(str(answer.get("stdout") or ""))
    return True, raw


def main() -> None:
    """The `giok` command."""
    answered, raw = answer_hook(sys.argv[1:], os.environ)
    if answered:
        sys.stdout.flush()
        return
    if raw is not None:  # the input was read here: the CLI reads it again from memory
        import io

        sys.stdin = io.StringIO(raw)
    from giok.edges.cli import main as cli

    cli()
