"""Dotted paths into parsed JSON (or TOML) documents: ``build.id``, ``items.0.name``."""

from __future__ import annotations

MISSING = object()


def at_path(document: object, path: str) -> object:
    """The value at ``path`` (empty: the document itself), or :data:`MISSING`."""
    node = document
    for part in path.split(".") if path else ():
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return MISSING
    return node
