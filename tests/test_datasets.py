"""spbfs.datasets: the bundled graphs are the published files, and load as those files say.

The expected facts (sizes, direction, sha256 prefixes) are copied from the README of the
project's data folder, not from the catalogue under test; the graphs are checked against
scipy's Matrix Market reader and numpy's text reader. The byte-for-byte comparison reads
the original files from that folder (``$SPBFS_DATA`` or ``../shared/data``) where the
machine has it; elsewhere the bundled copies stand in for them once their bytes hash to
the published sha256, and the readers' results are compared all the same.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import os
import tarfile
import urllib.error
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from conftest import originals_dir
from scipy.sparse import csgraph

import spbfs
from spbfs import datasets
from spbfs.datasets import _fetch
from spbfs.io import read_graph

# name -> (file, vertices, edges, directed, weighted, sha256 prefix): the data README.
FACTS = {
    "karate": ("karate.mtx", 34, 78, False, False, "074a23e7"),
    "west0067": ("west0067.mtx", 67, 294, True, True, "26e84856"),
    "luxembourg_osm": ("luxembourg_osm.mtx", 114_599, 119_666, False, False, "3920e27d"),
    "p2p_gnutella31": ("p2p-Gnutella31.txt", 62_586, 147_892, True, False, "cb9a5461"),
    "musae_git": ("musae_git_edges.csv", 37_700, 289_003, False, False, "34c57382"),
}
NAMES = list(FACTS)


@pytest.fixture(scope="module")
def graphs() -> dict[str, spbfs.Graph]:
    """Each bundled graph once, through its own loader function."""
    return {name: getattr(datasets, name)() for name in NAMES}


def _reference(name: str, text: bytes) -> sp.csr_array:
    """Adjacency ``A[u, v] = 1`` for each arc u -> v (both ways when undirected), no loops,
    read without spbfs: scipy for Matrix Market, numpy for the edge list and the CSV."""
    file, n, _, directed, _, _ = FACTS[name]
    if file.endswith(".mtx"):  # scipy mirrors a symmetric file's stored triangle itself
        a = sp.coo_array(scipy.io.mmread(io.BytesIO(text)))
    else:
        delimiter = "," if file.endswith(".csv") else None
        pairs = np.loadtxt(io.StringIO(text.decode()), dtype=np.int64, skiprows=1,
                           delimiter=delimiter, ndmin=2)
        a = sp.coo_array((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
        if not directed:
            a = a + a.T
    a = sp.csr_array(a)
    a.setdiag(0)
    a.eliminate_zeros()
    a.data[:] = 1
    return a


# --------------------------------------------------------------------------- catalogue


def test_names() -> None:
    assert datasets.names() == tuple(NAMES)
    everything = datasets.names(remote=True)
    assert everything[:5] == tuple(NAMES)
    assert {"europe_osm", "com_orkut"} <= set(everything[5:])


@pytest.mark.parametrize("name", NAMES)
def test_info_matches_the_data_readme(name: str) -> None:
    file, n, m, directed, weighted, sha = FACTS[name]
    d = datasets.info(name)
    assert (d.filename, d.n, d.num_edges, d.directed, d.weighted) == (file, n, m, directed,
                                                                      weighted)
    assert d.sha256.startswith(sha) and len(d.sha256) == 64
    assert d.bundled and d.source.startswith("https://") and d.licence


def test_unknown_names_are_refused() -> None:
    with pytest.raises(ValueError, match=r"name: no data set 'karat'.*karate.*europe_osm"):
        datasets.info("karat")
    with pytest.raises(ValueError, match="no data set 'west67'"):
        datasets.load("west67")
    with pytest.raises(TypeError, match="name must be a data set name"):
        datasets.path(3)  # type: ignore[arg-type]


def test_the_readme_lists_every_set() -> None:
    readme = (Path(datasets.__file__).parent / "README.md").read_text(encoding="utf-8")
    for name in datasets.names(remote=True):
        d = datasets.info(name)
        assert f"`{name}`" in readme and f"{d.n:,}" in readme and f"{d.num_edges:,}" in readme
        if d.bundled:
            assert d.sha256 in readme


# --------------------------------------------------------------------------- bundled files


@pytest.mark.parametrize("name", NAMES)
def test_bundled_file_is_the_original(name: str) -> None:
    """The gzip'ed file decompresses to bytes with the published sha256."""
    p = datasets.path(name)
    assert p.name == FACTS[name][0] + ".gz" and p.is_file()
    digest = hashlib.sha256(gzip.decompress(p.read_bytes())).hexdigest()
    assert digest.startswith(FACTS[name][5])
    assert digest == datasets.info(name).sha256


def test_bundled_files_stay_small() -> None:
    """The repository's budget for bundled data: under 3 MB for all five."""
    assert sum(datasets.path(name).stat().st_size for name in NAMES) < 3_000_000


@pytest.mark.parametrize("name", NAMES)
def test_loader_counts_and_direction(name: str, graphs) -> None:
    _, n, m, directed, weighted, _ = FACTS[name]
    g = graphs[name]
    assert isinstance(g, spbfs.Graph)
    assert g.n == n and g.directed is directed
    assert g.edges.num_edges == m and g.edges.directed is directed
    assert (g.edges.weights is not None) is weighted
    el = datasets.edges(name)
    assert el.n == n and el.num_edges == m and el.directed is directed
    assert np.array_equal(el.src, g.edges.src) and np.array_equal(el.dst, g.edges.dst)


@pytest.mark.parametrize("name", NAMES)
def test_loader_graph_matches_independent_reader(name: str, graphs) -> None:
    """The graph's arcs are the file's, as scipy / numpy read it."""
    ref = _reference(name, gzip.decompress(datasets.path(name).read_bytes()))
    g = graphs[name]
    b = sp.csr_array(g.out_block.to_scipy())  # B[v, u] for an arc u -> v
    mine = sp.csr_array(b.T)
    mine.data[:] = 1
    assert mine.shape == ref.shape
    assert (mine != ref).nnz == 0
    assert g.num_edges == (ref.nnz if g.directed else ref.nnz // 2)


def test_west0067_keeps_its_values(graphs) -> None:
    text = gzip.decompress(datasets.path("west0067").read_bytes())
    ref = scipy.io.mmread(io.BytesIO(text)).toarray()
    el = graphs["west0067"].edges
    mine = sp.coo_array((el.weights, (el.src, el.dst)), shape=ref.shape).toarray()
    np.testing.assert_array_equal(mine, ref)
    assert el.weights.dtype == np.float64


def test_musae_is_skewed(graphs) -> None:
    el = graphs["musae_git"].edges
    assert el.meta["columns"] == ["id_1", "id_2"]
    deg = np.bincount(el.src, minlength=el.n) + np.bincount(el.dst, minlength=el.n)
    assert deg.max() == 9458


@pytest.mark.parametrize("name", ["luxembourg_osm", "p2p_gnutella31"])
def test_bfs_levels_match_csgraph(name: str, graphs) -> None:
    g = graphs[name]
    ref = _reference(name, gzip.decompress(datasets.path(name).read_bytes()))
    dist = csgraph.shortest_path(ref, directed=True, unweighted=True, indices=0)
    want = np.where(np.isinf(dist), -1, dist).astype(np.int64)
    assert np.array_equal(spbfs.bfs(g, 0).levels, want)
    if name == "luxembourg_osm":
        assert want.max() > 1000  # the high-diameter graph it is bundled for


def test_config_is_passed_through(graphs) -> None:
    cfg = spbfs.Config(format="dcsc", backend="numpy")
    g = datasets.karate(config=cfg)
    assert g.config == cfg and g.out_block.format == "dcsc"
    assert np.array_equal(spbfs.bfs(g, 0).levels, spbfs.bfs(graphs["karate"], 0).levels)
    p = datasets.p2p_gnutella31(config=spbfs.Config(format="dcsc"))
    assert p.directed and p.config.format == "dcsc"


def test_path_is_readable_by_graph_load() -> None:
    """``path`` is for code that wants a file: Graph.load reads the gzip'ed copy."""
    g = spbfs.Graph.load(str(datasets.path("west0067")))
    h = datasets.west0067()
    assert g.directed and (g.out_block.to_scipy() != h.out_block.to_scipy()).nnz == 0


# --------------------------------------------------------------------------- originals


@pytest.fixture(scope="module")
def originals(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the original files: the data folder where this machine has one, else
    the bundled copies decompressed, which are the originals' bytes once they hash to the
    published sha256 (the README's prefix and the catalogue's whole digest)."""
    d = originals_dir()
    if d is not None:
        return d
    d = tmp_path_factory.mktemp("originals")
    for name in NAMES:
        data = gzip.decompress(datasets.path(name).read_bytes())
        digest = hashlib.sha256(data).hexdigest()
        assert digest.startswith(FACTS[name][5]) and digest == datasets.info(name).sha256, name
        (d / FACTS[name][0]).write_bytes(data)
    return d


@pytest.mark.parametrize("name", NAMES)
def test_bundled_equals_original_file(name: str, originals: Path) -> None:
    """Same bytes, and the same edge list and graph as the reader gives from the original."""
    file, _, _, directed, _, _ = FACTS[name]
    original = originals / file
    assert gzip.decompress(datasets.path(name).read_bytes()) == original.read_bytes()
    mine = datasets.edges(name)
    theirs = read_graph(original, directed=None if file.endswith(".mtx") else directed)
    assert (mine.n, mine.directed) == (theirs.n, theirs.directed)
    assert np.array_equal(mine.src, theirs.src) and np.array_equal(mine.dst, theirs.dst)
    if theirs.weights is None:
        assert mine.weights is None
    else:
        assert np.array_equal(mine.weights, theirs.weights)
    g = getattr(datasets, name)()
    ref = spbfs.Graph.load(str(original), directed=directed)
    assert g.directed == ref.directed
    assert (g.out_block.to_scipy() != ref.out_block.to_scipy()).nnz == 0
    assert (g.in_block.to_scipy() != ref.in_block.to_scipy()).nnz == 0


# --------------------------------------------------------------------------- fetched on request


def _offline(*args, **kwargs):
    raise urllib.error.URLError(OSError(-3, "Temporary failure in name resolution"))


def test_remote_set_is_not_downloaded_implicitly(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"not downloaded.*fetch\('europe_osm'\)"):
        datasets.load("europe_osm", cache_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_fetch_without_network_says_what_to_download(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(_fetch.request, "urlopen", _offline)
    d = datasets.info("europe_osm")
    with pytest.raises(datasets.DownloadError) as err:
        datasets.fetch("europe_osm", cache_dir=tmp_path)
    msg = str(err.value)
    assert "could not download data set 'europe_osm'" in msg
    assert "Temporary failure in name resolution" in msg
    assert d.url in msg and d.member in msg and str(tmp_path / d.filename) in msg
    assert list(tmp_path.iterdir()) == []  # no partial file left behind


def test_fetch_of_a_bundled_set_downloads_nothing(monkeypatch) -> None:
    monkeypatch.setattr(_fetch.request, "urlopen", _offline)
    assert datasets.fetch("karate") == datasets.path("karate")


def test_fetch_checks_its_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        datasets.fetch("road_usa", cache_dir=tmp_path, timeout=0)
    with pytest.raises(ValueError, match="no data set 'road'"):
        datasets.fetch("road", cache_dir=tmp_path)


def _archive(member: str, text: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = text.encode()
        ti = tarfile.TarInfo(member)
        ti.size = len(data)
        tar.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


class _Served:
    """Stands in for urlopen: serves ``payload`` and counts the requests."""

    def __init__(self, payload: bytes) -> None:
        self.payload, self.calls = payload, 0

    def __call__(self, url, timeout=None):
        self.calls += 1
        return io.BytesIO(self.payload)


TINY = datasets.DatasetInfo(
    name="tiny", filename="tiny.mtx", title="a triangle", n=3, num_edges=3, directed=False,
    weighted=False, source="https://example.org/tiny", licence="CC0-1.0", bundled=False,
    url="https://example.org/tiny.tar.gz", member="tiny/tiny.mtx")
TINY_MTX = "%%MatrixMarket matrix coordinate pattern symmetric\n% c\n3 3 3\n2 1\n3 1\n3 2\n"


def test_fetch_extracts_checks_and_keeps_the_file(tmp_path: Path, monkeypatch) -> None:
    served = _Served(_archive(TINY.member, TINY_MTX))
    monkeypatch.setattr(_fetch.request, "urlopen", served)
    p = _fetch.fetch_remote(TINY, tmp_path, 5.0, False)
    assert p == tmp_path / "tiny.mtx" and p.read_text() == TINY_MTX
    assert sorted(x.name for x in tmp_path.iterdir()) == ["tiny.mtx"]
    assert _fetch.fetch_remote(TINY, tmp_path, 5.0, False) == p and served.calls == 1
    _fetch.fetch_remote(TINY, tmp_path, 5.0, True)
    assert served.calls == 2
    g = spbfs.Graph.load(str(p))
    assert g.n == 3 and g.num_edges == 3


@pytest.mark.parametrize(("payload", "match"), [
    (_archive(TINY.member, TINY_MTX.replace("3 3 3", "4 4 3")), "size line .*expected '3 3 3'"),
    (_archive("other/tiny.mtx", TINY_MTX), "not a gzip'ed tar archive holding tiny/tiny.mtx"),
    (b"<html>Service Unavailable</html>", "not a gzip'ed tar archive"),
])
def test_fetch_refuses_a_wrong_download(tmp_path: Path, monkeypatch, payload, match) -> None:
    monkeypatch.setattr(_fetch.request, "urlopen", _Served(payload))
    with pytest.raises(datasets.DownloadError, match=match) as err:
        _fetch.fetch_remote(TINY, tmp_path, 5.0, False)
    assert TINY.url in str(err.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.name != "posix" or os.uname().sysname == "Darwin",
                    reason="the XDG cache folder is the Linux/Unix convention")
def test_default_cache_dir_follows_xdg(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert datasets.default_cache_dir() == tmp_path / "spbfs" / "datasets"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert datasets.default_cache_dir() == Path.home() / ".cache" / "spbfs" / "datasets"


def _tiny(tmp_path: Path, sha256: str) -> datasets.DatasetInfo:
    """TINY served from a local archive by a file:// URL (urlopen's own opener)."""
    archive = tmp_path / "served" / "tiny.tar.gz"
    archive.parent.mkdir()
    archive.write_bytes(_archive(TINY.member, TINY_MTX))
    return dataclasses.replace(TINY, url=archive.as_uri(), sha256=sha256)


def test_fetch_checks_the_sha256_of_the_extracted_file(tmp_path: Path) -> None:
    right = hashlib.sha256(TINY_MTX.encode()).hexdigest()
    cache = tmp_path / "cache"
    p = _fetch.fetch_remote(_tiny(tmp_path, right), cache, 5.0, False)
    assert p.read_text() == TINY_MTX and sorted(x.name for x in cache.iterdir()) == ["tiny.mtx"]


def test_fetch_refuses_a_file_whose_sha256_differs(tmp_path: Path) -> None:
    actual = hashlib.sha256(TINY_MTX.encode()).hexdigest()
    expected = hashlib.sha256(b"another file").hexdigest()
    cache = tmp_path / "cache"
    with pytest.raises(datasets.DownloadError) as err:
        _fetch.fetch_remote(_tiny(tmp_path, expected), cache, 5.0, False)
    msg = str(err.value)
    assert "data set 'tiny'" in msg and f"sha256 {actual}, expected {expected}" in msg
    assert list(cache.iterdir()) == []  # neither the archive nor the extracted part is left


def test_every_catalogue_hash_is_a_sha256_and_the_remote_ones_are_listed() -> None:
    """Bundled sets all have one; remote sets lacking one are exactly those known to."""
    everything = [datasets.info(n) for n in datasets.names(remote=True)]
    for d in everything:
        assert d.sha256 == "" or (len(d.sha256) == 64 and set(d.sha256) <= set("0123456789abcdef"))
    assert all(d.sha256 for d in everything if d.bundled)
    # No hash could be computed for these (no download possible where the catalogue was
    # written); fetch still checks their size line. Adding a hash must shrink this set.
    assert {d.name for d in everything if not d.sha256} == {"europe_osm", "road_usa", "com_orkut"}
