"""``relayir compile`` then ``relayir run`` on model files, as a user runs them: the
outputs equal ONNX Runtime's / PyTorch's."""

import numpy as np

import relayir


def test_onnx_resnet_compiles_and_runs_like_onnxruntime(cli, resnet_onnx, ort_reference,
                                                        tmp_path):
    artifact = tmp_path / "resnet.relayir"
    r = cli("compile", resnet_onnx, "-o", artifact)
    assert r.rc == 0, r.err
    assert f"wrote {artifact} (graph executor" in r.out
    image = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype("float32")
    np.savez(tmp_path / "in.npz", image=image)
    r = cli("run", artifact, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz")
    assert r.rc == 0, r.err
    got = np.load(tmp_path / "out.npz")["output_0"]
    want = ort_reference(resnet_onnx, {"image": image})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert "[1,10]" in r.out and "float32" in r.out
    assert "top 5:" in r.out  # a classifier-shaped output


def test_pt2_transformer_compiles_for_the_vm_and_runs_any_length(
        cli, transformer_pt2, tokens, torch_reference, tmp_path):
    artifact = tmp_path / "encoder.relayir"
    r = cli("compile", transformer_pt2, "-o", artifact)
    assert r.rc == 0, r.err
    assert "(vm executor" in r.out  # a dynamic sequence length: the VM by default
    for seq in (16, 5, 37):  # one artifact serves every length
        inputs = tokens(seq, seed=seq)
        np.savez(tmp_path / "in.npz", **inputs)
        r = cli("run", artifact, "--inputs", tmp_path / "in.npz",
                "--outputs", tmp_path / "out.npz")
        assert r.rc == 0, r.err
        got = np.load(tmp_path / "out.npz")["output_0"]
        np.testing.assert_allclose(got, torch_reference(transformer_pt2, inputs),
                                   rtol=1e-4, atol=1e-4)
        assert f"[2,{seq},32]" in r.out


def test_pt2_with_fixed_shapes_compiles_for_the_graph_executor(
        cli, transformer_pt2, tokens, torch_reference, tmp_path):
    artifact = tmp_path / "encoder12.relayir"
    r = cli("compile", transformer_pt2, "-o", artifact,
            "--input-shapes", "input_ids:[2,12] mask:[2,12]")
    assert r.rc == 0, r.err
    assert "(graph executor" in r.out
    inputs = tokens(12)
    np.savez(tmp_path / "in.npz", **inputs)
    r = cli("run", artifact, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "o.npz")
    assert r.rc == 0, r.err
    np.testing.assert_allclose(np.load(tmp_path / "o.npz")["output_0"],
                               torch_reference(transformer_pt2, inputs), rtol=1e-4, atol=1e-4)


def test_relay_text_compiles_with_dump_ir(cli, mlp_relay, tmp_path):
    artifact, dump = tmp_path / "mlp.relayir", tmp_path / "ir"
    r = cli("compile", mlp_relay, "-o", artifact, "--executor", "vm", "--opt-level", "2",
            "--dump-ir", dump, "--disabled-pass", "EliminateCommonSubexpr")
    assert r.rc == 0, r.err
    names = sorted(p.name for p in dump.iterdir())
    assert names[0] == "00_input.relay"
    assert any(n.endswith("_FuseOps.relay") for n in names)
    assert not any("EliminateCommonSubexpr" in n for n in names)
    assert "kernels.c" in names
    fused = next(dump.glob("*_FuseOps.relay")).read_text()
    assert "Primitive=1" in fused
    assert relayir.vm.Executable.load(artifact).target == "cpu"


def test_aot_executor_builds_or_says_why_in_one_line(cli, mlp_relay, tmp_path):
    """The AOT executor is built separately: until it lands, the error is one line."""
    artifact = tmp_path / "mlp_aot"
    r = cli("compile", mlp_relay, "-o", artifact, "--executor", "aot")
    if r.rc != 0:
        assert r.rc == 2 and "Traceback" not in r.err
        assert len(r.err.strip().splitlines()) == 1, r.err
        return
    graph = tmp_path / "mlp_graph.relayir"
    assert cli("compile", mlp_relay, "-o", graph).rc == 0
    x = np.random.default_rng(0).standard_normal((1, 784)).astype("float32")
    np.savez(tmp_path / "in.npz", data=x)
    outs = []
    for a in (artifact, graph):
        r = cli("run", a, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "o.npz")
        assert r.rc == 0, r.err
        outs.append(np.load(tmp_path / "o.npz")["output_0"])
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)


def test_numpy_target_needs_no_compiler(cli, mlp_relay, tmp_path):
    artifact = tmp_path / "mlp_np.relayir"
    r = cli("compile", mlp_relay, "-o", artifact, "--target", "numpy")
    assert r.rc == 0, r.err
    assert "C library" not in r.out and "C compiled" not in r.out
    assert relayir.runtime.load_module(artifact).target == "numpy"
