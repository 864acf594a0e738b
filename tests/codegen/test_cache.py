"""The on-disk cache of compiled objects (needs a C compiler)."""

import multiprocessing
import subprocess
from dataclasses import replace

import numpy as np
import pytest

from relayir.codegen import (
    CompilerWarning,
    SharedLibrary,
    cache_dir,
    cache_enabled,
    compile_source,
    find_compiler,
)

SCALE = """
#include <stdint.h>
int32_t scale(void* const* args, const int64_t* dims) {
    const float* x = args[0];
    float* y = args[1];
    for (int64_t i = 0; i < dims[0]; i++) y[i] = 3.0f * x[i];
    return 0;
}
"""


pytestmark = [pytest.mark.needs_cc, pytest.mark.usefixtures("cache")]


@pytest.fixture
def count_runs(monkeypatch):
    calls = []
    real = subprocess.run

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(subprocess, "run", counting)
    return calls


def _check_scale(path):
    x = np.arange(8, dtype=np.float32)
    y = np.empty_like(x)
    SharedLibrary(path).kernel("scale")(x, y, dims=[8])
    np.testing.assert_array_equal(y, 3 * x)


def test_cache_dir_location(tmp_path, monkeypatch):
    assert cache_dir() == tmp_path / "cache"
    monkeypatch.delenv("RELAYIR_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "relayir"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "relayir"


def test_published_in_cache_dir_and_hit_without_subprocess(cache, monkeypatch):
    path = compile_source(SCALE, name="scale")
    assert path.parent == cache / "lib" and path.name.startswith("scale-")
    assert path.with_suffix(".c").read_text() == SCALE  # kept beside it for debugging
    assert not any((cache / "tmp").iterdir())

    def no_subprocess(*args, **kwargs):
        raise AssertionError(f"cache hit ran a subprocess: {args}")

    monkeypatch.setattr(subprocess, "run", no_subprocess)
    assert compile_source(SCALE, name="scale") == path
    _check_scale(path)


def test_key_covers_source_flags_and_compiler(cache):
    base = compile_source(SCALE)
    assert compile_source(SCALE, flags=["-O1"]) != base
    assert compile_source(SCALE, flags=["-O1", "-DX"]) != compile_source(SCALE, flags=["-O1"])
    assert compile_source(SCALE + "\n") != base
    other = replace(find_compiler(), version=find_compiler().version + " (patched)")
    assert compile_source(SCALE, compiler=other) != base
    assert len(list((cache / "lib").glob("*.so"))) == 5


def test_no_cache_compiles_every_time_outside_the_cache(cache, monkeypatch, count_runs):
    find_compiler()  # any probing happens before counting
    count_runs.clear()
    monkeypatch.setenv("RELAYIR_NO_CACHE", "1")
    assert not cache_enabled()
    first = compile_source(SCALE)
    second = compile_source(SCALE)
    assert len(count_runs) == 2 and first != second
    assert cache not in first.parents and not (cache / "lib").exists()
    _check_scale(second)


def test_no_cache_off_values(monkeypatch):
    for value in ("0", "false", "", "off"):
        monkeypatch.setenv("RELAYIR_NO_CACHE", value)
        assert cache_enabled()


def test_unwritable_cache_dir_falls_back_with_warning(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("RELAYIR_CACHE_DIR", str(blocker / "cache"))
    with pytest.warns(CompilerWarning, match="not writable"):
        path = compile_source(SCALE)
    _check_scale(path)


def _compile_and_run(cache_root, compiler, barrier, results):
    import os

    os.environ["RELAYIR_CACHE_DIR"] = cache_root
    barrier.wait(timeout=60)  # all compiles start together
    try:
        path = compile_source(SCALE, name="shared", compiler=compiler)
        x = np.arange(1000, dtype=np.float32)
        y = np.empty_like(x)
        SharedLibrary(path).kernel("scale")(x, y, dims=[1000])
        results.put((str(path), bool(np.array_equal(y, 3 * x))))
    except Exception as e:  # reported to the parent
        results.put(("error", repr(e)))


def test_concurrent_processes_compile_same_key(cache):
    # Fresh interpreters (no inherited threads or OpenMP pool, unlike fork), forked
    # from one server that imported relayir once: a spawn per process costs ~1 s.
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["relayir.codegen", _compile_and_run.__module__])
    barrier, results = ctx.Barrier(4), ctx.Queue()
    procs = [
        ctx.Process(target=_compile_and_run, args=(str(cache), find_compiler(), barrier, results))
        for _ in range(4)
    ]
    for p in procs:
        p.start()
    got = [results.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert all(ok is True for _, ok in got), got
    assert len({path for path, _ in got}) == 1
    assert len(list((cache / "lib").iterdir())) == 2  # one .so, one .c
    assert not any((cache / "tmp").iterdir())
    _check_scale(got[0][0])
