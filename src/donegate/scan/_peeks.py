"""Peeks at the judge the judge rules' names miss: the caller's stack read through ``traceback``,
the test files found by a glob pattern, and the assertions of ``unittest`` rebound.

``traceback.extract_stack()[-2].line`` is the calling test's source line, expected value and
all, as ``inspect.stack()`` is (``frame-inspection``); ``glob.glob("**/test_*.py")`` finds the
test files as a path to them does (``reads-tests``). A pattern is taken to name test files when
it matches a test file's usual path (``tests/test_app.py``, ``app_test.py``, ``conftest.py``).
``unittest.TestCase.assertEqual = lenient`` changes what every test's assertion accepts
(``runner-internals``).
"""

from __future__ import annotations

import ast
from fnmatch import fnmatch

from donegate.scan._fold import fold_text
from donegate.scan._scope import ScopedVisitor, dotted
from donegate.scan.finding import Occurrence

_STACK = frozenset(
    {
        "traceback.extract_stack",
        "traceback.format_stack",
        "traceback.print_stack",
        "traceback.walk_stack",
        "traceback.StackSummary.extract",
    }
)
_ASSERTING = frozenset({"unittest"})
_PATTERNS = frozenset({"glob", "iglob", "rglob", "fnmatch", "filter", "match", "full_match"})
_TEST_FILES = ("tests/test_app.py", "test/test_app.py", "test_app.py", "app_test.py", "conftest.py")


def peeks(tree: ast.Module, names: dict[str, ast.expr]) -> list[Occurrence]:
    """The peeks of ``tree`` (a file that is not a test); ``names``: its constant bindings."""
    visitor = _Peeks(names)
    visitor.visit(tree)
    return visitor.found


class _Peeks(ScopedVisitor):
    def __init__(self, names: dict[str, ast.expr]) -> None:
        super().__init__()
        self.names = names
        self.aliases: dict[str, str] = {}

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Attribute):
                self._rebinds(node, self._full(target.value), target.attr)
        self.generic_visit(node)

    def _rebinds(self, node: ast.AST, owner: str | None, attr: str | None) -> None:
        if owner and attr and owner.split(".")[0] in _ASSERTING and "TestCase" in owner:
            self.emit("runner-internals", node, f"rebinds {owner}.{attr}")

    def _full(self, node: ast.expr) -> str | None:
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        full = self.aliases.get(head, head)
        return f"{full}.{rest}" if rest else full

    def visit_Call(self, node: ast.Call) -> None:
        if dotted(node.func) == "setattr" and len(node.args) == 3:
            self._rebinds(node, self._full(node.args[0]), fold_text(node.args[1], self.names))
        name = dotted(node.func) or ""
        full = self._full(node.func)
        if full in _STACK:
            self.emit("frame-inspection", node, full)
        called = name.rpartition(".")[2]
        if called in _PATTERNS:
            for arg in node.args:
                pattern = fold_text(arg, self.names)
                if pattern and "test" in pattern and _names_tests(pattern):
                    self.emit("reads-tests", node, f"looks for {pattern!r}")
                    break
        self.generic_visit(node)


def _names_tests(pattern: str) -> bool:
    pattern = pattern.replace("\\", "/").lstrip("./")
    return any(fnmatch(path, pattern) or fnmatch(path, f"*/{pattern}") for path in _TEST_FILES)
