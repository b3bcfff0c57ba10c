"""Shared fixtures: data location, backends, formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from semirings.backend import gpu_available

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

CPU_BACKENDS = ["numba", "numpy"]
BACKENDS = [*CPU_BACKENDS, pytest.param("cupy", marks=pytest.mark.gpu)]
FORMATS = ["csr", "dcsc"]
DIRECTIONS = ["auto", "top-down", "bottom-up"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="no usable GPU (cupy backend)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA.is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    return DATA
