// The plugin on a stub OpenClaw host (what OpenClaw cannot run offline: a model turn, a live
// session). Registers the plugin, calls each registration as OpenClaw would, prints one JSON
// report for tests/test_openclaw.py. Run: node test/stub-host.ts (giok on PATH, GIOK_WORKSPACE set).
import plugin, { deliverCrossview } from "../index.ts";

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
const { execFileSync } = await import("node:child_process");
execFileSync("giok", ["crossview", "send", "Please check the GPU budget.", "-w", "zeon"]);
const delivered = await deliverCrossview(api, api.pluginConfig);
const again = await deliverCrossview(api, api.pluginConfig);
console.log(JSON.stringify({ tools: Object.keys(tools), search, get, getMissing, bootstrap: boot?.content ?? "",
  bootFiles: event.context.bootstrapFiles.length, watch: { tokens: watch?.used, level: watch?.level },
  delivered, again, systemEvents, hooks: Object.keys(hooks), typed: Object.keys(typed), services: services.map((s) => s.id) }));
