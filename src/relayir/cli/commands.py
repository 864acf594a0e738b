"""The table of ``relayir`` subcommands, in the order ``relayir --help`` lists them.

To add a command: write ``cli/<name>.py`` with a ``COMMAND = Command(name, summary,
description, examples, add_arguments, run)`` and add it to ``COMMANDS`` below.
"""

from __future__ import annotations

from . import compare, explore, serve, show, tune, workloads
from . import compile as compile_command
from . import run as run_command
from .command import Command

COMMANDS: tuple[Command, ...] = (
    compile_command.COMMAND,
    run_command.COMMAND,
    compare.COMMAND,
    show.COMMAND,
    tune.COMMAND,
    explore.COMMAND,
    serve.COMMAND,
    workloads.PRINT,
    workloads.OPS,
)

__all__ = ["COMMANDS"]
