"""``tvm.testing``: the helpers Relay-era tests use, for relayir's one device (the host
CPU, target ``"llvm"``).

``enabled_targets()`` is ``[("llvm", cpu(0))]``; every other target is skipped, never
failed. ``parameter`` / ``parameters`` / ``fixture`` / ``parametrize_targets`` need the
pytest plugin (``pytest_plugins = ["tvm.testing.plugin"]`` in a ``conftest.py``, as
TVM's own test tree has), which parametrizes ``target`` and provides ``dev``. pytest
is imported here, so ``tvm.testing`` is for test code only (as in TVM).
"""

from __future__ import annotations

import inspect
import itertools
import sys

import numpy as np
import pytest

from ..target import device_enabled, enabled_targets, target_kind
from .features import (
    REQUIREMENTS,
    Requirement,
    requires_cuda_compute_version,
    requires_nvcc_version,
    requires_package,
)


def assert_allclose(actual, desired, rtol: float = 1e-7, atol: float = 1e-7) -> None:
    """``np.testing.assert_allclose`` that checks shapes first (TVM's defaults)."""
    actual = np.asanyarray(actual)
    desired = np.asanyarray(desired)
    np.testing.assert_allclose(actual.shape, desired.shape)
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=True)


# ---------------------------------------------------------------- marks

for _name, _requirement in REQUIREMENTS.items():
    globals()[_name] = _requirement


def uses_gpu(func):
    """Marks a test that also runs on GPUs when present; here it runs on the CPU."""
    return pytest.mark.gpu(func)


def skip_if_32bit(reason: str = ""):
    return pytest.mark.skipif(sys.maxsize < 2**32, reason=reason)


def parametrize_targets(*args):
    """``@parametrize_targets`` (all enabled targets, through the plugin) or
    ``@parametrize_targets("llvm", "cuda")`` (the non-CPU ones are skipped)."""
    if len(args) == 1 and callable(args[0]):
        return args[0]
    return pytest.mark.parametrize("target", list(args), scope="session")


def exclude_targets(*args):
    def wraps(func):
        func.tvm_excluded_targets = args
        return func

    return wraps


def known_failing_targets(*args):
    def wraps(func):
        func.tvm_known_failing_targets = args
        return func

    return wraps


# ---------------------------------------------------------------- fixtures


def parameter(*values, ids=None, by_dict=None):
    """A module-level parametrized fixture named by the variable it is assigned to."""
    if by_dict is not None:
        ids, values = zip(*by_dict.items())

    @pytest.fixture(params=values, ids=ids, scope="session")
    def as_fixture(*_cls, request):
        return request.param

    return as_fixture


_GROUP_IDS = itertools.count()  # one id per parameters() call


def parameters(*value_sets, ids=None):
    """Fixtures that vary together: one test per value set, not per combination (the
    plugin parametrizes the group)."""
    group = next(_GROUP_IDS)
    outputs = []
    for values in zip(*value_sets):
        def fixture_func(*_cls, request):
            return request.param

        fixture_func.parametrize_group = group
        fixture_func.parametrize_values = values
        fixture_func.parametrize_ids = ids
        outputs.append(pytest.fixture(fixture_func))
    return outputs


def fixture(func=None, *, cache_return_value: bool = False):
    """``@tvm.testing.fixture``: a function-scoped pytest fixture (the cache is not kept:
    every test gets its own value)."""
    def wraps(f):
        return pytest.fixture(f, scope="function")

    return wraps if func is None else wraps(func)


def main() -> None:
    """Run the calling test file under pytest."""
    test_file = inspect.getsourcefile(sys._getframe(1))
    sys.exit(pytest.main([test_file] + sys.argv[1:]))


__all__ = ["Requirement", "assert_allclose", "device_enabled", "enabled_targets",
           "exclude_targets", "fixture", "known_failing_targets", "main", "parameter",
           "parameters", "parametrize_targets", "requires_cuda_compute_version",
           "requires_nvcc_version", "requires_package", "skip_if_32bit", "uses_gpu",
           *REQUIREMENTS]
