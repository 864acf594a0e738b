"""``relayir run``: a model file compiled on the fly, filled inputs, the outputs'
summary, latency and the per-kernel profile."""

import numpy as np


def test_run_a_model_file_on_the_fly_with_filled_inputs(cli, mlp_relay, tmp_path):
    r = cli("run", mlp_relay, "--fill", "ones", "--repeat", "3", "--print-top", "3",
            "--outputs", tmp_path / "out.npz")
    assert r.rc == 0, r.err
    assert "graph executor" in r.out and "compiled in" in r.out
    assert "median of 3" in r.out
    out = np.load(tmp_path / "out.npz")["output_0"]
    assert out.shape == (1, 10)
    best = np.argsort(-out[0], kind="stable")[:3]
    assert f"top 3: {best[0]} ({out[0, best[0]]:.4g})" in r.out


def test_profile_prints_the_time_per_kernel(cli, mlp_relay):
    r = cli("run", mlp_relay, "--profile", "--repeat", "2")
    assert r.rc == 0, r.err
    assert "time per kernel over 2 run(s)" in r.out
    assert "_add_nn_relu" in r.out and "fused_nn_" in r.out  # the dense + bias + relu kernel
    assert "total" in r.out


def test_profile_on_the_vm(cli, mlp_relay):
    r = cli("run", mlp_relay, "--executor", "vm", "--profile")
    assert r.rc == 0, r.err
    assert "vm executor" in r.out and "vm_fused_" in r.out and "time per kernel" in r.out


def test_a_dynamic_input_is_filled_at_the_shape_given(cli, transformer_pt2, tmp_path):
    artifact = tmp_path / "enc.relayir"
    assert cli("compile", transformer_pt2, "-o", artifact).rc == 0
    r = cli("run", artifact, "--input-shapes", "input_ids:[2,9] mask:[2,9]")
    assert r.rc == 0, r.err
    assert "[2,9,32]" in r.out


def test_built_in_models_still_run(cli):
    r = cli("run", "mlp", "--repeat", "2", "--executor", "vm")
    assert r.rc == 0, r.err
    assert "executor vm" in r.out and "max error" in r.out
