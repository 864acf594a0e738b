"""The VM view's data: ``vm.compile``'s bytecode (the disassembly ``print(exe.bytecode)``
shows, and per function its lines and jumps), a trace of a real run
(``VirtualMachine.trace``: each step's frame depth, function, pc and the registers it
wrote, summarised), and what a run costs (latency, instructions executed, kernels,
storage bytes) for the side-by-side with the graph executor.
"""

from __future__ import annotations

import numpy as np

from ..transform import PassContext
from ..vm import VirtualMachine, compile
from ..vm.bytecode import format_instruction
from ..vm.trace import summarize
from .executor import repeats_for


def bytecode_json(exe) -> list[dict]:
    """Per VM function: name, parameters, register count, one disassembly line per
    instruction and its jumps ``[pc, target]``."""
    out = []
    for index, fn in enumerate(exe.functions):
        jumps = [[pc, pc + ins.args[i]] for pc, ins in enumerate(fn.instructions)
                 for i in ins.op.spec.jumps]
        out.append({"index": index, "name": fn.name, "params": list(fn.param_names),
                    "closure": fn.closure, "regs": fn.num_regs,
                    "lines": [format_instruction(ins, exe) for ins in fn.instructions],
                    "ops": [ins.op.name for ins in fn.instructions], "jumps": jumps})
    return out


def vm_section(mod, params: dict, inputs: dict[str, np.ndarray] | None, target,
               opt_level: int, trace_limit: int) -> dict:
    """Compile ``mod`` for the VM; with ``inputs``, trace one run and time it."""
    with PassContext(opt_level=opt_level):
        exe = compile(mod, target=target, params=params)
    section = {"bytecode": str(exe.bytecode), "functions": bytecode_json(exe),
               "kernels": len(exe.kernels), "constants": len(exe.constants),
               "storage_bytes": exe.storage_bytes(),
               "instructions": sum(len(f.instructions) for f in exe.functions)}
    if inputs is None:
        return section
    machine = VirtualMachine(exe)
    trace = machine.trace(**inputs, limit=trace_limit)
    section["trace"] = {
        "steps": [[s.depth, s.func, s.pc, [list(w) for w in s.writes]] for s in trace.steps],
        "truncated": trace.truncated,
        "result": list(summarize(trace.result, exe)),
        "inputs": {k: list(summarize(v)) for k, v in inputs.items()}}
    runs = repeats_for(_seconds(machine))
    section["latency_ms"] = machine.benchmark("main", number=1, repeat=runs).median
    section["runs"] = runs
    return section


def _seconds(machine: VirtualMachine) -> float:
    """One run's time, to size the benchmark (inputs are already set)."""
    return machine.benchmark("main", number=1, repeat=1, warmup=0).median / 1e3


__all__ = ["bytecode_json", "vm_section"]
