"""The VM profiler: time per kernel and per opcode.

``VirtualMachine.profile(*args, func_name="main", number=1)`` runs the function with
the dispatch loop's clock on and runs of instructions unfolded (``interpreter.py``
folds ``LoadConst`` / ``AllocTensor`` into the kernel call that follows): every
instruction's time runs from its dispatch to the next one's, so it includes the
dispatch itself (a call's time ends where the callee's first instruction starts). The
report groups the times by kernel (``InvokePacked``) and by opcode::

    kernel        count   total (ms)   mean (us)       %
    vm_fused_2      100        0.372        3.72    43.8
    ...
    opcode          count   total (ms)   mean (us)       %
    InvokePacked      300        0.848        2.83    53.1
    LoadConst         400        0.351        0.88    22.0
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..runtime.graph_executor import ProfileReport
from .bytecode import Opcode


@dataclass(frozen=True)
class VMProfileReport:
    """``kernels``: a ``ProfileReport`` (the graph executor's) of kernel time;
    ``opcodes``: one of time per opcode; ``wall_ms``: the runs' wall time."""

    kernels: ProfileReport
    opcodes: ProfileReport
    wall_ms: float
    runs: int

    @property
    def instructions(self) -> int:
        return sum(r.calls for r in self.opcodes.rows)

    def table(self, limit: int | None = 20) -> str:
        return (f"VM profile: {self.runs} run(s), {self.instructions} instructions, "
                f"wall {self.wall_ms:.3f} ms (times include dispatch)\n\n"
                f"{_rows('kernel', self.kernels, limit)}\n\n{_rows('opcode', self.opcodes)}")

    def __str__(self) -> str:
        return self.table()


def _rows(title: str, report: ProfileReport, limit: int | None = None) -> str:
    rows = report.rows if limit is None else report.rows[:limit]
    width = max([len(title)] + [len(r.name) for r in rows])
    lines = [f"{title:<{width}}  {'count':>7}  {'total (ms)':>11}  {'mean (us)':>10}  {'%':>6}"]
    lines += [f"{r.name:<{width}}  {r.calls:>7}  {r.total_ms:>11.3f}  {r.mean_us:>10.2f}  "
              f"{r.percent:>6.1f}" for r in rows]
    if len(rows) < len(report.rows):
        lines.append(f"... {len(report.rows) - len(rows)} more")
    lines.append(f"{'total':<{width}}  {sum(r.calls for r in report.rows):>7}  "
                 f"{report.total_ms:>11.3f}")
    return "\n".join(lines)


def profile(vm, func_name: str, args: tuple, kwargs: dict, number: int = 1) -> VMProfileReport:
    if args or kwargs:
        vm.set_input(func_name, *args, **kwargs)
    vm.invoke(func_name)  # warm-up: arenas and pointer arrays are made here
    idx, _ = vm._function(func_name)
    inputs = vm._inputs.get(func_name, [])
    cells: dict[int, list] = {}  # id(decoded instruction) -> [seconds, count]
    vm._profile = cells
    folded, vm.code = vm.code, vm._plain_code  # one timed dispatch per instruction
    t0 = time.perf_counter()
    try:
        for _ in range(number):
            vm._run(idx, list(inputs))
    finally:
        vm._profile = None
        vm.code = folded
    wall = time.perf_counter() - t0
    kernel_t: dict[str, float] = {}
    kernel_n: dict[str, int] = {}
    op_t: dict[str, float] = {}
    op_n: dict[str, int] = {}
    for f, code in zip(vm.exe.functions, vm._plain_code):
        for ins, decoded in zip(f.instructions, code):
            cell = cells.get(id(decoded))
            if cell is None:
                continue
            t, n = cell
            op = ins.op.name
            op_t[op] = op_t.get(op, 0.0) + t
            op_n[op] = op_n.get(op, 0) + n
            if ins.op is Opcode.InvokePacked:
                name = vm.exe.kernel_names[ins.operand("kernel")]
                kernel_t[name] = kernel_t.get(name, 0.0) + t
                kernel_n[name] = kernel_n.get(name, 0) + n
    return VMProfileReport(ProfileReport.make(kernel_t, kernel_n, wall * 1e3, number),
                           ProfileReport.make(op_t, op_n, wall * 1e3, number),
                           wall * 1e3, number)


__all__ = ["VMProfileReport", "profile"]
