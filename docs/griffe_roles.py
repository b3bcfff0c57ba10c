"""Griffe extension for the API pages: show Sphinx cross-reference roles as code.

The docstrings follow numpydoc and use Sphinx roles such as ``:func:`spbfs.bfs``` or
``:class:`~spbfs.edges.EdgeList```, which mkdocstrings would print literally. This
extension rewrites them to Markdown code spans (```spbfs.bfs```, ```EdgeList``` for the
``~`` form) before rendering. It only touches the rendered text, never the code.

Loaded by ``mkdocs.yml`` (``plugins: mkdocstrings: handlers: python: options:
extensions``).
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension

__all__ = ["SphinxRoles", "rewrite_roles"]

_ROLE = re.compile(
    r":(?:py:)?(?:func|meth|class|attr|mod|data|exc|obj|const|ref|term):`(?P<target>[^`]+)`"
)


def rewrite_roles(text: str) -> str:
    """Replace every Sphinx role in ``text`` with a code span.

    Examples
    --------
    >>> rewrite_roles("see :func:`spbfs.bfs` and :class:`~spbfs.edges.EdgeList`")
    'see `spbfs.bfs` and `EdgeList`'
    >>> rewrite_roles(":meth:`Graph.load <spbfs.Graph.load>`")
    '`Graph.load`'
    """

    def repl(m: re.Match[str]) -> str:
        target = m["target"].strip()
        if "<" in target and target.endswith(">"):  # "title <target>"
            return f"`{target.split('<', 1)[0].strip()}`"
        if target.startswith("~"):
            target = target[1:].rsplit(".", 1)[-1]
        return f"`{target}`"

    return _ROLE.sub(repl, text)


class SphinxRoles(Extension):
    """Rewrite Sphinx roles in every docstring griffe loads."""

    def on_instance(self, **kwargs: Any) -> None:
        """Called for each object griffe creates: rewrite its docstring in place."""
        obj = kwargs.get("obj")
        doc = getattr(obj, "docstring", None)
        if doc is not None and ":" in doc.value:
            doc.value = rewrite_roles(doc.value)
