// Pipeline: @main as imported and after each pass. A slider and buttons move between
// steps; each step shows the graph (fused groups as clusters after FuseOps), the Relay
// text (lines new in this step marked) and what changed. For a PyTorch model the
// torch.export graph is shown beside the imported Relay graph.
"use strict";

RX.register({
  id: "pipeline",
  title: "Pipeline",
  render(root) {
    const data = RX.data.pipeline;
    const steps = data.steps;
    // a step that changed nothing shows the last step that did
    const shownAt = [];
    steps.forEach((s, i) => { shownAt.push(s.same ? shownAt[i - 1] : i); });
    let current = 0;

    const slider = RX.el("input", {type: "range", min: 0, max: steps.length - 1, value: 0,
      id: "pass-slider", class: "slider"});
    const label = RX.el("span", {class: "step-label", id: "pass-label"});
    const changes = RX.el("div", {class: "changes", id: "pass-changes"});
    const textBox = RX.el("div", {class: "text-pane", id: "pipeline-text"});
    const graphBox = RX.el("div", {class: "graph-pane"});
    const go = (i) => { current = Math.max(0, Math.min(steps.length - 1, i)); show(); };
    const nextChange = () => {
      for (let i = current + 1; i < steps.length; i += 1) {
        if (!steps[i].same) { go(i); return; }
      }
    };
    root.appendChild(RX.el("div", {class: "controls"},
      RX.el("button", {type: "button", id: "prev-pass", onclick: () => go(current - 1)}, "◀ previous pass"),
      slider,
      RX.el("button", {type: "button", id: "next-pass", onclick: () => go(current + 1)}, "next pass ▶"),
      RX.el("button", {type: "button", id: "next-change", onclick: nextChange}, "next change ▶▶"),
      label));
    slider.addEventListener("input", () => go(Number(slider.value)));
    root.appendChild(changes);
    root.appendChild(RX.el("div", {class: "split"}, graphBox, textBox));
    const graph = new RX.GraphView(graphBox, {id: "pipeline-graph"});

    if (data.torch) {
      root.appendChild(RX.el("h3", {}, "PyTorch program (torch.export FX graph) beside the Relay module it was imported as"));
      const fxGraph = RX.el("div", {class: "graph-pane"});
      const relayGraph = RX.el("div", {class: "graph-pane"});
      root.appendChild(RX.el("p", {class: "note"}, "FX: " + data.torch.nodes +
        " nodes (placeholders for inputs and weights, aten calls, the output); Relay: " +
        steps[0].nodes + " nodes, typed let-bindings (weights bound as constants)."));
      root.appendChild(RX.el("div", {class: "split"}, fxGraph, relayGraph));
      new RX.GraphView(fxGraph, {id: "torch-graph"}).setGraph(data.torch.graph);
      new RX.GraphView(relayGraph, {id: "imported-graph"}).setGraph(steps[0].graph);
      root.appendChild(RX.el("details", {}, RX.el("summary", {}, "FX code"),
        RX.codeBlock(data.torch.code, {id: "torch-code"})));
    }

    const ruleText = (rules) => Object.entries(rules).map(([k, v]) => k + " ×" + v).join(", ");
    const countText = (counts, sign) => Object.entries(counts).sort((a, b) => b[1] - a[1])
      .map(([k, v]) => sign + v + " " + k).join(", ");

    function show() {
      slider.value = current;
      const step = steps[current];
      const drawn = steps[shownAt[current]];
      label.textContent = "step " + (current + 1) + " of " + steps.length + ": " +
        (current === 0 ? "as imported" : "after " + step.name + " (" + RX.fmtMs(step.ms) + ")") +
        (step.same ? " · no change" : "");
      RX.clear(changes);
      const facts = [];
      if (current === 0) {
        facts.push(drawn.ops + " op calls, " + drawn.constants + " constants, " + drawn.nodes +
          " graph nodes");
      } else if (step.same) {
        facts.push(step.name + " left the module as it was");
      } else {
        const added = countText(step.added || {}, "+");
        const removed = countText(step.removed || {}, "−");
        facts.push(added || removed ? [added, removed].filter((x) => x).join("; ") : "same ops");
        facts.push("constants " + step.constants_before + " → " + step.constants +
          (step.constants < step.constants_before ? " (folded)" : ""));
        facts.push(step.ops + " op calls");
        if (step.fused) facts.push(step.fused + " fused functions (kernels)");
      }
      const rules = ruleText(step.rules || {});
      if (rules) facts.push("rules fired: " + rules);
      RX.append(changes, facts.map((f) => RX.el("span", {class: "fact"}, f)));
      graph.setGraph(drawn.graph);
      // the text, with the lines that are not in the previous distinct step marked
      let fresh = null;
      if (shownAt[current] > 0 && !step.same) {
        const before = new Set(steps[shownAt[current - 1]].text.split("\n"));
        fresh = new Set(drawn.text.split("\n").filter((l) => !before.has(l)));
      }
      RX.clear(textBox);
      const lines = drawn.text.split("\n");
      const main = lines.findIndex((l) => l.startsWith("def @main"));
      textBox.appendChild(RX.codeBlock(drawn.text, {id: "pass-text"},
        fresh || (main > 2 ? new Set() : null)));
      if (main > 2) {  // after the prelude, say: show @main first
        textBox.scrollTop = textBox.querySelectorAll(".line")[main].offsetTop - 8;
      }
    }
    show();
  },
});
