"""Larger data sets, downloaded on request into the user's cache folder.

Not public API (see :mod:`spbfs.datasets`, which exports :func:`fetch`,
:func:`default_cache_dir` and :class:`DownloadError`). A SuiteSparse archive is downloaded,
the one Matrix Market file the graph needs is extracted from it, its sha256 (where the
catalogue knows it) and its size line are checked against the catalogue, and only then
does it take its final name, so that an interrupted or altered download never leaves a
file that looks complete.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shutil
import sys
import tarfile
import urllib.error
from pathlib import Path
from typing import BinaryIO
from urllib import request

from spbfs.datasets._catalog import DatasetInfo

__all__ = ["DownloadError", "cached_path", "default_cache_dir", "fetch_remote"]

#: What a failed connection or transfer raises (DNS, refused, reset, timeout, HTTP status).
_NETWORK_ERRORS = (urllib.error.URLError, ConnectionError, TimeoutError,
                   http.client.HTTPException)
_CHUNK = 1 << 20


class DownloadError(OSError):
    """A data set could not be downloaded or its download is not the expected file.

    The message says what to download from where, and where to put it, for a
    machine without network access.
    """


def default_cache_dir() -> Path:
    """The folder that :func:`spbfs.datasets.fetch` downloads into by default.

    ``$XDG_CACHE_HOME/spbfs/datasets`` (``~/.cache/spbfs/datasets`` when unset) on
    Linux and other Unix systems, ``~/Library/Caches/spbfs/datasets`` on macOS and
    ``%LOCALAPPDATA%\\spbfs\\datasets`` on Windows.

    Returns
    -------
    pathlib.Path
        The folder; it may not exist yet.
    """
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "spbfs" / "datasets"


def cached_path(d: DatasetInfo, folder: str | os.PathLike | None) -> Path:
    """Where the downloaded file of ``d`` lives (whether or not it is there yet)."""
    return Path(folder if folder is not None else default_cache_dir()) / d.filename


def _by_hand(d: DatasetInfo, dest: Path) -> str:
    return (f"Without network access: download {d.url} on a machine that has it, extract "
            f"{d.member} from the archive and put it at {dest} (or read it from anywhere "
            f"with spbfs.Graph.load(path))")


def fetch_remote(d: DatasetInfo, folder: str | os.PathLike | None, timeout: float,
                 force: bool) -> Path:
    """Download ``d`` into ``folder`` unless it is there; see :func:`spbfs.datasets.fetch`."""
    dest = cached_path(d, folder)
    if dest.is_file() and not force:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    archive = dest.with_name(dest.name + ".download.part")
    part = dest.with_name(dest.name + ".part")
    try:
        try:
            with request.urlopen(d.url, timeout=timeout) as resp, open(archive, "wb") as out:
                shutil.copyfileobj(resp, out, _CHUNK)
        except _NETWORK_ERRORS as exc:
            raise DownloadError(
                f"could not download data set {d.name!r} from {d.url} "
                f"({type(exc).__name__}: {exc}). {_by_hand(d, dest)}."
            ) from exc
        try:
            with tarfile.open(archive, "r:gz") as tar:
                src = tar.extractfile(d.member)
                if src is None:
                    raise KeyError(d.member)
                with src, open(part, "wb") as out:
                    digest = _copy_hashing(src, out)
        except (tarfile.TarError, KeyError, EOFError) as exc:
            raise DownloadError(
                f"the download of {d.name!r} from {d.url} is not a gzip'ed tar archive "
                f"holding {d.member} ({type(exc).__name__}: {exc}). {_by_hand(d, dest)}."
            ) from exc
        if d.sha256 and digest != d.sha256:
            raise DownloadError(
                f"{d.member} downloaded from {d.url} for data set {d.name!r} has sha256 "
                f"{digest}, expected {d.sha256}: not the file the catalogue describes "
                f"(changed upstream, or a damaged or altered download); removed. "
                f"{_by_hand(d, dest)}."
            )
        _check_size_line(d, part)
        os.replace(part, dest)
    finally:
        archive.unlink(missing_ok=True)
        part.unlink(missing_ok=True)
    return dest


def _copy_hashing(src: BinaryIO, out: BinaryIO) -> str:
    """Copy ``src`` to ``out`` in chunks; return the sha256 hex digest of what was copied."""
    h = hashlib.sha256()
    while chunk := src.read(_CHUNK):
        h.update(chunk)
        out.write(chunk)
    return h.hexdigest()


def _check_size_line(d: DatasetInfo, path: Path) -> None:
    """The Matrix Market size line must be the catalogue's ``n n num_edges``."""
    with open(path, "rb") as f:
        for raw in f:
            line = raw.strip()
            if line and not line.startswith(b"%"):
                break
        else:
            line = b""
    want = f"{d.n} {d.n} {d.num_edges}".encode()
    if b" ".join(line.split()) != want:
        raise DownloadError(
            f"{d.member} downloaded from {d.url} has the size line {line[:80]!r}, expected "
            f"{want.decode()!r}: not the graph the catalogue describes (changed upstream, or "
            f"a damaged download). {_by_hand(d, cached_path(d, path.parent))}."
        )
