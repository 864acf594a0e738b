"""Helpers of the serve tests: the MLP workload, its reference, a repository layout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from relayir.testing.models import get_workload

HAS_CC = any(shutil.which(c) for c in ("cc", "gcc", "clang"))
TARGET = "cpu" if HAS_CC else "numpy"
needs_cc = pytest.mark.skipif(not HAS_CC, reason="needs a C compiler")


def mlp(batch):
    """The built-in MLP at ``batch`` (an int, or ``Any()`` for a dynamic batch dim)."""
    mod, params, reference = get_workload("mlp", batch_size=batch)
    return mod, params, reference


def mlp_reference(params, x: np.ndarray) -> np.ndarray:
    return get_workload("mlp", batch_size=x.shape[0])[2](params, x)


def make_repo(root: Path, models: dict[str, dict[int, list[Path]]],
              configs: dict[str, dict] | None = None) -> Path:
    """``root/<model>/<version>/``: the first file as ``model.relayir``, others as
    ``model.b<N>.relayir`` by their position; ``configs[model]`` as config.json."""
    for name, versions in models.items():
        for version, files in versions.items():
            d = root / name / str(version)
            d.mkdir(parents=True, exist_ok=True)
            for i, f in enumerate(files):
                shutil.copyfile(f, d / ("model.relayir" if i == 0 else f"model.{i}.relayir"))
        if configs and name in configs:
            (root / name / "config.json").write_text(json.dumps(configs[name]))
    return root


def infer_json(name: str, x: np.ndarray, datatype: str = "FP32") -> dict:
    """A KServe v2 JSON infer request with one input ``data``."""
    return {"inputs": [{"name": "data", "shape": list(x.shape), "datatype": datatype,
                        "data": x.ravel().tolist()}]}


def binary_body(x: np.ndarray, name: str = "data", datatype: str = "FP32",
                binary_output: bool = True) -> tuple[bytes, dict]:
    """A request with ``x`` as binary data: the body and its headers."""
    raw = x.tobytes()
    head = json.dumps({"inputs": [{"name": name, "shape": list(x.shape), "datatype": datatype,
                                   "parameters": {"binary_data_size": len(raw)}}],
                       "parameters": {"binary_data_output": binary_output}}).encode()
    return head + raw, {"Inference-Header-Content-Length": str(len(head)),
                        "Content-Type": "application/octet-stream"}


def binary_output(response) -> np.ndarray:
    """The first output of a binary response, as float32."""
    n = int(response.headers["inference-header-content-length"])
    doc = json.loads(response.content[:n])
    out = doc["outputs"][0]
    return np.frombuffer(response.content[n:], "<f4").reshape(out["shape"])
