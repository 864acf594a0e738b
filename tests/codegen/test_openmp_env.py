"""Threads on a busy machine (issue 12): the OpenMP wait settings relayir makes before the
runtime starts (never over a user's), and the guard every parallel loop goes through."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

import relayir as relay
from relayir.codegen import openmp_env

_PROBE = """
import json, os, relayir
from relayir.codegen import openmp_env
print(json.dumps({"status": openmp_env.status(),
                  "env": {k: os.environ.get(k) for k in ("GOMP_SPINCOUNT", "KMP_BLOCKTIME")},
                  "guard": openmp_env.team_guard_source()}))
"""


def _fresh(**env) -> dict:
    """``import relayir`` in a fresh process with ``env`` (None: unset)."""
    full = {k: v for k, v in os.environ.items()
            if k not in ("GOMP_SPINCOUNT", "KMP_BLOCKTIME", "OMP_WAIT_POLICY",
                         "RELAYIR_OMP_SPINCOUNT", "RELAYIR_TEAM_LATE_US")}
    full.update({k: v for k, v in env.items() if v is not None})
    out = subprocess.run([sys.executable, "-c", _PROBE], env=full, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_spin_count_is_set_at_import_unless_the_user_chose():
    got = _fresh()
    assert got["env"]["GOMP_SPINCOUNT"] == str(openmp_env.SPIN_COUNT)
    assert got["status"]["GOMP_SPINCOUNT"] == str(openmp_env.SPIN_COUNT)
    got = _fresh(GOMP_SPINCOUNT="123")
    assert got["env"]["GOMP_SPINCOUNT"] == "123" and "user's" in got["status"]["GOMP_SPINCOUNT"]
    got = _fresh(OMP_WAIT_POLICY="passive")
    assert got["env"]["GOMP_SPINCOUNT"] is None and "OMP_WAIT_POLICY" in got["status"]["openmp"]
    got = _fresh(RELAYIR_OMP_SPINCOUNT="default")
    assert got["env"]["GOMP_SPINCOUNT"] is None
    assert _fresh(RELAYIR_OMP_SPINCOUNT="500")["env"]["GOMP_SPINCOUNT"] == "500"


def test_guard_can_be_turned_off():
    assert "rl_team_late" in _fresh()["guard"]
    off = _fresh(RELAYIR_TEAM_LATE_US="0")["guard"]
    assert "return 1;" in off and "rl_team_late" not in off


def test_every_parallel_loop_goes_through_the_guard():
    x = relay.var("x", shape=(512, 1024))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x) * relay.const(2.0)))
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="cpu")
    source = lib.get_lib().get_source()
    kernels = source[source.index("int32_t fused"):]
    assert kernels.count("#pragma omp parallel") == kernels.count("rl_team_ok())") >= 1
    assert kernels.count("rl_team_arrive();") == kernels.count("#pragma omp parallel")
    assert "parallel for" not in kernels
    m = relay.graph_executor.GraphModule(lib)
    data = np.random.default_rng(0).standard_normal((512, 1024)).astype("float32")
    m.set_input("x", data)
    m.run()
    np.testing.assert_allclose(m.get_output(0), np.maximum(data, 0) * 2)
