// The explorer's shared helpers: the report data, element builders, number formats,
// and the view registry the tabs are made from. Every view renders lazily, the first
// time its tab is shown.
"use strict";

const RX = {
  data: null,
  views: [],  // {id, title, render(root)} in tab order
  SVG_NS: "http://www.w3.org/2000/svg",
};

// el("div", {class: "x", onclick: f}, child, "text", ...): an HTML element
RX.el = function (tag, attrs, ...children) {
  const node = document.createElement(tag);
  RX.setAttrs(node, attrs);
  RX.append(node, children);
  return node;
};

// svg("rect", {x: 1}): an SVG element
RX.svg = function (tag, attrs, ...children) {
  const node = document.createElementNS(RX.SVG_NS, tag);
  RX.setAttrs(node, attrs);
  RX.append(node, children);
  return node;
};

RX.setAttrs = function (node, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
};

RX.append = function (node, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
};

RX.clear = function (node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
};

RX.fmtBytes = function (n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
  return (i === 0 ? String(v) : v.toFixed(2)) + " " + units[i];
};

RX.fmtMs = function (ms) {
  if (ms === null || ms === undefined) return "–";
  if (ms < 1) return (ms * 1000).toFixed(1) + " µs";
  return ms.toFixed(ms < 10 ? 3 : 1) + " ms";
};

// a box saying why a view (or part of one) has nothing to show
RX.unavailable = function (what, reason) {
  return RX.el("div", {class: "unavailable"}, RX.el("b", {}, what + ": "), reason);
};

// a small table: header cells, rows of cells (strings or nodes)
RX.table = function (head, rows, attrs) {
  return RX.el("table", Object.assign({class: "grid"}, attrs || {}),
    RX.el("thead", {}, RX.el("tr", {}, head.map((h) => RX.el("th", {}, h)))),
    RX.el("tbody", {}, rows.map((r) => RX.el("tr", {}, r.map((c) => RX.el("td", {}, c))))));
};

// stat boxes: [[label, value, note], ...]
RX.stats = function (items) {
  return RX.el("div", {class: "stats"}, items.map(([label, value, note]) =>
    RX.el("div", {class: "stat"}, RX.el("div", {class: "stat-value"}, value),
      RX.el("div", {class: "stat-label"}, label),
      note ? RX.el("div", {class: "stat-note"}, note) : null)));
};

// a <pre> of Relay / bytecode text; lines in `fresh` (a Set) are marked new
RX.codeBlock = function (text, attrs, fresh) {
  const pre = RX.el("pre", Object.assign({class: "code"}, attrs || {}));
  if (!fresh) { pre.textContent = text; return pre; }
  const frag = document.createDocumentFragment();
  for (const line of text.split("\n")) {
    const span = RX.el("span", {class: fresh.has(line) ? "line new" : "line"}, line + "\n");
    frag.appendChild(span);
  }
  pre.appendChild(frag);
  return pre;
};

// a row of toggle buttons; onPick(value) when one is chosen
RX.segmented = function (items, current, onPick, attrs) {
  const box = RX.el("div", Object.assign({class: "segmented"}, attrs || {}));
  const buttons = items.map(([value, label, id]) => RX.el("button", {
    type: "button", id: id, class: value === current ? "on" : "",
    onclick: () => {
      for (const b of buttons) b.classList.remove("on");
      btn(value).classList.add("on");
      onPick(value);
    },
  }, label));
  const btn = (value) => buttons[items.findIndex((it) => it[0] === value)];
  RX.append(box, buttons);
  return box;
};

RX.register = function (view) { RX.views.push(view); };
