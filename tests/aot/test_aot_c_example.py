"""The exported AOT library from C, with no Python: examples/aot_c (built with its
Makefile) gives the graph executor's output; two models with different prefixes link
into one program; a null input pointer is an error that names the input."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from relayir.testing.models import get_workload, make_inputs

EXAMPLE = Path(__file__).parents[2] / "examples" / "aot_c"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _mlp(**knobs):
    mod, params, _ = get_workload("mlp", **knobs)
    return mod, params, make_inputs("mlp", mod, seed=5)


def _make_example(model_dir: Path) -> Path:
    binary = model_dir / "run_model"
    subprocess.run(["make", "-C", str(EXAMPLE), f"MODEL_DIR={model_dir}", f"OUT={binary}"],
                   check=True, capture_output=True, text=True)
    return binary


def test_example_program_equals_graph_executor(aot, tmp_path):
    mod, params, inputs = _mlp(batch_size=1)
    graph, lib = aot.build_both(mod, params)
    lib.export_library(tmp_path / "model.so")
    inputs["data"].tofile(tmp_path / "input.bin")
    binary = _make_example(tmp_path)
    done = subprocess.run([str(binary), str(tmp_path / "input.bin"), str(tmp_path / "out.bin"),
                           "200"], capture_output=True, text=True, check=True)
    assert re.match(r"relayir_run: [0-9.]+ us per run \(200 runs\)", done.stdout), done.stdout
    got = np.fromfile(tmp_path / "out.bin", "float32").reshape(1, 10)
    aot.assert_bitwise_equal([got], aot.run_graph(graph, inputs))
    # the input file must hold exactly the inputs
    (tmp_path / "short.bin").write_bytes(inputs["data"].tobytes()[:-4])
    bad = subprocess.run([str(binary), str(tmp_path / "short.bin"), str(tmp_path / "o.bin")],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "too short for input data" in bad.stderr


def test_example_program_does_not_link_python(aot, tmp_path):
    if shutil.which("ldd") is None:
        pytest.skip("needs ldd")
    mod, params, _ = _mlp(batch_size=1, in_features=16, hidden=8)
    _, lib = aot.build_both(mod, params)
    lib.export_library(tmp_path / "model.so")
    binary = _make_example(tmp_path)
    for path in (binary, tmp_path / "model.so"):
        linked = subprocess.run(["ldd", str(path)], capture_output=True, text=True).stdout
        assert "model.so" in linked or path.name == "model.so"
        assert "python" not in linked.lower(), linked


TWO_MODELS = r"""
#include <stdio.h>
#include <stdlib.h>
#include "small.h"
#include "big.h"

static void* load(const char* path, long n) {
  void* data = malloc(n);
  FILE* f = fopen(path, "rb");
  if (!f || fread(data, 1, n, f) != (size_t)n) exit(2);
  fclose(f);
  return data;
}

static void save(const char* path, const void* data, long n) {
  FILE* f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != (size_t)n) exit(2);
  fclose(f);
}

int main(int argc, char** argv) {
  (void)argc;
  const void* small_in[] = {load(argv[1], relayir_small_input_nbytes(0))};
  const void* big_in[] = {load(argv[2], relayir_big_input_nbytes(0))};
  void* small_out[] = {malloc(relayir_small_output_nbytes(0))};
  void* big_out[] = {malloc(relayir_big_output_nbytes(0))};
  if (relayir_small_run(small_in, small_out) || relayir_big_run(big_in, big_out)) return 3;
  save(argv[3], small_out[0], relayir_small_output_nbytes(0));
  save(argv[4], big_out[0], relayir_big_output_nbytes(0));
  const void* null_in[] = {NULL};
  if (relayir_big_run(null_in, big_out) == 0) return 4;
  printf("%s\n", relayir_big_last_error());
  return 0;
}
"""


def test_two_models_with_different_prefixes_in_one_program(aot, tmp_path):
    """Two MLPs of different sizes: same kernel names, different kernels; each model's
    symbols carry its prefix, so each runs its own."""
    models = {"small": _mlp(batch_size=1, in_features=16, hidden=8),
              "big": _mlp(batch_size=2, in_features=48, hidden=32)}
    expected = {}
    for name, (mod, params, inputs) in models.items():
        graph, lib = aot.build_both(mod, params, mod_name=name)
        lib.export_library(tmp_path / f"{name}.so")
        inputs["data"].tofile(tmp_path / f"{name}_in.bin")
        expected[name] = aot.run_graph(graph, inputs)[0]
    (tmp_path / "two.c").write_text(TWO_MODELS)
    binary = tmp_path / "two"
    subprocess.run(["cc", "-O2", "-std=c99", "-Wall", "-Werror", f"-I{tmp_path}", "-o",
                    str(binary), str(tmp_path / "two.c"), f"-L{tmp_path}", "-l:small.so",
                    "-l:big.so", f"-Wl,-rpath,{tmp_path}"], check=True, capture_output=True)
    done = subprocess.run([str(binary), *(str(tmp_path / f) for f in (
        "small_in.bin", "big_in.bin", "small_out.bin", "big_out.bin"))],
        capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == 'relayir_big_run: input 0 ("data") is NULL'
    for name in models:
        got = np.fromfile(tmp_path / f"{name}_out.bin", "float32").reshape(expected[name].shape)
        aot.assert_bitwise_equal([got], [expected[name]])
