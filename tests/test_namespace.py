"""``dir()`` of each public package lists its API, not the names its code imports."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

PACKAGES = ["spbfs", "spbfs.datasets", "spbfs.io", "spbfs.mpi"]


@pytest.mark.parametrize("name", PACKAGES)
def test_dir_lists_the_public_api_only(name: str) -> None:
    mod = importlib.import_module(name)
    shown = set(dir(mod))
    assert set(mod.__all__) <= shown
    for k in shown:
        assert hasattr(mod, k), f"dir({name}) lists {k!r}, which is not there"
    extra = {k for k in shown - set(mod.__all__) if not k.startswith("__")}
    for k in extra:
        v = getattr(mod, k)
        # Beside __all__ only the package's own submodules (spbfs.mpi.codec, ...).
        assert isinstance(v, ModuleType) and v.__name__ == f"{name}.{k}", (
            f"dir({name}) lists {k!r}, an import of its code, not part of its API"
        )


def test_dir_of_datasets_leaves_out_its_imports() -> None:
    import spbfs.datasets

    shown = dir(spbfs.datasets)
    for k in ("os", "Path", "annotations", "Config", "Graph", "read_graph"):
        assert k not in shown
    assert "__doc__" in shown and "karate" in shown
    # The imports are only unlisted: the package's code still reaches them.
    assert spbfs.datasets.Path is not None


def test_plain_import_reaches_the_user_subpackages() -> None:
    """``import spbfs`` alone, then ``spbfs.algorithms.sssp`` and the like (a fresh
    interpreter: in this one other tests have imported them already)."""
    import subprocess
    import sys

    code = ("import sys, spbfs\n"
            "assert 'spbfs.algorithms' not in sys.modules\n"
            "assert callable(spbfs.algorithms.sssp) and callable(spbfs.datasets.karate)\n"
            "assert callable(spbfs.generators.kronecker) and callable(spbfs.io.read_graph)\n"
            "assert callable(spbfs.validate.validate_bfs_tree)\n"
            "assert {'algorithms', 'datasets', 'generators', 'io', 'validate'} <= set(dir(spbfs))\n"
            "try:\n    spbfs.nothing\nexcept AttributeError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "module 'spbfs' has no attribute 'nothing'" in out.stdout
