"""``relayir show``: Relay text after a pass that parses back, the fused functions with
their op counts, the time per pass."""

import relayir
from relayir.backend import bind_param_arrays, optimize
from relayir.frontend import load_model
from relayir.ir.structural import structural_equal
from relayir.transform import PassContext
from relayir.typing.infer import infer_module


def test_after_fuse_ops_parses_back_with_its_constants(cli, mlp_relay):
    r = cli("show", mlp_relay, "--after", "FuseOps")
    assert r.rc == 0, r.err
    assert r.out.startswith("// after FuseOps\n")
    assert "#[metadata]" in r.out and "meta[relay.Constant][0]" in r.out
    parsed = relayir.parse(r.out)
    mod, params = load_model(mlp_relay)
    with PassContext(opt_level=3):
        want = optimize(infer_module(bind_param_arrays(mod, params).copy()))
    assert structural_equal(parsed, want)


def test_no_meta_data_elides_the_constants(cli, mlp_relay):
    r = cli("show", mlp_relay, "--after", "FuseOps", "--no-meta-data")
    assert r.rc == 0, r.err
    assert "#[metadata]" not in r.out and "metadata omitted" in r.out
    assert len(r.out) < 10_000  # the weights are 800 KB of base64 otherwise


def test_as_imported_and_with_types(cli, mlp_relay):
    r = cli("show", mlp_relay, "--types", "--no-meta-data")
    assert r.rc == 0, r.err
    assert "nn.dense(%data" in r.out and "/* ty=Tensor[(1, 256), float32] */" in r.out
    assert "Primitive" not in r.out  # before any pass


def test_after_all_passes_numbers_repeated_ones(cli, mlp_relay):
    r = cli("show", mlp_relay, "--after", "all", "--no-meta-data")
    assert r.rc == 0, r.err
    assert "// after SimplifyInference\n" in r.out
    assert "// after FoldConstant (run 1 of 3)" in r.out
    assert "// after FuseOps\n" in r.out


def test_fused_functions_and_their_op_counts(cli, mlp_relay):
    r = cli("show", mlp_relay, "--fused", "--no-meta-data")
    assert r.rc == 0, r.err
    assert "// fused_nn_dense_add_nn_relu: 3 ops, 1 call(s)" in r.out
    assert "3 fused functions" in r.out
    assert "nn.dense, add, nn.relu" in r.out


def test_pass_timing_table(cli, mlp_relay):
    r = cli("show", mlp_relay, "--pass-timing", "--opt-level", "1")
    assert r.rc == 0, r.err
    lines = r.out.splitlines()
    assert any(line.startswith("FuseOps") for line in lines)
    assert not any(line.startswith("FoldConstant") for line in lines)  # level 2
