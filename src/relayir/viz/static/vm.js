// VM: the bytecode of each function, stepped through a recorded run
// (VirtualMachine.trace): the instruction executed at this step is highlighted, the
// register file of the frame it wrote is shown with the registers it wrote marked,
// if/goto jumps are drawn beside the code, and values built by alloc_adt / get_tag /
// get_field are listed. Two more modes: VM beside the graph executor on the same
// model, and the compile-and-run flow.
"use strict";

RX.register({
  id: "vm",
  title: "VM",
  render(root) {
    const data = RX.data.vm;
    if (!data || data.unavailable) {
      root.appendChild(RX.unavailable("VM", data ? data.unavailable : "not in this report"));
      return;
    }
    const body = RX.el("div", {class: "vm-body"});
    let mode = data.trace ? "trace" : "flow";
    root.appendChild(RX.el("div", {class: "controls"}, RX.segmented([
      ["trace", "step through a run", "vm-mode-trace"],
      ["compare", "VM vs graph executor", "vm-mode-compare"],
      ["flow", "compile and run", "vm-mode-flow"]], mode, (m) => { mode = m; show(); })));
    root.appendChild(body);
    const modes = {trace: () => RX.vmTrace(body, data), compare: () => RX.vmCompare(body, data),
      flow: () => RX.vmFlow(body, data)};
    function show() { RX.clear(body); modes[mode](); }
    show();
  },
});

RX.ROW = 18;  // px per bytecode line (the CSS sets .ins to this height)

RX.vmTrace = function (root, data) {
  const trace = data.trace;
  if (!trace) {
    root.appendChild(RX.unavailable("trace", RX.data.no_run || "the model was not run"));
    return;
  }
  const steps = trace.steps;
  const fns = data.functions;
  const ADT_OPS = new Set(["AllocADT", "GetTag", "GetField"]);
  let pos = 0;
  let shownFunc = -1;
  const slider = RX.el("input", {type: "range", min: 0, max: steps.length - 1, value: 0,
    id: "vm-slider", class: "slider"});
  const label = RX.el("span", {class: "step-label", id: "vm-step-label"});
  const go = (p) => { pos = Math.max(0, Math.min(steps.length - 1, p)); show(); };
  root.appendChild(RX.el("div", {class: "controls"},
    RX.el("button", {type: "button", id: "vm-reset", onclick: () => go(0)}, "◀◀ start"),
    RX.el("button", {type: "button", id: "vm-back", onclick: () => go(pos - 1)}, "◀ back"),
    RX.el("button", {type: "button", id: "vm-step", onclick: () => go(pos + 1)}, "step ▶"),
    RX.el("button", {type: "button", id: "vm-end", onclick: () => go(steps.length - 1)}, "run to end ▶▶"),
    slider, label));
  slider.addEventListener("input", () => go(Number(slider.value)));
  if (trace.truncated) {
    root.appendChild(RX.el("p", {class: "note"}, "The run went on past the " + steps.length +
      " recorded steps (explore(trace_limit=...) records more)."));
  }
  const title = RX.el("div", {class: "listing-title", id: "vm-func"});
  const arrows = RX.svg("svg", {class: "jumps"});
  const listing = RX.el("div", {class: "listing", id: "vm-listing"});
  const code = RX.el("div", {class: "listing-box"}, arrows, listing);
  const regs = RX.el("div", {class: "registers", id: "vm-registers"});
  const stackBox = RX.el("div", {class: "callstack", id: "vm-stack"});
  const adtBox = RX.el("div", {class: "adt", id: "vm-values"});
  root.appendChild(RX.el("div", {class: "split vm-split"},
    RX.el("div", {class: "column"}, title, code),
    RX.el("div", {class: "column"}, RX.el("h3", {}, "Registers"), regs,
      RX.el("h3", {}, "Call stack"), stackBox,
      RX.el("h3", {}, "Values built and taken apart (alloc_adt, get_tag, get_field)"), adtBox)));

  const opOf = (s) => fns[s[1]].ops[s[2]];

  // the frames after step p, replaying every write from the start
  function replay(p) {
    const main = fns[steps[0][1]];
    const first = {func: steps[0][1], regs: new Map()};
    main.params.forEach((name, r) => {
      const v = trace.inputs[name];
      if (v) first.regs.set(r, v);
    });
    const stack = [first];
    let frame = first;
    let result = null;
    for (let i = 0; i <= p; i += 1) {
      const s = steps[i];
      const op = opOf(s);
      frame = stack[stack.length - 1];
      if (op === "Invoke" || op === "InvokeClosure") {
        frame = {func: i + 1 < steps.length ? steps[i + 1][1] : s[1], regs: new Map()};
        stack.push(frame);
      } else if (op === "Ret") {
        stack.pop();
        frame = stack.length ? stack[stack.length - 1] : null;
      }
      for (const [r, ty, v] of s[3]) {
        if (r === -1 || !frame) result = [ty, v];
        else if (v === "(cleared)") frame.regs.delete(r);
        else frame.regs.set(r, [ty, v]);
      }
    }
    return {stack: stack, frame: frame, result: result};
  }

  function drawListing(fi) {
    shownFunc = fi;
    const fn = fns[fi];
    title.textContent = "VM Function[" + fi + "]: " + fn.name + "(" +
      fn.params.map((p, i) => "$r" + i).join(", ") + ")" + (fn.closure ? " closure" : "") +
      " · " + fn.lines.length + " instructions, " + fn.regs + " registers";
    RX.clear(listing);
    fn.lines.forEach((line, pc) => {
      listing.appendChild(RX.el("div", {class: "ins op-" + fn.ops[pc], "data-pc": pc}, pc + ": " + line));
    });
    RX.clear(arrows);
    const h = fn.lines.length * RX.ROW;
    arrows.setAttribute("height", h);
    arrows.setAttribute("width", 46);
    fn.jumps.forEach(([from, to], k) => {
      const y1 = from * RX.ROW + RX.ROW / 2, y2 = to * RX.ROW + RX.ROW / 2;
      const bend = 44 - 8 - (k % 4) * 8;
      arrows.appendChild(RX.svg("path", {class: "jump", "data-from": from, "data-to": to,
        d: "M44," + y1 + " C" + bend + "," + y1 + " " + bend + "," + y2 + " 44," + y2}));
      arrows.appendChild(RX.svg("path", {class: "jump-head", d: "M44," + y2 + " l-6,-3 l0,6 z"}));
    });
  }

  function show() {
    slider.value = pos;
    const s = steps[pos];
    const fn = fns[s[1]];
    if (s[1] !== shownFunc) drawListing(s[1]);
    label.textContent = "step " + (pos + 1) + " of " + steps.length + ": @" + fn.name + " " +
      s[2] + ": " + fn.lines[s[2]];
    for (const row of listing.querySelectorAll(".current")) row.classList.remove("current");
    const row = listing.children[s[2]];
    row.classList.add("current");
    const top = row.offsetTop;  // .listing-box is positioned: the offset is inside it
    if (top < code.scrollTop || top > code.scrollTop + code.clientHeight - 40) {
      code.scrollTop = Math.max(0, top - 120);
    }
    // the jump taken here, if this is an if/goto and the next step is in the same frame
    const next = steps[pos + 1];
    for (const j of arrows.querySelectorAll(".jump")) {
      j.classList.toggle("taken", !!next && next[0] === s[0] && Number(j.dataset.from) === s[2] &&
        Number(j.dataset.to) === next[2]);
    }
    const state = replay(pos);
    const written = new Set(s[3].map((w) => w[0]));
    RX.clear(regs);
    if (state.frame) {
      const f = fns[state.frame.func];
      const rows = [];
      for (let r = 0; r < f.regs; r += 1) {
        const v = state.frame.regs.get(r);
        rows.push(RX.el("tr", {class: written.has(r) ? "written" : ""},
          RX.el("td", {class: "reg"}, "$r" + r), RX.el("td", {class: "ty"}, v ? v[0] : ""),
          RX.el("td", {class: "val"}, v ? v[1] : "")));
      }
      regs.appendChild(RX.el("div", {class: "note"}, "frame of @" + f.name +
        (state.frame.func !== s[1] ? " (" + (opOf(s) === "Ret" ? "the caller, after ret" : "the callee, on entry") + ")" : "")));
      regs.appendChild(RX.el("table", {class: "grid regs"}, RX.el("tbody", {}, rows)));
    }
    if (state.result) {
      regs.appendChild(RX.el("div", {class: "result", id: "vm-result"}, "returned to Python: " +
        state.result[0] + " " + state.result[1]));
    }
    RX.clear(stackBox);
    state.stack.slice().reverse().forEach((fr, i) => {
      stackBox.appendChild(RX.el("div", {class: i === 0 ? "frame top" : "frame"}, "@" + fns[fr.func].name));
    });
    if (!state.stack.length) stackBox.appendChild(RX.el("div", {class: "frame"}, "(returned)"));
    RX.clear(adtBox);
    const built = [];
    for (let i = pos; i >= 0 && built.length < 10; i -= 1) {
      const t = steps[i];
      if (ADT_OPS.has(opOf(t)) && t[3].length) {
        built.push(RX.el("div", {class: i === pos ? "adt-row now" : "adt-row"},
          RX.el("span", {class: "where"}, "@" + fns[t[1]].name + " " + t[2] + ": "),
          fns[t[1]].lines[t[2]], RX.el("span", {class: "arrow"}, " → "),
          RX.el("span", {class: "val"}, t[3][0][2])));
      }
    }
    if (!built.length) built.push(RX.el("div", {class: "note"}, "none yet (a model without ADTs builds none)"));
    RX.append(adtBox, built);
  }
  show();
};

RX.vmCompare = function (root, data) {
  const exe = RX.data.executor;
  const main = data.functions.find((f) => f.name === "main") || data.functions[0];
  const executed = data.trace ? data.trace.steps.length : null;
  const calls = data.trace ? data.trace.steps.filter((s) => data.functions[s[1]].ops[s[2]] === "InvokePacked").length : null;
  const left = RX.el("div", {class: "column", id: "vm-compare-vm"},
    RX.el("h3", {}, "VM: bytecode"),
    RX.stats([["instructions in @main", String(main.lines.length), data.instructions + " in " + data.functions.length + " functions"],
      ["executed in the traced run", executed === null ? "–" : String(executed), calls === null ? "" : calls + " kernel calls"],
      ["latency", RX.fmtMs(data.latency_ms), data.runs ? "median of " + data.runs : "not run"]]),
    RX.codeBlock(main.lines.map((l, i) => i + ": " + l).join("\n"), {class: "code short"}));
  let right;
  if (!exe || exe.unavailable) {
    right = RX.el("div", {class: "column"}, RX.el("h3", {}, "Graph executor"),
      RX.unavailable("graph executor", exe ? exe.unavailable : "not in this report"));
  } else {
    right = RX.el("div", {class: "column", id: "vm-compare-graph"},
      RX.el("h3", {}, "Graph executor: a fixed kernel list"),
      RX.stats([["kernels", String(exe.kernels.length), "run back to back over a planned arena"],
        ["arena", RX.fmtBytes(exe.plan.planned_bytes), ""],
        ["latency", RX.fmtMs(exe.latency_ms), exe.runs ? "median of " + exe.runs : "not run"]]),
      RX.codeBlock(exe.kernels.map((k, i) => i + ": " + k.name).join("\n"), {class: "code short"}));
  }
  root.appendChild(RX.el("p", {class: "note"}, "The same model two ways: the VM dispatches " +
    "instructions (allocations, kernel calls, and for other programs if/goto, closures and " +
    "ADTs); the graph executor walks a kernel list fixed at build time."));
  root.appendChild(RX.el("div", {class: "split"}, left, right));
};

RX.vmFlow = function (root, data) {
  const p = RX.data.pipeline;
  const steps = p ? p.steps : [];
  const last = steps.length ? steps[steps.length - 1] : null;
  const box = (head, lines) => RX.el("div", {class: "flow-box"}, RX.el("div", {class: "flow-head"}, head),
    lines.filter((l) => l).map((l) => RX.el("div", {}, l)));
  const arrow = () => RX.el("div", {class: "flow-arrow"}, "→");
  const trace = data.trace;
  root.appendChild(RX.el("div", {class: "flow", id: "vm-flow"},
    box("Relay module", [steps.length ? steps[0].ops + " op calls in @main" : "", "typed, weights bound"]),
    arrow(),
    box("optimise", [steps.length ? (steps.length - 1) + " passes at opt level " + RX.data.opt_level : "",
      last && last.fused ? last.fused + " fused functions" : ""]),
    arrow(),
    box("vm.compile", [data.functions.length + " VM functions", data.instructions + " instructions",
      data.kernels + " kernels", data.constants + " constants", RX.fmtBytes(data.storage_bytes) + " planned storage"]),
    arrow(),
    box("VirtualMachine", [trace ? trace.steps.length + " instructions executed" : "not run",
      "latency " + RX.fmtMs(data.latency_ms)])));
  root.appendChild(RX.el("details", {open: true}, RX.el("summary", {}, "print(exe.bytecode)"),
    RX.codeBlock(data.bytecode, {id: "vm-bytecode"})));
};
