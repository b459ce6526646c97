"""A write to a file that is both project metadata and runner configuration (``pyproject.toml``)
that changes only the metadata: a version bump judges nothing, and is not held against the run.

What may change is a short list of ``[project]`` keys that no runner reads (the version, the
description, the people, the links, the licence); any other difference, anywhere in the file,
is a write to the runner's configuration, as before. A file that does not parse is one.
"""

from __future__ import annotations

import tomllib

_METADATA = frozenset(
    {
        "version",
        "description",
        "readme",
        "authors",
        "maintainers",
        "keywords",
        "classifiers",
        "urls",
        "license",
        "license-files",
    }
)


def metadata_only(old: str, new: str) -> bool:
    """Whether ``new`` differs from ``old`` only in the project's metadata."""
    try:
        before, after = tomllib.loads(old), tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        return False
    return _judged(before) == _judged(after)


def _judged(document: dict[str, object]) -> dict[str, object]:
    project = document.get("project")
    if not isinstance(project, dict):
        return document
    return {**document, "project": {k: v for k, v in project.items() if k not in _METADATA}}
