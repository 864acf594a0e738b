// Start: read the report data, draw the header and the tabs, render the first view.
// A view renders the first time its tab is opened (big models stay quick to open).
// window.RX_READY is set once the first view is on screen.
"use strict";

(function start() {
  RX.data = JSON.parse(document.getElementById("relayir-data").textContent);
  const app = document.getElementById("app");
  const d = RX.data;
  const took = Object.entries(d.ms || {}).map(([k, v]) => k + " " + (v / 1000).toFixed(1) + " s").join(", ");
  app.appendChild(RX.el("header", {},
    RX.el("h1", {}, d.title, RX.el("span", {class: "sub"}, " · relayir explorer")),
    RX.el("div", {class: "meta"}, "target " + d.target + ", opt level " + d.opt_level +
      ", relayir " + d.version + " · made in " + d.seconds.toFixed(1) + " s (" + took + ")" +
      (d.no_run ? " · not run: " + d.no_run : ""))));
  const views = RX.views.filter((v) => d.sections.includes(v.id));
  const tabs = RX.el("nav", {class: "tabs", role: "tablist"});
  const panes = {};
  const rendered = new Set();
  for (const v of views) {
    tabs.appendChild(RX.el("button", {type: "button", role: "tab", id: "tab-" + v.id,
      "data-view": v.id, onclick: () => open(v.id)}, v.title));
    panes[v.id] = RX.el("section", {class: "view", id: "view-" + v.id, hidden: true});
  }
  app.appendChild(tabs);
  for (const v of views) app.appendChild(panes[v.id]);

  function open(id) {
    for (const v of views) {
      panes[v.id].hidden = v.id !== id;
      document.getElementById("tab-" + v.id).classList.toggle("on", v.id === id);
    }
    if (!rendered.has(id)) {
      rendered.add(id);
      views.find((v) => v.id === id).render(panes[id]);
    }
    if (location.hash !== "#" + id) history.replaceState(null, "", "#" + id);
  }
  const wanted = location.hash.slice(1);
  open(views.some((v) => v.id === wanted) ? wanted : views[0].id);
  window.RX_READY = true;
})();
