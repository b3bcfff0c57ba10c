"""The layers of docs/concepts/architecture.md, checked on the imports of every module.

An import that goes up the stack (the algebra importing spbfs, the driver
importing the grid, a library module importing the CLI) fails here, with the
module and the line, whether it is at the top of the file or inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: (package or module path, prefixes it must never import, why)
RULES = [
    ("semirings", ("spbfs",), "the algebra knows nothing of graphs or searches"),
    ("spbfs/search", ("spbfs.mpi", "spbfs.algorithms", "spbfs.cli"),
     "the driver and the one-process engines do not know the grid or what runs on them"),
    ("spbfs/direction.py", ("spbfs.mpi", "spbfs.algorithms", "spbfs.cli", "spbfs.search"),
     "the direction policy is a leaf"),
    ("spbfs/kernels", ("spbfs.mpi", "spbfs.algorithms", "spbfs.cli"),
     "the BFS kernels know blocks and bitmaps, not the grid or their users"),
    ("spbfs/mpi", ("spbfs.algorithms", "spbfs.cli"), "the grid does not know its users"),
    ("spbfs/algorithms", ("spbfs.cli",), "algorithms do not know the command line"),
    ("spbfs/io", ("spbfs.cli", "spbfs.algorithms", "spbfs.search"),
     "readers and writers know graphs and files only"),
    ("spbfs/datasets", ("spbfs.cli", "spbfs.algorithms", "spbfs.search", "spbfs.mpi"),
     "bundled data sets are files and their readers"),
    ("spbfs/csgraph.py", ("spbfs.cli", "spbfs.mpi", "spbfs.nxbackend"),
     "the scipy drop-ins run one process"),
    ("spbfs/nxbackend", ("spbfs.cli", "spbfs.mpi", "spbfs.csgraph"),
     "the networkx backend runs one process"),
    ("spbfs/patterns.py", ("spbfs", "numpy", "mpi4py"),
     "the pattern registry is names: the configuration below everything reads it"),
    ("spbfs/mpi/codec.py", ("spbfs.mpi.spmsv", "spbfs.mpi.bfs", "spbfs.mpi.planner"),
     "the codec knows arrays, not the phases that send them"),
    ("spbfs/mpi/encodings.py", ("spbfs.mpi.spmsv", "spbfs.mpi.bfs", "spbfs.mpi.planner",
                                "spbfs.mpi.costmodel"),
     "an encoding is handed its context (the phases) and is priced: it reaches for neither"),
    ("spbfs/mpi/staging.py", ("spbfs.mpi.spmsv", "spbfs.mpi.bfs", "spbfs.mpi.local_array",
                              "spbfs.mpi.planner"),
     "the staging knows arrays and the MPI library, not the engine or the phases using it"),
    ("spbfs/mpi/costmodel.py", ("spbfs.mpi.spmsv", "spbfs.mpi.bfs", "spbfs.mpi.planner",
                                "spbfs.mpi.comm"),
     "the cost model is arithmetic: the same code prices grids that do not exist"),
]


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def _files(place: str) -> list[Path]:
    p = ROOT / place
    # ``__main__`` modules are entry points (``python -m spbfs.mpi``): the top of the stack.
    return [p] if p.is_file() else sorted(f for f in p.rglob("*.py") if f.name != "__main__.py")


@pytest.mark.parametrize(("place", "banned", "why"), RULES, ids=[r[0] for r in RULES])
def test_imports_go_down(place: str, banned: tuple[str, ...], why: str) -> None:
    files = _files(place)
    assert files, f"{place} has no Python files: update RULES"
    bad = [f"{f.relative_to(ROOT)}:{line}: imports {name}"
           for f in files for line, name in _imports(f)
           if any(name == b or name.startswith(b + ".") for b in banned)]
    assert not bad, f"{place} must not import {', '.join(banned)} ({why}):\n" + "\n".join(bad)


def test_rules_catch_an_upward_import(tmp_path: Path) -> None:
    """The reader sees imports inside functions too (a lazy import is still a dependency)."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from spbfs.mpi import comm\n    import spbfs.cli\n")
    assert [n for _, n in _imports(f)] == ["spbfs.mpi", "spbfs.mpi.comm", "spbfs.cli"]


def _module_graph(top: Path) -> dict[str, set[str]]:
    """Every module below ``top`` and the modules of the package it imports (lazily too).

    ``from pkg import sub`` is an edge to ``pkg.sub`` when that is a module, to ``pkg``
    (its ``__init__``) otherwise; a package's own ``__init__`` re-exporting its
    submodules is no edge back from them.
    """
    mods = {}
    for f in sorted(top.rglob("*.py")):
        parts = f.relative_to(top.parent).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        for node in ast.walk(ast.parse(f.read_text(), filename=str(f))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = [f"{node.module}.{a.name}" for a in node.names]
                names = [s for s in subs if s in mods] or [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            graph[m] |= {n for n in names
                         if n in mods and n != m and not m.startswith(n + ".")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or around a circle (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.mark.parametrize("package", ["spbfs", "semirings"])
def test_no_import_circles(package: str) -> None:
    """Two modules that import each other cannot be read, changed or tested apart."""
    circles = _cycles(_module_graph(ROOT / package))
    assert not circles, "modules that import each other: " + "; ".join(
        " <-> ".join(c) for c in circles)


def test_a_planted_circle_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg.a import f\n")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def g():\n    from pkg.sub.c import h\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("import pkg.a\n")
    assert _cycles(_module_graph(pkg)) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    (pkg / "sub" / "c.py").write_text("from pkg import a\n")  # the same, spelled otherwise
    assert _cycles(_module_graph(pkg)) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    (pkg / "sub" / "c.py").write_text("x = 1\n")
    assert _cycles(_module_graph(pkg)) == []
