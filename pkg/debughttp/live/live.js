// The live graph page of package debughttp: it polls the page's JSON
// document (live?format=json) and draws the controller/resource graph as
// SVG, a node per controller and per resource kind (namespace and type),
// updating states, queue depths, rates and lags in place. The server
// computes every rate: the page does no arithmetic on its own clock.
// Everything runs from what the handler serves: no external resource.
//
// Layout: layered, top to bottom. Cycles are broken by reversing
// destroy-ready inputs (a controller reading its own outputs) and then any
// edge closing a cycle; an edge spanning several layers gets a waypoint in
// each layer it crosses, which holds a slot of its own in that layer, so
// that no edge ever passes behind a node: between two layers an edge is a
// curve in the gap, and inside a layer it runs straight down its slot.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const POLL_MS = 1000;
const CTRL_W = 210, RES_W = 236;          // node widths
const LINE = 14, PAD_X = 8, PAD_Y = 5;    // text metrics inside a node
const GAP_X = 26, GAP_Y = 40, MARGIN = 20; // spacing
const WAY_W = 12;                         // the slot of a waypoint
const MAX_SCALE = 1.6;                    // never enlarge more than this
const BOLD = "bold 12px sans-serif", SMALL = "11px sans-serif";

let view = null;      // the drawn graph
let selected = null;  // the selected node's id
let lastDoc = null;

function el(name, attrs, parent) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// short writes v with three significant digits at most.
function short(v) {
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1).replace(/\.0$/, "") : v.toFixed(2).replace(/\.?0+$/, "");
}

function fmtDur(ns) {
  if (ns == null) return "–";
  if (ns < 1e3) return short(ns) + "ns";
  if (ns < 1e6) return short(ns / 1e3) + "µs";
  if (ns < 1e9) return short(ns / 1e6) + "ms";
  if (ns < 60e9) return short(ns / 1e9) + "s";
  if (ns < 3600e9) return short(ns / 60e9) + "min";
  return short(ns / 3600e9) + "h";
}

function fmtRate(r) {
  if (r == null) return "–";
  if (r === 0) return "0/s";
  if (r >= 1000) return short(r / 1000) + "k/s";
  return short(r) + "/s";
}

// fitText returns text, cut with "…" when wider than width in font.
function fitText(text, width, font) {
  if (measure(text, font) <= width) return text;
  let n = text.length;
  while (n > 0 && measure(text.slice(0, n) + "…", font) > width) n--;
  return text.slice(0, n) + "…";
}

// measure returns the width of text in font.
const measureCtx = document.createElement("canvas").getContext("2d");
function measure(text, font) {
  measureCtx.font = font;
  return measureCtx.measureText(text).width;
}

// wrap splits name into lines no wider than width, breaking after ".",
// "/", "-", "_" and between a lower-case letter and an upper-case one;
// a part longer than a line is broken between characters. The lines,
// joined, are the whole name.
function wrap(name, width, font) {
  const parts = [];
  let part = "";
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (part && /[A-Z]/.test(c) && /[a-z0-9]/.test(name[i - 1])) { parts.push(part); part = ""; }
    part += c;
    if (/[./_\-]/.test(c)) { parts.push(part); part = ""; }
  }
  if (part) parts.push(part);
  const lines = [];
  let cur = "";
  const push = p => {
    if (cur !== "" && measure(cur + p, font) > width) {
      lines.push(cur);
      cur = "";
    }
    while (measure(p, font) > width) {
      let n = p.length;
      while (n > 1 && measure(p.slice(0, n), font) > width) n--;
      lines.push(p.slice(0, n));
      p = p.slice(n);
    }
    cur += p;
  };
  parts.forEach(push);
  if (cur !== "") lines.push(cur);
  if (lines.length === 0) return [""];
  // Balance: the narrowest width that needs no more lines.
  if (lines.length > 1 && width > 40 && !balancing) {
    balancing = true;
    try {
      let w = width;
      while (w > 40 && wrap(name, w - 4, font).length === lines.length) w -= 4;
      return wrap(name, w, font);
    } finally {
      balancing = false;
    }
  }
  return lines;
}
let balancing = false;

// namespaceColor gives every namespace of the graph a color of its own,
// by its rank among the namespaces (see draw).
const PALETTE = ["#2e7d32", "#1f5fa8", "#b35c00", "#7b3fa0", "#00838f", "#a0306a", "#5d6b00", "#6d4c41"];
let namespaceRank = new Map();
function namespaceColor(ns) {
  const i = namespaceRank.get(ns);
  return i == null ? "#888" : PALETTE[i % PALETTE.length];
}

// failing reports whether controller c shows its last error: while it
// retries or waits to restart (afterwards the error is history: in its
// tooltip and its explanation).
function failing(c) {
  return !!(c && c.lastError && (c.state === "retrying" || c.state === "crashed"));
}

// graphKey identifies what the drawing depends on: redrawn only when it
// changes.
function graphKey(doc) {
  const failed = new Set(doc.controllers.filter(failing).map(c => c.name));
  return doc.nodes.map(n => n.id + "[" + (n.marks || []).map(m => m.class).join(",") + (failed.has(n.name) && n.kind === "controller" ? "!" : "") + "]").join(",") + "|" +
    doc.edges.map(e => e.from + ">" + e.to + ":" + e.edgeType + (e.inferred ? "?" : "")).join(",");
}

// size fixes a node's lines and box: a controller's name, status and
// statistics lines (and its error while it fails); a kind's namespace and
// rate line, then its type.
function size(n) {
  if (n.kind === "controller") {
    n.w = CTRL_W;
    n.lines = wrap(n.name, CTRL_W - 2 * PAD_X, BOLD);
    n.count = n.lines.length + 2 + (n.failing ? 1 : 0);
  } else {
    n.w = RES_W;
    n.lines = wrap(n.name, RES_W - 2 * PAD_X - 4, BOLD);
    n.count = n.lines.length + 1;
  }
  n.h = 2 * PAD_Y + 4 + LINE * n.count;
}

// Orientations: the layers run top to bottom (TB) or left to right (LR).
// The layout works on two axes, the rank axis across the layers and the
// order axis along them; an orientation maps them onto x and y.
const ORIENT = {
  TB: {gapO: GAP_X, gapR: GAP_Y, so: n => n.w, sr: n => n.h, xy: (o, r) => [o, r]},
  LR: {gapO: 18, gapR: 84, so: n => n.h, sr: n => n.w, xy: (o, r) => [r, o]},
};

// layout places the nodes of doc in layers and routes every edge, for the
// orientation named dir; see the file's doc.
function layout(doc, dir) {
  const or = ORIENT[dir];
  const failed = new Set(doc.controllers.filter(failing).map(c => c.name));
  const nodes = new Map(doc.nodes.map(n => [n.id, {...n, failing: n.kind === "controller" && failed.has(n.name), out: [], in: [], eout: [], ein: []}]));
  nodes.forEach(size);
  nodes.forEach(n => { n.so = or.so(n); n.sr = or.sr(n); });
  const edges = doc.edges.map((e, i) => ({...e, index: i, a: e.from, b: e.to, rev: false}));
  // Break cycles: destroy-ready inputs first, then what a depth-first
  // search from the sources finds closing a cycle.
  for (const e of edges) if (e.edgeType.includes("DestroyReady")) { e.rev = true; [e.a, e.b] = [e.b, e.a]; }
  const state = new Map();
  const visit = id => {
    state.set(id, 1);
    for (const e of edges.filter(e2 => e2.a === id)) {
      if (state.get(e.b) === 1) { e.rev = !e.rev; [e.a, e.b] = [e.b, e.a]; }
      else if (!state.has(e.b)) visit(e.b);
    }
    state.set(id, 2);
  };
  const hasIn = new Set(edges.map(e => e.b));
  const order = [...nodes.keys()].sort((x, y) => (hasIn.has(x) - hasIn.has(y)) || x.localeCompare(y));
  order.forEach(id => { if (!state.has(id)) visit(id); });
  for (const e of edges) { nodes.get(e.a).eout.push(e); nodes.get(e.b).ein.push(e); }

  // Layers: longest path from the sources, then every node with
  // successors moved next to the nearest of them.
  const topo = [], indeg = new Map([...nodes.keys()].map(id => [id, nodes.get(id).ein.length]));
  const queue = order.filter(id => indeg.get(id) === 0);
  for (const n of nodes.values()) n.layer = 0;
  while (queue.length) {
    const n = nodes.get(queue.shift());
    topo.push(n);
    for (const e of n.eout) {
      const m = nodes.get(e.b);
      m.layer = Math.max(m.layer, n.layer + 1);
      indeg.set(m.id, indeg.get(m.id) - 1);
      if (indeg.get(m.id) === 0) queue.push(m.id);
    }
  }
  for (const n of [...topo].reverse()) {
    if (n.eout.length) n.layer = Math.max(n.layer, Math.min(...n.eout.map(e => nodes.get(e.b).layer)) - 1);
  }

  // Waypoints: a chain of slots for every edge longer than one layer.
  const layers = [];
  const put = v => (layers[v.layer] = layers[v.layer] || []).push(v);
  nodes.forEach(put);
  const links = []; // one per layer gap crossed: {u, v, e}
  for (const e of edges) {
    let u = nodes.get(e.a);
    const b = nodes.get(e.b);
    e.chain = [u];
    for (let l = u.layer + 1; l < b.layer; l++) {
      const w = {id: "w" + e.index + "." + l, way: true, layer: l, so: WAY_W, sr: 0, in: [], out: []};
      put(w);
      links.push({u, v: w, e});
      e.chain.push(w);
      u = w;
    }
    links.push({u, v: b, e});
    e.chain.push(b);
  }
  for (const k of links) { k.u.out.push(k); k.v.in.push(k); }
  for (let i = 0; i < layers.length; i++) layers[i] = layers[i] || [];
  // Order inside the layers: barycenter sweeps, keeping the order with
  // the fewest crossings.
  layers.forEach(l => l.sort((x, y) => (x.way - y.way) || String(x.name || x.id).localeCompare(String(y.name || y.id))).forEach((v, i) => v.pos = i));
  const crossings = () => {
    let c = 0;
    for (let i = 0; i + 1 < layers.length; i++) {
      const ks = links.filter(k => k.u.layer === i).map(k => [k.u.pos, k.v.pos]);
      for (let a = 0; a < ks.length; a++) for (let b = a + 1; b < ks.length; b++) {
        if ((ks[a][0] - ks[b][0]) * (ks[a][1] - ks[b][1]) < 0) c++;
      }
    }
    return c;
  };
  const positions = () => new Map(layers.flat().map(v => [v, v.pos]));
  let best = crossings(), bestPos = positions();
  for (let sweep = 0; sweep < 24 && best > 0; sweep++) {
    const down = sweep % 2 === 0;
    const seq = down ? layers.slice(1) : layers.slice(0, -1).reverse();
    for (const l of seq) {
      for (const v of l) {
        const nb = (down ? v.in.map(k => k.u) : v.out.map(k => k.v)).map(u => u.pos);
        v.bary = nb.length ? nb.reduce((a, b) => a + b, 0) / nb.length : v.pos;
      }
      l.sort((x, y) => x.bary - y.bary || x.pos - y.pos).forEach((v, i) => v.pos = i);
    }
    const c = crossings();
    if (c < best) { best = c; bestPos = positions(); }
  }
  layers.forEach(l => { l.forEach(v => v.pos = bestPos.get(v)); l.sort((x, y) => x.pos - y.pos); });

  // Positions along the order axis: every node as close to the mean of
  // its neighbours as the order and the gaps allow, sweeping both ways.
  const gap = (x, y) => (x.way || y.way ? or.gapO / 2 : or.gapO);
  layers.forEach(l => { let o = 0; l.forEach((v, i) => { if (i) o += l[i - 1].so / 2 + gap(l[i - 1], v) + v.so / 2; v.o = o; }); });
  for (let sweep = 0; sweep < 16; sweep++) {
    const down = sweep % 2 === 0;
    const seq = down ? layers.slice(1) : layers.slice(0, -1).reverse();
    for (const l of seq) {
      const want = l.map(v => {
        const nb = (down ? v.in.map(k => k.u) : v.out.map(k => k.v));
        return nb.length ? nb.reduce((a, u) => a + u.o, 0) / nb.length : v.o;
      });
      place(l, want, gap);
    }
  }
  const minO = Math.min(...layers.flat().map(v => v.o - v.so / 2));
  let r = MARGIN;
  const bands = [];
  for (const l of layers) {
    const t = Math.max(0, ...l.map(v => v.sr));
    for (const v of l) { v.o += MARGIN - minO; v.r = r; }
    bands.push({top: r, bottom: r + t});
    r += t + or.gapR;
  }
  const extO = Math.max(...layers.flat().map(v => v.o + v.so / 2)) + MARGIN;
  const extR = r - or.gapR + MARGIN;
  const [width, height] = or.xy(extO, extR);
  for (const n of nodes.values()) [n.x, n.y] = or.xy(n.o - n.so / 2, n.r);

  // Ports: the edges leaving a node spread over the side facing the next
  // layer, those entering over the side facing the previous one, in the
  // order of where they go.
  const spread = (v, ks, leaving) => {
    const far = k => (leaving ? k.v.o : k.u.o);
    ks.sort((p, q) => far(p) - far(q));
    ks.forEach((k, i) => {
      const o = v.way ? v.o : v.o - v.so * 0.35 + v.so * 0.7 * (i + 1) / (ks.length + 1);
      if (leaving) k.uo = o; else k.vo = o;
    });
  };
  for (const v of layers.flat()) {
    spread(v, v.out, true);
    spread(v, v.in, false);
  }
  // Paths: straight along the slot inside a layer, a curve across a gap.
  const pt = (o, rr) => or.xy(o, rr).join(" ");
  const placed = [];
  for (const e of edges) {
    let d = "", curve = null;
    e.chain.forEach((v, i) => {
      const band = bands[v.layer];
      if (i > 0) {
        const k = v.in.find(k2 => k2.e === e);
        const r1 = bands[v.layer - 1].bottom, r2 = band.top, rm = (r1 + r2) / 2;
        d += ` C ${pt(k.uo, rm)}, ${pt(k.vo, rm)}, ${pt(k.vo, r2)}`;
        curve = [[k.uo, r1], [k.uo, rm], [k.vo, rm], [k.vo, r2]];
        d += ` L ${pt(k.vo, i < e.chain.length - 1 ? band.bottom : v.r)}`;
      } else {
        const k = v.out.find(k2 => k2.e === e);
        d = `M ${pt(k.uo, v.r + v.sr)} L ${pt(k.uo, band.bottom)}`;
      }
    });
    e.d = e.rev ? reversePath(d) : d;
    e.label = labelSpot(curve, or, placed);
  }
  return {nodes, edges, width, height, dir};
}

// labelSpot returns where to put the rate label of an edge whose last
// curve (across the gap before its end) is curve, in abstract
// coordinates: the first of a few points along it whose label box does
// not cover a label placed before (recorded in placed).
function labelSpot(curve, or, placed) {
  if (!curve) return null;
  const bez = t => [0, 1].map(a => (1 - t) ** 3 * curve[0][a] + 3 * (1 - t) ** 2 * t * curve[1][a] + 3 * (1 - t) * t ** 2 * curve[2][a] + t ** 3 * curve[3][a]);
  const W = 36, H = 14;
  let spot = null;
  for (const t of [0.5, 0.35, 0.65, 0.22, 0.78]) {
    const [o, r] = bez(t), [x, y] = or.xy(o, r);
    const box = {l: x - W / 2, r: x + W / 2, t: y - H / 2, b: y + H / 2};
    if (!placed.some(p => box.l < p.r && box.r > p.l && box.t < p.b && box.b > p.t)) { spot = {x, y, box}; break; }
    if (!spot) spot = {x, y, box};
  }
  placed.push(spot.box);
  return {x: spot.x, y: spot.y};
}

// place sets the order-axis positions of the nodes of layer l (in order)
// as close to want as the gaps between them allow: least squares under
// the order constraints (pool adjacent violators over the nodes' offsets).
function place(l, want, gap) {
  const off = [0];
  for (let i = 1; i < l.length; i++) off.push(off[i - 1] + l[i - 1].so / 2 + gap(l[i - 1], l[i]) + l[i].so / 2);
  const blocks = [];
  for (let i = 0; i < l.length; i++) {
    let b = {from: i, to: i, sum: want[i] - off[i], n: 1};
    while (blocks.length && blocks[blocks.length - 1].sum / blocks[blocks.length - 1].n > b.sum / b.n) {
      const p = blocks.pop();
      b = {from: p.from, to: b.to, sum: p.sum + b.sum, n: p.n + b.n};
    }
    blocks.push(b);
  }
  for (const b of blocks) for (let i = b.from; i <= b.to; i++) l[i].o = b.sum / b.n + off[i];
}

// reversePath reverses a path of M, L and C commands.
function reversePath(d) {
  const toks = d.trim().split(/\s+/);
  const pts = [];
  let i = 0;
  while (i < toks.length) {
    const cmd = toks[i++];
    const xy = () => { const p = [parseFloat(toks[i]), parseFloat(toks[i + 1])]; i += 2; return p; };
    if (cmd === "M" || cmd === "L") pts.push({cmd: "L", p: [xy()]});
    else if (cmd === "C") pts.push({cmd: "C", p: [xy(), xy(), xy()]});
  }
  const end = pts.map(s => s.p[s.p.length - 1]);
  let out = `M ${end[end.length - 1][0]} ${end[end.length - 1][1]}`;
  for (let k = pts.length - 1; k > 0; k--) {
    const s = pts[k], to = end[k - 1];
    const fix = q => String(q).replace(",", " ");
    if (s.cmd === "C") out += ` C ${fix(s.p[1])}, ${fix(s.p[0])}, ${to[0]} ${to[1]}`;
    else out += ` L ${to[0]} ${to[1]}`;
  }
  return out;
}

function edgeClass(e) {
  const c = ["edge"];
  const t = e.edgeType;
  if (t.startsWith("Output")) c.push("output");
  if (t === "InputWeak") c.push("weak");
  if (t.includes("Mapped")) c.push("mapped");
  if (t.includes("DestroyReady")) c.push("destroyReady");
  if (e.inferred) c.push("inferred");
  return c.join(" ");
}

// scaleOf is the scale at which a layout fits the canvas.
function scaleOf(lay) {
  const canvas = document.getElementById("canvas");
  return Math.min(Math.max(canvas.clientWidth, 100) / lay.width, Math.max(canvas.clientHeight, 100) / lay.height, MAX_SCALE);
}

// draw builds the SVG for doc's graph, in the orientation that shows it
// largest on the canvas.
function draw(doc) {
  const svg = document.getElementById("graph");
  svg.textContent = "";
  namespaceRank = new Map([...new Set(doc.nodes.filter(n => n.namespace).map(n => n.namespace))].sort().map((ns, i) => [ns, i]));
  const tb = layout(doc, "TB"), lr = layout(doc, "LR");
  const lay = scaleOf(lr) > scaleOf(tb) * 1.05 ? lr : tb;
  svg.dataset.width = lay.width;
  svg.dataset.height = lay.height;
  svg.dataset.orientation = lay.dir;
  fit(svg);
  const defs = el("defs", {}, svg);
  for (const [id, color] of [["arrow", "#666"], ["arrow-active", "#1f4fa0"], ["arrow-red", "#c33"]]) {
    const marker = el("marker", {id, viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 12, markerHeight: 12, markerUnits: "userSpaceOnUse", orient: "auto"}, defs);
    el("path", {d: "M 0 0 L 10 5 L 0 10 z", fill: color}, marker);
  }
  const edgeLayer = el("g", {class: "edges"}, svg), labelLayer = el("g", {class: "labels"}, svg), nodeLayer = el("g", {class: "nodes"}, svg);
  const edges = lay.edges.map(e => {
    const path = el("path", {d: e.d, class: edgeClass(e), "marker-end": e.edgeType.includes("DestroyReady") ? "url(#arrow-red)" : "url(#arrow)",
      "data-edge": e.index, "data-from": e.from, "data-to": e.to}, edgeLayer);
    const title = el("title", {}, path);
    title.textContent = `${e.controller}: ${e.edgeType}${e.id ? " (ID " + e.id + ")" : ""}${e.inferred ? " — namespace inferred: not seen written yet" : ""}`;
    const rate = e.label ? el("text", {x: e.label.x, y: e.label.y + 4, class: "rate", "text-anchor": "middle", "data-edge": e.index}, labelLayer) : null;
    return {path, rate, edge: e};
  });
  const nodes = new Map();
  for (const n of lay.nodes.values()) {
    const gEl = el("g", {class: "node " + n.kind, "data-id": n.id, "data-name": n.name, transform: `translate(${n.x},${n.y})`}, nodeLayer);
    if (n.namespace != null) gEl.setAttribute("data-namespace", n.namespace);
    el("rect", {width: n.w, height: n.h, rx: n.kind === "controller" ? 4 : 10}, gEl);
    const base = i => PAD_Y + 13 + i * LINE;
    const indent = PAD_X + (n.kind === "resource" ? 4 : 0);
    const lines = [];
    let row = 0;
    // marks draws the node's badges right-aligned on row r, left of right.
    const marks = (r, right) => {
      for (const m of [...(n.marks || [])].reverse()) {
        const w = measure(m.text, "10px sans-serif") + 10;
        right -= w;
        const b = el("g", {class: "mark mark-" + m.class, transform: `translate(${right},${base(r) - 10})`}, gEl);
        el("rect", {width: w, height: 13, rx: 6.5}, b);
        const tt = el("text", {x: 5, y: 10}, b);
        tt.textContent = m.text;
        el("title", {}, b).textContent = m.title || m.text;
        right -= 4;
      }
      return right;
    };
    if (n.kind === "resource") {
      const color = n.namespace ? namespaceColor(n.namespace) : "#888";
      el("path", {class: "ns", d: `M 12 0 H 6 A 6 6 0 0 0 0 6 V ${n.h - 6} A 6 6 0 0 0 6 ${n.h} H 12 Z`, style: "fill: " + color}, gEl);
      const ns = el("text", {x: indent, y: base(0), class: "namespace", style: "fill: " + color}, gEl);
      ns.textContent = n.namespace || "namespace not known yet";
      const rate = el("text", {x: n.w - PAD_X, y: base(0), class: "stats", "text-anchor": "end"}, gEl);
      lines.push(rate);
      n.marksRight = marks(0, n.w - PAD_X - 78);
      row = 1;
    }
    const name = el("text", {x: indent, y: base(row), class: "name"}, gEl);
    n.lines.forEach((line, i) => {
      el("tspan", {x: indent, y: base(row + i)}, name).textContent = line;
    });
    row += n.lines.length;
    if (n.kind === "controller") {
      lines.push(el("text", {x: indent, y: base(row), class: "stats"}, gEl));
      n.marksRight = marks(row, n.w - PAD_X);
      lines.push(el("text", {x: indent, y: base(row + 1), class: "stats"}, gEl));
      if (n.failing) lines.push(el("text", {x: indent, y: base(row + 2), class: "err"}, gEl));
    }
    const title = el("title", {}, gEl);
    title.textContent = n.kind === "resource" ? `${n.namespace || "?"}/${n.name}` : n.name;
    gEl.addEventListener("click", () => select(n.id));
    nodes.set(n.id, {node: n, g: gEl, lines, title});
  }
  return {key: graphKey(doc), nodes, edges, doc};
}

// fit scales the drawing to the canvas: smaller when the canvas is
// smaller, larger up to MAX_SCALE when it is larger.
function fit(svg) {
  const canvas = document.getElementById("canvas");
  const w = Number(svg.dataset.width), h = Number(svg.dataset.height);
  if (!w || !h) return;
  const cw = Math.max(canvas.clientWidth, 100), ch = Math.max(canvas.clientHeight, 100);
  const scale = Math.min(cw / w, ch / h, MAX_SCALE);
  // The view box covers the canvas at that scale, the drawing centred.
  const vw = cw / scale, vh = ch / scale;
  svg.setAttribute("viewBox", `${(w - vw) / 2} ${(h - vh) / 2} ${vw} ${vh}`);
  svg.setAttribute("width", cw);
  svg.setAttribute("height", ch);
}

// update writes doc's values into the drawn graph.
function update(doc) {
  const byName = new Map(doc.controllers.map(c => [c.name, c]));
  const byID = new Map(doc.nodes.map(n => [n.id, n]));
  for (const v of view.nodes.values()) {
    const n = v.node;
    if (n.kind === "controller") {
      const c = byName.get(n.name);
      if (!c) continue;
      v.g.setAttribute("data-state", c.state);
      v.g.setAttribute("data-reconciles", c.reconciles);
      v.g.setAttribute("data-rate", c.reconcileRate == null ? "" : c.reconcileRate);
      const room = n.w - 2 * PAD_X;
      v.lines[0].textContent = fitText(`${c.state === "hotLoop" ? "HOT LOOP" : c.state} · ${c.family === "qcontroller" ? "queue " + c.queueLen + (c.inFlight ? " +" + c.inFlight : "") : "controller"}`, n.marksRight - PAD_X - 4, SMALL);
      v.lines[1].textContent = fitText(`${fmtRate(c.reconcileRate)} · lag ${c.lagP99Ns != null ? fmtDur(c.lagP99Ns) : "–"} · busy ${Math.round((c.busy || 0) * 100)}%`, room, SMALL);
      if (v.lines[2]) v.lines[2].textContent = c.lastError ? fitText("⚠ " + c.lastError, room, SMALL) : "";
      const lead = c.leadership;
      v.title.textContent = n.name + (c.why ? "\n" + c.why : "") + (c.hotLoop ? "\nhot loop: " + c.hotLoop : "") + (c.lastError ? "\nlast error: " + c.lastError : "") +
        (lead ? `\n${lead.role} in election ${lead.election} since ${lead.since}${lead.term ? " (term " + lead.term + ")" : ""}` : "");
    } else {
      const r = byID.get(n.id);
      let rate = r ? r.changeRate : null, what = "changes";
      if (r && r.changes == null) {
        // Not watched: what its writers wrote.
        const ins = doc.edges.filter(e => e.to === n.id && e.rate != null);
        rate = ins.length ? ins.reduce((a, e) => a + e.rate, 0) : null;
        what = "written";
      }
      v.g.setAttribute("data-rate", rate != null ? rate : "");
      v.lines[0].textContent = `${fmtRate(rate)} ${what}`;
    }
  }
  doc.edges.forEach((e, i) => {
    const v = view.edges[i];
    if (!v) return;
    v.path.classList.toggle("active", e.rate > 0);
    if (e.rate > 0 && !e.edgeType.includes("DestroyReady")) v.path.setAttribute("marker-end", "url(#arrow-active)");
    else v.path.setAttribute("marker-end", e.edgeType.includes("DestroyReady") ? "url(#arrow-red)" : "url(#arrow)");
    if (v.rate) {
      v.rate.textContent = e.count == null ? "" : fmtRate(e.rate);
      v.rate.setAttribute("data-rate", e.rate == null ? "" : e.rate);
    }
  });
  const st = document.getElementById("status");
  st.classList.remove("stale");
  const win = doc.windowNs ? `rates over ${fmtDur(doc.windowNs)}` : "rates: not yet";
  st.textContent = `${doc.controllers.length} controllers · ${win} · updated ${new Date(doc.time).toLocaleTimeString()}`;
  document.body.setAttribute("data-updates", String(Number(document.body.getAttribute("data-updates") || 0) + 1));
}

async function poll() {
  try {
    const resp = await fetch("live?format=json", {cache: "no-store"});
    if (!resp.ok) throw new Error(resp.status + " " + resp.statusText);
    const doc = await resp.json();
    lastDoc = doc;
    if (!view || view.key !== graphKey(doc)) {
      view = draw(doc);
      if (selected) markSelected();
    }
    update(doc);
  } catch (err) {
    const st = document.getElementById("status");
    st.classList.add("stale");
    st.textContent = "update failed: " + err.message;
  }
  setTimeout(poll, POLL_MS);
}

window.addEventListener("resize", () => {
  if (!lastDoc) return;
  view = draw(lastDoc);
  update(lastDoc);
  markSelected();
});

function markSelected() {
  for (const v of view.nodes.values()) v.g.classList.toggle("selected", v.node.id === selected);
  document.getElementById("panel").classList.toggle("open", selected != null);
}

// select shows the explanation of node id in the panel.
function select(id) {
  selected = id;
  markSelected();
  const n = view.nodes.get(id).node;
  if (n.kind === "controller") {
    explain("controller=" + encodeURIComponent(n.name));
  } else {
    explainKind(n);
  }
}

document.getElementById("close").addEventListener("click", () => {
  selected = null;
  markSelected();
});

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

// explainKind lists the controllers around a resource kind and the
// resources of that kind the trace saw recently, each linking to its
// explanation.
async function explainKind(n) {
  const box = document.getElementById("explain");
  box.textContent = "";
  const h = document.createElement("h2");
  h.textContent = `${n.namespace || "?"}/${n.name}`;
  box.appendChild(h);
  const p = document.createElement("p");
  const edges = lastDoc ? lastDoc.edges : [];
  const writers = edges.filter(e => e.to === n.id).map(e => e.controller + (e.inferred ? " (namespace inferred)" : ""));
  const readers = edges.filter(e => e.from === n.id).map(e => e.controller);
  p.textContent = `written by ${writers.join(", ") || "no controller of this Runtime"}; read by ${readers.join(", ") || "none"}`;
  box.appendChild(p);
  try {
    const resp = await fetch("../trace?type=" + encodeURIComponent(n.name) + "&limit=500", {cache: "no-store"});
    const seen = new Map();
    for (const line of (await resp.text()).split("\n")) {
      if (!line) continue;
      const ev = JSON.parse(line);
      for (const r of [ev.resource, ev.cause]) {
        if (r && r.type === n.name && (!n.namespace || r.namespace === n.namespace)) seen.set(r.namespace + "/" + r.type + "/" + r.id, r);
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
