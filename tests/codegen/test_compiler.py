"""Finding the C compiler, flags, and compile failures (needs a C compiler)."""

import os
import shutil
import sys
import warnings

import pytest

import relayir
from relayir.codegen import (
    CompileError,
    Compiler,
    CompilerNotFoundError,
    CompilerWarning,
    SharedLibrary,
    compile_source,
    default_flags,
    find_compiler,
)

ADD_ONE = """
#include <stdint.h>
int32_t add_one(void* const* args, const int64_t* dims) {
    const float* x = args[0];
    float* y = args[1];
    for (int64_t i = 0; i < dims[0]; i++) y[i] = x[i] + 1.0f;
    return 0;
}
"""


needs_cc = pytest.mark.needs_cc
pytestmark = pytest.mark.usefixtures("cache")


def _fake_cc(tmp_path, body):
    """A compiler wrapper script: ``body`` runs first, then the real compiler."""
    real = find_compiler().path
    script = tmp_path / "fake-cc"
    script.write_text(f'#!/bin/sh\n{body}\nexec {real} "$@"\n')
    script.chmod(0o755)
    return script


@needs_cc
def test_find_compiler_records_path_version_and_features():
    c = find_compiler()
    assert os.path.isabs(c.path) and os.access(c.path, os.X_OK)
    assert c.command[0] == c.path
    assert c.version and "\n" not in c.version
    assert isinstance(c.openmp, bool) and isinstance(c.native, bool)
    assert find_compiler() is c  # found once


@needs_cc
def test_default_flags():
    flags = default_flags()
    for f in ("-O3", "-fPIC", "-shared", "-ffp-contract=fast", "-std=gnu11"):
        assert f in flags
    assert ("-fopenmp" in flags) == find_compiler().openmp
    assert ("-march=native" in flags) == find_compiler().native
    assert not any("fast-math" in f for f in flags)  # NaN/inf must match numpy


def test_cflags_env_replaces_defaults(monkeypatch):
    monkeypatch.setenv("RELAYIR_CFLAGS", "-O1 -DNAME='two words'")
    assert default_flags() == ["-O1", "-DNAME=two words"]


def test_cc_nonexistent_suggests_numpy_target(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent")
    with pytest.raises(CompilerNotFoundError) as info:
        find_compiler()
    msg = str(info.value)
    assert "No C compiler was found" in msg and "/nonexistent" in msg
    assert 'target="numpy"' in msg and "CC" in msg
    assert isinstance(info.value, CompileError) and isinstance(info.value, relayir.Error)
    with pytest.raises(CompilerNotFoundError):
        compile_source(ADD_ONE)


def test_no_compiler_on_path_lists_what_was_tried(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(CompilerNotFoundError) as info:
        find_compiler()
    msg = str(info.value)
    assert "cc (not found)" in msg and "gcc (not found)" in msg and "clang (not found)" in msg
    assert 'target="numpy"' in msg


@needs_cc
def test_cc_with_arguments_is_split_without_a_shell(monkeypatch):
    monkeypatch.setenv("CC", f"{find_compiler().path} -DSTEP=2.0f")
    src = ADD_ONE.replace("+ 1.0f", "+ STEP")
    import numpy as np

    k = SharedLibrary(compile_source(src)).kernel("add_one")
    x = np.arange(4, dtype=np.float32)
    y = np.empty_like(x)
    k(x, y, dims=[4])
    np.testing.assert_array_equal(y, x + 2)


@needs_cc
def test_user_flags_replace_defaults_but_keep_shared(cache):
    import numpy as np

    path = compile_source(ADD_ONE, flags=["-O0"])
    k = SharedLibrary(path).kernel("add_one")
    x = np.ones(3, dtype=np.float32)
    y = np.empty_like(x)
    k(x, y, dims=[3])
    np.testing.assert_array_equal(y, 2)


@needs_cc
def test_syntax_error_keeps_source_and_shows_command_and_message(cache):
    bad = "int32_t broken(void* const* args, const int64_t* dims) { return 0 }\n"
    with pytest.raises(CompileError) as info:
        compile_source(bad, name="broken")
    e = info.value
    assert e.source_path.is_file() and e.source_path.read_text() == bad
    assert e.source_path.parent == cache / "failed"
    assert e.command[0] == find_compiler().path and str(e.source_path) in e.command
    msg = str(e)
    assert find_compiler().path in msg and str(e.source_path) in msg
    assert "error" in e.stderr and e.stderr.strip().splitlines()[0] in msg
    assert f"{e.source_path}:1:" in e.stderr  # points at the kept file, not the build dir
    assert e.returncode
    assert not any((cache / "tmp").iterdir())  # no build directory left behind
    assert not (cache / "lib").exists()


@pytest.mark.skipif(not shutil.which("sh"), reason="needs /bin/sh")
def test_compile_timeout_is_a_compile_error(tmp_path):
    slow = Compiler(("/bin/sh", "-c", "sleep 10", "sh"), "/bin/sh", "slow 1.0", False, False)
    with pytest.raises(CompileError, match="did not finish within 0.5 s"):
        compile_source(ADD_ONE, compiler=slow, timeout=0.5)


@needs_cc
@pytest.mark.skipif(sys.platform == "win32", reason="shell-script compiler wrapper")
def test_openmp_fallback_warns_and_still_compiles(tmp_path, monkeypatch):
    script = _fake_cc(
        tmp_path,
        'for a in "$@"; do [ "$a" = -fopenmp ] && '
        "{ echo \"error: unsupported option '-fopenmp'\" >&2; exit 1; }; done",
    )
    monkeypatch.setenv("CC", str(script))
    with pytest.warns(CompilerWarning, match="OpenMP"):
        c = find_compiler()
    assert not c.openmp and c.native
    assert "-fopenmp" not in default_flags()
    src = ADD_ONE.replace("    for", "#pragma omp parallel for\n    for")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = compile_source(src)
    assert path.is_file()
