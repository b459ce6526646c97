"""The house's shape, read from the code's own imports: no circles, and every arrow runs down.

Every import counts, at the top of a module, inside a function (imported late to start fast) or
under ``TYPE_CHECKING``: a circle of any kind means two modules that cannot be read, changed or
moved one without the other. A package's ``__init__`` is a module like the others.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import donegate

SOURCE = Path(donegate.__file__).parent

# Each part's floor; a module may import its own floor and those below it. The order is the
# design's (DESIGN.md, docs/layout.md): the format, the rules over it, what observes and records,
# the team's configuration and the collection it drives, the session, the hosts, the commands.
FLOORS: dict[str, int] = {
    **dict.fromkeys(
        [
            "__about__",
            "errors",
            "exitcodes",
            "record",
            "jsontext",
            "jsonvalue",
            "wire",
            "construct",
            "instant",
            "timefmt",
            "duration",
            "globs",
            "gitlisting",
            "redact",
            "configtext",
            "statedir",
            "sqlitefile",
            "expectation",
            "reach",
        ],
        0,
    ),
    **dict.fromkeys(["policy", "reader", "claim"], 1),
    **dict.fromkeys(["rules", "verdict", "bulk", "bulkjobs", "bulkpipe", "enforce"], 2),
    **dict.fromkeys(["signing", "workspace", "scan", "gate", "ledger", "checks", "sealed"], 3),
    **dict.fromkeys(["teamledger", "report", "config", "collect"], 4),
    **dict.fromkeys(["session", "frameworks"], 5),
    **dict.fromkeys(["hooks", "mcp_server"], 6),
    **dict.fromkeys(["cli", "demo", "__main__", "__init__"], 7),
}


def modules() -> dict[str, Path]:
    found = {}
    for path in SOURCE.rglob("*.py"):
        parts = ["donegate", *path.relative_to(SOURCE).with_suffix("").parts]
        if parts[-1] == "__init__" and len(parts) > 1:
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The donegate modules ``path`` imports, wherever the import statement stands."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # "from package import module" names the module; "from module import name" the module.
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            names = [n if n in known else node.module for n in names]
        else:
            continue
        for name in names:
            found = name
            while found and found not in known:
                found = found.rpartition(".")[0]
            if found.startswith("donegate"):
                yield found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(imported(path, known)) - {name} for name, path in known.items()}


def floor(module: str) -> int:
    parts = module.split(".")
    return FLOORS[parts[1] if len(parts) > 1 else "__init__"]


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            step = next(pending, None)
            if step is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        part.append(top)
                        if top == node:
                            break
                    if len(part) > 1:
                        found.append(sorted(part))
            elif step not in index:
                index[step] = low[step] = len(index)
                stack.append(step)
                on_stack.add(step)
                work.append((step, iter(sorted(edges[step]))))
            elif step in on_stack:
                low[node] = min(low[node], index[step])
    return found


def test_every_part_has_a_floor() -> None:
    assert [m for m in modules() if m.count(".") and m.split(".")[1] not in FLOORS] == []


def test_no_import_circle() -> None:
    assert circles(graph()) == []


def test_every_import_runs_down() -> None:
    upward = [
        f"{module} (floor {floor(module)}) imports {target} (floor {floor(target)})"
        for module, targets in sorted(graph().items())
        for target in sorted(targets)
        if floor(target) > floor(module)
    ]
    assert upward == []


def test_the_reading_finds_a_circle_and_an_upward_import() -> None:
    """The checks above can fail: a planted circle and a planted upward arrow are seen."""
    edges = {"donegate.claim": {"donegate.reader"}, "donegate.reader": {"donegate.claim"}}
    assert circles(edges) == [["donegate.claim", "donegate.reader"]]
    assert floor("donegate.session.doctor") < floor("donegate.hooks.install")
