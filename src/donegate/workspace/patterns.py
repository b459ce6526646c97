"""The paths a snapshot ignores by default; the patterns are globs of :mod:`donegate.globs`."""

from __future__ import annotations

from donegate.gitlisting import UNTRACKED_NOISE
from donegate.globs import PathFilter, matches, matches_any

__all__ = ["DEFAULT_IGNORES", "PathFilter", "matches", "matches_any"]

# Files that donegate's own checks (and the tools they run) create: never the agent's writes.
# The directories are the ones git is told not to walk (one list, in the light module the hook
# imports first), and then the files those tools leave anywhere.
DEFAULT_IGNORES: tuple[str, ...] = (
    *UNTRACKED_NOISE,
    "__pycache__/",
    "*.pyc",
    "*.pyo",
    ".coverage",
    ".coverage.*",
    "coverage.xml",
    "junit*.xml",
    "*.junit.xml",
    ".DS_Store",
)
