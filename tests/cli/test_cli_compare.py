"""``relayir compare``: one table of relayir's executors, ONNX Runtime and PyTorch on the
same inputs; ``--json`` for scripts."""

import json
import math

import numpy as np
import pytest


def _engines(report: dict) -> dict[str, dict]:
    return {e["engine"]: e for e in report["engines"]}


def _check_ran(row: dict, peers: list[str]) -> None:
    assert row["status"] == "ok"
    assert 0 < row["min_ms"] <= row["median_ms"] <= row["max_ms"]
    assert row["prepare_s"] >= 0
    for p in peers:
        v = row["vs"][p]
        assert v["outputs_match_in_shape"]
        assert v["max_abs_err"] < 1e-4 and v["max_rel_err"] < 1e-4
        assert math.isfinite(v["speedup"]) and v["speedup"] > 0


def test_compare_an_onnx_model(cli, resnet_onnx, tmp_path):
    pytest.importorskip("onnxruntime")
    r = cli("compare", resnet_onnx, "--repeat", "3", "--threads", "1",
            "--json", tmp_path / "report.json")
    assert r.rc == 0, r.err
    report = json.loads((tmp_path / "report.json").read_text())
    rows = _engines(report)
    assert report["peers"] == ["onnxruntime"] and report["threads"] == 1
    for name in ("relayir graph", "relayir vm", "onnxruntime"):
        _check_ran(rows[name], report["peers"])
    assert rows["torch"]["status"] == "skipped" and ".pt2" in rows["torch"]["reason"]
    assert rows["relayir aot"]["status"] in ("ok", "skipped")
    # the same report as a table: one header, one row per engine, reasons as footnotes
    header = next(line for line in r.out.splitlines() if line.startswith("engine"))
    assert "median (ms)" in header and "vs onnxruntime" in header
    for name in rows:
        assert any(line.startswith(name) for line in r.out.splitlines()), name
    assert "torch: skipped: PyTorch eager runs .pt2 models" in r.out


def test_compare_a_pt2_model_with_all_three_engines(cli, transformer_pt2, tokens, tmp_path):
    pytest.importorskip("onnxruntime")
    np.savez(tmp_path / "in.npz", **tokens(10))
    r = cli("compare", transformer_pt2, "--inputs", tmp_path / "in.npz", "--repeat", "3",
            "--json")
    assert r.rc == 0, r.err
    report = json.loads(r.out)  # --json without a file: only the JSON, on stdout
    rows = _engines(report)
    assert report["peers"] == ["torch", "onnxruntime"]
    assert report["inputs"]["input_ids"] == {"shape": [2, 10], "dtype": "int64"}
    for name in ("relayir vm", "torch", "onnxruntime"):
        _check_ran(rows[name], report["peers"])
    assert rows["relayir graph"]["status"] == "skipped"
    assert "--input-shapes" in rows["relayir graph"]["reason"]


def test_compare_only_with_the_peers_asked_for(cli, mlp_relay):
    r = cli("compare", mlp_relay, "--with", "torch", "--repeat", "2", "--json")
    assert r.rc == 0, r.err
    rows = _engines(json.loads(r.out))
    assert "onnxruntime" not in rows and rows["torch"]["status"] == "skipped"
    assert rows["relayir graph"]["status"] == "ok"
