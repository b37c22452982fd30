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

  // ---- one conversation -----------------------------------------------------------------

  async function showConversation(main, id) {
    const hide = readerHide(true);
    const [status, doc] = await Promise.all([getJSON("/api/status"), getJSON(apiUrl(`/api/c/${encodeURIComponent(id)}/view`, hide))]);
    const instanceHides = status.withheld || [];
    showStatus(status);
    watchStatus(status, null);
    const streams = new Map(doc.streams.map((s) => [s.id, s]));
    const childOfTool = new Map();
    const resultOf = new Map();
    const calls = new Map();
    for (const s of doc.streams) {
      for (const c of s.calls) {
        calls.set(`${s.id}\u0000${c.id}`, c);
        for (const t of c.tool_calls) if (t.child && t.id) childOfTool.set(t.id, t.child);
      }
      for (const step of s.steps || []) {
        for (const p of step.parts) if (p.k === "result" && p.of && !resultOf.has(p.of)) resultOf.set(p.of, p);
      }
    }
    const placed = new Set();
    const seenCalls = new Set();
    const total = { in: 0, out: 0, cache_read: 0, cache_write: 0 };
    let nCalls = 0;
    for (const c of calls.values()) { nCalls++; for (const k in total) total[k] += (c.usage || {})[k] || 0; }

    function hrefWith(extra, hash) {
      const q = new URLSearchParams(location.search);
      for (const [k, v] of Object.entries(extra)) { if (v === null) q.delete(k); else q.set(k, v); }
      const s = q.toString();
      return `${location.pathname}${s ? `?${s}` : ""}${hash || ""}`;
    }

    function evidenceButton(step, holder) {
      return el("button", { type: "button", class: "evidence", text: "record", title: "the landed record behind this step",
        onclick: async () => {
          const panel = el("div", { class: "panel" }, el("div", { class: "kind", text: `landed record ${step.at.seq}:${step.at.row}` }));
          holder.append(panel);
          try { panel.append(el("pre", { text: JSON.stringify(await getJSON(apiUrl(`/api/c/${encodeURIComponent(id)}/record/${step.at.seq}/${step.at.row}`, hide)), null, 2) })); }
          catch (e) { panel.append(el("div", { class: "muted", text: `not served: ${e.message}` })); }
        } });
    }

    function callLine(stream, step) {
      if (!step.call) return null;
      const key = `${stream.id}\u0000${step.call}`;
      if (seenCalls.has(key)) return null;
      seenCalls.add(key);
      const c = calls.get(key);
      if (!c) return null;
      const line = el("div", { class: "call" }, el("span", { class: "badge", text: c.model || "model call" }),
        c.usage ? tokensText({ in: 0, out: 0, cache_read: 0, cache_write: 0, ...c.usage }) : "no usage reported");
      const holder = el("div");
      for (const b of c.provider_bodies || []) {
        line.append(" ", el("button", { type: "button", class: `body ${b.role}`, text: `exact ${b.role}`, onclick: async () => {
          const panel = el("div", { class: "panel" }, el("div", { class: "kind", text: `provider ${b.role} ${b.ref.seq}:${b.ref.row}` }));
          holder.append(panel);
          const r = await fetch(apiUrl(`/api/c/${encodeURIComponent(id)}/body/${b.ref.seq}/${b.ref.row}`, hide));
          const text = await r.text();
          panel.append(r.ok ? el("pre", { class: "provider-body", text: pretty(text) }) : el("div", { class: "muted", text: `not served: ${pretty(text)}` }));
        } }));
      }
      if (!(c.provider_bodies || []).length && hide.length && doc.summary.provider_bodies) {
        line.append(" ", el("a", { href: hrefWith({ show: "context" }, `#s-${step.at.seq}-${step.at.row}`), class: "show-context",
          text: "exact request withheld: show system prompt, tools and provider bodies" }));
      }
      return el("div", {}, line, holder);
    }

    function toolCard(part) {
      const result = part.id ? resultOf.get(part.id) : null;
      const card = el("div", { class: `tool${result && result.failed ? " failed" : ""}` },
        el("div", {}, el("span", { class: "kind", text: "tool " }), el("span", { class: "name", text: part.name || "tool" })));
      if (part.text !== undefined) card.append(collapsible(`input (${fmtInt(part.bytes)} bytes)`, pretty(part.text), true));
      if (result) {
        const label = `${result.failed ? "error" : "result"} (${fmtInt(result.bytes)} bytes${result.state !== "available" ? `, ${result.state}` : ""})`;
        card.append(result.text !== undefined ? collapsible(label, result.text, true) : el("div", { class: "muted", text: label }));
        if (result.failed) card.classList.add("error");
      }
      const child = part.id ? childOfTool.get(part.id) : null;
      if (child && streams.has(child) && !placed.has(child)) card.append(renderStream(streams.get(child)));
      return card;
    }

    function renderStep(stream, step) {
      const anchor = `s-${step.at.seq}-${step.at.row}`;
      const box = el("div", { class: "step", id: anchor, "data-from": step.from || "" });
      const where = el("span", { class: "where" }, el("a", { href: `#${anchor}`, class: "link", title: "link to this step", text: "#" }));
      const holder = el("div");
      if (step.state === "omitted") {
        const names = (step.flags || []).filter((f) => HIDEABLE.includes(f));
        box.classList.add("withheld");
        box.append(el("div", { class: "kind", text: `withheld: ${names.join(", ")}` }),
          el("div", { text: `${fmtInt(step.bytes)} bytes the runtime sent the model` }));
        const forEveryone = names.some((n) => instanceHides.includes(n) || pageHide.includes(n));
        box.append(forEveryone ? el("div", { class: "muted", text: "this instance withholds it from every reader" })
          : el("a", { href: hrefWith({ show: "context" }, `#${anchor}`), class: "show-context", text: "show it" }));
        box.append(where);
        return box;
      }
      const flags = step.flags || [];
      if (flags.includes("context_reset") || step.trigger === "auto" || step.trigger === "manual") {
        box.classList.add("reset");
        box.append(el("div", { class: "kind", text: `context reset${step.trigger ? ` (${step.trigger})` : ""}` }));
        box.append(where);
        return box;
      }
      const flagged = flags.filter((f) => HIDEABLE.includes(f));
      let shown = false;
      for (const part of step.parts) {
        if (flags.includes("reset_summary") && part.k === "text" && part.text !== undefined) {
          box.classList.add("reset");
          box.append(el("div", { class: "kind", text: "summary of the conversation before the reset" }), collapsible("summary", part.text, false));
          shown = true;
        } else if (flags.includes("error") && part.text !== undefined) {
          box.classList.add("error");
          box.append(el("div", { class: "kind", text: "error" }), collapsible("what the runtime recorded", pretty(part.text), true));
          shown = true;
        } else if ((part.k === "text" || part.k === "data") && flagged.length && part.text !== undefined) {
          box.append(el("div", { class: "kind", text: flagged.join(", ") }),
            collapsible(`what the runtime sent the model (${fmtInt(part.bytes)} bytes)`, pretty(part.text), false));
          box.classList.add("context");
          shown = true;
        } else if (part.k === "text" && part.text !== undefined) {
          const kind = step.from === "external" ? "prompt" : step.from === "agent" ? "reply" : "runtime";
          if (kind !== "runtime") box.classList.add(kind);
          box.append(el("div", { class: "kind", text: kind }), kind === "runtime" ? collapsible("runtime note", part.text, true) : markdown(part.text));
          shown = true;
        } else if (part.k === "reasoning") {
          box.append(part.text !== undefined ? collapsible("thinking", part.text, false) : el("div", { class: "muted", text: `thinking (${part.state})` }));
          shown = true;
        } else if (part.k === "call") {
          box.append(toolCard(part));
          shown = true;
        } else if (part.k === "result" && !(part.of && stepHasCall(part.of))) {
          box.append(collapsible(part.failed ? "error" : "result", part.text || `(${part.state})`, true));
          if (part.failed) box.classList.add("error");
          shown = true;
        } else if (part.k === "unknown") {
          box.append(el("div", { class: "muted", text: `unknown part: ${part.text || part.state}` }));
          shown = true;
        }
      }
      const line = callLine(stream, step);
      if (!shown && !line) return null;
      if (line) box.prepend(line);
      where.append(evidenceButton(step, holder));
      box.append(where, holder);
      return box;
    }

    const toolIds = new Set();
    for (const s of doc.streams) for (const c of s.calls) for (const t of c.tool_calls) if (t.id) toolIds.add(t.id);
    function stepHasCall(of) { return toolIds.has(of); }

    function renderStream(stream) {
      placed.add(stream.id);
      const box = stream.role === "main" ? el("div", { class: "stream", "data-stream": stream.id })
        : el("div", { class: "child", "data-stream": stream.id }, el("div", { class: "title", text: `child agent ${stream.label ? `· ${stream.label}` : stream.id}` }));
      for (const step of stream.steps || []) {
        const node = renderStep(stream, step);
        if (node) box.append(node);
      }
      return box;
    }

    const title = doc.session.label || (doc.streams[0] && (doc.streams[0].steps || []).flatMap((s) => s.from === "external" ? s.parts.filter((p) => p.k === "text").map((p) => p.text) : [])[0]) || id;
    document.title = `${title.slice(0, 60)} · asz`;
    const withheldNote = hide.length
      ? el("div", { class: "notice" }, `Withheld from this page: ${hide.join(", ")}. `,
        hide.every((n) => instanceHides.includes(n) || pageHide.includes(n)) ? "This instance withholds them from every reader."
          : el("a", { href: hrefWith({ show: "context" }), class: "show-context", text: "Show the system prompt, tool schemas and exact requests" }))
      : el("div", { class: "notice" }, "Showing what the runtime sent the model. ", el("a", { href: hrefWith({ show: null }), text: "Withhold it" }));
    main.replaceChildren(
      el("h2", { text: title }),
      el("div", { class: "totals", id: "conversation-totals" },
        `${doc.session.first_time || ""} → ${doc.session.last_time || ""} · ${fmtInt(nCalls)} model calls · ${doc.streams.length - 1} child agents · ${tokensText(total)}`),
      withheldNote);
    const mainStream = doc.streams.find((s) => s.role === "main") || doc.streams[0];
    if (mainStream) main.append(renderStream(mainStream));
    const loose = doc.streams.filter((s) => !placed.has(s.id));
    if (loose.length) {
      main.append(el("h3", { text: "Other streams" }));
      for (const s of loose) if (!placed.has(s.id)) main.append(renderStream(s));
    }
    focusHash();
    document.body.dataset.ready = "conversation";
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
