"""``relayir compare MODEL``: the same model on the same inputs and thread count through
relayir (graph, VM, AOT where they apply), ONNX Runtime and PyTorch eager, timed
interleaved (one run of each engine per round, so drift hits all alike; idle threads
sleep rather than spin, so one engine's pool does not slow the next), in ONE table:
latency median and range, speed-up and max abs / rel error vs each peer, prepare time.
``--json`` writes the same table for scripts."""

from __future__ import annotations

import os
import statistics

import numpy as np

from .command import Command, add_build_options, add_input_options, input_shapes, load
from .compiled import BuildOptions, model_inputs
from .console import Console
from .engines import PEERS, Engine, Skipped, onnxruntime_engine, relayir_engines, torch_engine
from .inputs import read_npz, resolve
from .runners import CommandError

PEER_ENGINES = {"torch": torch_engine, "onnxruntime": onnxruntime_engine}


def add_arguments(p) -> None:
    p.add_argument("model", help="model file: .onnx or .pt2 (.relay runs relayir only)")
    p.add_argument("--with", dest="peers", default=",".join(PEERS), metavar="ENGINES",
                   help=f"peers to compare with, comma-separated (default: {','.join(PEERS)})")
    p.add_argument("--threads", type=int, metavar="N",
                   help="threads for every engine (OMP_NUM_THREADS, torch, onnxruntime)")
    p.add_argument("--repeat", type=int, default=20, metavar="N",
                   help="timed rounds; each runs every engine once (default: 20)")
    p.add_argument("--json", nargs="?", const="-", metavar="FILE",
                   help="write the table as JSON to FILE (no FILE: to stdout, no table)")
    add_build_options(p)
    add_input_options(p)


def _peers(text: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    unknown = [n for n in names if n not in PEERS]
    if unknown:
        raise CommandError(f"--with: unknown engine {unknown[0]!r}; the peers are "
                           f"{', '.join(PEERS)}")
    return names


def run(args, console: Console) -> int:
    peers = _peers(args.peers)
    # before torch or any kernel library (and their OpenMP runtimes) load: engines take
    # turns, and one runtime's idle threads spinning would take the cores from the next
    # (on a busy machine, 100x slower runs); OMP_WAIT_POLICY set by the user is kept
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    mod, params = load(args.model, args, console)
    specs = model_inputs(mod, params)
    given = read_npz(args.inputs) if args.inputs else {}
    inputs = resolve(specs, given, args.fill, input_shapes(args), console)
    static = all(s.static for s in specs)
    engines = relayir_engines(mod, params, inputs, BuildOptions.from_args(args), static, console)
    for name in peers:
        with console.task(f"preparing {name}"):
            engines.append(PEER_ENGINES[name](args.model, inputs, args.threads))
    ran = [e for e in engines if isinstance(e, Engine)]
    with console.task(f"timing {len(ran)} engines, {args.repeat} interleaved rounds"):
        for e in ran:
            e.outputs = e.run()  # warm-up, and the outputs compared
        for _ in range(max(args.repeat, 1)):
            for e in ran:
                e.times.append(e.timed() * 1e3)
    report = _report(args, engines, inputs)
    if args.json:
        console.json(report, args.json)
        if args.json == "-":
            return 0
    _table(console, report)
    return 0


def _errors(got: list[np.ndarray], want: list[np.ndarray]) -> tuple[float, float] | None:
    if len(got) != len(want) or any(a.shape != b.shape for a, b in zip(got, want)):
        return None
    abs_err = rel_err = 0.0
    for a, b in zip(got, want):
        if a.size == 0:
            continue
        diff = float(np.max(np.abs(a.astype("float64") - b.astype("float64"))))
        scale = float(np.max(np.abs(b.astype("float64")))) or 1.0
        abs_err, rel_err = max(abs_err, diff), max(rel_err, diff / scale)
    return abs_err, rel_err


def _report(args, engines, inputs) -> dict:
    ran = [e for e in engines if isinstance(e, Engine)]
    peers = [e for e in ran if not e.name.startswith("relayir")] or ran[:1]
    rows = []
    for e in engines:
        if isinstance(e, Skipped):
            rows.append({"engine": e.name, "status": "skipped", "reason": e.reason})
            continue
        med = statistics.median(e.times)
        vs = {}
        for p in peers:
            err = _errors(e.outputs, p.outputs)
            vs[p.name] = {"speedup": statistics.median(p.times) / med if med else None,
                          "max_abs_err": err[0] if err else None,
                          "max_rel_err": err[1] if err else None,
                          "outputs_match_in_shape": err is not None}
        rows.append({"engine": e.name, "status": "ok", "prepare_s": e.prepare_s,
                     "median_ms": med, "min_ms": min(e.times), "max_ms": max(e.times),
                     "vs": vs, "note": e.note})
    return {"model": args.model, "threads": args.threads, "rounds": max(args.repeat, 1),
            "inputs": {k: {"shape": list(v.shape), "dtype": v.dtype.name}
                       for k, v in inputs.items()},
            "peers": [p.name for p in peers], "engines": rows}


def _table(console: Console, report: dict) -> None:
    """The report as one table; skipped engines' reasons and notes as footnotes."""
    peers = report["peers"]
    columns = ["engine", "prepare (s)", "median (ms)", "range (ms)"]
    for p in peers:
        columns += [f"vs {p}", f"abs / rel err vs {p}"]
    rows, notes = [], []
    for r in report["engines"]:
        text = f"skipped: {r['reason']}" if r["status"] == "skipped" else r["note"]
        mark = ""
        if text:
            notes.append(f"[{len(notes) + 1}] {r['engine']}: {text}")
            mark = f" [{len(notes)}]"
        if r["status"] == "skipped":
            rows.append([r["engine"] + mark, "skipped", *[""] * (len(columns) - 2)])
            continue
        row = [r["engine"] + mark, f"{r['prepare_s']:.2f}", f"{r['median_ms']:.3f}",
               f"{r['min_ms']:.3f}-{r['max_ms']:.3f}"]
        for p in peers:
            v = r["vs"][p]
            row.append(f"{v['speedup']:.3g}x" if v["speedup"] else "-")
            row.append(f"{v['max_abs_err']:.1e} / {v['max_rel_err']:.1e}"
                       if v["outputs_match_in_shape"] else "shapes differ")
        rows.append(row)
    shapes = ", ".join(f"{k}{v['shape']} {v['dtype']}" for k, v in report["inputs"].items())
    threads = report["threads"] or "default"
    console.table(columns, rows, title=f"{report['model']}: {report['rounds']} interleaved "
                                       f"rounds, threads {threads}, inputs {shapes}")
    for note in notes:
        console.print(note)


COMMAND = Command(
    "compare", "compare relayir with ONNX Runtime and PyTorch on your model",
    "Run MODEL through relayir (graph executor, VM, AOT where they apply), ONNX Runtime "
    "(an .onnx file, or a .pt2 exported to ONNX) and PyTorch eager (a .pt2) on the same "
    "inputs and thread count, interleaved, and print one table: latency median and range, "
    "speed-up and max abs / rel error vs each peer, and prepare (compile) time. Engines "
    "not installed are listed as skipped with the pip install that enables them.",
    ("relayir compare resnet.onnx --threads 4 --repeat 50",
     "relayir compare bert.pt2 --inputs in.npz --json results.json",
     "relayir compare model.onnx --with onnxruntime --json | jq '.engines[0]'"),
    add_arguments, run)
