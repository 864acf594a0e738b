// A graph drawn with dagre (the vendored layout engine): nodes, clusters (fused
// functions, closure bodies), edges, hover text; pan by dragging, zoom with the wheel.
// Big graphs start with their blocks folded (one node per block; click to unfold);
// the search box finds nodes by name, unfolds what hides them and centres the first.
"use strict";

RX.GraphView = class {
  constructor(container, options) {
    this.options = Object.assign({foldAbove: 80, id: "graph"}, options || {});
    this.graph = null;
    this.folded = new Set();  // indices of folded blocks
    this.matches = new Set();
    this.layouts = new WeakMap();  // graph -> Map(fold key -> layout)
    const id = this.options.id;
    this.search = RX.el("input", {type: "search", placeholder: "search nodes by name",
      id: id + "-search", class: "search"});
    this.search.addEventListener("keydown", (e) => { if (e.key === "Enter") this.find(); });
    this.info = RX.el("span", {class: "graph-info", id: id + "-info"});
    const toolbar = RX.el("div", {class: "graph-toolbar"}, this.search,
      RX.el("button", {type: "button", id: id + "-find", onclick: () => this.find()}, "find"),
      RX.el("button", {type: "button", id: id + "-unfold", onclick: () => this.foldAll(false)},
        "unfold all"),
      RX.el("button", {type: "button", id: id + "-fold", onclick: () => this.foldAll(true)},
        "fold blocks"),
      RX.el("button", {type: "button", onclick: () => this.fit()}, "fit"),
      this.info);
    this.svg = RX.svg("svg", {class: "graph", id: id});
    this.root = RX.el("div", {class: "graph-view"}, toolbar, this.svg);
    container.appendChild(this.root);
    this.view = {x: 0, y: 0, k: 1};
    this.installPanZoom();
  }

  setGraph(graph) {
    if (graph === this.graph) return;
    this.graph = graph;
    this.matches = new Set();
    this.folded = new Set();
    if (graph && graph.nodes.length > this.options.foldAbove) {
      graph.blocks.forEach((b, i) => { if (b.nodes.length >= 3) this.folded.add(i); });
    }
    this.render(true);
  }

  foldAll(fold) {
    if (!this.graph) return;
    this.folded = new Set(fold ? this.graph.blocks.map((b, i) => i) : []);
    this.render(true);
  }

  // which node stands for each node: itself, or its folded block ("b<i>")
  representatives() {
    const rep = this.graph.nodes.map((n, i) => "n" + i);
    for (const bi of this.folded) {
      for (const n of this.graph.blocks[bi].nodes) rep[n] = "b" + bi;
    }
    return rep;
  }

  layout() {
    const graph = this.graph;
    const key = [...this.folded].sort((a, b) => a - b).join(",");
    let cache = this.layouts.get(graph);
    if (!cache) { cache = new Map(); this.layouts.set(graph, cache); }
    if (cache.has(key)) return cache.get(key);
    const rep = this.representatives();
    const g = new dagre.graphlib.Graph({compound: true, multigraph: false});
    g.setGraph({rankdir: "TB", nodesep: 16, ranksep: 24, marginx: 12, marginy: 12});
    g.setDefaultEdgeLabel(() => ({}));
    const shown = new Map();
    graph.nodes.forEach((n, i) => {
      const id = rep[i];
      if (shown.has(id)) return;
      if (id[0] === "n") {
        shown.set(id, {index: i, node: n, label: n.l, sub: n.t});
      } else {
        const bi = Number(id.slice(1));
        const block = graph.blocks[bi];
        const ops = block.nodes.map((k) => graph.nodes[k]).filter((m) => m.k === "op");
        const first = graph.blocks.findIndex((b) => b.sig === block.sig);
        shown.set(id, {block: bi, label: "block " + (bi + 1) + " · " + block.nodes.length +
          " nodes", sub: ops.length ? ops[0].l + " … " + ops[ops.length - 1].l : "",
          same: first !== bi ? first : -1});
      }
    });
    for (const [id, item] of shown) {
      const width = Math.max(56, 6.6 * Math.max(item.label.length, (item.sub || "").length) + 18);
      g.setNode(id, {width: width, height: item.sub ? 34 : 22});
    }
    const clusters = new Set();
    for (const [id, item] of shown) {
      if (item.node && item.node.c >= 0) {
        const cid = "c" + item.node.c;
        if (!clusters.has(cid)) { g.setNode(cid, {}); clusters.add(cid); }
        g.setParent(id, cid);
      }
    }
    const edges = new Set();
    for (const [s, d] of graph.edges) {
      const a = rep[s], b = rep[d];
      if (a === b || edges.has(a + ">" + b)) continue;
      edges.add(a + ">" + b);
      g.setEdge(a, b);
    }
    dagre.layout(g);
    const result = {shown: shown, g: g, clusters: clusters, width: g.graph().width || 100,
      height: g.graph().height || 100};
    cache.set(key, result);
    return result;
  }

  render(fit) {
    RX.clear(this.svg);
    if (!this.graph) return;
    const lay = this.layout();
    const g = lay.g;
    const id = this.options.id;
    const defs = RX.svg("defs", {}, RX.svg("marker", {id: id + "-arrow", viewBox: "0 0 8 8",
      refX: 7, refY: 4, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse"},
    RX.svg("path", {d: "M0,0 L8,4 L0,8 z", class: "arrowhead"})));
    this.canvas = RX.svg("g", {class: "viewport"});
    this.svg.appendChild(defs);
    this.svg.appendChild(this.canvas);
    for (const cid of lay.clusters) {
      const c = g.node(cid);
      const info = this.graph.clusters[Number(cid.slice(1))];
      this.canvas.appendChild(RX.svg("g", {class: "cluster " + info.k},
        RX.svg("rect", {x: c.x - c.width / 2, y: c.y - c.height / 2, width: c.width,
          height: c.height, rx: 6}),
        RX.svg("text", {x: c.x - c.width / 2 + 4, y: c.y - c.height / 2 - 3,
          class: "cluster-label"}, info.l),
        RX.svg("title", {}, (info.k === "fused" ? "fused function (one kernel): " : "") + info.l)));
    }
    for (const e of g.edges()) {
      const pts = g.edge(e).points;
      const d = pts.map((p, i) => (i ? "L" : "M") + p.x.toFixed(1) + "," + p.y.toFixed(1)).join("");
      this.canvas.appendChild(RX.svg("path", {d: d, class: "edge",
        "marker-end": "url(#" + id + "-arrow)"}));
    }
    for (const [nid, item] of lay.shown) {
      const box = g.node(nid);
      const x = box.x - box.width / 2, y = box.y - box.height / 2;
      const n = item.node;
      let cls = "node";
      if (n) {
        cls += " k-" + n.k + (n.a ? " added" : "") + (n.o ? " output" : "") +
          (this.matches.has(item.index) ? " match" : "");
      } else {
        cls += " block" + ([...this.matches].some((m) =>
          this.graph.blocks[item.block].nodes.includes(m)) ? " match" : "");
      }
      const hover = n ? n.h : item.label + "\n" + (item.sub || "") +
        (item.same >= 0 ? "\nsame ops as block " + (item.same + 1) : "") + "\nclick to unfold";
      const group = RX.svg("g", {class: cls, "data-node": nid, transform:
        "translate(" + x.toFixed(1) + "," + y.toFixed(1) + ")"},
      RX.svg("rect", {width: box.width, height: box.height, rx: n && n.k === "op" ? 4 : 10}),
      RX.svg("text", {x: box.width / 2, y: item.sub ? 14 : 15, class: "label"}, item.label),
      item.sub ? RX.svg("text", {x: box.width / 2, y: 28, class: "sub"}, item.sub) : null,
      RX.svg("title", {}, hover));
      if (!n) {
        group.addEventListener("click", () => { this.folded.delete(item.block); this.render(false); });
      }
      this.canvas.appendChild(group);
    }
    const folded = this.folded.size;
    this.info.textContent = this.graph.nodes.length + " nodes, " + this.graph.edges.length +
      " edges" + (folded ? ", " + folded + " blocks folded (click one to unfold)" : "");
    if (fit) this.fit(); else this.apply();
  }

  fit() {
    if (!this.graph) return;
    const lay = this.layout();
    const w = this.svg.clientWidth || 600;
    const h = this.svg.clientHeight || 400;
    // readable first: the width fits when it can; a tall graph is panned, not shrunk
    const k = Math.max(0.5, Math.min(1.2, w / lay.width));
    this.view = {k: k, x: Math.max(4, (w - lay.width * k) / 2), y: 4};
    this.apply();
  }

  apply() {
    if (this.canvas) {
      this.canvas.setAttribute("transform", "translate(" + this.view.x.toFixed(1) + "," +
        this.view.y.toFixed(1) + ") scale(" + this.view.k.toFixed(4) + ")");
    }
  }

  installPanZoom() {
    let drag = null;
    this.svg.addEventListener("mousedown", (e) => {
      drag = {x: e.clientX, y: e.clientY, vx: this.view.x, vy: this.view.y};
    });
    window.addEventListener("mousemove", (e) => {
      if (!drag) return;
      this.view.x = drag.vx + e.clientX - drag.x;
      this.view.y = drag.vy + e.clientY - drag.y;
      this.apply();
    });
    window.addEventListener("mouseup", () => { drag = null; });
    this.svg.addEventListener("wheel", (e) => {
      e.preventDefault();
      const rect = this.svg.getBoundingClientRect();
      const px = e.clientX - rect.left, py = e.clientY - rect.top;
      const factor = Math.exp(-e.deltaY * 0.0015);
      const k = Math.min(4, Math.max(0.05, this.view.k * factor));
      this.view.x = px - (px - this.view.x) * (k / this.view.k);
      this.view.y = py - (py - this.view.y) * (k / this.view.k);
      this.view.k = k;
      this.apply();
    }, {passive: false});
  }

  // find nodes whose names contain the search text; unfold their blocks; centre the first
  find() {
    const q = this.search.value.trim().toLowerCase();
    this.matches = new Set();
    if (!this.graph || !q) { this.render(false); return 0; }
    this.graph.nodes.forEach((n, i) => {
      if ((n.n + " " + n.l).toLowerCase().includes(q)) this.matches.add(i);
    });
    this.graph.blocks.forEach((b, bi) => {
      if (b.nodes.some((m) => this.matches.has(m))) this.folded.delete(bi);
    });
    this.render(false);
    this.info.textContent += " · " + this.matches.size + " match" +
      (this.matches.size === 1 ? "" : "es") + " for “" + q + "”";
    if (this.matches.size) {
      const first = Math.min(...this.matches);
      const box = this.layout().g.node("n" + first);
      const w = this.svg.clientWidth || 600, h = this.svg.clientHeight || 400;
      this.view.x = w / 2 - box.x * this.view.k;
      this.view.y = h / 2 - box.y * this.view.k;
      this.apply();
    }
    return this.matches.size;
  }
};
