"""A plain Python agent loop on giok: boot → recall → answer → remember → watch/flush.

    python examples/agent_loop.py [WORKSPACE]     # default: a demo workspace in a temp folder

`reply()` stands in for your model call; swap in any LLM client."""
import sys, tempfile, uuid
from giok import Home, Workspace
from giok.lifecycle import boot, watchdog

def demo_workspace(name="zeon-loop"):                # rerunnable: reuse the demo, or replace a deleted one
    Home().reclaim(name)
    if name in Home().workspaces():
        return Workspace.open(name)
    return Workspace.init(tempfile.mkdtemp(prefix="giok-loop-") + "/zeon", name=name, user="Seojun")[0]

ws = Workspace.open(sys.argv[1]) if len(sys.argv) > 1 else demo_workspace()
system = boot.build(ws).text                          # 1. boot context, once per session
dog = watchdog.Watchdog(ws, window=700, session=f"loop-demo-{uuid.uuid4().hex[:6]}")  # one id a session
transcript = []

def reply(system_prompt, memories, message):          # your model call goes here
    return f"(answer to {message!r} using {len(memories)} memories)"

for message in ["We decided to ship the memory essay on Friday.",
                "What did we decide about the essay?", "안녕!"]:
    found = ws.recall(message)                         # 2. decides, searches ≤ 2 times
    answer = reply(system, [r.text for r in found.results], message)
    if "decided" in message:                           # 3. keep what must outlive the session
        ws.remember(message, layer="M90", type="decision", source="loop-demo")
    transcript += [{"role": "user", "content": message}, {"role": "assistant", "content": answer}]
    status = dog.update(used=len(system + str(transcript)) // 3,  # 4. your token count
                        conversation=lambda: "\n".join(m["content"] for m in transcript))
    print(f"{found.decision:6} {found.answer:10} {status.level:4} | {message}")
    if status.level != "ok":                           # flushed into MEMORY.md + state memo
        break  # start a fresh session here: boot again with the new memo
