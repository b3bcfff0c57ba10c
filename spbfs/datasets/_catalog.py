"""What each data set is: its file, size, direction, source and licence.

Not public API (see :mod:`spbfs.datasets`, which exports :class:`DatasetInfo` and
:func:`info`). The counts are those of the files as published; the tests check the
bundled files against them and against the originals' sha256.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BUNDLED", "REMOTE", "DatasetInfo", "lookup"]

_SUITESPARSE_LICENCE = (
    "CC-BY-4.0 (SuiteSparse Matrix Collection: 'the matrices themselves are under the "
    "CC-BY 4.0 License'; cite Davis & Hu, ACM TOMS 38(1), 2011, and Kolodziej et al., "
    "JOSS 4(35), 2019)"
)


@dataclass(frozen=True)
class DatasetInfo:
    """One data set: what it is, how big, where it comes from and under which licence.

    Attributes
    ----------
    name : str
        The name :func:`spbfs.datasets.load` and the other functions take.
    filename : str
        The file's name as published (the bundled copy adds ``.gz``).
    title : str
        What the graph is.
    n : int
        Number of vertices.
    num_edges : int
        Edges (records) as listed in the file: an undirected edge stored once
        counts once; duplicates and self-loops, if any, count.
    directed : bool
        Whether the edges are arcs. For Matrix Market files the banner says
        so (``general``/``symmetric``); for the edge list and CSV files it is
        what the source documents, passed to the reader as ``directed=``.
    weighted : bool
        Whether the file gives edge values (kept as ``EdgeList.weights``).
    source : str
        Where the file comes from (a web page).
    licence : str
        The licence the source gives, as an SPDX identifier where there is one,
        with the attribution it asks for.
    sha256 : str
        sha256 of the uncompressed file as published: the bundled file before
        gzip, or the file a remote set's archive holds, which
        :func:`spbfs.datasets.fetch` checks before keeping a download. Empty
        when unknown (the remote sets so far: no machine that wrote this
        catalogue could download them); their size line is still checked.
    bundled : bool
        Shipped inside the package (True) or fetched on request with
        :func:`spbfs.datasets.fetch` (False).
    url : str
        Download address (remote sets): a SuiteSparse ``.tar.gz`` archive.
    member : str
        The file inside that archive.
    """

    name: str
    filename: str
    title: str
    n: int
    num_edges: int
    directed: bool
    weighted: bool
    source: str
    licence: str
    sha256: str = ""
    bundled: bool = True
    url: str = ""
    member: str = ""


_SUITESPARSE_MM = "https://suitesparse-collection-website.herokuapp.com/MM"


def _suitesparse(group: str, matrix: str, title: str, n: int, num_edges: int, *,
                 directed: bool, weighted: bool = False, cite: str = "",
                 sha256: str = "", bundled: bool = True, name: str = "") -> DatasetInfo:
    """A matrix of the SuiteSparse Matrix Collection, ``group/matrix`` there.

    Its file name, page and licence follow from where it sits in the collection, and
    so, for a set fetched on request, do the archive's address and the file inside it;
    ``cite`` is what the licence asks to cite beyond the collection itself.
    """
    return DatasetInfo(
        name=name or matrix, filename=f"{matrix}.mtx", title=title, n=n,
        num_edges=num_edges, directed=directed, weighted=weighted,
        source=f"https://sparse.tamu.edu/{group}/{matrix}",
        licence=f"{_SUITESPARSE_LICENCE}; {cite}" if cite else _SUITESPARSE_LICENCE,
        sha256=sha256, bundled=bundled,
        url="" if bundled else f"{_SUITESPARSE_MM}/{group}/{matrix}.tar.gz",
        member="" if bundled else f"{matrix}/{matrix}.mtx",
    )


BUNDLED: tuple[DatasetInfo, ...] = (
    _suitesparse(
        "Newman", "karate", "Zachary's karate club (Newman/karate)", 34, 78, directed=False,
        cite="also cite W. W. Zachary, J. Anthropological Research 33, 452-473 (1977)",
        sha256="074a23e758ebeddb766fb08f617ee4bc5debc8d2564287c3e1e24f5ccdb77813",
    ),
    _suitesparse(
        "HB", "west0067", "HB/west0067, chemical engineering (Cavett problem with 5 components)",
        67, 294, directed=True, weighted=True,
        sha256="26e848564e3a0024ade49caba8c293c8b93ac81a34a2dba99e8b0b9f7bdd96d7",
    ),
    _suitesparse(
        "DIMACS10", "luxembourg_osm",
        "Road network of Luxembourg (DIMACS10/luxembourg_osm, from OpenStreetMap)",
        114_599, 119_666, directed=False,
        cite="the roads are OpenStreetMap data (© OpenStreetMap contributors, via Geofabrik, "
        "2010)",
        sha256="3920e27dcdc7a4cfcf24b5e7c092584c54b7a71e8db042623d9c66741b2c0184",
    ),
    DatasetInfo(
        name="p2p_gnutella31",
        filename="p2p-Gnutella31.txt",
        title="Gnutella peer-to-peer network, 31 August 2002 (SNAP p2p-Gnutella31)",
        n=62_586,
        num_edges=147_892,
        directed=True,
        weighted=False,
        source="https://snap.stanford.edu/data/p2p-Gnutella31.html",
        licence="no licence stated by SNAP (cite Leskovec & Krevl, SNAP Datasets, 2014; "
        "Ripeanu, Foster & Iamnitchi, IEEE Internet Computing 6(1), 2002); the same graph "
        "is distributed as SNAP/p2p-Gnutella31 by the SuiteSparse Matrix Collection under "
        "CC-BY-4.0",
        sha256="cb9a54612a6a00e5aa672e81eb7b7b4d2fe6f864a93360007b9840cf2d9d4d8f",
    ),
    DatasetInfo(
        name="musae_git",
        filename="musae_git_edges.csv",
        title="GitHub developer network (MUSAE, Rozemberczki, Allen & Sarkar)",
        n=37_700,
        num_edges=289_003,
        directed=False,
        weighted=False,
        source="https://github.com/benedekrozemberczki/MUSAE (input/edges/git_edges.csv)",
        licence="MIT (the repository's licence when the file was added, commit 6b8688a, "
        "2019-08-18; the repository is GPL-3.0 since 2020-01-16, which also permits "
        "verbatim copies); cite Rozemberczki, Allen & Sarkar, J. Complex Networks 9(2), 2021",
        sha256="34c57382246949d1b3b7fa641a8532672001ecae8e9558f0b3c113cc035bd781",
    ),
)

REMOTE: tuple[DatasetInfo, ...] = (
    _suitesparse(
        "DIMACS10", "europe_osm",
        "Road network of Europe (DIMACS10/europe_osm, from OpenStreetMap)",
        50_912_018, 54_054_660, directed=False, cite="© OpenStreetMap contributors",
        bundled=False,
    ),
    _suitesparse(
        "DIMACS10", "road_usa", "Road network of the USA (DIMACS10/road_usa)",
        23_947_347, 28_854_312, directed=False, bundled=False,
    ),
    _suitesparse(
        "SNAP", "com-Orkut",
        "Orkut social network (SNAP com-Orkut, as SNAP/com-Orkut in SuiteSparse)",
        3_072_441, 117_185_083, directed=False, cite="cite Yang & Leskovec, ICDM 2012",
        bundled=False, name="com_orkut",
    ),
)


def lookup(name: str) -> DatasetInfo:
    """The data set called ``name``, bundled or remote.

    Raises
    ------
    TypeError
        If ``name`` is not a string.
    ValueError
        If there is no such data set; the message lists the names.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a data set name (str), got {type(name).__name__}")
    for d in (*BUNDLED, *REMOTE):
        if d.name == name:
            return d
    bundled = ", ".join(d.name for d in BUNDLED)
    remote = ", ".join(d.name for d in REMOTE)
    raise ValueError(
        f"name: no data set {name!r}; bundled: {bundled}; fetched on request: {remote}"
    )
