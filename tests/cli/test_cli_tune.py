"""``relayir tune``: tune a model file, then build it with ``--tuning-records``."""

from __future__ import annotations

import json

import numpy as np

import relayir
from relayir import autotune


def test_tune_then_compile_with_the_records(cli, mlp_relay, tmp_path):
    records = tmp_path / "mlp.json"
    r = cli("tune", mlp_relay, "--trials", "4", "--records", records, "--tuner", "random",
            "--batch", "4", "--repeat", "2", "--min-repeat-ms", "1")
    assert r.rc == 0, r.err
    assert "tuning" in r.out and "speed-up" in r.out
    assert f"build with: relayir compile {mlp_relay} --tuning-records {records}" in r.out
    lines = records.read_text().splitlines()
    assert len(lines) >= 4 and {"task", "schedule", "costs"} <= set(json.loads(lines[0]))
    assert all(r.costs and r.reference for r in autotune.load_records(records))
    out = tmp_path / "mlp.relayir"
    r = cli("compile", mlp_relay, "--tuning-records", records, "-o", out)
    assert r.rc == 0, r.err
    assert out.is_file()


def test_tune_errors_are_one_line(cli, mlp_relay, tmp_path):
    r = cli("tune", "nosuchmodel", "--records", tmp_path / "r.json")
    assert r.rc == 2 and "nosuchmodel: not found" in r.err
    r = cli("compile", mlp_relay, "--tuning-records", tmp_path / "none.json")
    assert r.rc == 2 and "none.json: not found" in r.err


def test_tune_chooses_convolution_algorithms_first(cli, tmp_path):
    mod = relayir.parse("""
def @main(%x: Tensor[(1, 16, 12, 12), float32], %w: Tensor[(16, 16, 3, 3), float32]) {
  nn.relu(nn.conv2d(%x, %w, padding=[1, 1, 1, 1]))
}
""")
    path = tmp_path / "conv.relay"
    path.write_text(mod.astext())
    np.savez(tmp_path / "conv.params.npz",
             w=np.random.default_rng(0).standard_normal((16, 16, 3, 3)).astype("float32"))
    records = tmp_path / "conv.json"
    r = cli("tune", path, "--conv-algorithms", "--trials", "2", "--records", records,
            "--tuner", "random", "--batch", "2", "--repeat", "1", "--min-repeat-ms", "1")
    assert r.rc == 0, r.err
    kinds = [rec.kind for rec in autotune.load_records(records)]
    assert kinds.count("conv_algorithm") == 3  # direct and three Winograd tiles, less the rule's
    assert len(kinds) > 3  # then the kernels of the model built with the choice
    r = cli("compile", path, "--tuning-records", records, "-o", tmp_path / "conv.relayir")
    assert r.rc == 0, r.err
