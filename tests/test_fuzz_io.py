"""Property-based fuzzing of the file readers: round trips and corrupted files.

Random graphs are written in every format spbfs reads (Matrix Market, edge list with
and without a count line, CSV with and without a header, spbfs and ``scipy.sparse``
``.npz``, and gzip'ed text) and must read back equal: the same vertex count where the
format carries one, the same edges in the same order, the same direction and weights
where the format carries them. The same files are then damaged (truncated, bytes
flipped, junk or binary garbage inserted, lines dropped or repeated, ids made huge,
negative or ``nan``): each must end in a ValueError or OSError that names the file on
one line, or in a graph that is valid, which is then built and searched.

Every file is read, built and searched in a child process, many per child: a crash in
compiled code (a segfault, an abort) must fail the test, not end the test run. The
counts of cases, formats and corruptions are printed at the end of each test
(``pytest -s``).
"""

from __future__ import annotations

import collections
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

#: The formats written, as (name, file suffix).
FORMATS = {
    "mtx": ".mtx",
    "mtx.gz": ".mtx.gz",
    "edgelist": ".txt",
    "edgelist-nocount": ".txt",
    "edgelist.gz": ".txt.gz",
    "csv": ".csv",
    "csv-noheader": ".csv",
    "npz": ".npz",
    "npz-compressed": ".npz",
    "scipy-coo": ".npz",
    "scipy-csr": ".npz",
}
CORRUPTIONS = ("truncate", "flip", "junk-line", "garbage", "drop-line", "dup-line",
               "huge", "negative", "nan")
#: Ids written in place of a number by "huge": none fits the checks' limits
#: (2**24 vertices at most without n=, int64).
HUGE = (b"99999999999999999999", b"9223372036854775808", b"1099511627777", b"2147483648",
        b"16777217000")
CHILD_TIMEOUT = 240  # seconds; a hang fails the test as a crash does

# No shrinking: each example costs a child process, and a failure already names
# its format, corruption and outcome.
SETTINGS = settings(max_examples=3, deadline=None, phases=(Phase.explicit, Phase.generate),
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow, HealthCheck.data_too_large])


# --------------------------------------------------------------------------- generation


@st.composite
def graphs(draw: st.DrawFn) -> dict[str, Any]:
    """A random graph: n, edges (at least one), direction, weights none/int/float."""
    m = draw(st.integers(1, 25))
    hi = draw(st.integers(1, 40))
    src = draw(st.lists(st.integers(0, hi - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, hi - 1), min_size=m, max_size=m))
    n = max(max(src), max(dst)) + 1 + draw(st.integers(0, 3))
    kind = draw(st.sampled_from(["none", "int", "float"]))
    weights = None
    if kind == "int":
        weights = draw(st.lists(st.integers(-(2**40), 2**40), min_size=m, max_size=m))
    elif kind == "float":
        weights = draw(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64),
                                min_size=m, max_size=m))
    return {"n": n, "src": src, "dst": dst, "directed": draw(st.booleans()),
            "weights": weights, "wkind": kind}


def _edgelist(g: dict[str, Any]):
    from spbfs.edges import EdgeList

    w = None
    if g["weights"] is not None:
        w = np.array(g["weights"], np.int64 if g["wkind"] == "int" else np.float64)
    return EdgeList(np.array(g["src"], np.int64), np.array(g["dst"], np.int64), g["n"],
                    directed=g["directed"], weights=w)


def write_graph(g: dict[str, Any], fmt: str, path: Path) -> dict[str, Any]:
    """Write ``g`` as ``fmt``; return what reading it must give (JSON-able)."""
    from spbfs.io import save_npz, write_edgelist, write_mtx

    el = _edgelist(g)
    src, dst, w = list(g["src"]), list(g["dst"]), g["weights"]
    expect: dict[str, Any] = {"n": g["n"], "src": src, "dst": dst, "directed": None,
                              "weights": w, "symmetric": False}
    if fmt.startswith("mtx"):
        write_mtx(path, el)
        expect["directed"] = g["directed"]
        expect["symmetric"] = not g["directed"]  # stored in the lower triangle
    elif fmt.startswith("edgelist"):
        write_edgelist(path, el, count_line=fmt != "edgelist-nocount")
        if fmt == "edgelist-nocount":
            expect["n"] = max(max(src), max(dst)) + 1
    elif fmt.startswith("csv"):
        lines = [] if fmt == "csv-noheader" else ["src,dst" + (",weight" if w else "")]
        for k in range(len(src)):
            lines.append(f"{src[k]},{dst[k]}" + (f",{w[k]!r}" if w else ""))
        path.write_text("\n".join(lines) + "\n")
        expect["n"] = max(max(src), max(dst)) + 1
    elif fmt in ("npz", "npz-compressed"):
        save_npz(path, el, compressed=fmt == "npz-compressed")
        expect["directed"] = g["directed"]
    else:
        data = np.array(w if w is not None else [1] * len(src),
                        np.int64 if g["wkind"] != "float" else np.float64)
        a = sp.coo_array((data, (np.array(src), np.array(dst))), shape=(g["n"], g["n"]))
        if fmt == "scipy-csr":
            a = a.tocsr()
            a.sort_indices()
            rows = np.repeat(np.arange(g["n"]), np.diff(a.indptr))
            expect["src"], expect["dst"] = rows.tolist(), a.indices.tolist()
            data = a.data
        sp.save_npz(path, a, compressed=False)
        expect["weights"] = data.tolist()
    return expect


def _tokens(text: bytes) -> list[tuple[int, int]]:
    """Byte spans of the digit runs of ``text``."""
    spans, k = [], 0
    while k < len(text):
        if 48 <= text[k] <= 57:
            e = k
            while e < len(text) and 48 <= text[e] <= 57:
                e += 1
            spans.append((k, e))
            k = e
        else:
            k += 1
    return spans


def corrupt(data: bytes, how: str, rnd: np.random.Generator) -> bytes:
    """``data`` damaged as ``how`` says (one of :data:`CORRUPTIONS`)."""
    if not data:
        return b"\x00"
    lines = data.split(b"\n")
    if how == "truncate":
        return data[: int(rnd.integers(0, len(data)))]
    if how == "flip":
        out = bytearray(data)
        for _ in range(int(rnd.integers(1, 4))):
            out[int(rnd.integers(0, len(out)))] ^= int(rnd.integers(1, 256))
        return bytes(out)
    if how == "garbage":
        at = int(rnd.integers(0, len(data) + 1))
        return data[:at] + rnd.bytes(int(rnd.integers(1, 64))) + data[at:]
    if how == "junk-line":
        junk = bytes(rnd.choice(list(b"abc xyz,.;:-+eE#%0123456789\t"), int(rnd.integers(1, 20))))
        lines.insert(int(rnd.integers(0, len(lines) + 1)), junk)
        return b"\n".join(lines)
    if how in ("drop-line", "dup-line"):
        k = int(rnd.integers(0, len(lines)))
        if how == "drop-line":
            del lines[k]
        else:
            lines.insert(k, lines[k])
        return b"\n".join(lines)
    spans = _tokens(data)
    if not spans:
        return data + b"\n-1 nan\n"
    s, e = spans[int(rnd.integers(0, len(spans)))]
    new = {"huge": HUGE[int(rnd.integers(0, len(HUGE)))], "negative": b"-" + data[s:e],
           "nan": b"nan"}[how]
    return data[:s] + new + data[e:]


def corrupt_npz(path: Path, how: str, rnd: np.random.Generator) -> bytes:
    """An ``.npz`` archive damaged as ``how`` says: raw bytes, or its members' values."""
    raw = path.read_bytes()
    if how in ("truncate", "flip", "garbage"):
        return corrupt(raw, how, rnd)
    with np.load(io.BytesIO(raw)) as arch:
        arrays = {k: arch[k] for k in arch.files}
    names = sorted(arrays)
    name = names[int(rnd.integers(0, len(names)))]
    a = arrays[name]
    if how == "junk-line":
        arrays["junk"] = rnd.bytes(8)
    elif how in ("drop-line", "dup-line"):
        if how == "drop-line":
            del arrays[name]
        else:
            arrays[name] = np.concatenate([a.ravel(), a.ravel()]) if a.size else a
    elif how == "huge":
        b = a.astype(np.int64) if a.dtype.kind in "biu" else a.copy()
        b.ravel()[int(rnd.integers(0, max(b.size, 1)))] = 2**62 if b.size else 0
        arrays[name] = b
    elif how == "negative":
        b = a.astype(np.int64) if a.dtype.kind in "biu" else a.copy()
        if b.size:
            b.ravel()[int(rnd.integers(0, b.size))] = -1
        arrays[name] = b
    else:  # nan: the member becomes floats with a nan
        b = a.astype(np.float64) if a.dtype.kind in "biuf" else np.array(np.nan)
        if b.size:
            b.ravel()[int(rnd.integers(0, b.size))] = np.nan
        arrays[name] = b
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def materialize(batch, folder: Path) -> list[dict[str, Any]]:
    """Write every case of ``batch`` into ``folder``: the child's work list."""
    work = []
    for k, (g, fmt, how, seed) in enumerate(batch):
        path = folder / f"case{k}{FORMATS[fmt]}"
        expect = write_graph(g, fmt, path)
        if how != "none":
            rnd = np.random.default_rng(seed)
            if fmt.startswith(("npz", "scipy")):
                damaged = corrupt_npz(path, how, rnd)
            elif fmt.endswith(".gz") and rnd.random() < 0.5:
                damaged = corrupt(path.read_bytes(), how, rnd)  # the compressed bytes
            else:
                text = gzip.decompress(path.read_bytes()) if fmt.endswith(".gz") else None
                damaged = corrupt(text if text is not None else path.read_bytes(), how, rnd)
                if text is not None:
                    damaged = gzip.compress(damaged)
            path.write_bytes(damaged)
        work.append({"path": str(path), "fmt": fmt, "how": how, "expect": expect})
    return work


# --------------------------------------------------------------------------- the child


def _same(el, expect: dict[str, Any]) -> str | None:
    """What differs between the EdgeList read and what was written, or None."""
    src, dst = el.src.tolist(), el.dst.tolist()
    want_src, want_dst = expect["src"], expect["dst"]
    if expect["symmetric"]:
        pairs = list(zip(src, dst, strict=True))
        src, dst = [max(p) for p in pairs], [min(p) for p in pairs]
        want_src = [max(p) for p in zip(expect["src"], expect["dst"], strict=True)]
        want_dst = [min(p) for p in zip(expect["src"], expect["dst"], strict=True)]
    if el.n != expect["n"]:
        return f"n {el.n} != {expect['n']}"
    if (src, dst) != (want_src, want_dst):
        return f"edges {src}, {dst} != {want_src}, {want_dst}"
    if el.directed != expect["directed"]:
        return f"directed {el.directed} != {expect['directed']}"
    w = expect["weights"]
    if (w is None) != (el.weights is None):
        return f"weights {el.weights} != {w}"
    if w is not None:
        got = np.asarray(el.weights)
        if got.dtype.kind == "f" or any(isinstance(x, float) for x in w):
            if not np.array_equal(got.astype(np.float64), np.array(w, np.float64),
                                  equal_nan=True):
                return f"weights {got.tolist()} != {w}"
        elif got.tolist() != w:
            return f"weights {got.tolist()} != {w}"
    return None


def _check(case: dict[str, Any]) -> dict[str, Any]:
    """Read, check, build and search one file; what happened, as JSON."""
    import spbfs
    from spbfs.io import read_graph

    path = case["path"]
    try:
        el = read_graph(path)
    except (ValueError, OSError) as exc:
        msg = str(exc)
        clear = path in msg and "\n" not in msg and "\x1b" not in msg
        return {"outcome": "clear-error" if clear else "unclear-error",
                "error": f"{type(exc).__name__}: {msg[:300]}"}
    except Exception as exc:  # any other type is what is being tested for
        return {"outcome": "unclear-error", "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    differs = _same(el, case["expect"])
    if differs is None:
        outcome = "equal"
    elif case["how"] == "none":
        # An edge list without a count line whose first edge reads as one: the
        # documented reading of that file, reported in meta.
        ambiguous = case["fmt"] == "edgelist-nocount" and "count_line" in el.meta
        outcome = "count-line" if ambiguous else "differs"
    else:
        outcome = "valid-other"
    src, dst = el.src, el.dst
    if src.dtype != np.int64 or dst.shape != src.shape or (
            src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= el.n)):
        return {"outcome": "invalid", "error": f"ids outside [0, {el.n})"}
    if el.weights is not None and el.weights.shape != src.shape:
        return {"outcome": "invalid", "error": "weights do not match the edges"}
    try:
        if el.n:
            g = spbfs.Graph.from_edgelist(el)
            r = spbfs.bfs(g, 0)
            assert r.levels[0] == 0
    except Exception as exc:  # a valid edge list must build and search
        return {"outcome": "build-error", "error": f"{type(exc).__name__}: {exc}"[:300]}
    return {"outcome": outcome, "error": differs}


def child(work_file: str) -> None:
    """Check every case of ``work_file``, one JSON line each, flushed as it goes."""
    work = json.loads(Path(work_file).read_text())
    for k, case in enumerate(work):
        print(json.dumps({"k": k, **_check(case)}), flush=True)


def run_child(work: list[dict[str, Any]], folder: Path) -> list[dict[str, Any]]:
    """Run :func:`child` on ``work`` in a fresh interpreter; its results, or a failure."""
    work_file = folder / "work.json"
    work_file.write_text(json.dumps(work))
    try:
        proc = subprocess.run([sys.executable, __file__, str(work_file)], capture_output=True,
                              text=True, timeout=CHILD_TIMEOUT, env={**os.environ})
        out, rc, err = proc.stdout, proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        rc, err = "timeout", ""
    results = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    if rc != 0 or len(results) != len(work):
        bad = work[len(results)] if len(results) < len(work) else None
        pytest.fail(f"the reading child ended with {rc} after {len(results)} of {len(work)} "
                    f"cases; next case {bad and (bad['fmt'], bad['how'])}; "
                    f"stderr: {err[-2000:]}")
    return results


# --------------------------------------------------------------------------- the tests


@pytest.fixture
def tally():
    """Counts over all examples of one test, printed when it ends."""
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    yield counts
    print("\nfuzz counts:", json.dumps({k: dict(sorted(v.items())) for k, v in counts.items()}))


def _run(batch, tally) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        work = materialize(batch, folder)
        results = run_child(work, folder)
    failures = []
    for case, res in zip(work, results, strict=True):
        tally["cases"]["total"] += 1
        tally["formats"][case["fmt"]] += 1
        tally["corruptions"][case["how"]] += 1
        tally["outcomes"][res["outcome"]] += 1
        good = ({"equal", "count-line"} if case["how"] == "none"
                else {"equal", "valid-other", "clear-error"})
        if res["outcome"] not in good:
            failures.append((case["fmt"], case["how"], res))
    assert not failures, "\n".join(f"{fmt}, {how}: {res}" for fmt, how, res in failures)


@SETTINGS
@given(graphs=st.lists(graphs(), min_size=len(FORMATS), max_size=len(FORMATS)),
       seed=st.integers(0, 2**32 - 1))
def test_files_read_back_or_fail_clearly(graphs, seed, tally) -> None:
    """Every format, intact and with every corruption: one child process per example.

    A graph per format, written intact (it must read back equal) and once per
    corruption (a clear error or a valid graph), so each example covers every
    pair of format and corruption.
    """
    batch = [(g, fmt, how, seed + k)
             for g, fmt in zip(graphs, FORMATS, strict=True)
             for k, how in enumerate(("none", *CORRUPTIONS))]
    _run(batch, tally)


if __name__ == "__main__":
    child(sys.argv[1])
