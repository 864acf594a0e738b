"""What a subcommand is, and the options several of them share.

A command is a ``Command``: its name, a one-line summary (``relayir --help``), a
description and examples (its own ``--help``), a function adding its arguments, and
the function that runs it with the parsed arguments and the ``Console``. The table of
commands is ``commands.COMMANDS``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from ..frontend.load_model import load_model, parse_input_shapes
from .compiled import EXECUTORS
from .console import Console
from .inputs import FILLS
from .quantizing import add_quantize_options, maybe_quantize


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    description: str
    examples: tuple[str, ...]
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Console], int]

    def epilog(self) -> str:
        return "examples:\n" + "\n".join(f"  {e}" for e in self.examples)


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1 (a batch of 0 or a count of -3 is a usage error,
    not a traceback later)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, found {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, found {value}")
    return value


def add_model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input-shapes", metavar="SHAPES",
                   help='input shapes, e.g. "x:[1,3,224,224] mask:[1,seq]": a dim is a '
                        "size, a name (dynamic; one name is one size) or ?")


def add_build_options(p: argparse.ArgumentParser, executors=EXECUTORS) -> None:
    add_model_options(p)
    p.add_argument("--target", default="cpu",
                   help="cpu: generated C (needs a C compiler); numpy: reference kernels "
                        "(default: cpu)")
    p.add_argument("--opt-level", type=int, default=3, choices=range(4), metavar="N",
                   help="optimisation level 0-3 (default: 3)")
    p.add_argument("--executor", choices=executors,
                   help="graph: static schedule; vm: control flow and dynamic shapes; "
                        "aot: one native entry point (default: graph when every input "
                        "shape is static, else vm)")
    p.add_argument("--disabled-pass", metavar="P,...", default="",
                   help="passes not to run, comma-separated (e.g. FoldScaleAxis)")
    p.add_argument("--desired-layout", choices=("NCHW", "NHWC"),
                   help="run convolutions in this data layout (ConvertLayout)")
    p.add_argument("--tuning-records", metavar="FILE",
                   help="use the best schedules in these tuning records (relayir tune)")
    add_quantize_options(p)


def add_input_options(p: argparse.ArgumentParser, fill_default: str | None = "random") -> None:
    p.add_argument("--inputs", metavar="IN.npz",
                   help="input arrays by input name (numpy .npz, no pickle)")
    p.add_argument("--fill", choices=FILLS, default=fill_default,
                   help="value of inputs not in --inputs (default: random; integers 0 or 1)")


def input_shapes(args) -> dict:
    """``--input-shapes`` as a dict (a malformed one is an ``InputShapeError``)."""
    return parse_input_shapes(args.input_shapes) if args.input_shapes else {}


def load(path: str, args, console: Console):
    """``(mod, params)`` of a model file, with the ``importing`` phase shown (and the
    ``quantizing`` one, with ``--quantize``)."""
    shapes = input_shapes(args)
    with console.task(f"importing {path}"):
        mod, params = load_model(path, shape=shapes)
    return maybe_quantize(mod, params, args, console)


__all__ = ["Command", "add_build_options", "add_input_options", "add_model_options",
           "input_shapes", "load"]
