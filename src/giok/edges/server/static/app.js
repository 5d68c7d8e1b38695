// giok web page: plain JS over the JSON API (/api). No build step, no CDN.
// The token comes from the URL fragment (#token=…, as `giok web` prints it) or the sign-in
// form, and is kept in sessionStorage (this tab only); the fragment is dropped at once.
"use strict";

const KEY = "giok-token";
const LAYERS = ["M0", "M365", "M90", "M30"];
const $ = (id) => document.getElementById(id);
let current = null; // the chosen workspace
let scope = "read";
const OWNER_TABS = ["timeline", "distill", "review"];
let at = ""; // time travel: a past date, when the server has giok.store.history

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  return node;
}

function fill(id, nodes) {
  $(id).replaceChildren(...nodes);
}

function token() {
  return sessionStorage.getItem(KEY);
}

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(path, body) {
  const init = { headers: { Authorization: `Bearer ${token()}` } };
  if (body !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json; charset=utf-8";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(`/api${path}`, init);
  const data = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
  if (!r.ok) {
    if (r.status === 401) signOut(data.error || data.error_description);
    throw new ApiError(r.status, data.error || data.error_description || `HTTP ${r.status}`);
  }
  return data;
}

const ws = (path) => `/w/${encodeURIComponent(current)}${path}`;
// A read that can look into the past: the date control's value rides along as at=DATE.
const past = (path) => ws(at ? `${path}${path.includes("?") ? "&" : "?"}at=${encodeURIComponent(at)}` : path);
const writable = () => scope === "write" && !at;

function timeTravel() {
  const input = el("input", { type: "date", id: "at", "aria-label": "As of date" });
  input.addEventListener("change", () => {
    at = input.value;
    document.querySelectorAll(".write").forEach((f) => { f.hidden = !writable(); });
    show(tab);
  });
  fill("at-slot", [el("label", {}, "As of ", input)]);
}

function status(message) {
  $("status").textContent = message || "";
}

async function guarded(fn) {
  status("");
  try { await fn(); } catch (e) { status(e.message); }
}

// -- sign in ------------------------------------------------------------------------------
function signOut(reason) {
  sessionStorage.removeItem(KEY);
  $("app").hidden = true;
  $("logout").hidden = true;
  $("who").textContent = "";
  $("login").hidden = false;
  $("login-error").textContent = reason || "";
}

async function start() {
  const m = location.hash.match(/token=([^&]+)/);
  if (m) {
    sessionStorage.setItem(KEY, decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  if (!token()) return signOut();
  let data;
  try { data = await api("/workspaces"); } catch (e) { return signOut(e.message); }
  scope = data.token.scope;
  $("login").hidden = true;
  $("app").hidden = false;
  $("logout").hidden = false;
  const reader = data.token.owner ? "owner" : `for ${data.token.user || "USER.md's user"}`;
  $("who").textContent = `token ${data.token.name} · ${scope} · ${reader}`;
  document.querySelectorAll(".write").forEach((f) => { f.hidden = !writable(); });
  // the git history, distill reports and review queue name every user's entries: owner tokens only
  for (const name of OWNER_TABS) document.querySelector(`#tabs button[data-tab="${name}"]`).hidden = !data.token.owner;
  if (!data.token.owner && OWNER_TABS.includes(tab)) tab = "memory";
  if (data.features && data.features.history) timeTravel();
  fill("workspaces", data.workspaces.map((w) =>
    el("button", { "data-ws": w.name, onclick: () => choose(w.name) }, w.name)));
  if (data.workspaces.length) choose(data.workspaces[0].name);
}

$("login-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  sessionStorage.setItem(KEY, $("token-input").value.trim());
  $("token-input").value = "";
  start();
});
$("logout").addEventListener("click", () => signOut());

// -- workspaces and tabs --------------------------------------------------------------------
const loaders = {};
let tab = "memory";

function choose(name) {
  current = name;
  $("ws-title").textContent = name;
  $("chain").hidden = true;
  document.querySelectorAll("nav button").forEach((b) => b.classList.toggle("active", b.dataset.ws === name));
  show(tab);
}

function show(name) {
  tab = name;
  document.querySelectorAll("#tabs button").forEach((b) => b.classList.toggle("active", b.dataset.tab === name));
  document.querySelectorAll(".tab").forEach((s) => { s.hidden = s.id !== `tab-${name}`; });
  if (loaders[name]) guarded(loaders[name]);
}
document.querySelectorAll("#tabs button").forEach((b) => b.addEventListener("click", () => show(b.dataset.tab)));

// -- memory -------------------------------------------------------------------------------
function days(n) {
  return n === 1 || n === -1 ? `${n} day` : `${n} days`;
}

function expiry(e) {
  if (!e.expires) return el("span", { class: "muted" }, "never");
  const left = e.expires_in_days;
  if (left < 0) return el("span", { class: "gone" }, `expired ${days(-left)} ago`);
  return el("span", { class: left <= 7 ? "soon" : "" }, left === 0 ? "expires today" : `in ${days(left)}`);
}

// A superseded entry is history, not current: it is listed under the entry that replaced it
// (following the chain to the newest), or, when that one is not shown (gone, or not this token's),
// in its layer's "replaced" list.
function historyOf(data) {
  const byId = new Map();
  for (const layer of LAYERS) for (const e of data.layers[layer].entries) byId.set(e.id, e);
  const earlier = new Map(); // current id -> superseded entries, newest first
  const orphans = new Map(LAYERS.map((l) => [l, []]));
  for (const e of byId.values()) {
    if (!e.superseded_by) continue;
    let head = e;
    const seen = new Set();
    while (head && head.superseded_by && !seen.has(head.id)) {
      seen.add(head.id);
      head = byId.get(head.superseded_by);
    }
    if (head && !head.superseded_by) {
      if (!earlier.has(head.id)) earlier.set(head.id, []);
      earlier.get(head.id).push(e);
    } else orphans.get(e.layer).push(e);
  }
  const newestFirst = (a, b) => (b.date || "").localeCompare(a.date || "") || b.id.localeCompare(a.id);
  for (const list of earlier.values()) list.sort(newestFirst);
  return { earlier, orphans };
}

function oldItem(e) {
  return el("li", { class: "superseded", "data-id": e.id },
    el("span", { class: "meta" }, `${e.id} · ${e.layer} · ${e.date || "?"} · `),
    el("span", { class: "old-text" }, e.text),
    e.superseded_by ? el("span", { class: "meta" }, ` → replaced by ${e.superseded_by}`) : null);
}

function entryRow(e, earlier) {
  const actions = [el("button", { onclick: () => guarded(() => chain(e.id)) }, "chain")];
  if (writable()) actions.push(el("button", { class: "forget", onclick: () => forget(e) }, "forget"));
  const history = earlier && earlier.length
    ? el("details", { class: "history" },
      el("summary", {}, `replaces ${earlier.length} earlier ${earlier.length === 1 ? "entry" : "entries"}`),
      el("ol", {}, ...earlier.map(oldItem)))
    : null;
  return el("tr", { "data-id": e.id },
    el("td", { class: "text" }, el("span", { class: "entry-text" }, e.text), history),
    el("td", { class: "age" }, e.age_days === undefined ? "" : `${days(e.age_days)} old`),
    el("td", { class: "expiry" }, expiry(e)),
    el("td", { class: "refs" }, e.refs),
    el("td", { class: "scope" }, e.scope),
    el("td", { class: "meta id" }, e.id),
    el("td", { class: "actions" }, ...actions));
}

loaders.memory = async () => {
  const data = await api(past("/show"));
  $("ws-title").textContent = current + (data.at ? ` — as of ${data.at.asked.replace("T", " ")} (commit ${data.at.commit.slice(0, 10)})` : "");
  const soon = data.expiring_soon.filter((e) => !e.superseded_by);
  fill("expiring", soon.length
    ? soon.map((e) => el("li", {}, `${e.layer} · `, e.text, " — ", expiry(e)))
    : [el("li", { class: "muted" }, "nothing expires in the next 7 days")]);
  const { earlier, orphans } = historyOf(data);
  fill("layers", LAYERS.map((layer) => {
    const entries = data.layers[layer].entries.filter((e) => !e.superseded_by);
    const replaced = orphans.get(layer);
    return el("section", { class: "layer", "data-layer": layer },
      el("h3", {}, el("span", { class: "layer-name" }, layer), ` · ${entries.length}`),
      entries.length
        ? el("table", { class: "entries" },
          el("tr", { class: "head" }, ...["memory", "age", "expiry", "refs", "scope", "id", ""].map((h) => el("th", {}, h))),
          ...entries.map((e) => entryRow(e, earlier.get(e.id))))
        : el("p", { class: "muted" }, "no entries"),
      replaced.length
        ? el("details", { class: "replaced" }, el("summary", {}, `replaced · ${replaced.length}`),
          el("ol", {}, ...replaced.map(oldItem)))
        : null);
  }));
};

async function chain(id) {
  const data = await api(ws(`/entry/${encodeURIComponent(id)}`));
  $("chain").hidden = false;
  fill("chain-list", data.chain.map((e) => el("li", { class: e.id === id ? "active" : "" },
    `${e.id} · ${e.layer} · ${e.date || "?"} · `, e.text, el("span", { class: "meta" }, ` (${e.file})`))));
  $("chain").scrollIntoView({ block: "nearest" });
}

$("remember-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  guarded(async () => {
    const r = await api(ws("/remember"), { text: $("remember-text").value, layer: $("remember-layer").value });
    $("remember-result").textContent = r.entry ? `${r.action}: ${r.entry.id}` : `${r.action}: ${r.reason}`;
    if (r.entry) $("remember-text").value = "";
    await loaders.memory();
  });
});

function forget(e) {
  const dialog = $("forget-dialog");
  $("forget-text").textContent = e.text;
  $("forget-reason").value = "";
  dialog.onclose = () => {
    if (dialog.returnValue !== "confirm") return;
    guarded(async () => {
      await api(ws("/forget"), { id: e.id, reason: $("forget-reason").value });
      await loaders.memory();
    });
  };
  dialog.showModal();
}

// -- search and boot ------------------------------------------------------------------------
$("search-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  guarded(async () => {
    const q = new URLSearchParams({ q: $("search-q").value, k: $("search-k").value });
    const data = await api(past(`/search?${q}`));
    const cut = data.cut;
    $("search-cut").textContent =
      `${data.results.length} result(s). Cut: ${cut.noise} under the noise floor (0.35), ` +
      `${cut.gap} after a score gap` + (data.notes.length ? ` · ${data.notes.join(" · ")}` : "");
    fill("search-results", data.results.map((r) => el("li", { class: "result" },
      el("span", { class: "score" }, r.score.toFixed(3)), " ",
      el("b", {}, r.layer || ""), " ", r.text,
      el("div", { class: "meta" }, `${r.workspace} · ${r.path}:${r.start_line}` + (r.date ? ` · ${r.date}` : "")))));
  });
});

async function boot() {
  const data = await api(past(`/boot?budget=${encodeURIComponent($("boot-budget").value)}`));
  const pct = Math.min(100, (100 * data.tokens) / data.budget);
  const bar = $("boot-bar");
  bar.style.width = `${pct}%`;
  bar.classList.toggle("over", data.tokens > data.budget);
  $("boot-used").textContent = `${data.tokens} of ${data.budget} tokens (${data.counter})`;
  fill("boot-sections", [el("tr", {}, el("th", {}, "section"), el("th", {}, "items"), el("th", {}, "tokens")),
    ...data.sections.map((s) => el("tr", {}, el("td", {}, s.title || s.name), el("td", {}, s.items), el("td", {}, s.tokens)))]);
  fill("boot-left", data.left_out.length
    ? data.left_out.map((l) => el("li", {}, `${l.section}: ${l.count} item(s), ${l.tokens} tokens`,
      l.ids && l.ids.length ? el("span", { class: "meta" }, ` (${l.ids.join(", ")})`) : null))
    : [el("li", { class: "muted" }, "nothing left out")]);
  $("boot-text").textContent = data.text;
}
loaders.boot = boot;
$("boot-form").addEventListener("submit", (ev) => { ev.preventDefault(); guarded(boot); });

// -- tasks, state, decisions, heartbeat -------------------------------------------------------
loaders.work = async () => {
  const [tasks, state, decisions, heartbeat] = await Promise.all([
    api(ws("/tasks")), api(ws("/state")), api(ws("/decisions")), api(ws("/heartbeat"))]);
  fill("tasks", tasks.tasks.length ? tasks.tasks.map((t) => el("li", { "data-task": t.id },
    el("b", {}, t.id), ` [${t.status}] `, t.text,
    writable() && t.status !== "done"
      ? el("button", { class: "done", onclick: () => guarded(async () => {
        await api(ws("/task"), { action: "done", id: t.id });
        await loaders.work();
      }) }, "mark done")
      : null)) : [el("li", { class: "muted" }, "no tasks")]);
  fill("state", Object.entries(state).flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v || "—")]));
  fill("decisions", decisions.decisions.length ? decisions.decisions.map((d) => el("li", {},
    el("b", {}, d.id), " ", d.text, d.why ? el("span", { class: "meta" }, ` — ${d.why}`) : null))
    : [el("li", { class: "muted" }, "no decisions")]);
  fill("heartbeat", heartbeat.items.length ? heartbeat.items.map((h, i) => el("li", {}, `${i + 1}. `, h))
    : [el("li", { class: "muted" }, "no open items")]);
};

// -- diary, timeline, distill -----------------------------------------------------------------
loaders.diary = async () => {
  const data = await api(ws("/diary"));
  fill("diary-days", data.days.map((d) => el("li", { onclick: (ev) => guarded(() => diaryDay(d, ev.target)) }, d)));
  if (data.days.length) await diaryDay(data.days[0], $("diary-days").firstChild);
  else fill("diary-items", [el("li", { class: "muted" }, "no diary yet")]);
};

async function diaryDay(day, item) {
  document.querySelectorAll("#diary-days li").forEach((li) => li.classList.toggle("active", li === item));
  const data = await api(ws(`/diary/${day}`));
  // the item's text starts with its time ("06:33 …"): shown once, in bold
  fill("diary-items", data.items.map((i) => el("li", {}, i.time ? el("b", {}, `${i.time} `) : null,
    i.time && i.text.startsWith(i.time) ? i.text.slice(i.time.length).trimStart() : i.text)));
}

loaders.timeline = async () => {
  const data = await api(ws("/log?limit=50"));
  fill("commits", data.commits.map((c) => el("li", { onclick: (ev) => guarded(() => diff(c.commit, ev.currentTarget)) },
    el("div", {}, c.message.split("\n")[0]), el("div", { class: "meta" }, `${c.date.slice(0, 16).replace("T", " ")} · ${c.commit}`))));
  if (data.commits.length) await diff(data.commits[0].commit, $("commits").firstChild);
};

async function diff(commit, item) {
  document.querySelectorAll("#commits li").forEach((li) => li.classList.toggle("active", li === item));
  const data = await api(ws(`/log/${commit}`));
  fill("diff", [`${data.message}\n\n`, ...data.diff.split("\n").map((line) => el("span", {
    class: line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : "",
  }, `${line}\n`))]);
}

loaders.distill = async () => {
  const data = await api(ws("/distills"));
  fill("distills", data.reports.length ? data.reports.map((r) => el("li", {}, el("b", {}, r.title),
    el("div", { class: "meta" }, `${r.date} · ${r.commit}`), el("pre", {}, r.report)))
    : [el("li", { class: "muted" }, "no distillation yet (giok distill)")]);
};

// -- the review queue (state/review.md) ----------------------------------------------------------
function resolveButton(item, label, body) {
  return el("button", { class: "resolve", "data-choice": body.choice, onclick: () => guarded(async () => {
    if (body.choice === "forget") {
      const reason = prompt(`Forget ${body.entry} for good? Why (kept in git history):`);
      if (reason === null) return;
      body.reason = reason;
    }
    await api(ws("/review"), { id: item.id, ...body });
    await loaders.review();
  }) }, label);
}

loaders.review = async () => {
  const data = await api(ws("/review"));
  fill("review", data.items.length ? data.items.map((item) => el("li", { "data-item": item.id },
    el("b", {}, item.id), ` ${item.kind} · raised ${item.raised}`,
    el("ol", {}, ...item.entries.map((e) => el("li", {}, el("span", { class: "meta" }, `${e.id} [${e.date || "?"}] `), e.text,
      writable() ? resolveButton(item, "forget this", { choice: "forget", entry: e.id }) : null))),
    item.why ? el("div", { class: "meta" }, item.why) : null,
    writable() ? el("div", {}, resolveButton(item, "newer wins", { choice: "newer" }), " ",
      resolveButton(item, "keep both", { choice: "both" })) : null))
    : [el("li", { class: "muted" }, "nothing to review")]);
};

start();
