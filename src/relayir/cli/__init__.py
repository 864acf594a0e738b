"""The ``relayir`` command: compile model files, run compiled artifacts, compare with
ONNX Runtime and PyTorch, show the IR pass by pass; built-in models (``relayir run
mlp``, ``relayir print``, ``relayir ops``).

Every command is a ``Command`` in the table ``commands.COMMANDS``. A mistake the user
can fix (a missing file, an unsupported operator, a wrong input) is one line on stderr
and exit status 2; ``--traceback`` shows where it was raised.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

from ..errors import Error
from ..version import __version__
from .command import Command
from .commands import COMMANDS
from .console import Console, one_line

USAGE_ERROR = 2
DESCRIPTION = ("relayir: compile model files (.onnx, .pt2, Relay text), run the compiled "
               "artifacts, compare them with ONNX Runtime and PyTorch, and show the IR pass "
               "by pass.")


class _Parser(argparse.ArgumentParser):
    """Argument errors as one line (with where to look), not a usage block."""

    def error(self, message: str):
        self.exit(USAGE_ERROR, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def _global_options(p: argparse.ArgumentParser, default) -> None:
    p.add_argument("--traceback", action="store_true", default=default,
                   help="show the traceback of an error")
    p.add_argument("-v", "--verbose", action="store_true", default=default,
                   help="print every phase and pass with its time (stderr)")


def build_parser(commands: tuple[Command, ...] = COMMANDS) -> argparse.ArgumentParser:
    parser = _Parser(prog="relayir", description=DESCRIPTION,
                     epilog="examples:\n  relayir run mlp\n  relayir compile model.onnx -o "
                            "model.relayir && relayir run model.relayir\n"
                            "run 'relayir COMMAND --help' for a command's options",
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"relayir {__version__}")
    _global_options(parser, False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)
    for cmd in commands:
        p = sub.add_parser(cmd.name, help=cmd.summary, description=cmd.description,
                           epilog=cmd.epilog(),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        cmd.add_arguments(p)
        _global_options(p, argparse.SUPPRESS)  # also accepted after the command
        p.set_defaults(run_command=cmd.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = Console(verbose=args.verbose)
    try:
        return args.run_command(args, console)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # ``relayir ... | head``: the reader left; stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (Error, OSError) as exc:  # the user's to fix: one line
        if args.traceback:
            traceback.print_exc()
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return USAGE_ERROR
    except Exception as exc:  # noqa: BLE001  (a bug: say so, without a traceback)
        if args.traceback:
            traceback.print_exc()
        print(f"internal error: {type(exc).__name__}: {one_line(exc)} (rerun with "
              f"--traceback and report it)", file=sys.stderr)
        return 1


__all__ = ["COMMANDS", "Command", "build_parser", "main"]
