// The plugin on a stub OpenClaw host (what OpenClaw cannot run offline: a model turn, a live
// session). Registers the plugin, calls each registration as OpenClaw would, prints one JSON
// report for tests/test_openclaw.py. Run: `npm test` (or node test/stub-host.ts), giok on PATH.
// It works in a giok home of its own, in a temp folder removed at the end (GIOK_HOME and
// GIOK_WORKSPACE are set here, whatever the caller's are): a cross-view message writes a diary
// line and a commit in every workspace of the home it goes through, so never the user's.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import plugin, { deliverCrossview } from "../index.ts";

const scratch = mkdtempSync(join(tmpdir(), "giok-openclaw-test-"));
process.env.GIOK_HOME = join(scratch, "home");
process.env.GIOK_WORKSPACE = "zeon";
process.env.GIOK_EMBEDDINGS = "fake"; // the plumbing is tested, not the ranking: no model to load
const giok = (...args: string[]) => execFileSync("giok", args, { encoding: "utf8" });
try {
  giok("init", join(scratch, "zeon"), "--name", "zeon", "--user", "Seojun");
  giok("init", join(scratch, "sion"), "--name", "sion", "--user", "Seojun");
  giok("-w", "zeon", "remember", "The launch moved to Friday.", "--layer", "M90");
  mkdirSync(join(scratch, "zeon", "notes"));
  writeFileSync(join(scratch, "zeon", "notes", "launch.md"), "# Launch\n\nline two\nline three: Friday\nline four\n");
  await main();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

async function main() {
  const tools: Record<string, any> = {};
  const hooks: Record<string, any> = {};
  const typed: Record<string, any> = {};
  const services: any[] = [];
  const systemEvents: any[] = [];
  const api: any = {
    pluginConfig: { agents: { sion: "sion" }, crossviewPollSeconds: 0 },
    logger: { warn: (m: string) => console.error(m), info: () => {} },
    runtime: { system: { enqueueSystemEvent: (text: string, o: any) => (systemEvents.push({ text, sessionKey: o.sessionKey }), true),
                         requestHeartbeat: () => {} } },
    registerTool: (factory: any, opts: any) => {
      for (const name of opts.names) tools[name] = factory;
    },
    registerHook: (name: string, handler: any) => (hooks[name] = handler),
    on: (name: string, handler: any) => (typed[name] = handler),
    registerService: (s: any) => services.push(s),
  };
  plugin.register(api);

  const ctx = { agentId: "zeon", sessionKey: "agent:zeon:main", sessionId: "s-1" };
  const search = (await tools.memory_search(ctx).execute("t1", { query: "launch Friday", maxResults: 3 })).details;
  const get = (await tools.memory_get(ctx).execute("t2", { path: "notes/launch.md", from: 3, lines: 2 })).details;
  const getMissing = (await tools.memory_get(ctx).execute("t3", { path: "../etc/passwd" })).details;
  const event = { type: "agent", action: "bootstrap", sessionKey: "agent:zeon:main",
                  context: { workspaceDir: process.cwd(), agentId: "zeon", bootstrapFiles: [{ name: "AGENTS.md", path: "AGENTS.md", missing: true }] as any[] } };
  await hooks["agent:bootstrap"](event);
  const boot = event.context.bootstrapFiles.find((f: any) => f.name === "GIOK_BOOT.md");
  const watch = await typed.llm_output({ runId: "r", sessionId: "s-1", provider: "anthropic", model: "m", assistantTexts: [],
                                         usage: { input: 100000, cacheRead: 15000, output: 5000 }, contextTokenBudget: 150000 }, ctx);
  giok("crossview", "send", "Please check the GPU budget.", "-w", "zeon");
  const delivered = await deliverCrossview(api, api.pluginConfig);
  const again = await deliverCrossview(api, api.pluginConfig);
  console.log(JSON.stringify({ tools: Object.keys(tools), search, get, getMissing, bootstrap: boot?.content ?? "",
    bootFiles: event.context.bootstrapFiles.length, watch: { tokens: watch?.used, level: watch?.level },
    delivered, again, systemEvents, hooks: Object.keys(hooks), typed: Object.keys(typed), services: services.map((s) => s.id) }));
}
