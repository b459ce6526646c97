"""Scopes in a syntax tree: a visitor that knows the enclosing class and function of every node,
and the nodes that belong to one function's own scope."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from donegate.scan.finding import Occurrence

Function = ast.FunctionDef | ast.AsyncFunctionDef


def own_nodes(function: Function) -> Iterator[ast.AST]:
    """The nodes of ``function``'s body, not those of functions or classes defined in it."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.append(child)


class ScopedVisitor(ast.NodeVisitor):
    """Collects :class:`Occurrence` objects, each with its enclosing ``Class.function``."""

    def __init__(self) -> None:
        self.found: list[Occurrence] = []
        self._scope: list[str] = []

    @property
    def scope(self) -> str:
        """The dotted name of the class and function being visited (empty at module level)."""
        return ".".join(self._scope)

    def emit(self, construct: str, node: ast.AST, detail: str) -> None:
        """Record ``construct`` at ``node``."""
        self.found.append(Occurrence(construct, getattr(node, "lineno", 0), self.scope, detail))

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._enter(node, node.name)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._enter(node, node.name)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._enter(node, node.name)

    def _enter(self, node: ast.AST, name: str) -> None:
        self._scope.append(name)
        try:
            self.generic_visit(node)
        finally:
            self._scope.pop()


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
