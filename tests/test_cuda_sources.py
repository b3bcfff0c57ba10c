"""Every CUDA source the package builds compiles, without a GPU.

NVRTC (CUDA's runtime compiler, the one cupy's ``RawModule`` calls) compiles
CUDA C to PTX with no device present. Each module of
:mod:`spbfs.kernels.bfs_cuda` is compiled here as the engine builds it: every
specialisation of its index types, the engine's options, and every kernel it
looks up found as an entry of the PTX. A warning fails like an error: the log
names the line either way. NVRTC comes from the ``nvidia-cuda-nvrtc`` wheel
(in the ``test`` extra on Linux x86_64) or a CUDA toolkit; where there is none,
the checks are skipped and say why.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import itertools
import os
import re
from pathlib import Path

import numpy as np
import pytest

from spbfs.kernels import bfs_cuda as sc

VARIANTS = list(itertools.product(sc.INDEX_DTYPES, repeat=3))


def _nvrtc_candidates() -> list[str]:
    """libnvrtc from the nvidia wheels (CUDA 13, then 12), the loader's path, a toolkit."""
    found = []
    try:
        import nvidia

        for root in nvidia.__path__:
            for sub in ("cu13/lib", "cu13/bin", "cuda_nvrtc/lib", "cuda_nvrtc/bin"):
                found += sorted(glob.glob(os.path.join(root, sub, "*nvrtc*")))
    except ImportError:
        pass
    found = [f for f in found if re.search(r"(lib)?nvrtc(64_\d+_\d+)?(\.so[.\d]*|\.dll)$",
                                           os.path.basename(f))]
    name = ctypes.util.find_library("nvrtc")
    if name:
        found.append(name)
    for home in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home:
            found += sorted(glob.glob(os.path.join(home, "lib64", "libnvrtc.so*")))
    return found


def _load_nvrtc() -> ctypes.CDLL | None:
    for path in _nvrtc_candidates():
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


NVRTC = _load_nvrtc()
needs_nvrtc = pytest.mark.skipif(
    NVRTC is None, reason="no NVRTC: pip install nvidia-cuda-nvrtc (spbfs[test] on Linux x86_64)"
)


def nvrtc_compile(source: str, options: tuple[str, ...], name: str = "spbfs.cu"
                  ) -> tuple[bool, str, str]:
    """Compile ``source``; returns (success, the compiler's log, the PTX)."""
    assert NVRTC is not None
    prog = ctypes.c_void_p()
    rc = NVRTC.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None,
                                  None)
    assert rc == 0, f"nvrtcCreateProgram returned {rc}"
    try:
        opts = (ctypes.c_char_p * len(options))(*(o.encode() for o in options))
        ok = NVRTC.nvrtcCompileProgram(prog, len(options), opts) == 0
        size = ctypes.c_size_t()
        NVRTC.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        NVRTC.nvrtcGetProgramLog(prog, log)
        ptx = b""
        if ok:
            NVRTC.nvrtcGetPTXSize(prog, ctypes.byref(size))
            buf = ctypes.create_string_buffer(size.value)
            NVRTC.nvrtcGetPTX(prog, buf)
            ptx = buf.value
        return ok, log.value.decode(errors="replace").strip(), ptx.decode(errors="replace")
    finally:
        NVRTC.nvrtcDestroyProgram(ctypes.byref(prog))


def check_module(source: str, tag: str) -> None:
    """``source`` compiles with the engine's options, cleanly, with every kernel an entry."""
    ok, log, ptx = nvrtc_compile(source, sc.OPTIONS)
    assert ok and not log, f"{tag}:\n{log}"
    entries = set(re.findall(r"\.entry\s+(\w+)", ptx))
    missing = [k for k in sc.KERNELS if k not in entries]
    assert not missing, f"{tag}: kernels {missing} are not entries of the PTX"


@needs_nvrtc
@pytest.mark.parametrize(("ind", "ptr", "vid"), VARIANTS,
                         ids=["-".join(np.dtype(t).name for t in v) for v in VARIANTS])
def test_bfs_kernels_compile(ind, ptr, vid):
    check_module(sc.kernel_source(ind, ptr, vid), f"bfs_cuda ({ind.__name__}, {ptr.__name__}, "
                 f"{vid.__name__})")


@needs_nvrtc
@pytest.mark.parametrize(("old", "new", "says"), [
    # A statement without its semicolon (syntax).
    ("m_in -= s_isum;", "m_in -= s_isum", "expected a \";\""),
    # A kernel's in-degrees declared int where the functions it calls read long long.
    ("const long long* __restrict__ deg, const long long* __restrict__ indeg,\n"
     "         ull* parents", "const long long* __restrict__ deg, const int* __restrict__ indeg,\n"
     "         ull* parents", "is incompatible with parameter of type"),
], ids=["syntax", "types"])
def test_a_planted_error_fails_the_check(old, new, says):
    source = sc.kernel_source(np.int32, np.int32, np.int32)
    assert old in source, "the planted change no longer applies: update the test"
    with pytest.raises(AssertionError, match=re.escape(says)):
        check_module(source.replace(old, new, 1), "planted")


def test_finds_nvrtc_of_the_wheel_where_installed():
    """The wheel the ``test`` extra names is found where it is installed (else the
    compile checks would skip silently on the machines meant to run them)."""
    try:
        import nvidia
    except ImportError:
        pytest.skip("no nvidia wheels installed")
    libs = [p for root in nvidia.__path__ for p in Path(root).glob("cu1*/lib/libnvrtc.so*")]
    if not libs:
        pytest.skip("no nvrtc wheel installed")
    assert NVRTC is not None
