// Graph executor: the kernel list in execution order and the memory plan as a
// timeline: each intermediate tensor a bar over the kernels during which it lives, at
// its offset in the one arena all intermediates share. Totals come from the same
// graph JSON relay.build wrote.
"use strict";

RX.register({
  id: "executor",
  title: "Graph executor",
  render(root) {
    const data = RX.data.executor;
    if (!data || data.unavailable) {
      root.appendChild(RX.unavailable("graph executor", data ? data.unavailable : "not in this report"));
      return;
    }
    const plan = data.plan;
    root.appendChild(RX.stats([
      ["arena (planned)", RX.fmtBytes(plan.planned_bytes), plan.planned_bytes + " bytes"],
      ["one buffer per tensor", RX.fmtBytes(plan.naive_bytes),
        (100 * plan.planned_bytes / Math.max(plan.naive_bytes, 1)).toFixed(1) + "% planned / naive"],
      ["lower bound (peak live)", RX.fmtBytes(plan.peak_bytes), ""],
      ["inputs and params", RX.fmtBytes(plan.input_bytes), ""],
      ["outputs", RX.fmtBytes(plan.output_bytes), ""],
      ["kernels", String(data.kernels.length), plan.intermediates + " intermediate tensors"],
      ["latency", RX.fmtMs(data.latency_ms), data.runs ? "median of " + data.runs + " runs" : "not run"],
    ]));
    root.lastChild.id = "plan-stats";
    const arena = data.entries.filter((e) => e.storage === plan.arena_storage && e.kind === "intermediate");
    const timeline = RX.el("div", {class: "timeline-box"});
    root.appendChild(RX.el("h3", {}, "Memory plan: tensors over time (x: kernel, y: offset in the arena)"));
    root.appendChild(timeline);
    const nk = Math.max(data.kernels.length, 1);
    const width = Math.max(600, Math.min(1600, nk * 14 + 80));
    const height = 300;
    const x = (k) => 60 + (k / nk) * (width - 80);
    const y = (b) => 10 + (b / Math.max(plan.planned_bytes, 1)) * (height - 40);
    const svg = RX.svg("svg", {class: "timeline", id: "memory-timeline", width: width, height: height,
      viewBox: "0 0 " + width + " " + height});
    svg.appendChild(RX.svg("rect", {x: 60, y: 10, width: width - 80, height: height - 40, class: "arena"}));
    for (let t = 0; t <= 4; t += 1) {
      const b = plan.planned_bytes * t / 4;
      svg.appendChild(RX.svg("text", {x: 56, y: y(b) + 4, class: "axis", "text-anchor": "end"}, RX.fmtBytes(Math.round(b))));
    }
    const cursor = RX.svg("line", {class: "cursor", x1: 0, x2: 0, y1: 10, y2: height - 30, visibility: "hidden"});
    arena.forEach((e) => {
      const hue = (e.start * 47) % 360;
      svg.appendChild(RX.svg("rect", {x: x(e.start), width: Math.max(x(e.end + 1) - x(e.start) - 1, 2),
        y: y(e.offset), height: Math.max(y(e.offset + e.bytes) - y(e.offset), 1.5),
        class: "tensor", fill: "hsl(" + hue + ",60%,60%)", "data-start": e.start, "data-end": e.end},
      RX.svg("title", {}, e.name + " output: " + e.shape.join("×") + " " + e.dtype + "\n" +
        e.bytes + " bytes at offset " + e.offset + "\nlives from kernel " + e.start + " to kernel " + e.end)));
    });
    svg.appendChild(RX.svg("text", {x: 60, y: height - 12, class: "axis"}, "kernel 0"));
    svg.appendChild(RX.svg("text", {x: width - 20, y: height - 12, class: "axis", "text-anchor": "end"},
      "kernel " + (nk - 1)));
    svg.appendChild(cursor);
    timeline.appendChild(svg);
    const entry = (eid) => data.entries[eid];
    const shape = (e) => e.shape.join("×") + " " + e.dtype;
    const maxUs = Math.max(1e-9, ...data.kernels.map((k) => k.us || 0));
    const rows = data.kernels.map((k, i) => {
      const out = k.outputs.map((eid) => shape(entry(eid))).join(", ");
      const ins = k.inputs.map((eid) => entry(eid).name).join(", ");
      const bar = k.us !== undefined ? RX.el("span", {class: "bar", style: "width:" + (100 * k.us / maxUs).toFixed(1) + "%"}) : "";
      return [String(i), k.name, out, ins, k.us !== undefined ? k.us.toFixed(1) : "–", bar];
    });
    root.appendChild(RX.el("h3", {}, "Kernels in execution order" +
      (data.profile ? " (mean µs per call of each kernel, from GraphModule.profile())" : "")));
    const table = RX.table(["#", "kernel", "output", "inputs", "µs", ""], rows, {id: "kernel-table"});
    table.addEventListener("click", (ev) => {
      const tr = ev.target.closest("tr");
      if (!tr || !tr.parentNode || tr.parentNode.tagName !== "TBODY") return;
      const k = [...tr.parentNode.children].indexOf(tr);
      for (const r of tr.parentNode.children) r.classList.toggle("selected", r === tr);
      cursor.setAttribute("x1", x(k + 0.5)); cursor.setAttribute("x2", x(k + 0.5));
      cursor.setAttribute("visibility", "visible");
      for (const rect of svg.querySelectorAll("rect.tensor")) {
        const live = Number(rect.dataset.start) <= k && k <= Number(rect.dataset.end);
        rect.classList.toggle("live", live);
      }
    });
    root.appendChild(RX.el("div", {class: "table-box"}, table));
    if (data.profile) {
      root.appendChild(RX.el("details", {}, RX.el("summary", {}, "profile() table"),
        RX.codeBlock(data.profile.table, {id: "profile-text"})));
    }
    root.appendChild(RX.el("details", {}, RX.el("summary", {}, "memory plan"),
      RX.codeBlock(plan.text, {id: "plan-text"})));
  },
});
