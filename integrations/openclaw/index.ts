// giok as OpenClaw's memory (docs/integrations/openclaw.md).
//
// - memory_search {query, maxResults?, minScore?} and memory_get {path, from?, lines?}: OpenClaw's
//   names, parameters and result shape ({results: [{path, startLine, endLine, score, snippet,
//   source}]}, {path, text} / {path, text: "", status: "error", error}), backed by `giok search --json`
//   and the workspace's files;
// - agent:bootstrap: giok's boot text (`giok boot --json`) joins the session's bootstrap files;
// - llm_output: OpenClaw's token counts go to giok's watchdog (`giok watch`); when a flush is due
//   the session gets a system event saying so;
// - a service delivers cross-view messages (`giok crossview inbox --unread`) into the recipient
//   agent's live session as system events (the seed's systemEvent), then acks them.
//
// Plain TypeScript with erasable syntax only: Node 24 runs it as is, OpenClaw loads it from source.
// The default export is what `definePluginEntry` from "openclaw/plugin-sdk/plugin-entry" returns;
// it is spelled out so the plugin has no runtime import of openclaw.
import { spawn } from "node:child_process";
import { readFile, realpath } from "node:fs/promises";
import path from "node:path";
import type { OpenClawPluginApi } from "openclaw/plugin-sdk/plugin-entry";

export type GiokConfig = {
  command?: string;
  workspace?: string;
  agents?: Record<string, string>;
  bootBudget?: number;
  crossviewPollSeconds?: number;
  timeoutMs?: number;
};

type Ctx = { agentId?: string; workspaceDir?: string; sessionKey?: string; sessionId?: string };

const GET_DEFAULT_LINES = 120;
const BOOT_FILE = "GIOK_BOOT.md";

export class GiokError extends Error {}

/** Run giok; resolves with parsed JSON of stdout (`--json` is added), rejects with giok's stderr. */
export function runGiok(cfg: GiokConfig, args: string[], input?: string): Promise<any> {
  const command = cfg.command || process.env.GIOK_COMMAND || "giok";
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args, "--json"], { stdio: ["pipe", "pipe", "pipe"], env: process.env });
    let out = "";
    let err = "";
    const timer = setTimeout(() => child.kill("SIGTERM"), cfg.timeoutMs ?? 60000);
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(new GiokError(`cannot run ${command}: ${e.message}`));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new GiokError(err.trim() || `${command} ${args[0]} exited ${code}`));
      try {
        resolve(out.trim() ? JSON.parse(out) : {});
      } catch {
        reject(new GiokError(`${command} ${args[0]} printed no JSON: ${out.slice(0, 200)}`));
      }
    });
    child.stdin.end(input ?? "");
  });
}

/** The giok workspace for an agent: the config's map, the config's default, $GIOK_WORKSPACE,
 * else the agent's OpenClaw workspace folder (giok takes a path for -w). */
export function workspaceFor(cfg: GiokConfig, ctx: Ctx = {}): string | undefined {
  return (ctx.agentId && cfg.agents?.[ctx.agentId]) || cfg.workspace || process.env.GIOK_WORKSPACE || ctx.workspaceDir;
}

function ws(cfg: GiokConfig, ctx: Ctx): string[] {
  const w = workspaceFor(cfg, ctx);
  return w ? ["-w", w] : [];
}

function jsonResult(payload: unknown) {
  return { content: [{ type: "text", text: JSON.stringify(payload, null, 2) }], details: payload };
}

export async function memorySearch(cfg: GiokConfig, ctx: Ctx, params: any) {
  const query = String(params?.query ?? "").trim();
  if (!query) return jsonResult({ results: [], disabled: false, error: "query is empty" });
  const args = ["search", query, ...ws(cfg, ctx), "-k", String(Math.max(1, Math.min(50, params?.maxResults ?? 6)))];
  if (typeof params?.minScore === "number") args.push("--min-score", String(params.minScore));
  try {
    const data = await runGiok(cfg, args);
    const results = (data.results ?? []).map((r: any) => ({
      path: r.path,
      startLine: r.start_line,
      endLine: r.end_line,
      score: r.score,
      snippet: r.text,
      source: "memory",
      citation: r.start_line === r.end_line ? `${r.path}#L${r.start_line}` : `${r.path}#L${r.start_line}-L${r.end_line}`,
    }));
    return jsonResult({ results, provider: "giok", mode: "hybrid" });
  } catch (e) {
    return jsonResult({ results: [], disabled: true, unavailable: true, error: (e as Error).message });
  }
}

async function workspaceRoot(cfg: GiokConfig, ctx: Ctx): Promise<string> {
  const w = workspaceFor(cfg, ctx);
  if (w && (w.includes("/") || w.startsWith("."))) return await realpath(w);
  const data = await runGiok(cfg, ["workspaces"]);
  const found = (data.workspaces ?? []).find((s: any) => s.name === w) ?? (w ? null : data.workspaces?.[0]);
  if (!found) throw new GiokError(`unknown giok workspace ${w ?? "(none configured)"}`);
  return await realpath(found.path);
}

/** What memory_search returns, memory_get opens: a workspace file, by its relative path, no
 * hidden part, no escape (links included), from line `from` (1-based), `lines` lines. */
export async function memoryGet(cfg: GiokConfig, ctx: Ctx, params: any) {
  const rel = String(params?.path ?? "").replace(/#L\d+(-L\d+)?$/, "");
  try {
    if (!rel || path.isAbsolute(rel) || rel.split(/[\\/]/).some((p) => p.startsWith(".") || p === "")) {
      throw new GiokError(`path ${JSON.stringify(rel)} must be a workspace-relative path without hidden parts`);
    }
    const root = await workspaceRoot(cfg, ctx);
    const file = await realpath(path.join(root, rel));
    if (!file.startsWith(root + path.sep)) throw new GiokError(`path ${rel} leads outside the workspace`);
    const all = (await readFile(file, "utf8")).split("\n");
    if (all.length && all[all.length - 1] === "") all.pop();
    const from = Math.max(1, Number(params?.from ?? 1));
    const count = Math.max(1, Number(params?.lines ?? GET_DEFAULT_LINES));
    const text = all.slice(from - 1, from - 1 + count).join("\n");
    const more = from - 1 + count < all.length;
    return jsonResult({ path: rel, text, ...(more ? { truncated: true, nextFrom: from + count } : {}) });
  } catch (e) {
    const code = (e as any).code === "ENOENT" ? "not_found" : "error";
    return jsonResult({ path: rel, text: "", status: code, error: (e as Error).message });
  }
}

export async function bootText(cfg: GiokConfig, ctx: Ctx): Promise<string> {
  const args = ["boot", ...ws(cfg, ctx)];
  if (cfg.bootBudget) args.push("--budget", String(cfg.bootBudget));
  return (await runGiok(cfg, args)).text ?? "";
}

/** agent:bootstrap: add giok's boot text as one more bootstrap file. */
export async function onBootstrap(cfg: GiokConfig, event: any, log?: { warn?: (m: string) => void }) {
  const c = event?.context ?? {};
  const ctx: Ctx = { agentId: c.agentId, workspaceDir: c.workspaceDir, sessionKey: event?.sessionKey };
  try {
    const content = await bootText(cfg, ctx);
    if (!content.trim() || !Array.isArray(c.bootstrapFiles)) return;
    const file = path.join(c.workspaceDir ?? ".", ".giok", BOOT_FILE);
    c.bootstrapFiles = c.bootstrapFiles.filter((f: any) => f?.name !== BOOT_FILE);
    c.bootstrapFiles.push({ name: BOOT_FILE, path: file, missing: false, content });
  } catch (e) {
    log?.warn?.(`giok boot failed (the session starts without it): ${(e as Error).message}`);
  }
}

/** llm_output: usage → `giok watch`; a due flush becomes a system event in that session. */
export async function onLlmOutput(api: any, cfg: GiokConfig, event: any, ctx: Ctx) {
  // the context now is the last call's prompt + answer; event.usage sums every call of the run
  const u = event?.lastAssistant?.usage ?? event?.usage ?? {};
  const used = (u.input ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0) + (u.output ?? 0);
  const window = event?.contextTokenBudget ?? ctx?.["contextTokenBudget" as keyof Ctx];
  if (!used || !window) return null;
  const session = event?.sessionId || ctx?.sessionId || ctx?.sessionKey || "default";
  try {
    const watch = await runGiok(cfg, ["watch", "--used", String(used), "--window", String(window),
      "--session", String(session), ...ws(cfg, ctx)]);
    if (watch.flush_due && ctx?.sessionKey) {
      api.runtime?.system?.enqueueSystemEvent?.(`[giok watchdog] ${watch.action}`,
        { sessionKey: ctx.sessionKey, agentId: ctx.agentId, contextKey: "giok-watch", replace: true });
    }
    return watch;
  } catch (e) {
    api.logger?.warn?.(`giok watch failed: ${(e as Error).message}`);
    return null;
  }
}

/** Each mapped agent's unread cross-view messages → system events in `agent:<id>:main`, acked
 * once OpenClaw accepted them (a refused one stays unread for the next round). */
export async function deliverCrossview(api: any, cfg: GiokConfig): Promise<number> {
  let delivered = 0;
  for (const [agentId, workspace] of Object.entries(cfg.agents ?? {})) {
    const box = await runGiok(cfg, ["crossview", "inbox", "--unread", "-w", workspace]);
    const done: string[] = [];
    for (const m of box.messages ?? []) {
      const accepted = api.runtime.system.enqueueSystemEvent(m.rendered ?? `${m.sender}: ${m.text}`,
        { sessionKey: `agent:${agentId}:main`, agentId, contextKey: `giok-crossview:${m.id}` });
      if (accepted !== false) done.push(m.id);
    }
    if (done.length) {
      await runGiok(cfg, ["crossview", "ack", ...done, "-w", workspace]);
      delivered += done.length;
      api.runtime.system.requestHeartbeat?.({ source: "other", intent: "event", reason: "giok-crossview" });
    }
  }
  return delivered;
}

const SEARCH_PARAMS = {
  type: "object",
  properties: {
    query: { type: "string" },
    maxResults: { type: "integer", minimum: 1 },
    minScore: { type: "number" },
  },
  required: ["query"],
  additionalProperties: false,
};
const GET_PARAMS = {
  type: "object",
  properties: {
    path: { type: "string" },
    from: { type: "integer", minimum: 1 },
    lines: { type: "integer", minimum: 1 },
  },
  required: ["path"],
  additionalProperties: false,
};

export function register(api: OpenClawPluginApi) {
  const cfg = ((api as any).pluginConfig ?? {}) as GiokConfig;
  const a = api as any;
  a.registerTool((ctx: Ctx) => ({
    name: "memory_search",
    label: "Memory Search",
    description: "Mandatory recall step: search giok memory (MEMORY.md, diaries, decisions, lessons, notes) before " +
      "answering about prior work, decisions, dates, people, preferences or todos. If nothing comes back, say you checked.",
    parameters: SEARCH_PARAMS,
    execute: (_id: string, params: any) => memorySearch(cfg, ctx ?? {}, params),
  }), { names: ["memory_search"] });
  a.registerTool((ctx: Ctx) => ({
    name: "memory_get",
    label: "Memory Get",
    description: "Exact excerpt of a memory file returned by memory_search: path, from (1-based line), lines.",
    parameters: GET_PARAMS,
    execute: (_id: string, params: any) => memoryGet(cfg, ctx ?? {}, params),
  }), { names: ["memory_get"] });
  a.registerHook("agent:bootstrap", (event: any) => onBootstrap(cfg, event, a.logger),
    { name: "giok-boot", description: "giok's boot context in the session's bootstrap files" });
  a.on("llm_output", (event: any, ctx: Ctx) => onLlmOutput(a, cfg, event, ctx));
  const every = (cfg.crossviewPollSeconds ?? 30) * 1000;
  let timer: ReturnType<typeof setInterval> | undefined;
  a.registerService({
    id: "giok-crossview",
    start: () => {
      if (!every || !Object.keys(cfg.agents ?? {}).length) return;
      timer = setInterval(() => deliverCrossview(a, cfg).catch((e) => a.logger?.warn?.(`giok crossview: ${e.message}`)), every);
      timer.unref?.();
    },
    stop: () => timer && clearInterval(timer),
  });
}

export default {
  id: "giok-memory",
  kind: "memory", // selected with plugins.slots.memory = "giok-memory", in place of memory-core
  name: "giok memory",
  description: "Long-term memory from a giok workspace: memory_search, memory_get, boot context, watchdog, cross-view.",
  // the shape of the SDK's plugin config schemas ({safeParse, jsonSchema}); the manifest holds the full schema
  configSchema: {
    safeParse(value: unknown) {
      if (value === undefined) return { success: true, data: undefined };
      if (!value || typeof value !== "object" || Array.isArray(value)) {
        return { success: false, error: { issues: [{ path: [], message: "expected config object" }] } };
      }
      return { success: true, data: value };
    },
    jsonSchema: { type: "object", additionalProperties: true },
  },
  register,
};
