"""``pytest_plugins = ["tvm.testing.plugin"]``: what TVM's test tree expects of pytest.

- a test taking ``target`` and not parametrizing it runs on ``enabled_targets()``;
- ``dev`` is the device of ``target``;
- an explicit parametrization over targets skips the ones relayir cannot run (a GPU),
  and ``known_failing_targets`` marks its targets xfail;
- ``tvm.testing.parameters`` groups are parametrized together.
"""

from __future__ import annotations

import pytest

from ..runtime.ndarray import device
from . import device_enabled, enabled_targets, target_kind

MARKERS = ("gpu", "tensorcore", "cuda", "opencl", "rocm", "vulkan", "metal", "llvm",
           "hexagon")


def pytest_configure(config) -> None:
    for name in MARKERS:
        config.addinivalue_line("markers", f"{name}: TVM's marker (relayir runs on the CPU)")


def pytest_generate_tests(metafunc) -> None:
    _parametrize_correlated_parameters(metafunc)
    _auto_parametrize_target(metafunc)
    _add_target_marks(metafunc)


@pytest.fixture
def dev(target):
    return device(target_kind(target))


def _auto_parametrize_target(metafunc) -> None:
    if "target" not in metafunc.fixturenames:
        return
    named = [a.strip() for m in metafunc.definition.iter_markers("parametrize")
             for a in (m.args[0].split(",") if isinstance(m.args[0], str) else m.args[0])]
    if "target" in named:
        return
    excluded = getattr(metafunc.function, "tvm_excluded_targets", ())
    targets = [t for t, _ in enabled_targets() if target_kind(t) not in excluded]
    metafunc.definition.add_marker(pytest.mark.parametrize("target", targets, scope="session"))


def _add_target_marks(metafunc) -> None:
    if "target" not in metafunc.fixturenames:
        return
    failing = getattr(metafunc.function, "tvm_known_failing_targets", ())
    for mark in metafunc.definition.iter_markers("parametrize"):
        names, values = mark.args[0], mark.args[1]
        names = [a.strip() for a in (names.split(",") if isinstance(names, str) else names)]
        if "target" not in names or not isinstance(values, list):
            continue
        i = names.index("target")
        new = []
        for v in values:
            if isinstance(v, type(pytest.param(0))):
                params, marks = v.values, list(v.marks)
            else:
                params, marks = ((v,) if len(names) == 1 else tuple(v)), []
            target = params[i]
            if not device_enabled(target):
                marks.append(pytest.mark.skip(reason=f"relayir runs on the CPU, not {target}"))
            elif target_kind(target) in failing:
                marks.append(pytest.mark.xfail(reason=f"known failing on {target}"))
            new.append(pytest.param(*params, marks=marks))
        values[:] = new


def _parametrize_correlated_parameters(metafunc) -> None:
    groups: dict[int, dict] = {}
    for name, fixturedefs in metafunc.definition._fixtureinfo.name2fixturedefs.items():
        func = fixturedefs[-1].func
        if hasattr(func, "parametrize_group"):
            g = groups.setdefault(func.parametrize_group,
                                  {"ids": func.parametrize_ids, "params": []})
            g["params"].append((name, func.parametrize_values))
    for g in groups.values():
        params = g["params"]
        if len(params) == 1:
            name, values = params[0]
            metafunc.parametrize(name, values, indirect=True, ids=g["ids"])
        else:
            names = ",".join(n for n, _ in params)
            metafunc.parametrize(names, list(zip(*[v for _, v in params])), indirect=True,
                                 ids=g["ids"])
