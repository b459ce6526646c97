"""Constructs that let code shape its own verdict: reaching into the runner, the interpreter or
the assertions that judge it.

Each rule says where it applies. Test files legitimately inspect frames, register exit handlers
and import the runner; code under test has no reason to, so those rules look at non-test files
only. Rebinding builtins, trace hooks and always-equal operators change what any test sees, so
they count wherever they are written. Replacing ``sys.modules`` entries is how honest tests fake
a missing or heavy dependency (real histories do it often), and a test file the session edits is
already reported as such by the gate: that rule too looks at non-test files only.
"""

from __future__ import annotations

import ast
import re

from donegate.scan._scope import ScopedVisitor, dotted
from donegate.scan.finding import Occurrence

_RUNNER_MODULES = frozenset({"_pytest", "pluggy"})
# pytest's objects that carry or rewrite a test's outcome.
_RUNNER_OBJECTS = frozenset(
    {"TestReport", "CollectReport", "CallInfo", "hookimpl", "hookspec", "TerminalReporter"}
)
# Dotted names, the construct they are, and whether test files may use them.
_NAMES: dict[str, tuple[str, bool]] = {
    "sys._getframe": ("frame-inspection", False),
    "sys._current_frames": ("frame-inspection", False),
    "inspect.stack": ("frame-inspection", False),
    "inspect.currentframe": ("frame-inspection", False),
    "inspect.getouterframes": ("frame-inspection", False),
    "inspect.trace": ("frame-inspection", False),
    "sys.settrace": ("trace-hook", True),
    "sys.setprofile": ("trace-hook", True),
    "threading.settrace": ("trace-hook", True),
    "threading.setprofile": ("trace-hook", True),
    "threading.settrace_all_threads": ("trace-hook", True),
    "threading.setprofile_all_threads": ("trace-hook", True),
    "sys.monitoring": ("trace-hook", True),
    "os._exit": ("hard-exit", False),
    "os.abort": ("hard-exit", False),
    "atexit.register": ("hard-exit", False),
}
_FRAME_ATTRIBUTES = frozenset({"f_back", "f_locals", "f_globals", "tb_frame"})
# A string that names pytest or its environment, as a token (messages have spaces).
_TEST_MARKER = re.compile(r"_?pytest[\w.-]*|PYTEST_\w+|_called_from_test", re.IGNORECASE)
# Calls whose string argument is looked up or matched, not printed.
_LOOKUPS = frozenset(
    {
        "get",
        "getenv",
        "startswith",
        "endswith",
        "find_spec",
        "find",
        "index",
        "count",
        "search",
        "match",
        "fullmatch",
        "__contains__",
        "setdefault",
        "pop",
    }
)
_BUILTINS = frozenset({"builtins", "__builtins__"})
_MODULE_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__"})
# Calls that patch the mapping given as their first argument (monkeypatch, mock.patch.dict).
_PATCHERS = frozenset({"setitem", "delitem", "dict"})


# Every rule below needs one of these words in the source text (lowercased): a file without
# any cannot hold a construct, and is not walked. Keep it in step with the rules.
_WORDS = (
    "pytest",
    "pluggy",
    "_called_from_test",
    "modules",
    "builtins",
    "trace",
    "setprofile",
    "monitoring",
    "_getframe",
    "_current_frames",
    "stack",
    "currentframe",
    "getouterframes",
    "f_back",
    "f_locals",
    "f_globals",
    "tb_frame",
    "_exit",
    "abort",
    "atexit",
    "__eq__",
    "__ne__",
    "__hash__",
)


def may_reach(source: str) -> bool:
    """Whether ``source`` has any word a judge-reaching construct needs (a fast pre-check)."""
    text = source.lower()
    return any(word in text for word in _WORDS)


def judge_occurrences(tree: ast.Module, *, test_file: bool) -> list[Occurrence]:
    """Every judge-reaching construct in ``tree``; ``test_file`` skips the test-only rules."""
    visitor = _Judge(test_file)
    visitor.visit(tree)
    return visitor.found


class _Judge(ScopedVisitor):
    def __init__(self, test_file: bool) -> None:
        super().__init__()
        self.test_file = test_file
        # import sys as s: names that stand for a module, from their import on.
        self.aliases: dict[str, str] = {}

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            if not self.test_file and alias.name.split(".")[0] in _RUNNER_MODULES:
                self.emit("runner-internals", node, f"import {alias.name}")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or not module:
            return
        if not self.test_file and module.split(".")[0] in _RUNNER_MODULES:
            self.emit("runner-internals", node, f"from {module} import ...")
        for alias in node.names:
            self._name(node, f"{module}.{alias.name}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = dotted(node)
        if name is not None:
            self._name(node, name)
        if not self.test_file and node.attr in _FRAME_ATTRIBUTES:
            self.emit("frame-inspection", node, f".{node.attr}")
        self.generic_visit(node)

    def _name(self, node: ast.AST, name: str) -> None:
        head, dot, rest = name.partition(".")
        name = self.aliases.get(head, head) + dot + rest
        module, _, attr = name.rpartition(".")
        if not self.test_file and module == "pytest" and attr in _RUNNER_OBJECTS:
            self.emit("runner-internals", node, name)
        rule = _NAMES.get(name)
        if rule is not None and (rule[1] or not self.test_file):
            self.emit(rule[0], node, name)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)
        super().visit_FunctionDef(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)
        super().visit_AsyncFunctionDef(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if not self.test_file and node.name.startswith("pytest_"):
            self.emit("runner-internals", node, f"def {node.name} (a pytest hook)")
        if node.name in ("__eq__", "__ne__", "__hash__") and self.scope:
            why = _ignores_operand(node)
            if why:
                self.emit("always-equal", node, f"{self.scope}.{node.name} {why}")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for statement in node.body:
            if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Lambda):
                for target in statement.targets:
                    if isinstance(target, ast.Name) and target.id in ("__eq__", "__ne__"):
                        why = _lambda_ignores_operand(statement.value)
                        if why:
                            self.emit("always-equal", statement, f"{node.name}.{target.id} {why}")
        super().visit_ClassDef(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        if not self.test_file:
            operands = [node.left, *node.comparators]
            self._markers(node, operands)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if not self.test_file:
            self._markers(node, [node.slice])
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if not self.test_file and called in _LOOKUPS:
            self._markers(node, node.args)
        if called == "setattr" and node.args:
            self._setattr(node, node.args)
        if called in ("getattr", "__import__", "import_module") and node.args:
            self._dynamic(node, called, node.args)
        if isinstance(func, ast.Attribute) and func.attr in _MODULE_MUTATORS:
            self._mutation(node, func.value, f".{func.attr}(...)")
        if called in _PATCHERS and node.args:
            first = node.args[0]
            if dotted(first) == "sys.modules" or _is_text(first, "sys.modules"):
                self._modules(node, f"{called}(sys.modules, ...)")
        self.generic_visit(node)

    def _markers(self, node: ast.AST, operands: list[ast.expr]) -> None:
        for operand in operands:
            text = operand.value if isinstance(operand, ast.Constant) else None
            if isinstance(text, str) and _TEST_MARKER.fullmatch(text.strip()):
                self.emit("test-detection", node, f"looks up {text!r}")

    def _dynamic(self, node: ast.Call, called: str, args: list[ast.expr]) -> None:
        # getattr(sys, "_getframe") and import_module("_pytest.runner") name what they reach.
        if called == "getattr":
            owner = dotted(args[0])
            attr = args[1].value if len(args) > 1 and isinstance(args[1], ast.Constant) else None
            if owner is not None and isinstance(attr, str):
                self._name(node, f"{owner}.{attr}")
            return
        module = args[0].value if isinstance(args[0], ast.Constant) else None
        runner = isinstance(module, str) and module.split(".")[0] in _RUNNER_MODULES
        if runner and not self.test_file:
            self.emit("runner-internals", node, f"{called}({module!r})")

    def _setattr(self, node: ast.Call, args: list[ast.expr]) -> None:
        target = dotted(args[0])
        if target in _BUILTINS:
            self.emit("patch-builtins", node, f"setattr({target}, ...)")
        elif target == "sys" and len(args) > 1 and _is_text(args[1], "modules"):
            self._modules(node, "setattr(sys, 'modules', ...)")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._store(node, target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._store(node, node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._store(node, node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._store(node, target)
        self.generic_visit(node)

    def _store(self, node: ast.AST, target: ast.expr) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._store(node, element)
        elif isinstance(target, ast.Attribute):
            owner = dotted(target.value)
            if owner in _BUILTINS:
                self.emit("patch-builtins", node, f"{owner}.{target.attr} = ...")
            elif owner == "sys" and target.attr == "modules":
                self._modules(node, "sys.modules = ...")
        elif isinstance(target, ast.Subscript):
            self._mutation(node, target.value, "[...] = ...")

    def _mutation(self, node: ast.AST, container: ast.expr, how: str) -> None:
        name = dotted(container)
        if name == "sys.modules":
            self._modules(node, f"sys.modules{how}")
        elif name in _BUILTINS or name in ("builtins.__dict__", "__builtins__.__dict__"):
            self.emit("patch-builtins", node, f"{name}{how}")

    def _modules(self, node: ast.AST, detail: str) -> None:
        if not self.test_file:
            self.emit("patch-sys-modules", node, detail)


def _is_text(node: ast.expr, text: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == text


def _ignores_operand(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """Why this ``__eq__``/``__ne__``/``__hash__`` ignores its operand, or "" if it does not."""
    body = _without_docstring(node.body)
    if _is_stub(body):
        return ""
    returns = [n.value for n in ast.walk(node) if isinstance(n, ast.Return)]
    if node.name == "__hash__":
        return "returns a constant" if returns and all(_constant(r) for r in returns) else ""
    params = [*node.args.posonlyargs, *node.args.args]
    if len(params) < 2:
        return "takes no operand"
    other = params[1].arg
    if not any(isinstance(n, ast.Name) and n.id == other for n in ast.walk(node)):
        return f"never reads {other!r}"
    values = [r for r in returns if not _is_not_implemented(r)]
    if values and all(_constant(r) for r in values) and len({_value(r) for r in values}) == 1:
        return "returns the same constant whatever the operand"
    return ""


def _lambda_ignores_operand(node: ast.Lambda) -> str:
    params = [*node.args.posonlyargs, *node.args.args]
    if len(params) < 2:
        return "takes no operand"
    other = params[1].arg
    if not any(isinstance(n, ast.Name) and n.id == other for n in ast.walk(node.body)):
        return f"never reads {other!r}"
    return ""


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        return body[1:]
    return body


def _is_stub(body: list[ast.stmt]) -> bool:
    # Protocols, overloads and abstract methods: a body of "...", "pass" or a bare raise.
    return all(
        isinstance(s, (ast.Pass, ast.Raise))
        or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in body
    )


def _constant(node: ast.expr | None) -> bool:
    return node is None or isinstance(node, ast.Constant)


def _value(node: ast.expr | None) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def _is_not_implemented(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Name) and node.id == "NotImplemented"
