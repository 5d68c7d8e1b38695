"""giok serve under load: 20 concurrent clients on loopback, mixed reads and writes (remember,
diary, task, search, show, boot), a bounded number of requests and a time limit; afterwards
every write is in the files and in git, nothing lost, and no request failed."""

from __future__ import annotations

import re
import threading
import time

import httpx

from giok.store import git
from serve_support import serve_fixture

CLIENTS = 20
ROUNDS = 3  # each round: remember, diary, task add, search, show (+ boot once)
TIME_LIMIT = 120  # seconds for the whole run on a loaded 2-core machine
SUBJECTS = ["router", "printer", "badge", "locker", "laptop", "parking", "vpn", "wiki", "drill", "kettle"]


srv = serve_fixture("serve-load")


def test_twenty_concurrent_clients_lose_nothing(srv):
    ws = srv.workspaces["zeon"]
    commits_before = len(git.log(ws.root, ["."], 10_000))
    errors: list[str] = []
    written: dict[str, str] = {}
    diary: list[str] = []
    tasks: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(CLIENTS)

    def client(n: int) -> None:
        with httpx.Client(
            base_url=srv.url, headers={"Authorization": f"Bearer {srv.tokens['zeon-write']}"}, timeout=60
        ) as c:
            start.wait()
            for r in range(ROUNDS):
                subject = f"{SUBJECTS[(n + r) % len(SUBJECTS)]} {n * 10 + r}"
                calls = [
                    (
                        "post",
                        "/api/w/zeon/remember",
                        {"text": f"Locker code for the {subject} room is {n}{r}7"},
                    ),
                    ("post", "/api/w/zeon/diary", {"text": f"client {n} round {r} checked the {subject}"}),
                    (
                        "post",
                        "/api/w/zeon/task",
                        {"action": "add", "text": f"Inspect the {subject} (client {n})"},
                    ),
                    ("get", "/api/w/zeon/search", {"q": subject}),
                    ("get", "/api/w/zeon/show", None),
                ]
                if r == 0:
                    calls.append(("get", "/api/w/zeon/boot", None))
                for method, path, body in calls:
                    resp = c.post(path, json=body) if method == "post" else c.get(path, params=body)
                    if resp.status_code != 200:
                        with lock:
                            errors.append(f"{path}: {resp.status_code} {resp.text}")
                        continue
                    with lock:
                        if path.endswith("/remember"):
                            written[resp.json()["entry"]["id"]] = body["text"]
                        elif path.endswith("/diary"):
                            diary.append(body["text"])
                        elif path.endswith("/task"):
                            tasks.append(resp.json()["id"])

    began = time.monotonic()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIME_LIMIT)
    elapsed = time.monotonic() - began
    assert not any(t.is_alive() for t in threads), f"clients still running after {TIME_LIMIT}s"
    assert errors == []
    assert len(written) == len(diary) == len(tasks) == CLIENTS * ROUNDS
    memory = ws.path("MEMORY.md").read_text()
    assert all(entry_id in memory for entry_id in written)
    diary_text = "".join(
        p.read_text() for p in (ws.root / "memory").glob("*.md") if re.match(r"\d{4}-", p.name)
    )
    assert all(line in diary_text for line in diary)
    assert len(set(tasks)) == len(tasks) and {t["id"] for t in ws.tasks()} >= set(tasks)
    assert len(git.log(ws.root, ["."], 10_000)) - commits_before == 3 * CLIENTS * ROUNDS  # one per write
    assert git.run(ws.root, "status", "--porcelain").stdout.strip() == ""
    print(f"\n{CLIENTS} clients × {ROUNDS} rounds: {elapsed:.1f}s")
