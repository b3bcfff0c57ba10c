"""What ``dir()`` of a package shows: its public API, not the names its code imports.

A package's ``__init__`` imports what its functions need (``os``, ``Path``, the
``annotations`` of ``from __future__``); without a ``__dir__`` those names appear in
``dir(package)`` and in tab completion as if they were the package's own.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from types import ModuleType


def public_dir(package: str, names: Iterable[str]) -> Callable[[], list[str]]:
    """A module ``__dir__`` (PEP 562) for ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    names : iterable of str
        Its public names (its ``__all__``, and names it serves from ``__getattr__``).

    Returns
    -------
    callable
        ``__dir__`` listing ``names``, the module's dunder attributes and those of its
        own public submodules that are loaded; the imports stay reachable, unlisted.
    """
    listed = frozenset(names)

    def __dir__() -> list[str]:
        ns = vars(sys.modules[package])
        own = {k for k, v in ns.items()
               if (k.startswith("__") and k.endswith("__"))
               or (isinstance(v, ModuleType) and not k.startswith("_")
                   and v.__name__ == f"{package}.{k}")}
        return sorted(listed | own)

    return __dir__
