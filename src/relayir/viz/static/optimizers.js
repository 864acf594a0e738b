// Optimisers: SGD, Momentum and AdaGrad on a 2-D surface whose gradient relayir
// computed (transform.gradient, built once). Paths were precomputed for a range of
// learning rates; the slider picks one and the paths animate over the contour plot
// (d3-contour draws the contours of the surface's values on a grid).
"use strict";

RX.register({
  id: "optimizers",
  title: "Optimisers",
  render(root) {
    const data = RX.data.optimizers;
    if (!data || data.unavailable) {
      root.appendChild(RX.unavailable("optimisers", data ? data.unavailable : "not in this report"));
      return;
    }
    const names = data.optimizers;
    const colours = {SGD: "#d62728", Momentum: "#1f77b4", AdaGrad: "#2ca02c"};
    let surface = data.surfaces[0];
    let chosen = new Set(names);
    const n = surface.lrs[names[0]].length;
    // start at the largest learning rate at which every path stays on the plot
    const inside = (s, path) => path.length > data.steps && path.every(([x, y]) =>
      x >= s.bounds[0] && x <= s.bounds[1] && y >= s.bounds[2] && y <= s.bounds[3]);
    const steady = (s, i) => names.every((name) => inside(s, s.paths[name][i]));
    let lrIndex = 0;
    for (let i = 0; i < n; i += 1) if (steady(surface, i)) lrIndex = i;
    let frame = data.steps;
    let animation = null;
    const W = 560, H = 460;

    const lrSlider = RX.el("input", {type: "range", min: 0, max: n - 1, value: lrIndex, id: "lr-slider", class: "slider"});
    const stepSlider = RX.el("input", {type: "range", min: 0, max: data.steps, value: frame, id: "optim-step", class: "slider"});
    const lrLabel = RX.el("div", {class: "legend", id: "lr-label"});
    const play = RX.el("button", {type: "button", id: "optim-play", onclick: () => animate()}, "▶ animate");
    const canvas = RX.el("canvas", {width: W, height: H, class: "surface"});
    const overlay = RX.svg("svg", {width: W, height: H, class: "surface-overlay", id: "optim-plot"});
    const formula = RX.el("div", {class: "note"});
    root.appendChild(RX.el("div", {class: "controls"},
      RX.segmented(data.surfaces.map((s, i) => [i, s.name, "surface-" + s.name.toLowerCase()]), 0,
        (i) => { surface = data.surfaces[i]; drawSurface(); animate(); }),
      RX.el("span", {}, " learning rate "), lrSlider,
      RX.el("span", {}, " step "), stepSlider, play));
    root.appendChild(RX.el("div", {class: "controls"}, names.map((name) => {
      const box = RX.el("input", {type: "checkbox", checked: true, id: "show-" + name});
      box.addEventListener("change", () => {
        if (box.checked) chosen.add(name); else chosen.delete(name);
        drawPaths();
      });
      return RX.el("label", {class: "check", style: "color:" + colours[name]}, box, " " + name);
    })));
    root.appendChild(RX.el("div", {class: "split"},
      RX.el("div", {class: "plot"}, canvas, overlay),
      RX.el("div", {class: "column"}, formula, lrLabel,
        RX.el("details", {}, RX.el("summary", {}, "the gradient relayir compiled (Relay text)"),
          RX.codeBlock("", {id: "optim-gradient"})))));

    const toX = (x) => ((x - surface.bounds[0]) / (surface.bounds[1] - surface.bounds[0])) * W;
    const toY = (y) => H - ((y - surface.bounds[2]) / (surface.bounds[3] - surface.bounds[2])) * H;

    function drawSurface() {
      const g = surface.grid;
      const logv = g.values.map((v) => Math.log10(v + 1e-3));
      const lo = Math.min(...logv), hi = Math.max(...logv);
      const ctx = canvas.getContext("2d");
      const img = ctx.createImageData(g.n, g.n);
      for (let j = 0; j < g.n; j += 1) {
        for (let i = 0; i < g.n; i += 1) {
          const t = (logv[j * g.n + i] - lo) / Math.max(hi - lo, 1e-9);
          const row = g.n - 1 - j;  // grid rows go up in y; image rows go down
          const o = 4 * (row * g.n + i);
          img.data[o] = 250 - 140 * t; img.data[o + 1] = 248 - 120 * t; img.data[o + 2] = 240 - 40 * t;
          img.data[o + 3] = 255;
        }
      }
      const tmp = document.createElement("canvas");
      tmp.width = g.n; tmp.height = g.n;
      tmp.getContext("2d").putImageData(img, 0, 0);
      ctx.imageSmoothingEnabled = true;
      ctx.drawImage(tmp, 0, 0, W, H);
      RX.clear(overlay);
      const levels = d3.range(14).map((k) => lo + (hi - lo) * (k + 0.5) / 14);
      const contours = d3.contours().size([g.n, g.n]).thresholds(levels)(logv);
      const sx = W / (g.n - 1), sy = H / (g.n - 1);
      for (const c of contours) {
        let d = "";
        for (const polygon of c.coordinates) {
          for (const ring of polygon) {
            d += ring.map(([x, y], i) => (i ? "L" : "M") + (x * sx).toFixed(1) + "," +
              (H - y * sy).toFixed(1)).join("") + "Z";
          }
        }
        overlay.appendChild(RX.svg("path", {d: d, class: "contour"}));
      }
      overlay.appendChild(RX.svg("circle", {cx: toX(surface.minimum[0]), cy: toY(surface.minimum[1]), r: 5, class: "minimum"},
        RX.svg("title", {}, "minimum (" + surface.minimum.join(", ") + ")")));
      overlay.appendChild(RX.svg("circle", {cx: toX(surface.start[0]), cy: toY(surface.start[1]), r: 4, class: "start"},
        RX.svg("title", {}, "start (" + surface.start.join(", ") + ")")));
      for (const name of names) {
        overlay.appendChild(RX.svg("path", {id: "traj-" + name, class: "trajectory", stroke: colours[name]}));
        overlay.appendChild(RX.svg("circle", {id: "head-" + name, r: 4, fill: colours[name], class: "head"}));
      }
      formula.textContent = surface.name + ": f(x, y) = " + surface.formula + "; " + data.steps +
        " steps from (" + surface.start.join(", ") + "); momentum " + data.momentum + ".";
      document.getElementById("optim-gradient").textContent = surface.gradient_text;
    }

    function drawPaths() {
      const rows = [];
      for (const name of names) {
        const path = surface.paths[name][lrIndex];
        const upto = path.slice(0, Math.min(frame + 1, path.length));
        const el = document.getElementById("traj-" + name);
        const head = document.getElementById("head-" + name);
        const visible = chosen.has(name);
        el.setAttribute("d", upto.map(([x, y], i) => (i ? "L" : "M") + toX(x).toFixed(1) + "," + toY(y).toFixed(1)).join(""));
        el.setAttribute("visibility", visible ? "visible" : "hidden");
        const last = upto[upto.length - 1];
        head.setAttribute("cx", toX(last[0])); head.setAttribute("cy", toY(last[1]));
        head.setAttribute("visibility", visible ? "visible" : "hidden");
        const diverged = path.length <= data.steps;
        rows.push(RX.el("div", {style: "color:" + colours[name]}, name + ": lr " +
          surface.lrs[name][lrIndex] + (diverged ? " · diverged after " + (path.length - 1) + " steps"
            : " · at (" + last[0].toFixed(3) + ", " + last[1].toFixed(3) + ")")));
      }
      RX.clear(lrLabel);
      RX.append(lrLabel, rows);
      stepSlider.value = frame;
    }

    function animate() {
      if (animation) cancelAnimationFrame(animation);
      let t0 = null;  // the first frame's time (frame times can precede performance.now())
      const tick = (now) => {
        if (t0 === null) t0 = now;
        frame = Math.max(0, Math.min(data.steps, Math.floor((now - t0) / 10)));
        drawPaths();
        animation = frame < data.steps ? requestAnimationFrame(tick) : null;
      };
      animation = requestAnimationFrame(tick);
    }

    lrSlider.addEventListener("input", () => { lrIndex = Number(lrSlider.value); frame = data.steps; drawPaths(); animate(); });
    stepSlider.addEventListener("input", () => {
      if (animation) { cancelAnimationFrame(animation); animation = null; }
      frame = Number(stepSlider.value);
      drawPaths();
    });
    drawSurface();
    drawPaths();
  },
});
