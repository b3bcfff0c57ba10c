"""The cupy the package needs: the ``gpu`` extras ask for it, and an older one is refused."""

from __future__ import annotations

import sys
import tomllib
import types
from pathlib import Path

import pytest

from semirings import backend
from semirings.backend import CUPY_MIN, check_cupy_version, get_backend

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("version", ["14.1.0", "14.2.0", "15.0.0rc1", "14.10.0"])
def test_new_enough_cupy_passes(version: str) -> None:
    check_cupy_version(version)


@pytest.mark.parametrize("version", ["13.6.0", "14.0.1", "9.6.0", "14.0.0rc1", "dev"])
def test_old_cupy_is_refused_with_the_fix(version: str) -> None:
    with pytest.raises(RuntimeError, match=rf"needs cupy >= 14\.1; found cupy {version}: "
                                           r"install 'spbfs\[gpu\]' \(CUDA 12\) or "
                                           r"'spbfs\[gpu-cuda13\]' \(CUDA 13\)"):
        check_cupy_version(version)


def test_get_backend_checks_the_cupy_it_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    """An old cupy on a machine with a GPU stops ``cupy`` and ``auto`` before any search."""
    fake = types.ModuleType("cupy")
    fake.__version__ = "13.6.0"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(backend, "gpu_available", lambda: True)
    for name in ("cupy", "auto"):
        with pytest.raises(RuntimeError, match=r"found cupy 13\.6\.0"):
            get_backend(name)


def test_the_gpu_extras_ask_for_the_cupy_the_code_needs() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    need = ".".join(map(str, CUPY_MIN))
    assert extras["gpu"] == [f"cupy-cuda12x>={need}"]
    assert extras["gpu-cuda13"] == [f"cupy-cuda13x>={need}"]
