"""The shared PostgreSQL index across teams and machines, against a real server
(tests/pg_support.py): another team's workspace of the same name never shares rows with this
one; two machines holding the same files rewrite nothing when they take turns searching; a
forgotten entry never comes back through a machine that has not pulled the forget; a frozen or
killed server gives one clear error, not a hang or a traceback (docs/teams.md, "Shared index")."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import pg_support
from conftest import run_giok, two_machines
from giok import Home, Workspace
from giok.errors import IndexError_, InvalidInput
from giok.retrieval import pg
from giok.retrieval.index import Index
from giok.retrieval.search import search
from giok.store import remote

SECRET = "The vault code of team B is 7341-9906"
BOUND = 120  # seconds: an upper bound on waits for an event, never the expected time


def git(root, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def use_pg(home: Home, dsn: str, **extra) -> Home:
    home.update(
        lambda c: c.update(
            index={"backend": "postgres", "dsn": dsn, **extra}, embeddings={"provider": "fake"}
        )
    )
    return home


def texts(ws, query: str, k: int = 20) -> str:
    return "\n".join(r.text for r in search(ws, query, k=k))


def on(ws, query: str, k: int = 20) -> str:
    """`giok search` on the machine holding ws: a process of its own, as a user runs it (each
    process publishes before it searches)."""
    out = run_giok("search", query, "-k", k, cwd=ws.root, env={"GIOK_HOME": str(ws.home.path)})
    assert out.returncode == 0, out.stderr
    return out.stdout


def table(ws) -> str:
    return pg.table_for(Index.local_for_workspace(ws).embedder)


def snapshot(dsn: str, name: str) -> set[tuple[str, str]]:
    """Every row's physical place and writing transaction: a row written again (or added, or
    deleted) changes the set."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        return {(str(a), str(b)) for a, b in conn.execute(f"SELECT ctid::text, xmin::text FROM {name}")}


def holding(dsn: str, name: str, needle: str) -> int:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        return int(
            conn.execute(f"SELECT count(*) FROM {name} WHERE text LIKE %s", (f"%{needle}%",)).fetchone()[0]
        )


@pytest.fixture
def machines(tmp_path, monkeypatch, pg_dsn):
    """Machine A created the workspace and pushed it; machine B cloned it; both homes search
    the shared index."""
    home_a = use_pg(Home(tmp_path / "home-a"), pg_dsn)
    home_b = use_pg(Home(tmp_path / "home-b"), pg_dsn)
    a, b, _ = two_machines(tmp_path, monkeypatch, home_a, home_b)
    return a, b


def grow(ws, monkeypatch, days: int) -> None:
    """Entries and diary lines over several days, searched at the end of each (the local index
    grows by steps, so its row ids are not those of an index built in one go)."""
    for day in range(days):
        monkeypatch.setenv("GIOK_NOW", f"2026-03-{day + 2:02d}T10:00")
        for i in range(day * 5, day * 5 + 5):
            ws.remember(f"Project {i:03d} ships its release train on track {i * 7 % 13}", layer="M90")
            ws.diary(f"Reviewed the build log of project {i:03d} with Minji")
        assert texts(ws, f"project {day * 5:03d}")


def test_two_teams_with_same_named_workspaces_never_see_each_others_text(tmp_path, monkeypatch, pg_dsn):
    """Team A and team B each create a workspace named zeon, for a user of the same name, in
    the same second: separate histories, so separate rows. Before, rows were keyed by the name
    and team A's search returned team B's secret."""
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T09:00")
    home_a = use_pg(Home(tmp_path / "team-a"), pg_dsn)
    home_b = use_pg(Home(tmp_path / "team-b"), pg_dsn)
    a, _ = Workspace.init(tmp_path / "a" / "zeon", name="zeon", user="Seojun", home=home_a)
    b, _ = Workspace.init(tmp_path / "b" / "zeon", name="zeon", user="Seojun", home=home_b)
    a.remember("The vault of team A opens with the blue key", layer="M90")
    b.remember(SECRET, layer="M90")
    assert "blue key" in texts(a, "vault code")  # team A publishes
    assert "7341" in texts(b, "vault code")  # team B publishes
    for _ in range(3):  # either team searching again, in turn
        assert "7341" not in texts(a, "vault code of team B")
        assert "blue key" not in texts(b, "vault of team A blue key")
    index_a, index_b = Index.for_workspace(a), Index.for_workspace(b)
    assert index_a.ws_id != index_b.ws_id
    rows = index_a.conn.execute(
        f"SELECT text FROM {index_a.table} WHERE ws = %s", (index_a.ws_id,)
    ).fetchall()
    assert rows and not any("7341" in r[0] for r in rows)


def test_two_machines_taking_turns_rewrite_nothing(machines, pg_dsn, monkeypatch):
    """Two clones of one workspace with the same files: their local indexes number chunks
    differently (A's grew day by day, B's was built at once), and rows are keyed by content, so
    searches taking turns write no row, B's first one included. Before, B's first search
    rewrote the rows A had published, and every turn after rewrote them again."""
    a, b = machines
    grow(a, monkeypatch, 6)
    remote.sync(a)
    remote.sync(b)
    name = table(a)
    assert "Project 012" in on(a, "project 012 release train")
    before = snapshot(pg_dsn, name)
    for ws in (b, a, b, a):
        assert "Project 021" in on(ws, "project 021 release train")
    assert snapshot(pg_dsn, name) == before
    assert Index.for_workspace(a).ws_id == Index.for_workspace(b).ws_id


def test_a_forgotten_entry_does_not_come_back_from_a_stale_machine(machines, pg_dsn, monkeypatch):
    """A forgets an entry; B has not pulled, so its files and local index still hold it. B's
    next search publishes its view of the workspace: the tombstone keeps the entry out of the
    shared table and out of both machines' results. Before, B published it again and A's next
    search showed it."""
    a, b = machines
    grow(a, monkeypatch, 2)
    secret = a.remember("Seojun's locker combination is 4417", layer="M90").entry
    remote.sync(a)
    remote.sync(b)
    assert "4417" in on(b, "locker combination")
    out = run_giok(
        "forget", secret.id, "--reason", "asked to", cwd=a.root, env={"GIOK_HOME": str(a.home.path)}
    )
    assert out.returncode == 0, out.stderr
    assert holding(pg_dsn, table(a), "4417") == 0
    assert "4417" in (b.root / "MEMORY.md").read_text()  # B is stale: its files still hold it
    assert "4417" not in on(b, "Seojun locker combination 4417")
    assert holding(pg_dsn, table(a), "4417") == 0
    assert "4417" not in on(a, "Seojun locker combination 4417")
    assert "4417" not in on(b, "locker combination")


def server_pids(server) -> list[int]:
    """The postmaster and its children (every backend, the writer, the checkpointer...)."""
    postmaster = int((Path(str(server.pgdata)) / "postmaster.pid").read_text().split()[0])
    pids = [postmaster]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                pids.append(int(entry))
    return pids


def gone(pid: int) -> bool:
    """The process has exited (a zombie nobody reaped counts: it runs nothing)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def restart(server) -> None:
    """Start a killed server again (pgserver's start; PostgreSQL's crash recovery)."""
    pgdata = Path(str(server.pgdata))
    for lock in [pgdata / "postmaster.pid", *pgdata.glob(".s.PGSQL.*.lock")]:
        if lock.exists() and gone(int(lock.read_text().split()[0])):
            lock.unlink()  # a zombie postmaster (unreaped here) would pass for a running one
    with server._lock:
        server.ensure_postgres_running()


@pytest.fixture
def own_server():
    """A server of this test's own: frozen or killed without disturbing the others."""
    server, dsn, why = pg_support.start()
    if server is None:
        pytest.skip(why)
    yield server, dsn
    with contextlib.suppress(OSError, ValueError):
        for pid in server_pids(server):
            os.kill(pid, signal.SIGCONT)
    restart(server)  # running again (a test may have killed it), so that it stops cleanly
    pg_support.stop(server)


def test_a_frozen_server_gives_one_clear_error(ws, giok_home, own_server):
    """PostgreSQL stops answering (SIGSTOP): a new `giok search` fails at the connect timeout, a
    process already connected at the statement timeout, each with one line; once the server
    answers again, search works and the files were never touched. Before, both hung."""
    server, dsn = own_server
    use_pg(giok_home, dsn, connect_timeout=2, statement_timeout=2)
    ws.remember("Seojun parks on level three", layer="M90")
    assert "level three" in texts(ws, "parking level")
    memory = (ws.root / "MEMORY.md").read_bytes()
    pids = server_pids(server)
    failed: list[BaseException] = []
    done = threading.Event()

    def searching() -> None:
        try:
            texts(ws, "where does Seojun park")
        except BaseException as exc:  # handed to the test thread
            failed.append(exc)
        done.set()

    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        out = run_giok("search", "parking level", cwd=ws.root, timeout=BOUND)
        threading.Thread(target=searching, daemon=True).start()
        assert done.wait(BOUND)
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    assert out.returncode == 7, out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert "cannot connect to PostgreSQL" in out.stderr and "within 2 s" in out.stderr
    assert len(failed) == 1 and isinstance(failed[0], IndexError_), failed
    assert "did not answer within 2 s" in str(failed[0])
    assert "level three" in texts(ws, "parking level")  # reconnected
    assert (ws.root / "MEMORY.md").read_bytes() == memory
    assert run_giok("search", "parking level", cwd=ws.root).returncode == 0


def test_a_server_killed_mid_publish_gives_one_clear_error(ws, giok_home, own_server):
    """PostgreSQL dies (SIGKILL) while `giok index` publishes: one line, no traceback; after a
    restart the next publish completes and the shared table holds every local chunk once."""
    import psycopg

    server, dsn = own_server
    use_pg(giok_home, dsn)
    for i in range(40):
        ws.diary(f"Line {i} of the long day")
    name = table(ws)
    Index.for_workspace(ws).sync()  # published once: the table exists; the next write waits below
    assert holding(dsn, name, "long day") == 40
    ws.remember("Seojun renewed the lease for two years", layer="M90")
    holder, watcher = psycopg.connect(dsn, autocommit=True), psycopg.connect(dsn, autocommit=True)
    holder.execute("BEGIN")
    holder.execute(f"LOCK TABLE {name} IN SHARE MODE")  # the publish's first write waits here
    proc = subprocess.Popen(
        [sys.executable, "-m", "giok", "index", "--backend", "postgres", "--dsn", dsn],
        cwd=ws.root,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        waiting, deadline = 0, time.monotonic() + BOUND
        while not waiting and proc.poll() is None and time.monotonic() < deadline:  # the publish blocks
            waiting = watcher.execute(  # a connection of its own: a transaction sees one snapshot
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            ).fetchone()[0]
            time.sleep(0.02)  # between two looks at pg_stat_activity; nothing is asserted on time
        for pid in server_pids(server):
            os.kill(pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=BOUND)
    finally:
        proc.kill()
        holder.close()
        watcher.close()
    assert waiting, err
    assert proc.returncode == 7, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "PostgreSQL" in err
    restart(server)
    out = run_giok("index", "status", "--backend", "postgres", "--dsn", dsn, "--json", cwd=ws.root)
    assert out.returncode == 0, out.stderr
    out = run_giok("index", "--backend", "postgres", "--dsn", dsn, "--json", cwd=ws.root)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["pg_chunks"] == data["chunks"] > 40
    assert git(ws.root, "status", "--porcelain") == ""


def test_the_timeouts_are_settings_with_defaults(ws, giok_home):
    """GIOK_PG_CONNECT_TIMEOUT / GIOK_PG_STATEMENT_TIMEOUT, else 5 and 10 s; the home config's
    "index" overrides them; a timeout of 0 or less, or not a number, is refused or ignored."""
    from giok.settings import Settings

    assert (Settings.from_env({}).pg_connect_timeout, Settings.from_env({}).pg_statement_timeout) == (
        5.0,
        10.0,
    )
    env = Settings.from_env({"GIOK_PG_CONNECT_TIMEOUT": "1.5", "GIOK_PG_STATEMENT_TIMEOUT": "0"})
    assert (env.pg_connect_timeout, env.pg_statement_timeout) == (1.5, 10.0)
    use_pg(giok_home, "postgresql:///none", statement_timeout=3)
    assert pg.settings(ws)["statement_timeout"] == 3.0 and pg.settings(ws)["connect_timeout"] == 5.0
    use_pg(giok_home, "postgresql:///none", statement_timeout="soon")
    with pytest.raises(InvalidInput, match="statement_timeout"):
        search(ws, "anything")


def test_a_workspace_with_no_commit_yet_gets_its_identity_at_the_first_commit(ws, giok_home, pg_dsn):
    """No commit, no history to name the workspace by: this machine's own random identity (no
    clone of it can exist); at the first commit the workspace takes the commit's identity and
    the rows of the old one go."""
    import shutil

    use_pg(giok_home, pg_dsn)
    ws.remember("Seojun waters the fig tree on Sundays", layer="M90")
    shutil.rmtree(ws.root / ".git")
    git(ws.root, "init", "-q")
    assert "fig tree" in on(ws, "fig tree")
    local_key = pg._key((ws.data_dir / pg.LOCAL_ID).read_text().strip())
    name = table(ws)
    git(ws.root, "add", "-A")
    git(ws.root, "-c", "user.name=S", "-c", "user.email=s@example.com", "commit", "-qm", "first")
    assert "fig tree" in on(ws, "fig tree")
    assert not (ws.data_dir / pg.LOCAL_ID).exists()
    import psycopg

    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        keys = {r[0] for r in conn.execute(f"SELECT DISTINCT ws FROM {name} WHERE text LIKE '%fig tree%'")}
    assert local_key not in keys and len(keys) == 1


def test_a_shallow_clone_is_one_clear_error(tmp_path, ws, giok_home, pg_dsn):
    """A shallow clone cannot see the workspace's first commit: it would publish under another
    identity, so it is refused with the command that fixes it."""
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(ws.root), str(bare)], check=True)
    ws.remember("A second commit, so that depth 1 cuts the history", layer="M90")
    git(ws.root, "push", "-q", str(bare), "HEAD:main")
    shallow = tmp_path / "shallow" / "zeon"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{bare}", str(shallow)], check=True)
    home = use_pg(Home(tmp_path / "home-shallow"), pg_dsn)
    Workspace.init(shallow, name="zeon", user="Seojun", home=home)
    out = run_giok("search", "second commit", cwd=shallow, env={"GIOK_HOME": str(home.path)})
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "shallow clone" in out.stderr and "fetch --unshallow" in out.stderr
