"""Differential fuzzing: random programs through every executor and target, against
the reference interpreter.

    python -m relayir.testing.fuzz --programs 1000 --seed 0 --opt-levels 0,3 \\
        --schedules random --executors interp,graph,vm,aot --targets numpy,cpu \\
        --corpus tests/fuzz_corpus

Program ``k`` is ``fuzz_gen.generate(seed + k)``: every registered op with random valid
attrs (``fuzz_ops``), inputs salted with NaN, +-Inf, -0.0, denormals, huge and tiny
values, empty dimensions and integer extremes, and in some programs control flow
(``if``, closures, recursion, ``foldl`` over a ``List``, ``match``) or dynamic
dimensions, which go to the interpreter-vs-VM pair. The interpreter is the oracle; each
other pair must agree with it (``fuzz_exec``), on the cpu target at every opt level of
``--opt-levels`` (3 is what users run: blocked layouts, Winograd, packed weights; conv
and pool programs are drawn often, ``Options.spatial``); ``--schedules random`` builds
level 3 under random tuner choices (``fuzz_schedules``). A disagreement is shrunk
(``fuzz_shrink``) and written to the corpus (``fuzz_corpus``), which the tests replay.

The summary counts what the comparison excused, element by element, by rule
(``fuzz_compare.RULES``), and the cpu runs that used numpy reference kernels (not
passes of the C back end: listed apart, with why).

Programs run in a worker process that the command restarts if native code kills it
(the crash is recorded against the program that was running).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from .fuzz_corpus import write_case
from .fuzz_exec import (
    OPT_LEVELS,
    TARGETS,
    CheckReport,
    available_executors,
    check,
    pair_name,
    pairs_for,
)
from .fuzz_gen import Options, generate
from .fuzz_known import known
from .fuzz_ops import SAMPLERS
from .fuzz_program import Block, StepError, evaluate, main_inputs, to_module
from .fuzz_schedules import RandomSchedules, random_pass_config
from .fuzz_shrink import compact, shrink


def op_signatures(block: Block) -> set:
    """``op(attr=value, ...)`` of every call in ``block`` and its bodies."""
    out, stack = set(), [block]
    while stack:
        b = stack.pop()
        for s in b.steps:
            if s.kind == "call":
                attrs = ",".join(f"{k}={v}" for k, v in sorted(s.attrs.items()))
                out.add(f"{s.op}({attrs})")
            stack.extend(x for x in (s.body, s.orelse) if x is not None)
    return out


def _refresh_values(block: Block) -> Block:
    """``block`` with every step's value recomputed from its inputs (after an edit)."""
    vals = evaluate(block, main_inputs(block))
    for s, v in zip(block.steps, vals):
        s.value = v
    return block


def fuzz_one(seed: int, executors, targets, options: Options | None = None,
             corpus: Path | None = None, shrink_budget: int = 120, opt_levels=(None,),
             schedules: str = "default") -> dict:
    """Generate, run and check program ``seed`` (at each of ``opt_levels``; level 3
    under random tuner choices when ``schedules`` is ``"random"``); shrink and save what
    disagrees."""
    stats: dict = {}
    block, info = generate(seed, SAMPLERS, options, stats)
    block = compact(block)  # dead code would keep a program off the graph executor
    mod, inputs = to_module(block), main_inputs(block)
    pairs = pairs_for(block, executors, targets, tuple(opt_levels))
    build = {}
    if schedules == "random":
        build = {"schedules": RandomSchedules(seed),
                 "pass_config": random_pass_config(random.Random(seed))}
    report = CheckReport()
    found = check(mod, inputs, pairs, report=report, **build)
    record = {"seed": seed, "pairs": [pair_name(*p) for p in pairs], "findings": [],
              "ops": sorted(op_signatures(block)), **info, "rejected": stats.get("rejected", 0),
              "excused": dict(report.excused), "references": report.references,
              "rewrites": sorted(report.rewrites)}
    if build:
        record["pass_config"] = build["pass_config"]
    for detail in sorted(set(stats.get("type_findings", ()))):  # relation vs reference
        entry = {"pair": "relation/reference", "kind": "type", "detail": detail}
        hit = known(entry)
        record["findings"].append(entry | ({"known": hit.key} if hit else {}))
    for d in found:
        entry = {"pair": d.pair, "kind": d.kind, "detail": d.detail,
                 "ops": sorted(op_signatures(block))}
        hit = known(entry)
        if hit is not None:  # routed already: not shrunk again
            record["findings"].append(entry | {"known": hit.key})
            continue
        small = _shrink(block, d, shrink_budget, build)
        entry["ops"] = sorted(op_signatures(small))
        if corpus is not None:
            level = "" if d.opt_level is None else f"_O{d.opt_level}"
            name = f"seed{seed}_{d.executor}_{d.target}{level}"
            again = check(to_module(small), main_inputs(small),
                          [(d.executor, d.target, d.opt_level)], **build)
            detail = again[0].detail if again else d.detail
            replay = {"pass_config": build["pass_config"],
                      "schedules": build["schedules"].drawn} if build else {}
            write_case(corpus, name, to_module(small), main_inputs(small),
                       {"seed": seed, "pair": d.pair, "kind": d.kind, "detail": detail,
                        "status": "open", **replay})
            entry["case"] = name
        record["findings"].append(entry)
    return record


def _shrink(block: Block, d, budget: int, build: dict) -> Block:
    def still_fails(cand: Block) -> bool:
        try:
            cand = _refresh_values(compact(cand))
            found = check(to_module(cand), main_inputs(cand),
                          [(d.executor, d.target, d.opt_level)], **build)
        except StepError:
            return False
        except Exception:  # noqa: BLE001  (a variant that does not even build is no help)
            return False
        return any(f.kind == d.kind for f in found)

    return shrink(block, still_fails, budget)


# ---------------------------------------------------------------- the command


def _worker(args) -> None:
    """Run programs ``seed .. seed + programs``; one JSON line per program."""
    options = Options(size=args.size, edges=args.edges)
    for seed in range(args.seed, args.seed + args.programs):
        print(f"START {seed}", flush=True)
        record = fuzz_one(seed, args.executors, args.targets, options,
                          Path(args.corpus) if args.corpus else None,
                          opt_levels=args.opt_levels, schedules=args.schedules)
        print("DONE " + json.dumps(record), flush=True)


def _drive(args) -> dict:
    """Run the worker, restarting it after a crash; gather the records (and every 100
    programs, the summary so far into ``--report``: a long run stopped early keeps it)."""
    records, crashes, seed, end = [], [], args.seed, args.seed + args.programs
    start = time.time()
    while seed < end:
        cmd = [sys.executable, "-m", "relayir.testing.fuzz", "--worker", "--seed", str(seed),
               "--programs", str(end - seed), "--executors", ",".join(args.executors),
               "--targets", ",".join(args.targets), "--size", str(args.size),
               "--opt-levels", ",".join(str(x) for x in args.opt_levels if x is not None),
               "--schedules", args.schedules, "--edges", str(args.edges)]
        if args.corpus:
            cmd += ["--corpus", args.corpus]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        running = None
        for line in proc.stdout:
            if line.startswith("START "):
                running = int(line.split()[1])
            elif line.startswith("DONE "):
                rec = json.loads(line[5:])
                records.append(rec)
                if len(records) % 100 == 0:
                    print(f"progress: {len(records)} programs", file=sys.stderr, flush=True)
                    if args.report:
                        _write_report(args.report, records, crashes, time.time() - start)
                running = None
                seed = rec["seed"] + 1
                new = [f for f in rec["findings"] if "known" not in f]
                if new:
                    print(json.dumps({"seed": rec["seed"], "findings": new}),
                          file=sys.stderr, flush=True)
        proc.wait()
        if running is not None:  # native code killed the worker
            crashes.append({"seed": running, "returncode": proc.returncode})
            print(json.dumps(crashes[-1]), file=sys.stderr, flush=True)
            seed = running + 1
        elif proc.returncode:
            raise SystemExit(f"the fuzz worker failed (exit {proc.returncode})")
    return {"records": records, "crashes": crashes}


def summary(records: list, crashes: list, seconds: float) -> dict:
    ops = set()
    pairs, kinds = Counter(), Counter()
    for r in records:
        ops.update(r["ops"])
        pairs.update(r.get("pairs", []))
        kinds.update("control" if r.get("control") else "dynamic" if r.get("dynamic")
                     else "spatial" if r.get("spatial") else "dataflow" for _ in [0])
    findings = [f | {"seed": r["seed"]} for r in records for f in r["findings"]]
    excused, excused_programs, references = Counter(), Counter(), Counter()
    rewrites = Counter(op for r in records for op in r.get("rewrites", ()))
    for r in records:
        excused.update(r.get("excused", {}))
        excused_programs.update(rule for rule, n in r.get("excused", {}).items() if n)
        for pair, kernels in r.get("references", {}).items():
            references.update(f"{pair}: {why.split(':')[0]}" for why in kernels.values())
    return {"programs": len(records), "seconds": round(seconds, 1),
            "excused_elements_by_rule": dict(excused),
            "programs_with_excuses_by_rule": dict(excused_programs),
            "cpu_runs_with_reference_kernels": sum(1 for r in records if r.get("references")),
            "reference_kernels_by_reason": dict(references.most_common(20)),
            "programs_with_level3_rewrites": dict(rewrites),
            "distinct_op_attr_combinations": len(ops),
            "distinct_ops": len({o.split("(")[0] for o in ops}),
            "runs_per_pair": dict(pairs), "program_kinds": dict(kinds),
            "ops_seen": sorted({o.split("(")[0] for o in ops}),
            "known": dict(Counter(f["known"] for f in findings if "known" in f)),
            "findings": [f for f in findings if "known" not in f], "crashes": crashes}


def _write_report(path: str, records: list, crashes: list, seconds: float) -> None:
    report = summary(records, crashes, seconds)
    report["seeds"] = [records[0]["seed"], records[-1]["seed"]] if records else []
    Path(path).write_text(json.dumps(report, indent=1))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m relayir.testing.fuzz",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--programs", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--executors", default="interp,graph,vm,aot")
    p.add_argument("--targets", default=",".join(TARGETS))
    p.add_argument("--size", type=int, default=6, help="op steps per program")
    p.add_argument("--opt-levels", default="",
                   help="cpu builds at these PassContext opt levels, e.g. 0,3 (default: the "
                        "default context)")
    p.add_argument("--schedules", choices=("default", "random"), default="default",
                   help="random: opt level 3 builds take random tuner choices (each "
                        "kernel's schedule, conv algorithm, Winograd tile, block width)")
    p.add_argument("--edges", type=float, default=-1.0,
                   help="share of input elements replaced by NaN/Inf/-0.0/denormals/huge "
                        "values in every program (default: drawn per program)")
    p.add_argument("--corpus", default="", help="folder for shrunk failing programs")
    p.add_argument("--report", default="", help="write the summary JSON here")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.executors = [e for e in args.executors.split(",") if e]
    args.targets = [t for t in args.targets.split(",") if t]
    try:
        args.opt_levels = [int(x) for x in args.opt_levels.split(",") if x] or [None]
    except ValueError:
        p.error(f"--opt-levels takes levels such as 0,3; found {args.opt_levels!r}")
    if not set(args.opt_levels) <= {None, *OPT_LEVELS}:
        p.error(f"opt levels are {OPT_LEVELS}; found {args.opt_levels}")
    unknown = set(args.executors) - {"interp", "graph", "vm", "aot"}
    if unknown or not set(args.targets) <= set(TARGETS):
        p.error(f"executors are interp, graph, vm, aot and targets numpy, cpu; found "
                f"{sorted(unknown) + sorted(set(args.targets) - set(TARGETS))}")
    if "aot" in args.executors and "aot" not in available_executors():
        print("note: this build has no AOT executor; skipping it", file=sys.stderr)
    if args.worker:
        _worker(args)
        return 0
    start = time.time()
    result = _drive(args)
    report = summary(result["records"], result["crashes"], time.time() - start)
    text = json.dumps({k: v for k, v in report.items() if k not in ("findings", "ops_seen")}
                      | {"findings": len(report["findings"])}, indent=1)
    print(text)
    if args.report:
        _write_report(args.report, result["records"], result["crashes"], time.time() - start)
    return 1 if report["findings"] or report["crashes"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
