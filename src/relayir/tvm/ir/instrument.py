"""``tvm.ir.instrument`` (also ``tvm.instrument``): TVM's pass-instrument API over
relayir's, which calls the same hooks (``enter_pass_ctx``, ``exit_pass_ctx``,
``should_run``, ``run_before_pass``, ``run_after_pass``; ``relayir.transform.pass_infra``).

``PassInstrument`` is a base with every hook a no-op, ``pass_instrument(cls)`` makes a
class one, and ``PassTimingInstrument`` is relayir's timing table whose profile is
cleared when its context exits (``render()`` is then ``""``), as TVM's is.
"""

from __future__ import annotations

from ...transform.instrument import PassTimingInstrument as _Timing


class PassInstrument:
    """Every hook a no-op; a subclass overrides the ones it needs."""

    def __init__(self) -> None:
        pass

    def enter_pass_ctx(self) -> None:
        pass

    def exit_pass_ctx(self) -> None:
        pass

    def should_run(self, mod, info) -> bool:
        return True

    def run_before_pass(self, mod, info) -> None:
        pass

    def run_after_pass(self, mod, info) -> None:
        pass


def pass_instrument(pi_cls=None):
    """``@pass_instrument`` over a class with some of the hooks: the class as a
    ``PassInstrument`` (its own hooks win, the rest are no-ops)."""

    def wrap(cls):
        if issubclass(cls, PassInstrument):
            return cls
        out = type(cls.__name__, (cls, PassInstrument), {"__doc__": cls.__doc__})
        out.__qualname__, out.__module__ = cls.__qualname__, cls.__module__
        return out

    return wrap(pi_cls) if pi_cls is not None else wrap


class PassTimingInstrument(_Timing, PassInstrument):
    """Wall time per pass; the profile lasts until the context it is in exits."""

    def exit_pass_ctx(self) -> None:
        self.timings.clear()
        self.containers.clear()
        self._stack.clear()

    def render(self) -> str:
        return super().render() if self.timings else ""


__all__ = ["PassInstrument", "PassTimingInstrument", "pass_instrument"]
