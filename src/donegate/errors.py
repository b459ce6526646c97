"""The exception tree of donegate.

An exception means "could not decide"; a negative verdict is data, never an exception::

    DonegateError
    ├── InvalidInput        bad input from outside: a claim, a policy, a config, facts (exit 4)
    │   └── at .path         the JSON path (or config key path) of the offending value
    └── InternalError        a bug or an environment failure inside donegate (exit 5)

Foreign exceptions (pydantic, json, OS errors on the input file) are translated at the loaders,
so callers handle exactly these.
"""

from __future__ import annotations


class DonegateError(Exception):
    """Base of every error donegate raises on purpose."""


class InvalidInput(DonegateError):
    """The input was rejected; ``path`` names where (``evidence[0].at``), or is empty."""

    def __init__(self, message: str, path: str = "") -> None:
        self.message = message
        self.path = path
        named = not path or message.startswith(path)
        super().__init__(message if named else f"{path}: {message}")


class InternalError(DonegateError):
    """donegate itself failed; never read as any verdict."""
