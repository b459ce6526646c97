"""pytest node ids, parsed with pytest's own grammar, and matched exactly.

``tests/test_requests.py::TestRequests::test_errors[http://fe80::5054:ff:fe5a:fc0-InvalidURL]``
is a path (up to the first ``::`` outside brackets), then ``::``-separated names, then the
parameters: everything inside the first ``[`` after the path and the final ``]``, kept verbatim,
whatever it holds (``::``, brackets, spaces, unicode). pytest writes no parameters anywhere but
on the last name, so a ``[`` after the path always opens them.

A required id without parameters names a node: it covers every test under it (a function id
covers all its parametrizations, a class id all its methods). Nothing is matched by suffix.
"""

from __future__ import annotations

import posixpath

from donegate.record import Record


class NodeIdError(ValueError):
    """A string that is not a pytest node id."""


class NodeId(Record):
    """One node id: ``path::name::name[params]`` (``params`` None when there are no brackets)."""

    path: str
    names: tuple[str, ...] = ()
    params: str | None = None

    @classmethod
    def parse(cls, text: str) -> NodeId:
        """Split ``text`` as pytest does; raise NodeIdError for what pytest could not have made."""
        path, tail = _split_path(text)
        if not path:
            raise NodeIdError(f"{text!r} has no file path before its first '::'")
        if tail is None:
            return cls(path)
        head, bracket, params = tail.partition("[")
        names = tuple(head.split("::"))
        if not all(names):
            raise NodeIdError(f"{text!r} has an empty name between '::'")
        if bracket and not params.endswith("]"):
            raise NodeIdError(f"{text!r} opens parameters with '[' but does not end with ']'")
        return cls(path, names, params[:-1] if bracket else None)

    def __str__(self) -> str:
        text = "::".join((self.path, *self.names))
        return text if self.params is None else f"{text}[{self.params}]"

    def covers(self, test: NodeId) -> bool:
        """Is ``test`` this node, or (when this id has no parameters) a test under it?"""
        if test.path != self.path:
            return False
        if self.params is not None:
            return test.names == self.names and test.params == self.params
        return test.names[: len(self.names)] == self.names

    def with_path(self, path: str) -> NodeId:
        """The same names and parameters under another path."""
        return NodeId(path, self.names, self.params)

    def junit_key(self) -> str:
        """How pytest's JUnit writer names this test: ``classname::name``.

        The path becomes a dotted module (``tests/test_a.py`` -> ``tests.test_a``), followed by
        the names but the last; the last name keeps its parameters.
        """
        module = self.path.replace("/", ".").removesuffix(".py")
        parts = [module, *self.names]
        if self.params is not None:
            parts[-1] += f"[{self.params}]"
        return f"{'.'.join(parts[:-1])}::{parts[-1]}"


def normal_path(path: str) -> str:
    """A node id's path as pytest writes it: ``/``-separated, no ``./``, no ``..`` steps."""
    text = posixpath.normpath(path.replace("\\", "/"))
    return "" if text == "." else text


def _split_path(text: str) -> tuple[str, str | None]:
    # A witness report names every test of a run twice: most ids have no bracket before their
    # first "::", which then splits them, without a loop over each character in Python.
    first = text.find("::")
    if first == -1:
        return text, None
    if "[" not in text[:first]:
        return text[:first], text[first + 2 :]
    return _split_scanning(text)


def _split_scanning(text: str) -> tuple[str, str | None]:
    depth = 0
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(0, depth - 1)
        elif depth == 0 and text.startswith("::", i):
            return text[:i], text[i + 2 :]
    return text, None
