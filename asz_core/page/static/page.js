// The asz page: the list of conversations at /, one conversation at /c/{id}.
//
// Every piece of text that comes from a transcript is put into the page as a text node
// (textContent, createTextNode); nothing from the API is ever parsed as HTML, so no script from
// a transcript runs. The Markdown renderer below builds elements one by one for the same reason.
"use strict";

(function () {
  const HIDEABLE = ["system_prompt", "tool_schemas"];
  const LONG = 600;   // a tool input or result longer than this many characters starts collapsed

  // ---- small helpers --------------------------------------------------------------------

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.append(typeof kid === "string" ? document.createTextNode(kid) : kid);
    }
    return node;
  }

  const NUMBER = new Intl.NumberFormat("en-US");  // one formatter: toLocaleString makes one per call
  const PAGE = 200;  // rows drawn at first; the rest on demand, so a long list draws at once
  function fmtInt(n) { return NUMBER.format(n || 0); }
  function fmtTime(ms) {
    if (ms === null || ms === undefined) return "–";
    return new Date(ms).toISOString().replace("T", " ").slice(0, 16);
  }
  function tokensText(t) {
    return `in ${fmtInt(t.in)} · out ${fmtInt(t.out)} · cache read ${fmtInt(t.cache_read)} · cache write ${fmtInt(t.cache_write)}`;
  }

  const params = new URLSearchParams(location.search);
  const pageHide = params.getAll("hide").flatMap((v) => v.split(",")).filter(Boolean);

  // What this reader withholds: the address's hide, and on a conversation the system prompt and
  // tool schemas unless the reader asked for them (show=context).
  function readerHide(conversation) {
    const names = new Set(pageHide);
    if (conversation && params.get("show") !== "context") HIDEABLE.forEach((n) => names.add(n));
    return [...names];
  }

  function apiUrl(path, hide, extra) {
    const q = new URLSearchParams(extra || {});
    if (hide && hide.length) q.set("hide", hide.join(","));
    const s = q.toString();
    return s ? `${path}?${s}` : path;
  }

  async function getJSON(url) {
    const r = await fetch(url, { credentials: "same-origin" });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.error || `${r.status}`);
    return body;
  }

  function keepHide(href) {
    if (!pageHide.length) return href;
    return `${href}${href.includes("?") ? "&" : "?"}hide=${encodeURIComponent(pageHide.join(","))}`;
  }

  // ---- Markdown, safely -----------------------------------------------------------------

  function inline(text) {
    const out = [];
    const re = /(`[^`\n]+`|\*\*[^*\n]+\*\*)/g;
    let last = 0;
    for (const m of text.matchAll(re)) {
      if (m.index > last) out.push(text.slice(last, m.index));
      const tok = m[0];
      out.push(tok.startsWith("`") ? el("code", { text: tok.slice(1, -1) }) : el("strong", { text: tok.slice(2, -2) }));
      last = m.index + tok.length;
    }
    if (last < text.length) out.push(text.slice(last));
    return out;
  }

  function markdown(text) {
    const root = el("div", { class: "md" });
    const lines = text.split("\n");
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (/^\s*```/.test(line)) {
        const body = [];
        i++;
        while (i < lines.length && !/^\s*```/.test(lines[i])) body.push(lines[i++]);
        i++;
        root.append(el("pre", { text: body.join("\n") }));
        continue;
      }
      const h = /^(#{1,6})\s+(.*)$/.exec(line);
      if (h) { root.append(el(`h${Math.min(h[1].length + 1, 4)}`, {}, inline(h[2]))); i++; continue; }
      if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
        const ordered = /^\s*\d/.test(line);
        const list = el(ordered ? "ol" : "ul");
        while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
          list.append(el("li", {}, inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ""))));
          i++;
        }
        root.append(list);
        continue;
      }
      if (!line.trim()) { i++; continue; }
      const para = [];
      while (i < lines.length && lines[i].trim() && !/^\s*(```|#{1,6}\s|[-*+]\s|\d+[.)]\s)/.test(lines[i])) para.push(lines[i++]);
      const p = el("p");
      para.forEach((l, n) => { if (n) p.append(el("br")); p.append(...inline(l)); });
      root.append(p);
    }
    return root;
  }

  function jsonType(text) {
    const m = /^\s*\{\s*"type"\s*:\s*"([^"]{1,80})"/.exec(text);  // the text may be clipped: no JSON.parse
    return m ? `${m[1]} · ` : "";
  }

  function pretty(text) {
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
  }

  function collapsible(label, text, openWhenShort) {
    const d = el("details", { open: openWhenShort && text.length <= LONG }, el("summary", { text: label }), el("pre", { text }));
    return d;
  }

  // ---- the root's state: when data was last collected, and how the last pass went -------

  function fmtSeconds(ms) {
    return `${new Date(ms).toISOString().replace("T", " ").slice(0, 19)} UTC`;
  }

  function showStatus(status) {
    const bits = [`${status.conversations} conversations · read-only`];
    if (status.withheld.length) bits.push(`withheld for everyone: ${status.withheld.join(", ")}`);
    if (status.mode === "server") {
      bits.push(status.last_collected ? `last collected ${fmtSeconds(status.last_collected)}` : "not collected yet");
      bits.push(status.collecting ? "collecting now" : status.next_refresh ? `next pass ${fmtSeconds(status.next_refresh)}` : "");
    } else if (status.last_landed) {
      bits.push(`last landed ${fmtSeconds(status.last_landed)}`);
    }
    if (status.last_activity) bits.push(`last activity ${fmtTime(status.last_activity)}`);
    const line = document.getElementById("status");
    line.replaceChildren(el("span", { id: "collected", text: bits.filter(Boolean).join(" · ") }));
    line.title = status.source;
    const problem = document.getElementById("pass-problem");
    const last = status.last_pass;
    problem.hidden = !last || last.ok;
    if (last && !last.ok) {
      problem.textContent = `The pass that ended ${fmtSeconds(last.ended)} did not go well: ${(last.problems.length ? last.problems : [last.line]).join("; ")}`;
    }
  }

  // Ask the server how the root stands: under serve --watch just after each planned pass (and
  // every 2 s while one runs), otherwise every 15 s; `changed` runs when last_refresh moves.
  function watchStatus(status, changed) {
    let seen = status.last_refresh;
    function delay(s) {
      if (s.mode !== "server") return 15000;
      if (s.collecting || !s.next_refresh) return 2000;
      return Math.min(Math.max(s.next_refresh - Date.now() + 300, 500), 60000);
    }
    async function poll() {
      let next = 15000;
      try {
        const now = await getJSON("/api/status");
        showStatus(now);
        next = delay(now);
        if (now.last_refresh !== seen) {
          seen = now.last_refresh;
          if (changed) await changed(now);
          document.body.dataset.refreshed = String(seen);
        }
      } catch (e) {
        document.getElementById("collected").textContent = `the server does not answer (${e.message})`;
      }
      setTimeout(poll, next);
    }
    setTimeout(poll, delay(status));
  }

  // ---- the list -------------------------------------------------------------------------

  async function showList(main) {
    const [status, first] = await Promise.all([getJSON("/api/status"), getJSON("/api/conversations")]);
    let rows = first;
    showStatus(status);
    const options = (key) => [...new Set(rows.flatMap((r) => (Array.isArray(r[key]) ? r[key] : [r[key]])).filter(Boolean))].sort();
    const select = (name, label) => el("select", { name, "aria-label": label });
    function fillOptions(input, label, key) {
      const kept = input.value;
      input.replaceChildren(el("option", { value: "", text: `any ${label}` }), options(key).map((v) => el("option", { value: v, text: v })));
      input.value = kept;
    }
    const q = el("input", { type: "search", name: "q", placeholder: "Search prompts, replies and tool calls", "aria-label": "search" });
    const project = select("project", "project");
    const runtime = select("runtime", "runtime");
    const model = select("model", "model");
    const fillAll = () => { fillOptions(project, "project", "project"); fillOptions(runtime, "runtime", "runtime"); fillOptions(model, "model", "models"); };
    fillAll();
    const since = el("input", { type: "date", name: "from", "aria-label": "from" });
    const until = el("input", { type: "date", name: "to", "aria-label": "to" });
    const inputs = { q, project, runtime, model, from: since, to: until };
    for (const [k, input] of Object.entries(inputs)) input.value = params.get(k) || "";
    const totals = el("div", { class: "totals", id: "totals" });
    const body = el("tbody");
    const more = el("button", { type: "button", id: "more", hidden: true });
    let limit = PAGE;
    const table = el("table", { class: "list", id: "conversations" },
      el("thead", {}, el("tr", {}, ["Conversation", "Runtime", "When", "Talks", "Model calls", "Subagents", "Tokens"].map((h) => el("th", { text: h })))),
      body);
    const usage = el("details", { id: "usage" }, el("summary", { text: "Usage and cost by model" }));
    usage.addEventListener("toggle", async () => {
      if (!usage.open || usage.dataset.loaded) return;
      usage.dataset.loaded = "1";
      const report = await getJSON("/api/usage?by=model");
      const cells = (r) => [r.key, fmtInt(r.calls), fmtInt(r.in), fmtInt(r.out), fmtInt(r.cache_read), fmtInt(r.cache_write),
        `$${r.cost.toFixed(2)}${r.unpriced_calls ? " *" : ""}`];
      usage.append(el("table", { class: "list" },
        el("thead", {}, el("tr", {}, ["Model", "Calls", "In", "Out", "Cache read", "Cache write", "Cost"].map((h) => el("th", { text: h })))),
        el("tbody", {}, [...report.rows, report.total].map((r) => el("tr", {}, cells(r).map((c, n) => el("td", { class: n ? "num" : "", text: c })))))),
      Object.keys(report.unpriced).length ? el("div", { class: "muted", id: "unpriced", text: `* not in the cost, no price known: ${Object.entries(report.unpriced).map(([m, n]) => `${m} (${fmtInt(n)} calls)`).join(", ")} (add one under usage.prices in asz.yaml)` }) : null,
      report.total.unreported_calls ? el("div", { class: "muted", text: `${fmtInt(report.total.unreported_calls)} calls reported no token counts: their tokens are not known` }) : null,
      el("ul", { class: "muted", id: "prices" }, report.prices.map((p) => el("li", { text: `${p.model}: in ${p.in}, out ${p.out}, cache read ${p.cache_read}, cache write ${p.cache_write} USD per million tokens; ${p.source}${p.date ? ` (checked ${p.date})` : ""}` }))));
    });
    main.replaceChildren(el("div", { class: "filters" }, q, project, runtime, model, since, until), totals, usage, table, more);
    more.addEventListener("click", () => { limit = Infinity; draw(); });

    let found = null;  // ids a search kept, or null with no search
    function draw() {
      const from = since.value ? Date.parse(since.value) : null;
      const to = until.value ? Date.parse(until.value) + 86400000 : null;
      const shown = rows.filter((r) => (found === null || found.has(r.id))
        && (!project.value || r.project === project.value)
        && (!runtime.value || r.runtime === runtime.value)
        && (!model.value || r.models.includes(model.value))
        && (from === null || (r.to !== null && r.to >= from))
        && (to === null || (r.from !== null && r.from < to)));
      const sum = { in: 0, out: 0, cache_read: 0, cache_write: 0 };
      let calls = 0;
      shown.forEach((r) => { calls += r.llm_calls; for (const k in sum) sum[k] += r.tokens[k]; });
      totals.textContent = `${shown.length} of ${rows.length} conversations · ${fmtInt(calls)} model calls · ${tokensText(sum)}`;
      more.hidden = shown.length <= limit;
      more.textContent = `show all ${fmtInt(shown.length)}`;
      body.replaceChildren(...shown.slice(0, limit).map((r) => el("tr", { "data-id": r.id },
        el("td", {}, el("a", { href: keepHide(`/c/${encodeURIComponent(r.id)}`), text: r.title || r.id }),
          el("div", { class: "project", text: r.project || "" })),
        el("td", {}, el("span", { class: "badge", text: r.runtime || "?" }), r.models.slice(0, 2).map((m) => el("div", { class: "project", text: m }))),
        el("td", { text: `${fmtTime(r.from)} → ${fmtTime(r.to)}` }),
        el("td", { class: "num", text: fmtInt(r.talks) }),
        el("td", { class: "num", text: fmtInt(r.llm_calls) }),
        el("td", { class: "num", text: fmtInt(r.subagents) }),
        el("td", { class: "num", text: fmtInt(r.tokens.in + r.tokens.out + r.tokens.cache_read + r.tokens.cache_write) }))));
      const address = new URLSearchParams();
      for (const [k, input] of Object.entries(inputs)) if (input.value) address.set(k, input.value);
      if (pageHide.length) address.set("hide", pageHide.join(","));
      history.replaceState(null, "", address.toString() ? `/?${address}` : "/");
      document.body.dataset.ready = "list";
    }
    let timer = null;
    async function search() {
      const words = q.value.trim();
      found = words ? new Set((await getJSON(apiUrl("/api/conversations", [], { q: words }))).map((r) => r.id)) : null;
      draw();
    }
    q.addEventListener("input", () => { clearTimeout(timer); document.body.dataset.ready = "searching"; timer = setTimeout(search, 150); });
    for (const s of [project, runtime, model, since, until]) s.addEventListener("change", draw);
    if (q.value.trim()) await search(); else draw();
    // A pass beside the page (serve --watch) or beside the server landed something: the rows
    // are read again and drawn with the reader's search and filters kept.
    watchStatus(status, async () => {
      rows = await getJSON("/api/conversations");
      fillAll();
      if (q.value.trim()) await search(); else draw();
    });
  }

  // ---- one conversation: upstream's asz.view document, drawn ------------------------------
  //
  // The document (GET /api/c/{id}/view) is upstream's: talks as trees of runs and steps, what no
  // talk contains under `loose`, the streams beside them. Each stream's talks and loose trees are
  // drawn in the order of their records; a child agent's stream is drawn inline under the call
  // whose `starts` edge names it. /api/c/{id}/additions gives what the document does not carry:
  // the prompts no node shows (their records were not named a person's input) and each call's
  // model.

  const TOGGLED = ["runtime.notification", "agent.launch_ack", "agent.output"];
  const TOGGLE_LABEL = { "runtime.notification": "notification from the runtime", "agent.launch_ack": "child agent started",
    "agent.output": "what the child agent returned" };

  async function showConversation(main, id) {
    const hide = readerHide(true);
    const base = `/api/c/${encodeURIComponent(id)}`;
    const [status, doc, extra] = await Promise.all([getJSON("/api/status"), getJSON(apiUrl(`${base}/view`, hide)),
      getJSON(apiUrl(`${base}/additions`, hide))]);
    const instanceHides = status.withheld || [];
    showStatus(status);
    watchStatus(status, null);
    const streamById = new Map(doc.streams.map((s) => [s.id, s]));
    // each stream's top level: its talks, the trees no talk contains, the prompts no node shows
    const tops = new Map();
    const add = (stream, item) => { if (!tops.has(stream)) tops.set(stream, []); tops.get(stream).push(item); };
    for (const t of doc.talks) add(t.stream, { node: t, first: 1 });
    for (const n of doc.loose) add(n.stream, { node: n, first: 1 });
    for (const p of extra.prompts) add(p.stream, { prompt: p, first: 0 });
    const pos = (item) => { const r = (item.node || item.prompt).ref || {}; return [r.seq || 0, r.row || 0, r.block ?? -1, item.first]; };
    for (const list of tops.values()) {
      list.sort((a, b) => { const x = pos(a), y = pos(b); return x[0] - y[0] || x[1] - y[1] || x[2] - y[2] || x[3] - y[3]; });
    }
    const placed = new Set();
    const anchors = new Set();
    const total = { in: 0, out: 0, cache_read: 0, cache_write: 0 };
    let nCalls = 0;
    (function count(nodes) {
      for (const n of nodes) {
        if (n.kind === "llm.call") { nCalls++; for (const k in total) total[k] += (n.usage || {})[k] || 0; }
        count(n.children || []);
      }
    })([...doc.talks, ...doc.loose]);

    function hrefWith(extraQuery, hash) {
      const q = new URLSearchParams(location.search);
      for (const [k, v] of Object.entries(extraQuery)) { if (v === null) q.delete(k); else q.set(k, v); }
      const s = q.toString();
      return `${location.pathname}${s ? `?${s}` : ""}${hash || ""}`;
    }

    function anchorOf(ref) {
      if (!ref || !ref.seq) return null;
      for (const a of [`s-${ref.seq}-${ref.row}`, `s-${ref.seq}-${ref.row}-${ref.block ?? 0}`]) {
        if (!anchors.has(a)) { anchors.add(a); return a; }
      }
      return null;
    }

    function evidenceButton(ref, holder) {
      return el("button", { type: "button", class: "evidence", text: "record", title: "the landed record behind this step",
        onclick: async () => {
          const panel = el("div", { class: "panel" }, el("div", { class: "kind", text: `landed record ${ref.seq}:${ref.row}` }));
          holder.append(panel);
          try { panel.append(el("pre", { text: JSON.stringify(await getJSON(apiUrl(`${base}/record/${ref.seq}/${ref.row}`, hide)), null, 2) })); }
          catch (e) { panel.append(el("div", { class: "muted", text: `not served: ${e.message}` })); }
        } });
    }

    // A step's box: its anchor (#s-SEQ-ROW, so a link lands on it), a link to it and its evidence.
    function stepBox(node, classes, ...kids) {
      const anchor = anchorOf(node.ref);
      const box = el("div", { class: `step ${classes}`, id: anchor, "data-kind": node.kind || "prompt" }, ...kids);
      const holder = el("div");
      box.append(el("span", { class: "where" }, anchor ? el("a", { href: `#${anchor}`, class: "link", title: "link to this step", text: "#" }) : null,
        node.ref && node.ref.seq ? evidenceButton(node.ref, holder) : null), holder);
      return box;
    }

    function withheldBox(node) {
      const names = (node.flags || []).filter((f) => HIDEABLE.includes(f));
      const box = stepBox(node, "withheld", el("div", { class: "kind", text: `withheld: ${names.join(", ") || "content"}` }),
        el("div", { text: `${fmtInt(node.bytes)} bytes the runtime sent the model` }));
      const forEveryone = names.some((n) => instanceHides.includes(n) || pageHide.includes(n));
      box.insertBefore(forEveryone ? el("div", { class: "muted", text: "this instance withholds it from every reader" })
        : el("a", { href: hrefWith({ show: "context" }, box.id ? `#${box.id}` : ""), class: "show-context", text: "show it" }), box.querySelector(".where"));
      return box;
    }

    function callBox(node) {
      const r = node.ref || {};
      const model = extra.models[`${r.seq}:${r.row}`];
      const line = el("div", { class: "call" }, el("span", { class: "badge", text: model || "model call" }),
        node.usage ? tokensText({ in: 0, out: 0, cache_read: 0, cache_write: 0, ...node.usage }) : "no usage reported");
      const holder = el("div");
      for (const b of node.provider_bodies || []) {
        line.append(" ", el("button", { type: "button", class: `body ${b.role}`, text: `exact ${b.role}`, onclick: async () => {
          const panel = el("div", { class: "panel" }, el("div", { class: "kind", text: `provider ${b.role} ${b.ref.seq}:${b.ref.row}` }));
          holder.append(panel);
          const res = await fetch(apiUrl(`${base}/body/${b.ref.seq}/${b.ref.row}`, hide));
          const text = await res.text();
          panel.append(res.ok ? el("pre", { class: "provider-body", text: pretty(text) }) : el("div", { class: "muted", text: `not served: ${pretty(text)}` }));
        } }));
      }
      if (!(node.provider_bodies || []).length && hide.length && doc.summary.provider_bodies) {
        line.append(" ", el("a", { href: hrefWith({ show: "context" }), class: "show-context",
          text: "exact request withheld: show system prompt, tools and provider bodies" }));
      }
      return el("div", { class: "callbox", "data-kind": "llm.call" }, line, holder, renderChildren(node));
    }

    function toolBox(node) {
      const card = el("div", { class: `tool${node.failed ? " failed" : ""}` },
        el("div", {}, el("span", { class: "kind", text: node.kind === "agent.call" ? "agent " : "tool " }), el("span", { class: "name", text: node.name || "tool" })));
      if (node.text !== undefined) card.append(collapsible(`input (${fmtInt(node.bytes)} bytes)`, pretty(node.text), true));
      else if (node.state && node.state !== "available") card.append(el("div", { class: "muted", text: `input ${node.state}` }));
      if (node.result_state !== undefined) {
        const label = `${node.failed ? "error" : "result"} (${fmtInt(node.result_bytes)} bytes${node.result_state !== "available" ? `, ${node.result_state}` : ""})`;
        card.append(node.result !== undefined ? collapsible(label, node.result, true) : el("div", { class: "muted", text: label }));
      }
      for (const e of node.edges || []) {
        if (e.type === "starts" && e.dir === "out" && streamById.has(e.other) && !placed.has(e.other)) card.append(renderStream(streamById.get(e.other)));
      }
      card.append(renderChildren(node));
      return stepBox(node, node.failed ? "error" : "", card);
    }

    function renderChildren(node) {
      const box = el("div", { class: "children" });
      for (const c of node.children || []) { const n = render(c); if (n) box.append(n); }
      return box;
    }

    function textOr(node, label) {
      return node.text !== undefined ? node.text : `(${label} ${node.state || "not shown"})`;
    }

    function render(node) {
      const kind = node.kind;
      const flagged = (node.flags || []).filter((f) => HIDEABLE.includes(f));
      if (node.state === "omitted" && flagged.length) return withheldBox(node);
      if (kind === "talk" || kind === "run" || kind === "epoch") return el("div", { class: kind, "data-id": node.id }, renderChildren(node));
      if (kind === "llm.call") return callBox(node);
      if (kind === "tool" || kind === "agent.call") return toolBox(node);
      if (flagged.length) {
        return stepBox(node, "context", el("div", { class: "kind", text: flagged.join(", ") }),
          collapsible(`what the runtime sent the model (${fmtInt(node.bytes)} bytes)`, pretty(textOr(node, "content")), false));
      }
      if (kind === "message.external") return promptBox(node, textOr(node, "prompt"));
      if (kind === "message.assistant") return stepBox(node, "reply", el("div", { class: "kind", text: "reply" }), markdown(textOr(node, "reply")), renderChildren(node));
      if (kind === "thinking") return stepBox(node, "thinking", node.text !== undefined ? collapsible("thinking", node.text, false) : el("div", { class: "muted", text: `thinking (${node.state})` }));
      if (kind === "context.injection") {
        const text = textOr(node, "injection");
        return stepBox(node, "injected", el("div", { class: "kind", text: "injected by the runtime" }),
          /^\s*[{[]/.test(text) ? collapsible(`${jsonType(text)}${fmtInt(node.bytes)} bytes`, pretty(text), false) : markdown(text));
      }
      if (TOGGLED.includes(kind)) return stepBox(node, "runtime", collapsible(TOGGLE_LABEL[kind], textOr(node, "text"), false));
      if (kind === "epoch.boundary") return stepBox(node, "reset", el("div", { class: "kind", text: `context reset${node.attrs && node.attrs.trigger ? ` (${node.attrs.trigger})` : ""}` }));
      if (kind === "epoch.summary") return stepBox(node, "reset", el("div", { class: "kind", text: "summary of the conversation before the reset" }), collapsible("summary", textOr(node, "summary"), false));
      if (kind.startsWith("error")) return stepBox(node, "error", el("div", { class: "kind", text: "error" }), collapsible("what the runtime recorded", pretty(textOr(node, "error")), true));
      if (kind === "message.synthetic") return stepBox(node, "runtime", el("div", { class: "kind", text: "written by the runtime, not a model" }), el("div", { text: textOr(node, "text") }));
      if (kind === "turn.duration") return el("div", { class: "muted small", text: `turn took ${fmtInt(node.duration_ms)} ms` });
      return stepBox(node, "runtime", el("div", { class: "kind", text: kind }), node.text !== undefined ? collapsible(kind, node.text, true) : null, renderChildren(node));
    }

    let firstPrompt = null;  // for the title: the first prompt drawn
    function promptBox(node, text) {
      if (firstPrompt === null) firstPrompt = text;
      return stepBox(node, "prompt", el("div", { class: "kind", text: "prompt" }), markdown(text));
    }

    function renderTop(item) {
      if (item.prompt) return promptBox(item.prompt, item.prompt.text);
      return render(item.node);
    }

    function renderStream(stream) {
      placed.add(stream.id);
      const box = stream.role === "main" ? el("div", { class: "stream", "data-stream": stream.name })
        : el("div", { class: "child", "data-stream": stream.name }, el("div", { class: "title", text: `child agent · ${stream.label || stream.name}` }));
      for (const item of tops.get(stream.name) || []) { const n = renderTop(item); if (n) box.append(n); }
      return box;
    }

    const mainStream = doc.streams.find((s) => s.role === "main") || doc.streams[0];
    const drawn = mainStream ? renderStream(mainStream) : null;
    const label = doc.talks.map((t) => t.label).find(Boolean);
    const title = doc.summary.title || label || (firstPrompt || "").split("\n").find((l) => l.trim()) || id;
    document.title = `${title.slice(0, 60)} · asz`;
    const withheldNote = hide.length
      ? el("div", { class: "notice" }, `Withheld from this page: ${hide.join(", ")}. `,
        hide.every((n) => instanceHides.includes(n) || pageHide.includes(n)) ? "This instance withholds them from every reader."
          : el("a", { href: hrefWith({ show: "context" }), class: "show-context", text: "Show the system prompt, tool schemas and exact requests" }))
      : el("div", { class: "notice" }, "Showing what the runtime sent the model. ", el("a", { href: hrefWith({ show: null }), text: "Withhold it" }));
    main.replaceChildren(
      el("h2", { text: title }),
      el("div", { class: "totals", id: "conversation-totals" },
        `${fmtTime(doc.summary.from)} → ${fmtTime(doc.summary.to)} · ${fmtInt(nCalls)} model calls · ${Math.max(doc.streams.length - 1, 0)} child agents · ${tokensText(total)}`),
      ...(doc.summary.state !== "verified" ? [el("div", { class: "notice error", text: `${doc.summary.state}: ${doc.summary.problems.join("; ")}` })] : []),
      withheldNote);
    if (drawn) main.append(drawn);
    const loose = doc.streams.filter((s) => !placed.has(s.id));
    if (loose.length) {
      main.append(el("h3", { text: "Other streams" }));
      for (const s of loose) if (!placed.has(s.id)) main.append(renderStream(s));
    }
    focusHash();
    document.body.dataset.ready = "conversation";
    // its cost at list prices, as `asz-pipeline usage --by session` prints it (after the drawing)
    getJSON("/api/usage?by=session").then((report) => {
      const row = report.rows.find((r) => r.key === id);
      if (!row) return;
      const unpriced = row.unpriced_calls ? ` (${fmtInt(row.unpriced_calls)} calls of a model with no known price not in it)` : "";
      document.getElementById("conversation-totals").append(el("span", { id: "conversation-cost", text: ` · $${row.cost.toFixed(2)} at list prices${unpriced}` }));
    }).catch(() => {});
  }

  function focusHash() {
    document.querySelectorAll(".step.target").forEach((n) => n.classList.remove("target"));
    const id = decodeURIComponent(location.hash.slice(1));
    const target = id ? document.getElementById(id) : null;
    if (target) {
      target.classList.add("target");
      for (let p = target.parentElement; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
      target.scrollIntoView({ block: "center" });
    }
  }
  window.addEventListener("hashchange", focusHash);

  // ---- start ----------------------------------------------------------------------------

  const main = document.getElementById("main");
  const m = /^\/c\/([^/]+)$/.exec(location.pathname);
  const shown = m ? showConversation(main, decodeURIComponent(m[1])) : showList(main);
  shown.catch((e) => {
    main.replaceChildren(el("p", { class: "notice", text: `Could not load: ${e.message}` }));
    document.body.dataset.ready = "error";
  });
})();
