"""Running a compiled model for the commands: the inputs it takes (``InputSpec``),
``set_inputs``, ``run``, ``time_run``, ``profile``, over ``relayir.runtime``'s one
interface (``CompiledModel``), whatever the executor."""

from __future__ import annotations

import time

import numpy as np

from ..errors import Error
from ..runtime import CompiledModel, TensorSpec
from ..runtime.artifact import spec_dims
from ..vm.model import flatten

InputSpec = TensorSpec  # an input: name, shape (ints, and names for dynamic dims), dtype
dims = spec_dims


class CommandError(Error):
    """A command-line request that cannot be met (a missing input, a wrong option)."""


class Runner:
    """One compiled model ready to run on the inputs set."""

    def __init__(self, model: CompiledModel):
        self.model = model
        self.kind = model.executor
        self.inputs: list[InputSpec] = model.input_info
        self._arrays: list[np.ndarray] | None = None

    def set_inputs(self, arrays: dict[str, np.ndarray]) -> None:
        self._arrays = self.model.check_inputs(arrays)

    def _inputs(self) -> list[np.ndarray]:
        if self._arrays is None:
            raise CommandError("no inputs set: call set_inputs first")
        return self._arrays

    def run(self) -> list[np.ndarray]:
        """Run on the inputs set; the outputs, flattened."""
        return self.model.run(self._inputs())

    def time_run(self) -> float:
        """Seconds of one whole call (inputs copied in, outputs copied out: what a caller
        of ``run`` waits, as a peer engine's call is timed)."""
        arrays = self._inputs()
        t0 = time.perf_counter()
        self.model.run(arrays)
        return time.perf_counter() - t0

    def profile(self, number: int):
        """A ``ProfileReport`` of kernel time over ``number`` runs."""
        return self.model.profile(self._inputs(), number)


__all__ = ["CommandError", "InputSpec", "Runner", "dims", "flatten"]
