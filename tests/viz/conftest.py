"""Reports the explorer tests share, made once per session: the built-in MLP, ResNet-18
(its generation is timed: the issue asks for under 20 s) and the prelude ``List``
program; and the folder where browser screenshots go (``$RELAYIR_VIZ_ARTIFACTS``, else a
folder under pytest's temporary directory)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from relayir.testing.models import get_workload, make_inputs
from relayir.viz import EXAMPLES, example_module, explore, read_report


@dataclass
class Report:
    name: str
    path: Path
    data: dict
    seconds: float  # to generate

    @property
    def html(self) -> str:
        return self.path.read_text(encoding="utf-8")


def make_report(name: str, folder: Path) -> Report:
    if name in EXAMPLES:
        mod, params, inputs = example_module(name), {}, None
    else:
        mod, params, _ = get_workload(name)
        inputs = make_inputs(name, mod)
    start = time.perf_counter()
    html = explore(mod, params, inputs=inputs, title=name)
    seconds = time.perf_counter() - start
    path = folder / f"{name}.html"
    path.write_text(html, encoding="utf-8")
    return Report(name, path, read_report(html), seconds)


@pytest.fixture(scope="session")
def viz_report(tmp_path_factory):
    """``viz_report(name)``: the report of a built-in model or example, made once."""
    folder = tmp_path_factory.mktemp("viz-reports")
    made: dict[str, Report] = {}

    def get(name: str) -> Report:
        if name not in made:
            made[name] = make_report(name, folder)
        return made[name]

    return get


@pytest.fixture(scope="session")
def viz_artifacts(tmp_path_factory) -> Path:
    folder = os.environ.get("RELAYIR_VIZ_ARTIFACTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("viz-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path
