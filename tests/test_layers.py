"""The package's layers import only downward.

Every import of a relayir module anywhere in ``src/relayir`` (at module level or inside
a function) is an edge from the importing layer to the imported one; a layer is a
subpackage (``ir``, ``vm``, ...) or a top-level module (``errors``, ``executor``, ...).
The edges must respect the order in ``LAYERS`` (which the README's Layout section
draws), so in particular the graph has no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import relayir

ROOT = Path(relayir.__file__).parent

# Bottom to top; a layer may import the layers on earlier rows (and itself). Names on
# one row are peers and must not import each other.
LAYERS = [
    ("errors", "version"),
    ("ir",),
    ("op",),
    ("typing",),
    ("transform",),
    ("te",),
    ("tir",),
    ("codegen",),
    ("runtime",),
    ("backend",),
    ("vm",),
    ("executor", "graph_executor", "prelude"),
    ("autotune", "quantize"),
    ("frontend", "viz"),
    ("serve",),
    ("testing",),
    ("cli", "tvm"),
    ("__main__",),
]
RANK = {name: i for i, row in enumerate(LAYERS) for name in row}


def _layer_of(module: str) -> str:
    """``relayir.vm.compiler`` → ``vm``; the package itself → ``""`` (the top)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_edges(root: Path = ROOT) -> list[tuple[str, str, str, int]]:
    """``(importing layer, imported layer, file, line)`` for every relayir import."""
    edges = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                # ``from .. import vm`` imports the submodule ``vm``
                targets = [target] + [f"{target}.{a.name}" for a in node.names
                                      if target == "relayir"]
            else:
                continue
            for t in targets:
                if t == "relayir" or t.startswith("relayir."):
                    src, dst = _layer_of(module), _layer_of(t)
                    if dst and src != dst:
                        edges.append((src, dst, str(path.relative_to(root)), node.lineno))
    return edges


def test_every_layer_is_ranked():
    layers = {p.stem if p.is_file() else p.name for p in ROOT.iterdir()
              if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()}
    assert layers - set(RANK) == set(), "add the new layer to LAYERS (and the README)"


def test_layers_import_only_downward():
    upward = [f"{file}:{line}: {src} imports {dst}"
              for src, dst, file, line in import_edges()
              if src and RANK[dst] >= RANK[src]]
    assert upward == [], "\n".join(upward)


def test_the_import_graph_between_subpackages_has_no_cycle():
    graph: dict[str, set[str]] = {}
    for src, dst, _, _ in import_edges():
        if src:
            graph.setdefault(src, set()).add(dst)
    # iterative DFS with colours: an edge to a grey node closes a cycle
    colour = dict.fromkeys(graph, 0)
    for start in graph:
        if colour[start]:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        colour[start] = 1
        path = [start]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                colour[node] = 2
                stack.pop()
                path.pop()
            elif colour.get(nxt, 0) == 1:
                pytest.fail("import cycle: " + " -> ".join(path[path.index(nxt):] + [nxt]))
            elif colour.get(nxt, 0) == 0:
                colour[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(sorted(graph.get(nxt, ())))))


def test_the_checker_sees_imports_inside_functions_and_from_the_package(tmp_path):
    pkg = tmp_path / "relayir"
    (pkg / "ir").mkdir(parents=True)
    (pkg / "vm").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "ir" / "__init__.py").write_text("def f():\n    from ..vm import compiler\n")
    (pkg / "vm" / "__init__.py").write_text("from .. import errors\n")
    (pkg / "vm" / "compiler.py").write_text("import relayir.ir.expr\n")
    edges = {(src, dst) for src, dst, _, _ in import_edges(pkg)}
    assert edges == {("ir", "vm"), ("vm", "errors"), ("vm", "ir")}
