"""``relayir explore MODEL -o report.html``: one self-contained HTML page that shows
MODEL through the compiler (``relayir.viz.explore``): the pass pipeline step by step,
the gradient program beside PyTorch's autograd graph, the graph executor's kernels and
memory plan, the VM's bytecode stepped through a recorded run, and optimisers on loss
surfaces whose gradient relayir computes.

MODEL is a built-in model (``mlp``, ``resnet18``, ...: run with its own inputs), an
example program (``list``, ``tree``: the VM's control flow and ADTs), a model file as
``relayir compile`` reads it (for ``.pt2`` the ``torch.export`` graph is shown too),
or Relay text (which may use the prelude's ``List``, ``map``, ``foldl``...)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..errors import Error
from ..frontend.load_model import is_model_file
from ..testing.models import WORKLOADS, get_workload, make_inputs
from ..viz import EXAMPLES, SECTIONS, example_module, explore, with_prelude
from .command import Command, add_model_options, load, positive_int
from .console import Console
from .runners import CommandError


def add_arguments(p) -> None:
    p.add_argument("model", metavar="MODEL",
                   help=f"a built-in model ({', '.join(WORKLOADS)}), an example program "
                        f"({', '.join(EXAMPLES)}), a model file (.onnx, .pt2, .relay) or "
                        "Relay text")
    p.add_argument("-o", "--output", metavar="HTML",
                   help="the report to write (default: MODEL's name with .html)")
    p.add_argument("--target", default="cpu",
                   help="cpu: generated C (needs a C compiler); numpy: reference kernels "
                        "(default: cpu)")
    p.add_argument("--opt-level", type=int, default=3, choices=range(4), metavar="N",
                   help="optimisation level 0-3 (default: 3)")
    p.add_argument("--sections", default=",".join(SECTIONS), metavar="S,...",
                   help=f"views to include (default: all of {','.join(SECTIONS)})")
    p.add_argument("--trace-limit", type=int, default=20_000, metavar="N",
                   help="VM instructions recorded for the step-through (default: 20000)")
    p.add_argument("--batch", type=positive_int, default=1, help="batch size of a built-in model")
    add_model_options(p)


def _relay_text(text: str, where: str):
    try:
        return with_prelude(text, where)
    except Error as exc:
        raise CommandError(f"{where}: not a model name, a model file or Relay text: "
                           f"{exc}") from None


def resolve(args, console: Console):
    """``(mod, params, inputs or None, torch.export program or None, title)``."""
    name = args.model
    if name in WORKLOADS:
        mod, params, _ = get_workload(name, batch_size=args.batch)
        return mod, params, make_inputs(name, mod), None, name
    if name in EXAMPLES:
        return example_module(name), {}, None, None, name
    path = Path(name)
    if path.is_file() and is_model_file(path):
        try:
            mod, params = load(name, args, console)
        except Error:
            if path.suffix.lower() not in (".relay", ".txt"):
                raise
            # Relay text that uses the prelude's types and functions
            mod, params = _relay_text(path.read_text(encoding="utf-8"), name), {}
        program = None
        if path.suffix.lower() == ".pt2":
            import torch  # load_model has just imported it

            program = torch.export.load(name)
        return mod, params, None, program, path.stem
    if "def @main" in name or name.lstrip().startswith(("fn", "#[version")):
        return _relay_text(name, "<MODEL text>"), {}, None, None, "Relay text"
    raise CommandError(f"{name}: no such file, built-in model or example; built-in models: "
                       f"{', '.join(WORKLOADS)}; examples: {', '.join(EXAMPLES)}")


def run(args, console: Console) -> int:
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    start = time.perf_counter()
    with console.task(f"importing {args.model}"):
        mod, params, inputs, program, title = resolve(args, console)
    output = args.output or f"{Path(title).stem if title != 'Relay text' else 'relay'}.html"
    with console.task(f"exploring {title}"):
        html = explore(mod, params, inputs=inputs, title=title, target=args.target,
                       opt_level=args.opt_level, exported_program=program,
                       sections=sections, trace_limit=args.trace_limit,
                       progress=lambda phase: console.task(phase))
    Path(output).write_text(html, encoding="utf-8")
    console.print(f"wrote {output} ({os.path.getsize(output) / 1e6:.2f} MB) in "
                  f"{time.perf_counter() - start:.1f} s; open it in a browser (it fetches "
                  f"nothing)")
    return 0


COMMAND = Command(
    "explore", "write an interactive HTML report of a model going through the compiler",
    "Show MODEL through the compiler in one self-contained HTML page: the pipeline pass "
    "by pass (graph, text, what changed), the gradient program beside PyTorch's autograd "
    "graph, the graph executor's kernels and memory plan, the VM's bytecode stepped "
    "through a recorded run, and optimisers on loss surfaces. MODEL: a built-in model, "
    "an example program (list, tree), a model file or Relay text.",
    ("relayir explore resnet18 -o resnet18.html",
     "relayir explore list -o list.html",
     "relayir explore model.pt2 --sections pipeline,executor",
     "relayir explore model.relay --target numpy --opt-level 2"),
    add_arguments, run)
