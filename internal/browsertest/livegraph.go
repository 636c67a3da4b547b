package browsertest

import (
	"context"

	"github.com/chromedp/chromedp"
)

// LiveGraph is what the live graph page (pkg/debughttp) rendered, read
// from its DOM and the geometry of its SVG.
type LiveGraph struct {
	// Updates counts the documents the page applied; Status is its status
	// line (which says why it failed to update, when it did).
	Updates int    `json:"updates"`
	Status  string `json:"status"`
	// Controllers and Resources are the nodes drawn.
	Controllers []LiveNode `json:"controllers"`
	Resources   []LiveNode `json:"resources"`
	// Edges are the edges drawn, with the rate each shows.
	Edges []LiveEdge `json:"edges"`
	// Names lists the nodes whose name text is not their whole name, and
	// the texts that overflow their node's box.
	Names []string `json:"names"`
	// Crossings lists every point where an edge passes behind a node it
	// does not end at, or inside a node it ends at, and every rate label
	// drawn over a node.
	Crossings []string `json:"crossings"`
	// Canvas and Drawing are the sizes of the page's canvas (the viewport
	// below its header) and of the drawing's bounding box on screen, in CSS
	// pixels.
	Canvas  [2]float64 `json:"canvas"`
	Drawing [2]float64 `json:"drawing"`
}

// LiveNode is a node drawn.
type LiveNode struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Text is the node's whole text (name, statistics), State a
	// controller's state, Rate its reconcile rate or a resource's change
	// rate ("" when unknown).
	Text  string   `json:"text"`
	State string   `json:"state"`
	Rate  string   `json:"rate"`
	Marks []string `json:"marks"`
}

// LiveEdge is an edge drawn: its end nodes' IDs and the rate it shows.
type LiveEdge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Class string `json:"class"`
	Label string `json:"label"`
	Rate  string `json:"rate"`
}

// readLiveGraph reads the live graph from the page: nodes from their data
// attributes and texts, and geometry from the screen positions of the
// nodes' boxes, of points every 2 px along every edge, and of the rate
// labels. A point counts as behind a box when it is more than 1.5 px
// inside it; an edge's path may touch the boxes it ends at.
const readLiveGraph = `(() => {
  const svg = document.getElementById("graph");
  const inset = 1.5;
  const boxes = [...svg.querySelectorAll("g.node")].map(g => {
    const r = g.querySelector(":scope > rect").getBoundingClientRect();
    return {id: g.dataset.id, g, l: r.left, t: r.top, r: r.right, b: r.bottom};
  });
  const inside = (x, y, b) => x > b.l + inset && x < b.r - inset && y > b.t + inset && y < b.b - inset;
  const out = {updates: Number(document.body.dataset.updates || 0), status: document.getElementById("status").textContent,
    controllers: [], resources: [], edges: [], names: [], crossings: [], canvas: [0, 0], drawing: [0, 0]};
  if (!svg.querySelector("g.nodes")) return out;
  for (const b of boxes) {
    const g = b.g;
    const n = {id: g.dataset.id, name: g.dataset.name, namespace: g.dataset.namespace || "",
      text: [...g.querySelectorAll("text")].map(t => t.textContent).join(" | "),
      state: g.dataset.state || "", rate: g.dataset.rate || "",
      marks: [...g.querySelectorAll("g.mark text")].map(t => t.textContent)};
    (g.classList.contains("controller") ? out.controllers : out.resources).push(n);
    const name = g.querySelector("text.name");
    if (!name || name.textContent !== g.dataset.name) out.names.push(g.dataset.id + ": name drawn as " + JSON.stringify(name ? name.textContent : null));
    for (const t of g.querySelectorAll("text")) {
      if (!t.textContent) continue;
      const r = t.getBoundingClientRect();
      if (r.left < b.l - 0.5 || r.right > b.r + 0.5 || r.top < b.t - 0.5 || r.bottom > b.b + 0.5) {
        out.names.push(g.dataset.id + ": text " + JSON.stringify(t.textContent) + " overflows its box");
      }
    }
  }
  for (const p of svg.querySelectorAll("path.edge")) {
    const label = svg.querySelector('text.rate[data-edge="' + p.dataset.edge + '"]');
    out.edges.push({from: p.dataset.from, to: p.dataset.to, class: p.getAttribute("class"),
      label: label ? label.textContent : "", rate: label ? label.dataset.rate || "" : ""});
    const len = p.getTotalLength(), m = p.getScreenCTM();
    const hit = new Set();
    for (let s = 0; s <= len; s += 2) {
      const q = p.getPointAtLength(s).matrixTransform(m);
      for (const b of boxes) {
        if (!hit.has(b.id) && inside(q.x, q.y, b)) {
          hit.add(b.id);
          out.crossings.push("edge " + p.dataset.from + " -> " + p.dataset.to + " passes inside " + b.id + " at (" + q.x.toFixed(0) + ", " + q.y.toFixed(0) + ")");
        }
      }
    }
  }
  for (const t of svg.querySelectorAll("text.rate")) {
    if (!t.textContent) continue;
    const r = t.getBoundingClientRect();
    for (const b of boxes) {
      if (r.right > b.l + inset && r.left < b.r - inset && r.bottom > b.t + inset && r.top < b.b - inset) {
        out.crossings.push("rate label " + JSON.stringify(t.textContent) + " of edge " + t.dataset.edge + " over " + b.id);
      }
    }
  }
  const d = svg.querySelector("g.nodes").getBoundingClientRect(), e = svg.querySelector("g.edges").getBoundingClientRect();
  const canvas = document.getElementById("canvas");
  out.canvas = [canvas.clientWidth, canvas.clientHeight];
  out.drawing = [Math.max(d.right, e.right) - Math.min(d.left, e.left), Math.max(d.bottom, e.bottom) - Math.min(d.top, e.top)];
  return out;
})()`

// ReadLiveGraph reads what the live graph page in the tab rendered.
func ReadLiveGraph(ctx context.Context) (LiveGraph, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[LiveGraph](readLiveGraph))
}
