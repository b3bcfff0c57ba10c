"""One validated configuration object for spbfs.

Sources, lowest to highest precedence: defaults, a TOML file, environment
variables (``SPBFS_FORMAT=dcsc``), keyword arguments. A wrong value is an error
that lists the valid ones.

Examples
--------
>>> from spbfs import Config
>>> Config(format="dcsc").format
'dcsc'
>>> Config(format="coo")
Traceback (most recent call last):
...
ValueError: config 'format' must be one of 'csr', 'dcsc'; got 'coo'
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

__all__ = ["Config", "load_config"]

_CHOICES: dict[str, tuple[str, ...]] = {
    "format": ("csr", "dcsc"),
    "backend": ("auto", "numpy", "numba", "cupy"),
    "index_dtype": ("auto", "int32", "int64"),
    "direction": ("auto", "top-down", "bottom-up"),
    "frontier_encoding": ("auto", "list", "bitmap"),
    "output": ("both", "parents", "levels"),
    "bind": ("auto", "none", "core"),
}


@dataclass(frozen=True)
class Config:
    """spbfs configuration.

    Parameters
    ----------
    format : {"csr", "dcsc"}
        Local block storage. ``csr`` keeps a pointer per local vertex
        (fastest access, O(n·pc + m) aggregate memory on a grid); ``dcsc``
        keeps pointers only for non-empty columns (O(m) aggregate memory,
        seed 003 Section 5.1).
    backend : {"auto", "numpy", "numba", "cupy"}
        Kernel backend; ``auto`` = cupy when a GPU is usable, else numba.
    index_dtype : {"auto", "int32", "int64"}
        Local (per-block) index type. ``auto`` uses int32 where every local id
        and the nonzero count fit, else int64. Forcing int32 on a block that
        does not fit is an error, never a silent truncation.
    direction : {"auto", "top-down", "bottom-up"}
        ``auto`` is Beamer's direction optimization; the others force one
        direction for every level.
    alpha : float
        Switch top-down -> bottom-up when the edges out of the frontier
        exceed ``1/alpha`` of the edges out of unvisited vertices
        (Beamer et al. 2012, alpha = 14: bottom-up pays once it is likely to
        find parents early).
    beta : float
        Switch bottom-up -> top-down when the frontier shrinks below
        ``n/beta`` vertices (Beamer et al. 2012, beta = 24).
    frontier_encoding : {"auto", "list", "bitmap"}
        How frontier messages travel on a grid: ``auto`` picks, per message,
        the smaller of a sorted id list (64 bits per id) and a bitmap
        (1 bit per vertex of the range), as seed 000 Section 5.
    grid : tuple of int or None
        Process grid ``(pr, pc)``; None chooses one from the number of ranks.
    output : {"both", "parents", "levels"}
        Which result arrays BFS returns.
    threads : int or None
        Numba threads; None leaves numba's default (all cores, or 1 per rank
        when several MPI ranks share a machine).
    bind : {"auto", "none", "core"}
        Pinning of MPI ranks to cores: ``core`` pins each rank of a machine to
        one of the cores it may use (round robin by its rank on the machine);
        ``auto`` does so only when a machine's ranks outnumber those cores and
        each rank runs one thread (oversubscribed: a waiting rank then always
        yields to the rank sharing its core; searches 1.3-1.5x faster on 4 ranks
        over 2 cores); ``none`` leaves placement to the launcher and the OS.
    """

    format: str = "csr"
    backend: str = "auto"
    index_dtype: str = "auto"
    direction: str = "auto"
    alpha: float = 14.0
    beta: float = 24.0
    frontier_encoding: str = "auto"
    grid: tuple[int, int] | None = None
    output: str = "both"
    threads: int | None = None
    bind: str = "auto"

    def __post_init__(self) -> None:
        for name, choices in _CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                valid = ", ".join(repr(c) for c in choices)
                raise ValueError(f"config {name!r} must be one of {valid}; got {value!r}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ValueError(f"config {name!r} must be a positive number; got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.grid is not None:
            grid = _parse_grid(self.grid)
            object.__setattr__(self, "grid", grid)
        if self.threads is not None and (
            isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 1
        ):
            raise ValueError(f"config 'threads' must be a positive integer; got {self.threads!r}")

    def replace(self, **changes: Any) -> Config:
        """Return a copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str], **overrides: Any) -> Config:
        """Load from a TOML file (keys at top level or under ``[spbfs]``)."""
        with Path(path).open("rb") as f:
            try:
                data = tomllib.load(f)
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(f"config file {path}: {exc}") from None
        data = data.get("spbfs", data)
        return cls.from_mapping({**data, **overrides}, source=str(path))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "mapping") -> Config:
        """Build from a mapping; unknown keys are an error naming them."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(
                f"unknown config key(s) {', '.join(map(repr, unknown))} in {source}; "
                f"valid keys: {', '.join(sorted(known))}"
            )
        return cls(**dict(data))


def _parse_grid(value: Any) -> tuple[int, int]:
    if isinstance(value, str):
        parts = value.lower().replace("×", "x").split("x")
    else:
        parts = list(value)
    try:
        if len(parts) != 2:
            raise ValueError
        pr, pc = (int(p) for p in parts)
    except (TypeError, ValueError):
        raise ValueError(
            f"config 'grid' must be two positive integers like '2x3' or (2, 3); got {value!r}"
        ) from None
    if pr < 1 or pc < 1:
        raise ValueError(f"config 'grid' dimensions must be positive; got {value!r}")
    return pr, pc


def _from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(Config):
        key = "SPBFS_" + f.name.upper()
        if key not in environ:
            continue
        raw = environ[key].strip()
        if f.name in ("alpha", "beta"):
            try:
                out[f.name] = float(raw)
            except ValueError:
                raise ValueError(f"environment {key} must be a number; got {raw!r}") from None
        elif f.name == "threads":
            try:
                out[f.name] = int(raw)
            except ValueError:
                raise ValueError(f"environment {key} must be an integer; got {raw!r}") from None
        else:
            out[f.name] = raw
    return out


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Config:
    """Merge defaults, a TOML file, ``SPBFS_*`` environment variables and keywords.

    Parameters
    ----------
    path : path-like, optional
        TOML file; when None, ``$SPBFS_CONFIG`` is used if set.
    environ : mapping, optional
        Environment to read (defaults to ``os.environ``).
    **overrides
        Highest-precedence values; ``None`` values are ignored so CLI options
        that were not given do not mask the file or the environment.
    """
    env = os.environ if environ is None else environ
    data: dict[str, Any] = {}
    path = path if path is not None else env.get("SPBFS_CONFIG")
    if path is not None:
        data.update(dataclasses.asdict(Config.from_toml(path)))
    data.update(_from_env(env))
    data.update({k: v for k, v in overrides.items() if v is not None})
    return Config.from_mapping(data)
