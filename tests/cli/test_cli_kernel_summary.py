"""``relayir compile`` / ``run`` say how many kernels are C and name every kernel that
runs as a numpy reference, with why: a "compiled" model never runs numpy silently."""

import pytest

TOPK = """#[version = "0.0.5"]
def @main(%x: Tensor[(3, 6), float32]) {
  %0 = topk(%x, k=2, ret_type="values");
  nn.relu(%0)
}
"""


@pytest.mark.parametrize("executor", ["graph", "vm"])
def test_compile_and_run_name_the_reference_kernels(cli, tmp_path, executor):
    src = tmp_path / "topk.relay"
    src.write_text(TOPK)
    out = tmp_path / "topk.relayir"
    r = cli("compile", src, "-o", out, "--executor", executor)
    assert r.rc == 0, r.err
    assert "kernels: 1 of 2 kernels run as numpy references: " in r.out, r.out
    assert "topk has no C compute (sorting needs data-dependent control flow)" in r.out
    r = cli("run", out, "--repeat", "1")
    assert r.rc == 0, r.err
    assert "1 of 2 kernels run as numpy references" in r.out, r.out


def test_an_all_c_model_says_so(cli, mlp_relay):
    r = cli("run", mlp_relay, "--repeat", "1")
    assert r.rc == 0, r.err
    assert "all 3 kernels are C" in r.out, r.out
    r = cli("run", "mlp", "--repeat", "1")
    assert r.rc == 0, r.err
    assert "kernels     all 3 kernels are C" in r.out, r.out
