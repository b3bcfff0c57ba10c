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
