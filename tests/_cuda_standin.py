"""``cupy.RawModule`` for the strict cupy stand-in: launches checked, kernels emulated in numpy.

:class:`RawModule` reads the kernels' C signatures from the source it is given
(typedefs and ``#define`` constants resolved) and refuses a launch that a GPU
would run wrongly without a word: a wrong number of arguments, a host array,
a pointer argument whose element size or kind differs from the C type, a
non-contiguous view, a scalar that is not the exact numpy type of its C
parameter (cupy passes a Python ``int`` as 64 bits whatever the parameter),
or a block of another size than the kernel's ``__launch_bounds__``.

The kernels of :mod:`spbfs.kernels.bfs_cuda` are then emulated in numpy, by
what they compute rather than thread by thread: ``const`` pointers arrive
read-only, every computed index is checked against its array (numpy would
wrap a negative one silently), the kernels that are not grid-stride loops
cover only the threads the grid launches, and a frontier larger than a
block's shared arrays is refused. Vertices found by a level are listed in
the order their first edge was examined; min-parent claims make the parents
independent of it, as on the device.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["RawModule"]

_CTYPES = {"int": np.int32, "unsigned": np.uint32, "long long": np.int64,
           "unsigned long long": np.uint64, "double": np.float64}
_KERNEL = re.compile(r'extern "C" __global__ void __launch_bounds__\((\w+)\)\s*(\w+)\(([^)]*)\)')


class _Param:
    """One C parameter: its name, numpy type, whether a pointer and whether ``const``."""

    def __init__(self, text: str, types: dict[str, Any]) -> None:
        words = text.replace("__restrict__", " ").replace("*", " * ").split()
        self.const = "const" in words
        self.pointer = "*" in words
        self.name = words[-1]
        ctype = " ".join(w for w in words[:-1] if w not in ("const", "*"))
        if ctype not in types:
            raise TypeError(f"stand-in RawModule: C type {ctype!r} of {self.name} is unknown")
        self.dtype = np.dtype(types[ctype])


def _constants(code: str) -> dict[str, int]:
    """The integer ``#define`` constants of ``code`` (each resolved to a number)."""
    raw = dict(re.findall(r"^#define (\w+) (.+)$", code, flags=re.M))
    out: dict[str, int] = {}
    for _ in range(len(raw)):
        for name, expr in raw.items():
            text = re.sub(r"[A-Za-z_]\w*", lambda m: str(out.get(m.group(), m.group())), expr)
            if re.fullmatch(r"[\d\s()*+-]+", text):
                out[name] = int(eval(text))  # digits and arithmetic only (checked above)
    return out


class RawModule:
    """cupy's ``RawModule(code=..., options=...)``: signatures parsed, kernels emulated.

    The stand-in subclasses it with its device array type as ``device_array``.
    """

    device_array: type = type(None)

    def __init__(self, code: str, options: tuple[str, ...] = (), **kwargs: Any) -> None:
        types = dict(_CTYPES)
        for ctype, alias in re.findall(r"^typedef (.+?) (\w+);$", code, flags=re.M):
            types[alias] = types[ctype]
        self.constants = _constants(code)
        self.kernels = {
            name: (self.constants[bound], [_Param(p, types) for p in params.split(",")])
            for bound, name, params in _KERNEL.findall(code)
        }
        if len(self.kernels) != code.count('extern "C"'):
            raise ValueError("stand-in RawModule: a kernel without __launch_bounds__ or of an "
                             "unexpected shape")
        self.options = tuple(options)

    def get_function(self, name: str) -> _Kernel:
        if name not in self.kernels:
            raise KeyError(f"stand-in RawModule: no kernel {name!r} in the source")
        if name not in _EMULATED:
            raise NotImplementedError(f"stand-in RawModule: kernel {name!r} has no emulation")
        bound, params = self.kernels[name]
        return _Kernel(name, bound, params, self.constants, self.device_array)


class _Kernel:
    """A launchable kernel: ``kernel(grid, block, args)``."""

    def __init__(self, name: str, bound: int, params: list[_Param],
                 constants: dict[str, int], device_array: type) -> None:
        self.name, self.bound, self.params, self.constants = name, bound, params, constants
        self.device_array = device_array

    def __call__(self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...],
                 shared_mem: int = 0, stream: Any = None) -> None:
        where = f"stand-in launch of {self.name}"
        if tuple(block) != (self.bound,):
            raise ValueError(f"{where}: block {tuple(block)} is not its launch bound "
                             f"({self.bound},)")
        if len(grid) != 1 or not isinstance(grid[0], int) or grid[0] < 1:
            raise ValueError(f"{where}: grid {grid} is not one positive int")
        if len(args) != len(self.params):
            raise TypeError(f"{where}: {len(args)} arguments for {len(self.params)} parameters")
        named: dict[str, Any] = {}
        for p, a in zip(self.params, args, strict=True):
            if p.pointer:
                if not isinstance(a, self.device_array):
                    raise TypeError(f"{where}: {p.name} is a {type(a).__name__}, not a device "
                                    f"array")
                host = a._a
                if host.dtype.itemsize != p.dtype.itemsize or host.dtype.kind not in (
                        "iu" if p.dtype.kind in "iu" else p.dtype.kind):
                    raise TypeError(f"{where}: {p.name} is {host.dtype}, the kernel reads "
                                    f"{p.dtype}")
                if not host.flags.c_contiguous:
                    raise ValueError(f"{where}: {p.name} is not contiguous (the kernel gets "
                                     f"its first element's address only)")
                view = host.view(p.dtype)
                if p.const:
                    view.flags.writeable = False
                named[p.name] = view
            else:
                if type(a) is not p.dtype.type:
                    raise TypeError(f"{where}: {p.name} is {type(a).__name__}, the kernel "
                                    f"takes {p.dtype.name}")
                named[p.name] = a.item()
        _EMULATED[self.name](named, grid[0] * self.bound, self.constants)


# --------------------------------------------------------------------------- emulations


def _at(a: np.ndarray, idx: Any, what: str) -> Any:
    """``idx`` after checking it lies in ``a`` (a GPU reads past an array without a word)."""
    i = np.asarray(idx)
    if i.size and (int(i.min()) < 0 or int(i.max()) >= a.shape[0]):
        bad = int(i.min()) if int(i.min()) < 0 else int(i.max())
        raise IndexError(f"stand-in kernel: {what} index {bad} outside [0, {a.shape[0]})")
    return idx


def _directed(a: dict[str, Any]) -> bool:
    """Whether ``indeg`` is another array than ``deg`` (the kernels compare the pointers)."""
    return a["indeg"].__array_interface__["data"][0] != a["deg"].__array_interface__["data"][0]


def _expand(front: np.ndarray, k: int, inc: np.ndarray, total: int, ptr: np.ndarray,
            ind: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, target) of every edge of the frontier's edge space, as the kernels find them:
    the owner by binary search of the inclusive prefix sum ``inc``."""
    e = np.arange(total, dtype=np.int64)
    owner = np.searchsorted(inc[:k], e, side="right")
    _at(front, owner, "frontier")
    u = front[owner].astype(np.int64)
    before = np.where(owner > 0, inc[np.maximum(owner - 1, 0)], 0)
    _at(ptr, u, "column pointer")
    v = ind[_at(ind, ptr[u].astype(np.int64) + (e - before), "row id")].astype(np.int64)
    return u, v


def _claim(a: dict[str, Any], u: np.ndarray, v: np.ndarray, depth: int
           ) -> np.ndarray:
    """The ``atomicMin`` claims of edges u -> v in one level; returns the vertices found."""
    parents, stamp, vis = a["parents"], a["stamp"], a["vis"]
    for arr, what in ((parents, "parents"), (stamp, "stamp")):
        _at(arr, v, what)
    _at(vis, v >> 5, "visited bitmap")
    bit = (np.uint32(1) << (v & 31).astype(np.uint32))
    seen = (vis[v >> 5] & bit) != 0
    keep = ~(seen & (stamp[v] >= 0) & (stamp[v] != depth))
    u, v = u[keep], v[keep]
    _, first = np.unique(v, return_index=True)
    found = v[np.sort(first)]
    found = found[parents[found] == np.uint64(~np.uint64(0))]
    np.minimum.at(parents, v, u.astype(np.uint64))
    stamp[found] = depth
    np.bitwise_or.at(vis, found >> 5, np.uint32(1) << (found & 31).astype(np.uint32))
    if a["want_"]:
        a["levels"][_at(a["levels"], found, "levels")] = depth
    return found


def _degree_sums(a: dict[str, Any], found: np.ndarray) -> tuple[int, int]:
    deg = a["deg"][_at(a["deg"], found, "degree")]
    isum = int(a["indeg"][_at(a["indeg"], found, "in-degree")].sum()) if _directed(a) else 0
    return int(deg.sum()), isum


def _append(a: dict[str, Any], found: np.ndarray, out: np.ndarray, fdeg: np.ndarray) -> int:
    """Write the vertices found to the next list at the slots ``ctr[0]`` hands out."""
    ctr = a["ctr"]
    pos = int(ctr[0]) - a["base"] + np.arange(found.shape[0])
    out[_at(out, pos, "next list")] = found
    fdeg[_at(fdeg, pos, "next degrees")] = a["deg"][found]
    ctr[0] += found.shape[0]
    return found.shape[0]


def _topdown(a: dict[str, Any], inc: np.ndarray, total: int) -> None:
    u, v = _expand(a["front"], a["k"], inc, total, a["ptr"], a["ind"])
    found = _claim(a, u, v, a["depth_"])
    _append(a, found, a["next"], a["fdeg"])
    dsum, isum = _degree_sums(a, found)
    a["ctr"][3] += dsum
    a["ctr"][4] += isum


def _frontier_inc(a: dict[str, Any], front: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    u = front[_at(front, np.arange(k), "frontier")].astype(np.int64)
    ptr = a["ptr"]
    _at(ptr, u + 1, "column pointer")
    inc = np.cumsum(ptr[u + 1].astype(np.int64) - ptr[u])
    return inc, int(inc[-1]) if k else 0


def _td_small(a: dict[str, Any], threads: int, c: dict[str, int]) -> None:
    if a["k"] > c["SMALL"]:
        raise IndexError(f"stand-in td_small: {a['k']} frontier vertices overflow its shared "
                         f"arrays of {c['SMALL']}")
    _topdown(a, *_frontier_inc(a, a["front"], a["k"]))


def _td_large(a: dict[str, Any], threads: int, c: dict[str, int]) -> None:
    _at(a["inc"], np.arange(a["k"]), "prefix sum")
    _topdown(a, a["inc"], a["total"])


def _td_fused(a: dict[str, Any], threads: int, c: dict[str, int]) -> None:
    k, m_u, m_in, depth = a["k0"], a["m_u0"], a["m_in0"], a["depth0"]
    m_f = nlev = reason = 0
    cur, stats, hdr, parents = a["front0"], a["stats"], a["hdr"], a["parents"]
    directed = _directed(a)
    if k > threads:
        raise IndexError(f"stand-in td_fused: {k} frontier vertices for {threads} threads")
    while k > 0:
        if 0 <= a["max_depth"] <= depth:
            break
        if a["target"] >= 0 and parents[_at(parents, a["target"], "target")] != ~np.uint64(0):
            break
        if nlev > 0 and a["beamer"] and m_f * a["alpha"] > m_in:
            reason = 1
            break
        if nlev > 0 and (k > c["SMALL"] or m_f > a["edge_cap"]):
            reason = 2
            break
        if nlev >= a["maxlev"]:
            reason = 2
            break
        depth += 1
        front = cur[_at(cur, np.arange(k), "frontier")].copy()  # read before out is written
        inc, total = _frontier_inc(a, front, k)
        u, v = _expand(front, k, inc, total, a["ptr"], a["ind"])
        found = _claim(a, u, v, depth)
        out, fdeg = a["out"], a["fdeg"]
        out[_at(out, np.arange(found.shape[0]), "next list")] = found
        fdeg[: found.shape[0]] = a["deg"][found]
        row = _at(stats, 4 * nlev + np.arange(4), "stats")
        stats[row] = (k, found.shape[0], total, 1000)
        m_f, isum = _degree_sums(a, found)
        k = found.shape[0]
        m_u -= m_f
        m_in -= isum if directed else m_f
        cur = out
        nlev += 1
    hdr[:7] = (nlev, depth, m_u, m_f, reason, k, m_in)


def _bu_step(a: dict[str, Any], threads: int, c: dict[str, int]) -> None:
    n, nwords, ptr, ind = a["n"], a["nwords"], a["ptr"], a["ind"]
    front, nxt, vis, parents = a["front"], a["next"], a["vis"], a["parents"]
    for arr, what in ((vis, "visited bitmap"), (nxt, "next bitmap")):
        _at(arr, np.arange(nwords), what)
    v = np.arange(n, dtype=np.int64)
    v = v[(vis[v >> 5] >> (v & 31).astype(np.uint32) & 1) == 0]
    _at(ptr, v + 1, "column pointer")
    lo, hi = ptr[v].astype(np.int64), ptr[v + 1].astype(np.int64)
    length = hi - lo
    edge = np.repeat(lo - np.cumsum(length) + length, length) + np.arange(int(length.sum()))
    u = ind[_at(ind, edge, "row id")].astype(np.int64)
    _at(front, u >> 5, "frontier bitmap")
    hit = (front[u >> 5] >> (u & 31).astype(np.uint32) & 1) == 1
    seg = np.repeat(np.arange(v.shape[0]), length)
    local = edge - np.repeat(lo, length)
    first = np.full(v.shape[0], np.iinfo(np.int64).max)
    np.minimum.at(first, seg[hit], local[hit])
    got = first < length
    found = v[got]
    scanned = int(np.where(got, first + 1, length).sum())
    pos = lo[got] + first[got]
    parents[_at(parents, found, "parents")] = ind[pos]
    a["stamp"][_at(a["stamp"], found, "stamp")] = a["depth_"]
    if a["want_"]:
        a["levels"][_at(a["levels"], found, "levels")] = a["depth_"]
    words = np.zeros(nwords, dtype=np.uint32)
    np.bitwise_or.at(words, found >> 5, np.uint32(1) << (found & 31).astype(np.uint32))
    nxt[:nwords] = words
    vis[:nwords] |= words
    dsum, isum = _degree_sums(a, found)
    ctr = a["ctr"]
    ctr[1] += found.shape[0]
    ctr[2] += scanned
    ctr[3] += dsum
    ctr[4] += isum


def _init_state(a: dict[str, Any], threads: int, c: dict[str, int]) -> None:
    n, nwords = min(a["n"], threads), a["nwords"]
    v = np.arange(n)
    seen = a["parents"][_at(a["parents"], v, "parents")] != -1
    a["stamp"][_at(a["stamp"], v, "stamp")] = np.where(seen, 0, -1)
    words = np.zeros(min(nwords, (threads + 31) // 32), dtype=np.uint32)
    np.bitwise_or.at(words, v[seen] >> 5, np.uint32(1) << (v[seen] & 31).astype(np.uint32))
    a["vis"][_at(a["vis"], np.arange(words.shape[0]), "visited bitmap")] = words


def _list_to_map(a: dict[str, Any], threads: int, c: dict[str, int]) -> None:
    v = a["list"][_at(a["list"], np.arange(a["k"]), "list")].astype(np.int64)
    bm = a["bm"]
    np.bitwise_or.at(bm, _at(bm, v >> 5, "bitmap"), np.uint32(1) << (v & 31).astype(np.uint32))


def _map_to_list(a: dict[str, Any], threads: int, c: dict[str, int]) -> None:
    w = np.arange(min(a["nwords"], threads))
    bm = a["bm"][_at(a["bm"], w, "bitmap")]
    bits = (bm[:, None] >> np.arange(32, dtype=np.uint32)) & 1
    found = (w[:, None] * 32 + np.arange(32))[bits == 1].astype(np.int64)
    _append(a, found, a["list"], a["fdeg"])


def _prep_list(a: dict[str, Any], threads: int, c: dict[str, int]) -> None:
    ids = a["ids"][_at(a["ids"], np.arange(a["k"]), "ids")]
    a["out"][_at(a["out"], np.arange(a["k"]), "list")] = ids
    a["hdr"][7] = int(a["deg"][_at(a["deg"], ids, "degree")].sum())


def _scan_small(a: dict[str, Any], threads: int, c: dict[str, int]) -> None:
    k = a["k"]
    a["inc"][_at(a["inc"], np.arange(k), "prefix sum")] = np.cumsum(
        a["x"][_at(a["x"], np.arange(k), "values")])


_EMULATED: dict[str, Callable[[dict[str, Any], int, dict[str, int]], None]] = {
    "td_small": _td_small, "td_large": _td_large, "td_fused": _td_fused, "bu_step": _bu_step,
    "init_state": _init_state, "list_to_map": _list_to_map, "map_to_list": _map_to_list,
    "prep_list": _prep_list, "scan_small": _scan_small,
}
