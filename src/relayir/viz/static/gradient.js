// Gradient: the Relay program transform.gradient makes (compile time: the backward
// pass is more let-bindings in the same typed function), before and after the
// pipeline, beside the autograd graph PyTorch records (run time: a tape of grad_fn
// nodes) for the same loss.
"use strict";

RX.register({
  id: "gradient",
  title: "Gradient",
  render(root) {
    const data = RX.data.gradient;
    if (data.unavailable) { root.appendChild(RX.unavailable("gradient", data.unavailable)); return; }
    const torch = data.torch || null;
    const rows = [
      ["Relay gradient, before optimisation", data.before.counts.ops, data.before.counts.lets,
        data.before.counts.kernels || "–"],
      ["Relay gradient, after the pipeline", data.after.counts.ops, data.after.counts.lets,
        data.after.counts.kernels],
    ];
    if (torch && !torch.unavailable) {
      rows.push(["PyTorch autograd graph (recorded while the loss ran)", torch.nodes + " nodes", "–", "–"]);
    }
    root.appendChild(RX.el("p", {class: "note"}, data.default
      ? "The loss: the built-in MLP (dense, bias, relu, dense, bias) with a log-softmax cross-entropy. " +
        "relayir differentiates the program once, at compile time, into another Relay function " +
        "returning (loss, gradients); PyTorch records a tape while the loss runs and walks it backwards."
      : "The loss given to explore(), differentiated by transform.gradient."));
    root.appendChild(RX.table(["program", "op calls", "let-bindings", "kernels"], rows,
      {id: "gradient-counts"}));
    const values = [];
    const num = (v, f) => (typeof v === "number" ? f(v) : "not finite");
    if (data.value !== undefined) {
      values.push("loss computed by the compiled gradient: " + num(data.value, (v) => v.toPrecision(7)));
    }
    if (torch && torch.value !== undefined) {
      values.push("PyTorch: " + num(torch.value, (v) => v.toPrecision(7)));
      values.push("largest gradient difference: " + num(torch.max_grad_difference, (v) => v.toExponential(2)));
    }
    if (values.length) root.appendChild(RX.el("p", {class: "values", id: "gradient-values"}, values.join(" · ")));
    let which = "before";
    const relayPane = RX.el("div", {class: "graph-pane"});
    const torchPane = RX.el("div", {class: "graph-pane"});
    const textBox = RX.el("div", {class: "text-pane wide"});
    root.appendChild(RX.el("div", {class: "controls"},
      RX.segmented([["before", "before optimisation", "grad-before"],
        ["after", "after the pipeline (fused)", "grad-after"]], which, (v) => { which = v; show(); })));
    root.appendChild(RX.el("div", {class: "split"},
      RX.el("div", {class: "column"}, RX.el("h3", {}, "Relay: transform.gradient"), relayPane),
      RX.el("div", {class: "column"}, RX.el("h3", {}, "PyTorch: autograd graph"), torchPane)));
    root.appendChild(textBox);
    const relayGraph = new RX.GraphView(relayPane, {id: "gradient-graph"});
    if (torch && torch.graph) {
      new RX.GraphView(torchPane, {id: "autograd-graph"}).setGraph(torch.graph);
    } else {
      torchPane.appendChild(RX.unavailable("PyTorch", torch ? torch.unavailable :
        "shown for the built-in loss only"));
    }
    root.appendChild(RX.el("details", {}, RX.el("summary", {}, "the loss function"),
      RX.codeBlock(data.loss_text, {id: "loss-text"})));
    function show() {
      relayGraph.setGraph(data[which].graph);
      RX.clear(textBox);
      textBox.appendChild(RX.codeBlock(data[which].text, {id: "gradient-text"}));
    }
    show();
  },
});
