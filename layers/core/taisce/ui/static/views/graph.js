// An entity's neighbourhood drawn with Cytoscape.js (vendored, see README.md). Entity
// nodes are links: a click (or Enter on the list beside the graph) opens that entity.

import cytoscape from "../vendor/cytoscape-3.35.0.esm.min.js";

const STYLE = [
  {
    selector: "node",
    style: {
      label: "data(name)",
      "font-size": 12,
      color: "#111",
      "text-valign": "bottom",
      "text-margin-y": 4,
      "background-color": "#2f5d9b",
      width: 22,
      height: 22,
      "text-wrap": "ellipsis",
      "text-max-width": 140,
    },
  },
  { selector: "node[hop = 0]", style: { "background-color": "#b3261e", width: 30, height: 30 } },
  { selector: "node[hop = 2]", style: { "background-color": "#6b8fc7" } },
  {
    selector: 'node[kind = "value"]',
    style: { shape: "round-rectangle", "background-color": "#8a8a8a", width: 14, height: 14 },
  },
  {
    selector: "edge",
    style: {
      width: 1.5,
      "line-color": "#777",
      "target-arrow-color": "#777",
      "target-arrow-shape": "triangle",
      "curve-style": "bezier",
      label: "data(predicate)",
      "font-size": 10,
      color: "#333",
      "text-rotation": "autorotate",
      "text-background-color": "#fff",
      "text-background-opacity": 0.85,
      "text-background-padding": 2,
    },
  },
  { selector: 'edge[closed = "yes"]', style: { "line-style": "dashed" } },
  {
    selector: 'node[kind = "values"]',
    style: { shape: "round-rectangle", "background-color": "#8a8a8a", "border-width": 1, "border-color": "#555", width: 26, height: 18 },
  },
  {
    selector: 'node[kind = "more"]',
    style: { shape: "round-rectangle", "background-color": "#d8dde6", "border-width": 1, "border-color": "#555", width: 26, height: 18 },
  },
];

// A hub's neighbours beyond this many are one group node: more is an illegible starburst
// (the list beside the graph names them all).
export const MAX_NEIGHBOURS = 40;

// The nodes and edges drawn: the centre, its nearest neighbours (entities before values,
// hop 1 before hop 2) up to MAX_NEIGHBOURS, and a node standing for the rest.
export function capped(data, limit = MAX_NEIGHBOURS) {
  const centre = data.nodes.filter((n) => n.hop === 0);
  const around = data.nodes
    .filter((n) => n.hop !== 0)
    .map((n, i) => ({ n, i }))
    .sort((a, b) => a.n.hop - b.n.hop || (a.n.kind === "entity" ? 0 : 1) - (b.n.kind === "entity" ? 0 : 1) || a.i - b.i)
    .map(({ n }) => n);
  const kept = [...centre, ...around.slice(0, limit)];
  const ids = new Set(kept.map((n) => n.id));
  const nodes = kept.map((n) => ({ data: { ...n } }));
  const edges = data.edges
    .filter((e) => ids.has(e.source) && ids.has(e.target))
    .map((e) => ({ data: { ...e, id: "edge:" + e.id, closed: e.valid_to ? "yes" : "no" } }));
  const rest = around.length - Math.min(around.length, limit);
  if (rest > 0 && centre.length) {
    nodes.push({ data: { id: "more", name: `+${rest} more (listed)`, kind: "more", hop: 1 } });
    edges.push({ data: { id: "edge:more", source: centre[0].id, target: "more", predicate: "", closed: "yes" } });
  }
  // The values drawn, as one node that stands for them when they are grouped (hidden
  // until then).
  const values = kept.filter((n) => n.kind === "value").length;
  if (values && centre.length) {
    nodes.push({ data: { id: "values", name: `${values} value${values === 1 ? "" : "s"} (grouped)`, kind: "values", hop: 1 } });
    edges.push({ data: { id: "edge:values", source: centre[0].id, target: "values", predicate: "", closed: "no" } });
  }
  return { elements: [...nodes, ...edges], hidden: rest };
}

// What the graph shows: values ("shown", "grouped" into one node, or "hidden") and the
// links of one predicate only ("" for all). A node left with no link shown is hidden
// too, except the centre. Returns the nodes shown.
export function applyView(cy, { values = "shown", predicate = "" } = {}) {
  cy.batch(() => {
    cy.elements().style("display", "element");
    cy.nodes('[kind = "values"]').style("display", values === "grouped" ? "element" : "none");
    if (values !== "shown") cy.nodes('[kind = "value"]').style("display", "none");
    if (predicate) cy.edges().filter((e) => e.data("predicate") !== predicate).style("display", "none");
    for (const edge of cy.edges()) {
      if (edge.source().style("display") === "none" || edge.target().style("display") === "none") edge.style("display", "none");
    }
    cy.nodes()
      .filter((n) => n.data("hop") !== 0 && n.connectedEdges().filter((e) => e.style("display") !== "none").length === 0)
      .style("display", "none");
  });
  return cy.nodes().filter((n) => n.style("display") !== "none");
}

export function drawGraph(container, data, onOpen) {
  const { elements, hidden } = capped(data);
  container.dataset.hidden = String(hidden);
  const cy = cytoscape({
    container,
    elements,
    style: STYLE,
    layout: {
      name: "concentric",
      concentric: (node) => 3 - node.data("hop"),
      levelWidth: () => 1,
      minNodeSpacing: 40,
      padding: 40,
      animate: false,
    },
    minZoom: 0.3,
    // A small neighbourhood is not blown up to fill the box.
    maxZoom: 1.4,
  });
  applyView(cy);
  cy.on("tap", 'node[kind = "entity"]', (event) => {
    const node = event.target;
    if (node.data("hop") !== 0) onOpen(node.data("name"));
  });
  cy.on("mouseover", 'node[kind = "entity"]', () => {
    container.style.cursor = "pointer";
  });
  cy.on("mouseout", "node", () => {
    container.style.cursor = "";
  });
  // For the end-to-end tests: where a node is drawn, so they can click it as a person would.
  container.taisceGraph = cy;
  return cy;
}
