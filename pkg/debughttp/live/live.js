// The live graph page of package debughttp: it polls the page's JSON
// document (live?format=json) and draws the controller/resource graph as
// SVG, updating states, queue depths, rates and lags in place. Everything
// runs from what the handler serves: no external resource.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const POLL_MS = 1000;
const NODE_W = 215, CTRL_H = 62, RES_H = 40, GAP_X = 28, GAP_Y = 46, PAD = 20;

let view = null;      // the drawn graph: {key, nodes: Map(id -> {...}), edges: [...]}
let prev = null;      // the previous document and when it was received
let selected = null;  // the selected node's id

function el(name, attrs, parent) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function fmtDur(ns) {
  if (ns == null) return "–";
  if (ns < 1e3) return ns.toFixed(0) + "ns";
  if (ns < 1e6) return (ns / 1e3).toFixed(1) + "µs";
  if (ns < 1e9) return (ns / 1e6).toFixed(1) + "ms";
  return (ns / 1e9).toFixed(2) + "s";
}

function fmtRate(r) {
  if (r == null) return "";
  if (r === 0) return "0/s";
  if (r < 10) return r.toFixed(1) + "/s";
  return Math.round(r) + "/s";
}

// graphKey identifies the graph's shape: redrawn only when it changes.
function graphKey(g) {
  return g.nodes.map(n => n.id).join(",") + "|" + g.edges.map(e => e.from + ">" + e.to + ":" + e.edgeType).join(",");
}

// layout places nodes in rows, top to bottom (longest path over the graph
// without its back edges), ordered inside a row by the barycenter of their
// neighbours.
function layout(g) {
  const nodes = new Map(g.nodes.map(n => [n.id, {...n, out: [], in: [], layer: 0, order: 0}]));
  g.edges.forEach((e, i) => { nodes.get(e.from).out.push(i); nodes.get(e.to).in.push(i); });
  const back = new Set(), state = new Map();
  const visit = id => {
    state.set(id, 1);
    for (const i of nodes.get(id).out) {
      const to = g.edges[i].to;
      if (state.get(to) === 1) back.add(i);
      else if (!state.has(to)) visit(to);
    }
    state.set(id, 2);
  };
  [...nodes.keys()].sort().forEach(id => { if (!state.has(id)) visit(id); });
  // Longest path layering on the DAG (Kahn's order).
  const indeg = new Map([...nodes.keys()].map(id => [id, 0]));
  g.edges.forEach((e, i) => { if (!back.has(i)) indeg.set(e.to, indeg.get(e.to) + 1); });
  const queue = [...nodes.keys()].filter(id => indeg.get(id) === 0).sort();
  while (queue.length) {
    const id = queue.shift(), n = nodes.get(id);
    for (const i of n.out) {
      if (back.has(i)) continue;
      const m = nodes.get(g.edges[i].to);
      m.layer = Math.max(m.layer, n.layer + 1);
      indeg.set(m.id, indeg.get(m.id) - 1);
      if (indeg.get(m.id) === 0) queue.push(m.id);
    }
  }
  const layers = [];
  for (const n of nodes.values()) (layers[n.layer] = layers[n.layer] || []).push(n);
  layers.forEach(l => l.sort((a, b) => a.name.localeCompare(b.name)).forEach((n, i) => n.order = i));
  for (let sweep = 0; sweep < 4; sweep++) {
    const seq = sweep % 2 === 0 ? layers : [...layers].reverse();
    for (const l of seq) {
      if (!l) continue;
      for (const n of l) {
        const nb = (sweep % 2 === 0 ? n.in.map(i => g.edges[i].from) : n.out.map(i => g.edges[i].to)).map(id => nodes.get(id).order);
        n.bary = nb.length ? nb.reduce((a, b) => a + b, 0) / nb.length : n.order;
      }
      l.sort((a, b) => a.bary - b.bary || a.name.localeCompare(b.name)).forEach((n, i) => n.order = i);
    }
  }
  const rowWidth = l => l.length * (NODE_W + GAP_X) - GAP_X;
  const width = Math.max(...layers.filter(l => l).map(rowWidth)) + 2 * PAD + 80;
  let y = PAD;
  for (const l of layers) {
    if (!l) continue;
    let x = PAD + (width - 80 - 2 * PAD - rowWidth(l)) / 2, rowH = 0;
    for (const n of l) {
      n.h = n.kind === "controller" ? CTRL_H : RES_H;
      n.x = x;
      x += NODE_W + GAP_X;
      rowH = Math.max(rowH, n.h);
    }
    for (const n of l) n.y = y + (rowH - n.h) / 2;
    y += rowH + GAP_Y;
  }
  return {nodes, back, width, height: y + PAD};
}

function edgeClass(t) {
  const c = ["edge"];
  if (t.startsWith("Output")) c.push("output");
  if (t === "InputWeak") c.push("weak");
  if (t.includes("Mapped")) c.push("mapped");
  if (t.includes("DestroyReady")) c.push("destroyReady");
  return c.join(" ");
}

// draw builds the SVG for graph g.
function draw(g) {
  const svg = document.getElementById("graph");
  svg.textContent = "";
  const lay = layout(g);
  // Scaled down to the canvas when wider, never up.
  svg.setAttribute("viewBox", `0 0 ${lay.width} ${lay.height}`);
  svg.setAttribute("width", lay.width);
  svg.style.maxWidth = "100%";
  svg.style.height = "auto";
  const defs = el("defs", {}, svg);
  const marker = el("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse"}, defs);
  el("path", {d: "M 0 0 L 10 5 L 0 10 z", fill: "#666"}, marker);
  const edgeLayer = el("g", {}, svg), nodeLayer = el("g", {}, svg);
  const edges = g.edges.map((e, i) => {
    const a = lay.nodes.get(e.from), b = lay.nodes.get(e.to);
    let d, mx, my;
    if (lay.back.has(i) || b.y <= a.y) {
      // Back edges go round the right-hand side.
      const x1 = a.x + NODE_W, y1 = a.y + a.h / 2, x2 = b.x + NODE_W, y2 = b.y + b.h / 2;
      const out = Math.max(x1, x2) + 30 + Math.abs(y2 - y1) / 8;
      d = `M ${x1} ${y1} C ${out} ${y1}, ${out} ${y2}, ${x2} ${y2}`;
      mx = (x1 + 3 * out + 3 * out + x2) / 8; my = (y1 + y2) / 2;
    } else {
      const x1 = a.x + NODE_W / 2, y1 = a.y + a.h, x2 = b.x + NODE_W / 2, y2 = b.y, dy = (y2 - y1) / 2;
      d = `M ${x1} ${y1} C ${x1} ${y1 + dy}, ${x2} ${y2 - dy}, ${x2} ${y2}`;
      mx = (x1 + x2) / 2; my = (y1 + y2) / 2 + 4;
    }
    const path = el("path", {d, class: edgeClass(e.edgeType), "marker-end": "url(#arrow)", "data-edge": i}, edgeLayer);
    const title = el("title", {}, path);
    title.textContent = `${e.edgeType} ${e.type}${e.namespace ? " (" + e.namespace + (e.id ? "/" + e.id : "") + ")" : ""}`;
    const rate = el("text", {x: mx + 4, y: my, class: "rate"}, edgeLayer);
    return {path, rate};
  });
  const nodes = new Map();
  for (const n of lay.nodes.values()) {
    const gEl = el("g", {class: "node " + n.kind, "data-id": n.id, "data-name": n.name, transform: `translate(${n.x},${n.y})`}, nodeLayer);
    el("rect", {width: NODE_W, height: n.h, rx: n.kind === "controller" ? 4 : 14}, gEl);
    const name = el("text", {x: 8, y: 16, class: "name"}, gEl);
    name.textContent = n.name.length > 30 ? n.name.slice(0, 29) + "…" : n.name;
    const title = el("title", {}, gEl);
    title.textContent = n.name;
    const stats = el("text", {x: 8, y: 32, class: "stats"}, gEl);
    const lag = n.kind === "controller" ? el("text", {x: 8, y: 47, class: "lag"}, gEl) : null;
    const err = n.kind === "controller" ? el("text", {x: 8, y: 59, class: "err"}, gEl) : null;
    gEl.addEventListener("click", () => select(n.id));
    nodes.set(n.id, {node: n, g: gEl, stats, lag, err, title});
  }
  return {key: graphKey(g), nodes, edges, graph: g};
}

// quantile returns the q-quantile (ns) of histogram buckets [{lt, n}].
function quantile(buckets, q) {
  let total = 0;
  for (const b of buckets) total += b.n;
  if (total === 0) return null;
  const rank = Math.max(Math.ceil(q * total), 1);
  let seen = 0, lo = 0;
  for (const b of buckets) {
    if (seen + b.n >= rank) return b.lt >= 9e18 ? lo : lo + (b.lt - lo) * (rank - seen) / b.n;
    seen += b.n; lo = b.lt;
  }
  return null;
}

// windowed returns the buckets observed since the previous snapshot.
function windowed(cur, old) {
  if (!cur) return [];
  if (!old) return cur.buckets;
  const before = new Map(old.buckets.map(b => [b.lt, b.n]));
  return cur.buckets.map(b => ({lt: b.lt, n: b.n - (before.get(b.lt) || 0)})).filter(b => b.n > 0);
}

// update writes doc's values into the drawn graph; rates are computed
// against the previous document.
function update(doc, at) {
  const dt = prev ? (at - prev.at) / 1000 : 0;
  const byName = new Map(doc.controllers.map(c => [c.name, c]));
  const prevCtrl = prev ? new Map(prev.doc.controllers.map(c => [c.name, c])) : new Map();
  for (const v of view.nodes.values()) {
    const n = v.node;
    if (n.kind !== "controller") continue;
    const c = byName.get(n.name);
    if (!c) continue;
    const p = prevCtrl.get(n.name);
    const rate = p && dt > 0 ? (c.reconciles - p.reconciles) / dt : null;
    v.g.setAttribute("data-state", c.state);
    v.g.setAttribute("data-reconciles", c.reconciles);
    v.stats.textContent = `${c.state === "hotLoop" ? "HOT LOOP" : c.state} · queue ${c.queueLen}${c.inFlight ? " +" + c.inFlight : ""} · ${c.reconciles} rec${rate != null ? " (" + fmtRate(rate) + ")" : ""}`;
    const recent = quantile(windowed(c.lag, p && p.lag), 0.99);
    const lag = recent != null ? recent : (c.lag ? c.lag.p99Ns || null : null);
    v.lag.textContent = `p99 lag ${fmtDur(lag)}${c.busy != null ? " · busy " + Math.round(c.busy * 100) + "%" : ""}`;
    v.err.textContent = c.lastError ? "⚠ " + (c.lastError.length > 34 ? c.lastError.slice(0, 33) + "…" : c.lastError) : "";
    const lead = c.leadership;
    if (lead) v.stats.textContent += lead.role === "leader" ? ` · leader (term ${lead.term})` : "";
    v.title.textContent = n.name + (c.why ? "\n" + c.why : "") + (c.hotLoop ? "\nhot loop: " + c.hotLoop : "") + (c.lastError ? "\nlast error: " + c.lastError : "") +
      (lead ? `\n${lead.role} in election ${lead.election} since ${lead.since}${lead.term ? " (term " + lead.term + ")" : ""}` : "");
  }
  const resEvents = new Map();
  doc.edges.forEach((e, i) => {
    const v = view.edges[i];
    if (!v) return;
    const old = prev && prev.doc.edges[i];
    const rate = e.events != null && old && old.events != null && dt > 0 ? (e.events - old.events) / dt : null;
    v.rate.textContent = e.events == null ? "" : fmtRate(rate);
    v.path.classList.toggle("active", rate > 0);
    const ge = view.graph.edges[i];
    if (e.events != null && !ge.edgeType.startsWith("Output")) resEvents.set(ge.from, Math.max(resEvents.get(ge.from) || 0, rate || 0));
  });
  for (const v of view.nodes.values()) {
    if (v.node.kind !== "resource") continue;
    v.stats.textContent = resEvents.has(v.node.id) ? `changes ${fmtRate(resEvents.get(v.node.id))}` : "";
  }
  const st = document.getElementById("status");
  st.classList.remove("stale");
  st.textContent = `${doc.controllers.length} controllers · updated ${new Date(doc.time).toLocaleTimeString()} (every ${POLL_MS / 1000}s)`;
  document.body.setAttribute("data-updates", String(Number(document.body.getAttribute("data-updates") || 0) + 1));
}

async function poll() {
  try {
    const resp = await fetch("live?format=json", {cache: "no-store"});
    if (!resp.ok) throw new Error(resp.status + " " + resp.statusText);
    const doc = await resp.json();
    const at = Date.now();
    if (!view || view.key !== graphKey(doc.graph)) {
      view = draw(doc.graph);
      prev = null;
      if (selected) markSelected();
    }
    update(doc, at);
    prev = {doc, at};
  } catch (err) {
    const st = document.getElementById("status");
    st.classList.add("stale");
    st.textContent = "update failed: " + err.message;
  }
  setTimeout(poll, POLL_MS);
}

function markSelected() {
  for (const v of view.nodes.values()) v.g.classList.toggle("selected", v.node.id === selected);
}

// select shows the explanation of node id in the panel.
function select(id) {
  selected = id;
  markSelected();
  const n = view.nodes.get(id).node;
  if (n.kind === "controller") {
    explain("controller=" + encodeURIComponent(n.name));
  } else {
    explainType(n.name);
  }
}

// explain loads /debug/explain?QUERY as an HTML fragment into the panel;
// links inside it load into the panel too.
async function explain(query) {
  const box = document.getElementById("explain");
  try {
    const resp = await fetch("../explain?" + query + "&format=fragment", {cache: "no-store"});
    box.innerHTML = await resp.text();
  } catch (err) {
    box.textContent = "explain failed: " + err.message;
  }
}

// explainType lists the controllers around a resource type and the
// resources of that type the trace saw recently, each linking to its
// explanation.
async function explainType(type) {
  const box = document.getElementById("explain");
  box.textContent = "";
  const h = document.createElement("h2");
  h.textContent = "Resource type " + type;
  box.appendChild(h);
  const p = document.createElement("p");
  const writers = view.graph.edges.filter(e => e.type === type && e.edgeType.startsWith("Output")).map(e => e.controller);
  const readers = view.graph.edges.filter(e => e.type === type && !e.edgeType.startsWith("Output")).map(e => e.controller);
  p.textContent = `written by ${writers.join(", ") || "none"}; read by ${readers.join(", ") || "none"}`;
  box.appendChild(p);
  try {
    const resp = await fetch("../trace?type=" + encodeURIComponent(type) + "&limit=500", {cache: "no-store"});
    const seen = new Map();
    for (const line of (await resp.text()).split("\n")) {
      if (!line) continue;
      const ev = JSON.parse(line);
      for (const r of [ev.resource, ev.cause]) {
        if (r && r.type === type) seen.set(r.namespace + "/" + r.type + "/" + r.id, r);
      }
    }
    const h3 = document.createElement("h3");
    h3.textContent = seen.size ? "Recently changed (click to explain)" : "No recent change in the trace";
    box.appendChild(h3);
    const ul = document.createElement("ul");
    for (const [param, r] of [...seen.entries()].sort()) {
      const li = document.createElement("li"), a = document.createElement("a");
      a.href = "?resource=" + encodeURIComponent(param);
      a.textContent = `${r.type}(${r.namespace}/${r.id})`;
      li.appendChild(a);
      ul.appendChild(li);
    }
    box.appendChild(ul);
  } catch (err) {
    box.appendChild(document.createTextNode("trace failed: " + err.message));
  }
}

document.getElementById("explain").addEventListener("click", ev => {
  const a = ev.target.closest("a");
  if (!a) return;
  const href = a.getAttribute("href") || "";
  if (href.startsWith("?")) {
    ev.preventDefault();
    explain(href.slice(1).replace(/&format=[a-z]+/, ""));
  }
});

poll();
