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
