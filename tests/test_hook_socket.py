"""The prompt hook asks the running `giok mcp` (giok.edges.hookline, giok.edges.hookserver).

Claude Code runs `giok hook UserPromptSubmit` on every prompt. With the plugin's MCP server
running, the hook hands the prompt to it over a Unix socket of the home and prints its answer,
which is the answer the CLI gives, without loading the CLI, numpy or the model. Whenever the
server cannot give that same answer (none running, another environment, a folder others can
enter), the hook runs in full, as before.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from giok import Workspace
from giok.edges import hookline
from giok.locations import hook_socket, run_dir
from raw_mcp import RawServer

TIMEOUT = 300
QUESTION = "what did we decide about the SQLite index?"

# The hook as Claude Code runs it, reporting afterwards (stderr, last line) whether it loaded
# numpy or the CLI: a hook answered by the server loads neither.
CLIENT = (
    "import sys\n"
    "from giok.edges import hookline\n"
    "try:\n"
    "    hookline.main()\n"
    "finally:\n"
    "    print('loaded:', 'numpy' in sys.modules, 'giok.edges.cli' in sys.modules, file=sys.stderr)\n"
)


def _env(giok_home, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "GIOK_HOOK_SOCKET"}
    return {
        **env,
        "GIOK_HOME": str(giok_home.path),
        "GIOK_EMBEDDINGS": "fake",
        "GIOK_MCP_WAIT": "600",
        **extra,
    }


class Server(RawServer):
    """`giok mcp -w bench`, driven by raw JSON-RPC lines over stdio."""

    def __init__(self, env: dict, cwd: Path):
        super().__init__(env, cwd, "bench", quiet=True)

    def start(self) -> Server:
        """The handshake, then one recall, which waits for the warm-up ($GIOK_MCP_WAIT)."""
        self.handshake()
        answer = self.call("memory_recall", {"query": QUESTION})
        assert answer["structuredContent"]["answer"] == "found"
        return self


@pytest.fixture
def bench(tmp_path, giok_home) -> Workspace:
    ws, _ = Workspace.init(tmp_path / "bench", name="bench", home=giok_home)
    ws.remember("Seojun prefers short answers with the result first.", layer="M365")
    ws.decide("Use SQLite with FTS5 for the memory index", why="one file, no server")
    return ws


def hook(env: dict, cwd: Path, prompt: str = QUESTION, *args: str) -> tuple[str, bool]:
    """(what the hook printed on stdout, whether it ran in full: loaded numpy or the CLI)."""
    data = json.dumps({"prompt": prompt, "session_id": "s1", "hook_event_name": "UserPromptSubmit"})
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, "-w", "bench", "hook", "UserPromptSubmit", *args],
        input=data,
        text=True,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    loaded = done.stderr.strip().splitlines()[-1]
    return done.stdout, loaded != "loaded: False False"


def listening(path: str) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        try:
            conn.connect(path)
        except OSError:
            return False
    return True


def wait_until(check, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not check():
        assert time.monotonic() < deadline, f"waited {TIMEOUT} s for {what}"
        time.sleep(0.05)


def test_a_prompt_hook_is_answered_by_the_running_server_as_the_cli_answers_it(tmp_path, giok_home, bench):
    env = _env(giok_home)
    server = Server(env, tmp_path).start()
    try:
        wait_until(lambda: listening(hook_socket(str(giok_home.path), os.environ)), "the hook socket")
        served, in_full = hook(env, tmp_path)
        assert not in_full  # neither numpy nor the CLI was loaded
        assert "Use SQLite with FTS5" in json.loads(served)["hookSpecificOutput"]["additionalContext"]
        alone, in_full = hook({**env, "GIOK_HOOK_SOCKET": "0"}, tmp_path)
        assert in_full
        assert served == alone  # the same answer, byte for byte
        assert bench.layout.prompt_file("s1").read_text("utf-8") == QUESTION  # and the same side effect
        quiet, in_full = hook(env, tmp_path, "fix the failing test in parser.py")
        assert (quiet, in_full) == ("", False)  # an instruction: nothing to add, served all the same
        small, _ = hook(env, tmp_path, QUESTION, "--budget", "5")
        assert small == ""  # the budget travels with the request
    finally:
        server.close()
    assert not os.path.exists(hook_socket(str(giok_home.path), os.environ))  # given up at exit
    answer, in_full = hook(env, tmp_path)
    assert in_full and "Use SQLite with FTS5" in answer  # no server: the hook does the work itself


def test_a_hook_of_another_environment_runs_in_full(tmp_path, giok_home, bench):
    env = _env(giok_home)
    server = Server(env, tmp_path).start()
    try:
        wait_until(lambda: listening(hook_socket(str(giok_home.path), os.environ)), "the hook socket")
        answer, in_full = hook({**env, "GIOK_NOW": "2027-01-01T09:00"}, tmp_path)
        assert in_full  # its clock differs from the server's: the server declines
        assert "Use SQLite with FTS5" in answer
    finally:
        server.close()


def test_when_the_serving_process_dies_another_takes_the_socket_over(tmp_path, giok_home, bench):
    env = _env(giok_home)
    path = hook_socket(str(giok_home.path), os.environ)
    first = Server(env, tmp_path).start()
    second = None
    try:
        wait_until(lambda: listening(path), "the hook socket")
        second = Server(env, tmp_path).start()  # waits for the first's lock
        first.proc.send_signal(signal.SIGKILL)  # no clean exit: its socket file stays behind
        first.proc.wait(TIMEOUT)
        wait_until(lambda: listening(path), "the second server to take the socket")
        answer, in_full = hook(env, tmp_path)
        assert not in_full and "Use SQLite with FTS5" in answer
    finally:
        first.close()
        if second is not None:
            second.close()


def test_the_socket_is_the_users_alone(tmp_path, giok_home, bench):
    env = _env(giok_home)
    path = hook_socket(str(giok_home.path), os.environ)
    server = Server(env, tmp_path).start()
    try:
        wait_until(lambda: listening(path), "the hook socket")
        assert os.stat(path).st_mode & 0o777 == 0o600
        assert os.stat(os.path.dirname(path)).st_mode & 0o777 == 0o700
        assert os.stat(run_dir(str(giok_home.path))).st_mode & 0o777 == 0o700
        if not path.startswith(str(giok_home.path)):  # a long home: the shared temporary folder
            pytest.skip("the socket is outside this test's home here; its folder is not the test's to open")
        os.chmod(os.path.dirname(path), 0o755)  # a folder others may enter: not trusted
        answer, in_full = hook(env, tmp_path)
        assert in_full and "Use SQLite with FTS5" in answer
    finally:
        os.chmod(os.path.dirname(path), 0o700)
        server.close()


@pytest.mark.parametrize(
    "argv, found",
    [
        (["hook", "UserPromptSubmit"], {"workspace": None, "event": "UserPromptSubmit", "budget": None}),
        (["-w", "a", "hook"], {"workspace": "a", "event": "", "budget": None}),
        (
            ["hook", "UserPromptSubmit", "--budget=40", "--workspace", "b"],
            {"workspace": "b", "event": "UserPromptSubmit", "budget": "40"},
        ),
        (
            ["-wc", "hook", "UserPromptSubmit", "--budget", "9"],
            {"workspace": "c", "event": "UserPromptSubmit", "budget": "9"},
        ),
    ],
)
def test_the_hook_command_lines_a_server_may_answer(argv, found):
    assert hookline.parse(argv) == found


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["recall", "x"],
        ["hook", "SessionStart"],  # once a session: the CLI's
        ["hook", "Stop"],
        ["hook", "--help"],
        ["-w", "a", "-w", "b", "hook"],  # the CLI's error
        ["--budget", "3", "hook"],  # the CLI's error
        ["hook", "UserPromptSubmit", "extra"],
        ["hook", "UserPromptSubmit", "--budget"],
        ["--version"],
    ],
)
def test_every_other_command_line_goes_to_the_cli(argv):
    assert hookline.parse(argv) is None


def test_the_front_door_loads_nothing_of_giok_but_itself():
    code = (
        "import sys\n"
        "import giok.edges.hookline\n"
        "print(sorted(m for m in sys.modules if m.startswith('giok') or m in ('numpy', 'click')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["['giok',", "'giok.edges',", "'giok.edges.hookline',", "'giok.locations']"]


def test_a_server_that_never_answers_adds_nothing_and_a_stale_socket_leaves_it_to_the_cli(giok_home):
    env = {"GIOK_HOME": str(giok_home.path)}
    path = hook_socket(str(giok_home.path), env)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    request = {"v": hookline.PROTOCOL, "input": "{}"}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as mute:
        mute.bind(path)
        mute.listen()  # accepts (the kernel does) and never answers
        answer = hookline.ask(request, env, timeout=0.2)
    assert answer is not None and answer["stdout"] == ""
    assert "no answer within 0.2 s" in answer["stderr"]
    assert os.path.exists(path)  # the socket file of a process that is gone
    assert hookline.ask(request, env) is None  # refused: the CLI answers
