"""``relayir compile MODEL -o OUT.relayir``: import a model file, compile it for an
executor and write the artifact that ``relayir run`` (or
``relayir.runtime.load_module`` / ``relayir.vm.Executable.load``) loads."""

from __future__ import annotations

import os
from pathlib import Path

from .command import Command, add_build_options, load
from .compiled import BuildOptions, compile_model
from .console import Console

# the default artifact: MODEL with this suffix (an AOT module is a shared library + header)
SUFFIXES = {"graph": ".relayir", "vm": ".relayir", "aot": ".so"}


def add_arguments(p) -> None:
    p.add_argument("model", help="model file: .onnx, .pt2 (torch.export.save), .relay/.txt")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="artifact to write (default: MODEL with the suffix .relayir; .so "
                        "and a .h beside it for --executor aot)")
    add_build_options(p)
    p.add_argument("--dump-ir", metavar="DIR",
                   help="write the Relay text after every pass (NN_<pass>.relay, constants "
                        "elided) and the generated C (kernels.c) into DIR")


def run(args, console: Console) -> int:
    mod, params = load(args.model, args, console)
    compiled = compile_model(mod, params, BuildOptions.from_args(args), console)
    output = args.output or str(Path(args.model).with_suffix(SUFFIXES[compiled.kind]))
    with console.task(f"writing {output}"):
        compiled.save(output)
    size = os.path.getsize(output) if os.path.isfile(output) else 0
    note = f", {compiled.cache_note}" if compiled.cache_note else ""
    console.print(f"wrote {output} ({compiled.describe()}, {size / 1e6:.2f} MB) in "
                  f"{compiled.seconds:.2f} s{note}")
    console.print(f"kernels: {compiled.model.kernel_summary()}")
    if args.dump_ir:
        console.print(f"IR after each pass in {args.dump_ir}/")
    return 0


COMMAND = Command(
    "compile", "compile a model file into an artifact to run or ship",
    "Import MODEL, optimise it (pass by pass, at --opt-level) and compile its kernels for "
    "the chosen executor, then write one file holding the schedule or bytecode, the "
    "weights and the compiled kernels.",
    ("relayir compile resnet.onnx -o resnet.relayir",
     'relayir compile bert.pt2 --executor vm --input-shapes "input_ids:[1,seq]" '
     "-o bert.relayir",
     "relayir compile model.relay --target numpy --opt-level 2 --dump-ir ir/",
     "relayir compile resnet.onnx --quantize int8 --calibration samples.npz "
     "--calibration-method entropy -o resnet_int8.relayir"),
    add_arguments, run)
