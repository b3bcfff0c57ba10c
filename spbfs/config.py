"""One validated configuration object for spbfs.

Sources, lowest to highest precedence: defaults, a TOML file, environment
variables (``SPBFS_FORMAT=dcsc``), keyword arguments (keyword > environment >
file > default). A wrong value is an error that lists the valid ones.

The Python API and the command line agree: a call given no ``config``
(``spbfs.bfs(g, 0)``, ``Graph.from_edges(...)``) runs under
:func:`default_config`, which is :func:`load_config` read once per process
(the file named by ``SPBFS_CONFIG``, then the ``SPBFS_*`` variables), and a
call given a mapping (``config={"format": "dcsc"}``) runs under that default
with the mapping's keys on top (:func:`as_config`). ``Config(...)`` itself is
exactly what it says: its defaults are the class's, not the environment's.

This module is the one place that reads spbfs's ``SPBFS_*`` environment
variables (:func:`load_config`): every field has its ``SPBFS_<FIELD>``
variable, ``SPBFS_CONFIG`` names a TOML file, and any other ``SPBFS_*``
variable is an error naming the valid ones (a misspelt ``SPBFS_FORAMT`` would
otherwise be ignored without a word). Code that needs a setting takes it from
the :class:`Config` it is handed, or from the object that carries one (a
graph, a process grid).

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
import difflib
import functools
import os
import tomllib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from spbfs import patterns
from spbfs.patterns import PATTERNS

__all__ = ["Config", "as_config", "default_config", "load_config", "wait_seconds"]

_CHOICES: dict[str, tuple[str, ...]] = {
    "format": ("csr", "dcsc"),
    "backend": ("auto", "numpy", "numba", "cupy"),
    "index_dtype": ("auto", "int32", "int64"),
    "direction": ("auto", "top-down", "bottom-up"),
    "exchange": ("auto", *PATTERNS),
    "output": ("both", "parents", "levels"),
    "bind": ("auto", "none", "core"),
    "grid_blocks": ("one", "both"),
}
_BOOLS = ("debug", "cuda_kernels", "cuda_fused")
#: Named links of the ``network`` setting (their numbers: :mod:`spbfs.mpi.network`).
NETWORK_PRESETS = ("native", "1gbe", "10gbe", "ib")
_NETWORK_SYNTAX = (f"one of {', '.join(map(repr, NETWORK_PRESETS))} or "
                   "'LATENCY_US:GBPS' (e.g. '50:1'; latency >= 0, bandwidth > 0)")
# Spellings of a boolean in the environment (TOML and keywords take real booleans).
_BOOL_WORDS = {"1": True, "true": True, "yes": True, "on": True,
               "0": False, "false": False, "no": False, "off": False}
_WAIT_SYNTAX = ("'auto', 'busy' or 'spin:yield:min_sleep:max_sleep' "
                "(seconds >= 0, min_sleep <= max_sleep)")
#: Old names of environment variables, still read (with a DeprecationWarning).
_ENV_ALIASES = {"SPBFS_DIST_WAIT": "wait"}
# ``SPBFS_*`` variables that are no config field and still no mistake: the TOML
# file's path, and the test suite's data folder (tests/test_gpu.py).
_ENV_OTHERS = ("SPBFS_CONFIG", "SPBFS_DATA")


@dataclass(frozen=True)
class Config:
    """spbfs configuration.

    A Config is exactly what its arguments say; the other sources are merged by
    :func:`load_config` with the precedence keyword > environment (``SPBFS_*``)
    > TOML file (``SPBFS_CONFIG``) > default. A call of the Python API given
    no config runs under :func:`default_config` (that merge, read once per
    process); one given a mapping runs under that with the mapping's keys on
    top (:func:`as_config`).

    Parameters
    ----------
    format : {"csr", "dcsc"}
        Local block storage. ``csr`` keeps a pointer per local vertex
        (fastest access, O(n·pc + m) aggregate memory on a grid); ``dcsc``
        keeps pointers only for non-empty columns (O(m) aggregate memory,
        Buluç et al. 2017, Section 5.1).
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
    frontier_encoding : {"auto", "list", "bitmap", "compressed"}
        How frontier messages travel on a grid (the encodings of
        :mod:`spbfs.patterns`): a sorted id list (64 bits per
        id), a bitmap (1 bit per vertex of the range; Bisson, Bernaschi and
        Mastrostefano, Kepler 2D BFS, Section 5), or ``compressed``: ids
        delta and Frame-of-Reference bit-packed in blocks (Young et al.;
        :mod:`spbfs.mpi.codec`), ``(child, parent)`` pairs packed too; or
        another named in :mod:`spbfs.patterns`. ``auto``
        picks per message the cheapest built-in one by the cost model
        (:mod:`spbfs.mpi.costmodel`): the bytes over the link model plus the
        codec's time.
    exchange : {"auto", "p2p", "collective", "butterfly"}
        How frontier and pair messages move in a processor row or column
        (the patterns of :mod:`spbfs.patterns`, run by :mod:`spbfs.mpi.exchange`):
        posted point-to-point messages, MPI's Allgatherv / Alltoallv, or Green's
        butterfly; ``auto`` picks per phase and level by the cost model.
    butterfly_fanout : int
        Partners per round of the butterfly pattern (>= 2).
    network : str
        Emulated link for ranks on one machine: every communication step is
        held for latency + bytes / bandwidth (:mod:`spbfs.mpi.network`).
        ``native`` (no emulation), ``1gbe``, ``10gbe``, ``ib``, or
        ``"LATENCY_US:GBPS"``.
    link_latency_us, link_gbps : float or None
        The link model the cost model uses. Unset: the emulated ``network``'s,
        or on a native link one measured at start-up (a short ping-pong,
        cached per machine).
    grid : tuple of int or None
        Process grid ``(pr, pc)``; None chooses one from the number of ranks.
    grid_blocks : {"one", "both"}
        What a rank of an undirected graph on a grid stores. ``one``: its block
        ``B_ij`` once, transposed (row access), about its share of the graph;
        a top-down level then runs as ``Bᵀ x``, sending every child found
        outside the rank's own piece to its owner as a ``(child, parent)``
        pair. ``both``: ``B_ij`` beside its transpose, about twice the
        block memory; a top-down level gathers the frontier down the
        processor column and updates the rank's own rows, as Buluç et al.'s
        Algorithm 3 does, with fewer words on the wire (docs/benchmarks.md
        has both measured). A directed graph always stores both.
    output : {"both", "parents", "levels"}
        Which result arrays BFS returns.
    threads : int, "auto" or None
        Numba threads. A number is obeyed (capped at numba's pool,
        ``NUMBA_NUM_THREADS``). None (the default; ``"auto"`` means the same
        and is stored as None): a one-process search runs on as many of the
        caller's ``numba.get_num_threads()`` threads as the machine has idle
        cores when its first parallel region is due, plus one
        (:mod:`spbfs.threads`), so that it does
        not wait on descheduled threads when other processes keep the cores
        busy; MPI ranks run 1 thread each when several share a machine, else
        numba's default. Environment: ``SPBFS_THREADS`` (a number or ``auto``).
    bind : {"auto", "none", "core"}
        Pinning of MPI ranks to cores: ``core`` pins each rank of a machine to
        one of the cores it may use (round robin by its rank on the machine);
        ``auto`` does so only when a machine's ranks outnumber those cores and
        each rank runs one thread (oversubscribed: a waiting rank then always
        yields to the rank sharing its core); ``none`` leaves placement to the launcher and the OS.
    wait : str
        How an MPI rank waits for a message (:class:`spbfs.mpi.comm.WaitPolicy`):
        ``auto`` polls, then yields its core for 100 ms, then sleeps between
        polls; ``busy`` polls without end; ``"spin:yield:min_sleep:max_sleep"``
        sets those seconds (e.g. ``"2e-6:0.1:5e-5:1e-3"``, the ``auto`` values).
        Environment: ``SPBFS_WAIT`` (``SPBFS_DIST_WAIT``, its old name, is
        still read).
    debug : bool
        The command line shows tracebacks instead of one-line errors.
    cuda_kernels : bool
        The GPU search runs the hand-written CUDA kernels where they compile;
        False runs the vectorized cupy steps.
    cuda_fused : bool
        The CUDA kernels run a run of top-down levels in one launch; False
        launches one level at a time.
    cuda_aware : {"auto", True, False}
        Whether the MPI library takes device buffers, for a grid whose local
        engine runs on the GPU (``backend="cupy"``; see
        :mod:`spbfs.mpi.staging`). False: messages cross between device and
        host through pinned host buffers kept per graph; True: device arrays
        go to MPI as they are; ``auto`` asks the library
        (``MPIX_Query_cuda_support``, which MPICH and Open MPI export; the
        ``mpich`` wheel says no). Environment: ``SPBFS_CUDA_AWARE`` (``auto``
        or a boolean word).
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
    wait: str = "auto"
    debug: bool = False
    cuda_kernels: bool = True
    cuda_fused: bool = True
    exchange: str = "p2p"
    butterfly_fanout: int = 2
    network: str = "native"
    link_latency_us: float | None = None
    link_gbps: float | None = None
    grid_blocks: str = "one"
    cuda_aware: bool | str = "auto"

    def __post_init__(self) -> None:
        # A field still holding its default object was checked when the class was made:
        # checking the twenty defaults took three quarters of a Config's making, and a
        # search on a raw matrix makes one.
        for name, default in _DEFAULTS:
            value = getattr(self, name)
            if value is not default:
                object.__setattr__(self, name, _check(name, value))

    def replace(self, **changes: Any) -> Config:
        """Return a copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str], **overrides: Any) -> Config:
        """Load from a TOML file (keys at top level or under ``[spbfs]``).

        Raises
        ------
        ValueError
            Naming the file: not UTF-8 text, not TOML, a ``spbfs`` entry that
            is not a table, an unknown key or a bad value.
        OSError
            When the file cannot be read.
        """
        with Path(path).open("rb") as f:
            try:
                data = tomllib.load(f)
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(f"config file {path}: {exc}") from None
            except UnicodeDecodeError as exc:
                raise ValueError(f"config file {path}: not UTF-8 text (byte {exc.start}); "
                                 "a config file is TOML") from None
        data = data.get("spbfs", data)
        if not isinstance(data, Mapping):
            raise ValueError(f"config file {path}: 'spbfs' must be a table of settings "
                             f"([spbfs]), got {type(data).__name__} {data!r}")
        return cls.from_mapping({**data, **overrides}, source=f"config file {path}")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str | None = None) -> Config:
        """Build from a mapping; unknown keys are an error naming them.

        ``source`` (e.g. ``"config file x.toml"``) prefixes every error.
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(map(str, set(data) - known))
        where = "" if source is None else f"{source}: "
        if unknown:
            raise ValueError(
                f"{where}unknown config key(s) {', '.join(map(repr, unknown))}; "
                f"valid keys: {', '.join(sorted(known))}"
            )
        try:
            return cls(**dict(data))
        except ValueError as exc:
            raise ValueError(f"{where}{exc}") from None


#: Every field's name and default, each default as :func:`_check` leaves it.
_DEFAULTS = tuple((f.name, f.default) for f in fields(Config))


def _check(name: str, value: Any) -> Any:
    """``value`` of field ``name``, normalized; a ValueError listing the valid ones if bad."""
    if name in _CHOICES or name == "frontier_encoding":
        # The encodings are the registry's as of now (one registered later is valid).
        choices = _CHOICES.get(name) or ("auto", *patterns.ENCODINGS)
        if value not in choices:
            valid = ", ".join(repr(c) for c in choices)
            raise ValueError(f"config {name!r} must be one of {valid}; got {value!r}")
        return value
    if name in ("alpha", "beta"):
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise ValueError(f"config {name!r} must be a positive number; got {value!r}")
        return float(value)
    if name == "grid":
        return None if value is None else _parse_grid(value)
    if name == "threads":
        if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"config 'threads' must be a positive integer or 'auto'; "
                             f"got {value!r}")
        return value
    if name == "wait":
        return _check_wait(value)
    if name == "butterfly_fanout":
        if isinstance(value, bool) or not isinstance(value, int) or value < 2:
            raise ValueError(f"config 'butterfly_fanout' must be an integer >= 2; got {value!r}")
        return value
    if name == "network":
        return _check_network(value)
    if name in ("link_latency_us", "link_gbps"):
        if value is None:
            return None
        low_ok = name == "link_latency_us"  # a zero latency is a model; a zero bandwidth is not
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not (value >= 0 if low_ok else value > 0) or value == float("inf"):
            what = "a number >= 0" if low_ok else "a positive number"
            raise ValueError(f"config {name!r} must be {what}; got {value!r}")
        return float(value)
    if name == "cuda_aware":
        if value != "auto" and not isinstance(value, bool):
            raise ValueError(f"config 'cuda_aware' must be 'auto', true or false; got {value!r}")
        return value
    if name in _BOOLS:
        if not isinstance(value, bool):
            raise ValueError(f"config {name!r} must be true or false; got {value!r}")
        return value
    raise AssertionError(f"config field {name!r} has no check")  # a field added without one


def _check_wait(value: Any) -> str:
    """A ``wait`` setting (see :class:`Config`), stripped."""
    text = value.strip() if isinstance(value, str) else None
    if text in ("auto", "busy"):
        return text
    parts = text.split(":") if text is not None else []
    try:
        if len(parts) != 4:
            raise ValueError
        spin, yld, lo, hi = (float(p) for p in parts)
        # "not >= 0" also refuses NaN.
        if not all(v >= 0 for v in (spin, yld, lo, hi)) or lo > hi:
            raise ValueError
    except ValueError:
        raise ValueError(f"config 'wait' must be {_WAIT_SYNTAX}; got {value!r}") from None
    return text


def _check_network(value: Any) -> str:
    """A ``network`` setting (see :class:`Config`), lower-cased and stripped."""
    text = value.strip().lower() if isinstance(value, str) else None
    if text in NETWORK_PRESETS:
        return text
    try:
        lat, gbps = (float(p) for p in text.split(":"))  # type: ignore[union-attr]
        if not (lat >= 0 and gbps > 0) or max(lat, gbps) == float("inf"):
            raise ValueError
    except (AttributeError, ValueError):
        raise ValueError(f"config 'network' must be {_NETWORK_SYNTAX}; got {value!r}") from None
    return text


def wait_seconds(wait: str) -> tuple[float, float, float, float] | None:
    """The four seconds of a checked ``wait`` setting; None for ``auto`` and ``busy``.

    Parameters
    ----------
    wait : str
        :attr:`Config.wait`.

    Returns
    -------
    tuple of float or None
        ``(spin, yield, min_sleep, max_sleep)``.
    """
    if wait in ("auto", "busy"):
        return None
    spin, yld, lo, hi = (float(p) for p in _check_wait(wait).split(":"))
    return spin, yld, lo, hi


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


def _env_variables() -> dict[str, str]:
    """The ``SPBFS_<FIELD>`` environment variable of every :class:`Config` field.

    Returns
    -------
    dict
        Variable name to field name, e.g. ``{"SPBFS_FORMAT": "format", ...}``.
    """
    return {"SPBFS_" + f.name.upper(): f.name for f in fields(Config)}


def _check_env_names(environ: Mapping[str, str], known: Mapping[str, str]) -> None:
    """Refuse ``SPBFS_*`` variables that spbfs does not read (a misspelling, most likely)."""
    valid = sorted([*known, "SPBFS_CONFIG"])
    unknown = sorted(k for k in environ if k.startswith("SPBFS_") and k not in known
                     and k not in _ENV_ALIASES and k not in _ENV_OTHERS)
    if not unknown:
        return
    names = []
    for k in unknown:
        # Compared without the prefix every name shares, which would make all look alike.
        near = difflib.get_close_matches(k[6:], [v[6:] for v in valid], n=1, cutoff=0.7)
        names.append(f"{k} (did you mean SPBFS_{near[0]}?)" if near else k)
    what = "variable" if len(unknown) == 1 else "variables"
    raise ValueError(f"unknown spbfs environment {what} {', '.join(names)}; "
                     f"valid ones: {', '.join(valid)}")


def _env_value(key: str, name: str, raw: str) -> Any:
    """The field value an environment variable's text stands for (checked)."""
    if name in ("alpha", "beta", "link_latency_us", "link_gbps"):
        try:
            value: Any = float(raw)
        except ValueError:
            raise ValueError(f"environment {key} must be a number; got {raw!r}") from None
    elif name == "threads" and raw.lower() == "auto":
        value = None
    elif name in ("threads", "butterfly_fanout"):
        try:
            value = int(raw)
        except ValueError:
            what = "an integer or 'auto'" if name == "threads" else "an integer"
            raise ValueError(f"environment {key} must be {what}; got {raw!r}") from None
    elif name == "cuda_aware" and raw.strip().lower() == "auto":
        value = "auto"
    elif name in (*_BOOLS, "cuda_aware"):
        if raw.lower() not in _BOOL_WORDS:
            valid = ", ".join(repr(w) for w in ("auto", *_BOOL_WORDS)[name in _BOOLS:])
            raise ValueError(f"environment {key} must be one of {valid}; got {raw!r}")
        value = _BOOL_WORDS[raw.lower()]
    else:
        value = raw
    try:
        return _check(name, value)
    except ValueError as exc:
        # Name the variable: the config key alone does not say where the value came from.
        raise ValueError(f"environment {key}: {exc}") from None


def _from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    known = _env_variables()
    _check_env_names(environ, known)
    out: dict[str, Any] = {}
    for old, name in _ENV_ALIASES.items():
        raw = environ.get(old, "").strip()
        # An empty value meant "the default" under the old name; the new name wins.
        if raw and "SPBFS_" + name.upper() not in environ:
            new = "SPBFS_" + name.upper()
            warnings.warn(f"{old} is deprecated; set {new} instead", DeprecationWarning,
                          stacklevel=3)
            out[name] = _env_value(old, name, raw)
    for key, name in known.items():
        if key in environ:
            out[name] = _env_value(key, name, environ[key].strip())
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

    Returns
    -------
    Config

    Raises
    ------
    ValueError
        For a bad value (naming its variable when it comes from the
        environment), an unknown key in the file, or an ``SPBFS_*``
        variable that is no setting (listing the valid ones).
    OSError
        When the TOML file cannot be read.
    """
    env = os.environ if environ is None else environ
    data: dict[str, Any] = {}
    path = path if path is not None else env.get("SPBFS_CONFIG")
    if path is not None:
        data.update(dataclasses.asdict(Config.from_toml(path)))
    data.update(_from_env(env))
    data.update({k: v for k, v in overrides.items() if v is not None})
    return Config.from_mapping(data)


@functools.cache
def default_config() -> Config:
    """The config of a call given none: :func:`load_config` of this process's environment.

    Read once, the first time a default is needed, and kept: a search given no
    config pays a cached call, not a scan of the environment (``SPBFS_*``
    variables set later are not seen; ``default_config.cache_clear()`` reads
    them again). A misspelt ``SPBFS_*`` variable or a bad value raises here,
    on every call until it is fixed, listing the valid ones.

    Returns
    -------
    Config

    Raises
    ------
    ValueError
        As :func:`load_config`.
    """
    return load_config()


def as_config(config: Config | Mapping[str, Any] | None, name: str = "config") -> Config:
    """``config`` as a :class:`Config`: None is :func:`default_config`, a mapping goes on top of it.

    Parameters
    ----------
    config : Config, mapping or None
        A Config is returned as it is; a mapping (``{"format": "dcsc"}``) sets
        those keys over the default (keyword > environment > file > default).
    name : str
        The argument named in errors.

    Raises
    ------
    TypeError
        When ``config`` is none of those.
    ValueError
        For an unknown key (listing the valid ones) or a bad value.
    """
    if isinstance(config, Config):
        return config
    if config is None:
        return default_config()
    if isinstance(config, Mapping):
        base = default_config()
        return Config.from_mapping({**{f: getattr(base, f) for f, _ in _DEFAULTS}, **config},
                                   source=name)
    raise TypeError(f"{name} must be a spbfs.Config or a mapping of settings, "
                    f"got {type(config).__name__}")
