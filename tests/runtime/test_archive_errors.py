"""Damaged artifacts are clear errors at load, never raw KeyError / IndexError /
JSONDecodeError, a wrong answer or a hang: truncated archives, malformed members of a
graph module (graph JSON, kernel table, params) and of a VM executable (its control
flow is validated at load: every path ends in Ret or Fatal)."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

import relayir as relay
from relayir.runtime.module import ModuleFormatError, load_module
from relayir.runtime.params import load_params, save_params


def _module():
    x, w = relay.var("x", shape=(2, 3)), relay.var("w", shape=(2, 3))
    return relay.IRModule.from_expr(relay.Function([x, w], relay.exp(x) * w))


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    path = tmp_path_factory.mktemp("a") / "m.relayir"
    params = {"w": np.full((2, 3), 2.0, "float32")}
    relay.build(_module(), target="numpy", params=params).export_library(path)
    return path


def _members(path) -> dict:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def _write(path, members: dict):
    with zipfile.ZipFile(path, "w") as z:
        for name in ["meta.json", *(n for n in members if n != "meta.json")]:
            z.writestr(name, members[name])
    return path


def _load_and_run(path):
    m = relay.graph_executor.GraphModule(load_module(path))
    m.run(x=np.zeros((2, 3), "float32"))
    return m.get_output(0)


def test_the_archive_loads_and_runs(archive):
    np.testing.assert_array_equal(_load_and_run(archive), np.full((2, 3), 2.0))


@pytest.mark.parametrize("fraction", [0.1, 0.3, 0.5, 0.9, 0.999])
def test_a_truncated_archive_says_truncated(archive, tmp_path, fraction):
    data = archive.read_bytes()
    cut = tmp_path / "cut.relayir"
    cut.write_bytes(data[:max(int(len(data) * fraction), 60)])
    with pytest.raises(ModuleFormatError, match="truncated or damaged relayir module archive"):
        load_module(cut)


def _graph_edit(edit):
    def apply(members):
        graph = json.loads(members["graph.json"])
        edit(graph)
        members["graph.json"] = json.dumps(graph).encode()
    return apply


def _meta_edit(edit):
    def apply(members):
        meta = json.loads(members["meta.json"])
        edit(meta)
        members["meta.json"] = json.dumps(meta).encode()
    return apply


def _set(key, value):
    return lambda d: d.__setitem__(key, value)


MALFORMED = {
    "graph not JSON": (lambda m: m.__setitem__("graph.json", b"{"), "graph.json is not UTF-8 JSON"),
    "graph not UTF-8": (lambda m: m.__setitem__("graph.json", b"\xff\xfe"), "not UTF-8 JSON"),
    "graph a list": (lambda m: m.__setitem__("graph.json", b"[]"), "expected an object"),
    "nodes an int": (_graph_edit(_set("nodes", 5)), "'nodes' must be a list"),
    "heads out of range": (_graph_edit(_set("heads", [[99, 0, 0]])), "node 99 is not an"),
    "input out of range": (_graph_edit(lambda g: g["nodes"][-1].__setitem__(
        "inputs", [[99, 0, 0]])), "node 99 is not an earlier node"),
    "shape list short": (_graph_edit(lambda g: g["attrs"]["shape"][1].pop()),
                         "attrs.shape must be"),
    "dim of 2**64": (_graph_edit(lambda g: g["attrs"]["shape"][1].__setitem__(0, [2**64, 3])),
                     "more than 2\\*\\*63 - 1"),
    "bad dtype": (_graph_edit(lambda g: g["attrs"]["dltype"][1].__setitem__(0, "floaty")),
                  "dtype 'floaty'"),
    "no func_name": (_graph_edit(lambda g: g["nodes"][-1]["attrs"].pop("func_name")),
                     "needs attrs.func_name"),
    "no library": (_meta_edit(_set("library", {})), "malformed kernel library entry"),
    "kernels a string": (_meta_edit(lambda m: m["library"].__setitem__("kernels", "x")),
                         "malformed kernel library entry"),
    "kernel entry junk": (_meta_edit(lambda m: m["library"].__setitem__("kernels", [{"a": 1}])),
                          "malformed kernel table"),
    "no target": (_meta_edit(lambda m: m.pop("target")), "names no target"),
    "meta a list": (lambda m: m.__setitem__("meta.json", b"[1]"), "format None"),
    "params garbage": (lambda m: m.__setitem__("params.npz", b"garbage"), "cannot read params"),
    "params empty": (lambda m: m.__setitem__("params.npz", b""), "cannot read params"),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_member_is_a_clear_error(archive, tmp_path, name):
    edit, message = MALFORMED[name]
    members = _members(archive)
    edit(members)
    with pytest.raises(relay.Error, match=message):
        _load_and_run(_write(tmp_path / "bad.relayir", members))


def test_params_that_are_not_arrays_are_refused(tmp_path):
    with pytest.raises(ModuleFormatError, match="not a zip archive"):
        load_params(b"\x93NUMPY")
    buf = tmp_path / "p.npz"
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("a.npy", save_params({"a": np.ones(2)})[:10])  # a broken member
    with pytest.raises(ModuleFormatError, match="cannot read params"):
        load_params(buf.read_bytes())
    assert set(load_params(save_params({"a": np.ones(2)}))) == {"a"}


# ---------------------------------------------------------------- VM executables


@pytest.fixture(scope="module")
def vm_file(tmp_path_factory):
    x = relay.var("x", shape=(2,))
    cond = relay.var("c", shape=(), dtype="bool")
    body = relay.If(cond, relay.exp(x), relay.negative(x))
    exe = relay.vm.compile(relay.IRModule.from_expr(relay.Function([x, cond], body)),
                           target="numpy")
    path = tmp_path_factory.mktemp("vm") / "e.relayvm"
    exe.save(path)
    return path


def _edit_main(src, dst, edit):
    members = _members(src)
    meta = json.loads(members["meta.json"])
    main = next(f for f in meta["functions"] if f["name"] == "main")
    edit(main["instructions"])
    members["meta.json"] = json.dumps(meta).encode()
    return _write(dst, members)


def _first(code, opcode):
    return next(i for i, row in enumerate(code) if row[0] == opcode)


CONTROL_FLOW = {
    "goto itself": (lambda code: code.__setitem__(_first(code, "Goto"), ["Goto", 0]),
                    "jump offset 0 goes to itself"),
    "jump backwards": (lambda code: code.__setitem__(_first(code, "Goto"), ["Goto", -1]),
                       "goes backwards"),
    "empty function": (lambda code: code.clear(), "has no instructions"),
    "falls off the end": (lambda code: code.__setitem__(-1, ["LoadConsti", 0, 1]),
                          "falls through past the end"),
    "malformed row": (lambda code: code.__setitem__(0, []), "malformed VM executable"),
}


def test_the_vm_file_loads_and_runs(vm_file):
    vm = relay.vm.VirtualMachine(relay.vm.Executable.load(vm_file))
    x = np.array([0.0, 1.0], "float32")
    np.testing.assert_allclose(vm.invoke("main", x, np.array(True)), np.exp(x))
    np.testing.assert_allclose(vm.invoke("main", x, np.array(False)), -x)


@pytest.mark.parametrize("name", list(CONTROL_FLOW))
def test_bad_control_flow_fails_at_load_not_at_run(vm_file, tmp_path, name):
    edit, message = CONTROL_FLOW[name]
    path = _edit_main(vm_file, tmp_path / "bad.relayvm", edit)
    with pytest.raises(ModuleFormatError, match=message):
        relay.vm.Executable.load(path)


def test_a_truncated_vm_file_says_truncated(vm_file, tmp_path):
    data = vm_file.read_bytes()
    cut = tmp_path / "cut.relayvm"
    cut.write_bytes(data[:len(data) // 2])
    with pytest.raises(ModuleFormatError, match="truncated or damaged relayir VM executable"):
        relay.vm.Executable.load(cut)
